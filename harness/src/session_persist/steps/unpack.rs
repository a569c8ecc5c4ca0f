//! Unpacking and HasSession: a blob (packed here, or from the kit's corpus) unpacked
//! into a pod, the pod's tree and everything outside it compared with what they were,
//! and the unpack crashed at each of its renames in turn.

use crate::session_persist::bench::{Persist, SweepPoint};
use crate::session_persist::caps::{Cap, Caps};
use crate::session_persist::World;
use crate::session_persist::{blobs, layout, pods};
use crate::verdict::OrHarness;
use cucumber::{given, then, when};

/// The most renames a sweep tries before it calls the unpack unbounded.
const MAX_SWEEP: usize = 200;

fn unpack_into(s: &mut Persist, pod: &str, backend: &str, id: &str, env: &[(String, String)]) {
    let root = s.pod(pod).to_string_lossy().into_owned();
    let file = s.blob().to_string_lossy().into_owned();
    let t = s.t.unpack.clone();
    s.run(
        &t,
        &[
            ("backend", backend),
            ("root", &root),
            ("id", id),
            ("file", &file),
        ],
        env,
    );
}

#[when(regex = r#"^pod "([A-Z])" unpacks the blob as (\w+) session "([A-Za-z0-9-]+)"$"#)]
async fn pod_unpacks(w: &mut World, c: &[String]) {
    w.run(c, None, |s, c| {
        s.keep_before(&c[1]);
        unpack_into(s, &c[1], &c[2], &c[3], &[]);
    })
    .await;
}

/// The kit's blob for `backend`/`id` (valid, or with one defect), written from the
/// profile's header member and the backend's layout.
pub(super) fn kit_blob(
    s: &mut Persist,
    backend: &str,
    id: &str,
    defect: Option<&str>,
) -> std::path::PathBuf {
    kit_blob_at(s, backend, id, defect, &Caps::of_profile())
}

/// [`kit_blob`] with the caps its cap defects are one over.
fn kit_blob_at(
    s: &mut Persist,
    backend: &str,
    id: &str,
    defect: Option<&str>,
    caps: &Caps,
) -> std::path::PathBuf {
    let spec = blobs::Spec {
        header_member: &s.t.header_member.clone(),
        backend,
        id,
        caps: *caps,
    };
    let bytes = match defect {
        None => blobs::valid(&spec),
        Some(d) => blobs::with_defect(&spec, d).unwrap_or_else(|e| crate::harness_error!("{e}")),
    };
    let file = s.new_blob_path();
    std::fs::write(&file, bytes).or_harness("writing the kit's blob");
    file
}

/// The control of an unpack refusal: the kit's valid blob of the same backend and
/// id, unpacked into a fresh pod, which must then have the session.
#[given(
    regex = r#"^the control: the kit's valid (\w+) blob of session "([A-Za-z0-9-]+)" is unpacked into a fresh pod$"#
)]
async fn control_unpack(w: &mut World, c: &[String]) {
    w.run(c, None, |s, c| {
        let kept = s.blob.take();
        s.blob = Some(kit_blob(s, &c[1], &c[2], None));
        let pod = format!("control-{}", s.planted.len() + s.variations.len());
        unpack_into(s, &pod, &c[1], &c[2], &[]);
        s.control_pod = Some(pod.clone());
        let exit = s.last().exit;
        let has = if exit == Some(0) {
            s.ask_has_session(&pod, &c[1], &c[2])
        } else {
            Err("not asked: the unpack failed".into())
        };
        crate::evidence::control(
            "persist.unpack",
            crate::evidence::Control {
                what: format!(
                    "unpacked the kit's valid {} blob of session {:?} (header member {:?}) into a fresh pod",
                    &c[1], &c[2], s.t.header_member
                ),
                accepted: exit == Some(0) && has == Ok(true),
                observed: format!(
                    "unpack exit {exit:?}; {}",
                    match &has {
                        Ok(b) => format!("HasSession {b}"),
                        Err(e) => format!("has-session {e}"),
                    }
                ),
                commands: crate::evidence::commands_of_step(),
            },
        );
        s.blob = kept;
    })
    .await;
}

