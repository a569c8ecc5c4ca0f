//! Fuzzes the owner file reader (`vx_broker::owner::decode`) through
//! `vx_broker::fuzzing::broker_owner_file`: accepted ⇒ write → read equal.
//! Seeds: `corpus/broker/sidecar/*/*.owner`.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    vx_fuzz::verdict::expect(data, vx_fuzz::verdict::broker_owner_file);
    vx_broker::fuzzing::broker_owner_file(data);
});
