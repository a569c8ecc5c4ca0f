//! Decoys beside a session (files that carry its id but are no session file of the
//! layout, credential files inside its own subtree) and two key files for one id,
//! judged on the kit's pin `sp-pin-ambiguous-key`.

use crate::session_persist::bench::Persist;
use crate::session_persist::pods::{self, AUTH_FILES};
use crate::session_persist::{layout, World};
use cucumber::{given, then};

/// The capable backends whose paths the kit plants as another backend's decoys.
const BACKENDS: [&str; 3] = ["claude_code", "codex", "pi"];

/// The pin two key files for one id are judged on.
const PIN: &str = "sp-pin-ambiguous-key";

fn dir_of(path: &str) -> &str {
    path.rsplit_once('/').map_or("", |(d, _)| d)
}

fn base_of(path: &str) -> &str {
    path.rsplit('/').next().unwrap_or(path)
}

/// Files that carry session `id` in their names and are not the session's: what
/// pack must leave out. `key` is the planted key file (its copies are decoys too).
fn decoys(backend: &str, id: &str, key: &str) -> Vec<String> {
    let mut out = vec![
        format!("todos/{id}.txt"),
        format!("todos/{id}-agent-{id}.json"),
        format!("shell-snapshots/snapshot-bash-{id}.sh"),
        format!("shell-snapshots/{id}.sh"),
        format!("projects/x/{id}.json"),
        format!("archived_sessions/{}", base_of(key)),
        format!("tmp/{}", base_of(key)),
        format!("{key}.tmp"),
        format!("{}/{id}.json", dir_of(key)),
    ];
    for other in BACKENDS.iter().filter(|b| **b != backend) {
        out.extend(layout::session(other, id).files);
    }
    // Credential names inside the session's own subtree (or beside its key file).
    let l = layout::session(backend, id);
    let own = match l.inner_dir.strip_prefix(dir_of(&l.key)) {
        Some(rest) if rest.starts_with('/') => format!("{}{rest}", dir_of(key)),
        _ => dir_of(key).to_string(),
    };
    for (i, name) in AUTH_FILES.iter().enumerate() {
        let below = ["subagents/", "tool-results/", ""][i % 3];
        out.push(format!("{own}/{below}{name}"));
    }
    out
}

#[given(regex = r#"^pod "([A-Z])" also holds decoys of its session$"#)]
async fn pod_holds_decoys(w: &mut World, c: &[String]) {
    w.run(c, None, |s, c| {
        let root = s.pod(&c[1]);
        let p = s.planted(&c[1]).clone();
        let copy = p.files[&p.key].clone();
        // A layout of the implementation's own that lists a decoy's path makes it a
        // session file there, not a decoy (ADR-089 leaves file sets to the implementer).
        let decoys: Vec<String> = decoys(&p.backend, &p.id, &p.key)
            .into_iter()
            .filter(|rel| !layout::lists(&p.backend, &p.id, rel))
            .collect();
        for rel in decoys {
            if p.files.contains_key(&rel) {
                crate::harness_error!("a decoy {rel} would overwrite a session file");
            }
            let bytes = if AUTH_FILES.contains(&base_of(&rel)) {
                b"{\"token\":\"secret\"}\n".to_vec()
            } else {
                copy.clone()
            };
            pods::plant(&root, &rel, &bytes);
        }
    })
    .await;
}

/// Another path of the layout for the same key file: another project's directory,
/// or another day's.
fn elsewhere(key: &str) -> String {
    if key.contains("work-demo") {
        key.replacen("work-demo", "other-project", 1)
    } else if key.contains("/2026/11/30/") {
        key.replacen("/2026/11/30/", "/2026/12/01/", 1)
    } else {
        crate::harness_error!("the kit knows no second place for the key file {key}")
    }
}

#[given(
    regex = r#"^pod "([A-Z])" also holds a copy of its key file at another path of the layout$"#
)]
async fn pod_holds_second_key(w: &mut World, c: &[String]) {
    w.run(c, None, |s, c| {
        let p = s.planted(&c[1]).clone();
        let copy = elsewhere(&p.key);
        s.keep_has_session_before_defect(&c[1]);
        s.vary(&c[1], format!("a copy of its key file at {copy}"));
        let bytes = p.files[&p.key].clone();
        pods::plant(&s.pod(&c[1]), &copy, &bytes);
    })
    .await;
}

#[given(
    regex = r#"^pod "([A-Z])" holds the (\w+) session "([A-Za-z0-9-]+)"'s key file at another path of the layout$"#
)]
async fn pod_holds_key_elsewhere(w: &mut World, c: &[String]) {
    w.run(c, None, |s, c| {
        let key = layout::session(&c[2], &c[3]).key;
        let line = format!("{{\"turn\":1,\"session\":\"{}\"}}\n", &c[3]);
        pods::plant(&s.pod(&c[1]), &elsewhere(&key), line.as_bytes());
    })
    .await;
}

#[then(
    regex = r#"^pod "([A-Z])" has no (\w+) session "([A-Za-z0-9-]+)", as the kit pins for two key files$"#
)]
async fn no_session_pinned(w: &mut World, c: &[String]) {
    w.run(c, None, |s, c| {
        if let Some(control) = s.before_defect.remove(&c[1]) {
            crate::evidence::control("persist.has_session", control);
        }
        crate::evidence::require_accepted_control();
        let has = s.has_session(&c[1], &c[2], &c[3]);
        if has {
            crate::evidence::pin(
                PIN,
                format!(
                    "HasSession false for pod {}: two key files of the id, no guess",
                    &c[1]
                ),
                "HasSession true",
            );
        }
    })
    .await;
}

fn blob_len(s: &Persist) -> u64 {
    std::fs::metadata(s.blob()).map_or(0, |m| m.len())
}

#[then(regex = r"^the pack is refused, as the kit pins for two key files$")]
async fn pack_refused_pinned(w: &mut World) {
    w.run(&[], None, |s, _| {
        crate::evidence::require_accepted_control();
        let exit = s.last().exit;
        let len = blob_len(s);
        if exit == Some(0) {
            crate::evidence::pin(
                PIN,
                "pack refused: two key files of the id, no guess which",
                format!("pack exit 0, a blob of {len} bytes"),
            );
            return;
        }
        assert_eq!(len, 0, "a refused pack left a blob of {len} bytes");
    })
    .await;
}

#[then(
    regex = r#"^the unpack is refused and pod "([A-Z])" is unchanged, as the kit pins for two key files$"#
)]
async fn unpack_refused_pinned(w: &mut World, c: &[String]) {
    w.run(c, None, |s, c| {
        let exit = s.last().exit;
        if exit == Some(0) {
            crate::evidence::pin(
                PIN,
                "unpack refused beside another key file of the id, the root unchanged",
                "unpack exit 0",
            );
            return;
        }
        crate::evidence::require_accepted_control();
        let before = s.before().inside.clone();
        let now = pods::snapshot(&s.pod(&c[1]));
        let changes = crate::evidence::diff(&before, &now);
        let changed: Vec<String> = changes.iter().map(|f| f.path.clone()).collect();
        crate::evidence::files(changes);
        crate::evidence::ensure(changed.is_empty(), Some("sp-temp-rename"), || {
            (
                format!("a refused unpack to leave pod {} unchanged", &c[1]),
                format!("changed at {changed:?}"),
            )
        });
    })
    .await;
}
