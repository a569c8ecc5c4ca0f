//! The session-persist suite proves it can fail: with one of the reference's commands
//! swapped for a deliberately non-conforming one, it must FAIL exactly the scenarios
//! that catch that defect and pass the others.

mod common;

use common::bin_dir;
use std::collections::BTreeSet;

/// The reference's `[persist]` table, `swap` replacing `key = ...` lines.
fn table(swap: &[(&str, String)]) -> String {
    let p = bin_dir().join("vxpersist");
    assert!(p.is_file(), "cargo build -p vx-persist first");
    let p = p.display();
    let session = |verb: &str, file: bool| {
        format!(
            "[\"{p}\", \"{verb}\", \"--backend\", \"{{backend}}\", \"--root\", \"{{root}}\", \
             \"--session-id\", \"{{id}}\"{}]",
            if file { ", \"{file}\"" } else { "" }
        )
    };
    let mut rows = [
        (
            "blob_check",
            format!("[\"{p}\", \"blob\", \"check\", \"--json\", \"{{file}}\"]"),
        ),
        ("pack", session("pack", true)),
        ("unpack", session("unpack", true)),
        ("has_session", session("has-session", false)),
        (
            "store_adapter",
            format!("[\"{p}\", \"store\", \"serve\", \"--store\", \"{{store}}\"]"),
        ),
        ("store", "\"fs:{state_home}/persist\"".to_string()),
        (
            "drive",
            format!("[\"{p}\", \"drive\", \"--state\", \"{{state_home}}\"]"),
        ),
        ("s3_twins", "[\"seaweedfs\", \"moto\"]".to_string()),
    ];
    // A key the reference's table has not (`pins`) is added to it.
    let mut added = Vec::new();
    for (k, v) in swap {
        match rows.iter_mut().find(|(key, _)| key == k) {
            Some(row) => row.1 = v.clone(),
            None => added.push(format!("{k} = {v}")),
        }
    }
    let mut lines: Vec<String> = rows.iter().map(|(k, v)| format!("{k} = {v}")).collect();
    lines.extend(added);
    format!(
        "name = \"negative-control\"\ncontracts = [\"session-persist\"]\n\
         fault_preload = \"{{bin_dir}}/libvxfault.so\"\n[persist]\n{}\n",
        lines.join("\n")
    )
}

/// One run: its exit code and the scenarios by verdict, each named `name` or, for
/// an outline row, `name [example]`.
struct Outcome {
    code: i32,
    failing: BTreeSet<String>,
    non_strict: BTreeSet<String>,
    all: BTreeSet<String>,
}

fn outcome(swap: &[(&str, String)]) -> Outcome {
    outcome_with(swap, &[])
}

/// [`outcome`] with more `vxcert run` arguments (`--tags`).
fn outcome_with(swap: &[(&str, String)], args: &[&str]) -> Outcome {
    common::ensure_reference(&[]);
    let (code, report) = common::run_profile(&table(swap), args);
    let scenarios = report["scenarios"].as_array().expect("scenarios");
    let named = |verdict: Option<&str>| -> BTreeSet<String> {
        scenarios
            .iter()
            .filter(|s| verdict.is_none_or(|v| s["verdict"] == v))
            .map(|s| {
                let name = s["name"].as_str().expect("name");
                match s["example"].as_str() {
                    Some(e) => format!("{name} [{e}]"),
                    None => name.to_string(),
                }
            })
            .collect()
    };
    let other: Vec<String> = scenarios
        .iter()
        .filter(|s| {
            !["pass", "fail", "non-strict", "unsupported-optional"]
                .contains(&s["verdict"].as_str().unwrap_or(""))
        })
        .map(|s| format!("{} {}: {}", s["name"], s["verdict"], s["message"]))
        .collect();
    assert!(
        other.is_empty(),
        "no scenario may be a harness error here: {other:?}"
    );
    Outcome {
        code,
        failing: named(Some("fail")),
        non_strict: named(Some("non-strict")),
        all: named(None),
    }
}

/// A control that swaps one part's commands runs that part's rows only: the rows of
/// the other parts never start the swapped command, so they pass as the reference's
/// full run (`the_reference_passes_every_scenario`) shows, and running them again
/// would only cost CI time. The packer's templates (`pack`, `unpack`, `has_session`)
/// are run by the packer rows only.
const PACKER_ROWS: &str = "@part-packer";

