//! Deliberate defects of the reference daemon, for the kit's negative controls only
//! (`harness/tests/negative_controls.rs`): `VXREF_NEGATIVE_CONTROL` names one, and the
//! recovery suite must fail exactly the scenarios that catch it. No shipped profile
//! sets it; unset (or an unknown name), `vxref` is the reference.
//!
//! - `skill-recommends-owner`: `vxref manifest --skill` tells agents to retry a denied
//!   verb with `VENOMX_TOKEN=@owner` (RFC §1: generated skills must not recommend it).
//! - `created-result-shared`: a one-shot `session.created/v1/<token>` result is
//!   readable by any connection and is not consumed by a read (seed point 6).
//! - `checkpoint-keeps-pid`: every new pane carries a `pid` tag with its child's PID,
//!   so checkpoints hold it (RFC §2/§4: a checkpoint holds no PID).
//! - `spawn-log`: every pane's argv is appended to `$XDG_STATE_HOME/vxref-spawn.log`,
//!   as a daemon logging its spawns would (outside the store: the kit's pin
//!   `rfc-pin-secret-scan-scope`, not a MUST).
//!
//! ADR-0068's (agent-restore), each the mistake of one mutant of
//! `harness/mutants/agent-restore/` (`harness/tests/negative_controls_agent_restore.rs`
//! lists the rows each must fail). The record rules apply to records the daemon
//! takes (`pane.create`/`pane.split`/`agent.launch` spawn field, `meta.set`), a
//! save reads back and the offline archive checker reads (`crate::negative_checker`,
//! which also holds the checker-only switches); restore's archive reader keeps the
//! real rules.
//! - `native-length-in-chars`: the 1024-byte native-id bound counted in characters.
//! - `owner-length-in-chars`: the 120-byte plugin/integration id bound in characters.
//! - `trim-ascii-whitespace`: "trimmed" means no ASCII whitespace at either end, so
//!   U+3000, U+00A0, U+2028 or U+2003 at an end pass (native and owner ids).
//! - `launch-client-no-readback`: the launching client trusts `agent.launch`'s reply
//!   on a current server and never reads the record back.
//! - `save-split-inherits-record`: save archives a pane without a record with the
//!   record of the pane before it in its window.
//! - `save-recheck-count-only`: save compares only the number of panes before and
//!   after the record reads.
//! - `restore-cwd-ignored`: the template's `working_directory` is ignored when the
//!   launch names the expected owner (restore's launch).
//! - `restore-not-unique`: restore creates its sessions without `unique`.
//! - `restore-plan-late`: restore does not plan its native sessions before creating
//!   them (agent.launch refuses later and the session is removed again).
//! - `restore-owner-unchecked`: restore's plan does not compare the current owner.
//! - `restore-ambiguous-takes-first`: restore's plan takes the first enabled owner.
//! - `restore-no-probe`: native restore does not probe the reserved namespace.
//! - `unicode-space-anywhere`: a Unicode space that is not ASCII (U+3000, U+00A0,
//!   U+2028, …) is refused as padding wherever it is in an id, inside too.
//! - `record-lenient-json`: a record that is not strict JSON (a duplicate member) is
//!   read by a lenient parser (the last duplicate wins) and judged by its ids.
//! - `expand-id-split-on-spaces`: the identity element is split on spaces, as a
//!   shell would.
//! - `launch-mints-without-fresh`: a UUID is minted for every restorable template,
//!   not only one whose `fresh_args` documents it.
//! - `launch-reply-restorable`: `agent.launch`'s reply says `restorable: true` for
//!   a plain launch too.
//! - `fallback-client-no-set`: against an older server the launching client trusts
//!   the spawn field it ignores: it neither sets nor confirms the record.
//! - `save-always-schema-2`: a save without records is stamped schema 2.
//! - `archived-command-runs`: restore starts a window's first record-less pane with
//!   the archived `command`, not the fallback argv.
//! - `launch-ambiguous-takes-first`, `launch-disabled-owner-used`,
//!   `launch-expected-owner-ignored`: `agent.launch`'s own owner checks (the first of
//!   several enabled owners taken; disabled owners kept; `expect_plugin_id` ignored).
//! - `restore-without-expected-owner`: restore's launch does not name the archived
//!   owner (`expect_plugin_id`).
//! - `native-length-modified-utf8`: the 1024-byte native-id bound measured in Java's
//!   modified UTF-8 (`DataOutputStream.writeUTF`, JNI's `GetStringUTFLength`), where a
//!   four-byte character takes six bytes (two three-byte surrogates): a valid id of
//!   four-byte characters at the bound is refused.
//! - `fallback-checked-late`: restore does not check for a missing fallback argv
//!   before it creates anything; the pane that needs one fails it, and the session
//!   is removed again.
//! - `spawn-failure-keeps-pane`: a new window's pane whose program cannot start is
//!   kept, exited, with its record (tmux's remain-on-exit), though the call reports
//!   `unavailable.spawn`.
//! - `env-suffix-only`, `archive-closed-shapes`, `record-read-additively`,
//!   `archive-depth-exclusive`, `evaluator-flag-alone`: the offline checkers'
//!   (`crate::negative_checker`).

