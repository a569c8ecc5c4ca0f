//! The reference's own deliberate defects for the agent-restore rows added since
//! 9611d03 (`VXREF_NEGATIVE_CONTROL`, `reference/daemon/src/negative.rs`), each the
//! mistake of one mutant of `harness/mutants/agent-restore/`: with one switch on,
//! every `vxref` of the run (server, suite CLI, launch/save/restore clients) has that
//! defect, and the rows its tags select must fail exactly as listed; the others of
//! those tags pass. Each switch runs only its tags, all switches at once, one thread
//! each (the suite's rows mostly wait), so the test costs about its slowest run.

use super::{names, server_rows_report_with, PLUGINS_DIR};
use std::collections::BTreeSet;

/// One switch: its name, the rows it runs (a tag expression) and the rows, each
/// `name` or `name [example cells]`, that must fail, and those that must be
/// `non-strict` (refused in time, under another error name than the kit's).
struct Switch {
    defect: &'static str,
    /// Whether it runs the offline checkers' rows (the templates' need their
    /// checker); else the server rows, the archive checker being `vxref`'s too.
    checker: bool,
    tags: &'static str,
    fails: &'static [&'static str],
    non_strict: &'static [&'static str],
    /// Lines of the profile's `[agent_restore.pins]` (checker runs).
    pins: &'static str,
}

