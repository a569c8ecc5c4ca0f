//! The words a seccomp trace line gives a call and an action, as the preload's trace
//! writes them (the same fields, so one reader takes both backends' traces).

use crate::planlang::line::Line;
use crate::planlang::{self, Action};

use super::decode::{Call, Detail};

/// The call's detail fields: open flags and mode, the lock operation, a directory sync,
/// a new node's type, the modification time set.
pub fn detail(l: &mut Line, c: &Call) {
    match c.detail {
        Detail::None => {}
        Detail::Open { flags, mode } => {
            let mut buf = [0u8; 256];
            let n = planlang::names::open_flags(flags, &mut buf);
            l.str("flags", &buf[..n]);
            if let Some(m) = mode {
                l.str("mode", &planlang::names::octal4(m));
            }
        }
        Detail::Flock(how) => {
            let mut buf = [0u8; 32];
            let n = planlang::names::flock_op(how, &mut buf);
            l.str("lock", &buf[..n]);
        }
        Detail::Fcntl { cmd, kind } => {
            let mut buf = [0u8; 48];
            let n = planlang::names::fcntl_lock(cmd, kind, &mut buf);
            l.str("lock", &buf[..n]);
        }
        Detail::SyncDir => l.bool("dir", true),
        Detail::Mode(m) => l.str("mode", &planlang::names::octal4(m)),
        Detail::Node(m) => {
            l.str("mode", &planlang::names::octal4(m));
            l.str("node", planlang::attrs::node_kind(m));
        }
        Detail::Times { mtime, nofollow } => {
            if let Some(m) = mtime {
                let mut buf = [0u8; 32];
                let n = planlang::attrs::mtime_text(m, &mut buf);
                l.str("mtime", &buf[..n]);
            }
            if nofollow {
                l.bool("nofollow", true);
            }
        }
    }
}

/// The trace's action name (`EIO`, `short:3`, `after:EIO`, …), as the preload writes it.
pub fn action_text(a: Action) -> String {
    let e = |n: i32| planlang::errno_name(n).unwrap_or("errno");
    match a {
        Action::Errno(n) => e(n).to_string(),
        Action::Short(n) => format!("short:{n}"),
        Action::Torn(n) => format!("torn:{n}"),
        Action::Crash => "crash".into(),
        Action::CrashAfter => "crash-after".into(),
        Action::Delay(n) => format!("delay:{n}"),
        Action::Lie => "lie".into(),
        Action::After(n) => format!("after:{}", e(n)),
    }
}
