//! Steps: Judging outcomes: replies, errors, store contents, processes, transcripts.

use super::*;

pub(super) fn dispatch(w: &mut Inner, t: &str) -> bool {
    if step!(t, r"^the call succeeds$").is_some() {
        if let Err(e) = &w.last().result {
            panic!("expected success, got error {e}");
        }
        return true;
    }
    if step!(t, r"^the call fails$").is_some() {
        if let Ok(v) = &w.last().result {
            panic!("expected an error, got ok {v}");
        }
        return true;
    }
    if let Some(c) = step!(t, r#"^the call fails with "([a-z_.]+)"$"#) {
        match &w.last().result {
            Ok(v) => panic!("expected error {}, got ok {v}", &c[1]),
            Err(e) => assert_eq!(
                e.get("code").and_then(Value::as_str),
                Some(&c[1]),
                "wrong error code: {e}"
            ),
        }
        return true;
    }
    if let Some(c) = step!(t, r#"^the call fails with "([a-z_.]+)" or "([a-z_.]+)"$"#) {
        match &w.last().result {
            Ok(v) => panic!("expected error {} or {}, got ok {v}", &c[1], &c[2]),
            Err(e) => {
                let code = e.get("code").and_then(Value::as_str).unwrap_or("");
                assert!(code == &c[1] || code == &c[2], "wrong error code: {e}")
            }
        }
        return true;
    }
    if let Some(c) = step!(t, r#"^the call fails with a code starting "([a-z_.]+)"$"#) {
        match &w.last().result {
            Ok(v) => panic!("expected an error {}…, got ok {v}", &c[1]),
            Err(e) => {
                let code = e.get("code").and_then(Value::as_str).unwrap_or("");
                assert!(code.starts_with(&c[1]), "wrong error code: {e}")
            }
        }
        return true;
    }
    if let Some(c) = step!(t, r"^the CLI exits with code (\d+)$") {
        let want: i32 = c[1].parse().unwrap();
        assert_eq!(w.last().exit, Some(want), "CLI exit code");
        return true;
    }
    if step!(t, r"^the CLI exits with a nonzero code$").is_some() {
        let exit = w.last().exit.expect("harness-error: not a CLI reply");
        assert_ne!(exit, 0, "CLI exit code");
        return true;
    }
    if let Some(c) = step!(t, r#"^the result "([^"]*)" is absent$"#) {
        let got = ok_value(w);
        assert_eq!(at(&got, &c[1]), None, "result {:?} in {got}", &c[1]);
        return true;
    }
    if let Some(c) = step!(t, r#"^the result "([^"]*)" is saved as \$(\w+)$"#) {
        let got = ok_value(w);
        let v = at(&got, &c[1]).unwrap_or_else(|| panic!("no {:?} in {got}", &c[1]));
        let s = v.as_str().map_or_else(|| v.to_string(), String::from);
        w.vars.insert(c[2].to_string(), s);
        return true;
    }
    if let Some(c) = step!(t, r#"^the result "([^"]*)" has JSON type "(\w+)"$"#) {
        let got = ok_value(w);
        let v = at(&got, &c[1]).unwrap_or_else(|| panic!("no {:?} in {got}", &c[1]));
        let ok = match &c[2] {
            "string" => v.is_string(),
            "integer" => v.is_i64() || v.is_u64(),
            "boolean" => v.is_boolean(),
            "object" => v.is_object(),
            "array" => v.is_array(),
            other => panic!("harness-error: unknown JSON type {other}"),
        };
        assert!(ok, "{:?} is {v}, not of type {}", &c[1], &c[2]);
        return true;
    }
    if let Some(c) = step!(
        t,
        r#"^the result "([^"]*)" has exactly the keys "([^"]*)"$"#
    ) {
        let got = ok_value(w);
        let v = at(&got, &c[1]).unwrap_or_else(|| panic!("no {:?} in {got}", &c[1]));
        let mut keys: Vec<&str> = v
            .as_object()
            .unwrap_or_else(|| panic!("{:?} is not an object: {v}", &c[1]))
            .keys()
            .map(String::as_str)
            .collect();
        keys.sort_unstable();
        let mut want: Vec<&str> = c[2].split(',').collect();
        want.sort_unstable();
        assert_eq!(keys, want, "keys of {:?}", &c[1]);
        return true;
    }
    if let Some(c) = step!(t, r#"^the result "([^"]*)" is not (.+)$"#) {
        let unwanted: Value = serde_json::from_str(&c[2])
            .unwrap_or_else(|_| panic!("harness-error: value is not JSON: {}", &c[2]));
        let got = ok_value(w);
        let v = at(&got, &c[1]).unwrap_or_else(|| panic!("no {:?} in {got}", &c[1]));
        assert_ne!(v, &unwanted, "result {:?}", &c[1]);
        return true;
    }
    if let Some(c) = step!(t, r#"^the result "([^"]*)" is (.+)$"#) {
        let want: Value = serde_json::from_str(&c[2])
            .unwrap_or_else(|_| panic!("harness-error: expected value is not JSON: {}", &c[2]));
        let got = ok_value(w);
        assert_eq!(at(&got, &c[1]), Some(&want), "result {:?} in {got}", &c[1]);
        return true;
    }
    if let Some(c) = step!(
        t,
        r#"^the result lists checkpoint "([^"]+)" with status "(\w+)"$"#
    ) {
        let got = ok_value(w);
        let list = got
            .get("checkpoints")
            .and_then(Value::as_array)
            .unwrap_or_else(|| panic!("no checkpoints array in {got}"));
        let entry = list
            .iter()
            .find(|e| e.get("checkpoint").and_then(Value::as_str) == Some(&c[1]))
            .unwrap_or_else(|| panic!("checkpoint {} not listed in {got}", &c[1]));
        assert_eq!(
            entry.get("status").and_then(Value::as_str),
            Some(&c[2]),
            "status of {}",
            &c[1]
        );
        return true;
    }
    if let Some(c) = step!(t, r#"^the result lists (\d+) checkpoints?$"#) {
        let got = ok_value(w);
        let n = got
            .get("checkpoints")
            .and_then(Value::as_array)
            .map_or(usize::MAX, Vec::len);
        assert_eq!(n.to_string(), &c[1], "checkpoints in {got}");
        return true;
    }
    if step!(t, r"^no checkpoint or temporary file exists in the store$").is_some() {
        let entries = w.store_entries();
        assert!(
            entries.is_empty(),
            "the store has entries: {:?}",
            entries.iter().map(|e| &e.0).collect::<Vec<_>>()
        );
        let recovery = w.ph.state_home.join("venomx/recovery");
        let mut found = Vec::new();
        if let Ok(rd) = std::fs::read_dir(&recovery) {
            for e in rd.flatten() {
                if let Ok(inner) = std::fs::read_dir(e.path()) {
                    found.extend(inner.flatten().map(|x| x.path()));
                }
            }
        }
        assert!(found.is_empty(), "recovery files written: {found:?}");
        return true;
    }
    if let Some(c) = step!(t, r#"^the store still holds the file of "(\w+)"$"#) {
        let m = w.meta_of(&c[1]);
        assert!(m.is_file() || m.file_type().is_symlink());
        return true;
    }
    if let Some(c) = step!(
        t,
        r#"^the store file of "(\w+)" still has mode (0[0-7]{3})$"#
    ) {
        let m = w.meta_of(&c[1]);
        let want = u32::from_str_radix(&c[2], 8).unwrap();
        assert_eq!(mode_of(&m), want, "mode was changed");
        return true;
    }
    if step!(
        t,
        r"^every store directory has mode 0700 and every store file mode 0600, owned by the daemon UID$"
    )
    .is_some()
    {
        let uid = nix::unistd::geteuid().as_raw();
        let entries = w.store_entries();
        assert!(!entries.is_empty(), "the store is empty");
        let dm = std::fs::symlink_metadata(&w.ph.store).expect("store dir");
        assert_eq!(mode_of(&dm), 0o700, "store directory mode");
        for (name, m) in entries {
            assert!(m.is_file(), "{name} is not a regular file");
            assert_eq!(mode_of(&m), 0o600, "{name} mode");
            assert_eq!(m.uid(), uid, "{name} owner");
            assert_eq!(m.nlink(), 1, "{name} link count");
        }
        return true;
    }
    if let Some(c) = step!(
        t,
        r"^the daemon exited (successfully|with a failure status) within (\d+) ms$"
    ) {
        let (status, took) = w
            .stopped
            .expect("harness-error: the daemon was not stopped");
        let limit = Duration::from_millis(c[2].parse().unwrap());
        match &c[1] {
            "successfully" => assert!(status.success(), "exit status {status}"),
            _ => assert!(!status.success(), "exit status {status}"),
        }
        assert!(took <= limit, "shutdown took {took:?}, more than {limit:?}");
        return true;
    }
    if step!(t, r"^the second daemon exits with a failure status$").is_some() {
        let (status, _) = w.second.expect("harness-error: no second daemon");
        let status = status.expect("the second daemon kept running on a locked socket");
        assert!(!status.success(), "second daemon exit status {status}");
        return true;
    }
    if step!(t, r"^the first daemon is still serving$").is_some() {
        assert!(w.daemon_alive(), "the first daemon died");
        let token = w.owner_token();
        let r = w.wire(Some(&token), "session.list", Map::new());
        assert!(r.result.is_ok(), "session.list failed: {:?}", r.result);
        return true;
    }
    if step!(t, r"^no daemon is listening on the socket$").is_some() {
        // Nothing may answer now or appear shortly after; a daemon on its way out
        // gets a moment to close its socket.
        let start = std::time::Instant::now();
        while std::os::unix::net::UnixStream::connect(&w.ph.socket).is_ok() {
            assert!(
                start.elapsed() < scaled(2_000),
                "something answers on the socket"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
        std::thread::sleep(scaled(300));
        assert!(
            std::os::unix::net::UnixStream::connect(&w.ph.socket).is_err(),
            "something answers on the socket"
        );
        return true;
    }
    if step!(t, r"^the unrelated process is still alive$").is_some() {
        let child = w
            .unrelated
            .as_mut()
            .expect("harness-error: no unrelated process");
        assert!(
            matches!(child.try_wait(), Ok(None)),
            "the unrelated process was killed"
        );
        return true;
    }
    if let Some(c) = step!(t, r#"^no reply, error or written file contains "([^"]+)"$"#) {
        let needle = c[1].as_bytes().to_vec();
        assert!(
            !contains(&w.transcript, &needle),
            "a reply or error contains {:?}",
            &c[1]
        );
        assert_no_file_contains(w.all_files(), &needle);
        return true;
    }
    if let Some(c) = step!(t, r"^the process (\d+) is gone$") {
        let pid: i32 = c[1].parse().unwrap();
        let limit = scaled(3_000);
        let start = std::time::Instant::now();
        while super::super::world::process_alive(pid) {
            assert!(
                start.elapsed() < limit,
                "process {pid} survived the shutdown"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
        return true;
    }
    if let Some(c) = step!(t, r"^the process (\d+) is still alive$") {
        let pid: i32 = c[1].parse().unwrap();
        assert!(
            super::super::world::process_alive(pid),
            "process {pid} was killed"
        );
        return true;
    }
    if let Some(c) = step!(t, r"^the daemon has exactly (\d+) child process(?:es)?$") {
        let pid = w
            .daemon
            .as_ref()
            .expect("harness-error: no daemon is running")
            .id();
        let kids = super::super::world::children_of(pid);
        assert_eq!(
            kids.len().to_string(),
            &c[1],
            "the daemon's children: {kids:?}"
        );
        return true;
    }
    if let Some(c) = step!(t, r"^the daemon's peak memory is remembered as \$(\w+)$") {
        let kib = peak_kib(w);
        w.vars.insert(c[1].to_string(), kib.to_string());
        return true;
    }
    if let Some(c) = step!(
        t,
        r"^the daemon's peak memory grew by less than (\d+) MiB since (\d+) KiB$"
    ) {
        let before: u64 = c[2].parse().unwrap();
        let limit: u64 = c[1].parse::<u64>().unwrap() * 1024;
        let now = peak_kib(w);
        assert!(
            now.saturating_sub(before) < limit,
            "peak memory grew from {before} KiB to {now} KiB"
        );
        return true;
    }
    if step!(t, r"^the daemon has no child processes$").is_some() {
        let pid = w
            .daemon
            .as_ref()
            .expect("harness-error: no daemon is running")
            .id();
        let kids = super::super::world::children_of(pid);
        assert!(kids.is_empty(), "the daemon has child processes {kids:?}");
        return true;
    }
    if let Some(c) = step!(t, r"^the store holds exactly (\d+) checkpoint files?$") {
        let n = w
            .store_entries()
            .iter()
            .filter(|(name, _)| name.starts_with('c') && name.ends_with(".json"))
            .count();
        assert_eq!(n.to_string(), &c[1], "checkpoint files in the store");
        return true;
    }
    if let Some(c) = step!(t, r#"^no store file contains "([^"]+)"$"#) {
        let needle = c[1].trim().as_bytes().to_vec();
        let recovery = w.ph.state_home.join("venomx");
        let mut files = Vec::new();
        walk_files(&recovery, &mut files);
        assert_no_file_contains(files, &needle);
        return true;
    }
    if let Some(c) = step!(
        t,
        r#"^the newest checkpoint in the store is valid with (shutdown "(\w+)"|format (\d))$"#
    ) {
        let (format, payload) = newest_checkpoint(w);
        if let Some(sd) = c.get(2) {
            assert_eq!(payload["shutdown"], sd.as_str(), "shutdown marker");
            if sd.as_str() == "clean" {
                for p in payload["panes"].as_array().unwrap() {
                    assert_ne!(
                        p["state"], "running",
                        "a clean checkpoint has a running pane"
                    );
                }
            }
        }
        if let Some(f) = c.get(3) {
            assert_eq!(format.to_string(), f.as_str(), "format written");
        }
        return true;
    }
    if let Some(c) = step!(
        t,
        r#"^the newest checkpoint in the store keeps the planted text timestamps of "(\w+)"$"#
    ) {
        let (_, payload) = newest_checkpoint(w);
        let text = &payload["panes"][0]["text"];
        assert_eq!(
            text["availability"], "plain",
            "text of the rewritten archive: {text}"
        );
        for k in ["saved_at", "expires_at"] {
            let planted = w
                .vars
                .get(&format!("{}_{k}", &c[1]))
                .unwrap_or_else(|| panic!("harness-error: {} has no planted text", &c[1]));
            assert_eq!(text[k].as_str(), Some(planted.as_str()), "{k} was changed");
        }
        return true;
    }
    if let Some(c) = step!(
        t,
        r"^the newest checkpoint in the store has a split with ratio (\d+)$"
    ) {
        let (_, payload) = newest_checkpoint(w);
        let want: u64 = c[1].parse().unwrap();
        let found = payload["windows"].as_array().unwrap().iter().any(|win| {
            win["nodes"]
                .as_array()
                .unwrap()
                .iter()
                .any(|n| n["ratio"].as_u64() == Some(want))
        });
        assert!(found, "no split with ratio {want} in {payload}");
        return true;
    }
    if let Some(c) = step!(t, r#"^the result field of the error "([^"]*)" is (.+)$"#) {
        let want: Value = serde_json::from_str(&c[2])
            .unwrap_or_else(|_| panic!("harness-error: expected value is not JSON: {}", &c[2]));
        match &w.last().result {
            Ok(v) => panic!("expected an error, got {v}"),
            Err(e) => assert_eq!(at(e, &c[1]), Some(&want), "error {e}"),
        }
        return true;
    }
    if let Some(c) = step!(
        t,
        r#"^nothing exists at "([^"]+)" under the daemon's working directory$"#
    ) {
        let p = w.dir.path().join(&c[1]);
        assert!(
            std::fs::symlink_metadata(&p).is_err(),
            "{} was created",
            p.display()
        );
        return true;
    }
    if let Some(c) = step!(t, r#"^some doctor check has status "(\w+)" or "(\w+)"$"#) {
        let got = ok_value(w);
        let checks = got
            .get("checks")
            .and_then(Value::as_array)
            .unwrap_or_else(|| panic!("no checks array in {got}"));
        assert!(
            checks
                .iter()
                .any(|k| k["status"] == c[1] || k["status"] == c[2]),
            "no doctor check is {} or {}: {got}",
            &c[1],
            &c[2]
        );
        return true;
    }
    if let Some(c) = step!(t, r#"^no doctor check claims "([^"]+)"$"#) {
        let got = ok_value(w);
        let text = got.to_string().to_lowercase();
        assert!(
            !text.contains(&c[1].to_lowercase()),
            "doctor claims {:?}: {got}",
            &c[1]
        );
        return true;
    }
    if let Some(c) = step!(t, r#"^no reply or error contains "([^"]+)"$"#) {
        assert!(
            !contains(&w.transcript, c[1].as_bytes()),
            "a reply or error contains {:?}",
            &c[1]
        );
        return true;
    }
    if let Some(c) = step!(t, r#"^the transcript contains "([^"]+)"$"#) {
        assert!(
            contains(&w.transcript, c[1].as_bytes()),
            "no reply contains {:?}",
            &c[1]
        );
        return true;
    }
    false
}

fn assert_no_file_contains(files: impl IntoIterator<Item = std::path::PathBuf>, needle: &[u8]) {
    for f in files {
        let bytes = std::fs::read(&f).unwrap_or_default();
        assert!(
            !contains(&bytes, needle),
            "{} contains {:?}",
            f.display(),
            String::from_utf8_lossy(needle)
        );
    }
}
