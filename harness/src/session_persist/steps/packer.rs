//! Packing: sessions planted in a pod, the implementation's packer run on it, and
//! the blob it wrote read back by the kit (with the `tar` crate, not the
//! implementation's reader).

use crate::contract::Contract;
use crate::drivers::checker;
use crate::session_persist::bench::{Persist, Planted};
use crate::session_persist::pods::{self, AUTH_FILES};
use crate::session_persist::{layout, World};
use crate::verdict::OrHarness;
use cucumber::{given, then, when};
use std::collections::BTreeMap;

#[given(regex = r#"^pod "([A-Z])" holds a (claude_code|codex|pi) session "([A-Za-z0-9-]+)"$"#)]
async fn pod_holds_session(w: &mut World, c: &[String]) {
    w.run(c, None, |s, c| {
        let root = s.pod(&c[1]);
        let planted = pods::session_files(&c[2], &c[3]);
        let key = planted[0].0.clone();
        let files: BTreeMap<String, Vec<u8>> = planted.into_iter().collect();
        for (rel, bytes) in &files {
            pods::plant(&root, rel, bytes);
        }
        s.planted.insert(
            c[1].to_string(),
            Planted {
                backend: c[2].to_string(),
                id: c[3].to_string(),
                key,
                files,
            },
        );
    })
    .await;
}

#[given(regex = r#"^pod "([A-Z])" also holds the credential files$"#)]
async fn pod_holds_credentials(w: &mut World, c: &[String]) {
    w.run(c, None, |s, c| {
        let root = s.pod(&c[1]);
        let p = s.planted(&c[1]).clone();
        // At the root, and beside and inside the session's own files, where a
        // pattern like `<id>/**` would sweep them in.
        let key_dir = p.key.rsplit_once('/').map_or("", |(d, _)| d).to_string();
        let mut dirs = vec![String::new(), format!("{key_dir}/")];
        if p.backend == "claude_code" {
            dirs.push(format!("{key_dir}/{}/", p.id));
        }
        for dir in dirs {
            for name in AUTH_FILES {
                pods::plant(&root, &format!("{dir}{name}"), b"{\"token\":\"secret\"}\n");
            }
        }
    })
    .await;
}

#[given(regex = r#"^pod "([A-Z])" holds the unlisted file "([A-Za-z0-9_./-]+)"$"#)]
async fn pod_holds_unlisted(w: &mut World, c: &[String]) {
    w.run(c, None, |s, c| {
        if c[2].contains("..") {
            crate::harness_error!("a planted path stays inside its pod");
        }
        pods::plant(&s.pod(&c[1]), &c[2], b"not a session file\n");
    })
    .await;
}

#[given(
    regex = r#"^pod "([A-Z])"'s session file "(key|subagent)" is (a symlink to a file outside the pod|a hard link|a FIFO|a socket|a device)$"#
)]
async fn session_file_replaced(w: &mut World, c: &[String]) {
    w.run(c, None, |s, c| {
        let root = s.pod(&c[1]);
        let p = s.planted(&c[1]).clone();
        let rel = match &c[2] {
            "key" => Some(&p.key),
            _ => p.files.keys().find(|k| k.contains("/subagents/")),
        }
        .unwrap_or_else(|| {
            layout::not_in_layouts(&format!(
                "session file below the session's own directory (the row's {} file)",
                &c[2]
            ))
        })
        .clone();
        s.keep_has_session_before_defect(&c[1]);
        s.vary(&c[1], format!("its {} file {rel} is {}", &c[2], &c[3]));
        let path = root.join(&rel);
        let bytes = p.files[&rel].clone();
        std::fs::remove_file(&path).or_harness("removing a planted file");
        let outside = s.sandbox().join("outside-the-pod.jsonl");
        match &c[3] {
            "a symlink to a file outside the pod" => {
                std::fs::write(&outside, &bytes).or_harness("writing the outside file");
                std::os::unix::fs::symlink(&outside, &path).or_harness("symlink");
            }
            "a hard link" => {
                std::fs::write(&outside, &bytes).or_harness("writing the outside file");
                std::fs::hard_link(&outside, &path).or_harness("link");
            }
            "a FIFO" => {
                nix::unistd::mkfifo(&path, nix::sys::stat::Mode::S_IRUSR).or_harness("mkfifo")
            }
            "a socket" => {
                // Bound at a short path and renamed into place: a session file's path
                // may be longer than sun_path's 108 bytes.
                let short = tempfile::Builder::new()
                    .prefix("vxs")
                    .tempdir_in("/tmp")
                    .or_harness("a directory to bind the socket in");
                let bound = short.path().join("s");
                std::os::unix::net::UnixListener::bind(&bound).or_harness("bind a socket");
                std::fs::rename(&bound, &path).or_harness("moving the socket into the session");
            }
            _ => nix::sys::stat::mknod(
                &path,
                nix::sys::stat::SFlag::S_IFCHR,
                nix::sys::stat::Mode::S_IRUSR,
                nix::sys::stat::makedev(1, 3),
            )
            .or_harness("mknod (the row needs root)"),
        }
    })
    .await;
}

