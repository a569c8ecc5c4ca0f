//! Fuzzes vxref's wire frame decoder (`vxref::wire::decode_request`) through the
//! invariants in `vxref::fuzzing::wire_frame`. Seeds: `corpus/wire/`.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    vxref::fuzzing::wire_frame(data);
});
