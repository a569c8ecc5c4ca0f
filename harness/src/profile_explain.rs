//! `vxcert profile --explain`: every key a profile may hold, what it means and the
//! placeholders its templates may use. A test proves the table names exactly the
//! keys the profile's types accept, so it cannot fall behind them.

use crate::contract::Contract;

/// One profile key.
pub struct Key {
    /// `""` for the top level, else the table's name.
    pub table: &'static str,
    pub key: &'static str,
    pub meaning: &'static str,
    /// Placeholders beyond the sandbox's (`{socket}` `{state_home}` …).
    pub extra: &'static [&'static str],
}

const fn k(
    table: &'static str,
    key: &'static str,
    meaning: &'static str,
    extra: &'static [&'static str],
) -> Key {
    Key {
        table,
        key,
        meaning,
        extra,
    }
}

/// The label of the keys every contract table may carry besides its templates.
pub const CLAIM_TABLE: &str = "<every contract table>";

/// The placeholders every command template may use (per scenario).
pub const SANDBOX: &str =
    "{socket} {state_home} {config_home} {runtime_dir} {home} {bin_dir} {store}";

pub const KEYS: &[Key] = &[
    k("", "name", "short name of the profile, shown in reports (required)", &[]),
    k("", "implementation", "free text naming the implementation under test", &[]),
    k("", "contracts", "the contracts this implementation claims (default [\"recovery\"]); each needs its table", &[]),
    k("", "serve", "recovery: the daemon's command line", &[]),
    k("", "serve_on_demand", "recovery: the daemon in on-demand mode (@optional-on-demand)", &[]),
    k("", "cli", "recovery: the CLI prefix; verb words and --json follow", &[]),
    k("", "skill", "recovery: prints the generated agent skill as Markdown (feature skill, docs/spec/recovery-skill.md)", &[]),
    k("", "version", "a command printing the implementation's version (shown in reports)", &[]),
    k("", "fault_preload", "the fault injector's preload library (default: the copy packed inside vxcert, unpacked into its cache)", &[]),
    k("", "fault_backend", "how injected faults reach the implementation: preload, seccomp or auto (default auto: seccomp for static and Go programs)", &[]),
    k("", "faketime_preload", "libfaketime, for @needs-faketime scenarios (default Debian's libfaketimeMT.so.1)", &[]),
    k("", "env", "extra environment for the daemon and the CLI (a table of strings)", &[]),
    k("", "pass_env", "names of vxcert's own environment variables every command of the implementation also gets when set (e.g. a test subject's switch)", &[]),
    k("", "readiness", "when a started daemon is ready (table [readiness])", &[]),
    k("", "timeout_multiplier", "multiplies every deadline the suite waits on, not the RFC's own bounds (default 1.0)", &[]),
    k("", "features", "optional features claimed (scenarios tagged @optional-<name>)", &[]),
    k("", "expected_failure", "scenarios known to fail, with reasons ([[expected_failure]]); one that passes fails the run", &[]),
    k("", "concurrency", "how many scenarios run at once (default 4)", &[]),
    k("", "recovery", "table [recovery]: serve, serve_on_demand, cli and skill, instead of the top-level keys", &[]),
    k("", "agent_restore", "table [agent_restore]: the agent-restore contract's templates", &[]),
    k("", "single_writer", "table [single_writer]: the single-writer contract's templates", &[]),
    k("", "persist", "table [persist]: the session-persist contract's templates", &[]),
    k("recovery", "serve", "as the top-level serve", &[]),
    k("recovery", "serve_on_demand", "as the top-level serve_on_demand", &[]),
    k("recovery", "cli", "as the top-level cli", &[]),
    k("recovery", "skill", "as the top-level skill", &[]),
    k("recovery", "grant", "how one grant is spelled in a request's grants (RFC-0005's, which the RFC cites): JSON text with {right} (read, write, spawn, admin), {kind} (server, session, window, pane), {id} and {resource} ({kind}:{id}) as strings (default \"{right}@{kind}:{id}\")", &["{right}", "{kind}", "{id}", "{resource}"]),
    k("readiness", "kind", "socket (ready when the socket accepts) or file (then also when path exists)", &[]),
    k("readiness", "path", "for kind = \"file\": the path template", &[]),
    k("readiness", "timeout_ms", "how long a start may take (default 10000)", &[]),
    k("expected_failure", "contract", "the row's contract (default recovery)", &[]),
    k("expected_failure", "row", "the row (the feature's name)", &[]),
    k("expected_failure", "scenario", "one scenario's name; absent: every scenario of the row", &[]),
    k("expected_failure", "example", "one Examples row of an outline, cells joined by \" | \"", &[]),
    k("expected_failure", "reason", "why it fails (required)", &[]),
    k(CLAIM_TABLE, "parts", "the parts of the contract claimed (default: all); the other parts' scenarios are not-claimed, and only the claimed parts' keys are required", &[]),
    k(CLAIM_TABLE, "verdict_only", "true: the contract's checker is judged by its exit status alone (0 valid), no verdict line, codes or rule ids (default false)", &[]),
    k(CLAIM_TABLE, "pins", "table: the implementation's own value for a kit pin, by the pin's key; rows that observe it are then judged strictly against it", &[]),
    k("agent_restore", "archive_check", "offline verdict on one workspace archive (pinned JSON line)", &["{file}"]),
    k("agent_restore", "template_check", "offline verdict on one integration template (@optional-template-check)", &["{file}"]),
    k("agent_restore", "plugins_dir", "where the implementation reads plugins (a per-scenario path template)", &[]),
    k("agent_restore", "workspace_save", "workspace save to {file}, for the server rows", &["{file}"]),
    k("agent_restore", "workspace_restore", "workspace restore of {file} with {fallback_argv}, for the server rows", &["{file}", "{fallback_argv}"]),
    k("agent_restore", "agent_launch", "the launching client: launch, then read back or set-and-confirm the record (ADR-0068 §4)", &["{window}", "{integration}", "{native_id}"]),
    k("agent_restore", "legacy_serve", "the daemon in its legacy spawn mode, for the server rows", &[]),
    k("agent_restore", "satellite_window", "makes a window spawned on a satellite; prints {\"window\": ID} (@optional-satellite)", &[]),
    k("agent_restore", "restore_launch_verbs", "the wire verbs by which workspace_restore starts a native session's program (default [\"agent.launch\"]); the plugin-change row's relay reloads before the first, and does not apply when the client sends none", &[]),
    k("single_writer", "key_check", "one session key's verdict, as an existing session", &["{key}"]),
    k("single_writer", "key_check_new", "the same for a new session (placeholder ids allowed)", &["{key}"]),
    k("single_writer", "resume_plan", "the resume plan; the suite appends --have/--gen/--total/--ring-len/--master-gen", &[]),
    k("single_writer", "sidecar_check", "one alias sidecar's or owner file's verdict", &["{file}"]),
    k("single_writer", "broker", "the broker, which the live rows start in their sandbox", &["{lock_dir}", "{engines}", "{listen}", "{port}"]),
    k("single_writer", "broker_takeover", "the broker with take-over across instances on (feature takeover); two share one {runtime_dir}", &["{lock_dir}", "{engines}", "{listen}", "{port}"]),
    k("single_writer", "broker_scopes", "the broker running each launch in a transient scope through {scope_wrapper}, the suite's systemd-run stand-in (feature scopes)", &["{lock_dir}", "{engines}", "{scope_wrapper}", "{listen}", "{port}"]),
    k("single_writer", "listen", "where the broker listens: \"unix\" on {socket} (default) or \"tcp\" on a loopback port the suite picks, given as {listen} (127.0.0.1:PORT) and {port}", &[]),
    k("single_writer", "scope_properties_env", "the variable the broker reads per-scope properties from (feature scopes; a string)", &[]),
    k("single_writer", "engines_format", "the format of the engines file the suite writes for {engines} (\"vxbroker\")", &[]),
    k("single_writer", "ws_path", "the terminal route; the suite appends the query", &["{engine}", "{id}"]),
    k("single_writer", "sessions_path", "the session list route", &[]),
    k("single_writer", "archive_path", "the retire route (the seed's \"archive\")", &["{key}"]),
    k("single_writer", "session_socket", "where a session's master socket is, in its own spelling: {engine} and {id} need not follow physical_key (default {runtime_dir}/{physical}.sock)", &["{runtime_dir}", "{physical}", "{engine}", "{id}", "{key}"]),
    k("single_writer", "lock_path", "a session's single-writer lock file, which the suite flocks, in its own spelling like session_socket (default {lock_dir}/{physical}.lock)", &["{lock_dir}", "{physical}", "{engine}", "{id}", "{key}"]),
    k("single_writer", "ws_query", "extra query parameters (name=value&…) every terminal URL the suite opens carries, after the seed's (default none)", &[]),
    k("single_writer", "label_param", "the query parameter a viewer names itself by, shown as the holder's label in a secondary's role frame (the seed names the label, not its source; default \"label\"; \"\" when viewers cannot name themselves: the take-over rows then ask only that a holder is named)", &[]),
    k("single_writer", "input_frame", "the viewer's input frame as the broker reads it: JSON text where {data} is the typed text as a JSON string (the seed names an \"i\" frame, not its members; default {\"t\":\"i\",\"d\":{data}})", &["{data}"]),
    k("single_writer", "resize_frame", "the viewer's resize frame: JSON text with {cols} and {rows} numbers (default {\"t\":\"r\",\"cols\":{cols},\"rows\":{rows}})", &["{cols}", "{rows}"]),
    k("single_writer", "alias_sidecar", "the broker's alias sidecar the alias rows read (default {runtime_dir}/aliases.json)", &["{runtime_dir}"]),
    k("single_writer", "alias_sidecar_entries", "a JSON pointer to the object or array of the alias sidecar holding one member per alias (default /aliases)", &[]),
    k("single_writer", "master_create", "a create-only master on {socket}, program included (sw-mode-explicit)", &[]),
    k("single_writer", "master_attach", "an attach-only master on {socket} (sw-mode-explicit)", &[]),
    k("single_writer", "setup", "a hook run once per scenario after the suite writes its fixtures, before the broker or master starts: the stand-in agent is {agent} (agent --engine E --id I --history H [--resume] [--index F]), the fixture's missing program {missing_program}; e.g. to write the engines in your own format (default none)", &["{lock_dir}", "{engines}", "{history}", "{agent}", "{missing_program}"]),
    k("single_writer", "teardown", "a hook run when the scenario's sandbox goes, its exit ignored (default none)", &["{lock_dir}", "{engines}", "{history}", "{agent}", "{missing_program}"]),
    k("single_writer", "list", "table: the session list's shape: rows (a JSON pointer to its array of rows), a row's members key, alias, physical, state, alive, and the state names attached, detached, exited (defaults: /sessions, key, alias, physical_key, state, alive, attached, detached, exited)", &[]),
    k("single_writer", "master_tty", "true when master_create and master_attach need a terminal: the suite runs them on a pty of their own, as stdin, stdout, stderr and controlling terminal (default false)", &[]),
    k("single_writer", "master_daemonizes", "true when master_create daemonizes (dtach -n): it exits 0 once its master serves in the background (default false)", &[]),
    k("single_writer", "client", "the implementation's viewer of one session, reconnecting by itself (sw-client-no-force)", &["{address}", "{key}", "{engine}", "{id}", "{fp}", "{tab}"]),
    k("single_writer", "client_take_over", "the same viewer, asked for one explicit take-over", &["{address}", "{key}", "{engine}", "{id}", "{fp}", "{tab}"]),
    k("single_writer", "known_engines", "table: the engines the implementation knows, each with its id class, \"uuid\" (the broker mints and pins it) or \"ses\" (the engine mints ses_… ids); the checker rows judge a key's engine known or unknown by it, a row about a kit engine it lacks runs under one of its own of the same class; the live rows need claude = \"uuid\" and opencode = \"ses\" (default { claude = \"uuid\", gemini = \"uuid\", opencode = \"ses\" })", &[]),
    k("single_writer", "missing_program_engine", "the engine the missing-program row opens, which the suite's engines file runs as {missing_program}: a broker that refuses engines it does not know names one it knows and points it at {missing_program} in its setup hook (default \"ghost\")", &[]),
    k("persist", "blob_check", "one blob's verdict (pinned file verdict line)", &["{file}"]),
    k("persist", "pack", "packs session {id} of {backend} from {root} into {file}", &["{backend}", "{root}", "{id}", "{file}"]),
    k("persist", "unpack", "unpacks {file} as session {id} of {backend} into {root}", &["{backend}", "{root}", "{id}", "{file}"]),
    k("persist", "has_session", "prints true or false: whether {root} holds session {id} of {backend}", &["{backend}", "{root}", "{id}"]),
    k("persist", "store_adapter", "the store adapter, JSON lines (docs/spec/persist-store-adapter.md)", &["{store}"]),
    k("persist", "store", "the filesystem store's spec, e.g. fs:{state_home}/persist (a string)", &[]),
    k("persist", "s3_twins", "S3 twins the store rows also run on; each at $VXPERSIST_S3_<NAME> (a list of names)", &[]),
    k("persist", "header_member", "the blob's header member name (default .session-header.json)", &[]),
    k("persist", "drive", "the runtime over the drive protocol (docs/spec/persist-drive.md)", &[]),
    k("persist", "layouts", "the implementation's own session layouts (schema of persist/layouts.toml; path relative to the profile; default the kit's): planted sessions, kit blobs and expected files follow it", &[]),
];

