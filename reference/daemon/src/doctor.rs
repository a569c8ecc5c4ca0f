//! `doctor` (RFC §6 "Doctor", RFC §5's archive check): named checks with a status
//! each, built from facts the reactor holds (config, archives, restores) and facts
//! the recovery worker holds (the store's safety, health and counts).
//!
//! Redaction is structural: the report is assembled only from booleans, counts,
//! config bounds, timestamps and fixed error codes. No field takes a path, a
//! resource or preset name, a checkpoint id, terminal text, argv, an environment
//! value, a token or a store error's reason.

use crate::config::schema::{Recovery as RecoveryConfig, TerminalText};
use crate::errors::ErrorCode;
use serde_json::{json, Value};
use vx_format::Timestamp;
use vx_store::{Health, StoreSummary};

/// A check's status, ordered by severity.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Status {
    Ok,
    Info,
    Warning,
    Error,
}

impl Status {
    pub fn as_str(self) -> &'static str {
        match self {
            Status::Ok => "ok",
            Status::Info => "info",
            Status::Warning => "warning",
            Status::Error => "error",
        }
    }
}

/// The config file as doctor re-read it (side-effect free, like `config.check`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ConfigFile {
    /// It validates (a missing file is the defaults, and valid).
    Valid,
    /// It does not validate: the next reload would fail with this code.
    Invalid(ErrorCode),
    /// The daemon has no config path (no config home could be resolved).
    NoPath,
}

/// What the reactor knows at the doctor turn.
#[derive(Debug, Clone)]
pub struct ReactorFacts {
    pub recovery: RecoveryConfig,
    pub config_file: ConfigFile,
    /// The code of the last failed `config.reload`, cleared by a successful one.
    pub last_reload_error: Option<ErrorCode>,
    /// Archives in the tree now.
    pub archives: u64,
    /// Sum of `cut_rows` over the archives in the tree now.
    pub cut_rows: u64,
    /// Archives in the tree now that are floats whose saved preset was unknown at
    /// restore and fell back to `.floats.default`.
    pub unknown_presets: u64,
    /// Restores committed by this daemon start.
    pub restores: u64,
}

/// The store as the worker sees it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StoreState {
    /// Open, and the held directory still is a private directory of the owner.
    Safe,
    /// Open, but the held directory is no longer private to the owner.
    Unsafe,
    /// Could not be opened (unresolvable location, unsafe path, I/O); the code.
    Unavailable(&'static str),
    /// Recovery is disabled and no verb has opened the store yet: not touched.
    NotOpened,
}

/// What the recovery worker knows.
#[derive(Debug, Clone)]
pub struct StoreFacts {
    pub state: StoreState,
    /// Counts and bytes, when the store is open and could be scanned.
    pub summary: Option<StoreSummary>,
    /// The code of a failed scan.
    pub summary_error: Option<&'static str>,
    pub health: Health,
}

fn time(t: Option<Timestamp>) -> Value {
    t.and_then(vx_format::time::format_timestamp)
        .map_or(Value::Null, Value::String)
}

fn code(e: Option<&vx_store::StoreError>) -> Value {
    e.map_or(Value::Null, |e| json!(e.code.as_str()))
}

fn check(name: &str, status: Status, summary: &str, mut fields: Value) -> Value {
    let mut out = json!({"name": name, "status": status.as_str(), "summary": summary});
    if let (Some(o), Some(f)) = (out.as_object_mut(), fields.as_object_mut()) {
        o.append(f);
    }
    out
}

