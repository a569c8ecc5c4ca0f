//! Fuzzes vxref's ZON config reader and writer (`vxref::config::zon`) and the schema
//! through the invariants in `vxref::fuzzing::zon_config`. Seeds: `corpus/config/`.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    vx_fuzz::verdict::expect(data, vx_fuzz::verdict::zon_config);
    vxref::fuzzing::zon_config(data);
});
