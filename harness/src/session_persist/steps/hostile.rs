//! Unpack into a hostile destination (a link, a FIFO, a file or a directory already
//! at a path the blob writes) and unpack failed by the injector at each write, fsync
//! and rename in turn. The implementation may refuse or replace the entry; either
//! way nothing outside the root changes, no link's target changes, HasSession is
//! true only with the whole session, and every command ends within its bound.

use super::unpack::kit_blob;
use crate::session_persist::bench::{Before, Persist, SweepPoint};
use crate::session_persist::bounded;
use crate::session_persist::pods::{self, Entry};
use crate::session_persist::{layout, World};
use crate::verdict::OrHarness;
use cucumber::{given, then, when};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// The most faults a sweep tries before it calls the unpack unbounded.
const MAX_SWEEP: usize = 100;

/// The pod's root without making it (it may be a link, a file or a FIFO here).
fn root_of(s: &Persist, pod: &str) -> PathBuf {
    let pods = s.sandbox().join("pods");
    pods::make_private_dirs(&pods);
    pods.join(pod)
}

/// The tree under `root` when `root` is a real directory, else nothing.
fn tree(root: &Path) -> BTreeMap<String, Entry> {
    match std::fs::symlink_metadata(root) {
        Ok(m) if m.is_dir() => pods::snapshot(root),
        _ => BTreeMap::new(),
    }
}

/// The session files of the scenario's blob (the kit's), by path.
fn blob_files(s: &Persist) -> BTreeMap<String, Vec<u8>> {
    let bytes = std::fs::read(s.blob()).or_harness("reading the kit's blob");
    let members = pods::members(&bytes);
    members
        .into_iter()
        .skip(1)
        .map(|m| (m.path, m.bytes))
        .collect()
}

/// Whether every file of `want` is in `root` as a regular file with its bytes.
fn holds_whole(root: &Path, want: &BTreeMap<String, Vec<u8>>) -> bool {
    let got = tree(root);
    want.iter()
        .all(|(k, v)| matches!(got.get(k), Some(Entry::File(b)) if b == v))
}

#[given(
    regex = r#"^pod "([A-Z])"'s (root|project dir|key file|subtree dir|subtree file) for (\w+) session "([A-Za-z0-9-]+)" is (a symlink to outside the pod|a hard link to a file outside the pod|a FIFO|a directory|a plain file|a read-only file)$"#
)]
async fn hostile_entry(w: &mut World, c: &[String]) {
    w.run(c, None, |s, c| {
        let session = layout::session(&c[3], &c[4]);
        let key_dir = session.key.rsplit_once('/').map_or("", |(d, _)| d);
        let subtree_file = || {
            session
                .files
                .iter()
                .find(|f| f.starts_with(&format!("{}/", session.inner_dir)) && **f != session.key)
                .cloned()
                .unwrap_or_else(|| {
                    layout::not_in_layouts(&format!(
                        "file below the session's own directory (the row's {})",
                        &c[2]
                    ))
                })
        };
        let root = root_of(s, &c[1]);
        let path = match &c[2] {
            "root" => root.clone(),
            "project dir" => root.join(key_dir),
            "key file" => root.join(&session.key),
            "subtree dir" => {
                // Without a file below it, the session's directory is the project
                // dir: not the row's subject.
                subtree_file();
                root.join(&session.inner_dir)
            }
            _ => root.join(subtree_file()),
        };
        if let Some(parent) = path.parent() {
            pods::make_private_dirs(parent);
        }
        let outside = s.sandbox().join("outside");
        pods::make_private_dirs(&outside);
        let canary = b"outside the pod: never written\n";
        let is_dir = matches!(&c[2], "root" | "project dir" | "subtree dir");
        match (&c[5], is_dir) {
            ("a symlink to outside the pod", true) => {
                let target = outside.join("dir");
                pods::plant(&target, "canary.txt", canary);
                std::os::unix::fs::symlink(&target, &path).or_harness("symlink");
            }
            ("a symlink to outside the pod", false) => {
                std::fs::write(outside.join("target.jsonl"), canary).or_harness("write");
                std::os::unix::fs::symlink(outside.join("target.jsonl"), &path)
                    .or_harness("symlink");
            }
            ("a hard link to a file outside the pod", false) => {
                std::fs::write(outside.join("linked.jsonl"), canary).or_harness("write");
                std::fs::hard_link(outside.join("linked.jsonl"), &path).or_harness("link");
            }
            ("a FIFO", _) => {
                nix::unistd::mkfifo(&path, nix::sys::stat::Mode::S_IRWXU).or_harness("mkfifo")
            }
            ("a directory", false) => pods::make_private_dirs(&path),
            ("a plain file", true) => std::fs::write(&path, canary).or_harness("write"),
            ("a read-only file", false) => {
                use std::os::unix::fs::PermissionsExt;
                std::fs::write(&path, b"{\"turn\":0}\n").or_harness("write");
                std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o400))
                    .or_harness("chmod");
            }
            (kind, _) => crate::harness_error!("the kit plants no {kind} at a pod's {}", &c[2]),
        }
    })
    .await;
}

