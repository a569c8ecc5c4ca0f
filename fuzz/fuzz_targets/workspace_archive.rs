//! Raw bytes into the workspace-archive reader; an accepted archive, written by
//! the canonical writer, reads back equal, and the writer is a fixed point.
#![no_main]

use libfuzzer_sys::fuzz_target;
use vx_agentsession::archive::{read, write};

fuzz_target!(|data: &[u8]| {
    vx_fuzz::verdict::expect(data, vx_fuzz::verdict::workspace_archive);
    let Ok(decoded) = read(data) else { return };
    let written = write(&decoded.archive);
    let again = read(&written).expect("the writer's output reads back");
    assert_eq!(again.archive, decoded.archive);
    assert_eq!(
        again.schema_version == 2,
        decoded.archive.has_records(),
        "schema 2 exactly when a pane has a record"
    );
    assert_eq!(write(&again.archive), written);
});
