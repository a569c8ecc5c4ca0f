//! Steps: Judging outcomes: replies, errors, store contents, transcripts.

use super::prelude::*;

#[then(regex = r"^the call succeeds$")]
async fn call_succeeds(w: &mut World) {
    w.run(&[], None, |w, _| {
        if let Err(e) = &w.last().result {
            panic!("expected success, got error {e}");
        }
    })
    .await;
}

#[then(regex = r"^the call fails$")]
async fn call_fails(w: &mut World) {
    w.run(&[], None, |w, _| {
        if let Ok(v) = &w.last().result {
            panic!("expected an error, got ok {v}");
        }
    })
    .await;
}

#[then(regex = r#"^the call fails with "([a-z_.]+)"$"#)]
async fn call_fails_with(w: &mut World, c: &[String]) {
    w.run(c, None, |w, c| {
        w.twins.require_twin();
        w.refused = w.last_request.clone();
        match &w.last().result {
            Ok(v) => panic!("expected error {}, got ok {v}", &c[1]),
            Err(e) => assert_eq!(
                e.get("code").and_then(Value::as_str),
                Some(&c[1]),
                "wrong error code: {e}"
            ),
        }
    })
    .await;
}

#[then(regex = r#"^the call fails with "([a-z_.]+)" or "([a-z_.]+)"$"#)]
async fn call_fails_with_or(w: &mut World, c: &[String]) {
    w.run(c, None, |w, c| {
        w.twins.require_twin();
        w.refused = w.last_request.clone();
        match &w.last().result {
            Ok(v) => panic!("expected error {} or {}, got ok {v}", &c[1], &c[2]),
            Err(e) => {
                let code = e.get("code").and_then(Value::as_str).unwrap_or("");
                assert!(code == &c[1] || code == &c[2], "wrong error code: {e}")
            }
        }
    })
    .await;
}

#[then(regex = r#"^the call fails with a code starting "([a-z_.]+)"$"#)]
async fn call_fails_with_code_starting(w: &mut World, c: &[String]) {
    w.run(c, None, |w, c| {
        w.twins.require_twin();
        w.refused = w.last_request.clone();
        match &w.last().result {
            Ok(v) => panic!("expected an error {}…, got ok {v}", &c[1]),
            Err(e) => {
                let code = e.get("code").and_then(Value::as_str).unwrap_or("");
                assert!(code.starts_with(&c[1]), "wrong error code: {e}")
            }
        }
    })
    .await;
}

#[then(regex = r"^the CLI exits with code (\d+)$")]
async fn cli_exits_with_code(w: &mut World, c: &[String]) {
    w.run(c, None, |w, c| {
        let want: i32 = c[1].parse().or_harness("a number in the step");
        assert_eq!(w.last().exit, Some(want), "CLI exit code");
    })
    .await;
}

#[then(regex = r"^the CLI exits with a nonzero code$")]
async fn cli_exits_with_nonzero_code(w: &mut World) {
    w.run(&[], None, |w, _| {
        let exit = w.last().exit.or_harness("not a CLI reply");
        assert_ne!(exit, 0, "CLI exit code");
    })
    .await;
}

#[then(regex = r#"^the result "([^"]*)" is absent$"#)]
async fn result_absent(w: &mut World, c: &[String]) {
    w.run(c, None, |w, c| {
        let got = ok_value(w);
        assert_eq!(at(&got, &c[1]), None, "result {:?} in {got}", &c[1]);
    })
    .await;
}

#[then(regex = r#"^the result "([^"]*)" is saved as \$(\w+)$"#)]
#[when(regex = r#"^the result "([^"]*)" is saved as \$(\w+)$"#)]
async fn result_saved_as(w: &mut World, c: &[String]) {
    w.run(c, None, |w, c| {
        let got = ok_value(w);
        let v = at(&got, &c[1]).unwrap_or_else(|| panic!("no {:?} in {got}", &c[1]));
        let s = v.as_str().map_or_else(|| v.to_string(), String::from);
        w.vars.insert(c[2].to_string(), s);
    })
    .await;
}

