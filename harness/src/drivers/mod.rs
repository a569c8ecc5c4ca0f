//! Drivers every contract's suite uses: how the kit reaches, starts, stops, probes
//! and injects faults into an implementation. Nothing here knows a contract's steps;
//! a contract's World composes these (see `crate::recovery`).
//!
//! Invariant: no driver imports a contract module.

pub mod attach;
pub mod broker;
pub mod broker_ws;
pub mod checker;
pub mod cli;
pub mod clock;
pub mod collected;
pub mod events;
pub mod fault;
pub mod lifecycle;
pub mod lines;
pub mod loopback_port;
pub mod meta_relay;
pub mod probe;
pub mod process;
pub mod reply_loss;
pub mod sandbox;
pub mod scope_wrapper;
pub mod start_state;
pub mod step;
pub mod tree;
pub mod wire;

use std::sync::OnceLock;
use std::time::{Duration, Instant};

static TIMEOUT_MULTIPLIER: OnceLock<f64> = OnceLock::new();

/// Sets the profile's multiplier for every deadline of this run (once).
pub fn set_timeout_multiplier(m: f64) {
    let _ = TIMEOUT_MULTIPLIER.set(m);
}

/// Scales a suite deadline by the profile's multiplier (never the contract's own bounds).
pub fn scaled(ms: u64) -> Duration {
    let m = TIMEOUT_MULTIPLIER.get().copied().unwrap_or(1.0);
    Duration::from_millis((ms as f64 * m) as u64)
}

/// Looks until `f` says the wanted state is there or `limit` passes, and returns what
/// it saw last: for a step that then asserts the state (an effect that never shows is
/// a `fail` of the implementation, not a `timeout` of the suite).
pub fn wait_until<T>(limit: Duration, mut f: impl FnMut() -> (bool, T)) -> T {
    let start = Instant::now();
    loop {
        let (done, v) = f();
        if done || start.elapsed() > limit {
            return v;
        }
        std::thread::sleep(Duration::from_millis(15));
    }
}

/// Polls `f` every 15 ms until it gives a value; a `timeout` verdict after `limit`.
pub fn poll<T>(what: &str, limit: Duration, mut f: impl FnMut() -> Option<T>) -> T {
    let start = Instant::now();
    loop {
        if let Some(v) = f() {
            return v;
        }
        if start.elapsed() > limit {
            crate::timed_out!("waiting for {what}");
        }
        std::thread::sleep(Duration::from_millis(15));
    }
}
