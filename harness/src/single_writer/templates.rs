//! The `[single_writer]` profile table the suite reads: command templates, where the
//! suite looks (path templates and their placeholders), the session list's shape, the
//! keys each claimed part needs, and the kit's corpus directory.

use crate::contract::Contract;
use crate::profile::{context, Profile};
use crate::verdict::OrHarness;
use serde::Deserialize;
use std::path::PathBuf;

/// The `[single_writer]` profile table: command templates.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Templates {
    /// One session key's verdict (`{key}`), as an existing session (part `checker`).
    #[serde(default)]
    pub key_check: Vec<String>,
    /// The same for a new session (placeholder ids allowed), e.g. with `--new`.
    #[serde(default)]
    pub key_check_new: Vec<String>,
    /// The resume plan; the suite appends `--have N --gen G --total T --ring-len L
    /// --master-gen M`, leaving out `--have`/`--gen` when absent (part `checker`).
    #[serde(default)]
    pub resume_plan: Vec<String>,
    /// One alias sidecar's or owner file's verdict (`{file}`) (part `checker`).
    #[serde(default)]
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
    /// Where a session's master socket is (`{runtime_dir}`, `{physical}`, `{engine}`,
    /// `{id}`, `{key}`).
    #[serde(default = "session_socket")]
    pub session_socket: String,
    /// Where a session's single-writer lock file is, the file the suite flocks to
    /// probe and hold the lock (`{lock_dir}`, `{physical}`, `{engine}`, `{id}`,
    /// `{key}`); the seed's `{lock_dir}/{sanitized-key}.lock` by default.
    #[serde(default = "lock_path")]
    pub lock_path: String,
    /// Whether `master_create` and `master_attach` need a terminal: the suite runs
    /// them on a pty of their own (stdin, stdout, stderr and controlling terminal).
    #[serde(default)]
    pub master_tty: bool,
    /// Where the broker listens: `"unix"` (the default: on `{socket}`) or `"tcp"` (on a
    /// loopback port the suite picks, given to the broker commands as `{listen}`,
    /// `127.0.0.1:PORT`, and `{port}`).
    #[serde(default = "unix")]
    pub listen: String,
    /// Extra query parameters every terminal URL the suite opens carries
    /// (`name=value&…`, e.g. a token the implementation needs), after the seed's.
    #[serde(default)]
    pub ws_query: String,
    /// The query parameter a viewer names itself by, the label a secondary's role
    /// frame shows as its holder (`{label, since}`): the seed names the holder's
    /// label, not where it comes from. `"label"` by default; `""` when viewers cannot
    /// name themselves, and the take-over rows then ask only that a holder is named.
    #[serde(default = "label_param")]
    pub label_param: String,
    /// The viewer's input frame as the broker reads it, a JSON text template where
    /// `{data}` is the typed text as a JSON string (the seed names an "i" frame, not
    /// its members; the kit's `{"t":"i","d":{data}}` by default).
    #[serde(default = "input_frame")]
    pub input_frame: String,
    /// The viewer's resize frame, `{cols}` and `{rows}` numbers (the kit's
    /// `{"t":"r","cols":{cols},"rows":{rows}}` by default).
    #[serde(default = "resize_frame")]
    pub resize_frame: String,
    /// The broker's alias sidecar, read by the alias rows (`{runtime_dir}`).
    #[serde(default = "alias_sidecar")]
    pub alias_sidecar: String,
    /// Where in the alias sidecar (JSON) its aliases are: a JSON pointer to an object
    /// or array holding one member per alias, which the alias rows count.
    #[serde(default = "alias_sidecar_entries")]
    pub alias_sidecar_entries: String,
    /// A create-only master on `{socket}` (dtach `-n`, `vxbroker master --create`),
    /// program included: sw-mode-explicit.
    #[serde(default)]
    pub master_create: Vec<String>,
    /// An attach-only master on `{socket}` (dtach `-a`, `vxbroker master --attach`).
    #[serde(default)]
    pub master_attach: Vec<String>,
    /// A command run once per scenario's broker sandbox after the suite wrote its
    /// fixtures and before anything of the implementation starts (`{lock_dir}`,
    /// `{engines}`, `{history}`, `{agent}`, `{missing_program}` and the sandbox's
    /// directories): e.g. to write the fixture's engines in the implementation's own
    /// format.
    #[serde(default)]
    pub setup: Vec<String>,
    /// A command run when the scenario's broker sandbox goes (its exit ignored).
    #[serde(default)]
    pub teardown: Vec<String>,
    /// The session list's shape (`[single_writer.list]`): where its rows are and
    /// what each row's members and states are called; the kit's names by default.
    #[serde(default)]
    pub list: ListShape,
    /// `master_create` daemonizes (dtach `-n`): it exits 0 once its master serves in
    /// the background, so the suite waits for the socket, not the process.
    #[serde(default)]
    pub master_daemonizes: bool,
    /// The implementation's viewer (the seed's browser client as a command) on one
    /// session (`{address}` host:port, `{key}`, `{engine}`, `{id}`, `{fp}`, `{tab}`):
    /// it streams and reconnects by itself after a drop. sw-client-no-force.
    #[serde(default)]
    pub client: Vec<String>,
    /// The same viewer whose user asked for one explicit take-over.
    #[serde(default)]
    pub client_take_over: Vec<String>,
    /// The engines the implementation knows, each with its id class (`"uuid"` or
    /// `"ses"`): the checker rows judge a corpus key's engine as known or unknown by
    /// it (the seed's claude, gemini and opencode by default).
    #[serde(default = "super::engines::kit_known")]
    pub known_engines: std::collections::BTreeMap<String, String>,
    /// The engine the missing-program row opens: the suite's engines file gives it
    /// a program that does not exist (`{missing_program}`); a broker with engines of
    /// its own names one it knows and points it there in its setup hook.
    #[serde(default = "super::engines::kit_missing")]
    pub missing_program_engine: String,
}