#[then(regex = r#"^the result "([^"]*)" has JSON type "(\w+)"$"#)]
async fn result_has_json_type(w: &mut World, c: &[String]) {
    w.run(c, None, |w, c| {
        let got = ok_value(w);
        let v = at(&got, &c[1]).unwrap_or_else(|| panic!("no {:?} in {got}", &c[1]));
        let ok = match &c[2] {
            "string" => v.is_string(),
            "integer" => v.is_i64() || v.is_u64(),
            "boolean" => v.is_boolean(),
            "object" => v.is_object(),
            "array" => v.is_array(),
            other => crate::harness_error!("unknown JSON type {other}"),
        };
        assert!(ok, "{:?} is {v}, not of type {}", &c[1], &c[2]);
    })
    .await;
}

#[then(regex = r#"^the result "([^"]*)" has exactly the keys "([^"]*)"$"#)]
async fn result_has_exactly_keys(w: &mut World, c: &[String]) {
    w.run(c, None, |w, c| {
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
    })
    .await;
}

#[then(regex = r#"^the result "([^"]*)" is not (.+)$"#)]
async fn result_is_not(w: &mut World, c: &[String]) {
    w.run(c, None, |w, c| {
        let unwanted: Value = serde_json::from_str(&c[2])
            .unwrap_or_else(|_| crate::harness_error!("value is not JSON: {}", &c[2]));
        let got = ok_value(w);
        let v = at(&got, &c[1]).unwrap_or_else(|| panic!("no {:?} in {got}", &c[1]));
        assert_ne!(v, &unwanted, "result {:?}", &c[1]);
    })
    .await;
}

#[then(regex = r#"^the result "([^"]*)" is (\[.*\]|\{.*\}|".*"|-?[0-9]+|true|false|null)$"#)]
async fn result_is_json_value(w: &mut World, c: &[String]) {
    w.run(c, None, |w, c| {
        let want: Value = serde_json::from_str(&c[2])
            .unwrap_or_else(|_| crate::harness_error!("expected value is not JSON: {}", &c[2]));
        let got = ok_value(w);
        assert_eq!(at(&got, &c[1]), Some(&want), "result {:?} in {got}", &c[1]);
    })
    .await;
}

/// RFC §1: an archive "has exited=true for existing list/capture/stream consumers";
/// the kit's pane.list spells it `state: "exited"` (RFC-0007's shape, which we do not
/// have). Either spelling of the one fact is the RFC's.
#[then(regex = r#"^the result's pane (\d+) is exited$"#)]
async fn result_pane_is_exited(w: &mut World, c: &[String]) {
    w.run(c, None, |w, c| {
        let got = ok_value(w);
        let pane = at(&got, &format!("panes.{}", &c[1]))
            .unwrap_or_else(|| panic!("no pane {} in {got}", &c[1]));
        let exited = pane.get("state").and_then(Value::as_str) == Some("exited")
            || pane.get("exited") == Some(&Value::Bool(true));
        assert!(exited, "pane {} is not exited: {pane}", &c[1]);
    })
    .await;
}

#[then(regex = r#"^the result lists checkpoint "([^"]+)" with status "(\w+)"$"#)]
async fn result_lists_checkpoint_with_status(w: &mut World, c: &[String]) {
    w.run(c, None, |w, c| {
        // A damaged file listed as refused: its twin must have been listed valid.
        if &c[2] != "valid" {
            w.twins.require_twin();
            w.refused = w.last_request.clone();
        }
        listed_row(&ok_value(w), &c[1], &c[2]);
    })
    .await;
}

