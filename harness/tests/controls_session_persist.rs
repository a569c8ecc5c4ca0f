//! The session-persist suite cannot pass a packer vacuously: every refusal row runs
//! its valid twin first (the control), and a refusal after a refused twin is
//! `inconclusive`, never `pass`. A profile may claim the packer alone.

mod common;

use common::bin_dir;
use serde_json::Value;

/// A `[persist]` table claiming the packer alone: `program VERB [after_verb…]
/// --backend … --root … --session-id … [{file}]` for pack, unpack and has-session.
fn packer_profile(program: &str, after_verb: &[&str]) -> String {
    let session = |verb: &str, file: bool| {
        let mut words: Vec<String> = [program, verb]
            .iter()
            .chain(after_verb)
            .map(|w| format!("{w:?}"))
            .collect();
        for w in [
            "--backend",
            "{backend}",
            "--root",
            "{root}",
            "--session-id",
            "{id}",
        ] {
            words.push(format!("{w:?}"));
        }
        if file {
            words.push("\"{file}\"".into());
        }
        format!("[{}]", words.join(", "))
    };
    format!(
        "name = \"packer-only\"\ncontracts = [\"session-persist\"]\n\
         fault_preload = \"{{bin_dir}}/libvxfault.so\"\n[persist]\nparts = [\"packer\"]\n\
         pack = {}\nunpack = {}\nhas_session = {}\n",
        session("pack", true),
        session("unpack", true),
        session("has-session", false)
    )
}

fn scenarios(report: &Value) -> Vec<&Value> {
    report["scenarios"]
        .as_array()
        .expect("scenarios")
        .iter()
        .collect()
}

fn show(s: &Value) -> String {
    format!(
        "{} [{}] {}: {}",
        s["name"], s["feature"], s["verdict"], s["message"]
    )
}

/// The features of the packer part.
const PACKER_FEATURES: [&str; 3] = [
    "01_packer.feature",
    "08_hostile_destinations.feature",
    "09_decoys.feature",
];

fn is_packer(s: &Value) -> bool {
    PACKER_FEATURES.iter().any(|f| s["feature"] == *f)
}

fn packer_rows(report: &Value) -> Vec<&Value> {
    scenarios(report)
        .into_iter()
        .filter(|s| is_packer(s))
        .collect()
}

/// The refusal rows of unpack: a kit blob with a defect, or a blob for another
/// session.
fn is_unpack_refusal(name: &str) -> bool {
    [
        "A blob carrying a credential or an unlisted file is never unpacked",
        "A blob whose member is",
        "A blob over a cap is refused on unpack",
        "A blob whose header is wrong is refused",
        "A blob for another session leaves the root unchanged",
    ]
    .iter()
    .any(|p| name.starts_with(p))
}

/// The device row needs root; without it the row is not run.
fn unsupported_here(s: &Value) -> bool {
    s["verdict"] == "unsupported-optional" && s["name"].as_str().unwrap_or("").contains("device")
}

/// A packer that refuses every pack and unpack and answers HasSession false passes
/// no packer scenario: each one fails or is inconclusive.
#[test]
fn a_packer_that_refuses_everything_passes_no_packer_scenario() {
    common::ensure_reference(&[]);
    let dir = tempfile::tempdir().unwrap();
    let refuser = common::script(
        dir.path(),
        "refuser",
        r#"case "$1" in has-session) echo false ;; *) echo "refused" >&2; exit 1 ;; esac"#,
    );
    let (code, report) = common::run_profile(&packer_profile(&refuser, &[]), &[]);
    assert_eq!(code, 1);
    let rows = packer_rows(&report);
    assert!(rows.len() >= 50, "{}", rows.len());
    let mut inconclusive = 0;
    for s in &rows {
        if unsupported_here(s) {
            continue;
        }
        assert!(
            s["verdict"] == "fail" || s["verdict"] == "inconclusive",
            "{}",
            show(s)
        );
        if s["verdict"] == "inconclusive" {
            inconclusive += 1;
            let control = &s["evidence"]["control"];
            assert_eq!(control["accepted"], false, "{}", show(s));
        }
    }
    // Every refusal row (unpack, pack, HasSession false) is inconclusive.
    assert!(inconclusive >= 40, "{inconclusive} inconclusive");
}

/// A packer that packs fine but refuses every kit blob for an unrelated reason (it
/// names the header member otherwise, and the profile does not say so): every
/// unpack refusal row is inconclusive, none passes.
#[test]
fn a_packer_that_refuses_the_kits_blobs_for_another_reason_is_inconclusive_on_every_unpack_refusal()
{
    common::ensure_reference(&[]);
    let p = bin_dir().join("vxpersist").display().to_string();
    let (code, report) = common::run_profile(
        &packer_profile(&p, &["--header-member", ".peer-session.json"]),
        &[],
    );
    assert_eq!(code, 1);
    let refusals: Vec<&Value> = packer_rows(&report)
        .into_iter()
        .filter(|s| is_unpack_refusal(s["name"].as_str().unwrap()))
        .collect();
    assert!(refusals.len() >= 30, "{}", refusals.len());
    for s in &refusals {
        assert_eq!(s["verdict"], "inconclusive", "{}", show(s));
        assert!(
            s["evidence"]["control"]["what"]
                .as_str()
                .is_some_and(|w| w.contains(".session-header.json")),
            "the control names the header member it wrote: {}",
            s["evidence"]
        );
    }
    // It does pack: the packs of the kit's sessions succeed, and their blobs carry
    // another header name, a pin the profile did not declare (non-strict there).
    let canonical = packer_rows(&report)
        .into_iter()
        .find(|s| s["name"] == "Packing one session twice gives the same bytes")
        .expect("the canonical row");
    assert_eq!(canonical["verdict"], "pass", "{}", show(canonical));
}