/// The exit code, the names of the scenarios that failed, and of all of them (no
/// scenario non-strict), over the rows `tags` selects (all rows when empty).
fn run(swap: &[(&str, String)], tags: &str) -> (i32, BTreeSet<String>, BTreeSet<String>) {
    let o = if tags.is_empty() {
        outcome(swap)
    } else {
        outcome_with(swap, &["--tags", tags])
    };
    assert!(o.non_strict.is_empty(), "{:?}", o.non_strict);
    let strip = |set: BTreeSet<String>| -> BTreeSet<String> {
        set.into_iter()
            .map(|n| n.split(" [").next().unwrap_or(&n).to_string())
            .collect()
    };
    (o.code, strip(o.failing), strip(o.all))
}

#[test]
fn the_reference_passes_every_scenario() {
    let (code, failing, all) = run(&[], "");
    assert_eq!(code, 0, "{failing:?}");
    assert!(all.len() >= 40, "{all:?}");
}

/// An unpacker with its whitelist widened to every file under `projects/` and no
/// auth denylist: the rows that unpack a credential or an unlisted file there fail,
/// and only those.
#[test]
fn an_unpacker_without_the_whitelist_fails_the_never_unpacked_rows_only() {
    let dir = tempfile::tempdir().unwrap();
    let lax = dir.path().join("lax-layouts.toml");
    let builtin = std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../persist/layouts.toml"),
    )
    .unwrap();
    let widened = builtin
        .replace(
            "never = [\".credentials.json\", \"auth.json\", \".claude.json\"]",
            "never = []",
        )
        .replace(
            "files = [\"projects/{dir}/{id}.jsonl\", \"projects/{dir}/{id}/**\"]",
            "files = [\"projects/{dir}/{id}.jsonl\", \"projects/**\"]",
        );
    assert_ne!(
        builtin.matches("never = []").count(),
        widened.matches("never = []").count()
    );
    assert!(widened.contains("\"projects/**\""));
    std::fs::write(&lax, widened).unwrap();
    let p = bin_dir().join("vxpersist");
    let unpack = format!(
        "[\"{}\", \"--layouts\", {:?}, \"unpack\", \"--backend\", \"{{backend}}\", \"--root\", \
         \"{{root}}\", \"--session-id\", \"{{id}}\", \"{{file}}\"]",
        p.display(),
        lax.display().to_string()
    );
    let (code, failing, all) = run(&[("unpack", unpack)], PACKER_ROWS);
    assert_eq!(code, 1);
    // The MUST row and its SHOULD twin (refused whole).
    let caught = [
        "A blob carrying a credential or an unlisted file is never unpacked",
        "A blob carrying a credential or an unlisted file is refused whole",
    ];
    let expected: BTreeSet<String> = all
        .iter()
        // The widened list covers `projects/**`: a credential file inside a session's
        // directory and an unlisted transcript get through; those at the root do not.
        .filter(|n| {
            caught.iter().any(|c| n.starts_with(c))
                && (n.ends_with("(auth.json)") || n.ends_with("(unlisted file)"))
        })
        .cloned()
        .collect();
    assert_eq!(expected.len(), 4, "{all:?}");
    assert_eq!(failing, expected);
}

/// A store adapter whose put overwrites: the create-only rows fail, and only those.
#[test]
fn a_store_that_overwrites_fails_the_create_only_rows_only() {
    let dir = tempfile::tempdir().unwrap();
    let adapter = common::script(
        dir.path(),
        "overwriting-store",
        r#"exec python3 -c '
import json, os, shutil, sys
root = sys.argv[1].split(":", 1)[1]
def path(run, ref): return os.path.join(root, run, ref.replace("/", "@"))
for line in sys.stdin:
    r = json.loads(line); op = r["op"]; code = None
    parts = r.get("ref", "n/x").split("/")
    if op in ("put", "get", "delete") and (not (len(parts) == 2 or (len(parts) == 3 and parts[1] == "pause")) or parts[-1] != parts[-1].upper() or len(parts[-1]) != 26):
        code = "invalid_params.ref"
    elif op == "put":
        if os.path.getsize(r["file"]) > 32 * 1024 * 1024 + 64 * 1024: code = "unsupported.blob_size"
        else:
            os.makedirs(os.path.join(root, r["run"]), exist_ok=True); shutil.copy(r["file"], path(r["run"], r["ref"]))
    elif op == "get":
        if os.path.exists(path(r["run"], r["ref"])): shutil.copy(path(r["run"], r["ref"]), r["file"])
        else: code = "not_found.blob"
    elif op == "delete":
        if os.path.exists(path(r["run"], r["ref"])): os.remove(path(r["run"], r["ref"]))
    elif op == "delete_run": shutil.rmtree(os.path.join(root, r["run"]), ignore_errors=True)
    print(json.dumps({"ok": True} if code is None else {"ok": False, "code": code}), flush=True)
' "$@""#,
    );
    let (code, failing, all) = run(
        &[("store_adapter", format!("[{adapter:?}, \"{{store}}\"]"))],
        "@part-store",
    );
    assert_eq!(code, 1);
    let expected: BTreeSet<String> = all
        .iter()
        .filter(|n| n.starts_with("A second put under one ref is refused") && n.ends_with("(fs)"))
        .cloned()
        .collect();
    assert_eq!(expected.len(), 1, "{all:?}");
    // The twins' rows are not run with this adapter's fs-only store.
    let failing_fs: BTreeSet<String> = failing
        .into_iter()
        .filter(|n| n.ends_with("(fs)"))
        .collect();
    assert_eq!(failing_fs, expected);
}