/// The one row of `recovery.list`'s result naming `checkpoint`, checked to be there
/// exactly once and to carry `status`.
pub(super) fn listed_row(got: &Value, checkpoint: &str, status: &str) -> Value {
    let list = got
        .get("checkpoints")
        .and_then(Value::as_array)
        .unwrap_or_else(|| panic!("no checkpoints array in {got}"));
    let rows: Vec<&Value> = list
        .iter()
        .filter(|e| e.get("checkpoint").and_then(Value::as_str) == Some(checkpoint))
        .collect();
    assert_eq!(rows.len(), 1, "rows for checkpoint {checkpoint} in {got}");
    let listed = rows[0].get("status").and_then(Value::as_str);
    // The RFC names the statuses, not which one each defect gets: valid or not is
    // its, the not-valid status a defect is listed with is pins.md's table.
    let not_valid = |s: Option<&str>| {
        matches!(
            s,
            Some("corrupt" | "incompatible" | "expired" | "unsafe" | "future")
        )
    };
    if listed != Some(status) && status != "valid" && not_valid(listed) {
        crate::evidence::pin(
            "rfc-pin-reader-result-names",
            format!("checkpoint {checkpoint} listed {status}"),
            format!("listed {}", listed.unwrap_or("")),
        );
    } else {
        assert_eq!(listed, Some(status), "status of {checkpoint}");
    }
    rows[0].clone()
}

// `$settled_count plus 1`: counted from the store as the setup left it.
#[then(regex = r#"^the result lists (\d+|\$\w+)(?: plus (\d+))? checkpoints?$"#)]
async fn result_lists_checkpoints(w: &mut World, c: &[String]) {
    w.run(c, None, |w, c| {
        let got = ok_value(w);
        let want: usize = c[1].parse().or_harness("a number in the step");
        let plus: usize = c
            .get(2)
            .map_or(0, |p| p.as_str().parse().or_harness("a number in the step"));
        let n = got
            .get("checkpoints")
            .and_then(Value::as_array)
            .map_or(usize::MAX, Vec::len);
        assert_eq!(n, want + plus, "checkpoints in {got}");
    })
    .await;
}

// The list is ordered by generation (RFC §6); the newest is the last written, which a
// daemon that also checkpoints at activation has not listed first.
#[then(regex = r#"^the newest checkpoint the result lists is valid and saved as \$(\w+)$"#)]
async fn newest_listed_saved(w: &mut World, c: &[String]) {
    w.run(c, None, |w, c| {
        let got = ok_value(w);
        let newest = got["checkpoints"]
            .as_array()
            .into_iter()
            .flatten()
            .filter(|e| e["generation"].is_u64())
            .max_by_key(|e| e["generation"].as_u64())
            .unwrap_or_else(|| panic!("no checkpoint with a generation in {got}"))
            .clone();
        assert_eq!(
            newest["status"], "valid",
            "the newest listed checkpoint: {newest}"
        );
        let id = newest["checkpoint"]
            .as_str()
            .unwrap_or_else(|| panic!("no checkpoint id in {newest}"));
        w.vars.insert(c[1].to_string(), id.to_string());
    })
    .await;
}

#[then(regex = r"^no checkpoint or temporary file exists in the store$")]
async fn no_checkpoint_or_temporary_file_exists_store(w: &mut World) {
    w.run(&[], None, |w, _| {
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
    })
    .await;
}

#[then(regex = r#"^the store still holds the file of "(\w+)"$"#)]
async fn store_still_holds_file(w: &mut World, c: &[String]) {
    w.run(c, None, |w, c| {
        let m = w.meta_of(&c[1]);
        assert!(m.is_file() || m.file_type().is_symlink());
    })
    .await;
}

#[then(regex = r#"^the store file of "(\w+)" still has mode (0[0-7]{3})$"#)]
async fn store_file_still_has_mode(w: &mut World, c: &[String]) {
    w.run(c, None, |w, c| {
        let m = w.meta_of(&c[1]);
        let want = u32::from_str_radix(&c[2], 8).unwrap();
        assert_eq!(mode_of(&m), want, "mode was changed");
    })
    .await;
}

