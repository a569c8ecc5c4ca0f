use super::*;

/// What phux's own writer (serde_json, derive order) produces for schema 2.
const PHUX: &str = r#"{"schema_version":2,"sessions":[{"name":"ops","active":true,"windows":[{"name":"main","active":true,"layout":{"kind":"split","dir":"horizontal","ratio":0.33333334,"left":{"kind":"pane","pane":0},"right":{"kind":"pane","pane":1}},"panes":[{"active":true,"title":"monitor","cwd":"/tmp/ops","agent_session":{"plugin_id":"com.phux.agents","integration_id":"claude-code","native_id":"session-42"},"cols":120,"rows":40},{"active":false,"cols":0,"rows":0}]}]}]}"#;

fn verdict(text: &str) -> &'static str {
    read(text.as_bytes())
        .map(|_| "valid")
        .unwrap_or_else(|e| e.rule.id())
}

#[test]
fn reads_phux_output_and_round_trips() {
    let decoded = read(PHUX.as_bytes()).unwrap();
    assert_eq!(decoded.schema_version, 2);
    let w = &decoded.archive.sessions[0].windows[0];
    assert_eq!(w.layout.as_ref().unwrap().leaves(), [0, 1]);
    assert_eq!(w.panes[1].cols, Some(0));
    let bytes = write(&decoded.archive);
    let again = read(&bytes).unwrap();
    assert_eq!(again.archive, decoded.archive);
    assert_eq!(write(&again.archive), bytes);
    assert!(std::str::from_utf8(&bytes)
        .unwrap()
        .contains("\"ratio\":0.33333334,"));
    assert_eq!(decoded.archive.sessions[0].preferred_pane(), Some((0, 0)));
}

