//! Structure-aware checkpoints: a generated valid state (formats 1-3) broken by one
//! rule; the reader reports exactly that rule (`vx_fuzz::format_rules`).
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    vx_fuzz::verdict::expect(data, vx_fuzz::verdict::passes);
    if let Err(e) = vx_fuzz::format_rules::check(data) {
        panic!("{e}");
    }
});