fn store_check(r: &ReactorFacts, s: &StoreFacts) -> (Status, Value) {
    let enabled = r.recovery.enabled;
    let (status, summary, state) = match (&s.state, enabled) {
        (_, false) => (
            Status::Info,
            "recovery is disabled: nothing is written or restored",
            store_state(&s.state),
        ),
        (StoreState::Safe, true) => (
            Status::Ok,
            "the store directory is private to the owner",
            "safe",
        ),
        (StoreState::Unsafe, true) => (
            Status::Error,
            "the store directory is not private to the owner; it is never repaired",
            "unsafe",
        ),
        (StoreState::Unavailable(_), true) | (StoreState::NotOpened, true) => {
            (Status::Error, "the store cannot be opened", "unavailable")
        }
    };
    let mut fields = json!({"enabled": enabled, "store": state});
    if let StoreState::Unavailable(c) = s.state {
        fields["code"] = json!(c);
    }
    (status, check("store", status, summary, fields))
}

fn store_state(s: &StoreState) -> &'static str {
    match s {
        StoreState::Safe => "safe",
        StoreState::Unsafe => "unsafe",
        StoreState::Unavailable(_) => "unavailable",
        StoreState::NotOpened => "not_opened",
    }
}

fn config_check(r: &ReactorFacts) -> Value {
    let (status, summary, file) = match (&r.config_file, &r.last_reload_error) {
        (ConfigFile::Invalid(_), _) => (
            Status::Warning,
            "the config file does not validate; the effective config is unchanged",
            "invalid",
        ),
        (file, Some(_)) => (
            Status::Warning,
            "the last reload failed; the effective config is unchanged",
            match file {
                ConfigFile::NoPath => "none",
                _ => "valid",
            },
        ),
        (ConfigFile::Valid, None) => (Status::Ok, "the config file validates", "valid"),
        (ConfigFile::NoPath, None) => (
            Status::Info,
            "no config file location; the defaults are in effect",
            "none",
        ),
    };
    let mut fields = json!({
        "file": file,
        "last_reload_error": r.last_reload_error.map(|c| c.as_str()),
    });
    if let ConfigFile::Invalid(c) = &r.config_file {
        fields["code"] = json!(c.as_str());
    }
    check("config", status, summary, fields)
}

/// RFC §5: the archive check. Warning when any restore happened this start (the
/// old processes' cleanup is never verified), when hydration cut rows, or when a
/// restored float's preset was unknown.
fn archives_check(r: &ReactorFacts) -> (Status, Value) {
    let cleanup_unverified = r.restores > 0;
    let status = if cleanup_unverified || r.cut_rows > 0 || r.unknown_presets > 0 {
        Status::Warning
    } else {
        Status::Ok
    };
    let summary = if r.cut_rows > 0 {
        "restored text was cut at the last column in some rows"
    } else if r.unknown_presets > 0 {
        "restored floats with an unknown preset use floats.default"
    } else if cleanup_unverified {
        "processes of the restored checkpoint may still run; nothing verified their cleanup"
    } else {
        "no restore in this daemon start"
    };
    let fields = archive_fields(r);
    (status, check("recovery.archives", status, summary, fields))
}

fn archive_fields(r: &ReactorFacts) -> Value {
    json!({
        "archives": r.archives,
        "cleanup_unverified": r.restores > 0,
        "cut_rows": r.cut_rows,
        "unknown_presets": r.unknown_presets,
    })
}

fn bounds(c: &RecoveryConfig) -> Value {
    json!({
        "interval_ms": c.interval_ms,
        "max_checkpoints": c.max_checkpoints,
        "max_checkpoint_bytes": c.max_checkpoint_bytes,
        "effective_max_checkpoint_bytes": c.store_config().max_bytes(),
        "max_age_seconds": c.max_age_seconds,
        "terminal_text": match c.terminal_text {
            TerminalText::Off => "off",
            TerminalText::Plain => "plain",
        },
        "text_enabled": c.text_enabled(),
        "text_max_rows": c.text_max_rows,
        "text_max_bytes": c.text_max_bytes,
        "text_max_age_seconds": c.text_max_age_seconds,
    })
}

