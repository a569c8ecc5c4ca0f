//! What a stream driver's reader thread collects (event lines, attach frames), and
//! the one way steps wait on it: until a condition holds or the stream ends, bounded
//! by the profile's scaled deadline, failing at once on a protocol violation.

use super::scaled;
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

/// Shared between a reader thread (which notifies after every change) and the steps.
pub type Shared<C> = Arc<(Mutex<C>, Condvar)>;

pub fn shared<C: Default>() -> Shared<C> {
    Arc::new((Mutex::new(C::default()), Condvar::new()))
}

pub trait Collected {
    /// The connection reached end of file (or failed).
    fn ended(&self) -> bool;
    /// A protocol violation seen by the reader, described for the failure message.
    fn violation(&self) -> Option<String>;
    /// What was received so far, for a timeout message.
    fn summary(&self) -> String;
}

/// Waits (up to the scaled `limit_ms`) until `done` holds for what was collected, or
/// the stream ends, then returns `f` of it.
pub fn wait<C: Collected, T>(
    shared: &Shared<C>,
    what: &str,
    limit_ms: u64,
    done: impl Fn(&C) -> bool,
    f: impl FnOnce(&C) -> T,
) -> T {
    let limit = scaled(limit_ms);
    let start = Instant::now();
    let (lock, cv) = &**shared;
    let mut c = lock.lock().unwrap();
    loop {
        if let Some(bad) = c.violation() {
            panic!("{bad}");
        }
        if done(&c) || c.ended() {
            return f(&c);
        }
        let left = limit.saturating_sub(start.elapsed());
        if left.is_zero() {
            crate::timed_out!("waiting for {what}; {}", c.summary());
        }
        c = cv
            .wait_timeout(c, left.min(Duration::from_millis(200)))
            .unwrap()
            .0;
    }
}
