//! The recovery suite's steps, by topic. Each is a cucumber step function whose body
//! runs on the scenario's blocking thread (`World::run`).

mod calls;
mod controls;
mod crash;
mod exact;
mod lifecycle;
mod outcomes;
mod periodic;
mod processes;
mod settle;
mod shapes;
mod skill;
mod store;
mod streams;

/// What every step module uses.
mod prelude {
    pub use crate::drivers::probe::{at, contains, mode_of};
    pub use crate::drivers::{process, scaled};
    pub use crate::recovery::probes::*;
    pub use crate::recovery::World;
    pub use crate::verdict::OrHarness;
    pub use cucumber::gherkin::Step;
    pub use cucumber::{given, then, when};
    pub use nix::sys::signal::Signal;
    pub use serde_json::{json, Map, Value};
    pub use std::os::unix::fs::MetadataExt;
    pub use std::time::Duration;
}