/// A directory of the layout (the root, the project directory, or a directory below
/// the session's own one) moved out of the pod, a symbolic link to it left in its
/// place: the session's files are all still reachable through the link.
#[given(
    regex = r#"^pod "([A-Z])"'s (root|project dir|subtree dir) is a symlink to a directory outside the pod holding the session's files$"#
)]
async fn session_dir_linked_out(w: &mut World, c: &[String]) {
    w.run(c, None, |s, c| {
        let root = s.pod(&c[1]);
        let p = s.planted(&c[1]).clone();
        let parent = |f: &str| {
            f.rsplit_once('/')
                .map_or(String::new(), |(d, _)| d.to_string())
        };
        let rel = match &c[2] {
            "root" => String::new(),
            "project dir" => parent(&p.key),
            _ => p
                .files
                .keys()
                .find(|k| k.contains("/subagents/"))
                .map(|f| parent(f))
                .unwrap_or_else(|| {
                    layout::not_in_layouts(
                        "directory below the session's own one (the row's subtree dir)",
                    )
                }),
        };
        s.keep_has_session_before_defect(&c[1]);
        s.vary(
            &c[1],
            format!(
                "its {} {rel:?} is a symlink to a directory outside it",
                &c[2]
            ),
        );
        let inside = if rel.is_empty() {
            root.clone()
        } else {
            root.join(&rel)
        };
        let outside = s
            .sandbox()
            .join(format!("outside-{}-{}", &c[1], c[2].replace(' ', "-")));
        std::fs::rename(&inside, &outside).or_harness("moving a directory out of the pod");
        std::os::unix::fs::symlink(&outside, &inside).or_harness("symlink");
    })
    .await;
}

#[when(regex = r#"^pod "([A-Z])" packs its session$"#)]
async fn pod_packs(w: &mut World, c: &[String]) {
    w.run(c, None, |s, c| {
        if s.variations.contains_key(&c[1]) {
            pack_twin(s, &c[1]);
        }
        pack(s, &c[1])
    })
    .await;
}

/// The control of a pack that the scenario's changes may make refused: the same
/// session, planted without those changes in a twin pod, packed first.
fn pack_twin(s: &mut crate::session_persist::bench::Persist, pod: &str) {
    let v = s.variations[pod].clone();
    let p = s.planted(pod).clone();
    let twin = format!("{pod}-twin");
    let root = s.pod(&twin);
    for (rel, bytes) in &v.base {
        pods::plant(&root, rel, bytes);
    }
    s.planted.insert(
        twin.clone(),
        Planted {
            files: v.base.clone(),
            ..p.clone()
        },
    );
    pack(s, &twin);
    let exit = s.last().exit;
    let len = std::fs::metadata(s.blob()).map_or(0, |m| m.len());
    crate::evidence::control(
        "persist.pack",
        crate::evidence::Control {
            what: format!(
                "packed pod {pod}'s {} session {:?} planted in a twin pod without: {}",
                p.backend,
                p.id,
                v.what.join("; ")
            ),
            accepted: exit == Some(0) && len > 0,
            observed: format!("pack exit {exit:?}, a blob of {len} bytes"),
            commands: crate::evidence::commands_of_step(),
        },
    );
    s.blob = None;
}