use std::sync::OnceLock;
use vx_agentsession::limits::{MAX_NATIVE_ID_BYTES, MAX_OWNER_ID_BYTES};
use vx_agentsession::record::Record;
use vx_agentsession::rules::has_control;

/// The variable that selects a defect.
pub const ENV: &str = "VXREF_NEGATIVE_CONTROL";

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Defect {
    SkillRecommendsOwner,
    CreatedResultShared,
    CheckpointKeepsPid,
    NativeLengthInChars,
    OwnerLengthInChars,
    TrimAsciiWhitespace,
    LaunchClientNoReadback,
    SaveSplitInheritsRecord,
    SaveRecheckCountOnly,
    RestoreCwdIgnored,
    RestoreNotUnique,
    RestorePlanLate,
    RestoreOwnerUnchecked,
    RestoreAmbiguousTakesFirst,
    RestoreNoProbe,
    UnicodeSpaceAnywhere,
    EnvSuffixOnly,
    ArchiveClosedShapes,
    RecordReadAdditively,
    ArchiveDepthExclusive,
    RecordLenientJson,
    ExpandIdSplitOnSpaces,
    LaunchMintsWithoutFresh,
    LaunchReplyRestorable,
    FallbackClientNoSet,
    SaveAlwaysSchema2,
    ArchivedCommandRuns,
    LaunchAmbiguousTakesFirst,
    LaunchDisabledOwnerUsed,
    LaunchExpectedOwnerIgnored,
    RestoreWithoutExpectedOwner,
    SpawnFailureKeepsPane,
    NativeLengthModifiedUtf8,
    FallbackCheckedLate,
    EvaluatorFlagAlone,
    SpawnLog,
}

impl Defect {
    pub const ALL: [Defect; 36] = [
        Defect::SkillRecommendsOwner,
        Defect::CreatedResultShared,
        Defect::CheckpointKeepsPid,
        Defect::NativeLengthInChars,
        Defect::OwnerLengthInChars,
        Defect::TrimAsciiWhitespace,
        Defect::LaunchClientNoReadback,
        Defect::SaveSplitInheritsRecord,
        Defect::SaveRecheckCountOnly,
        Defect::RestoreCwdIgnored,
        Defect::RestoreNotUnique,
        Defect::RestorePlanLate,
        Defect::RestoreOwnerUnchecked,
        Defect::RestoreAmbiguousTakesFirst,
        Defect::RestoreNoProbe,
        Defect::UnicodeSpaceAnywhere,
        Defect::EnvSuffixOnly,
        Defect::ArchiveClosedShapes,
        Defect::RecordReadAdditively,
        Defect::ArchiveDepthExclusive,
        Defect::RecordLenientJson,
        Defect::ExpandIdSplitOnSpaces,
        Defect::LaunchMintsWithoutFresh,
        Defect::LaunchReplyRestorable,
        Defect::FallbackClientNoSet,
        Defect::SaveAlwaysSchema2,
        Defect::ArchivedCommandRuns,
        Defect::LaunchAmbiguousTakesFirst,
        Defect::LaunchDisabledOwnerUsed,
        Defect::LaunchExpectedOwnerIgnored,
        Defect::RestoreWithoutExpectedOwner,
        Defect::SpawnFailureKeepsPane,
        Defect::NativeLengthModifiedUtf8,
        Defect::FallbackCheckedLate,
        Defect::EvaluatorFlagAlone,
        Defect::SpawnLog,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Defect::SkillRecommendsOwner => "skill-recommends-owner",
            Defect::CreatedResultShared => "created-result-shared",
            Defect::CheckpointKeepsPid => "checkpoint-keeps-pid",
            Defect::NativeLengthInChars => "native-length-in-chars",
            Defect::OwnerLengthInChars => "owner-length-in-chars",
            Defect::TrimAsciiWhitespace => "trim-ascii-whitespace",
            Defect::LaunchClientNoReadback => "launch-client-no-readback",
            Defect::SaveSplitInheritsRecord => "save-split-inherits-record",
            Defect::SaveRecheckCountOnly => "save-recheck-count-only",
            Defect::RestoreCwdIgnored => "restore-cwd-ignored",
            Defect::RestoreNotUnique => "restore-not-unique",
            Defect::RestorePlanLate => "restore-plan-late",
            Defect::RestoreOwnerUnchecked => "restore-owner-unchecked",
            Defect::RestoreAmbiguousTakesFirst => "restore-ambiguous-takes-first",
            Defect::RestoreNoProbe => "restore-no-probe",
            Defect::UnicodeSpaceAnywhere => "unicode-space-anywhere",
            Defect::EnvSuffixOnly => "env-suffix-only",
            Defect::ArchiveClosedShapes => "archive-closed-shapes",
            Defect::RecordReadAdditively => "record-read-additively",
            Defect::ArchiveDepthExclusive => "archive-depth-exclusive",
            Defect::RecordLenientJson => "record-lenient-json",
            Defect::ExpandIdSplitOnSpaces => "expand-id-split-on-spaces",
            Defect::LaunchMintsWithoutFresh => "launch-mints-without-fresh",
            Defect::LaunchReplyRestorable => "launch-reply-restorable",
            Defect::FallbackClientNoSet => "fallback-client-no-set",
            Defect::SaveAlwaysSchema2 => "save-always-schema-2",
            Defect::ArchivedCommandRuns => "archived-command-runs",
            Defect::LaunchAmbiguousTakesFirst => "launch-ambiguous-takes-first",
            Defect::LaunchDisabledOwnerUsed => "launch-disabled-owner-used",
            Defect::LaunchExpectedOwnerIgnored => "launch-expected-owner-ignored",
            Defect::RestoreWithoutExpectedOwner => "restore-without-expected-owner",
            Defect::SpawnFailureKeepsPane => "spawn-failure-keeps-pane",
            Defect::NativeLengthModifiedUtf8 => "native-length-modified-utf8",
            Defect::FallbackCheckedLate => "fallback-checked-late",
            Defect::EvaluatorFlagAlone => "evaluator-flag-alone",
            Defect::SpawnLog => "spawn-log",
        }
    }
}

