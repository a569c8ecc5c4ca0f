//! The strict checkpoint.json reader (docs/spec/persist-drive.md) on arbitrary
//! bytes: never panics, and an accepted document re-encodes to bytes that read back
//! as the same checkpoint and encode again identically.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    vx_fuzz::verdict::expect(data, vx_fuzz::verdict::persist_checkpoint);
    if let Err(e) = vx_persist::runstore::checkpoint::reencode_is_stable(data) {
        panic!("{e}");
    }
});