#[when(
    regex = r#"^pod "([A-Z])" unpacks a (\w+) blob of session "([A-Za-z0-9-]+)" with the defect "([a-z0-9-]+)"$"#
)]
async fn pod_unpacks_defect(w: &mut World, c: &[String]) {
    w.run(c, None, |s, c| {
        if let Some(cap) = Cap::of_defect(&c[4]) {
            crate::session_persist::caps::require_buildable(cap);
        }
        s.blob = Some(kit_blob(s, &c[2], &c[3], Some(&c[4])));
        s.keep_before(&c[1]);
        unpack_into(s, &c[1], &c[2], &c[3], &[]);
        if let Some(cap) = Cap::of_defect(&c[4]) {
            s.over_cap = Some((cap, c[1].to_string()));
            crate::evidence::frame(format!(
                "the blob is one over a cap: {}",
                Caps::of_profile().over(cap)
            ));
            s.over_cap_blob = Some((c[2].to_string(), c[3].to_string(), c[4].to_string()));
        }
    })
    .await;
}

/// The kit's valid blob of one backend and session offered to an unpack that names
/// another: the blob itself is sound, only its header differs from the request.
#[when(
    regex = r#"^pod "([A-Z])" unpacks the kit's valid (\w+) blob of session "([A-Za-z0-9-]+)" as (\w+) session "([A-Za-z0-9-]+)"$"#
)]
async fn pod_unpacks_as_other(w: &mut World, c: &[String]) {
    w.run(c, None, |s, c| {
        s.blob = Some(kit_blob(s, &c[2], &c[3], None));
        s.keep_before(&c[1]);
        unpack_into(s, &c[1], &c[4], &c[5], &[]);
    })
    .await;
}

#[then(regex = r"^the unpack succeeds$")]
async fn unpack_succeeds(w: &mut World) {
    w.run(&[], None, |s, _| {
        assert_eq!(s.last().exit, Some(0), "exit status of the unpack");
    })
    .await;
}

#[then(regex = r"^the unpack is refused$")]
async fn unpack_refused(w: &mut World) {
    w.run(&[], None, |s, _| {
        crate::evidence::require_accepted_control();
        if s.last().exit == Some(0) {
            super::caps::unpack_accepted(s, |s, pod, big| {
                let (backend, id, defect) = s.over_cap_blob.clone().or_harness("an over-cap blob");
                s.blob = Some(kit_blob_at(s, &backend, &id, Some(&defect), big));
                s.keep_before(pod);
                unpack_into(s, pod, &backend, &id, &[]);
            });
        }
        let exit = s.last().exit;
        assert!(
            exit.is_some_and(|e| e != 0),
            "the unpack must be refused (exit non-zero), exited {exit:?}"
        );
    })
    .await;
}

#[then(regex = r#"^pod "([A-Z])" holds exactly the files of pod "([A-Z])"'s session$"#)]
async fn pod_holds_exactly(w: &mut World, c: &[String]) {
    w.run(c, None, |s, c| {
        let want = s.planted(&c[2]).files.clone();
        let got = pods::files(&pods::snapshot(&s.pod(&c[1])));
        let names =
            |m: &std::collections::BTreeMap<String, Vec<u8>>| m.keys().cloned().collect::<Vec<_>>();
        assert_eq!(
            names(&got),
            names(&want),
            "the pod's files after the unpack"
        );
        assert!(
            got == want,
            "an unpacked file's bytes differ from the packed one"
        );
    })
    .await;
}

#[then(regex = r#"^pod "([A-Z])" is unchanged$"#)]
async fn pod_unchanged(w: &mut World, c: &[String]) {
    w.run(c, None, |s, c| {
        let before = s.before();
        assert_eq!(before.pod, c[1], "the scenario watched another pod");
        let now = pods::snapshot(&s.pod(&c[1]));
        crate::evidence::files(crate::evidence::diff(&before.inside, &now).into_iter().map(
            |mut f| {
                f.path = format!("pods/{}/{}", &c[1], f.path);
                f
            },
        ));
        let changed = pods::changed_paths(&before.inside, &now);
        assert!(changed.is_empty(), "the pod changed at {changed:?}");
    })
    .await;
}

