//! The single-writer suite's steps.

mod live_alias;
mod live_claims;
mod live_client;
mod live_effects;
mod live_master;
mod live_open;
mod live_refusals;
mod live_scopes;
mod live_stream;
mod live_takeover;
mod master_controls;
mod offline;

pub(crate) use live_client::DroppingRoute;
pub(crate) use live_master::SuiteListener;
