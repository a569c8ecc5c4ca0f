//! Structure-aware blobs: a generated valid session blob broken by one rule; the
//! reader reports exactly that rule (`vx_fuzz::blob_rules`).
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    vx_fuzz::verdict::expect(data, vx_fuzz::verdict::passes);
    if let Err(e) = vx_fuzz::blob_rules::check(data) {
        panic!("{e}");
    }
});