/// Whether `d` is the defect this process was started with (read once).
pub fn active(d: Defect) -> bool {
    static CHOSEN: OnceLock<Option<Defect>> = OnceLock::new();
    let chosen = CHOSEN.get_or_init(|| {
        let name = std::env::var(ENV).ok()?;
        Defect::ALL.into_iter().find(|d| d.name() == name)
    });
    *chosen == Some(d)
}

/// Whether the active record-rule defect's rules accept `record`; `None` when no
/// defect that widens the id rules is active.
pub fn lenient_accepts(record: &Record) -> Option<bool> {
    let any = [
        Defect::NativeLengthInChars,
        Defect::OwnerLengthInChars,
        Defect::TrimAsciiWhitespace,
    ]
    .into_iter()
    .any(active);
    if !any {
        return None;
    }
    let len = |s: &str, defect: Defect| {
        if active(defect) {
            s.chars().count()
        } else {
            s.len()
        }
    };
    let trimmed = |s: &str| {
        if active(Defect::TrimAsciiWhitespace) {
            s.trim_ascii() == s
        } else {
            s.trim() == s
        }
    };
    let owner_ok = |s: &str| {
        (1..=MAX_OWNER_ID_BYTES).contains(&len(s, Defect::OwnerLengthInChars))
            && trimmed(s)
            && !has_control(s)
    };
    let n = &record.native_id;
    let native_ok = (1..=MAX_NATIVE_ID_BYTES).contains(&len(n, Defect::NativeLengthInChars))
        && trimmed(n)
        && !n.starts_with('-')
        && !has_control(n);
    Some(owner_ok(&record.plugin_id) && owner_ok(&record.integration_id) && native_ok)
}

/// Under a record-rule defect, the record `bytes` (already refused by the real rules
/// with `rule`) judged by the defective rules instead: `Some` when they accept it.
/// Only a refusal of an id rule is reconsidered; size, JSON and shape stay real.
pub fn lenient_record(bytes: &[u8], rule: &str) -> Option<Record> {
    let id_rule = matches!(
        rule,
        "native.length" | "native.padded" | "record.owner_length" | "record.owner_padded"
    );
    let lenient_json = rule == "record.json" && active(Defect::RecordLenientJson);
    if !id_rule && !lenient_json {
        return None;
    }
    // The real parse accepted the shape (its id rules run last): three strings; a
    // lenient parser keeps a duplicate member's last value.
    let map: std::collections::BTreeMap<String, String> = serde_json::from_slice(bytes).ok()?;
    let field = |k: &str| map.get(k).cloned();
    let record = Record {
        plugin_id: field("plugin_id")?,
        integration_id: field("integration_id")?,
        native_id: field("native_id")?,
    };
    if lenient_json {
        return record.validate().is_ok().then_some(record);
    }
    (lenient_accepts(&record) == Some(true)).then_some(record)
}

/// Under `unicode-space-anywhere` or `native-length-modified-utf8`, the rule and
/// field a record the real rules accept is refused by: a non-ASCII space anywhere
/// taken for padding; a native id over the bound in modified UTF-8.
pub fn record_too_strict(record: &Record) -> Option<(&'static str, &'static str)> {
    if active(Defect::NativeLengthModifiedUtf8) {
        let modified: usize = record
            .native_id
            .chars()
            .map(|c| if c.len_utf8() == 4 { 6 } else { c.len_utf8() })
            .sum();
        return (modified > MAX_NATIVE_ID_BYTES).then_some(("native.length", "native_id"));
    }
    if !active(Defect::UnicodeSpaceAnywhere) {
        return None;
    }
    let spaced = |s: &str| s.chars().any(|c| c.is_whitespace() && !c.is_ascii());
    if spaced(&record.plugin_id) {
        Some(("record.owner_padded", "plugin_id"))
    } else if spaced(&record.integration_id) {
        Some(("record.owner_padded", "integration_id"))
    } else if spaced(&record.native_id) {
        Some(("native.padded", "native_id"))
    } else {
        None
    }
}