pub(super) fn pack(s: &mut crate::session_persist::bench::Persist, pod: &str) {
    let p = s.planted(pod).clone();
    let root = s.pod(pod).to_string_lossy().into_owned();
    let file = s.new_blob_path();
    let t = s.t.pack.clone();
    s.run(
        &t,
        &[
            ("backend", &p.backend),
            ("root", &root),
            ("id", &p.id),
            ("file", &file.to_string_lossy()),
        ],
        &[],
    );
    s.blob = Some(file);
}

#[then(regex = r"^the pack succeeds$")]
async fn pack_succeeds(w: &mut World) {
    w.run(&[], None, |s, _| {
        assert_eq!(s.last().exit, Some(0), "exit status of the pack");
        let len = std::fs::metadata(s.blob()).map_or(0, |m| m.len());
        assert!(len > 0, "the pack wrote no blob");
    })
    .await;
}

#[then(regex = r"^the pack is refused and no blob is left$")]
async fn pack_refused(w: &mut World) {
    w.run(&[], None, |s, _| {
        crate::evidence::require_accepted_control();
        if s.last().exit == Some(0) {
            super::caps::pack_accepted(s, pack);
        }
        let exit = s.last().exit;
        assert!(
            exit.is_some_and(|e| e != 0),
            "the pack must be refused (exit non-zero), exited {exit:?}"
        );
        let len = std::fs::metadata(s.blob()).map_or(0, |m| m.len());
        assert_eq!(
            len, 0,
            "a refused pack left a blob of {len} bytes (truncated?)"
        );
    })
    .await;
}

/// The seed's terms are strict: a header {backend, session_id} naming the session,
/// and exactly the session's files, byte for byte (no credential, nothing unlisted).
/// Where the header stands, its other keys, directory entries and a leading "./"
/// are the kit's ustar reading (sp-pin-blob-format, sp-pin-header-member).
#[then(regex = r#"^the blob holds exactly the files of pod "([A-Z])"'s session$"#)]
async fn blob_holds_exactly(w: &mut World, c: &[String]) {
    w.run(c, None, |s, c| {
        let p = s.planted(&c[1]).clone();
        let blob = std::fs::read(s.blob()).or_harness("reading the blob");
        let members = pods::members(&blob);
        crate::evidence::frame(format!(
            "the blob's members: {:?}",
            members.iter().map(|m| m.path.as_str()).collect::<Vec<_>>()
        ));
        let header_at = judge_header_place(s, &members);
        let header = &members[header_at];
        let h: serde_json::Value = serde_json::from_slice(&header.bytes).unwrap_or_default();
        let said = |key: &str| h.get(key).and_then(|v| v.as_str()).map(str::to_string);
        crate::evidence::ensure(
            said("backend").as_deref() == Some(p.backend.as_str())
                && said("session_id").as_deref() == Some(p.id.as_str()),
            Some("sp-header"),
            || {
                (
                    format!(
                        "a header {{backend, session_id}} of {:?} {:?}",
                        p.backend, p.id
                    ),
                    format!("header {:?}: {h}", header.path),
                )
            },
        );
        if h.as_object().is_some_and(|o| o.len() != 2) {
            crate::evidence::pin(
                "sp-pin-blob-format",
                "a header of exactly backend and session_id",
                format!("header {h}"),
            );
        }
        let mut got: BTreeMap<String, Vec<u8>> = BTreeMap::new();
        for (i, m) in members.iter().enumerate() {
            if i == header_at || m.is_dir {
                continue;
            }
            let path = m.path.strip_prefix("./").unwrap_or(&m.path);
            if path != m.path {
                crate::evidence::pin(
                    "sp-pin-blob-format",
                    "member paths without a leading ./",
                    format!("member {:?}", m.path),
                );
            }
            let twice = got.insert(path.to_string(), m.bytes.clone()).is_some();
            crate::evidence::ensure(!twice, Some("sp-whitelist"), || {
                (
                    "each session file once".into(),
                    format!("member {path:?} twice"),
                )
            });
        }
        if members.iter().any(|m| m.is_dir) {
            crate::evidence::pin(
                "sp-pin-blob-format",
                "regular-file members only",
                "directory entries too",
            );
        }
        let names = |m: &BTreeMap<String, Vec<u8>>| m.keys().cloned().collect::<Vec<_>>();
        crate::evidence::ensure(names(&got) == names(&p.files), Some("sp-whitelist"), || {
            (
                format!("exactly the session's files {:?}", names(&p.files)),
                format!("members {:?}", names(&got)),
            )
        });
        let differ: Vec<&String> = got
            .keys()
            .filter(|k| got.get(*k) != p.files.get(*k))
            .collect();
        crate::evidence::ensure(differ.is_empty(), Some("sp-no-truncate"), || {
            (
                "each member's bytes as the session file's".into(),
                format!("members {differ:?} differ"),
            )
        });
    })
    .await;
}