/// Whatever the unpack did with the defect (refused the blob, or skipped the member):
/// the pod holds no file that the kit's valid twin, unpacked by the control, does not.
#[then(regex = r#"^pod "([A-Z])" holds no file the control's pod does not$"#)]
async fn pod_holds_no_more_than_control(w: &mut World, c: &[String]) {
    w.run(c, None, |s, c| {
        crate::evidence::require_accepted_control();
        let control = s.control_pod.clone().or_harness("a control pod");
        let allowed = pods::snapshot(&s.pod(&control));
        let got = pods::snapshot(&s.pod(&c[1]));
        // Directories are where the files go; any other entry is judged.
        let extra: Vec<&String> = got
            .iter()
            .filter(|(p, e)| **e != pods::Entry::Dir && !allowed.contains_key(*p))
            .map(|(p, _)| p)
            .collect();
        assert!(
            extra.is_empty(),
            "the unpack left in pod {} {extra:?}, which the valid twin's unpack does not hold",
            &c[1]
        );
    })
    .await;
}

#[then(regex = r#"^no file in pod "([A-Z])" is special or has a setuid or setgid bit$"#)]
async fn pod_has_no_special_or_setid(w: &mut World, c: &[String]) {
    w.run(c, None, |s, c| {
        // An unpacker that refuses the valid twin too shows nothing here.
        crate::evidence::require_accepted_control();
        let root = s.pod(&c[1]);
        let mut found = Vec::new();
        special_or_setid(&root, "", &mut found);
        assert!(
            found.is_empty(),
            "the unpack left in pod {} {}",
            &c[1],
            found.join(", ")
        );
    })
    .await;
}

/// Every entry below `dir` (not following links) that is neither a directory, a
/// regular file nor a symbolic link, or has a setuid or setgid bit, with what it is.
fn special_or_setid(dir: &std::path::Path, rel: &str, out: &mut Vec<String>) {
    use std::os::unix::fs::{FileTypeExt, PermissionsExt};
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let name = format!("{rel}{}", e.file_name().to_string_lossy());
        let Ok(m) = std::fs::symlink_metadata(e.path()) else {
            continue;
        };
        let t = m.file_type();
        if t.is_fifo() || t.is_socket() || t.is_block_device() || t.is_char_device() {
            out.push(format!("{name} (a special file)"));
        } else if !t.is_symlink() && m.permissions().mode() & 0o6000 != 0 {
            out.push(format!(
                "{name} (mode {:o})",
                m.permissions().mode() & 0o7777
            ));
        }
        if t.is_dir() {
            special_or_setid(&e.path(), &format!("{name}/"), out);
        }
    }
}

#[then(regex = r#"^nothing outside pod "([A-Z])" changed$"#)]
async fn nothing_outside_changed(w: &mut World, c: &[String]) {
    w.run(c, None, |s, c| {
        let now = s.outside(&c[1]);
        let before = &s.before().outside;
        crate::evidence::files(crate::evidence::diff(before, &now));
        let changed = pods::changed_paths(before, &now);
        assert!(
            changed.is_empty(),
            "the unpack changed the sandbox outside its root at {changed:?}"
        );
    })
    .await;
}

#[then(regex = r#"^pod "([A-Z])" (has|has no) (\w+) session "([A-Za-z0-9-]+)"$"#)]
async fn pod_has_session(w: &mut World, c: &[String]) {
    w.run(c, None, |s, c| {
        let want = &c[2] == "has";
        if !want {
            // A "no": proven only by a HasSession true in this scenario (before the
            // defect, or the twin's).
            if let Some(control) = s.before_defect.remove(&c[1]) {
                crate::evidence::control("persist.has_session", control);
            }
            crate::evidence::require_accepted_control();
        }
        if !layout::is_capable(&c[3]) {
            if want {
                layout::not_in_layouts(&format!("backend {:?} with the capability", &c[3]));
            }
            // Nothing to ask a packer about a backend it does not have: the row's other
            // steps judge what the unpack wrote.
            crate::evidence::note(format!(
                "HasSession not asked for {}: the implementation's layouts have no such backend",
                &c[3]
            ));
            return;
        }
        let has = s.has_session(&c[1], &c[3], &c[4]);
        crate::evidence::ensure(has == want, Some("sp-hassession-root"), || {
            (
                format!("HasSession {want} for pod {}", &c[1]),
                format!("HasSession {has}"),
            )
        });
        if has && crate::evidence::scenario_control().is_none() {
            crate::evidence::control(
                "persist.has_session",
                crate::evidence::Control {
                    what: format!("HasSession of pod {} for session {:?}", &c[1], &c[4]),
                    accepted: true,
                    observed: "HasSession true".into(),
                    commands: crate::evidence::commands_of_step(),
                },
            );
        }
    })
    .await;
}

