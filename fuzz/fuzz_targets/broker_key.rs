//! Fuzzes session keys (`vx_broker::key::parse_key`) through the invariants in
//! `vx_broker::fuzzing::broker_key`: accepted ⇒ the physical name round-trips, has no
//! `/` and is in bounds. Seeds: `corpus/broker/keys/`.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    vx_fuzz::verdict::expect(data, vx_fuzz::verdict::passes);
    vx_broker::fuzzing::broker_key(data);
});
