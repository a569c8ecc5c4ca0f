//! `vx-format`: the strict reader and canonical writer of the recovery RFC's durable
//! checkpoint formats 1, 2 and 3 (RFC §4, §4.1, §4.2, with the project's pins).
//!
//! Pure: bytes in, verdicts out. No I/O, no clock. Callers bring the context
//! (file name, store socket and uid, byte limit) and the current time.
//!
//! ```
//! use vx_format::{read, ReadContext};
//! let verdict = read(b"{}", &ReadContext::default());
//! assert_eq!(verdict.unwrap_err().code().as_str(), "conflict.checkpoint_corrupt");
//! ```

mod context;
mod encoded;
pub mod error;
mod escape;
pub mod ids;
pub mod json;
pub mod limits;
pub mod model;
mod read;
mod scan_policy;
pub mod time;
mod validate;
mod write;

#[cfg(feature = "arbitrary")]
pub mod generate;
#[cfg(feature = "testing")]
pub mod testing;

pub use encoded::{EncodedRows, EncodedText};
pub use error::{Code, Doc, FormatError, Rule, Seg};
pub use model::*;
pub use read::{check_length, read, read_envelope, Decoded, Envelope, ReadContext};
pub use validate::validate;
pub use write::{wrap_envelope, write, write_cached, write_payload, RecordCache};
