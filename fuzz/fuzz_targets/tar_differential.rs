//! The blob reader's framing (vx-persist, `blob.framing`) against the `tar` crate's
//! reader: the same members where the kit frames a blob, and only documented
//! strictness where the `tar` crate reads what the kit refuses (`vx_fuzz::tar_diff`).
//! Seeds: `corpus/persist/blobs/`.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    vx_fuzz::verdict::expect(data, vx_fuzz::verdict::blob);
    if let Err(e) = vx_fuzz::tar_diff::compare(data) {
        panic!("{e}");
    }
});
