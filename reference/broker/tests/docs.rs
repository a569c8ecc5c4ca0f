//! docs/spec/single-writer.md names every rule the broker enforces, so a rule added
//! to the table cannot go undocumented.

use vx_broker::Rule;

#[test]
fn the_spec_names_every_rule() {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../docs/spec/single-writer.md"
    );
    let text = std::fs::read_to_string(path).unwrap();
    let missing: Vec<&str> = Rule::ALL
        .iter()
        .map(|r| r.id())
        .filter(|id| !text.contains(&format!("`{id}`")))
        .collect();
    assert!(missing.is_empty(), "undocumented rules: {missing:?}");
}