#[then(
    regex = r"^every store directory has mode 0700 and every store file mode 0600, owned by the daemon UID$"
)]
async fn every_store_directory_has_mode_0700_every(w: &mut World) {
    w.run(&[], None, |w, _| {
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
    })
    .await;
}

#[then(regex = r#"^no reply, error or written file contains "([^"]+)"$"#)]
async fn no_reply_error_or_written_file_contains(w: &mut World, c: &[String]) {
    w.run(c, None, |w, c| {
        let needle = c[1].as_bytes().to_vec();
        assert!(
            !contains(&w.transcript, &needle),
            "a reply or error contains {:?}",
            &c[1]
        );
        judge_files(w, w.all_files(), &format!("{:?}", &c[1]), |b| {
            contains(b, &needle)
        });
    })
    .await;
}

#[then(regex = r"^the store holds exactly (\d+|\$\w+)(?: plus (\d+))? checkpoint files?$")]
async fn store_holds_exactly_checkpoint_files(w: &mut World, c: &[String]) {
    w.run(c, None, |w, c| {
        let want: usize = c[1].parse().or_harness("a number in the step");
        let plus: usize = c
            .get(2)
            .map_or(0, |p| p.as_str().parse().or_harness("a number in the step"));
        let n = w
            .store_entries()
            .iter()
            .filter(|(name, _)| name.starts_with('c') && name.ends_with(".json"))
            .count();
        assert_eq!(n, want + plus, "checkpoint files in the store");
    })
    .await;
}

#[then(regex = r#"^no store file contains "([^"]+)"$"#)]
async fn no_store_file_contains(w: &mut World, c: &[String]) {
    w.run(c, None, |w, c| {
        let needle = c[1].trim().as_bytes().to_vec();
        let mut files = Vec::new();
        crate::drivers::probe::walk_files(&w.ph.state_home.join("venomx"), &mut files);
        judge_files(w, files, &format!("{:?}", c[1].trim()), |b| {
            contains(b, &needle)
        });
    })
    .await;
}

// A PID is a short number: as a substring it turns up by chance in timestamps, sizes
// and hex ids, so only a number standing on its own counts.
#[then(regex = r#"^no store file holds the number "([^"]+)"$"#)]
async fn no_store_file_holds_the_number(w: &mut World, c: &[String]) {
    w.run(c, None, |w, c| {
        let number = c[1].trim();
        if number.is_empty() || !number.bytes().all(|b| b.is_ascii_digit()) {
            crate::harness_error!("{number:?} is not a decimal number");
        }
        let mut files = Vec::new();
        crate::drivers::probe::walk_files(&w.ph.state_home.join("venomx"), &mut files);
        judge_files(w, files, &format!("the number {number}"), |b| {
            crate::drivers::probe::number_at(b, number.as_bytes()).is_some()
        });
    })
    .await;
}

#[then(
    regex = r#"^the newest checkpoint in the store is valid with (shutdown "(\w+)"|format (\d))$"#
)]
async fn newest_checkpoint_store_valid_with_shutdown_format(w: &mut World, c: &[String]) {
    w.run(c, None, |w, c| {
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
    })
    .await;
}

#[then(
    regex = r#"^the newest checkpoint in the store keeps the planted text timestamps of "(\w+)"$"#
)]
async fn newest_checkpoint_store_keeps_planted_text_timestamps(w: &mut World, c: &[String]) {
    w.run(c, None, |w, c| {
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
                .unwrap_or_else(|| crate::harness_error!("{} has no planted text", &c[1]));
            assert_eq!(text[k].as_str(), Some(planted.as_str()), "{k} was changed");
        }
    })
    .await;
}

