//! The fault injector driver: `libvxfault.so` preloaded with a plan, optionally a trace.

use serde_json::Value;
use std::path::Path;

/// The profile's template for the injector when it names none.
pub const DEFAULT_FAULT_PRELOAD: &str = "{bin_dir}/libvxfault.so";

/// The injector library the run's profile names (or the kit's), expanded for this
/// scenario; one that does not exist is a harness error.
pub fn library(ph: &super::sandbox::Placeholders) -> String {
    let t = crate::profile::context()
        .profile
        .fault_preload
        .clone()
        .unwrap_or_else(|| DEFAULT_FAULT_PRELOAD.into());
    let path = ph.expand(&t);
    if !Path::new(&path).is_file() {
        crate::harness_error!(
            "fault injector library {path} not found (build it: cargo build -p vxfault-preload)"
        );
    }
    path
}

/// The environment that runs a program under `plan` (and traces it into `trace`).
pub fn env(library: &str, plan: &str, trace: Option<&Path>) -> Vec<(String, String)> {
    let mut env = vec![
        ("LD_PRELOAD".to_string(), library.to_string()),
        ("VXFAULT_PLAN".to_string(), plan.to_string()),
    ];
    if let Some(t) = trace {
        env.push(("VXFAULT_TRACE".into(), t.to_string_lossy().into_owned()));
    }
    env
}

/// The calls of a trace file, in order (lines that are not JSON objects are skipped:
/// a process killed mid-line leaves a torn last line).
pub fn read_trace(path: &Path) -> Vec<Value> {
    std::fs::read_to_string(path)
        .unwrap_or_default()
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter(Value::is_object)
        .collect()
}
