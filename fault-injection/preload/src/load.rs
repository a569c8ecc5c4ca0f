//! Load time: the constructor, the fork handler, reading `VXFAULT_*`, mapping the
//! shared counter file, and the load handshake (`loaded` / `plan-error`).

use core::ffi::{c_char, c_int, CStr};
use core::sync::atomic::{AtomicU64, Ordering};

use plan::line::{decimal, Line};
use plan::{Op, PlanError, NUM_OPS};
use vxfault_plan as plan;

use crate::paths::{readlink_into, PathBuf, CACHE_ON};
use crate::real::{real, resolve_all};
use crate::state::{
    next_stream, publish, shm, State, INIT_STARTED, LOCAL, SHM, SHM_FROM_RUNNER, STREAM,
};
use crate::sys::{
    _exit, getenv, mmap, pthread_atfork, MAP_ANONYMOUS, MAP_FAILED, MAP_SHARED, O_CLOEXEC, O_RDWR,
    PROT_READ, PROT_WRITE,
};
use crate::trace::{open_trace, trace_event};

/// Exit status of a process whose `VXFAULT_PLAN` does not parse (the code `vxfault
/// run` uses for a bad plan).
const EXIT_BAD_PLAN: c_int = 125;

#[used]
#[link_section = ".init_array"]
static CONSTRUCTOR: extern "C" fn() = constructor;

extern "C" fn constructor() {
    init();
}

/// `pthread_atfork` child handler: a forked child counts `#N` from zero and draws from
/// its own stream.
extern "C" fn atfork_child() {
    for c in LOCAL.iter() {
        c.store(0, Ordering::Relaxed);
    }
    STREAM.store(next_stream(), Ordering::Relaxed);
}

/// The value of environment variable `name`.
fn env(name: &CStr) -> Option<&'static [u8]> {
    // SAFETY: `name` is NUL-terminated. The result points into the environment, which
    // this library only reads at load time, before the program can change it (a
    // program that later changes its own VXFAULT_* variables does not affect us).
    let p = unsafe { getenv(name.as_ptr()) };
    if p.is_null() {
        return None;
    }
    // SAFETY: getenv returns a NUL-terminated string that lives as long as the
    // environment entry.
    Some(unsafe { CStr::from_ptr(p) }.to_bytes())
}

fn parse_seed(s: &[u8]) -> u64 {
    let mut v: u64 = 0;
    for &c in s {
        if !c.is_ascii_digit() {
            return plan::fnv1a(s);
        }
        v = v.wrapping_mul(10).wrapping_add(u64::from(c - b'0'));
    }
    v
}

/// Builds the state in a local, then publishes it once. Idempotent: only the first
/// caller (the constructor, or a hook called before it) does anything.
pub fn init() {
    if INIT_STARTED.swap(true, Ordering::AcqRel) {
        return;
    }
    resolve_all();
    let mut st = State::EMPTY;
    let plan_text = env(c"VXFAULT_PLAN").unwrap_or(b"");
    let plan_result = plan::parse(plan_text, &mut st.plan);
    if plan_result.is_err() {
        st.plan = plan::Plan::EMPTY;
    }
    st.seed = env(c"VXFAULT_SEED").map(parse_seed).unwrap_or(0);
    map_shared(plan_text);
    STREAM.store(next_stream(), Ordering::Relaxed);

    if let Some(path) = env(c"VXFAULT_TRACE") {
        if !path.is_empty() && path.len() < st.trace_path.len() {
            st.trace_path[..path.len()].copy_from_slice(path);
            st.trace_path[path.len()] = 0;
            st.tracing = true;
            open_trace(&st);
            st.recording = crate::record::open_data();
        }
    }
    let mut mask = 0u32;
    for rule in st.plan.rules() {
        mask |= 1 << rule.op as u32;
        if rule.needs_path {
            st.needs_path[rule.op as usize] = true;
        }
    }
    if st.tracing {
        mask |= (1 << NUM_OPS) - 1;
        st.needs_path = [true; NUM_OPS];
    }
    if st.needs_path.iter().any(|&b| b) {
        // Paths are needed: keep the fd cache, which needs to see opens and closes.
        CACHE_ON.store(true, Ordering::Relaxed);
        mask |= (1 << Op::Open as u32) | (1 << Op::Close as u32);
    }
    // SAFETY: registering a handler that only touches atomics.
    unsafe { pthread_atfork(None, None, Some(atfork_child)) };
    if mask & (1 << Op::Write as u32) != 0 {
        // Through its exported symbol: the hooks sit above `load` (they call the
        // gate, which calls `init` here), so `load` names none of them.
        extern "C" {
            fn vxfault_hook_file_write() -> bool;
        }
        // SAFETY: defined in hooks/stdio.rs with this signature; it only patches
        // libc's stdio vtable once, before the program's `main`.
        unsafe { vxfault_hook_file_write() };
    }

    shm(plan::SHM_LOADED).fetch_add(1, Ordering::Relaxed);
    if let Err(e) = plan_result {
        // Never a silent pass: a plan that does not parse injects nothing, so the
        // process says why and stops before the program runs.
        shm(plan::SHM_PLAN_ERROR).fetch_add(1, Ordering::Relaxed);
        trace_event(&st, b"plan-error", e.msg.as_bytes(), e.rule as i64);
        plan_error_exit(e);
    }
    let mut exe = PathBuf::new();
    readlink_into(c"/proc/self/exe", &mut exe);
    trace_event(&st, b"loaded", exe.as_bytes(), st.plan.rules().len() as i64);
    publish(st, mask);
}

