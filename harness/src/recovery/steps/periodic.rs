//! Steps: the periodic tick, writes held in flight, the store as it is right after
//! readiness or a refused start, and the flags and mode the store's files are
//! created with (the injector's trace).

use super::prelude::*;
use crate::drivers::fault;
use crate::recovery::scenario::Scenario;
use std::path::Path;

/// RFC §3's temporary-file prefix.
const TEMP_PREFIX: &str = ".tmp-";

fn is_final(name: &str) -> bool {
    name.starts_with('c') && name.ends_with(".json")
}

/// What identifies one store entry: a rewrite, a replacement, a chmod or a delete
/// changes it.
fn entry_fingerprints(w: &Scenario) -> Vec<String> {
    w.store_entries()
        .iter()
        .map(|(name, m)| {
            format!(
                "{name} ino={} size={} mode={:o} mtime={}.{:09} ctime={}.{:09}",
                m.ino(),
                m.size(),
                m.mode(),
                m.mtime(),
                m.mtime_nsec(),
                m.ctime(),
                m.ctime_nsec()
            )
        })
        .collect()
}

#[given(regex = r#"^a daemon started under the fault plan "([^"]+)" with the configuration:$"#)]
async fn daemon_started_under_fault_plan_with_configuration(
    w: &mut World,
    c: &[String],
    #[step] step: &Step,
) {
    w.run(c, step.docstring.as_deref(), |w, c| {
        w.inject(&c[1], None);
        w.write_config(c.doc().or_harness("step needs a docstring"));
        w.start();
    })
    .await;
}

#[given(regex = r"^a safe temporary file is planted in the store as \$(\w+)$")]
async fn safe_temporary_file_planted(w: &mut World, c: &[String]) {
    w.run(c, None, |w, c| {
        use std::os::unix::fs::PermissionsExt;
        let store = w.ph.store.clone();
        if !store.is_dir() {
            crate::harness_error!("plant a checkpoint first: the store does not exist");
        }
        // The name RFC §3 gives a writer's temporary file: `.tmp-<uuid-v4>`.
        let id = crate::recovery::fixtures::new_checkpoint_id();
        let name = format!("{TEMP_PREFIX}{}", &id[1..]);
        let path = store.join(&name);
        std::fs::write(&path, b"{\"format\":3,\"pay").or_harness("plant temporary file");
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600))
            .or_harness("chmod temporary file");
        w.vars.insert(c[1].to_string(), name);
        w.vars.insert(
            format!("{}_file", &c[1]),
            path.to_string_lossy().into_owned(),
        );
    })
    .await;
}

#[given(regex = r"^the store's entries are remembered$")]
#[when(regex = r"^the store's entries are remembered$")]
async fn store_entries_remembered(w: &mut World) {
    w.run(&[], None, |w, _| {
        let now = entry_fingerprints(w);
        w.vars.insert("store_entries".into(), now.join("\n"));
    })
    .await;
}

#[then(regex = r"^the store's entries are exactly as remembered$")]
async fn store_entries_exactly_as_remembered(w: &mut World) {
    w.run(&[], None, |w, _| {
        let then = w
            .vars
            .get("store_entries")
            .cloned()
            .or_harness("the store's entries were not remembered");
        let now = entry_fingerprints(w).join("\n");
        assert_eq!(
            now, then,
            "the store changed: now (left) vs remembered (right)"
        );
    })
    .await;
}

#[then(regex = r"^the second daemon exits with status (\d+)$")]
async fn second_daemon_exits_with_status(w: &mut World, c: &[String]) {
    w.run(c, None, |w, c| {
        let want: i32 = c[1].parse().or_harness("a number in the step");
        let (status, _) = w.second.or_harness("no second daemon");
        let status = status.expect("the second daemon kept running on a locked socket");
        assert!(!status.success(), "second daemon exit status {status}");
        if status.code() != Some(want) {
            crate::evidence::pin(
                "rfc-pin-daemon-exit",
                format!("the second daemon exits with status {want}"),
                format!("it ended with {status}"),
            );
        }
    })
    .await;
}

#[given(regex = r"^a checkpoint file appears in the store within (\d+) ms$")]
#[when(regex = r"^a checkpoint file appears in the store within (\d+) ms$")]
async fn checkpoint_file_appears_within(w: &mut World, c: &[String]) {
    w.run(c, None, |w, c| {
        let ms: u64 = c[1].parse().or_harness("a number in the step");
        crate::drivers::poll("a checkpoint file in the store", scaled(ms), || {
            w.store_entries()
                .iter()
                .any(|(name, m)| is_final(name) && m.is_file())
                .then_some(())
        });
    })
    .await;
}

