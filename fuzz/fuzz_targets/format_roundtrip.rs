//! An arbitrary valid state → canonical writer → reader → the same state; and the
//! same bytes through a record cache, then the next state's through that cache.
#![no_main]

use libfuzzer_sys::{arbitrary::Unstructured, fuzz_target};
use vx_format::{generate, read, write, write_cached, ReadContext, RecordCache};

fuzz_target!(|data: &[u8]| {
    vx_fuzz::verdict::expect(data, vx_fuzz::verdict::passes);
    let mut u = Unstructured::new(data);
    let Ok((format, state)) = generate::any(&mut u) else { return };
    let bytes = write(&state, format).expect("generated states are valid");
    let name = state.file_name();
    let ctx = ReadContext { file_name: Some(&name), ..ReadContext::default() };
    let decoded = read(&bytes, &ctx).expect("writer output reads back");
    assert_eq!(decoded.format, format);
    assert_eq!(decoded.checkpoint, state);
    let mut cache = RecordCache::new();
    assert!(write_cached(&state, format, &mut cache).unwrap() == bytes);
    if let Ok((format, next)) = generate::any(&mut u) {
        let expected = write(&next, format).expect("generated states are valid");
        assert!(write_cached(&next, format, &mut cache).unwrap() == expected);
    }
});
