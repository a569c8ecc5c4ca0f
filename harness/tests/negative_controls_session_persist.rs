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
    for (k, v) in swap {
        rows.iter_mut().find(|(key, _)| key == k).unwrap().1 = v.clone();
    }
    let lines: Vec<String> = rows.iter().map(|(k, v)| format!("{k} = {v}")).collect();
    format!(
        "name = \"negative-control\"\ncontracts = [\"session-persist\"]\n\
         fault_preload = \"{{bin_dir}}/libvxfault.so\"\n[persist]\n{}\n",
        lines.join("\n")
    )
}

/// The exit code, the names of the scenarios that failed, and of all of them.
fn run(swap: &[(&str, String)]) -> (i32, BTreeSet<String>, BTreeSet<String>) {
    common::ensure_reference(&[]);
    let (code, report) = common::run_profile(&table(swap), &[]);
    let names = |only_fail: bool| -> BTreeSet<String> {
        report["scenarios"]
            .as_array()
            .expect("scenarios")
            .iter()
            .filter(|s| !only_fail || s["verdict"] == "fail")
            .map(|s| s["name"].as_str().expect("name").to_string())
            .collect()
    };
    let other: Vec<String> = report["scenarios"]
        .as_array()
        .expect("scenarios")
        .iter()
        .filter(|s| {
            !["pass", "fail", "unsupported-optional"].contains(&s["verdict"].as_str().unwrap_or(""))
        })
        .map(|s| format!("{} {}: {}", s["name"], s["verdict"], s["message"]))
        .collect();
    assert!(
        other.is_empty(),
        "no scenario may be a harness error here: {other:?}"
    );
    (code, names(true), names(false))
}

#[test]
fn the_reference_passes_every_scenario() {
    let (code, failing, all) = run(&[]);
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
    let (code, failing, all) = run(&[("unpack", unpack)]);
    assert_eq!(code, 1);
    let caught = "A blob carrying a credential or an unlisted file is never unpacked";
    let expected: BTreeSet<String> = all
        .iter()
        // The widened list covers `projects/**`: a credential file inside a session's
        // directory and an unlisted transcript get through; those at the root do not.
        .filter(|n| {
            n.starts_with(caught) && (n.ends_with("(auth.json)") || n.ends_with("(unlisted file)"))
        })
        .cloned()
        .collect();
    assert_eq!(expected.len(), 2, "{all:?}");
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
    let (code, failing, all) = run(&[("store_adapter", format!("[{adapter:?}, \"{{store}}\"]"))]);
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
    run(&[(
        "drive",
        format!("[{drive:?}, \"drive\", \"--state\", \"{{state_home}}\"]"),
    )])
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
        })
        .cloned()
        .collect();
    assert_eq!(expected.len(), 3, "{all:?}");
    assert_eq!(failing, expected);
}