/// The text `vxcert profile --explain` prints.
pub fn explain() -> String {
    let mut out = format!(
        "A profile is a TOML file (profiles/reference.toml is the kit's own).\n\
         Command templates are arrays of words; every template may use\n  {SANDBOX}\n\
         which the suite fills per scenario, and the extra placeholders named below.\n"
    );
    let mut tables: Vec<&str> = Vec::new();
    let pin_heading = "\n[single_writer.pins] (the implementation's own value for a kit pin; absent: the kit's, and a difference is non-strict)\n";
    for key in KEYS {
        if !tables.contains(&key.table) {
            tables.push(key.table);
        }
    }
    for table in tables {
        let heading = match table {
            "" => "top level".to_string(),
            CLAIM_TABLE => {
                "every contract table ([agent_restore], [single_writer], [persist]) also takes"
                    .to_string()
            }
            t => {
                let contract = Contract::ALL
                    .into_iter()
                    .find(|c| c.profile_table() == t)
                    .map(|c| format!(" (contract {c})"))
                    .unwrap_or_default();
                format!("[{t}]{contract}")
            }
        };
        out += &format!("\n{heading}\n");
        for key in KEYS.iter().filter(|k| k.table == table) {
            let extra = if key.extra.is_empty() {
                String::new()
            } else {
                format!("  [{}]", key.extra.join(" "))
            };
            out += &format!("  {:<18} {}{extra}\n", key.key, key.meaning);
        }
    }
    out += pin_heading;
    for p in crate::single_writer::pins::KEYS {
        out += &format!(
            "  {:<18} {} (kit: {}; pin {})\n",
            p.key, p.meaning, p.kit, p.clause
        );
    }
    out += &format!(
        "\n[agent_restore.pins] (the implementation's own name for a kit error code or rule id, \
         \"<kit name>\" = \"<yours>\"; absent: the kit's, and a difference is non-strict; pin {})\n  {}\n",
        crate::agent_restore::pins::CLAUSE,
        crate::agent_restore::pins::NAMES.join(" ")
    );
    out += &format!(
        "  {:<18} the workspace archive's JSON nesting cap: a positive integer, or \"none\" (kit: {}; pin {})\n",
        crate::agent_restore::pins::DEPTH_KEY,
        crate::agent_restore::pins::KIT_MAX_DEPTH,
        crate::agent_restore::pins::DEPTH_CLAUSE
    );
    out += &crate::agent_restore::shapes::explain();
    out += &persist_pins();
    out
}

