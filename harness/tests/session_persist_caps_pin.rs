//! The packer's caps are a pin (`sp-pin-caps`): the seed asks for size and count caps
//! and leaves their values to the implementer. The reference packer started with
//! other caps (`VXPERSIST_CAPS`, reference/persist/src/limits.rs) passes the caps
//! rows when the profile declares them in `[persist.pins]`; undeclared, a larger
//! count cap is non-strict on the rows over the kit's count; a packer without a count
//! cap fails those rows either way.

mod common;

use common::bin_dir;
use std::collections::BTreeMap;

/// The rows this test runs: every caps row of the packer part.
const TAGS: &str = "@sp-caps and @part-packer";

/// A profile claiming the packer and checker parts, its commands the reference's
/// started with `VXPERSIST_CAPS=<caps>`, and `pins` as its `[persist.pins]`.
fn profile(dir: &std::path::Path, caps: &str, pins: &str) -> String {
    let p = bin_dir().join("vxpersist");
    let wrapper = common::script(
        dir,
        "capped-packer",
        &format!(
            "VXPERSIST_CAPS={caps} exec {:?} \"$@\"",
            p.display().to_string()
        ),
    );
    let verb = |v: &str, file: bool| {
        format!(
            "[{wrapper:?}, \"{v}\", \"--backend\", \"{{backend}}\", \"--root\", \"{{root}}\", \
             \"--session-id\", \"{{id}}\"{}]",
            if file { ", \"{file}\"" } else { "" }
        )
    };
    format!(
        "name = \"caps-pin\"\ncontracts = [\"session-persist\"]\n[persist]\n\
         parts = [\"packer\", \"checker\"]\nblob_check = [{wrapper:?}, \"blob\", \"check\", \"--json\", \"{{file}}\"]\n\
         pack = {}\nunpack = {}\nhas_session = {}\n[persist.pins]\n{pins}\n",
        verb("pack", true),
        verb("unpack", true),
        verb("has-session", false)
    )
}

/// Each scenario's verdict, by `name [example]`.
fn verdicts(caps: &str, pins: &str) -> (i32, BTreeMap<String, String>) {
    verdicts_of(caps, pins, TAGS)
}

fn verdicts_of(caps: &str, pins: &str, tags: &str) -> (i32, BTreeMap<String, String>) {
    common::ensure_reference(&[]);
    let dir = tempfile::tempdir().unwrap();
    let (code, report) = common::run_profile(&profile(dir.path(), caps, pins), &["--tags", tags]);
    let rows = report["scenarios"]
        .as_array()
        .expect("scenarios")
        .iter()
        .map(|s| {
            let name = s["name"].as_str().expect("name");
            let name = match s["example"].as_str() {
                Some(e) => format!("{name} [{e}]"),
                None => name.to_string(),
            };
            (name, s["verdict"].as_str().unwrap_or("").to_string())
        })
        .collect();
    (code, rows)
}

/// The rows over the kit's count cap, on pack and on unpack.
fn over_count(name: &str) -> bool {
    name.starts_with("A session over a cap is refused whole (65 files)")
        || name.starts_with("A blob over a cap is refused on unpack (65 members)")
}

fn with_verdict(rows: &BTreeMap<String, String>, verdict: &str) -> Vec<String> {
    rows.iter()
        .filter(|(_, v)| *v == verdict)
        .map(|(n, _)| n.clone())
        .collect()
}

