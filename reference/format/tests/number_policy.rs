//! `NumberPolicy`: the default scan is pins.md's; the positional policy admits unit
//! fractions only where it says.

use vx_format::json::{
    check_document, scan_document, NumberPolicy, NumberRefusal, ScanError, ScanOptions,
};
use vx_format::Doc;

const RATIO: ScanOptions = ScanOptions {
    max_depth: 8,
    numbers: NumberPolicy::IntegersAndUnitFraction {
        scope: "layout",
        key: "ratio",
        max_len: 12,
    },
};

fn refusal(text: &str) -> Option<NumberRefusal> {
    match scan_document(text.as_bytes(), Doc::File, &RATIO) {
        Ok(_) => None,
        Err(ScanError::Number { refusal, .. }) => Some(refusal),
        Err(ScanError::Json(e)) => panic!("{text}: {}", e.rule.id()),
    }
}

#[test]
fn default_scan_keeps_fractions_for_the_decoder() {
    assert!(check_document(br#"{"a":0.5,"b":[1e3]}"#, Doc::File).is_ok());
    assert_eq!(
        check_document(br#"{"a":9007199254740992}"#, Doc::File)
            .unwrap_err()
            .rule
            .id(),
        "json.unsafe_integer"
    );
    assert_eq!(
        ScanOptions::default().max_depth,
        vx_format::limits::MAX_JSON_DEPTH
    );
}

#[test]
fn unit_fraction_only_at_the_scoped_key() {
    assert_eq!(refusal(r#"{"layout":{"ratio":0.5}}"#), None);
    assert_eq!(refusal(r#"{"layout":{"left":{"ratio":0.25}}}"#), None);
    assert_eq!(refusal(r#"{"layout":[{"ratio":0.25}]}"#), None);
    assert_eq!(refusal(r#"{"l\u0061yout":{"r\u0061tio":0.5}}"#), None);
    assert_eq!(refusal(r#"{"ratio":0.5}"#), Some(NumberRefusal::NotInteger));
    assert_eq!(
        refusal(r#"{"layout":{"size":0.5}}"#),
        Some(NumberRefusal::NotInteger)
    );
    assert_eq!(
        refusal(r#"{"layout":{"ratio":[0.5]}}"#),
        Some(NumberRefusal::NotInteger)
    );
    assert_eq!(
        refusal(r#"{"layout":{"x":1},"ratio":0.5}"#),
        Some(NumberRefusal::NotInteger)
    );
    for bad in [
        "0.0",
        "1.0",
        "1.5",
        "5e-1",
        "0.5e0",
        "-0.5",
        "0.1234567891234",
        "0.99999999999999999",
    ] {
        let text = format!(r#"{{"layout":{{"ratio":{bad}}}}}"#);
        let expect = Some(NumberRefusal::UnitFraction);
        assert_eq!(refusal(&text), expect, "{bad}");
    }
    assert_eq!(refusal(r#"{"layout":{"ratio":1}}"#), None);
    assert!(matches!(
        scan_document(br#"[[[[[[[[[1]]]]]]]]]"#, Doc::File, &RATIO),
        Err(ScanError::Json(e)) if e.rule.id() == "json.depth"
    ));
}
