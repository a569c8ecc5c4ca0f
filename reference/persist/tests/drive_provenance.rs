//! Seed "Tests (mandatory)", visit and provenance rows (features 05), played
//! through `vxpersist drive`. Every visit that must resume runs on a wiped root or a
//! new pod unless the row is about HasSession on a live root, so nothing passes
//! because a root still held the transcript.

mod support;

use serde_json::json;
use support::*;

fn writer_judge(d: &mut Drive) {
    graph(
        d,
        vec![
            node("w", "pi", "persist"),
            node("j", "claude_code", "fresh"),
        ],
        vec![
            edge("w", "j", json!({"draft": {"output": "text"}})),
            edge("j", "w", json!({"note": {"output": "text"}})),
        ],
    );
}

#[test]
fn visit_1_fresh_visit_2_same_id_no_session_id_in_with() {
    let mut d = Drive::start();
    writer_judge(&mut d);
    let v1 = d.run_to("w");
    assert_eq!(v1["execute"]["session_id"], json!(null), "visit 1 is fresh");
    assert_eq!(v1["execute"]["minted"], true);
    let id = v1["execute"]["output_session_id"]
        .as_str()
        .unwrap()
        .to_owned();
    d.run_to("j");
    d.wipe();
    let v2 = d.run_to("w");
    assert_eq!(
        v2["execute"]["session_id"],
        json!(id),
        "visit 2 resumes its own id"
    );
    assert_eq!(
        v2["execute"]["turn"], 2,
        "the conversation continued (unpacked)"
    );
    assert_eq!(v2["execute"]["minted"], false);
    let i = d.inspect();
    assert!(slot_ref(&i, "w").is_some());
    assert_no_leaks(&i);
}

#[test]
fn wiped_dir_between_completed_visits_on_new_pods() {
    let mut d = Drive::start();
    writer_judge(&mut d);
    let v1 = d.run_to("w");
    let id = v1["execute"]["output_session_id"].clone();
    for (k, pod) in ["pod-2", "pod-3", "pod-4"].into_iter().enumerate() {
        d.run_to("j");
        d.new_pod(pod);
        let v = d.run_to("w");
        assert_eq!(v["execute"]["session_id"], id);
        assert_eq!(
            v["execute"]["turn"],
            k as u64 + 2,
            "one conversation across pods"
        );
        assert_eq!(v["execute"]["pod"], pod);
    }
}

#[test]
fn visit_2_conflicting_inbound_own_slot_wins() {
    let mut d = Drive::start();
    graph(
        &mut d,
        vec![node("w", "pi", "persist"), node("x", "pi", "fresh")],
        vec![edge(
            "x",
            "w",
            json!({"_session_id": {"output": "_session_id"},
                                    "_session_fingerprint": {"output": "_session_fingerprint"}}),
        )],
    );
    let own = d.run_to("w")["execute"]["output_session_id"].clone();
    let other = d.run_to("x")["execute"]["output_session_id"].clone();
    assert_ne!(own, other);
    // x's transcript stays live: HasSession(other) is true, yet the own slot wins.
    let v2 = d.run_to("w");
    assert_eq!(v2["execute"]["session_id"], own);
    assert_eq!(
        v2["execute"]["fingerprint"], "fp-w",
        "fingerprint from the slot"
    );
    assert_eq!(v2["execute"]["turn"], 2);
}

fn source_then_literal(d: &mut Drive, extra: serde_json::Value) {
    graph(
        d,
        vec![
            json!({"id": "src", "backend": "pi", "session": "fresh", "extra_output": extra}),
            node("w", "pi", "persist"),
        ],
        vec![edge(
            "src",
            "w",
            json!({"_session_id": {"literal": "sess-other"}}),
        )],
    );
    d.plant_pi_session("pod-1", "sess-other");
}

#[test]
fn rev8_literal_sess_other_with_has_session_true_and_source_sess_real_is_fresh() {
    let mut d = Drive::start();
    source_then_literal(&mut d, json!({}));
    let real = d.run_to("src")["execute"]["output_session_id"].clone();
    assert_ne!(real, "sess-other");
    let v = d.run_to("w");
    assert_eq!(v["execute"]["session_id"], json!(null));
    assert!(warnings(&v).contains(&"persist.provenance_none".to_owned()));
    assert_eq!(v["execute"]["minted"], true);
}

#[test]
fn rev8_literal_in_with_and_source_output_id_missing_is_fresh() {
    let mut d = Drive::start();
    source_then_literal(&mut d, json!({"_session_id": null}));
    d.run_to("src");
    let v = d.run_to("w");
    assert_eq!(v["execute"]["session_id"], json!(null));
}

#[test]
fn rev8_literal_equal_to_the_source_stamp_still_needs_the_stamp_and_backend() {
    // Control for the two rows above: the same literal from a source that did serve
    // sess-other on pi resumes through HasSession, so those rows can fail.
    let mut d = Drive::start();
    source_then_literal(&mut d, json!({"_session_id": "sess-other"}));
    d.run_to("src");
    let v = d.run_to("w");
    assert_eq!(v["execute"]["session_id"], "sess-other");
    // …and a source stamped with another backend is not eligible.
    let mut d = Drive::start();
    source_then_literal(
        &mut d,
        json!({"_session_id": "sess-other", "_backend": "codex"}),
    );
    d.run_to("src");
    assert_eq!(d.run_to("w")["execute"]["session_id"], json!(null));
}

