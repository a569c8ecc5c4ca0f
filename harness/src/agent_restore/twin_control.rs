//! A server row's valid twin, recorded as the scenario's control (kind
//! `agent-restore.server`): what ran, whether it was accepted, what came back. Apart
//! from `twins`, which runs the twins on a live server, so that the live server's own
//! calls can record a control without importing the twins.

use crate::drivers::wire::Reply;
use serde_json::Value;

/// The kind of input the server twins count toward the run's liveness.
const KIND: &str = "agent-restore.server";

/// Records `reply` (of a wire call, or of a client command when `by_command`: the
/// command is kept with it) as the scenario's control.
pub fn record(
    what: String,
    reply: &Reply,
    by_command: bool,
    accepted: impl FnOnce(&Value) -> bool,
) {
    let (accepted, observed) = match &reply.result {
        Ok(v) => (accepted(v), format!("it succeeded: {v}")),
        Err(e) => (false, format!("it failed: {e}")),
    };
    crate::evidence::control(
        KIND,
        crate::evidence::Control {
            what,
            accepted,
            observed,
            commands: if by_command {
                crate::evidence::last_command().into_iter().collect()
            } else {
                Vec::new()
            },
        },
    );
}