/// How the session list names what the rows read (`sessions_path`'s reply).
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct ListShape {
    /// A JSON pointer to the array of rows.
    pub rows: String,
    /// The members of a row: its session key, the placeholder it is aliased to (when
    /// reconciled), its physical key, its state and whether a master is alive.
    pub key: String,
    pub alias: String,
    pub physical: String,
    pub state: String,
    pub alive: String,
    /// The state names: a live master with viewers, without, and a dead one.
    pub attached: String,
    pub detached: String,
    pub exited: String,
}

impl Default for ListShape {
    fn default() -> Self {
        let s = |v: &str| v.to_string();
        ListShape {
            rows: s("/sessions"),
            key: s("key"),
            alias: s("alias"),
            physical: s("physical_key"),
            state: s("state"),
            alive: s("alive"),
            attached: s("attached"),
            detached: s("detached"),
            exited: s("exited"),
        }
    }
}

impl ListShape {
    /// The list's rows in the kit's names (`key`, `alias`, `physical_key`, `state`
    /// as `attached`/`detached`/`exited` or as listed, `alive`); `None` when the reply
    /// has no array of rows where the profile says.
    pub fn rows(&self, body: &serde_json::Value) -> Option<Vec<serde_json::Value>> {
        let rows = body.pointer(&self.rows)?.as_array()?;
        Some(
            rows.iter()
                .map(|r| {
                    let mut row = serde_json::Map::new();
                    for (kit, own) in [
                        ("key", &self.key),
                        ("alias", &self.alias),
                        ("physical_key", &self.physical),
                        ("alive", &self.alive),
                    ] {
                        if let Some(v) = r.get(own).filter(|v| !v.is_null()) {
                            row.insert(kit.into(), v.clone());
                        }
                    }
                    if let Some(state) = r.get(&self.state) {
                        let kit = [
                            (&self.attached, "attached"),
                            (&self.detached, "detached"),
                            (&self.exited, "exited"),
                        ]
                        .into_iter()
                        .find(|(own, _)| state.as_str() == Some(own.as_str()))
                        .map_or_else(|| state.clone(), |(_, kit)| kit.into());
                        row.insert("state".into(), kit);
                    }
                    serde_json::Value::Object(row)
                })
                .collect(),
        )
    }
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
fn unix() -> String {
    "unix".into()
}

fn session_socket() -> String {
    "{runtime_dir}/{physical}.sock".into()
}
fn lock_path() -> String {
    "{lock_dir}/{physical}.lock".into()
}
fn alias_sidecar() -> String {
    "{runtime_dir}/aliases.json".into()
}
fn alias_sidecar_entries() -> String {
    "/aliases".into()
}

/// Fills a per-session path template: `{physical}` and the key's `{engine}`, `{id}`
/// and `{key}` (plus whatever `more` names).
pub fn session_path(template: &str, key: &str, physical: &str, more: &[(&str, &str)]) -> String {
    let (engine, id) = key.split_once(':').unwrap_or((key, ""));
    let filled = template
        .replace("{physical}", physical)
        .replace("{engine}", engine)
        .replace("{id}", id)
        .replace("{key}", key);
    more.iter()
        .fold(filled, |t, (k, v)| t.replace(&format!("{{{k}}}"), v))
}

fn label_param() -> String {
    "label".into()
}

fn input_frame() -> String {
    crate::drivers::broker_ws::INPUT_FRAME.into()
}

fn resize_frame() -> String {
    crate::drivers::broker_ws::RESIZE_FRAME.into()
}

/// A frame template filled with sample values must be one JSON object, and use every
/// placeholder it needs.
fn check_frame(key: &str, template: &str, fill: &[(&str, &str)]) -> Result<(), String> {
    let mut text = template.to_string();
    for (name, value) in fill {
        if !template.contains(name) {
            return Err(format!(
                "the profile's [single_writer].{key} {template:?} has no {name}"
            ));
        }
        text = text.replace(name, value);
    }
    match serde_json::from_str::<serde_json::Value>(&text) {
        Ok(v) if v.is_object() => Ok(()),
        _ => Err(format!(
            "the profile's [single_writer].{key} {template:?} is not a JSON object once filled"
        )),
    }
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
        t.required(profile)?;
        if !matches!(t.listen.as_str(), "unix" | "tcp") {
            return Err(format!(
                "the profile's [single_writer].listen {:?}: the broker listens on \"unix\" (its {{socket}}) or \"tcp\" (a loopback {{listen}})",
                t.listen
            ));
        }
        if t.label_param.contains(['=', '&', '?', '#']) {
            return Err(format!(
                "the profile's [single_writer].label_param {:?} is not a query parameter name",
                t.label_param
            ));
        }
        check_frame("input_frame", &t.input_frame, &[("{data}", "\"x\"")])?;
        check_frame(
            "resize_frame",
            &t.resize_frame,
            &[("{cols}", "80"), ("{rows}", "24")],
        )?;
        super::pins::check(profile)?;
        t.engines()
            .check(profile.claims_part(Contract::SingleWriter, "broker"))?;
        if t.engines_format != "vxbroker" {
            return Err(format!(
                "the profile's [single_writer].engines_format {:?}: the suite writes only \"vxbroker\"",
                t.engines_format
            ));
        }
        Ok(t)
    }
}

