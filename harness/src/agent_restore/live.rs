//! The server rows' live implementation: the recovery suite's scenario driver (its
//! own sandbox, socket, XDG homes, owner token, cleanup of pane processes by PID)
//! plus what ADR-0068's rows add: plugins written under the profile's
//! `plugins_dir`, windows made on demand, and `vxstub argv-dump` outputs read back.

use super::templates::templates;
use crate::drivers::wire::Reply;
use crate::drivers::{poll, scaled};
use crate::recovery::scenario::Scenario;
use crate::verdict::OrHarness;
use serde_json::{json, Map, Value};
use std::path::PathBuf;

/// The record key and the placeholders a scenario's template text may use.
pub const RECORD_KEY: &str = "agent-session/v1";

/// A reader thread racing the spawn turn: its stop flag and what it saw.
type Racer = (
    std::sync::Arc<std::sync::atomic::AtomicBool>,
    std::thread::JoinHandle<Vec<(String, bool)>>,
);

pub struct Live {
    pub s: Scenario,
    windows: u32,
    /// An event subscription kept open across steps.
    pub subscriber: Option<crate::drivers::events::Subscriber>,
    pub racer: Option<Racer>,
    /// The last `agent.launch` reply (later calls replace `last`, not this).
    pub launch_reply: Option<Reply>,
    /// The last workspace save or restore reply, and the replies of a race.
    pub client_reply: Option<Reply>,
    pub raced: Vec<(String, Reply)>,
    /// The relay the workspace clients reach the daemon through, once a step set one.
    pub relay: Option<crate::drivers::meta_relay::MetaRelay>,
    /// Connections kept across steps, by the scenario's client name.
    pub clients: std::collections::BTreeMap<String, crate::drivers::wire::Connection>,
    /// Whether the daemon runs as the older server (`legacy_serve`).
    pub legacy: bool,
    /// The archive the last save wrote (the twin of a restore after a plugin change).
    pub saved: Option<String>,
    /// The last `agent-session/v1` value a record row wrote with `meta.set`: the pane
    /// variable and the text (judged again by the save that must fail closed on it).
    pub written: Option<(String, String)>,
    /// The archive of the last restore and the sessions listed just before it ran
    /// (also before a race): what it restored is observed against them.
    pub restoring: Option<(String, Vec<super::listed::Listed>)>,
    /// Programs seen in a dump they wrote: each writes once, so none writes again.
    dumped: std::collections::BTreeSet<i32>,
}

impl Live {
    pub fn new() -> Live {
        Live {
            s: Scenario::new(),
            windows: 0,
            subscriber: None,
            racer: None,
            launch_reply: None,
            client_reply: None,
            raced: Vec::new(),
            relay: None,
            clients: Default::default(),
            legacy: false,
            saved: None,
            written: None,
            restoring: None,
            dumped: Default::default(),
        }
    }

    /// Starts the profile's `serve` unless a daemon runs.
    pub fn ensure_running(&mut self) {
        if self.s.daemon.is_none() {
            self.s.start();
        }
    }

    /// One wire call as the owner; the reply is also the scenario's last.
    pub fn call(&mut self, verb: &str, params: Value) -> Reply {
        self.ensure_running();
        let token = self.s.owner_token();
        let params: Map<String, Value> = match params {
            Value::Object(m) => m,
            _ => crate::harness_error!("params must be an object"),
        };
        let reply = self.s.wire(Some(&token), verb, params);
        self.s.last = Some(reply.clone());
        reply
    }

    /// Runs `verb` with a refusal's valid twin (`params`, the same request without
    /// the defect) and records it as the scenario's control (kind
    /// `agent-restore.server`): a refusal after a refused twin proves nothing.
    pub fn control_call(&mut self, what: &str, verb: &str, params: Value) {
        let reply = self.call(verb, params);
        super::twin_control::record(what.to_string(), &reply, false, |_| true);
    }

    /// A call that must succeed: its result.
    pub fn ok(&mut self, verb: &str, params: Value) -> Value {
        match self.call(verb, params).result {
            Ok(v) => v,
            Err(e) => panic!("{verb} failed: {e}"),
        }
    }

    /// A fresh session with one empty window; `$window` names it, `$window_session`
    /// the session's name.
    pub fn new_window(&mut self) -> String {
        self.windows += 1;
        let name = format!("asr-{}", self.windows);
        let session = self.ok("session.create", json!({"name": name}));
        let session = session["session"]
            .as_str()
            .or_harness("session id")
            .to_string();
        let w = self.ok("window.create", json!({"session": session, "name": "w"}));
        let window = w["window"].as_str().or_harness("window id").to_string();
        self.s.vars.insert("window".into(), window.clone());
        self.s.vars.insert("window_session".into(), name);
        window
    }

    /// A program that stays up and says nothing.
    pub fn sleeper(&self) -> Vec<String> {
        vec![self.vxstub(), "sleep".into()]
    }