#[when(
    regex = r#"^pod "([A-Z])" unpacks the kit's valid (\w+) blob of session "([A-Za-z0-9-]+)" within its bound$"#
)]
async fn unpack_bounded(w: &mut World, c: &[String]) {
    w.run(c, None, |s, c| {
        s.blob = Some(kit_blob(s, &c[2], &c[3], None));
        let root = root_of(s, &c[1]);
        // The root's own entry (a link, a FIFO) is outside it: replacing it counts.
        let outside = s.outside(&c[1]);
        s.before = Some(Before {
            pod: c[1].to_string(),
            inside: tree(&root),
            outside,
        });
        let file = s.blob().to_string_lossy().into_owned();
        let t = s.t.unpack.clone();
        let root = root.to_string_lossy().into_owned();
        let fill = [
            ("backend", &c[2]),
            ("root", root.as_str()),
            ("id", &c[3]),
            ("file", file.as_str()),
        ];
        let b = bounded::run(s, &t, &fill, &[]);
        bounded::require_within_bound(&b, "the unpack", "sp-path-safety");
    })
    .await;
}

#[then(
    regex = r#"^pod "([A-Z])" has (\w+) session "([A-Za-z0-9-]+)" only whole, and whole after an unpack that succeeded$"#
)]
async fn only_whole(w: &mut World, c: &[String]) {
    w.run(c, None, |s, c| {
        let exit = s.last().exit;
        if exit != Some(0) {
            // A refusal is a choice the seed allows, proven only by the valid twin.
            crate::evidence::require_accepted_control();
        }
        let root = root_of(s, &c[1]);
        let want = blob_files(s);
        let root_text = root.to_string_lossy().into_owned();
        let has = bounded::has_session(s, &root_text, &c[2], &c[3]).unwrap_or_else(|said| {
            crate::evidence::fail(
                Some("sp-hassession-root"),
                "has-session to print true or false and exit 0",
                said,
            )
        });
        let whole = holds_whole(&root, &want);
        // A part of the session published with HasSession true is an unpack that
        // did not extract aside and rename whole.
        crate::evidence::ensure(!has || whole, Some("sp-temp-rename"), || {
            (
                "HasSession true only when the whole session is there".into(),
                format!(
                    "HasSession true, but pod {} lacks a session file or its bytes",
                    &c[1]
                ),
            )
        });
        crate::evidence::ensure(
            exit != Some(0) || (has && whole),
            Some("sp-temp-rename"),
            || {
                (
                    "an unpack that exits 0 to leave the whole session, with HasSession true"
                        .into(),
                    format!("unpack exit 0; HasSession {has}; whole session there: {whole}"),
                )
            },
        );
    })
    .await;
}