/// The reference's drive started with one of its deliberate defects
/// (`reference/persist/src/negative.rs`): the scenario names that failed, and all.
fn run_defect(defect: &str) -> (i32, BTreeSet<String>, BTreeSet<String>) {
    let dir = tempfile::tempdir().unwrap();
    let p = bin_dir().join("vxpersist");
    let drive = common::script(
        dir.path(),
        "defective-drive",
        &format!(
            "VXPERSIST_NEGATIVE_CONTROL={defect} exec {:?} \"$@\"",
            p.display().to_string()
        ),
    );
    run(
        &[(
            "drive",
            format!("[{drive:?}, \"drive\", \"--state\", \"{{state_home}}\"]"),
        )],
        "@part-runtime",
    )
}

/// Deleting the previous pause blob on a PauseRun error fails the two PauseRun-error
/// rows and only those.
#[test]
fn a_runtime_that_deletes_on_a_pause_run_error_fails_the_pause_run_rows_only() {
    let (code, failing, all) = run_defect("delete-on-pause-run-error");
    assert_eq!(code, 1);
    let expected: BTreeSet<String> = all
        .iter()
        .filter(|n| n.starts_with("PauseRun"))
        .cloned()
        .collect();
    assert_eq!(expected.len(), 2, "{all:?}");
    assert_eq!(failing, expected);
}

/// Trusting an inbound id without the source output's stamp fails the revision-8
/// literal rows (and the source stamped on another backend), and only those.
#[test]
fn a_runtime_that_trusts_unstamped_sources_fails_the_stamp_rows_only() {
    let (code, failing, all) = run_defect("trust-unstamped-source");
    assert_eq!(code, 1);
    let expected: BTreeSet<String> = all
        .iter()
        .filter(|n| {
            n.starts_with("Source output sess-real")
                || n.starts_with("Literal _session_id in with")
                || n.ends_with("(stamped on codex)")
                || (n.starts_with("Provenance is the edge") && !n.ends_with("delivers it)"))
                || n.ends_with("inbound fingerprint (a literal id)")
        })
        .cloned()
        .collect();
    assert_eq!(expected.len(), 6, "{all:?}");
    assert_eq!(failing, expected);
}

/// The reference's vxpersist with one deliberate packer defect
/// (`reference/persist/src/negative.rs`) in place of the templates named: the
/// defect is set only for those commands, the others are the reference.
fn run_packer_defect(defect: &str, verbs: &[(&str, &str, bool)]) -> Outcome {
    let dir = tempfile::tempdir().unwrap();
    outcome_with(
        &packer_defect_swap(dir.path(), defect, verbs),
        &["--tags", PACKER_ROWS],
    )
}

