//! `libvxfault.so`: an `LD_PRELOAD` library that breaks chosen file-system calls.
//!
//! Read `docs/fault-injection.md` for the design. In short:
//! - every hook ([`hooks`]) is a `#[no_mangle] extern "C"` function named like the glibc
//!   symbol; it forwards to the original found with `dlsym(RTLD_NEXT, …)` ([`real`]);
//! - a call family with no rule (and no trace) costs one atomic load and an indirect
//!   call; otherwise the call's absolute path is resolved into a stack buffer
//!   ([`paths`]), every matching rule counts it and the first rule whose trigger fires
//!   acts ([`call`], with the decision in `vxfault_plan::decide`), and the call is
//!   traced ([`trace`]);
//! - the state is built once at load ([`load`]) in a local and then published
//!   read-only ([`state`]);
//! - nothing on the hot path allocates, takes a lock or can unwind (a panic inside an
//!   `extern "C"` function aborts), and a thread-local guard makes hooks re-entered
//!   from inside a hook (signal handlers) plain pass-throughs.
//!
//! The only dependency is `vxfault-plan` (no_std, itself without dependencies); libc
//! is declared by hand in [`sys`].
#![deny(unsafe_op_in_unsafe_fn)]

#[cfg(not(all(
    target_os = "linux",
    any(target_arch = "x86_64", target_arch = "aarch64")
)))]
compile_error!("libvxfault supports Linux on x86_64 and aarch64 only");

mod call;
mod gate;
pub mod hooks;
mod load;
mod paths;
mod real;
mod record;
mod site;
mod state;
mod sys;
mod trace;
