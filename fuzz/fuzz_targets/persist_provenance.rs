//! Session-persist resolution (seed rules 0–7) on a byte-decoded random run state,
//! against the naive model in `vx_persist::runtime::oracle`: a SessionID only after
//! an unpack, or HasSession with exactly one eligible source; never the inbound
//! fingerprint; and exactly the model's session and fingerprint.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    vx_fuzz::verdict::expect(data, vx_fuzz::verdict::passes);
    if let Err(e) = vx_persist::runtime::oracle::check(data) {
        panic!("{e}");
    }
});
