//! The strict JSON scanner (vx-format, pins.md) against `serde_json` on
//! well-formedness: every verdict agrees class by class, modulo the documented
//! strictness in `vx_fuzz::json_diff`. Seeds: `corpus/checkpoints/`, `corpus/wire/`.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    vx_fuzz::verdict::expect(data, vx_fuzz::verdict::json);
    if let Err(e) = vx_fuzz::json_diff::compare(data) {
        panic!("{e}");
    }
});
