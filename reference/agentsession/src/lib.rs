//! `vx-agentsession`: the pure part of native agent-session restore (phux ADR-0068).
//!
//! Bytes in, verdicts out; no I/O, no clock, no randomness (callers mint UUIDs).
//! - [`record`]: the `agent-session/v1` resume record (`plugin_id`, `integration_id`,
//!   `native_id`), strict parse and canonical encode.
//! - [`template`]: `integrations/<id>.toml`, with the closed `[session_identity]` and
//!   the rules that keep an identity out of executable or evaluator positions.
//! - [`expand`]: a template plus an opaque id into argv, env and cwd.
//! - [`archive`]: the workspace archive, schema 1 and 2, strict reader and canonical
//!   writer.
//! - [`check`]: the offline checkers' verdicts and their pinned JSON line.
//!
//! Every limit is in [`limits`]; every error is a typed enum with the spec's code and
//! a stable rule id, and no error message carries content (ids, argv, paths, names).

pub mod archive;
pub mod check;
pub mod exec_policy;
pub mod expand;
pub mod limits;
pub mod record;
pub mod rules;
pub mod template;
