//! One single-writer scenario's state: the profile's offline checkers and what the
//! last one said.

use crate::drivers::checker::{CheckerScenario, Said};
use crate::profile::{context, Profile};
use crate::verdict::OrHarness;
use serde::Deserialize;
use std::path::{Path, PathBuf};

/// The `[single_writer]` profile table: command templates.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Templates {
    /// One session key's verdict (`{key}`), as an existing session.
    pub key_check: Vec<String>,
    /// The same for a new session (placeholder ids allowed), e.g. with `--new`.
    #[serde(default)]
    pub key_check_new: Vec<String>,
    /// The resume plan; the suite appends `--have N --gen G --total T --ring-len L
    /// --master-gen M`, leaving out `--have`/`--gen` when absent.
    pub resume_plan: Vec<String>,
    /// One alias sidecar's or owner file's verdict (`{file}`).
    pub sidecar_check: Vec<String>,
    /// The broker (`{socket}`, `{runtime_dir}`, `{lock_dir}`, `{engines}`, …): the
    /// live rows start it in their sandbox.
    #[serde(default)]
    pub broker: Vec<String>,
    /// The same broker with take-over across instances on (the seed's `--takeover`):
    /// the `@optional-takeover` rows start two of them on one runtime directory.
    #[serde(default)]
    pub broker_takeover: Vec<String>,
    /// The same broker running each LAUNCH in a transient scope through
    /// `{scope_wrapper}` (the seed's `systemd-run`; the suite gives a stand-in that
    /// logs its arguments): the `@optional-scopes` rows.
    #[serde(default)]
    pub broker_scopes: Vec<String>,
    /// The variable the broker reads its per-scope properties from (the seed's
    /// `AGENT_SESSIONS_SCOPE_PROPERTIES`).
    #[serde(default)]
    pub scope_properties_env: String,
    /// The format of the engines file the suite writes for `{engines}`; only
    /// `"vxbroker"` (docs/spec/single-writer.md "Engines") today.
    #[serde(default = "vxbroker")]
    pub engines_format: String,
    /// The terminal route (`{engine}`, `{id}`); the suite appends the query.
    #[serde(default = "ws_path")]
    pub ws_path: String,
    /// The session list route.
    #[serde(default = "sessions_path")]
    pub sessions_path: String,
    /// The retire route (the seed's "archive"; `{key}`).
    #[serde(default = "archive_path")]
    pub archive_path: String,
    /// Where a session's master socket is (`{runtime_dir}`, `{physical}`).
    #[serde(default = "session_socket")]
    pub session_socket: String,
    /// A create-only master on `{socket}` (dtach `-n`, `vxbroker master --create`),
    /// program included: sw-mode-explicit.
    #[serde(default)]
    pub master_create: Vec<String>,
    /// An attach-only master on `{socket}` (dtach `-a`, `vxbroker master --attach`).
    #[serde(default)]
    pub master_attach: Vec<String>,
    /// The implementation's viewer (the seed's browser client as a command) on one
    /// session (`{address}` host:port, `{key}`, `{engine}`, `{id}`, `{fp}`, `{tab}`):
    /// it streams and reconnects by itself after a drop. sw-client-no-force.
    #[serde(default)]
    pub client: Vec<String>,
    /// The same viewer whose user asked for one explicit take-over.
    #[serde(default)]
    pub client_take_over: Vec<String>,
}

fn vxbroker() -> String {
    "vxbroker".into()
}
fn ws_path() -> String {
    "/ws/term/{engine}/{id}".into()
}
fn sessions_path() -> String {
    "/api/sessions".into()
}
fn archive_path() -> String {
    "/api/sessions/{key}/archive".into()
}
fn session_socket() -> String {
    "{runtime_dir}/{physical}.sock".into()
}

impl Templates {
    pub fn of(profile: &Profile) -> Result<Templates, String> {
        let table = profile
            .single_writer
            .clone()
            .ok_or("the profile has no [single_writer] table")?;
        let t: Templates = toml::Value::Table(table)
            .try_into()
            .map_err(|e| format!("the profile's [single_writer] table: {e}"))?;
        if t.engines_format != "vxbroker" {
            return Err(format!(
                "the profile's [single_writer].engines_format {:?}: the suite writes only \"vxbroker\"",
                t.engines_format
            ));
        }
        Ok(t)
    }
}

pub fn templates() -> Templates {
    Templates::of(&context().profile).or_harness("the profile's [single_writer] table")
}

/// The kit's corpus of this contract (verdicts from an independent generator).
pub fn corpus_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../corpus/broker")
}

/// One single-writer scenario: the offline checkers' sandbox.
pub struct Checks {
    pub bench: CheckerScenario,
    /// The live rows' brokers, viewers and probes; built by the first live step.
    live: Option<super::live::Live>,
}

impl Checks {
    pub fn new() -> Checks {
        Checks {
            bench: CheckerScenario::new(context().bin_dir.clone()),
            live: None,
        }
    }

    fn run(&mut self, words: Vec<String>) -> &Said {
        self.bench.run(words)
    }

    /// Judges one session key; the line must be about that key.
    pub fn check_key(&mut self, key: &str, new: bool) {
        let t = templates();
        let template = if new { t.key_check_new } else { t.key_check };
        let words = template.iter().map(|w| w.replace("{key}", key)).collect();
        let said = self.run(words);
        assert_eq!(
            said.line["key"].as_str(),
            Some(key),
            "the verdict names the key it judged: {}",
            said.line
        );
    }

    /// Asks for a resume plan; `None` counters are absent.
    pub fn plan(&mut self, have: Option<&str>, gen: Option<&str>, rest: [&str; 3]) {
        let mut words = templates().resume_plan;
        for (flag, v) in [("--have", have), ("--gen", gen)] {
            if let Some(v) = v {
                words.extend([flag.to_string(), v.to_string()]);
            }
        }
        for (flag, v) in ["--total", "--ring-len", "--master-gen"].iter().zip(rest) {
            words.extend([flag.to_string(), v.to_string()]);
        }
        self.run(words);
    }

    /// Judges one sidecar file (the pinned file verdict).
    pub fn check_sidecar(&mut self, file: &Path) {
        let template = templates().sidecar_check;
        self.bench.check_file(&template, file);
    }

    /// The live rows' state, built on first use.
    pub fn live(&mut self) -> &mut super::live::Live {
        self.live.get_or_insert_with(super::live::Live::new)
    }

    pub fn last(&self) -> &Said {
        self.bench.last()
    }
}
