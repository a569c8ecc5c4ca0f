//! The single-writer profile keys for what the seed leaves open (issue 45), each
//! shown changing a verdict as it should. The subject is the reference broker with
//! `VXBROKER_KEYS_VARIANT=1` (reference/broker/src/variant.rs): a broker making a
//! real broker's choices, every MUST kept: its own engine set (the seed's three and
//! `codex`; any other engine of the engines file, the fixture's `ghost` among them,
//! is refused before a launch), no length caps, close 4504 for a spawn that failed
//! (4502 still for a launch refused before anything was spawned), lock files
//! `{engine}_{id}.lock` and sockets `{engine}-{id}.sock` while its physical key
//! stays `{engine}@{id}`.
//!
//! With the profile describing it (`known_engines`, `missing_program_engine`,
//! `lock_path`, `session_socket`, and the pins `close_spawn_failed`,
//! `key_max_bytes`/`ses_id_max_bytes` = "none"), every row these keys touch passes;
//! without them, the same rows fail or are non-strict, each for its key.

mod common;

use common::bin_dir;
use std::collections::BTreeMap;

/// The rows the keys touch: the checker's key rows (engine set, caps, physical
/// key), the live refusals of bad keys, the failed launches (spawn code, missing
/// program), and the rows that locate a session's lock and socket.
const TAGS: &str = "@sw-key-identity or @sw-key-injective or @sw-launch-fail-frees \
                    or @sw-handoff or @sw-not-socket";

const LAUNCH: &str = "A launch that fails before the master serves frees the lock: ";
const UNKNOWN_ENGINE: &str = "A key that could alias another session, or leave the lock \
                              directory, is refused [engine-unknown]";
const CAPS: &str = "A key over the kit's length caps (96-byte key, 64-byte ses_ tail) is refused";
const HANDOFF: &str = "After LAUNCH the master holds the lock, even with the broker gone";
const NOT_SOCKET: &str = "A regular file at the socket path is an error and is kept";
const LONG_ENGINE: &str = "A key that could alias another session, or leave the lock \
                           directory, is refused [engine-33-bytes]";

/// The variant's choices, as a profile says them.
const OWN_ENGINES: &str = "known_engines = { claude = \"uuid\", gemini = \"uuid\", \
                           codex = \"uuid\", opencode = \"ses\" }\n\
                           missing_program_engine = \"codex\"";
const OWN_PATHS: &str = "lock_path = \"{lock_dir}/{engine}_{id}.lock\"\n\
                         session_socket = \"{runtime_dir}/{engine}-{id}.sock\"";
const OWN_CAPS: &str =
    "key_max_bytes = \"none\"\nengine_max_bytes = \"none\"\nses_id_max_bytes = \"none\"";
const OWN_SPAWN: &str = "close_spawn_failed = 4504";

fn table() -> String {
    let b = bin_dir().join("vxbroker");
    let b = b.display();
    let v = "\"/usr/bin/env\", \"VXBROKER_KEYS_VARIANT=1\"";
    [
        format!("key_check = [{v}, \"{b}\", \"key\", \"check\", \"--json\", \"{{key}}\"]"),
        format!("key_check_new = [{v}, \"{b}\", \"key\", \"check\", \"--json\", \"--new\", \"{{key}}\"]"),
        format!("resume_plan = [{v}, \"{b}\", \"resume-plan\", \"--json\"]"),
        format!("sidecar_check = [{v}, \"{b}\", \"sidecar\", \"check\", \"--json\", \"{{file}}\"]"),
        format!(
            "broker = [{v}, \"{b}\", \"serve\", \"--listen\", \"unix:{{socket}}\", \"--runtime-dir\", \"{{runtime_dir}}\", \"--lock-dir\", \"{{lock_dir}}\", \"--engines\", \"{{engines}}\"]"
        ),
        format!(
            "broker_scopes = [{v}, \"{b}\", \"serve\", \"--listen\", \"unix:{{socket}}\", \"--runtime-dir\", \"{{runtime_dir}}\", \"--lock-dir\", \"{{lock_dir}}\", \"--engines\", \"{{engines}}\", \"--scope-wrapper\", \"{{scope_wrapper}}\"]"
        ),
        "scope_properties_env = \"VXBROKER_SCOPE_PROPERTIES\"".to_string(),
    ]
    .join("\n")
}

/// Runs the rows of [`TAGS`] against the variant with `keys` (lines of the
/// `[single_writer]` table) and `pins` (lines of `[single_writer.pins]`): each
/// scenario's verdict by `name [case]`, and its message.
fn run(keys: &str, pins: &str) -> BTreeMap<String, (String, String)> {
    run_tags(keys, pins, TAGS)
}

fn run_tags(keys: &str, pins: &str, tags: &str) -> BTreeMap<String, (String, String)> {
    common::ensure_reference(&[]);
    let profile = format!(
        "name = \"keys-variant\"\ncontracts = [\"single-writer\"]\nfeatures = [\"scopes\"]\n{}\
         [env]\nVXBROKER_KEYS_VARIANT = \"1\"\n[single_writer]\nparts = [\"checker\", \"broker\"]\n\
         {}\n{keys}\n[single_writer.pins]\n{pins}\n",
        common::WAIT_BOUND_CONCURRENCY,
        table()
    );
    let (_, report) = common::run_profile(&profile, &["--tags", tags]);
    report["scenarios"]
        .as_array()
        .expect("scenarios")
        .iter()
        .map(|s| {
            let name = s["name"].as_str().expect("name");
            // An outline's scenario is named by its first cell when its name does
            // not already say it.
            let key = match s["example"]
                .as_str()
                .map(|e| e.split(" | ").next().unwrap_or(e))
            {
                Some(case) if !name.contains(case) => format!("{name} [{case}]"),
                _ => name.to_string(),
            };
            let verdict = s["verdict"].as_str().expect("verdict").to_string();
            let message = s["message"].as_str().unwrap_or_default().to_string();
            (key, (verdict, message))
        })
        .collect()
}

