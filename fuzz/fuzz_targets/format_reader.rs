//! Raw bytes into the checkpoint reader: it must never panic, and anything it
//! accepts must survive the canonical writer and read back identical.
#![no_main]

use libfuzzer_sys::fuzz_target;
use vx_format::{limits, read, write, ReadContext};

fuzz_target!(|data: &[u8]| {
    let ctx = ReadContext { max_bytes: limits::HARD_MAX_CHECKPOINT_BYTES, ..ReadContext::default() };
    if let Ok(decoded) = read(data, &ctx) {
        let bytes = write(&decoded.checkpoint, decoded.format).expect("accepted state is writable");
        let again = read(&bytes, &ctx).expect("canonical encoding reads back");
        assert_eq!(again, decoded);
    }
});
