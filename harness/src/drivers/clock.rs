//! The clock driver: libfaketime (`LD_PRELOAD`, `FAKETIME`) moves a dynamically
//! linked implementation's "now".

use std::path::Path;

pub const DEFAULT_FAKETIME: &str = "/usr/lib/x86_64-linux-gnu/faketime/libfaketimeMT.so.1";

/// The libfaketime `configured` names (or Debian's), when it exists.
pub fn faketime_preload(configured: Option<&str>) -> Option<String> {
    let p = configured.unwrap_or(DEFAULT_FAKETIME);
    Path::new(p).is_file().then(|| p.to_string())
}

/// The `FAKETIME` value for a clock `amount` `unit`s behind or ahead.
pub fn faketime_offset(amount: u64, unit: &str, behind: bool) -> String {
    let u = if unit.starts_with("day") { "d" } else { "h" };
    format!("{}{amount}{u}", if behind { "-" } else { "+" })
}
