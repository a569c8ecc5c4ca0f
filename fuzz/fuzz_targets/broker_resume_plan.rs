//! Fuzzes `vx_broker::resume::plan` through `vx_broker::fuzzing::broker_resume_plan`:
//! a delta covers only bytes still in the ring, ends at total, never crosses
//! generations. Input: `have gen total ring_len master_gen`. Seeds: `corpus/broker/resume/`.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    vx_fuzz::verdict::expect(data, vx_fuzz::verdict::passes);
    vx_broker::fuzzing::broker_resume_plan(data);
});
