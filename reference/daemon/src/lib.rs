//! `vxref`: the reference daemon of the venomx recovery conformance kit.
//!
//! Public entry points other crates use:
//! - [`wire::decode_request`], [`wire::encode_request`], [`wire::MAX_FRAME_BYTES`]: the
//!   wire frame decoder (fuzzed by `fuzz/fuzz_targets/wire_frame.rs`).
//! - [`config::zon::parse`] / [`config::zon::write`] and [`config::check_text`]: the
//!   ZON config reader/writer (fuzzed by `fuzz/fuzz_targets/zon_config.rs`).
//! - [`client::call`]: one request over the socket, as the CLI sends it.
//! - [`mcp::serve`]: `vxref mcp`, the verbs as Model Context Protocol tools.
//! - [`manifest::VERBS`]: the verb table; [`manifest::EVENTS`]: the event catalog;
//!   [`errors`]: codes and exit codes.

pub mod agent;
pub mod attach;
pub mod auth;
pub mod cli;
pub mod client;
pub mod config;
pub mod docs_gen;
pub mod doctor;
pub mod emulator;
pub mod errors;
pub mod events;
pub mod fuzzing;
pub mod ids;
pub mod manifest;
pub mod mcp;
pub mod negative;
pub mod negative_checker;
pub mod offline_check;
pub mod paths;
pub mod pty;
pub mod reactor;
pub mod server;
pub mod skill;
pub mod spawn;
pub mod stream;
pub mod strict_json;
pub mod topology;
pub mod variant;
pub mod wire;
pub mod workspace;