    pub fn vxstub(&self) -> String {
        self.s
            .ph
            .bin_dir
            .join("vxstub")
            .to_string_lossy()
            .into_owned()
    }

    /// Where `argv-dump` of integration `id` writes (the template names it).
    pub fn dump_path(&self, id: &str) -> PathBuf {
        self.s.dir.path().join(format!("{id}.dump.json"))
    }

    /// The profile's plugins directory for this sandbox.
    pub fn plugins_dir(&self) -> PathBuf {
        let t = templates()
            .plugins_dir
            .or_harness("the profile's [agent_restore] table needs plugins_dir");
        PathBuf::from(self.s.ph.expand(&t))
    }

    /// Writes `<plugins>/<dir>/plugin.toml` (`id`) and `integrations/<id>.toml` with
    /// the template text (`{vxstub}`, `{dump}` expanded); a running daemon reloads.
    pub fn write_plugin(&mut self, dir: &str, plugin_id: &str, integration: &str, text: &str) {
        self.write_plugin_files(dir, plugin_id, integration, text);
        self.reload_if_running();
    }

    /// [`Live::write_plugin`] without the reload: the daemon reads it when told to.
    pub fn write_plugin_files(
        &mut self,
        dir: &str,
        plugin_id: &str,
        integration: &str,
        text: &str,
    ) {
        let root = self.plugins_dir().join(dir);
        std::fs::create_dir_all(root.join("integrations")).or_harness("mkdir plugin");
        std::fs::write(root.join("plugin.toml"), format!("id = {plugin_id:?}\n"))
            .or_harness("write plugin.toml");
        let dump = self.dump_path(integration).to_string_lossy().into_owned();
        let text = text
            .replace("{vxstub}", &self.vxstub())
            .replace("{dump}", &dump);
        std::fs::write(root.join(format!("integrations/{integration}.toml")), text)
            .or_harness("write the template");
    }

    fn reload_if_running(&mut self) {
        if self.s.daemon.is_some() {
            self.ok("config.reload", json!({}));
        }
    }

    /// The dump of integration `id`'s last launch, waited for.
    pub fn dump(&self, id: &str) -> Value {
        let path = self.dump_path(id);
        poll("the program's argv dump", scaled(10_000), || {
            std::fs::read(&path)
                .ok()
                .and_then(|b| serde_json::from_slice::<Value>(&b).ok())
        })
    }

    /// Removes a previous dump, so the next one read is the next launch's. A program
    /// started earlier (a twin's, or one whose session was just killed: its signal
    /// may come after the kill's reply) may not have written it yet, and would write
    /// it after: the dump goes once each program that names it in its argv has
    /// written it or is gone (each writes it once), or after a bounded wait.
    pub fn forget_dump(&mut self, id: &str) {
        let path = self.dump_path(id);
        let dumped = &mut self.dumped;
        crate::drivers::wait_until(scaled(10_000), || {
            let published = std::fs::read(&path)
                .ok()
                .and_then(|b| serde_json::from_slice::<Value>(&b).ok())
                .and_then(|v| i32::try_from(v["pid"].as_i64()?).ok());
            dumped.extend(published);
            let pending = programs_naming(&path)
                .into_iter()
                .any(|pid| !dumped.contains(&pid));
            (!pending, ())
        });
        let _ = std::fs::remove_file(path);
    }

    /// Runs a `[agent_restore]` client template (`workspace_save`, `workspace_restore`)
    /// as the owner: `{file}` is `file`; `{fallback_argv}` the given JSON text, or,
    /// when `None`, the word and the flag before it are left out. With a relay,
    /// `{socket}` is the relay's.
    pub fn client_command(
        &mut self,
        template: &[String],
        file: &std::path::Path,
        fallback: Option<&str>,
    ) -> std::process::Command {
        self.ensure_running();
        let mut words: Vec<String> = Vec::new();
        for w in template {
            if w.contains("{fallback_argv}") {
                match fallback {
                    Some(f) => words.push(w.replace("{fallback_argv}", f)),
                    None => {
                        if words.last().is_some_and(|p| p.starts_with("--")) {
                            words.pop();
                        }
                    }
                }
            } else {
                words.push(w.replace("{file}", &file.to_string_lossy()));
            }
        }
        if let Some(relay) = &self.relay {
            let socket = relay.socket.to_string_lossy();
            for w in &mut words {
                *w = w.replace("{socket}", &socket);
            }
        }
        let env = vec![("VENOMX_TOKEN".to_string(), self.s.owner_token())];
        crate::drivers::sandbox::command(&self.s.ph, &words, &env, self.s.dir.path())
    }

    /// Runs a client command: its reply (stdout one JSON value, `{"error"}` alone
    /// meaning failure) and exit code.
    pub fn run_client(&mut self, cmd: std::process::Command) -> Reply {
        let (reply, bytes) = crate::drivers::cli::run_json(cmd);
        self.s.transcript.extend_from_slice(&bytes);
        reply
    }

