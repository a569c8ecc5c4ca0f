//! The rows that rest on the kit's readings where ADR-0068 names nothing (issue 45):
//! a profile that declares its own reading, or claims no such optional feature, gets
//! those rows unjudged, while the seed's own MUSTs are still judged for it.

use super::{common, names, server_rows_report, server_rows_report_claiming, with_verdict};
use super::{PLUGINS_DIR, RELOAD_ROW};

/// ADR-0068 names no launch verb: the plugin-change row's relay reloads before the
/// first of the profile's `restore_launch_verbs`. Naming one the reference's restore
/// never sends leaves that row's four examples unjudged (`unsupported-optional`,
/// never `pass`); the other rows of the tag pass, as under the kit's default.
#[test]
fn a_launch_verb_the_restore_never_sends_leaves_the_reload_row_unjudged() {
    common::ensure_reference(&[]);
    let serve = "[\"{bin_dir}/vxref\", \"serve\", \"--socket\", \"{socket}\"]\n[readiness]\nkind = \"socket\"";
    let extra = "restore_launch_verbs = [\"vx.no-such-launch\"]\n";
    let (code, report) = server_rows_report(
        serve,
        "{socket}",
        PLUGINS_DIR,
        extra,
        "@asr-restore-fail-before",
    );
    assert_eq!(code, 0);
    let rows = report["scenarios"].as_array().expect("scenarios");
    let unjudged = rows
        .iter()
        .filter(|s| s["name"] == RELOAD_ROW && s["verdict"] == "unsupported-optional")
        .count();
    assert_eq!(unjudged, 4, "{report:#}");
    assert_eq!(with_verdict(&report, "pass").len(), 1, "{report:#}");
    assert_eq!(rows.len(), 13);
}

/// The caller's fallback argv is the kit's reading (`@optional-fallback-argv`): a
/// profile that does not claim it gets the fallback row, and the schema-1 row's
/// fallback check, unjudged (`unsupported-optional`), while that row's MUST, the
/// archived command never running, is judged for it too: the reference with the
/// `archived-command-runs` defect fails it.
#[test]
fn without_the_fallback_argv_feature_the_archived_command_is_still_judged() {
    common::ensure_reference(&[]);
    let dir = tempfile::tempdir().unwrap();
    let vxref = common::bin_dir().join("vxref");
    let run = |defect: &str| {
        let wrapper = common::script(
            dir.path(),
            &format!("vxref-{defect}"),
            &format!("VXREF_NEGATIVE_CONTROL={defect} exec {vxref:?} \"$@\""),
        );
        let serve = format!(
            "[{wrapper:?}, \"serve\", \"--socket\", \"{{socket}}\"]\n[readiness]\nkind = \"socket\""
        );
        let (_, report) = server_rows_report_claiming(
            &wrapper,
            "\"agent-server\"",
            &serve,
            "{socket}",
            PLUGINS_DIR,
            "",
            "@asr-no-archive-authority",
        );
        report
    };
    const SCHEMA1_ROW: &str =
        "A schema-1 archive's command never runs: its panes get the fallback argv";
    const FALLBACK_ROW: &str =
        "Panes without a record need a fallback argv, checked before anything is created";
    let clean = run("none");
    assert_eq!(
        with_verdict(&clean, "unsupported-optional"),
        names(&[SCHEMA1_ROW, FALLBACK_ROW]),
        "{clean:#}"
    );
    let defective = run("archived-command-runs");
    assert_eq!(
        with_verdict(&defective, "fail"),
        names(&[SCHEMA1_ROW]),
        "{defective:#}"
    );
}
