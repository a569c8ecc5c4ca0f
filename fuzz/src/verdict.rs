//! Each target's verdict on one input, for the regression replay (`fuzz/replay.sh`,
//! `fuzz/triage.sh`): every target calls [`expect`] first with its reader's verdict
//! function (`accepted` or `refused <rule>`); when the environment names
//! a verdict (`VX_FUZZ_EXPECT`) the target's reader must give exactly it, and with
//! `VX_FUZZ_PRINT_VERDICT` set the verdict is printed. Unset (fuzzing), it costs one
//! load of a cached flag.

use std::sync::OnceLock;

use vx_persist::blob::ReadOptions;
use vx_persist::Layouts;

fn outcome<T, E: std::fmt::Debug>(r: Result<T, E>) -> String {
    match r {
        Ok(_) => "accepted".into(),
        Err(e) => format!("refused {e:?}"),
    }
}

fn rule<T, S: std::fmt::Display>(r: Result<T, S>) -> String {
    match r {
        Ok(_) => "accepted".into(),
        Err(id) => format!("refused {id}"),
    }
}

/// `passes`: the oracles without a single reader verdict (the target's own
/// assertions are the test).
pub fn passes(_: &[u8]) -> String {
    "passes".into()
}

pub fn format_reader(data: &[u8]) -> String {
    let ctx = vx_format::ReadContext {
        max_bytes: vx_format::limits::HARD_MAX_CHECKPOINT_BYTES,
        ..Default::default()
    };
    rule(vx_format::read(data, &ctx).map_err(|e| e.rule.id()))
}

pub fn json(data: &[u8]) -> String {
    rule(vx_format::json::check_document(data, vx_format::Doc::File).map_err(|e| e.rule.id()))
}

pub fn blob(data: &[u8]) -> String {
    let opts = ReadOptions::new(Layouts::builtin());
    rule(vx_persist::blob::read(data, &opts).map_err(|e| e.rule.id()))
}

pub fn persist_checkpoint(data: &[u8]) -> String {
    rule(vx_persist::runstore::checkpoint::reencode_is_stable(data))
}

pub fn wire_frame(data: &[u8]) -> String {
    rule(vxref::wire::decode_request(data).map_err(|e| e.error.code.as_str().into_owned()))
}

pub fn zon_config(data: &[u8]) -> String {
    outcome(vxref::config::zon::parse(data))
}

pub fn workspace_archive(data: &[u8]) -> String {
    rule(vx_agentsession::archive::read(data).map_err(|e| e.rule.id()))
}

pub fn agent_record(data: &[u8]) -> String {
    outcome(vx_agentsession::record::parse(data))
}

pub fn integration_template(data: &[u8]) -> String {
    let text = data.split(|b| *b == 0).next().unwrap_or_default();
    outcome(vx_agentsession::template::parse(text))
}

pub fn broker_alias_sidecar(data: &[u8]) -> String {
    outcome(vx_broker::alias::decode(data))
}

pub fn broker_owner_file(data: &[u8]) -> String {
    outcome(vx_broker::owner::decode(data))
}

pub fn broker_frames(data: &[u8]) -> String {
    match std::str::from_utf8(data) {
        Ok(text) => outcome(vx_broker::frames::decode_client(text)),
        Err(_) => "refused not UTF-8".into(),
    }
}

/// Called by every target on every input with its reader's verdict function: checks
/// or prints the verdict when asked. Each target names only its own function, so a
/// target's binary holds (and its coverage map counts) no other reader.
pub fn expect(data: &[u8], verdict: fn(&[u8]) -> String) {
    static MODE: OnceLock<(Option<String>, bool)> = OnceLock::new();
    let (want, print) = MODE.get_or_init(|| {
        (
            std::env::var("VX_FUZZ_EXPECT").ok(),
            std::env::var_os("VX_FUZZ_PRINT_VERDICT").is_some(),
        )
    });
    if want.is_none() && !print {
        return;
    }
    let got = verdict(data);
    if *print {
        eprintln!("vx-fuzz verdict: {got}");
    }
    if let Some(want) = want {
        assert_eq!(&got, want, "the verdict changed");
    }
}