const SWITCHES: &[Switch] = &[
    Switch {
        defect: "native-length-in-chars",
        checker: false,
        tags: "@asr-bounds-native",
        fails: &[
            "A native id's bound is in bytes, in every UTF-8 width, and its trim is Unicode's [1024 bytes of two-byte characters | 1025 bytes of two-byte characters | native.length]",
            "A native id's bound is in bytes, in every UTF-8 width, and its trim is Unicode's [1024 bytes of three-byte characters | 1025 bytes of three-byte characters | native.length]",
            "A native id's bound is in bytes, in every UTF-8 width, and its trim is Unicode's [1024 bytes of four-byte characters | 1025 bytes of four-byte characters | native.length]",
            "Native ids are trimmed, control-free, not option-shaped and at most 1024 bytes [native-id-1025-bytes-two-byte | native-id-1025-bytes-two-byte.json | conflict.archive_corrupt | archive.record]",
            "Native ids are trimmed, control-free, not option-shaped and at most 1024 bytes [native-id-1025-bytes-four-byte | native-id-1025-bytes-four-byte.json | conflict.archive_corrupt | archive.record]",
        ],
        non_strict: &[],
        pins: "",
    },
    Switch {
        defect: "owner-length-in-chars",
        checker: false,
        tags: "@asr-bounds-ids",
        fails: &[
            "An owner id's bound is in bytes, in every UTF-8 width, and its trim is Unicode's [plugin_id | 120 bytes of two-byte characters | 121 bytes of two-byte characters | record.owner_length]",
            "An owner id's bound is in bytes, in every UTF-8 width, and its trim is Unicode's [integration_id | 120 bytes of three-byte characters | 121 bytes of three-byte characters | record.owner_length]",
            "Owner ids are trimmed, control-free and at most 120 bytes [plugin-id-121-bytes-three-byte | plugin-id-121-bytes-three-byte.json | conflict.archive_corrupt | archive.record]",
        ],
        non_strict: &[],
        pins: "",
    },
    Switch {
        defect: "trim-ascii-whitespace",
        checker: false,
        tags: "@asr-bounds-native or @asr-bounds-ids",
        fails: &[
            "A native id's bound is in bytes, in every UTF-8 width, and its trim is Unicode's [an interior ideographic space | led by an ideographic space | native.padded]",
            "A native id's bound is in bytes, in every UTF-8 width, and its trim is Unicode's [an interior no-break space | ending in a no-break space | native.padded]",
            "A native id's bound is in bytes, in every UTF-8 width, and its trim is Unicode's [an interior line separator | ending in a line separator | native.padded]",
            "A native id's bound is in bytes, in every UTF-8 width, and its trim is Unicode's [an interior ideographic space | ending in an em space | native.padded]",
            "An owner id's bound is in bytes, in every UTF-8 width, and its trim is Unicode's [plugin_id | an interior ideographic space | led by an ideographic space | record.owner_padded]",
            "An owner id's bound is in bytes, in every UTF-8 width, and its trim is Unicode's [integration_id | an interior no-break space | ending in a no-break space | record.owner_padded]",
            "Native ids are trimmed, control-free, not option-shaped and at most 1024 bytes [native-id-ideographic-padded | native-id-ideographic-padded.json | conflict.archive_corrupt | archive.record]",
            "Native ids are trimmed, control-free, not option-shaped and at most 1024 bytes [native-id-line-separator-end | native-id-line-separator-end.json | conflict.archive_corrupt | archive.record]",
            "Owner ids are trimmed, control-free and at most 120 bytes [integration-id-em-space-end | integration-id-em-space-end.json | conflict.archive_corrupt | archive.record]",
            "Owner ids are trimmed, control-free and at most 120 bytes [plugin-id-nbsp-padded | plugin-id-nbsp-padded.json | conflict.archive_corrupt | archive.record]",
        ],
        non_strict: &[],
        pins: "",
    },
    Switch {
        defect: "launch-client-no-readback",
        checker: false,
        tags: "@asr-readback",
        fails: &["A launch client whose record reads back altered fails and gets the new pane killed"],
        non_strict: &[],
        pins: "",
    },
    Switch {
        defect: "save-split-inherits-record",
        checker: false,
        tags: "@asr-save-copies",
        fails: &["Save copies each split pane's own record, and none to a split without one"],
        non_strict: &[],
        pins: "",
    },
    Switch {
        defect: "save-recheck-count-only",
        checker: false,
        tags: "@asr-save-stable",
        fails: &["A pane replaced after its record was read is not archived, though the pane count is unchanged"],
        non_strict: &[],
        pins: "",
    },
    Switch {
        defect: "restore-cwd-ignored",
        checker: false,
        tags: "@asr-restore-current",
        fails: &["A restored native pane runs in the working directory its current template names"],
        non_strict: &[],
        pins: "",
    },
    Switch {
        defect: "restore-not-unique",
        checker: false,
        tags: "@asr-restore-oneshot or @asr-skip-existing",
        // The deterministic row: the name is taken between the read and the create.
        // The race row may fail too (see `interleaving_rows`).
        fails: &["A name another client takes after restore read the sessions is skipped, and that session is left alone"],
        non_strict: &[],
        pins: "",
    },
    Switch {
        defect: "restore-plan-late",
        checker: false,
        tags: "@asr-restore-fail-before",
        fails: &[
            "A native session whose integration no longer resolves is never created, nor its program started [removed | not_found.integration]",
            "A native session whose integration no longer resolves is never created, nor its program started [disabled | conflict.integration_disabled]",
            "A native session whose integration no longer resolves is never created, nor its program started [renamed | not_found.integration]",
            "A native session whose integration no longer resolves is never created, nor its program started [also declared by the plugin \"rival\" | conflict.integration_ambiguous]",
            "A native session whose integration no longer resolves is never created, nor its program started [also declared by the plugin \"zz-rival\" | conflict.integration_ambiguous]",
            "A native session whose integration no longer resolves is never created, nor its program started [now owned by the plugin id \"other\" | conflict.integration_owner]",
            "A native session whose integration no longer resolves is never created, nor its program started [moved to the plugin \"aaa-other\" | conflict.integration_owner]",
            "A native session whose integration no longer resolves is never created, nor its program started [moved to the plugin \"zz-other\" | conflict.integration_owner]",
            "A native session whose integration no longer resolves is never created, nor its program started [no longer restorable | unsupported.native_restore]",
        ],
        non_strict: &[],
        pins: "",
    },
    Switch {
        defect: "restore-owner-unchecked",
        checker: false,
        tags: "@asr-restore-fail-before",
        fails: &[
            "A native session whose integration no longer resolves is never created, nor its program started [now owned by the plugin id \"other\" | conflict.integration_owner]",
            "A native session whose integration no longer resolves is never created, nor its program started [moved to the plugin \"aaa-other\" | conflict.integration_owner]",
            "A native session whose integration no longer resolves is never created, nor its program started [moved to the plugin \"zz-other\" | conflict.integration_owner]",
        ],
        non_strict: &[],
        pins: "",
    },
    Switch {
        defect: "restore-ambiguous-takes-first",
        checker: false,
        tags: "@asr-restore-fail-before",
        // The owner sorts after "rival": taken first, the rival fails the owner
        // check before anything is created, only its error name differs. After
        // "zz-rival" the owner is taken and launched.
        fails: &["A native session whose integration no longer resolves is never created, nor its program started [also declared by the plugin \"zz-rival\" | conflict.integration_ambiguous]"],
        non_strict: &["A native session whose integration no longer resolves is never created, nor its program started [also declared by the plugin \"rival\" | conflict.integration_ambiguous]"],
        pins: "",
    },
    Switch {
        defect: "unicode-space-anywhere",
        checker: false,
        tags: "@asr-bounds-native or @asr-bounds-ids or @asr-archive-boundary",
        // The valid twins (an interior space) are refused.
        fails: &[
            "A native id's bound is in bytes, in every UTF-8 width, and its trim is Unicode's [an interior ideographic space | led by an ideographic space | native.padded]",
            "A native id's bound is in bytes, in every UTF-8 width, and its trim is Unicode's [an interior no-break space | ending in a no-break space | native.padded]",
            "A native id's bound is in bytes, in every UTF-8 width, and its trim is Unicode's [an interior line separator | ending in a line separator | native.padded]",
            "A native id's bound is in bytes, in every UTF-8 width, and its trim is Unicode's [an interior ideographic space | ending in an em space | native.padded]",
            "An owner id's bound is in bytes, in every UTF-8 width, and its trim is Unicode's [plugin_id | an interior ideographic space | led by an ideographic space | record.owner_padded]",
            "An owner id's bound is in bytes, in every UTF-8 width, and its trim is Unicode's [integration_id | an interior no-break space | ending in a no-break space | record.owner_padded]",
            "Archives phux writes, and the kit's valid cases, are read as valid [valid-id-interior-spaces | valid-id-interior-spaces.json]",
        ],
        non_strict: &[],
        pins: "",
    },
    Switch {
        defect: "evaluator-flag-alone",
        checker: true,
        tags: "@asr-no-evaluator",
        pins: "",
        fails: &[
            "The identity is never the program, nor source for an evaluator [evaluator-python3-Sc | evaluator-python3-Sc.toml | invalid_params.integration_template | template.interpreter]",
        ],
        non_strict: &[],
    },
    Switch {
        defect: "env-suffix-only",
        checker: true,
        tags: "@asr-env-namespace",
        fails: &[
            "Identity environment names stay in the PHUX_*_SESSION_ID namespace [env-outside-namespace | env-outside-namespace.toml | invalid_params.integration_template | template.native_env]",
            "Identity environment names stay in the PHUX_*_SESSION_ID namespace [env-lowercase-prefix | env-lowercase-prefix.toml | invalid_params.integration_template | template.native_env]",
            "Identity environment names stay in the PHUX_*_SESSION_ID namespace [env-prefix-inside | env-prefix-inside.toml | invalid_params.integration_template | template.native_env]",
        ],
        non_strict: &[],
        pins: "",
    },
    Switch {
        defect: "archive-closed-shapes",
        checker: true,
        tags: "@part-checker and not @optional-template-check",
        fails: &[
            "Members a reader does not know, outside the record, are read past",
        ],
        non_strict: &[],
        pins: "",
    },
    Switch {
        defect: "record-read-additively",
        checker: true,
        tags: "@asr-record-closed or @asr-archive-additive",
        fails: &[
            "A record holds exactly plugin_id, integration_id and native_id [record-unknown-member-in-additive-pane | record-unknown-member-in-additive-pane.json | conflict.archive_corrupt | archive.shape]",
            "A record holds exactly plugin_id, integration_id and native_id [record-with-argv | record-with-argv.json | conflict.archive_corrupt | archive.shape]",
            "A record holds exactly plugin_id, integration_id and native_id [record-with-env | record-with-env.json | conflict.archive_corrupt | archive.shape]",
        ],
        non_strict: &[],
        pins: "",
    },
    Switch {
        defect: "archive-depth-exclusive",
        checker: true,
        tags: "@asr-pin-archive-depth or @asr-archive-boundary",
        // Judged strictly: the profile declares the kit's cap (without, a pin's
        // difference is non-strict).
        fails: &[
            "The archive's nesting depth is bounded by the profile's cap, 128 unless it says otherwise",
        ],
        non_strict: &[],
        pins: "archive_max_depth = 128\n",
    },
    Switch {
        defect: "restore-no-probe",
        checker: false,
        tags: "@asr-restore-probe",
        fails: &["A server whose reserved namespace takes a client's write is refused before anything is created, whatever it advertises"],
        // Against the older server it is refused in time, for lacking the result
        // capability: only the rule differs.
        non_strict: &["An older server, whose reserved namespace is writable, is refused before anything is created"],
        pins: "",
    },
    Switch {
        defect: "record-lenient-json",
        checker: false,
        tags: "@asr-record-closed",
        fails: &[
            "A record that is not strict JSON is refused before its shape is read",
        ],
        non_strict: &[],
        pins: "",
    },
    Switch {
        defect: "expand-id-split-on-spaces",
        checker: false,
        tags: "@asr-expand-element",
        fails: &[
            "A hostile id arrives as one argv element, never as shell text",
        ],
        non_strict: &[],
        pins: "",
    },
    Switch {
        defect: "launch-mints-without-fresh",
        checker: false,
        tags: "@asr-launch-mint",
        fails: &[
            "Without an id and without fresh_args, nothing is minted",
        ],
        non_strict: &[],
        pins: "",
    },
    Switch {
        defect: "launch-reply-restorable",
        checker: false,
        tags: "@asr-launch-plain",
        fails: &[
            "A provider without native identity launches plain, without a record",
        ],
        non_strict: &[],
        pins: "",
    },
    Switch {
        defect: "fallback-client-no-set",
        checker: false,
        tags: "@asr-fallback",
        fails: &[
            "Against an older server, which ignores the spawn field, the client sets and confirms the record",
            "Against an older server, a record the client cannot confirm gets the new pane killed",
        ],
        non_strict: &[],
        pins: "",
    },
    Switch {
        defect: "save-always-schema-2",
        checker: false,
        tags: "@asr-save-copies",
        fails: &[
            "A save without records writes schema 1",
        ],
        non_strict: &[],
        pins: "",
    },
    Switch {
        defect: "archived-command-runs",
        checker: false,
        tags: "@asr-no-archive-authority",
        // The row waits for the fallback's dump, which never comes: a timeout.
        fails: &[
            "A schema-1 archive's command never runs: its panes get the fallback argv",
        ],
        non_strict: &[],
        pins: "",
    },
    Switch {
        defect: "launch-disabled-owner-used",
        checker: false,
        tags: "@asr-restore-fail-before",
        // Only a change the daemon learns after restore's plan reaches its check.
        fails: &[
            "A plugin change that lands between restore's plan and its launch starts no program of any owner [disabled | conflict.integration_disabled]",
        ],
        // The owner, disabled, counted beside the new one: ambiguous, refused in time.
        non_strict: &["A plugin change that lands between restore's plan and its launch starts no program of any owner [moved to the plugin \"zz-other\" | conflict.integration_owner]"],
        pins: "",
    },
    Switch {
        defect: "launch-ambiguous-takes-first",
        checker: false,
        tags: "@asr-restore-fail-before",
        fails: &[
            "A plugin change that lands between restore's plan and its launch starts no program of any owner [also declared by the plugin \"zz-rival\" | conflict.integration_ambiguous]",
        ],
        non_strict: &[],
        pins: "",
    },
    Switch {
        defect: "launch-expected-owner-ignored",
        checker: false,
        tags: "@asr-restore-fail-before",
        fails: &[
            "A plugin change that lands between restore's plan and its launch starts no program of any owner [now owned by the plugin id \"other\" | conflict.integration_owner]",
            "A plugin change that lands between restore's plan and its launch starts no program of any owner [moved to the plugin \"zz-other\" | conflict.integration_owner]",
        ],
        non_strict: &[],
        pins: "",
    },
    Switch {
        defect: "restore-without-expected-owner",
        checker: false,
        tags: "@asr-restore-fail-before",
        fails: &[
            "A plugin change that lands between restore's plan and its launch starts no program of any owner [now owned by the plugin id \"other\" | conflict.integration_owner]",
            "A plugin change that lands between restore's plan and its launch starts no program of any owner [moved to the plugin \"zz-other\" | conflict.integration_owner]",
        ],
        non_strict: &[],
        pins: "",
    },
    Switch {
        defect: "spawn-failure-keeps-pane",
        checker: false,
        tags: "@asr-spawn-reap",
        fails: &["A program that cannot start leaves no pane and no record"],
        non_strict: &[],
        pins: "",
    },
    Switch {
        defect: "native-length-modified-utf8",
        checker: false,
        tags: "@asr-bounds-native or @asr-archive-boundary",
        // Only four-byte characters differ: the valid id at the bound of them is
        // refused, on both write paths and in the archive.
        fails: &[
            "A native id's bound is in bytes, in every UTF-8 width, and its trim is Unicode's [1024 bytes of four-byte characters | 1025 bytes of four-byte characters | native.length]",
            "Archives phux writes, and the kit's valid cases, are read as valid [valid-id-bounds-multibyte | valid-id-bounds-multibyte.json]",
        ],
        non_strict: &[],
        pins: "",
    },
    Switch {
        defect: "fallback-checked-late",
        checker: false,
        tags: "@asr-no-archive-authority",
        // "No session is named" holds (the session is removed again): the events
        // show it was created.
        fails: &["Panes without a record need a fallback argv, checked before anything is created"],
        non_strict: &[],
        pins: "",
    },
];

