//! Reading a report back (`vxcert merge`, `vxcert diff`, `vxcert run --baseline`).

use super::report::ReportJson;
use std::path::{Path, PathBuf};

/// A report's `report.json`: `path` itself, or the file of that name in it.
pub fn json_path(path: &Path) -> PathBuf {
    if path.is_dir() {
        path.join("report.json")
    } else {
        path.to_path_buf()
    }
}

/// The report at `path` (a report directory or a `report.json`). The text stays for
/// the rest of the process: the report's names borrow from it, and the commands that
/// read reports read a few and exit.
pub fn report(path: &Path) -> Result<ReportJson, String> {
    let file = json_path(path);
    let text = std::fs::read_to_string(&file)
        .map_err(|e| format!("cannot read the report {}: {e}", file.display()))?;
    let text: &'static str = Box::leak(text.into_boxed_str());
    serde_json::from_str(text).map_err(|e| {
        format!(
            "{} is not a vxcert report.json this kit can read: {e}",
            file.display()
        )
    })
}