/// A packer whose count cap is 100, declared: every caps row passes (the over-cap
/// rows build 101 files, the at-cap row 100). Undeclared: the two rows over the
/// kit's 64 see 65 accepted and 129 (twice the kit's cap, + 1) refused, so they are
/// non-strict naming the pin, and every other row passes.
#[test]
fn a_larger_count_cap_passes_declared_and_is_non_strict_undeclared() {
    let (code, rows) = verdicts("members=100", "max_files = 100");
    assert_eq!(rows.len(), 9, "{rows:#?}");
    assert_eq!(code, 0, "{rows:#?}");
    assert_eq!(with_verdict(&rows, "pass").len(), rows.len(), "{rows:#?}");

    let (code, rows) = verdicts("members=100", "");
    assert_eq!(code, 0, "{rows:#?}");
    let non_strict = with_verdict(&rows, "non-strict");
    assert_eq!(non_strict.len(), 2, "{rows:#?}");
    assert!(non_strict.iter().all(|n| over_count(n)), "{non_strict:?}");
    assert_eq!(
        with_verdict(&rows, "pass").len(),
        rows.len() - 2,
        "{rows:#?}"
    );
}

/// A count cap declared past the largest input the suite builds (4096 files) is the
/// implementer's ceiling, which the seed leaves open: its over-count rows do not apply
/// (`unsupported-optional`, naming the value), nor does the row at it; every other
/// caps row passes, and the run is certified.
#[test]
fn a_declared_cap_past_what_the_suite_builds_is_not_judged() {
    let (code, rows) = verdicts("members=10000", "max_files = 10000");
    assert_eq!(code, 0, "{rows:#?}");
    let not_judged = with_verdict(&rows, "unsupported-optional");
    // The two rows over the count cap, and the (SHOULD) row at it.
    let at_cap = "A session at the caps packs and moves whole";
    assert_eq!(not_judged.len(), 3, "{rows:#?}");
    assert!(
        not_judged.iter().all(|n| over_count(n) || n == at_cap),
        "{not_judged:?}"
    );
    assert_eq!(
        with_verdict(&rows, "pass").len(),
        rows.len() - 3,
        "{rows:#?}"
    );
}

/// A packer without a count cap (one far beyond anything the suite builds) fails the
/// two rows over the count cap whether the profile declares the kit's cap (65 is
/// over it) or declares nothing (129, twice the kit's cap, accepted too); the seed
/// asks for caps, so no declaration can pass it.
#[test]
fn a_packer_without_a_count_cap_fails_the_count_rows_either_way() {
    for pins in ["max_files = 64", ""] {
        let (code, rows) = verdicts("members=1000000000", pins);
        assert_eq!(code, 1, "{pins:?}: {rows:#?}");
        let failing = with_verdict(&rows, "fail");
        assert_eq!(failing.len(), 2, "{pins:?}: {rows:#?}");
        assert!(failing.iter().all(|n| over_count(n)), "{failing:?}");
        assert!(with_verdict(&rows, "non-strict").is_empty(), "{rows:#?}");
    }
}

/// Smaller caps (16 files, 1 MiB a file, 2 MiB in all), declared: every caps row
/// passes at the packer's own numbers, small enough that this run is quick.
/// Undeclared, the over-cap rows pass (the kit's inputs are over these caps too), and
/// the at-cap row, 64 files, is refused: that row is SHOULD, so the run still passes
/// and the row says `fail` under its should clause.
#[test]
fn smaller_caps_pass_declared_and_fail_only_the_should_row_undeclared() {
    let caps = "members=16,member_bytes=1048576,total_body_bytes=2097152";
    let pins = "max_files = 16\nmax_file_bytes = 1048576\nmax_total_bytes = 2097152";
    let (code, rows) = verdicts(caps, pins);
    assert_eq!(code, 0, "{rows:#?}");
    assert_eq!(with_verdict(&rows, "pass").len(), rows.len(), "{rows:#?}");

    let (_, rows) = verdicts(caps, "");
    let not_passed: Vec<String> = rows
        .iter()
        .filter(|(_, v)| *v != "pass")
        .map(|(n, v)| format!("{n}: {v}"))
        .collect();
    assert_eq!(
        not_passed,
        ["A session at the caps packs and moves whole: fail"],
        "{rows:#?}"
    );
}