#[when(
    regex = r#"^pod "([A-Z])" unpacks the kit's valid (\w+) blob of session "([A-Za-z0-9-]+)"( over an earlier copy of the session)? failing each (write|fsync|rename) in turn$"#
)]
async fn fault_sweep(w: &mut World, c: &[String]) {
    w.run(c, None, |s, c| {
        s.blob = Some(kit_blob(s, &c[2], &c[3], None));
        let want = blob_files(s);
        // The same paths with other bytes: the transcript of an earlier visit, which
        // the unpack replaces (never leaves beside the new files).
        let old: BTreeMap<String, Vec<u8>> = want
            .keys()
            .map(|k| {
                (
                    k.clone(),
                    format!("{{\"earlier visit\":{k:?}}}\n").into_bytes(),
                )
            })
            .collect();
        let over_old = !c[4].is_empty();
        let call = c[5].to_string();
        let traces = s.sandbox().join("traces");
        pods::make_private_dirs(&traces);
        let file = s.blob().to_string_lossy().into_owned();
        for k in 1..=MAX_SWEEP {
            let pod = format!("{}-{call}-{k}", &c[1]);
            let root = s.pod(&pod);
            let root_text = root.to_string_lossy().into_owned();
            if over_old {
                for (rel, bytes) in &old {
                    pods::plant(&root, rel, bytes);
                }
                if k == 1 {
                    earlier_copy_control(s, &root_text, &c[2], &c[3]);
                }
            }
            if root_text.contains(['*', '?', '[', '\\', ';', '#', '=']) {
                crate::harness_error!("the pod's path would not read as a plain glob");
            }
            let trace = traces.join(format!("{pod}.jsonl"));
            let plan = format!("{call}@{root_text}*#{k}=EIO");
            let t = s.t.unpack.clone();
            let rules = vxfault::check_plan(&plan).or_harness("the fault plan");
            let counters =
                vxfault::Counters::create(&traces.join(format!("{pod}.counters")), &plan)
                    .or_harness("the fault plan's counter file");
            s.inject(&t, &plan, Some(&trace));
            s.injection = s.injection.take().map(|i| i.counted(&counters));
            let fill = [
                ("backend", &c[2]),
                ("root", root_text.as_str()),
                ("id", &c[3]),
                ("file", file.as_str()),
            ];
            let b = bounded::run(s, &t, &fill, &[]);
            s.injection = None;
            bounded::require_within_bound(&b, "the unpack under the injector", "sp-temp-rename");
            let fired = crate::drivers::fault::read_trace(&trace)
                .iter()
                .any(|l| !l["rule"].is_null());
            let has_session =
                bounded::has_session(s, &root_text, &c[2], &c[3]).unwrap_or_else(|said| {
                    crate::evidence::fail(
                        Some("sp-hassession-root"),
                        "has-session to print true or false and exit 0",
                        said,
                    )
                });
            let got = pods::files(&tree(&root));
            s.sweep.push(SweepPoint {
                k,
                exit: b.exit,
                has_session,
                whole: holds_whole(&root, &want),
                none: !got.keys().any(|k| want.contains_key(k)),
                old_whole: over_old && holds_whole(&root, &old),
            });
            if !fired {
                if k == 1 {
                    never_fired(s, &call, &plan, &counters, &rules);
                }
                return;
            }
        }
        panic!("the unpack still met a {call} at call {MAX_SWEEP}: it writes without bound");
    })
    .await;
}

/// The barrier of a sweep over an earlier copy: HasSession sees that copy before
/// any unpack touches it, so a later "no session" is the unpack's doing.
fn earlier_copy_control(s: &mut Persist, root: &str, backend: &str, id: &str) {
    let said = bounded::has_session(s, root, backend, id);
    crate::evidence::control(
        "persist.has_session",
        crate::evidence::Control {
            what: format!("HasSession of the earlier copy of session {id:?} before the unpack"),
            accepted: said == Ok(true),
            observed: match said {
                Ok(b) => format!("HasSession {b}"),
                Err(e) => format!("has-session {e}"),
            },
            commands: crate::evidence::commands_of_step(),
        },
    );
}

