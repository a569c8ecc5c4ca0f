//! Fuzzes the client control frame reader (`vx_broker::frames::decode_client`)
//! through `vx_broker::fuzzing::broker_frames`: accepted ⇒ canonical re-encoding reads
//! back equal. Seeds: `corpus/broker/frames/`.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    vx_fuzz::verdict::expect(data, vx_fuzz::verdict::broker_frames);
    vx_broker::fuzzing::broker_frames(data);
});