impl Templates {
    /// The profile's engine set and missing-program engine.
    pub fn engines(&self) -> super::engines::Engines {
        super::engines::Engines {
            known: self.known_engines.clone(),
            missing: self.missing_program_engine.clone(),
        }
    }
}

/// The command keys each part of the contract needs.
pub const PART_KEYS: [(&str, &[&str]); 4] = [
    ("checker", &["key_check", "sidecar_check", "resume_plan"]),
    ("broker", &["broker"]),
    ("master", &["master_create", "master_attach"]),
    ("client", &["client"]),
];

impl Templates {
    fn get(&self, key: &str) -> &[String] {
        match key {
            "key_check" => &self.key_check,
            "sidecar_check" => &self.sidecar_check,
            "resume_plan" => &self.resume_plan,
            "broker" => &self.broker,
            "master_create" => &self.master_create,
            "master_attach" => &self.master_attach,
            "client" => &self.client,
            _ => &[],
        }
    }

    /// Every key of a claimed part is there: the error names the key and its part.
    fn required(&self, profile: &Profile) -> Result<(), String> {
        for (part, keys) in PART_KEYS {
            if !profile.claims_part(Contract::SingleWriter, part) {
                continue;
            }
            if let Some(key) = keys.iter().find(|k| self.get(k).is_empty()) {
                return Err(format!(
                    "the profile's [single_writer] table has no `{key}`, which the {part} part needs \
                     (claim only the parts you implement with `parts = [...]`)"
                ));
            }
        }
        Ok(())
    }
}

pub fn templates() -> Templates {
    Templates::of(&context().profile).or_harness("the profile's [single_writer] table")
}