#[given(regex = r#"^pod "([A-Z])" is wiped$"#)]
async fn pod_wiped(w: &mut World, c: &[String]) {
    w.run(c, None, |s, c| {
        s.keep_has_session_before_defect(&c[1]);
        std::fs::remove_dir_all(s.pod(&c[1])).or_harness("wiping the pod");
        s.pod(&c[1]);
    })
    .await;
}

#[when(
    regex = r#"^pod "([A-Z])" unpacks the blob as (\w+) session "([A-Za-z0-9-]+)" crashing at each rename in turn$"#
)]
async fn crash_sweep(w: &mut World, c: &[String]) {
    w.run(c, None, |s, c| {
        let want = s.planted(&source_pod(s, &c[3])).files.clone();
        for k in 1..=MAX_SWEEP {
            let pod = format!("{}-crash-{k}", &c[1]);
            let root = s.pod(&pod);
            let root_text = root.to_string_lossy().into_owned();
            if root_text.contains(['*', '?', '[', '\\', ';', '#', '=']) {
                crate::harness_error!("the pod's path would not read as a plain glob");
            }
            let plan = format!("rename@{root_text}/*#{k}=crash");
            let unpack = s.t.unpack.clone();
            s.inject(&unpack, &plan, None);
            unpack_into(s, &pod, &c[2], &c[3], &[]);
            s.injection = None;
            let exit = s.last().exit;
            let has_session = s.has_session(&pod, &c[2], &c[3]);
            let got = pods::files(&pods::snapshot(&root));
            let whole = got == want;
            let none = !got.keys().any(|k| want.contains_key(k));
            s.sweep.push(SweepPoint {
                k,
                exit,
                has_session,
                whole,
                none,
                old_whole: false,
            });
            if exit.is_some() {
                return;
            }
        }
        panic!("the unpack still crashed at rename {MAX_SWEEP}: it renames without bound");
    })
    .await;
}

/// The pod whose planted session has `id`.
fn source_pod(s: &Persist, id: &str) -> String {
    s.planted
        .iter()
        .find(|(_, p)| p.id == id)
        .map(|(pod, _)| pod.clone())
        .or_harness("no pod was planted with that session")
}

#[then(regex = r"^the unpack was crashed at (\d+) renames? at least$")]
async fn sweep_crashed_at_least(w: &mut World, c: &[String]) {
    w.run(c, None, |s, c| {
        let least: usize = c[1].parse().or_harness("a count");
        let crashed = s.sweep.iter().filter(|p| p.exit.is_none()).count();
        assert!(
            crashed >= least,
            "the unpack renamed {crashed} times; a temp extract publishes by rename"
        );
    })
    .await;
}

#[then(regex = r"^every crash left the pod without the session or with all of it$")]
async fn every_crash_all_or_nothing(w: &mut World) {
    w.run(&[], None, |s, _| {
        for p in s.sweep.iter().filter(|p| p.exit.is_none()) {
            let k = p.k;
            if p.has_session {
                assert!(
                    p.whole,
                    "crashed at rename {k}: HasSession, but files missing"
                );
            } else {
                assert!(
                    p.none || !p.whole,
                    "crashed at rename {k}: every file there, yet no HasSession"
                );
            }
        }
    })
    .await;
}

#[then(regex = r"^the unpack that was not crashed left the whole session$")]
async fn last_unpack_whole(w: &mut World) {
    w.run(&[], None, |s, _| {
        let last = s.sweep.last().or_harness("no sweep ran");
        assert_eq!(last.exit, Some(0), "the uncrashed unpack's exit status");
        assert!(
            last.has_session && last.whole,
            "the uncrashed unpack's session"
        );
    })
    .await;
}
