//! The streams a recovery scenario keeps open across steps: event subscriptions
//! (`events.subscribe`) and attach viewers (`pane.attach`), by the names the steps
//! give them, and the last restore the steps judged.

use super::restored::Restored;
use crate::drivers::attach::Viewer;
use crate::drivers::events::Subscriber;
use crate::drivers::wire::Reply;
use crate::verdict::OrHarness;
use std::collections::BTreeMap;

/// The open streams of one scenario, by the names the steps give them.
#[derive(Default)]
pub struct Streams {
    pub subs: BTreeMap<String, Subscriber>,
    pub viewers: BTreeMap<String, Viewer>,
    /// The last restore the steps judged: old and new IDs, by kind.
    pub restore: Option<Restored>,
    /// Streams that could not be opened, with the error, so later steps about them
    /// fail with the reason instead of a harness error.
    pub refused: BTreeMap<String, String>,
}

/// How long the suite waits for something a stream must deliver (scaled).
pub const WAIT_MS: u64 = 10_000;

impl Streams {
    pub fn sub(&self, name: &str) -> &Subscriber {
        self.subs.get(name).unwrap_or_else(|| self.missing(name))
    }

    pub fn viewer(&self, name: &str) -> &Viewer {
        self.viewers.get(name).unwrap_or_else(|| self.missing(name))
    }

    fn missing(&self, name: &str) -> ! {
        match self.refused.get(name) {
            Some(e) => panic!("the stream {name:?} was refused: {e}"),
            None => crate::harness_error!("no stream named {name:?}"),
        }
    }

    /// Keeps an opened stream, or the reason it was refused.
    pub fn keep<T>(&mut self, name: &str, reply: &Reply, opened: Option<T>) -> Option<T> {
        if let Err(e) = &reply.result {
            self.refused.insert(name.to_string(), e.to_string());
        }
        opened
    }

    pub fn restored(&self) -> Restored {
        self.restore
            .clone()
            .or_harness("no restore was judged in this scenario")
    }
}