/// The kit's corpus of this contract (verdicts from an independent generator).
pub fn corpus_dir() -> PathBuf {
    crate::assets::corpus_dir().join("broker")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn profile(table: &str) -> Result<Templates, String> {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("p.toml");
        std::fs::write(
            &path,
            format!("name = \"x\"\ncontracts = [\"single-writer\"]\n[single_writer]\n{table}\n"),
        )
        .unwrap();
        Templates::of(&Profile::load(&path).unwrap())
    }

    #[test]
    fn listen_is_unix_or_tcp() {
        let broker = "parts = [\"broker\"]\nbroker = [\"b\"]\n";
        assert_eq!(profile(broker).unwrap().listen, "unix");
        let tcp = profile(&format!("{broker}listen = \"tcp\"")).unwrap();
        assert_eq!(tcp.listen, "tcp");
        let e = profile(&format!("{broker}listen = \"udp\"")).unwrap_err();
        assert!(e.contains("listen \"udp\""), "{e}");
    }

    /// The viewer frames: the kit's by default; the profile's when they are JSON
    /// objects once filled and use their placeholders; anything else names the key.
    #[test]
    fn frames_are_json_objects_with_their_placeholders() {
        let broker = "parts = [\"broker\"]\nbroker = [\"b\"]\n";
        let t = profile(broker).unwrap();
        assert_eq!(t.input_frame, crate::drivers::broker_ws::INPUT_FRAME);
        let own = format!(
            "{broker}input_frame = '{{\"type\":\"input\",\"text\":{{data}}}}'\n\
             resize_frame = '{{\"type\":\"resize\",\"size\":[{{cols}},{{rows}}]}}'"
        );
        assert!(profile(&own).unwrap().resize_frame.contains("size"));
        for bad in [
            "input_frame = '{\"t\":\"i\"}'",
            "input_frame = '{\"t\":\"i\",\"d\":{data}'",
            "input_frame = '[{data}]'",
            "resize_frame = '{\"cols\":{cols}}'",
        ] {
            let e = profile(&format!("{broker}{bad}")).unwrap_err();
            assert!(e.contains("_frame"), "{bad}: {e}");
        }
    }

    /// A key is required only when its part is claimed; the error names both.
    #[test]
    fn keys_are_required_per_claimed_part() {
        let e = profile("broker = [\"b\"]").unwrap_err();
        assert!(
            e.contains("`key_check`") && e.contains("checker part"),
            "{e}"
        );
        profile("parts = [\"broker\"]\nbroker = [\"b\"]").unwrap();
        let e = profile("parts = [\"master\"]\nbroker = [\"b\"]").unwrap_err();
        assert!(
            e.contains("`master_create`") && e.contains("master part"),
            "{e}"
        );
        let e =
            profile("parts = [\"broker\"]\nbroker = [\"b\"]\n[single_writer.pins]\nclose_busy = 1")
                .unwrap_err();
        assert!(e.contains("no such pin"), "{e}");
        let e = profile(
            "parts = [\"broker\"]\nbroker = [\"b\"]\n[single_writer.pins]\nrefusal_style = \"ws\"",
        )
        .unwrap_err();
        assert!(e.contains("refusal_style"), "{e}");
        profile(
            "parts = [\"broker\"]\nbroker = [\"b\"]\n[single_writer.pins]\nclose_refused = 4501",
        )
        .unwrap();
    }

    /// A list in the implementation's own shape reads as the kit's: members renamed,
    /// states mapped (others kept as listed), a null member absent.
    #[test]
    fn a_session_list_of_its_own_shape_reads_in_the_kit_names() {
        let t = profile(
            "parts = [\"broker\"]\nbroker = [\"b\"]\n[single_writer.list]\nrows = \"/r\"\n\
             key = \"k\"\nalias = \"p\"\nphysical = \"n\"\nstate = \"s\"\nalive = \"up\"\n\
             attached = \"viewed\"\ndetached = \"idle\"\nexited = \"gone\"",
        )
        .unwrap();
        let body = serde_json::json!({"r": [
            {"k": "a:1", "p": "a:new-1", "n": "a.1", "s": "idle", "up": true, "x": 0},
            {"k": "a:2", "p": null, "n": "a.2", "s": "stored", "up": false},
        ]});
        let rows = t.list.rows(&body).unwrap();
        assert_eq!(
            rows,
            [
                serde_json::json!({"key": "a:1", "alias": "a:new-1", "physical_key": "a.1", "state": "detached", "alive": true}),
                serde_json::json!({"key": "a:2", "physical_key": "a.2", "state": "stored", "alive": false}),
            ]
        );
        assert!(t.list.rows(&serde_json::json!({"sessions": []})).is_none());
        let kit = profile("parts = [\"broker\"]\nbroker = [\"b\"]").unwrap();
        assert_eq!(
            kit.list
                .rows(&serde_json::json!({"sessions": [{"key": "a:1", "state": "exited"}]})),
            Some(vec![serde_json::json!({"key": "a:1", "state": "exited"})])
        );
    }

    /// Per-session paths take the physical key, the key's engine and id, the key
    /// itself and the sandbox's directories; the defaults are the seed's.
    #[test]
    fn session_paths_fill_every_placeholder() {
        let t = profile("parts = [\"broker\"]\nbroker = [\"b\"]").unwrap();
        assert_eq!(t.lock_path, "{lock_dir}/{physical}.lock");
        assert_eq!(t.alias_sidecar, "{runtime_dir}/aliases.json");
        assert_eq!(t.alias_sidecar_entries, "/aliases");
        assert!(t.ws_query.is_empty());
        assert_eq!(
            session_path(
                &t.lock_path,
                "claude:u1",
                "claude@u1",
                &[("lock_dir", "/l")]
            ),
            "/l/claude@u1.lock"
        );
        assert_eq!(
            session_path(
                "{runtime_dir}/{engine}/{id}.sock|{key}",
                "opencode:ses_1",
                "x",
                &[("runtime_dir", "/r")]
            ),
            "/r/opencode/ses_1.sock|opencode:ses_1"
        );
    }
}
