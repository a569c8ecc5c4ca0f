//! The process's state: the plan and settings (built once at load and then read-only),
//! the per-family activity flags, the counters, the shared counter file, the random
//! stream and the re-entrancy guard.

use core::cell::{Cell, UnsafeCell};
use core::mem::MaybeUninit;
use core::sync::atomic::{AtomicBool, AtomicI32, AtomicU32, AtomicU64, AtomicUsize, Ordering};

use plan::decide::Counts;
use plan::{Plan, MAX_RULES, NUM_OPS};
use vxfault_plan as plan;

/// Bit of [`FLAGS`] set once [`STATE`] is published.
pub const INIT: u32 = 1 << 31;
/// Bit `op` set: that family has a rule or the trace is on. Published with
/// [`INIT`] (Release) after [`STATE`] was written; read with Acquire.
pub static FLAGS: AtomicU32 = AtomicU32::new(0);
/// Set by the first thread that starts the initialisation.
pub static INIT_STARTED: AtomicBool = AtomicBool::new(false);

/// Longest `VXFAULT_TRACE` path, plus its NUL.
pub const TRACE_PATH_CAP: usize = 4097;

/// What `VXFAULT_PLAN`, `VXFAULT_SEED` and `VXFAULT_TRACE` said, parsed.
pub struct State {
    pub plan: Plan,
    /// Per family: whether some rule (or the trace) needs the call's path.
    pub needs_path: [bool; NUM_OPS],
    pub tracing: bool,
    /// `VXFAULT_DATA` was set: write lines carry their offset and bytes (`vxfault record`).
    pub recording: bool,
    pub seed: u64,
    /// NUL-terminated.
    pub trace_path: [u8; TRACE_PATH_CAP],
}

impl State {
    pub const EMPTY: State = State {
        plan: Plan::EMPTY,
        needs_path: [false; NUM_OPS],
        tracing: false,
        recording: false,
        seed: 0,
        trace_path: [0; TRACE_PATH_CAP],
    };
}

/// The published state: written exactly once by [`publish`], before [`INIT`] is set.
struct Published(UnsafeCell<MaybeUninit<State>>);

// SAFETY: the cell is written once, by the one thread that won INIT_STARTED, before
// FLAGS gets INIT with Release; every reader first sees INIT with Acquire (`state`),
// and no one writes it afterwards. So all accesses after publication are reads.
unsafe impl Sync for Published {}

static STATE: Published = Published(UnsafeCell::new(MaybeUninit::uninit()));

/// Publishes the state built by the initialisation, with the family flags `mask`.
/// Only the thread that won [`INIT_STARTED`] calls this, once.
pub fn publish(st: State, mask: u32) {
    if FLAGS.load(Ordering::Relaxed) & INIT != 0 {
        return;
    }
    // SAFETY: INIT is not set yet, so no reader holds a reference into the cell
    // (`state` hands out none before INIT), and only the initialising thread gets here.
    unsafe { (*STATE.0.get()).write(st) };
    FLAGS.store(INIT | mask, Ordering::Release);
}

/// The published state, or `None` before the initialisation finished.
#[inline(always)]
pub fn state() -> Option<&'static State> {
    if FLAGS.load(Ordering::Acquire) & INIT == 0 {
        return None;
    }
    // SAFETY: INIT was observed with Acquire, so the one write in `publish` happened
    // before, and the cell is never written again.
    Some(unsafe { (*STATE.0.get()).assume_init_ref() })
}

/// The record's data file's fd (-1: none).
pub static DATA_FD: AtomicI32 = AtomicI32::new(-1);

/// The trace file's fd (-1: none or not open).
pub static TRACE_FD: AtomicI32 = AtomicI32::new(-1);

/// Per-process match counters (reset in a forked child).
pub static LOCAL: [AtomicU64; MAX_RULES] = [const { AtomicU64::new(0) }; MAX_RULES];

/// Used when no shared mapping could be made.
static FALLBACK_SHM: [AtomicU64; plan::SHM_WORDS] = [const { AtomicU64::new(0) }; plan::SHM_WORDS];
/// Address of the shared counter mapping (0: none).
pub static SHM: AtomicUsize = AtomicUsize::new(0);
/// Whether the counter file is the runner's (`VXFAULT_SHM`), shared across exec.
pub static SHM_FROM_RUNNER: AtomicBool = AtomicBool::new(false);

/// Word `word` of the shared counter file.
#[inline(always)]
pub fn shm(word: usize) -> &'static AtomicU64 {
    let base = SHM.load(Ordering::Acquire);
    if base == 0 || word >= plan::SHM_WORDS {
        return &FALLBACK_SHM[word.min(plan::SHM_WORDS - 1)];
    }
    // SAFETY: `base` is a MAP_SHARED mapping of SHM_SIZE >= 8 * SHM_WORDS bytes, page
    // aligned, never unmapped, and only ever accessed through atomics.
    unsafe { &*(base as *const AtomicU64).add(word) }
}

/// The counters `plan::decide` updates: [`LOCAL`] and the shared file's words.
pub struct ProcessCounts;

impl Counts for ProcessCounts {
    fn local(&self, i: usize) -> &AtomicU64 {
        &LOCAL[i.min(MAX_RULES - 1)]
    }
    fn matched(&self, i: usize) -> &AtomicU64 {
        shm(plan::SHM_MATCHED + i)
    }
    fn fired(&self, i: usize) -> &AtomicU64 {
        shm(plan::SHM_FIRED + i)
    }
}

/// This process's random stream for `%P` draws: a tree-wide number handed out at load
/// and in every forked child, so the processes of a tree draw independently while a
/// deterministic workload gets the same streams on every run.
pub static STREAM: AtomicU64 = AtomicU64::new(0);

/// Takes the next stream number of the tree. Without the runner's counter file the
/// numbering restarts at each exec, so the pid is mixed in to keep streams apart.
pub fn next_stream() -> u64 {
    let n = shm(plan::SHM_STREAMS).fetch_add(1, Ordering::Relaxed) + 1;
    if SHM_FROM_RUNNER.load(Ordering::Relaxed) {
        n
    } else {
        n ^ (u64::from(crate::sys::pid() as u32) << 32)
    }
}

std::thread_local! {
    static IN_HOOK: Cell<bool> = const { Cell::new(false) };
}

/// Held while a thread is inside a hook's slow path: a hook entered again on the same
/// thread (a signal handler's `write` during a `delay`) goes straight to the original.
pub struct Guard;

impl Guard {
    #[inline(always)]
    pub fn enter() -> Option<Guard> {
        IN_HOOK
            .try_with(|c| {
                if c.get() {
                    None
                } else {
                    c.set(true);
                    Some(Guard)
                }
            })
            .ok()
            .flatten()
    }
}

impl Drop for Guard {
    #[inline(always)]
    fn drop(&mut self) {
        let _ = IN_HOOK.try_with(|c| c.set(false));
    }
}