/// The explicit checkpoint held in flight: sent on its own connection, it is in
/// flight once its temporary file exists in the store (RFC §3: created before the
/// write, renamed away only after the file fsync the plan delays).
#[when(
    regex = r#"^the owner runs the CLI "([^"]*)" while the owner's "recovery.checkpoint" is being written$"#
)]
async fn owner_runs_cli_while_checkpoint_written(w: &mut World, c: &[String]) {
    w.run(c, None, |w, c| {
        let token = w.owner_token();
        let socket = w.ph.socket.clone();
        let store = w.ph.store.clone();
        let words: Vec<String> = c[1].split_whitespace().map(String::from).collect();
        let (first, second) = std::thread::scope(|scope| {
            let first = scope.spawn(|| {
                crate::drivers::wire::call(&socket, Some(&token), "recovery.checkpoint", Map::new())
            });
            let in_flight = || {
                std::fs::read_dir(&store).ok().is_some_and(|rd| {
                    rd.flatten()
                        .any(|e| e.file_name().to_string_lossy().starts_with(TEMP_PREFIX))
                })
            };
            let start = std::time::Instant::now();
            while !in_flight() {
                assert!(
                    !first.is_finished(),
                    "the checkpoint finished before a temporary file was seen in the store"
                );
                if start.elapsed() > scaled(5_000) {
                    crate::timed_out!("no temporary file appeared in the store");
                }
                std::thread::sleep(Duration::from_millis(2));
            }
            let second = w.cli(Some("@owner"), &words);
            let first = first
                .join()
                .unwrap_or_else(|p| std::panic::resume_unwind(p));
            (first, second)
        });
        let (reply, bytes) = first;
        w.transcript.extend_from_slice(&bytes);
        w.burst = vec![reply];
        w.last = Some(second);
    })
    .await;
}

#[then(regex = r"^the checkpoint that was being written succeeds$")]
async fn checkpoint_being_written_succeeds(w: &mut World) {
    w.run(&[], None, |w, _| {
        let first = w
            .burst
            .first()
            .or_harness("no checkpoint was held in flight");
        if let Err(e) = &first.result {
            panic!("the checkpoint held in flight failed: {e}");
        }
    })
    .await;
}

/// The store directory as the trace names it (the injector resolves paths).
fn traced_store(w: &Scenario) -> String {
    std::fs::canonicalize(&w.ph.store)
        .unwrap_or_else(|_| w.ph.store.clone())
        .to_string_lossy()
        .into_owned()
}

fn trace_of(w: &Scenario) -> Vec<Value> {
    let path = w.vars.get("trace").cloned().or_harness("no trace");
    fault::read_trace(Path::new(&path))
}

/// RFC §2/§3: every file the daemon creates in the store is created exclusive
/// (`O_EXCL`), without following a symlink and private from its first instant (mode
/// 0600 given to the create itself, not a chmod after it). `O_CREAT|O_EXCL` never
/// follows a symlink at the path (POSIX: it fails with EEXIST), so it is no-follow
/// with or without `O_NOFOLLOW` (Rust's `create_new`, Go's `O_CREATE|O_EXCL`).
fn check_created_private(open: &Value) {
    let flags: Vec<&str> = open["flags"].as_str().unwrap_or("").split('|').collect();
    for need in ["O_CREAT", "O_EXCL"] {
        assert!(
            flags.contains(&need),
            "{} was created without {need}: {open}",
            open["path"]
        );
    }
    assert_eq!(
        open["mode"].as_str(),
        Some("0600"),
        "{} was created with another mode: {open}",
        open["path"]
    );
}

#[then(
    regex = r#"^the trace shows the temporary file of "([^"]+)" and every other file created in the store opened exclusive and no-follow with mode 0600$"#
)]
async fn trace_shows_created_exclusive_nofollow_0600(w: &mut World, c: &[String]) {
    w.run(c, None, |w, c| {
        let calls = trace_of(w);
        let store = traced_store(w);
        let final_path = format!("{store}/{}.json", &c[1]);
        let rename = calls
            .iter()
            .find(|r| r["op"] == "rename" && r["path2"] == final_path.as_str())
            .unwrap_or_else(|| panic!("no rename to {final_path} in the trace"));
        let tmp = rename["path"].as_str().unwrap_or("").to_string();
        let tmp_name = tmp.rsplit('/').next().unwrap_or("");
        assert!(
            tmp.starts_with(&format!("{store}/")) && tmp_name.starts_with(TEMP_PREFIX),
            "{final_path} was not renamed from a .tmp- file in the store: {rename}"
        );
        let creates: Vec<&Value> = calls
            .iter()
            .filter(|r| {
                r["op"] == "open"
                    && r["path"]
                        .as_str()
                        .is_some_and(|p| p.starts_with(&format!("{store}/")))
                    && r["flags"]
                        .as_str()
                        .is_some_and(|f| f.split('|').any(|x| x == "O_CREAT"))
            })
            .collect();
        assert!(
            creates.iter().any(|r| r["path"] == tmp.as_str()),
            "the trace shows no create of the temporary file {tmp}"
        );
        for open in creates {
            check_created_private(open);
        }
    })
    .await;
}
