//! Shared by the real-program tests: finding a program, or not.

use std::path::PathBuf;

/// The program's path on PATH, or `None` (with a note) when it is not installed; with
/// `VXFAULT_REQUIRE_PROGRAMS` set (`.ci/run`), a missing program is a failure.
pub fn program(name: &str) -> Option<PathBuf> {
    let found = std::env::var_os("PATH").and_then(|paths| {
        std::env::split_paths(&paths)
            .map(|d| d.join(name))
            .find(|p| p.is_file())
    });
    if found.is_none() {
        assert!(
            std::env::var_os("VXFAULT_REQUIRE_PROGRAMS").is_none(),
            "{name} is not installed and VXFAULT_REQUIRE_PROGRAMS is set"
        );
        eprintln!("note: {name} is not installed; its real-program check did not run");
    }
    found
}