/// Every row of `v` passed.
fn all_pass(v: &BTreeMap<String, (String, String)>) {
    let not_pass: Vec<String> = v
        .iter()
        .filter(|(_, (verdict, _))| verdict != "pass")
        .map(|(k, (verdict, m))| format!("{k}: {verdict}: {m}"))
        .collect();
    assert!(not_pass.is_empty(), "{not_pass:#?}");
}

fn verdict<'a>(v: &'a BTreeMap<String, (String, String)>, row: &str) -> &'a str {
    &v.get(row)
        .unwrap_or_else(|| panic!("no row {row:?} in {:#?}", v.keys()))
        .0
}

fn starting<'a>(v: &'a BTreeMap<String, (String, String)>, prefix: &str) -> Vec<&'a str> {
    v.iter()
        .filter(|(k, _)| k.starts_with(prefix))
        .map(|(_, (verdict, _))| verdict.as_str())
        .collect()
}

/// Described by its profile, the variant passes every row the keys touch.
#[test]
fn a_broker_described_by_its_keys_passes_every_row_they_touch() {
    let v = run(
        &format!("{OWN_ENGINES}\n{OWN_PATHS}"),
        &format!("{OWN_CAPS}\n{OWN_SPAWN}"),
    );
    all_pass(&v);
    // The rows that prove each key were run.
    for row in [
        &format!("{LAUNCH}missing-program"),
        &format!("{LAUNCH}bad-cwd"),
        UNKNOWN_ENGINE,
        LONG_ENGINE,
        HANDOFF,
        NOT_SOCKET,
    ] {
        assert_eq!(verdict(&v, row), "pass", "{row}");
    }
    assert_eq!(starting(&v, CAPS), ["pass", "pass"], "{v:#?}");
}

/// Without the keys, each choice of the variant's is judged by the kit's: the engine
/// set and the file spellings fail their rows, the caps are non-strict, and the
/// missing-program row cannot even reach a launch (`ghost` is no engine of its).
#[test]
fn without_the_keys_the_same_broker_fails_or_is_non_strict_row_by_row() {
    let v = run("", "");
    // known_engines: codex is the variant's, so the kit's "unknown engine" is accepted.
    assert_eq!(verdict(&v, UNKNOWN_ENGINE), "fail");
    // missing_program_engine: the kit's ghost is refused before any launch.
    assert_eq!(verdict(&v, &format!("{LAUNCH}missing-program")), "fail");
    // A launch refused for its cwd closes 4502 as the kit pins.
    assert_eq!(verdict(&v, &format!("{LAUNCH}bad-cwd")), "pass");
    // lock_path: the suite flocks {engine}@{id}.lock, which nothing holds.
    assert_eq!(verdict(&v, HANDOFF), "fail");
    // session_socket: the regular file the suite puts at {engine}@{id}.sock is not
    // where the broker looks, so the broker launches instead of refusing.
    assert_eq!(verdict(&v, NOT_SOCKET), "fail");
    // The caps: long valid keys accepted where the kit caps them, a pin.
    assert_eq!(starting(&v, CAPS), ["non-strict", "non-strict"], "{v:#?}");
    for (row, (verdict, m)) in v.iter().filter(|(k, _)| k.starts_with(CAPS)) {
        assert!(m.contains("sw-pin-length-caps"), "{row}: {verdict}: {m}");
    }
    // engine_max_bytes: a 33-byte engine is still refused, as unknown rather than by
    // the kit's cap: the kit's rule id is a pin.
    assert_eq!(verdict(&v, LONG_ENGINE), "non-strict");
    assert!(
        v[LONG_ENGINE].1.contains("key.engine_unknown"),
        "{:?}",
        v[LONG_ENGINE]
    );
}

/// The spawn code alone: with every other key declared, an undeclared
/// `close_spawn_failed` judges the variant's 4504 against the kit's 4502 (its
/// follows-value, `close_launch_failed`, undeclared too): non-strict; declared as
/// the launch code's 4502 (what a profile written before the split would say), it
/// fails; the launch refused for its cwd passes both times (the first test declares
/// 4504 and passes it).
#[test]
fn close_spawn_failed_is_judged_apart_from_close_launch_failed() {
    let keys = format!("{OWN_ENGINES}\n{OWN_PATHS}");
    let missing = format!("{LAUNCH}missing-program");
    let bad_cwd = format!("{LAUNCH}bad-cwd");
    let v = run(&keys, OWN_CAPS);
    assert_eq!(verdict(&v, &missing), "non-strict");
    assert!(
        v[&missing].1.contains("close_spawn_failed"),
        "{:?}",
        v[&missing]
    );
    assert_eq!(verdict(&v, &bad_cwd), "pass");
    let v = run(&keys, &format!("{OWN_CAPS}\nclose_launch_failed = 4502"));
    assert_eq!(verdict(&v, &missing), "fail");
    assert_eq!(verdict(&v, &bad_cwd), "pass");
}

/// The seed names a probe of `systemd-run --user` and a launch's `--unit <name>`, not
/// the probe's other words: the variant probes with `--user --version` and names its
/// units `--unit=NAME`, and every scope row passes.
#[test]
fn the_scope_rows_take_the_probe_and_the_unit_in_the_brokers_own_words() {
    let v = run_tags(
        &format!("{OWN_ENGINES}\n{OWN_PATHS}"),
        OWN_CAPS,
        "@sw-scopes",
    );
    assert_eq!(v.len(), 4, "{v:#?}");
    all_pass(&v);
}
