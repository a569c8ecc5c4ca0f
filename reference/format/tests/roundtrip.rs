//! Property tests: every generated valid state round-trips writer → reader unchanged
//! in each format, and a mutation that breaks one rule is refused with its code.

use arbitrary::Unstructured;
use proptest::prelude::*;
use serde_json::{json, Value};
use vx_format::{generate, read, wrap_envelope, write, Checkpoint, Format, ReadContext, Rule};

fn state(bytes: &[u8], format: Format) -> Checkpoint {
    generate::checkpoint(&mut Unstructured::new(bytes), format).expect("generator never fails")
}

fn read_back(file: &[u8], cp: &Checkpoint) -> Result<vx_format::Decoded, vx_format::FormatError> {
    let name = cp.file_name();
    read(
        file,
        &ReadContext {
            file_name: Some(&name),
            ..ReadContext::default()
        },
    )
}

fn format_strategy() -> impl Strategy<Value = Format> {
    prop_oneof![Just(Format::V1), Just(Format::V2), Just(Format::V3)]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

    #[test]
    fn valid_states_round_trip(bytes in prop::collection::vec(any::<u8>(), 0..2048), format in format_strategy()) {
        let cp = state(&bytes, format);
        let file = write(&cp, format).expect("generated states are valid");
        let back = read_back(&file, &cp).expect("writer output reads back");
        prop_assert_eq!(back.format, format);
        prop_assert_eq!(&back.checkpoint, &cp);
        // Canonical: writing the decoded state again gives the same bytes.
        prop_assert_eq!(write(&back.checkpoint, format).unwrap(), file);
    }

    #[test]
    fn one_broken_rule_is_refused_with_its_code(
        bytes in prop::collection::vec(any::<u8>(), 0..2048),
        format in format_strategy(),
        which in 0usize..MUTATIONS.len(),
    ) {
        let cp = state(&bytes, format);
        let payload = vx_format::write_payload(&cp, format).unwrap();
        let mut value: Value = serde_json::from_str(&payload).unwrap();
        let (name, mutate, rule) = MUTATIONS[which];
        prop_assume!(mutate(&mut value, format));
        let file = wrap_envelope(format.number(), &serde_json::to_string(&value).unwrap());
        let err = read_back(&file, &cp).expect_err(name);
        prop_assert_eq!(err.rule, rule, "{}", name);
        prop_assert_eq!(err.code(), rule.code());
    }
}

type Mutation = (&'static str, fn(&mut Value, Format) -> bool, Rule);

fn first_pane(v: &mut Value) -> Option<&mut Value> {
    v["panes"].as_array_mut()?.first_mut()
}

const MUTATIONS: &[Mutation] = &[
    (
        "unknown top-level field",
        |v, _| {
            v["extra"] = json!(1);
            true
        },
        Rule::UnknownField,
    ),
    (
        "generation 0",
        |v, _| {
            v["generation"] = json!(0);
            true
        },
        Rule::Range,
    ),
    (
        "checkpoint id uppercase",
        |v, _| {
            let id = v["checkpoint"]
                .as_str()
                .unwrap()
                .to_uppercase()
                .replacen('C', "c", 1);
            let changed = id != v["checkpoint"];
            v["checkpoint"] = json!(id);
            changed
        },
        Rule::CheckpointId,
    ),
    (
        "missing windows",
        |v, _| v.as_object_mut().unwrap().remove("windows").is_some(),
        Rule::MissingField,
    ),
    (
        "duplicate session",
        |v, _| {
            let s = v["sessions"].as_array_mut().unwrap();
            match s.first().cloned() {
                Some(first) => {
                    s.push(first);
                    true
                }
                None => false,
            }
        },
        Rule::Unsorted,
    ),
    (
        "pane cols 0",
        |v, _| first_pane(v).map(|p| p["cols"] = json!(0)).is_some(),
        Rule::Range,
    ),
    (
        "pane in unknown window",
        |v, _| {
            first_pane(v)
                .map(|p| p["window"] = json!("w9007199254740991"))
                .is_some()
                && v["windows"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .all(|w| w["window"] != "w9007199254740991")
        },
        Rule::WindowMissing,
    ),
    (
        "split first off by one",
        |v, _| {
            for w in v["windows"].as_array_mut().unwrap() {
                if let Some(n) = w["nodes"]
                    .as_array_mut()
                    .unwrap()
                    .iter_mut()
                    .find(|n| n["kind"] == "split")
                {
                    let first = n["first"].as_u64().unwrap();
                    n["first"] = json!(first + 1);
                    return true;
                }
            }
            false
        },
        Rule::TreePreorder,
    ),
    (
        "leftover node",
        |v, _| {
            for w in v["windows"].as_array_mut().unwrap() {
                let nodes = w["nodes"].as_array_mut().unwrap();
                if let Some(leaf) = nodes.iter().find(|n| n["kind"] == "pane").cloned() {
                    nodes.push(leaf);
                    return true;
                }
            }
            false
        },
        Rule::TreeLeftover,
    ),
    (
        "screen row removed",
        |v, _| {
            for p in v["panes"].as_array_mut().unwrap() {
                if p["text"]["availability"] == "plain" {
                    p["text"]["screen"].as_array_mut().unwrap().pop();
                    return true;
                }
            }
            false
        },
        Rule::TextRows,
    ),
    (
        "running pane in clean checkpoint",
        |v, _| {
            v["shutdown"] = json!("clean");
            match first_pane(v) {
                Some(p) => {
                    let obj = p.as_object_mut().unwrap();
                    for k in ["exit_code", "signal", "previous_state"] {
                        obj.remove(k);
                    }
                    obj.insert("state".into(), json!("running"));
                    true
                }
                None => false,
            }
        },
        Rule::CleanWithRunning,
    ),
    (
        "float field in format 1",
        |v, f| {
            f == Format::V1
                && first_pane(v)
                    .map(|p| {
                        p["layer"] = json!("float");
                        p["float"] = json!({"z": 1});
                    })
                    .is_some()
        },
        Rule::UnknownField,
    ),
    (
        "ratio in format 1 or 2",
        |v, f| {
            if f == Format::V3 {
                return false;
            }
            for w in v["windows"].as_array_mut().unwrap() {
                if let Some(n) = w["nodes"]
                    .as_array_mut()
                    .unwrap()
                    .iter_mut()
                    .find(|n| n["kind"] == "split")
                {
                    n["ratio"] = json!(5000);
                    return true;
                }
            }
            false
        },
        Rule::UnknownField,
    ),
    (
        "tags reversed",
        |v, _| {
            for p in v["panes"].as_array_mut().unwrap() {
                if let Some(tags) = p.get_mut("tags").and_then(Value::as_array_mut) {
                    if tags.len() >= 2 {
                        tags.reverse();
                        return true;
                    }
                }
            }
            false
        },
        Rule::TagsUnsorted,
    ),
    (
        "seventeen tags",
        |v, f| {
            f != Format::V1
                && first_pane(v)
                    .map(|p| {
                        p["tags"] = Value::Array(
                            (0..17)
                                .map(|i| json!({"key": format!("k{i:02}"), "value": "v"}))
                                .collect(),
                        );
                    })
                    .is_some()
        },
        Rule::TagsCount,
    ),
    (
        "layer tile",
        |v, f| f != Format::V1 && first_pane(v).map(|p| p["layer"] = json!("tile")).is_some(),
        Rule::Layer,
    ),
];
