//! `vx-broker`: the reference broker of the single-writer contract
//! (`shared/seeds/003_…`, docs/spec/single-writer.md).
//!
//! One session key ⇒ at most one running agent ⇒ one writer of its history. The pure
//! layers decide: [`key`] (identity and physical names), [`resume`] (delta resume),
//! [`claims`] (which tab writes), [`alias`] and [`owner`] (strict durable files).
//! [`lock`] holds the per-key flock that the master inherits.
//!
//! ```
//! use vx_broker::key::{parse_key, EngineTable};
//! let key = parse_key("opencode:ses_Ab1", &EngineTable::seed(), false).unwrap();
//! assert_eq!(key.physical(), "opencode@ses_Ab1");
//! ```

pub mod alias;
pub mod claims;
pub mod cli;
#[cfg(feature = "server")]
pub mod client;
#[cfg(feature = "server")]
pub mod client_command;
pub mod engines;
pub mod error;
pub mod files;
pub mod frames;
pub mod fuzzing;
pub mod key;
pub mod limits;
pub mod lock;
pub mod master;
pub mod negative;
pub mod open;
pub mod owner;
pub mod resume;
pub mod scope;
#[cfg(feature = "server")]
pub mod serve;
pub mod small_file;
pub mod variant;

pub use error::{BrokerError, Code, Param, Rule};
