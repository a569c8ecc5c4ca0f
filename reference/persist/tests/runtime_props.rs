//! Property tests where a naive model exists: resolution (rules 0–7) against
//! `runtime::oracle`'s model, the checkpoint reader's re-encode stability, and
//! unit checks of plumbing the drive cannot reach (an empty StateRef is no slot).

use proptest::prelude::*;
use serde_json::json;

use vx_persist::runstore::checkpoint::reencode_is_stable;
use vx_persist::runstore::{read_checkpoint, Checkpoint, NodeSessionSlot, RunStatus};

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    #[test]
    fn resolution_matches_the_naive_model(data in proptest::collection::vec(any::<u8>(), 0..64)) {
        if let Err(e) = vx_persist::runtime::oracle::check(&data) {
            prop_assert!(false, "{}", e);
        }
    }

    #[test]
    fn checkpoint_round_trips(
        nodes in proptest::collection::btree_map("[a-z]{1,8}", (any::<u8>(), "[a-z ]{0,20}"), 0..6),
        paused in any::<bool>(),
    ) {
        let mut cp = Checkpoint {
            version: 1, run: "r1".into(), status: RunStatus::Running,
            outputs: Default::default(), visits: Default::default(),
            node_sessions: Default::default(), pause: None, resume_node: None,
        };
        for (n, (k, text)) in &nodes {
            let mut out = serde_json::Map::new();
            out.insert("text".into(), json!(text));
            out.insert("turn".into(), json!(k));
            cp.outputs.insert(n.clone(), out);
            cp.visits.insert(n.clone(), u64::from(*k));
            if k % 2 == 0 {
                cp.node_sessions.insert(n.clone(), NodeSessionSlot {
                    backend: "pi".into(), session_id: Some(format!("s{k}")),
                    fingerprint: (k % 4 == 0).then(|| "fp".into()),
                    state_ref: Some(format!("{n}/01J{k:023}")), conversation_ref: None,
                });
            }
        }
        if paused {
            cp.status = RunStatus::Paused;
            cp.pause = Some(vx_persist::runstore::PauseInfo {
                node: "w".into(), question: "q?".into(), backend: "codex".into(),
                session_id: Some("s".into()), fingerprint: None,
                backend_session_state_ref: Some("w/pause/01J00000000000000000000001".into()),
            });
        }
        let bytes = cp.encode();
        prop_assert_eq!(read_checkpoint(&bytes).unwrap(), cp);
        prop_assert!(reencode_is_stable(&bytes).is_ok());
        // Any single-byte change is refused or still re-encodes stably.
        for i in (0..bytes.len()).step_by(7) {
            let mut m = bytes.clone();
            m[i] ^= 0x20;
            prop_assert!(reencode_is_stable(&m).is_ok());
        }
    }
}

fn minimal() -> serde_json::Value {
    json!({"version":1,"run":"r1","status":"running","outputs":{},"visits":{},
           "node_sessions":{},"pause":null,"resume_node":null})
}

#[test]
fn the_reader_is_closed_and_bounded() {
    let ok = minimal().to_string();
    assert!(read_checkpoint(ok.as_bytes()).is_ok());
    let rule = |v: serde_json::Value| read_checkpoint(v.to_string().as_bytes()).unwrap_err().rule;
    let mut extra = minimal();
    extra["blob"] = json!("x");
    assert_eq!(rule(extra), Some("checkpoint.shape"));
    let mut bad_ref = minimal();
    bad_ref["node_sessions"] = json!({"w": {"backend": "pi", "state_ref": "../x"}});
    assert_eq!(rule(bad_ref), Some("checkpoint.ref"));
    let mut pause_in_slot = minimal();
    pause_in_slot["node_sessions"] =
        json!({"w": {"backend": "pi", "state_ref": "w/pause/01J00000000000000000000001"}});
    assert_eq!(rule(pause_in_slot), Some("checkpoint.ref"));
    let mut other_node = minimal();
    other_node["node_sessions"] =
        json!({"w": {"backend": "pi", "state_ref": "x/01J00000000000000000000001"}});
    assert_eq!(rule(other_node), Some("checkpoint.ref"));
    let dup = br#"{"version":1,"version":1,"run":"r1","status":"running","outputs":{},"visits":{},"node_sessions":{},"pause":null,"resume_node":null}"#;
    assert_eq!(
        read_checkpoint(dup).unwrap_err().rule,
        Some("checkpoint.json")
    );
    let big = vec![b' '; 4 * 1024 * 1024 + 1];
    assert_eq!(
        read_checkpoint(&big).unwrap_err().rule,
        Some("checkpoint.size")
    );
}

#[test]
fn an_empty_state_ref_is_not_adopted_as_a_slot() {
    use vx_persist::memory::{MemoryRunStore, MemoryStore};
    use vx_persist::runtime::{Graph, NodeSpec, Runtime, SessionMode};
    let graph = Graph {
        run: "r1".into(),
        nodes: vec![NodeSpec {
            id: "w".into(),
            backend: "pi".into(),
            mode: SessionMode::Persist,
            fingerprint: "fp".into(),
            fan_out: false,
            extra_output: Default::default(),
        }],
        edges: vec![],
    };
    let mut rt = Runtime::new(
        graph,
        Some(Box::new(MemoryStore::default())),
        Box::new(MemoryRunStore::default()),
    )
    .unwrap();
    let mut cp = rt.build_checkpoint();
    cp.node_sessions.insert(
        "w".into(),
        NodeSessionSlot {
            backend: "pi".into(),
            session_id: Some("s1".into()),
            fingerprint: None,
            state_ref: None,
            conversation_ref: None,
        },
    );
    cp.status = RunStatus::FailedResumable;
    rt.restore_then_adopt(&cp);
    assert!(rt.rs.node_sessions.is_empty());
}

/// Found by `persist_checkpoint` (fuzz/regressions/persist_checkpoint/
/// float-reads-back-different): a number written with more digits than an f64 holds
/// must read to the nearest f64, so that its shortest form reads back to the same one.
/// serde_json's default float parser may miss by one unit in the last place; its
/// `float_roundtrip` feature does not.
#[test]
fn an_output_number_with_more_digits_than_an_f64_reads_back_the_same() {
    let text = br#"{"version":1,"run":"r","status":"rewound","outputs":{"c":{"is":111.550555555555555}},"visits":{},"node_sessions":{}}"#;
    let cp = read_checkpoint(text).expect("a valid checkpoint");
    // Rust's own parser rounds correctly: the nearest f64.
    let nearest: f64 = "111.550555555555555".parse().unwrap();
    assert_eq!(cp.outputs["c"]["is"].as_f64(), Some(nearest));
    assert_eq!(reencode_is_stable(text), Ok(()));
}
