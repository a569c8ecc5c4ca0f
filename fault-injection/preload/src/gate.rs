//! The hooks' first test: whether a call's family needs the slow path at all. The
//! first call in a process initialises the library (`load.rs`) from here, so the
//! published state (`state.rs`) needs nothing from the loader.

use core::sync::atomic::Ordering;

use vxfault_plan::Op;

use crate::load;
use crate::state::{FLAGS, INIT};

/// Whether family `op` needs the slow path; initialises on first use.
#[inline(always)]
pub fn active(op: Op) -> bool {
    let f = FLAGS.load(Ordering::Acquire);
    if f & INIT != 0 {
        return f & (1 << op as u32) != 0;
    }
    active_slow(op)
}

#[cold]
#[inline(never)]
fn active_slow(op: Op) -> bool {
    load::init();
    let f = FLAGS.load(Ordering::Acquire);
    f & INIT != 0 && f & (1 << op as u32) != 0
}