/// The calls the seed itself requires of an unpack ("temp extract + atomic
/// rename": the files are written, then renamed into place). An fsync it does not.
const SEED_CALLS: [&str; 2] = ["write", "rename"];

/// The sweep's first plan never fired: the unpack made no `call` under the root, so
/// no failed call was shown. Once the unfaulted unpack is seen whole (else the
/// later steps fail it), a call the seed requires fails naming it; any other makes
/// the row `inconclusive`, with the plan's counts: nothing was tested.
fn never_fired(
    s: &Persist,
    call: &str,
    plan: &str,
    counters: &vxfault::Counters,
    rules: &[vxfault::RuleInfo],
) {
    let Some(p) = s.sweep.last() else { return };
    if p.exit != Some(0) || !p.has_session || !p.whole {
        return;
    }
    let counts = match counters.read(rules) {
        Ok(n) => n
            .rules
            .iter()
            .map(|r| {
                format!(
                    "the plan {:?} matched {} calls and acted on {} ({} calls reached the \
                     injector: {}; processes that loaded the plan: {})",
                    r.text,
                    r.matched,
                    r.fired,
                    call,
                    if r.reached { "yes" } else { "no" },
                    n.loaded
                )
            })
            .collect::<Vec<_>>()
            .join("; "),
        Err(e) => format!("the plan {plan:?}: its counter file: {e}"),
    };
    if SEED_CALLS.contains(&call) {
        crate::evidence::fail(
            Some("sp-temp-rename"),
            format!("an unpack that makes a {call} under the root (temp extract + atomic rename)"),
            format!("no {call} under the root: {counts}"),
        );
    }
    crate::inconclusive!(
        "the unpack made no {call} under the root, so no failed {call} was shown: {counts}"
    );
}

#[then(regex = r"^the unpack was failed at (\d+) (?:writes?|renames?|fsyncs?) at least$")]
async fn failed_at_least(w: &mut World, c: &[String]) {
    w.run(c, None, |s, c| {
        let least: usize = c[1].parse().or_harness("a count");
        let failed = s.sweep.len().saturating_sub(1);
        assert!(
            failed >= least,
            "the injector met {failed} such calls under the root; a temp extract writes its \
             files and publishes them by rename"
        );
    })
    .await;
}

#[then(regex = r"^every failed call left the pod without the session or with all of it$")]
async fn every_failure_all_or_nothing(w: &mut World) {
    w.run(&[], None, |s, _| {
        let (_, failed) = s.sweep.split_last().or_harness("no sweep ran");
        for p in failed {
            let k = p.k;
            let one_session = !p.has_session || p.whole || p.old_whole;
            crate::evidence::ensure(one_session, Some("sp-temp-rename"), || {
                (
                    format!(
                        "after the failed call {k}: HasSession false, the whole session, or \
                         the earlier copy untouched"
                    ),
                    format!(
                        "unpack exit {:?}; HasSession true with a part of the session (an \
                         earlier transcript beside new files)",
                        p.exit
                    ),
                )
            });
            // The files whole there and HasSession false: HasSession does not answer
            // for the root it was given.
            let answers = p.has_session || p.none || !p.whole;
            crate::evidence::ensure(answers, Some("sp-hassession-root"), || {
                (
                    format!("after the failed call {k}: the whole session with HasSession"),
                    "every file of the session there, yet HasSession false".into(),
                )
            });
        }
    })
    .await;
}

#[then(regex = r"^the unpack no fault reached left the whole session$")]
async fn unreached_whole(w: &mut World) {
    w.run(&[], None, |s, _| {
        let last = s.sweep.last().or_harness("no sweep ran");
        assert_eq!(
            last.exit,
            Some(0),
            "the exit status of the unpack no fault reached"
        );
        assert!(
            last.has_session && last.whole,
            "the unpack no fault reached: HasSession {}, whole session there: {}",
            last.has_session,
            last.whole
        );
    })
    .await;
}