/// Writes one line about a bad plan to stderr and ends the process.
fn plan_error_exit(e: PlanError) -> ! {
    let mut l = Line::new();
    l.raw(b"libvxfault: bad VXFAULT_PLAN: rule ");
    let mut d = [0u8; 20];
    l.raw(decimal(e.rule as u64, &mut d));
    l.raw(b": ");
    l.raw(e.msg.as_bytes());
    l.raw(b" (nothing would be injected; exiting)\n");
    if let Some(write) = real!(Write) {
        let b = l.as_bytes();
        // SAFETY: a live buffer to fd 2.
        unsafe { write(2, b.as_ptr().cast(), b.len()) };
    }
    // SAFETY: _exit has no preconditions.
    unsafe { _exit(EXIT_BAD_PLAN) }
}

/// Maps the shared counter file named by `VXFAULT_SHM` (or an anonymous shared page
/// that forked children inherit).
fn map_shared(plan_text: &[u8]) {
    let hash = plan::fnv1a(plan_text);
    if let Some(words) = map_runner_file() {
        let magic = &words[plan::SHM_MAGIC];
        let their_hash = &words[plan::SHM_PLAN_HASH];
        if magic
            .compare_exchange(
                0,
                plan::SHM_MAGIC_VALUE,
                Ordering::AcqRel,
                Ordering::Acquire,
            )
            .is_ok()
        {
            their_hash.store(hash, Ordering::Release);
        }
        if their_hash.load(Ordering::Acquire) == hash {
            SHM.store(words.as_ptr() as usize, Ordering::Release);
            SHM_FROM_RUNNER.store(true, Ordering::Relaxed);
            return;
        }
        // A different plan: count ourselves there, but keep our own counters.
        words[plan::SHM_PLAN_MISMATCH].fetch_add(1, Ordering::Relaxed);
        words[plan::SHM_LOADED].fetch_add(1, Ordering::Relaxed);
    }
    if let Some(words) = map_words(-1) {
        words[plan::SHM_MAGIC].store(plan::SHM_MAGIC_VALUE, Ordering::Relaxed);
        words[plan::SHM_PLAN_HASH].store(hash, Ordering::Relaxed);
        SHM.store(words.as_ptr() as usize, Ordering::Release);
    }
}

fn map_runner_file() -> Option<&'static [AtomicU64]> {
    let path = env(c"VXFAULT_SHM")?;
    let open = real!(Open)?;
    let mut p = [0u8; 4097];
    if path.is_empty() || path.len() >= p.len() {
        return None;
    }
    p[..path.len()].copy_from_slice(path);
    // SAFETY: `p` is NUL-terminated (zeroed beyond the copied bytes).
    let fd = unsafe { open(p.as_ptr().cast::<c_char>(), O_RDWR | O_CLOEXEC) };
    if fd < 0 {
        return None;
    }
    let words = map_words(fd);
    if let Some(close) = real!(Close) {
        // SAFETY: our own fd; the mapping stays valid after the close.
        unsafe { close(fd) };
    }
    words
}

/// Maps SHM_SIZE bytes of `fd` (or anonymous memory for -1) shared, as atomic words.
fn map_words(fd: c_int) -> Option<&'static [AtomicU64]> {
    let flags = if fd < 0 {
        MAP_SHARED | MAP_ANONYMOUS
    } else {
        MAP_SHARED
    };
    // SAFETY: a fresh mapping at an address the kernel picks; nothing else is touched.
    let m = unsafe {
        mmap(
            core::ptr::null_mut(),
            plan::SHM_SIZE,
            PROT_READ | PROT_WRITE,
            flags,
            fd,
            0,
        )
    };
    if m == MAP_FAILED || m.is_null() {
        return None;
    }
    // SAFETY: the mapping is SHM_SIZE bytes, page aligned, readable and writable, never
    // unmapped; it is only accessed through these atomics (other processes too).
    Some(unsafe { core::slice::from_raw_parts(m as *const AtomicU64, plan::SHM_SIZE / 8) })
}
