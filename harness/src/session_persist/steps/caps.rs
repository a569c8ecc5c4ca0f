//! The caps rows' inputs: a planted session one over (or at) a cap of the profile's
//! `[persist.pins]`, the kit's where it declares none, and the probe an acceptance
//! of an undeclared cap runs (`caps::judge_accepted`).

use crate::session_persist::bench::{Persist, Planted};
use crate::session_persist::caps::{self, Cap, Caps};
use crate::session_persist::World;
use crate::session_persist::{layout, pods};
use crate::verdict::OrHarness;
use cucumber::given;

#[given(
    regex = r#"^pod "([A-Z])"'s session is (one over|at) the (file count|file size|total size) cap$"#
)]
async fn session_at_cap(w: &mut World, c: &[String]) {
    w.run(c, None, |s, c| {
        let cap = Cap::of_words(&c[3]);
        let caps = Caps::of_profile();
        let p = s.planted(&c[1]).clone();
        let (files, bytes) = (p.files.len() as u64, body_bytes(&p));
        caps::require_buildable(cap);
        let (sizes, what) = if &c[2] == "at" {
            if cap != Cap::Files {
                crate::harness_error!("the kit builds an at-cap session for the file count only");
            }
            let n = caps.get(Cap::Files);
            (
                caps::at_count(&caps, files),
                format!("{n} files, the count cap"),
            )
        } else {
            s.over_cap = Some((cap, c[1].to_string()));
            (caps::extra_sizes(cap, &caps, files, bytes), caps.over(cap))
        };
        let over = (&c[2] == "one over").then_some(cap);
        let grown = over == Some(Cap::FileBytes) && !layout::has_subtree(&p.backend);
        let words = if grown {
            format!("its transcript grown: {what}")
        } else {
            format!("{} more files: {what}", sizes.len())
        };
        s.vary(&c[1], words);
        add_files(s, &c[1], over, &sizes);
    })
    .await;
}

fn body_bytes(p: &Planted) -> u64 {
    p.files.values().map(|b| b.len() as u64).sum()
}

/// Plants files of `sizes` bytes in `pod`'s session, beside its transcript. Over the
/// file size cap, a backend whose sessions are one file (no `**` in its layout, the
/// implementer's choice) gets its transcript grown to the size instead.
fn add_files(s: &mut Persist, pod: &str, over: Option<Cap>, sizes: &[u64]) {
    let root = s.pod(pod);
    let p = s.planted(pod).clone();
    if over == Some(Cap::FileBytes) && !layout::has_subtree(&p.backend) {
        let [size] = sizes else {
            crate::harness_error!("one file over the file size cap");
        };
        let key = layout::session(&p.backend, &p.id).key;
        let bytes = vec![b'a'; *size as usize];
        pods::plant(&root, &key, &bytes);
        s.planted
            .get_mut(pod)
            .or_harness("a planted session")
            .files
            .insert(key, bytes);
        return;
    }
    let start = p.files.len();
    let mut added = Vec::new();
    for (i, size) in sizes.iter().enumerate() {
        let rel = pods::extra_file(&p.backend, &p.id, start + i);
        let bytes = vec![b'a' + (i % 26) as u8; *size as usize];
        pods::plant(&root, &rel, &bytes);
        added.push((rel, bytes));
    }
    s.planted
        .get_mut(pod)
        .or_harness("a planted session")
        .files
        .extend(added);
}

/// Called by "the pack is refused" when the pack exited 0: on an over-cap row,
/// judged against the caps pin; the probe is the same session planted fresh in
/// `<pod>-probe` one over twice the kit's cap, packed, and becomes the blob the
/// step goes on to judge.
pub(super) fn pack_accepted(s: &mut Persist, pack: fn(&mut Persist, &str)) {
    let Some((cap, pod)) = s.over_cap.clone() else {
        return;
    };
    let len = std::fs::metadata(s.blob()).map_or(0, |m| m.len());
    let observed = format!("pack exit 0, a blob of {len} bytes");
    caps::judge_accepted(cap, observed, |big| {
        let p = s.planted(&pod).clone();
        let probe = format!("{pod}-probe");
        let root = s.pod(&probe);
        let base = s
            .variations
            .get(&pod)
            .map_or_else(|| p.files.clone(), |v| v.base.clone());
        for (rel, bytes) in &base {
            pods::plant(&root, rel, bytes);
        }
        s.planted.insert(
            probe.clone(),
            Planted {
                files: base.clone(),
                ..p
            },
        );
        let bytes = base.values().map(|b| b.len() as u64).sum();
        let sizes = caps::extra_sizes(cap, big, base.len() as u64, bytes);
        add_files(s, &probe, Some(cap), &sizes);
        pack(s, &probe);
        let exit = s.last().exit;
        let len = std::fs::metadata(s.blob()).map_or(0, |m| m.len());
        (
            exit.is_some_and(|e| e != 0),
            format!("pack {}, a blob of {len} bytes", caps::exit_words(exit)),
        )
    });
}

/// Called by "the unpack is refused" when the unpack exited 0: on an over-cap row,
/// judged against the caps pin; the probe puts the pod back as it was, unpacks the
/// kit's blob one over twice the kit's cap into it, and the row's later steps judge
/// that unpack.
pub(super) fn unpack_accepted(s: &mut Persist, unpack: impl FnOnce(&mut Persist, &str, &Caps)) {
    let Some((cap, pod)) = s.over_cap.clone() else {
        return;
    };
    caps::judge_accepted(cap, "unpack exit 0".into(), |big| {
        let before = s.before().inside.clone();
        pods::restore(&s.pod(&pod), &before);
        unpack(s, &pod, big);
        let exit = s.last().exit;
        (
            exit.is_some_and(|e| e != 0),
            format!("unpack {}", caps::exit_words(exit)),
        )
    });
}
