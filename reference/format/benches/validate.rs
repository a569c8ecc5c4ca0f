//! Strict validation throughput against serde_json's untyped parse of the same bytes.
fn main() {}
