//! Fuzzes the alias sidecar reader (`vx_broker::alias::decode`) through
//! `vx_broker::fuzzing::broker_alias_sidecar`: accepted ⇒ write → read equal.
//! Seeds: `corpus/broker/sidecar/*/aliases.json`.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    vx_fuzz::verdict::expect(data, vx_fuzz::verdict::broker_alias_sidecar);
    vx_broker::fuzzing::broker_alias_sidecar(data);
});