#[then(regex = r"^the newest checkpoint in the store has a split with ratio (\d+)$")]
async fn newest_checkpoint_store_has_split_with_ratio(w: &mut World, c: &[String]) {
    w.run(c, None, |w, c| {
        let (_, payload) = newest_checkpoint(w);
        let want: u64 = c[1].parse().or_harness("a number in the step");
        let found = payload["windows"].as_array().unwrap().iter().any(|win| {
            win["nodes"]
                .as_array()
                .unwrap()
                .iter()
                .any(|n| n["ratio"].as_u64() == Some(want))
        });
        assert!(found, "no split with ratio {want} in {payload}");
    })
    .await;
}

#[then(regex = r#"^the result field of the error "([^"]*)" is (.+)$"#)]
async fn error_result_field_is(w: &mut World, c: &[String]) {
    w.run(c, None, |w, c| {
        let want: Value = serde_json::from_str(&c[2])
            .unwrap_or_else(|_| crate::harness_error!("expected value is not JSON: {}", &c[2]));
        match &w.last().result {
            Ok(v) => panic!("expected an error, got {v}"),
            Err(e) => assert_eq!(at(e, &c[1]), Some(&want), "error {e}"),
        }
    })
    .await;
}

#[then(regex = r#"^nothing exists at "([^"]+)" under the daemon's working directory$"#)]
async fn nothing_exists_at_under_daemon_working_directory(w: &mut World, c: &[String]) {
    w.run(c, None, |w, c| {
        let p = w.dir.path().join(&c[1]);
        assert!(
            std::fs::symlink_metadata(&p).is_err(),
            "{} was created",
            p.display()
        );
    })
    .await;
}

#[then(regex = r#"^some doctor check has status "(\w+)" or "(\w+)"$"#)]
async fn some_doctor_check_has_status_or(w: &mut World, c: &[String], #[step] step: &Step) {
    w.run(c, step.docstring.as_deref(), |w, c| {
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
    })
    .await;
}

#[then(regex = r#"^no doctor check claims "([^"]+)"$"#)]
async fn no_doctor_check_claims(w: &mut World, c: &[String], #[step] step: &Step) {
    w.run(c, step.docstring.as_deref(), |w, c| {
        let got = ok_value(w);
        let text = got.to_string().to_lowercase();
        assert!(
            !text.contains(&c[1].to_lowercase()),
            "doctor claims {:?}: {got}",
            &c[1]
        );
    })
    .await;
}

#[then(regex = r#"^no reply or error contains "([^"]+)"$"#)]
async fn no_reply_or_error_contains(w: &mut World, c: &[String]) {
    w.run(c, None, |w, c| {
        assert!(
            !contains(&w.transcript, c[1].as_bytes()),
            "a reply or error contains {:?}",
            &c[1]
        );
    })
    .await;
}

#[then(regex = r#"^the transcript contains "([^"]+)"$"#)]
async fn transcript_contains(w: &mut World, c: &[String]) {
    w.run(c, None, |w, c| {
        assert!(
            contains(&w.transcript, c[1].as_bytes()),
            "no reply contains {:?}",
            &c[1]
        );
    })
    .await;
}

/// Judges `files` for `needle` (`found` says whether a file's bytes hold it). The
/// seed keeps secrets out of "checkpoint allowlist, errors, events or doctor": a
/// store file holding it fails; any other file (a log, a runtime file) is pin
/// `rfc-pin-secret-scan-scope`.
fn judge_files(
    w: &crate::recovery::scenario::Scenario,
    files: impl IntoIterator<Item = std::path::PathBuf>,
    what: &str,
    found: impl Fn(&[u8]) -> bool,
) {
    let mut beyond = Vec::new();
    for f in files {
        let bytes = std::fs::read(&f).unwrap_or_default();
        if !found(&bytes) {
            continue;
        }
        assert!(
            !f.starts_with(&w.ph.store),
            "the store file {} holds {what}",
            f.display()
        );
        beyond.push(f.display().to_string());
    }
    if !beyond.is_empty() {
        crate::evidence::pin(
            "rfc-pin-secret-scan-scope",
            format!("no file the implementation writes holds {what}"),
            format!("outside the store, {} hold it", beyond.join(", ")),
        );
    }
}