/// The checker's caps rows read the fixed corpus, built at the kit's caps: with a
/// larger count cap declared, the checker that accepts `members-65.tar` is right and
/// the row says it tested nothing (`inconclusive`), never `pass`; the other rows
/// pass. Undeclared, that acceptance fails (no larger corpus blob to probe with).
#[test]
fn the_checker_rows_are_inconclusive_within_a_declared_cap() {
    let tags = "@sp-caps and @part-checker";
    let (_, rows) = verdicts_of("members=100", "max_files = 100", tags);
    assert_eq!(rows.len(), 3, "{rows:#?}");
    let members = "A blob over a cap is refused (members-65.tar)";
    let not_passed: Vec<(&str, &str)> = rows
        .iter()
        .filter(|(_, v)| *v != "pass")
        .map(|(n, v)| (n.split(" [").next().unwrap_or(n), v.as_str()))
        .collect();
    assert_eq!(not_passed, [(members, "inconclusive")], "{rows:#?}");
    let (code, rows) = verdicts_of("members=100", "", tags);
    assert_eq!(code, 1, "{rows:#?}");
    let failing = with_verdict(&rows, "fail");
    assert_eq!(failing.len(), 1, "{rows:#?}");
    assert!(failing[0].starts_with(members), "{failing:?}");
}

/// A packer whose sessions are one file each (its own layouts: a claude_code session
/// is its transcript alone, no pi) still has its file size cap judged: the suite grows
/// the transcript one over the cap instead of adding a file. The reference without a
/// per-file cap fails that row (16 MiB + 1 and twice the kit's cap accepted); with
/// the kit's caps it passes, and the count and total rows, which one file cannot
/// reach, do not apply.
#[test]
fn a_one_file_packer_has_its_file_size_cap_judged_on_its_transcript() {
    common::ensure_reference(&[]);
    let dir = tempfile::tempdir().unwrap();
    let l = common::one_file_layouts(dir.path());
    let p = bin_dir().join("vxpersist").display().to_string();
    let row = "A session over a cap is refused whole (a file of 16 MiB + 1) [a file of 16 MiB + 1 | file size]";
    for (caps, want) in [
        ("members=64", "pass"),
        (
            "member_bytes=1099511627776,total_body_bytes=1099511627776",
            "fail",
        ),
    ] {
        let wrapper = common::script(
            dir.path(),
            &format!("one-file-{want}"),
            &format!("v=$1; shift; VXPERSIST_CAPS={caps} exec {p:?} \"$v\" --layouts {l:?} \"$@\""),
        );
        let verb = |v: &str, file: bool| {
            format!(
                "[{wrapper:?}, \"{v}\", \"--backend\", \"{{backend}}\", \"--root\", \"{{root}}\", \
                 \"--session-id\", \"{{id}}\"{}]",
                if file { ", \"{file}\"" } else { "" }
            )
        };
        let profile = format!(
            "name = \"one-file\"\ncontracts = [\"session-persist\"]\n[persist]\n\
             parts = [\"packer\"]\nlayouts = {l:?}\npack = {}\nunpack = {}\nhas_session = {}\n",
            verb("pack", true),
            verb("unpack", true),
            verb("has-session", false)
        );
        let (_, report) = common::run_profile(&profile, &["--tags", "@sp-no-truncate"]);
        let rows: BTreeMap<String, String> = report["scenarios"]
            .as_array()
            .unwrap()
            .iter()
            .map(|s| {
                (
                    format!(
                        "{} [{}]",
                        s["name"].as_str().unwrap(),
                        s["example"].as_str().unwrap_or("")
                    ),
                    s["verdict"].as_str().unwrap().to_string(),
                )
            })
            .collect();
        assert_eq!(
            rows.get(row).map(String::as_str),
            Some(want),
            "{caps}: {rows:#?}"
        );
        assert_eq!(
            with_verdict(&rows, "unsupported-optional").len(),
            2,
            "{caps}: the count and total rows do not apply: {rows:#?}"
        );
    }
}