/// A profile that claims the packer alone, with no store, runtime or checker keys:
/// its packer rows are judged (the reference's vxpersist passes them), every other
/// session-persist scenario is `not-claimed`, and the run passes.
#[test]
fn a_packer_only_profile_is_judged_on_its_packer_rows_alone() {
    common::ensure_reference(&[]);
    let p = bin_dir().join("vxpersist").display().to_string();
    let (code, report) = common::run_profile(&packer_profile(&p, &[]), &[]);
    let all = scenarios(&report);
    let bad: Vec<String> = all
        .iter()
        .filter(|s| {
            let packer = is_packer(s);
            let v = s["verdict"].as_str().unwrap();
            if packer {
                v != "pass" && !unsupported_here(s)
            } else {
                v != "not-claimed"
            }
        })
        .map(|s| show(s))
        .collect();
    assert!(bad.is_empty(), "{bad:#?}");
    assert_eq!(code, 0);
    assert!(packer_rows(&report).len() >= 50);
    let not_claimed = all.iter().filter(|s| s["verdict"] == "not-claimed").count();
    assert!(not_claimed >= 100, "{not_claimed}");
}

/// ADR-089 leaves each backend's file set to the implementer ("Implementer
/// discovery"). A packer whose own layouts have no pi backend and one file per
/// claude_code session (no subtree): the rows about a pi session, a session's
/// subtree or extra files do not apply to it (`unsupported-optional`, naming its
/// layouts); none is a harness error or a fail, and the rest still run.
#[test]
fn rows_outside_the_implementations_own_layouts_do_not_apply() {
    common::ensure_reference(&[]);
    let dir = tempfile::tempdir().unwrap();
    let l = common::one_file_layouts(dir.path());
    let p = bin_dir().join("vxpersist").display().to_string();
    let profile = packer_profile(&p, &["--layouts", &l]) + &format!("layouts = {l:?}\n");
    let (code, report) = common::run_profile(&profile, &[]);
    let rows = packer_rows(&report);
    let bad: Vec<String> = rows
        .iter()
        .filter(|s| !["pass", "unsupported-optional"].contains(&s["verdict"].as_str().unwrap()))
        .map(|s| show(s))
        .collect();
    assert!(bad.is_empty(), "{bad:#?}");
    assert_eq!(code, 0);
    let skipped: Vec<&&Value> = rows
        .iter()
        .filter(|s| s["verdict"] == "unsupported-optional" && !unsupported_here(s))
        .collect();
    for s in &skipped {
        let m = s["message"].as_str().unwrap_or("");
        assert!(
            m.contains(&l) && m.contains("leaves to the implementer"),
            "{}",
            show(s)
        );
    }
    let about = |what: &str| skipped.iter().filter(|s| show(s).contains(what)).count();
    assert!(about("pi") >= 5, "{skipped:#?}");
    assert!(about("subtree") >= 3, "{skipped:#?}");
    assert!(about("over a cap") >= 2, "{skipped:#?}");
    let passed = rows.iter().filter(|s| s["verdict"] == "pass").count();
    assert!(passed >= 60, "{passed} pass");
}

/// A blob checker of the implementation's own layouts may refuse a valid corpus blob
/// only where those layouts leave one of its members out (or its backend): a
/// refuse-all checker fails the valid rows whose blob its layouts fully list, and the
/// others do not apply. With the kit's layouts declared as its own, every valid row
/// fails.
#[test]
fn a_checker_of_its_own_layouts_is_judged_on_the_blobs_they_list() {
    common::ensure_reference(&[]);
    let dir = tempfile::tempdir().unwrap();
    let kit = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../persist/layouts.toml");
    let verdicts = |layouts: &str| {
        let (_, report) = common::run_profile(
            &format!(
                "name = \"refuse-all-checker\"\ncontracts = [\"session-persist\"]\n\
                 [persist]\nparts = [\"checker\"]\nverdict_only = true\n\
                 blob_check = [\"sh\", \"-c\", \"exit 1\", \"{{file}}\"]\nlayouts = {layouts:?}\n"
            ),
            &["--tags", "@part-checker"],
        );
        scenarios(&report)
            .into_iter()
            .filter(|s| {
                s["name"]
                    .as_str()
                    .unwrap_or("")
                    .starts_with("A valid blob is read as valid")
            })
            .map(|s| {
                let name = s["name"].as_str().unwrap_or("").to_string();
                (name, s["verdict"].as_str().unwrap_or("").to_string())
            })
            .collect::<std::collections::BTreeMap<_, _>>()
    };
    let own = verdicts(&common::one_file_layouts(dir.path()));
    assert_eq!(own.len(), 5, "{own:#?}");
    for (name, verdict) in &own {
        // The one-file layouts list codex's rollout file alone; claude's subagent file
        // and pi's backend are outside them.
        let want = if name.contains("valid-codex.tar") {
            "fail"
        } else {
            "unsupported-optional"
        };
        assert_eq!(verdict, want, "{name}: {own:#?}");
    }
    let same = verdicts(&kit.display().to_string());
    assert!(same.values().all(|v| v == "fail"), "{same:#?}");
}