/// A row's name as the lists above write it.
fn row_name(s: &serde_json::Value) -> String {
    let name = s["name"].as_str().expect("name");
    match s["example"].as_str() {
        Some(e) => format!("{name} [{e}]"),
        None => name.to_string(),
    }
}

/// The switch's run: (exit code, the exit code its MUST fails call for, failing rows,
/// non-strict rows, rows of any other verdict but pass, with it).
fn run_switch(
    dir: &std::path::Path,
    sw: &Switch,
) -> (
    i32,
    i32,
    BTreeSet<String>,
    BTreeSet<String>,
    BTreeSet<String>,
) {
    let vxref = crate::common::bin_dir().join("vxref");
    let wrapper = crate::common::script(
        dir,
        &format!("vxref-{}", sw.defect),
        &format!(
            "VXREF_NEGATIVE_CONTROL={} exec {:?} \"$@\"",
            sw.defect, vxref
        ),
    );
    let (code, report) = if sw.checker {
        crate::common::run_profile(
            &format!(
                "name = \"negative-control\"\ncontracts = [\"agent-restore\"]\n\
                 features = [\"template-check\"]\n[agent_restore]\n\
                 archive_check = [{wrapper:?}, \"workspace\", \"check\", \"--json\", \"{{file}}\"]\n\
                 template_check = [{wrapper:?}, \"integration\", \"check\", \"--json\", \"{{file}}\"]\n\
                 [agent_restore.pins]\n{}",
                sw.pins
            ),
            &["--tags", &format!("({}) and not @optional-agent-server", sw.tags)],
        )
    } else {
        let serve = format!(
            "[{wrapper:?}, \"serve\", \"--socket\", \"{{socket}}\"]\n[readiness]\nkind = \"socket\""
        );
        // The older server's rows too, with the same defect.
        let legacy = format!(
            "legacy_serve = [{wrapper:?}, \"serve\", \"--socket\", \"{{socket}}\", \"--legacy-spawn\"]\n"
        );
        server_rows_report_with(&wrapper, &serve, "{socket}", PLUGINS_DIR, &legacy, sw.tags)
    };
    let (mut fail, mut non_strict, mut other) = (BTreeSet::new(), BTreeSet::new(), BTreeSet::new());
    let mut must_fails = false;
    for s in report["scenarios"].as_array().expect("scenarios") {
        must_fails |=
            matches!(s["verdict"].as_str(), Some("fail" | "timeout")) && s["level"] != "should";
        match s["verdict"].as_str() {
            // A timeout fails the run as a failure does (a wait for what the defect
            // never does).
            Some("fail" | "timeout") => fail.insert(row_name(s)),
            Some("non-strict") => non_strict.insert(row_name(s)),
            Some("pass") => false,
            v => other.insert(format!("{} ({v:?})", row_name(s))),
        };
    }
    // A SHOULD row's fail leaves the run certified: exit 1 only when a MUST row fails.
    let want_code = i32::from(must_fails);
    (code, want_code, fail, non_strict, other)
}