    /// A file in the scenario's directory.
    pub fn file(&self, name: &str) -> PathBuf {
        self.s.dir.path().join(name)
    }

    /// Names of the daemon's sessions.
    pub fn session_names(&mut self) -> Vec<String> {
        let v = self.ok("session.list", json!({}));
        v["sessions"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|s| s["name"].as_str().map(str::to_string))
            .collect()
    }

    /// Panes of a window, as `pane.list` says.
    pub fn panes_of(&mut self, window: &str) -> Vec<Value> {
        let v = self.ok("pane.list", json!({"window": window}));
        v["panes"].as_array().cloned().unwrap_or_default()
    }

    /// Opens the scenario's event subscription, as the owner (replacing one open).
    pub fn subscribe(&mut self) {
        self.ensure_running();
        let token = self.s.owner_token();
        let (reply, _, sub) =
            crate::drivers::events::subscribe(&self.s.ph.socket, Some(&token), None);
        if let Err(e) = reply.result {
            panic!("events.subscribe failed: {e}");
        }
        self.subscriber = sub;
    }

    /// `meta.get`'s value (None when unset).
    pub fn meta(&mut self, pane: &str, key: &str) -> Option<String> {
        let v = self.ok("meta.get", json!({"pane": pane, "key": key}));
        v["value"].as_str().map(str::to_string)
    }

    /// Substitutes the scenario's `$name` variables.
    pub fn subst(&self, text: &str) -> String {
        self.s.subst(text)
    }

    /// Remembers the pane a successful reply names as `$name`.
    pub fn keep_pane(&mut self, name: &str) {
        if let Some(Ok(v)) = self.s.last.as_ref().map(|r| &r.result) {
            if let Some(p) = v["pane"].as_str() {
                self.s.vars.insert(name.to_string(), p.to_string());
            }
        }
    }

    pub fn last(&self) -> &Reply {
        self.s.last()
    }
}

/// A record's canonical text from its three ids (the kit's own encoder, so the
/// suite does not trust the implementation's).
pub fn record_text(plugin: &str, integration: &str, native: &str) -> String {
    let q = |v: &str| serde_json::to_string(v).or_harness("a JSON string");
    format!(
        "{{\"plugin_id\":{},\"integration_id\":{},\"native_id\":{}}}",
        q(plugin),
        q(integration),
        q(native)
    )
}

/// The value a case name stands for, for the bounds outlines.
pub fn bad_value(case: &str) -> String {
    match case {
        "121 bytes" => "p".repeat(121),
        "1025 bytes" => "n".repeat(1025),
        "padded" => " padded ".into(),
        "a tab" => "a\tb".into(),
        "a C1 control" => "a\u{85}b".into(),
        "a newline" => "a\nb".into(),
        "option-shaped" => "-x".into(),
        // At the byte bounds in every UTF-8 width: a bound counted in characters
        // passes the longer one.
        "120 bytes of two-byte characters" => "é".repeat(60),
        "121 bytes of two-byte characters" => "é".repeat(60) + "p",
        "120 bytes of three-byte characters" => "€".repeat(40),
        "121 bytes of three-byte characters" => "€".repeat(40) + "p",
        "1024 bytes of two-byte characters" => "é".repeat(512),
        "1025 bytes of two-byte characters" => "é".repeat(512) + "n",
        "1024 bytes of three-byte characters" => "€".repeat(341) + "n",
        "1025 bytes of three-byte characters" => "€".repeat(341) + "nn",
        "1024 bytes of four-byte characters" => "\u{1F600}".repeat(256),
        "1025 bytes of four-byte characters" => "\u{1F600}".repeat(256) + "n",
        // Unicode White_Space that is not ASCII (and not a control): trimming that
        // knows only ASCII spaces keeps it.
        "an interior ideographic space" => "n\u{3000}1".into(),
        "led by an ideographic space" => "\u{3000}n1".into(),
        "an interior no-break space" => "n\u{a0}1".into(),
        "ending in a no-break space" => "n1\u{a0}".into(),
        "an interior line separator" => "n\u{2028}1".into(),
        "ending in a line separator" => "n1\u{2028}".into(),
        "ending in an em space" => "n1\u{2003}".into(),
        other => crate::harness_error!("no value for the case {other:?}"),
    }
}

/// The live processes whose argv names `path` (also inside a shell's `-c` text).
fn programs_naming(path: &std::path::Path) -> Vec<i32> {
    let needle = path.to_string_lossy();
    crate::drivers::process::argvs()
        .into_iter()
        .filter(|(_, argv)| argv.iter().any(|a| a.contains(needle.as_ref())))
        .map(|(pid, _)| pid)
        .filter(|pid| crate::drivers::process::alive(*pid))
        .collect()
}
