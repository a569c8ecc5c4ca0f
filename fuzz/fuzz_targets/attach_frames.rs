//! Fuzzes the daemon's reading of attach client frames
//! (`vxref::attach::frame::{split, decode_client}`) through the invariants in
//! `vxref::fuzzing::attach_frames`. Seeds: `corpus/attach/`.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    vx_fuzz::verdict::expect(data, vx_fuzz::verdict::passes);
    vxref::fuzzing::attach_frames(data);
});