#[test]
fn writer_picks_schema_by_records() {
    let schema1 = PHUX.replace(
        r#""agent_session":{"plugin_id":"com.phux.agents","integration_id":"claude-code","native_id":"session-42"},"#,
        "",
    );
    let decoded = read(schema1.as_bytes()).unwrap();
    assert!(write(&decoded.archive).starts_with(br#"{"schema_version":1,"#));
}

#[test]
fn schema_rules() {
    for (v, want) in [
        ("0", "archive.schema_version"),
        ("3", "archive.schema_version"),
        ("\"2\"", "archive.schema_version"),
        ("1", "archive.schema1_record"),
    ] {
        let text = PHUX.replace("\"schema_version\":2", &format!("\"schema_version\":{v}"));
        assert_eq!(verdict(&text), want, "{v}");
    }
    assert_eq!(verdict(r#"{"sessions":[]}"#), "archive.schema_version");
    assert_eq!(verdict(r#"[1]"#), "archive.shape");
    assert_eq!(verdict(r#"{"sessions":[],"schema_version":1}"#), "valid");
    assert_eq!(
        verdict(r#"{"schema_version":2.0,"sessions":[]}"#),
        "archive.json"
    );
    assert_eq!(
        read(br#"{"schema_version":3}"#).unwrap_err().code(),
        "unsupported.archive_schema"
    );
}

#[test]
fn ratio_policy() {
    for (r, want) in [
        ("0.5", "valid"),
        ("0", "archive.shape"),
        ("1", "archive.shape"),
        ("0.0", "archive.json"),
        ("1.0", "archive.json"),
        ("\"0.5\"", "archive.shape"),
        ("5e-1", "archive.json"),
        ("0.99999999999999999999", "archive.json"),
        ("-0.5", "archive.json"),
    ] {
        let text = PHUX.replace("0.33333334", r);
        assert_eq!(verdict(&text), want, "{r}");
    }
    // A fraction anywhere else is not JSON for this format.
    assert_eq!(
        verdict(&PHUX.replace("\"cols\":120", "\"cols\":120.5")),
        "archive.json"
    );
}

#[test]
fn order_of_rules_ignores_member_order() {
    // A record error early and a shape error later: shape wins.
    let text = PHUX
        .replace("session-42", "-x")
        .replace("\"cols\":0,", "\"cols\":\"0\",");
    assert_eq!(verdict(&text), "archive.shape");
    let dup = r#"{"schema_version":1,"sessions":[{"name":"a","windows":[]},{"name":"a","windows":[{"name":"w","panes":[{"cols":70000}]}]}]}"#;
    assert_eq!(verdict(dup), "archive.duplicate_session");
}

#[test]
fn paths_without_content() {
    let text = PHUX.replace("session-42", "--dangerously-bypass-approvals-and-sandbox");
    let err = read(text.as_bytes()).unwrap_err();
    assert_eq!(err.rule.id(), "archive.record");
    let reason = err.reason();
    assert!(reason.contains("native.option_shaped"), "{reason}");
    assert!(
        reason.contains("$.sessions[0].windows[0].panes[0].agent_session.native_id"),
        "{reason}"
    );
    assert!(!reason.contains("dangerously"), "{reason}");
}

#[test]
fn layout_and_bounds() {
    let two = |l: &str| PHUX.replace(r#"{"kind":"pane","pane":1}"#, l);
    assert_eq!(
        verdict(&two(r#"{"kind":"pane","pane":2}"#)),
        "archive.layout"
    );
    assert_eq!(
        verdict(&two(r#"{"kind":"pane","pane":0}"#)),
        "archive.layout"
    );
    assert_eq!(
        verdict(&two(r#"{"kind":"pane","pane":-1}"#)),
        "archive.layout"
    );
    assert_eq!(
        verdict(&two(r#"{"kind":"pane","pane":1,"ratio":0.5}"#)),
        "archive.shape"
    );
    assert_eq!(verdict(&two(r#"{"kind":"tab","pane":1}"#)), "archive.shape");
    assert_eq!(
        verdict(&PHUX.replace("\"rows\":40", "\"rows\":65536")),
        "archive.cells"
    );
    assert_eq!(
        verdict(&PHUX.replace("\"rows\":40", "\"rows\":-1")),
        "archive.cells"
    );
    assert_eq!(
        verdict(&PHUX.replace("\"rows\":40", "\"rows\":65535")),
        "valid"
    );
    let cmd = |c: &str| PHUX.replace("\"title\":\"monitor\",", &format!("\"command\":{c},"));
    assert_eq!(verdict(&cmd("[]")), "archive.argv");
    assert_eq!(verdict(&cmd("[\"sh\"]")), "valid");
    assert_eq!(verdict(&cmd("[1]")), "archive.shape");
    let many = format!("[{}]", vec!["\"x\""; 257].join(","));
    assert_eq!(verdict(&cmd(&many)), "archive.argv");
    assert_eq!(
        verdict(&PHUX.replace("\"name\":\"ops\"", "\"name\":\" \\t\"")),
        "archive.duplicate_session"
    );
    assert_eq!(check_length(16 * 1024 * 1024).map(|_| 0), Ok(0));
    assert_eq!(
        check_length(16 * 1024 * 1024 + 1).unwrap_err().rule.id(),
        "archive.size"
    );
}

#[test]
fn sessions_windows_and_panes_are_additive_and_the_record_is_closed() {
    let text = PHUX
        .replace("\"cols\":0,", "\"cols\":0,\"zoom\":{\"level\":[1,2]},")
        .replace("\"windows\":", "\"host\":\"build-01\",\"windows\":")
        .replace("\"panes\":", "\"tab\":3,\"panes\":");
    let decoded = read(text.as_bytes()).expect("unknown members outside the record are read past");
    assert_eq!(decoded, read(PHUX.as_bytes()).unwrap());
    let record = PHUX.replace("\"native_id\":", "\"future\":1,\"native_id\":");
    assert_eq!(verdict(&record), "archive.shape");
    let top = PHUX.replacen('{', "{\"saved_at\":1,", 1);
    assert_eq!(verdict(&top), "archive.shape");
}