/// RFC §6's `recovery` check.
fn recovery_check(r: &ReactorFacts, s: &StoreFacts, store: Status, archives: Status) -> Value {
    let h = &s.health;
    let invalid = s
        .summary
        .map(|m| m.corrupt + m.incompatible + m.unsafe_entries + m.future);
    let mut status = store.max(archives);
    let mut summary = match store {
        Status::Info => "recovery is disabled",
        Status::Error => "the store is unsafe or cannot be opened",
        _ => "checkpoints are written and pruned normally",
    };
    if invalid.is_some_and(|n| n > 0) && status < Status::Warning {
        status = Status::Warning;
        summary = "the store holds files that cannot be restored";
    }
    if archives == Status::Warning && status == Status::Warning {
        summary = "restored archives need attention (see recovery.archives)";
    }
    if s.summary_error.is_some() {
        status = Status::Error;
        summary = "the store could not be scanned";
    }
    if h.last_cleanup_error.is_some() {
        status = Status::Error;
        summary = "the last prune or cleanup failed; published checkpoints are kept";
    }
    if h.last_error.is_some() {
        status = Status::Error;
        summary = "the last checkpoint write failed";
    }
    let mut fields = json!({
        "enabled": r.recovery.enabled,
        "store": store_state(&s.state),
        "writable": match (&s.state, h.last_error.is_some()) {
            (StoreState::Safe, false) => json!(true),
            (StoreState::Safe, true) | (StoreState::Unsafe, _) => json!(false),
            _ => Value::Null,
        },
        "bounds": bounds(&r.recovery),
        "last_attempt": time(h.last_attempt),
        "last_success": time(h.last_success),
        "last_error": code(h.last_error.as_ref()),
        "last_cleanup_error": code(h.last_cleanup_error.as_ref()),
        "scan_error": s.summary_error,
    });
    match s.summary {
        Some(m) => {
            fields["retained"] = json!(m.valid);
            fields["invalid"] = json!(invalid.unwrap_or(0));
            fields["expired"] = json!(m.expired);
            fields["checkpoint_files"] = json!({
                "valid": m.valid,
                "corrupt": m.corrupt,
                "incompatible": m.incompatible,
                "expired": m.expired,
                "future": m.future,
                "unsafe": m.unsafe_entries,
            });
            fields["temp_files"] = json!(m.temp_files);
            fields["bytes"] = json!(m.bytes);
        }
        None => {
            for k in ["retained", "invalid", "expired", "temp_files", "bytes"] {
                fields[k] = Value::Null;
            }
        }
    }
    if let (Some(o), Some(a)) = (fields.as_object_mut(), archive_fields(r).as_object_mut()) {
        o.append(a);
    }
    check("recovery", status, summary, fields)
}

/// The whole `doctor` result: `store` and `config` first, then `recovery` and
/// `recovery.archives`.
pub fn report(r: &ReactorFacts, s: &StoreFacts) -> Value {
    let (store_status, store) = store_check(r, s);
    let (archives_status, archives) = archives_check(r);
    let recovery = recovery_check(r, s, store_status, archives_status);
    json!({"checks": [store, config_check(r), recovery, archives]})
}

#[cfg(test)]
mod tests {
    use super::*;
    use vx_store::{ErrorCode, StoreError};

    fn reactor(enabled: bool) -> ReactorFacts {
        ReactorFacts {
            recovery: RecoveryConfig {
                enabled,
                ..Default::default()
            },
            config_file: ConfigFile::Valid,
            last_reload_error: None,
            archives: 0,
            cut_rows: 0,
            unknown_presets: 0,
            restores: 0,
        }
    }

    fn store(state: StoreState) -> StoreFacts {
        StoreFacts {
            state,
            summary: Some(StoreSummary::default()),
            summary_error: None,
            health: Health::default(),
        }
    }

    fn statuses(v: &Value) -> Vec<(String, String)> {
        v["checks"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| {
                (
                    c["name"].as_str().unwrap().to_string(),
                    c["status"].as_str().unwrap().to_string(),
                )
            })
            .collect()
    }

    fn pairs(list: &[(&str, &str)]) -> Vec<(String, String)> {
        list.iter()
            .map(|(a, b)| (a.to_string(), b.to_string()))
            .collect()
    }