/// The header member's index: the profile's header member name, first as the kit
/// writes it; elsewhere is the kit's reading (a pin), and a blob without it breaks
/// "header {backend, session_id}".
fn judge_header_place(s: &Persist, members: &[pods::Member]) -> usize {
    let name = &s.t.header_member;
    let first = members.first().map(|m| m.path.as_str());
    if first == Some(name.as_str()) {
        return 0;
    }
    let named = crate::profile::context()
        .profile
        .persist
        .as_ref()
        .is_some_and(|t| t.contains_key("header_member"));
    match members.iter().position(|m| &m.path == name) {
        Some(at) => {
            crate::evidence::pin(
                "sp-pin-blob-format",
                format!("the header {name:?} as the first member"),
                format!("it is member {}", at + 1),
            );
            at
        }
        None if named => crate::evidence::fail(
            Some("sp-header"),
            format!("a header member named {name:?}"),
            format!(
                "members {:?}",
                members.iter().map(|m| &m.path).collect::<Vec<_>>()
            ),
        ),
        None => {
            // Undeclared, another name is non-strict: judge the first member as the
            // header under its own name.
            crate::evidence::pin(
                "sp-pin-header-member",
                format!("the first member, the header, named {name:?}"),
                format!("a first member named {first:?}"),
            );
            0
        }
    }
}

#[then(regex = r"^the blob holds no credential file$")]
async fn blob_holds_no_credentials(w: &mut World) {
    w.run(&[], None, |s, _| {
        let blob = std::fs::read(s.blob()).or_harness("reading the blob");
        for m in pods::members(&blob) {
            let leaked = m.path.split('/').any(|part| AUTH_FILES.contains(&part));
            assert!(!leaked, "the blob carries a credential file");
        }
    })
    .await;
}

#[then(regex = r#"^packing pod "([A-Z])" again gives the same bytes$"#)]
async fn packing_again_same_bytes(w: &mut World, c: &[String]) {
    w.run(c, None, |s, c| {
        let first = std::fs::read(s.blob()).or_harness("reading the blob");
        pack(s, &c[1]);
        assert_eq!(s.last().exit, Some(0), "exit status of the second pack");
        let second = std::fs::read(s.blob()).or_harness("reading the second blob");
        assert!(first == second, "two packs of one session differ");
    })
    .await;
}

#[then(regex = r"^the blob checker accepts the blob$")]
async fn checker_accepts_blob(w: &mut World) {
    w.run(&[], None, |s, _| {
        if !crate::session_persist::bench::Templates::claims("checker") {
            crate::evidence::frame(
                "note: skipped \"the blob checker accepts the blob\": the profile does not \
                 claim the checker part of session-persist",
            );
            return;
        }
        let file = s.blob().to_string_lossy().into_owned();
        let words: Vec<String> =
            s.t.blob_check
                .iter()
                .map(|w| w.replace("{file}", &file))
                .collect();
        let judging = checker::Judging::of(Contract::SessionPersist);
        let said = checker::run_judged(&s.ph, &words, s.sandbox(), &judging);
        crate::evidence::ensure(checker::accepted(&said, &judging), None, || {
            (
                "the blob checker to accept the blob the packer wrote (exit 0)".into(),
                checker::said_words(&said),
            )
        });
    })
    .await;
}
