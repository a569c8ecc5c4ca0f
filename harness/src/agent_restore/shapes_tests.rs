use super::*;

fn kit_text() -> Value {
    json!(r#"{"session":"s7","name":"mine","request_token":"tok"}"#)
}

fn strict(f: &[Finding]) -> Vec<bool> {
    f.iter().map(|f| f.strict).collect()
}

#[test]
fn a_missing_or_foreign_result_is_a_must_failure() {
    for v in [
        Value::Null,
        json!(r#"{"session":"s8"}"#),
        json!("created s70"),
    ] {
        let f = judge_created(&v, "s7", "mine", "tok", None);
        assert_eq!(f.len(), 1, "{v}");
        assert!(f[0].strict && f[0].clause.is_none(), "{v}: {f:?}");
    }
}

#[test]
fn the_kit_result_passes_and_another_shape_naming_the_session_is_a_pin() {
    assert!(judge_created(&kit_text(), "s7", "mine", "tok", None).is_empty());
    for v in [
        json!(r#"{"id":"s7"}"#),
        json!(r#"{"session":"s7","name":"mine","request_token":"tok","at":1}"#),
        json!(r#"{"result":{"sessions":["s7"]}}"#),
        json!("created s7"),
        json!("s7"),
    ] {
        let f = judge_created(&v, "s7", "mine", "tok", None);
        assert_eq!(strict(&f), [false], "{v}: {f:?}");
        assert_eq!(f[0].clause, Some(CREATED_CLAUSE));
    }
}

#[test]
fn declared_members_are_judged_strictly() {
    let own = ["id".to_string(), "request_token".to_string()];
    let ok = json!(r#"{"id":"s7","request_token":"tok"}"#);
    assert!(judge_created(&ok, "s7", "mine", "tok", Some(&own)).is_empty());
    for v in [
        kit_text(),
        json!(r#"{"id":"s7","request_token":"other"}"#),
        json!(r#"{"id":"s7"}"#),
    ] {
        assert_eq!(
            strict(&judge_created(&v, "s7", "mine", "tok", Some(&own))),
            [true],
            "{v}"
        );
    }
}

#[test]
fn the_capability_is_the_kit_name_a_declared_one_or_none() {
    let kit = [json!("x"), json!(KIT_CREATED_CAP)];
    let own = [json!("created_v1")];
    assert!(judge_capability(&kit, None).is_empty());
    assert_eq!(strict(&judge_capability(&own, None)), [false]);
    assert!(judge_capability(&own, Some("created_v1")).is_empty());
    assert_eq!(strict(&judge_capability(&kit, Some("created_v1"))), [true]);
    assert!(judge_capability(&[], Some("none")).is_empty());
}

#[test]
fn a_missing_reply_member_is_a_deviation_never_zero() {
    let kit = [0, 1, 2].map(|i| reply_member(i, None));
    let reply = json!({"restored": [], "native": []});
    let f = judge_reply(&reply, &kit, [0, 0, 0]);
    assert_eq!(strict(&f), [false], "{f:?}");
    assert!(f[0].expected.contains("skipped_existing"), "{f:?}");
    // A count that differs from the observed one.
    let reply = json!({"restored": ["a"], "skipped_existing": [], "native": []});
    assert_eq!(strict(&judge_reply(&reply, &kit, [0, 0, 0])), [false]);
    assert!(judge_reply(&reply, &kit, [1, 0, 0]).is_empty());
    // Declared: the profile's own names, strictly; "none" is not looked for.
    let own = [
        reply_member(0, Some("created")),
        reply_member(1, Some("none")),
        reply_member(2, Some("resumed")),
    ];
    let reply = json!({"created": ["a"], "resumed": [{}]});
    assert!(judge_reply(&reply, &own, [1, 5, 1]).is_empty());
    assert_eq!(strict(&judge_reply(&reply, &own, [1, 0, 0])), [true]);
    let reply = json!({"restored": ["a"], "native": [{}]});
    assert_eq!(strict(&judge_reply(&reply, &own, [1, 0, 1])), [true, true]);
}

#[test]
fn the_keys_are_checked() {
    assert!(check(CREATED_CAP_KEY, &toml::Value::String("none".into())).is_ok());
    assert!(check(CREATED_CAP_KEY, &toml::Value::Integer(1)).is_err());
    let members = toml::Value::Array(vec![toml::Value::String("id".into())]);
    assert!(check(CREATED_MEMBERS_KEY, &members).is_ok());
    assert!(check(CREATED_MEMBERS_KEY, &toml::Value::Array(vec![])).is_err());
    assert!(check("restore_reply_native", &toml::Value::String(String::new())).is_err());
    assert!(is_key("restore_reply_skipped") && !is_key("restored"));
}