    #[test]
    fn a_healthy_enabled_daemon_is_ok_and_store_and_config_come_first() {
        let v = report(&reactor(true), &store(StoreState::Safe));
        assert_eq!(
            statuses(&v),
            pairs(&[
                ("store", "ok"),
                ("config", "ok"),
                ("recovery", "ok"),
                ("recovery.archives", "ok")
            ])
        );
        assert_eq!(v["checks"][2]["writable"], true);
        assert_eq!(v["checks"][2]["cleanup_unverified"], false);
    }

    #[test]
    fn disabled_is_info_and_unsafe_or_unavailable_enabled_stores_are_errors() {
        let v = report(&reactor(false), &store(StoreState::NotOpened));
        assert_eq!(statuses(&v)[0].1, "info");
        assert_eq!(statuses(&v)[2].1, "info");
        for state in [
            StoreState::Unsafe,
            StoreState::Unavailable("unavailable.recovery_io"),
        ] {
            let v = report(&reactor(true), &store(state));
            assert_eq!(statuses(&v)[0].1, "error");
            assert_eq!(statuses(&v)[2].1, "error");
        }
    }

    #[test]
    fn failed_writes_and_failed_prunes_are_errors_with_codes_only() {
        let mut s = store(StoreState::Safe);
        s.health.last_error = Some(StoreError::io("rename of /secret/path failed"));
        let v = report(&reactor(true), &s);
        assert_eq!(v["checks"][2]["status"], "error");
        assert_eq!(v["checks"][2]["last_error"], "unavailable.recovery_io");
        assert_eq!(v["checks"][2]["writable"], false);
        assert!(!v.to_string().contains("/secret"), "no reason text: {v}");
        let mut s = store(StoreState::Safe);
        s.health.last_cleanup_error = Some(StoreError::new(ErrorCode::RecoveryIo, "unlink"));
        let v = report(&reactor(true), &s);
        assert_eq!(v["checks"][2]["status"], "error");
        assert_eq!(
            v["checks"][2]["last_cleanup_error"],
            "unavailable.recovery_io"
        );
    }

    #[test]
    fn restores_cut_rows_and_unknown_presets_are_warnings() {
        let mut r = reactor(true);
        r.restores = 1;
        r.archives = 2;
        let v = report(&r, &store(StoreState::Safe));
        assert_eq!(v["checks"][3]["status"], "warning");
        assert_eq!(v["checks"][3]["cleanup_unverified"], true);
        assert_eq!(v["checks"][2]["status"], "warning");
        let mut r = reactor(true);
        r.cut_rows = 3;
        assert_eq!(
            report(&r, &store(StoreState::Safe))["checks"][3]["cut_rows"],
            3
        );
        let mut r = reactor(true);
        r.unknown_presets = 1;
        assert_eq!(
            report(&r, &store(StoreState::Safe))["checks"][3]["status"],
            "warning"
        );
        assert!(!v.to_string().contains("cleanup_verified"));
    }

    #[test]
    fn invalid_files_warn_and_config_problems_warn() {
        let mut s = store(StoreState::Safe);
        s.summary = Some(StoreSummary {
            corrupt: 1,
            valid: 2,
            bytes: 10,
            ..Default::default()
        });
        let v = report(&reactor(true), &s);
        assert_eq!(v["checks"][2]["status"], "warning");
        assert_eq!(
            (
                v["checks"][2]["retained"].clone(),
                v["checks"][2]["invalid"].clone()
            ),
            (json!(2), json!(1))
        );
        let mut r = reactor(true);
        r.config_file = ConfigFile::Invalid(crate::errors::ErrorCode::Param("config"));
        assert_eq!(
            report(&r, &store(StoreState::Safe))["checks"][1]["status"],
            "warning"
        );
        let mut r = reactor(true);
        r.last_reload_error = Some(crate::errors::ErrorCode::RecoveryIo);
        assert_eq!(
            report(&r, &store(StoreState::Safe))["checks"][1]["status"],
            "warning"
        );
    }
}