/// The templates named in `verbs`, each running vxpersist with `defect` through a
/// wrapper script written in `dir`.
fn packer_defect_swap<'a>(
    dir: &std::path::Path,
    defect: &str,
    verbs: &[(&'a str, &str, bool)],
) -> Vec<(&'a str, String)> {
    let p = bin_dir().join("vxpersist");
    let wrapper = common::script(
        dir,
        "defective-packer",
        &format!(
            "VXPERSIST_NEGATIVE_CONTROL={defect} exec {:?} \"$@\"",
            p.display().to_string()
        ),
    );
    verbs
        .iter()
        .map(|(key, verb, file)| {
            (
                *key,
                format!(
                    "[{wrapper:?}, \"{verb}\", \"--backend\", \"{{backend}}\", \"--root\", \
                     \"{{root}}\", \"--session-id\", \"{{id}}\"{}]",
                    if *file { ", \"{file}\"" } else { "" }
                ),
            )
        })
        .collect()
}

/// An unpack that never calls fsync (the seed asks for none): the row that fails
/// each fsync in turn fails none, so it is `inconclusive` and names the plan's
/// counts, never a pass; the write and rename rows still pass.
#[test]
fn an_unpack_that_never_fsyncs_leaves_the_fsync_fault_row_inconclusive() {
    common::ensure_reference(&[]);
    let dir = tempfile::tempdir().unwrap();
    let swap = packer_defect_swap(dir.path(), "no-fsync", &[UNPACK]);
    let tags = [
        "--tags",
        "@sp-temp-rename and @sp-hassession-root and not @sp-path-safety",
    ];
    let (code, report) = common::run_profile(&table(&swap), &tags);
    assert_eq!(code, 1, "an inconclusive row fails the run");
    let rows: Vec<&serde_json::Value> = report["scenarios"]
        .as_array()
        .expect("scenarios")
        .iter()
        .filter(|s| {
            s["name"]
                .as_str()
                .unwrap_or_default()
                .starts_with("Unpack failed at each")
        })
        .collect();
    assert_eq!(rows.len(), 3, "the write, fsync and rename rows ran");
    for s in rows {
        let (example, verdict) = (s["example"].as_str().unwrap_or_default(), &s["verdict"]);
        if example.starts_with("fsync") {
            assert_eq!(verdict, "inconclusive", "{s}");
            let m = s["message"].as_str().unwrap_or_default();
            assert!(m.contains("matched 0 calls and acted on 0"), "{m}");
        } else {
            assert_eq!(verdict, "pass", "{s}");
        }
    }
}

const UNPACK: (&str, &str, bool) = ("unpack", "unpack", true);
const PACK: (&str, &str, bool) = ("pack", "pack", true);
const HAS_SESSION: (&str, &str, bool) = ("has_session", "has-session", false);

/// The hostile-destination rows (08) of these `place | kind` examples.
fn hostile(rows: &[&str]) -> BTreeSet<String> {
    rows.iter()
        .map(|row| {
            let (place, kind) = row.split_once(" | ").unwrap();
            format!("Unpack where the {place} is {kind} [{row}]")
        })
        .collect()
}

/// Asserts that `o` failed exactly `expected`, each of which the run has, and that
/// nothing was non-strict.
fn assert_fails_exactly(o: &Outcome, expected: &BTreeSet<String>) {
    for name in expected {
        assert!(o.all.contains(name), "no scenario {name:?} in {:#?}", o.all);
    }
    assert_eq!(o.code, 1);
    assert_eq!(&o.failing, expected);
    assert!(o.non_strict.is_empty(), "{:?}", o.non_strict);
}

/// An unpack that follows a symbolic link already at a destination (the root, a
/// directory or a file) writes outside the root: the five symlink rows fail, only
/// those.
#[test]
fn an_unpack_that_follows_destination_symlinks_fails_the_symlink_rows_only() {
    let o = run_packer_defect("follow-destination-symlink", &[UNPACK]);
    let rows = [
        "root",
        "project dir",
        "key file",
        "subtree dir",
        "subtree file",
    ]
    .map(|place| format!("{place} | a symlink to outside the pod"));
    let rows: Vec<&str> = rows.iter().map(String::as_str).collect();
    assert_fails_exactly(&o, &hostile(&rows));
}

/// An unpack that writes through a hard link already at a destination changes the
/// link's other name outside the root: the two hard-link rows fail, only those.
#[test]
fn an_unpack_that_writes_through_hard_links_fails_the_hard_link_rows_only() {
    let o = run_packer_defect("write-through-hard-link", &[UNPACK]);
    assert_fails_exactly(
        &o,
        &hostile(&[
            "key file | a hard link to a file outside the pod",
            "subtree file | a hard link to a file outside the pod",
        ]),
    );
}

/// An unpack that opens a FIFO at a file's destination blocks: killed at the bound,
/// the two FIFO-at-a-file rows fail (with the killed command as evidence), only
/// those, and the suite does not hang.
#[test]
fn an_unpack_that_blocks_on_a_fifo_fails_the_fifo_rows_by_the_bound_only() {
    let o = run_packer_defect("block-on-fifo", &[UNPACK]);
    assert_fails_exactly(
        &o,
        &hostile(&["key file | a FIFO", "subtree file | a FIFO"]),
    );
}

/// An unpack that merges in place (no staging, the key file first, nothing taken
/// back) leaves HasSession true with a part of the session when a later file fails:
/// the fault rows, the crash sweep (it renames nothing), and the hostile rows that
/// fail a file after the key's, or write through a hard link, fail; only those.
#[test]
fn an_unpack_that_merges_in_place_fails_the_partial_failure_rows_only() {
    let o = run_packer_defect("merge-in-place", &[UNPACK]);
    let mut expected = hostile(&[
        "key file | a hard link to a file outside the pod",
        "subtree dir | a symlink to outside the pod",
        "subtree dir | a plain file",
        "subtree dir | a FIFO",
        "subtree file | a symlink to outside the pod",
        "subtree file | a hard link to a file outside the pod",
        "subtree file | a FIFO",
        "subtree file | a directory",
    ]);
    for (call, least) in [("write", 1), ("fsync", 0), ("rename", 1)] {
        expected.insert(format!(
            "Unpack failed at each {call} in turn leaves no HasSession or the whole session \
             [{call} | {least}]"
        ));
    }
    expected.insert(
        "Unpack crashed at each rename leaves no HasSession or the whole session".to_string(),
    );
    for call in ["write", "rename"] {
        expected.insert(format!(
            "Unpack over an earlier copy of the session failed at each {call} in turn never \
             leaves the old transcript beside new files [{call} | 1]"
        ));
    }
    assert_fails_exactly(&o, &expected);
}

/// A pack that collects files by the session id in their names packs the decoys:
/// the three decoy rows fail, only those.
#[test]
fn a_pack_that_collects_by_file_name_fails_the_decoy_rows_only() {
    let o = run_packer_defect("collect-by-file-name", &[PACK]);
    let expected: BTreeSet<String> = [
        ("claude_code", "6a73c0de-1234-4abc-8def-0123456789ab"),
        ("codex", "0b1c2d3e-4f50-4a6b-9c7d-8e9fa0b1c2d3"),
        ("pi", "5d41402abc4b2a76b9719d911017c592"),
    ]
    .iter()
    .map(|(b, id)| {
        format!(
            "Files that carry the session id are not packed unless the layout lists them \
             ({b}) [{b} | {id}]"
        )
    })
    .collect();
    assert_fails_exactly(&o, &expected);
}

/// A pack that silently leaves out a hard-linked session file: the row of a
/// hard-linked subagent transcript fails (the pack must be refused, not succeed
/// without it); a hard-linked key file leaves no session to pack, so that row still
/// sees a refusal.
#[test]
fn a_pack_that_skips_hard_links_fails_the_hard_linked_transcript_row_only() {
    let o = run_packer_defect("skip-hard-link", &[PACK]);
    let expected: BTreeSet<String> =
        ["A session file that is a hard link is refused on pack [a hard link | subagent]"]
            .map(String::from)
            .into();
    assert_fails_exactly(&o, &expected);
}

/// HasSession and unpack that do not treat two key files as ambiguous: the six
/// ambiguity rows become non-strict (pin sp-pin-ambiguous-key), none fails, and the
/// run passes.
#[test]
fn a_packer_that_guesses_between_two_key_files_is_non_strict_on_the_ambiguity_rows_only() {
    let o = run_packer_defect("guess-ambiguous", &[UNPACK, HAS_SESSION]);
    assert!(o.failing.is_empty(), "{:?}", o.failing);
    assert_eq!(o.code, 0);
    let expected: BTreeSet<String> = o
        .all
        .iter()
        .filter(|n| {
            n.starts_with("Two key files for one id")
                || n.starts_with("Unpack beside another key file of the id")
        })
        .cloned()
        .collect();
    assert_eq!(expected.len(), 6, "{:#?}", o.all);
    assert_eq!(o.non_strict, expected);
}

/// Issue 43's packer defects (`reference/persist/src/negative.rs`), all at once for
/// pack, unpack and HasSession, on the packer rows: each new row fails, nothing else.
/// Alone (measured by hand, docs/detection.md) each fails its own rows: the path
/// rule checked on the first component only (the six interior and trailing path
/// rows), no total cap on read (the 32 MiB row), the header's backend or id not
/// compared (the four rows of a valid blob unpacked as another), the old key kept
/// until the last rename (the earlier-copy rename row), symlinked directories
/// followed by pack and HasSession (the three linked-directory rows).
#[test]
fn the_packer_defects_of_the_battery_fail_their_rows_only() {
    common::ensure_reference(&[]);
    let dir = tempfile::tempdir().unwrap();
    let defects = "path-first-component-only,no-total-cap-on-read,header-backend-unchecked,\
                   header-id-unchecked,keep-old-key-until-rename,follow-session-symlinks";
    let mut swap = packer_defect_swap(dir.path(), defects, &[PACK, UNPACK, HAS_SESSION]);
    // The kit's total cap declared: undeclared, a reader whose only bound on the total
    // is the blob length rule (32 MiB + 64 KiB) refuses at another size, a pin
    // (sp-pin-caps), not a fail.
    swap.push(("pins", "{ max_total_bytes = 33554432 }".to_string()));
    let o = outcome_with(&swap, &["--tags", PACKER_ROWS]);
    let rows = [
        "A blob whose member is <id>/",
        "A blob over a cap is refused on unpack (32 MiB + 1 in all",
        "A valid blob unpacked as another ",
        "Unpack over an earlier copy of the session failed at each rename",
        "A session whose ",
    ];
    let expected: BTreeSet<String> = o
        .all
        .iter()
        .filter(|n| rows.iter().any(|r| n.starts_with(r)))
        // A member checked past its first component lands inside the pod: the MUST
        // row beside the refusal (nothing outside, no special file) still holds.
        .filter(|n| !n.contains("leaves no special"))
        .cloned()
        .collect();
    assert_eq!(expected.len(), 6 + 1 + 4 + 1 + 3, "{:#?}", o.all);
    assert_fails_exactly(&o, &expected);
}

/// Issue 43's runtime defects, all at once in the drive, on the runtime rows: each
/// new row fails, and the fail-stop rows whose checkpoint fails (a blob deleted
/// before it), nothing else. Alone each fails its own rows (docs/detection.md).
#[test]
fn the_runtime_defects_of_the_battery_fail_their_rows_only() {
    common::ensure_reference(&[]);
    let dir = tempfile::tempdir().unwrap();
    let defects = "scan-every-output,inbound-fingerprint-fallback,fingerprint-kept-on-fresh,\
                   non-persist-keeps-inbound,delete-before-checkpoint,source-slot-falls-through";
    let p = bin_dir().join("vxpersist");
    let drive = common::script(
        dir.path(),
        "defective-drive",
        &format!("VXPERSIST_NEGATIVE_CONTROL={defects} exec {p:?} \"$@\""),
    );
    let swap = [(
        "drive",
        format!("[{drive:?}, \"drive\", \"--state\", \"{{state_home}}\"]"),
    )];
    let o = outcome_with(&swap, &["--tags", "@part-runtime"]);
    let strip = |n: &String| n.split(" [").next().unwrap_or(n).to_string();
    let failing: BTreeSet<String> = o.failing.iter().map(strip).collect();
    let expected: BTreeSet<String> = [
        "Provenance is the edge that delivered the id, not any stamped output (a's edge \
         delivers another id)",
        "Provenance is the edge that delivered the id, not any stamped output (a's edge \
         delivers no id)",
        "HasSession path, no slot: the fingerprint is the source output's or none, never the \
         inbound one (the source stamped none)",
        "A visit that goes fresh carries neither the inbound id nor the inbound fingerprint \
         (a literal id)",
        "Only a persist node resumes another node's id (fresh)",
        "Source-slot Get/unpack fail while the root still holds the session: no \
         Task.SessionID (store_get)",
        "Source-slot Get/unpack fail while the root still holds the session: no \
         Task.SessionID (unpack)",
        "Persist success then SaveCheckpoint fail: no edge; FailRunResumable cp has new slot; \
         Resume re-executes from that slot",
        "FailRunResumable fails too: terminal, the old slot never restored, blobs kept",
        "Pack fails and so does the checkpoint of the deletion: fail-stop with an empty slot",
        "Persist reInvoke whose checkpoint fails deletes neither B nor the old blob",
        "Rewind whose checkpoint fails deletes nothing",
    ]
    .map(String::from)
    .into();
    assert_eq!(o.code, 1);
    assert!(o.non_strict.is_empty(), "{:?}", o.non_strict);
    assert_eq!(failing, expected);
}