/// Rows whose verdict under the switch depends on how two concurrent calls
/// interleave: the switch may fail them, and need not.
fn interleaving_rows(defect: &str) -> &'static [&'static str] {
    match defect {
        // Without `unique`, two restores that both read the sessions before either
        // creates both win (two sessions named "dup"); if one creates first, the
        // other reads the name and skips it, and the row passes.
        "restore-not-unique" => {
            &["Two restores of one name race: the winner's pane has the winner's record"]
        }
        _ => &[],
    }
}

/// Every switch fails exactly its rows (and leaves its non-strict ones so), and passes
/// the other rows its tags select.
#[test]
fn each_reference_switch_fails_exactly_its_new_rows() {
    crate::common::ensure_reference(&[]);
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path();
    // `VXCERT_SWITCHES=a,b` runs those switches only (while writing one).
    let only = std::env::var("VXCERT_SWITCHES").ok();
    let chosen = |sw: &&Switch| {
        only.as_ref()
            .is_none_or(|o| o.split(',').any(|n| n == sw.defect))
    };
    let outcomes: Vec<_> = std::thread::scope(|scope| {
        let runs: Vec<_> = SWITCHES
            .iter()
            .filter(chosen)
            .map(|sw| scope.spawn(move || (sw, run_switch(dir, sw))))
            .collect();
        runs.into_iter()
            .map(|r| r.join().expect("a switch's run"))
            .collect()
    });
    let mut wrong = Vec::new();
    for (sw, (code, want_code, mut fail, non_strict, other)) in outcomes {
        let (expected, expected_ns) = (names(sw.fails), names(sw.non_strict));
        let interleaving = interleaving_rows(sw.defect);
        fail.retain(|row| !interleaving.contains(&row.as_str()));
        if code != want_code || fail != expected || non_strict != expected_ns || !other.is_empty() {
            wrong.push(format!(
                "{}: expected exit {want_code}, failing {expected:#?}, non-strict {expected_ns:#?}, the \
                 others passing; observed exit {code}, failing {fail:#?}, non-strict \
                 {non_strict:#?}, other verdicts {other:#?}",
                sw.defect
            ));
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}