/// The `[persist.pins]` caps.
fn persist_pins() -> String {
    use crate::session_persist::caps;
    let mut out = format!(
        "\n[persist.pins] (the packer's caps, which the seed leaves to the implementer; the \
         over-cap rows build their input one over them; pin {})\n",
        caps::CLAUSE
    );
    for k in &caps::KEYS {
        out += &format!("  {:<18} {}\n", k.key, caps::explain(k));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde::de::DeserializeOwned;

    /// The keys a type accepts, read from serde's refusal of an unknown one.
    fn fields_of<T: DeserializeOwned>() -> Vec<String> {
        let err = match toml::from_str::<T>("__probe__ = 1\n") {
            Ok(_) => panic!("the probe key was accepted"),
            Err(e) => e.to_string(),
        };
        let list = err
            .split_once("expected")
            .map(|(_, l)| l.to_string())
            .unwrap_or_else(|| panic!("no field list in {err:?}"));
        let mut out: Vec<String> = list
            .split('`')
            .skip(1)
            .step_by(2)
            .map(str::to_string)
            .collect();
        out.sort();
        out
    }

    fn explained(table: &str) -> Vec<String> {
        let mut out: Vec<String> = KEYS
            .iter()
            .filter(|k| k.table == table)
            .map(|k| k.key.to_string())
            .collect();
        out.sort();
        out
    }

    #[test]
    fn the_table_names_exactly_the_keys_each_type_accepts() {
        use crate::profile::{ExpectedFailure, Profile, Readiness, RecoveryTemplates};
        for (table, fields) in [
            ("", fields_of::<Profile>()),
            ("recovery", fields_of::<RecoveryTemplates>()),
            ("readiness", fields_of::<Readiness>()),
            ("expected_failure", fields_of::<ExpectedFailure>()),
            (CLAIM_TABLE, fields_of::<crate::profile::Claim>()),
            (
                "agent_restore",
                fields_of::<crate::agent_restore::checks::Templates>(),
            ),
            (
                "single_writer",
                fields_of::<crate::single_writer::checks::Templates>(),
            ),
            ("persist", fields_of::<crate::session_persist::Templates>()),
        ] {
            assert!(!fields.is_empty(), "{table}");
            assert_eq!(explained(table), fields, "keys of [{table}]");
        }
    }

    #[test]
    fn every_single_writer_pin_key_is_explained() {
        let text = explain();
        for p in crate::single_writer::pins::KEYS {
            assert!(
                text.contains(&format!("  {:<18} {}", p.key, p.meaning)),
                "{}",
                p.key
            );
        }
    }

    /// `docs/profile-keys.md` is `vxcert profile --explain` (every key each contract
    /// reads, its meaning and default), so the document cannot fall behind the types.
    /// `VXCERT_UPDATE_DOCS=1 cargo test -p vxcert profile_keys_document` rewrites it.
    #[test]
    fn profile_keys_document_is_the_explain_output() {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../docs/profile-keys.md");
        let want = format!(
            "# Profile keys\n\n\
             Every key a `vxcert` profile may hold, what it means, its default and the\n\
             placeholders its templates may use: the output of `vxcert profile --explain`,\n\
             checked equal to it by a test (`harness/src/profile_explain.rs`). How to write a\n\
             profile: `docs/certify-your-implementation.md`; the reference's own:\n\
             `profiles/reference.toml`.\n\n```text\n{}```\n",
            explain()
        );
        if std::env::var_os("VXCERT_UPDATE_DOCS").is_some() {
            std::fs::write(&path, &want).unwrap();
        }
        let have = std::fs::read_to_string(&path).unwrap_or_default();
        assert!(
            have == want,
            "{} is not `vxcert profile --explain`: rerun with VXCERT_UPDATE_DOCS=1",
            path.display()
        );
    }

    #[test]
    fn every_contract_table_is_explained() {
        let text = explain();
        for c in Contract::ALL
            .into_iter()
            .filter(|c| *c != Contract::Recovery)
        {
            assert!(text.contains(&format!("[{}] (contract {c})", c.profile_table())));
        }
    }
}
