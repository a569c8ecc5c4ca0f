//! Fuzzes vxref's wire frame decoder (`vxref::wire::decode_request`) through the
//! invariants in `vxref::fuzzing::wire_frame`. Seeds: `corpus/wire/`.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    vx_fuzz::verdict::expect(data, vx_fuzz::verdict::wire_frame);
    vxref::fuzzing::wire_frame(data);
});