/// `src` (pi, fingerprint `fp-<src>`) feeds w its session id, and the edge adds
/// a contradicting literal fingerprint.
fn source_and_lying_fingerprint(src: &str, session: &str) -> Drive {
    let mut d = Drive::start();
    graph(
        &mut d,
        vec![
            json!({"id": src, "backend": "pi", "session": session, "fingerprint": format!("fp-{src}")}),
            node("w", "pi", "persist"),
        ],
        vec![edge(
            src,
            "w",
            json!({"_session_id": {"output": "_session_id"},
                   "_session_fingerprint": {"literal": "fp-lie"}}),
        )],
    );
    d
}

#[test]
fn rev8_has_session_path_fingerprint_comes_from_the_source_output() {
    let mut d = source_and_lying_fingerprint("src", "fresh");
    let id = d.run_to("src")["execute"]["output_session_id"].clone();
    let v = d.run_to("w");
    assert_eq!(
        v["execute"]["session_id"], id,
        "HasSession on the live root"
    );
    assert_eq!(
        v["execute"]["fingerprint"], "fp-src",
        "not the inbound fp-lie"
    );
    assert_eq!(v["execute"]["turn"], 2);
}

#[test]
fn inbound_id_matching_two_stamp_eligible_sources_is_fresh() {
    let mut d = Drive::start();
    let shared = json!({"_session_id": "sess-shared"});
    graph(
        &mut d,
        vec![
            json!({"id": "a", "backend": "pi", "extra_output": shared}),
            json!({"id": "b", "backend": "pi", "extra_output": shared}),
            node("w", "pi", "persist"),
        ],
        vec![
            edge("a", "w", json!({"_session_id": {"output": "_session_id"}})),
            edge("b", "w", json!({"_session_id": {"output": "_session_id"}})),
        ],
    );
    d.plant_pi_session("pod-1", "sess-shared");
    d.run_to("a");
    d.run_to("b");
    let v = d.run_to("w");
    assert_eq!(v["execute"]["session_id"], json!(null));
    assert!(warnings(&v).contains(&"persist.provenance_many".to_owned()));
}

#[test]
fn inbound_id_one_stamp_eligible_source_slot_wiped_dir_unpacks_with_slot_fingerprint() {
    let mut d = source_and_lying_fingerprint("s", "persist");
    let id = d.run_to("s")["execute"]["output_session_id"].clone();
    let s_ref = slot_ref(&d.inspect(), "s").unwrap();
    d.new_pod("pod-2");
    let v = d.run_to("w");
    assert_eq!(
        v["execute"]["session_id"], id,
        "unpacked from the source's slot"
    );
    assert_eq!(
        v["execute"]["fingerprint"], "fp-s",
        "the slot's fingerprint"
    );
    assert_eq!(v["execute"]["turn"], 2);
    let i = d.inspect();
    assert!(op_index(&i, "store_get", Some(&s_ref)).is_some());
}

/// A fresh pi source that ran and feeds w its session id (it has no slot).
fn fresh_source_ran() -> Drive {
    let mut d = Drive::start();
    graph(
        &mut d,
        vec![node("src", "pi", "fresh"), node("w", "pi", "persist")],
        vec![edge(
            "src",
            "w",
            json!({"_session_id": {"output": "_session_id"}}),
        )],
    );
    d.run_to("src");
    d
}

#[test]
fn inbound_id_wiped_dir_no_matching_source_slot_gives_no_session_id() {
    let mut d = fresh_source_ran();
    d.wipe();
    let v = d.run_to("w");
    assert_eq!(v["execute"]["session_id"], json!(null));
    assert!(warnings(&v).contains(&"persist.has_session_false".to_owned()));
}

#[test]
fn has_session_false_and_no_slot_gives_no_session_id_even_with_an_inbound_id() {
    let mut d = fresh_source_ran();
    d.new_pod("pod-2");
    let v = d.run_to("w");
    assert_eq!(v["execute"]["session_id"], json!(null));
    assert_eq!(v["execute"]["minted"], true);
}

#[test]
fn completed_slot_get_or_unpack_failure_strips_without_falling_through() {
    for op in ["store_get", "unpack"] {
        let mut d = Drive::start();
        graph(&mut d, vec![node("w", "pi", "persist")], vec![]);
        d.run_to("w");
        // The root is NOT wiped: HasSession would say true; the failure must not
        // fall through to it.
        d.inject(op, "before");
        let v = d.run_to("w");
        assert_eq!(v["execute"]["session_id"], json!(null), "{op}");
        assert_eq!(v["execute"]["fingerprint"], json!(null), "{op}");
        let code = match op {
            "store_get" => "persist.slot_get_failed",
            _ => "persist.slot_unpack_failed",
        };
        assert!(warnings(&v).contains(&code.to_owned()), "{op}: {v}");
    }
}
