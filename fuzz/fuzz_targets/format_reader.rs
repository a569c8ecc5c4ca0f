//! Raw bytes into the checkpoint reader: it must never panic, and anything it
//! accepts must survive the canonical writer, read back identical, and write again
//! to the same bytes.
#![no_main]

use libfuzzer_sys::fuzz_target;
use vx_format::{limits, read, write, ReadContext};

fuzz_target!(|data: &[u8]| {
    vx_fuzz::verdict::expect(data, vx_fuzz::verdict::format_reader);
    let ctx = ReadContext { max_bytes: limits::HARD_MAX_CHECKPOINT_BYTES, ..ReadContext::default() };
    if let Ok(decoded) = read(data, &ctx) {
        let bytes = write(&decoded.checkpoint, decoded.format).expect("accepted state is writable");
        let again = read(&bytes, &ctx).expect("canonical encoding reads back");
        assert_eq!(again, decoded);
        let rewritten = write(&again.checkpoint, again.format).expect("writable again");
        assert!(rewritten == bytes, "writer -> reader -> writer changed the bytes");
    }
});
