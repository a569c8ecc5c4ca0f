//! The fault plans through the real injector (`libvxfault.so` preloaded into
//! `vxpersist drive`), not the drive's own `inject`: what a failing disk does to a
//! pause.

mod support;

use serde_json::{json, Value};
use support::*;

fn pause_ref(i: &Value) -> Option<String> {
    i["checkpoint"]["pause"]["backend_session_state_ref"]
        .as_str()
        .map(str::to_owned)
}

/// `rename@*/checkpoint.json#2=after:EIO`: the second PauseRun's rename lands, then
/// reports EIO ("PauseRun committed, the client saw an error"). B is named by the
/// durable checkpoint, so neither A nor B may be deleted.
#[test]
fn pause_run_committed_then_eio_deletes_nothing() {
    let mut d = Drive::start_under("rename@*/runstore/*/checkpoint.json#2=after:EIO");
    graph(&mut d, vec![node("w", "pi", "persist")], vec![]);
    d.ask("w", "first?");
    let a = pause_ref(&d.inspect()).expect("the first PauseRun names A");
    let r = d.ok(json!({"cmd": "answer", "text": "one", "ask": "second?"}));
    assert_eq!(r["result"], "paused");
    assert!(
        warnings(&r).contains(&"persist.pause_run_failed".to_owned()),
        "the injected EIO reached the runtime: {r}"
    );
    let i = d.inspect();
    let b = pause_ref(&i).expect("the rename landed: the checkpoint names B");
    assert_ne!(a, b);
    let keys = i["store_keys"].as_array().unwrap();
    assert!(
        keys.iter().any(|k| k == &a) && keys.iter().any(|k| k == &b),
        "{keys:?}"
    );
    assert!(ops_named(&i, "store_delete").is_empty());
}

/// `write@*/persist/runs/*=ENOSPC` and `fsync@*/persist/runs/*=EIO`: the pause's Put
/// fails, so the run pauses without a CLI ref and the ask_user is not blocked.
#[test]
fn a_failing_store_disk_pauses_without_a_ref() {
    for plan in [
        "write@*/persist/runs/*=ENOSPC",
        "fsync@*/persist/runs/*=EIO",
    ] {
        let mut d = Drive::start_under(plan);
        graph(&mut d, vec![node("w", "pi", "persist")], vec![]);
        let p = d.ask("w", "ok?");
        assert_eq!(p["result"], "paused", "{plan}");
        assert!(
            warnings(&p).contains(&"persist.pause_put_failed".to_owned()),
            "{plan}: {p}"
        );
        let i = d.inspect();
        assert_eq!(i["checkpoint"]["pause"]["question"], "ok?", "{plan}");
        assert_eq!(pause_ref(&i), None, "{plan}");
        assert!(i["store_keys"].as_array().unwrap().is_empty(), "{plan}");
    }
}
