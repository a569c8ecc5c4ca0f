//! `vxcert store list`: the offline view of a store directory, without a daemon, for
//! users debugging their own implementation's store (surface.md).
//!
//! With `--json`, stdout is exactly the `ok` object of RFC §6's `recovery.list`:
//! `{"checkpoints":[{"checkpoint","status","generation"?}]}`. Without it, one line
//! per checkpoint: id, status, generation (or `-`), and why when not valid. An unsafe
//! or unreadable store directory itself is `unavailable.recovery_io`, exit 6.

use std::path::PathBuf;

use vx_format::limits::config::DEFAULT_MAX_AGE_SECONDS;
use vx_format::limits::DEFAULT_MAX_CHECKPOINT_BYTES;
use vx_format::Timestamp;
use vx_store::{Listing, Store, StoreConfig, StoreError};

/// Exit code for a bad flag value, as clap uses for usage errors.
const USAGE_EXIT: i32 = 2;

#[derive(clap::Args, Debug)]
pub struct StoreListArgs {
    /// The store directory (`…/venomx/recovery/<socket-key>`). It must be owned by
    /// the caller with no group or other permissions, and not be a symlink.
    #[arg(long, value_name = "DIR")]
    pub dir: PathBuf,
    /// Print exactly RFC §6's `recovery.list` ok object.
    #[arg(long)]
    pub json: bool,
    /// Check that every file names this socket (its existing parent directory is
    /// resolved, as the daemon does) and the caller's uid. Without it neither is checked.
    #[arg(long, value_name = "PATH")]
    pub socket: Option<String>,
    /// Checkpoints older than this are `expired`.
    #[arg(long, value_name = "N", default_value_t = DEFAULT_MAX_AGE_SECONDS)]
    pub max_age_seconds: u64,
    /// The time statuses are judged at (RFC 3339, e.g. 2026-11-06T22:00:00Z);
    /// default: the clock.
    #[arg(long, value_name = "RFC3339")]
    pub now: Option<String>,
    /// Configured max_checkpoint_bytes (readers apply min(N, 64 MiB)).
    #[arg(long, value_name = "N", default_value_t = DEFAULT_MAX_CHECKPOINT_BYTES)]
    pub max_bytes: u64,
}

pub fn run_store_list(args: &StoreListArgs) -> i32 {
    let now = match &args.now {
        None => vx_store::clock::now(),
        Some(text) => match vx_store::clock::parse_rfc3339(text) {
            Some(ts) => ts,
            None => {
                eprintln!("vxcert store list: --now is not an RFC 3339 date-time: {text}");
                return USAGE_EXIT;
            }
        },
    };
    let socket = match &args.socket {
        None => None,
        Some(path) => {
            match resolve_socket(path) {
                Some(resolved) => Some(resolved),
                None => {
                    eprintln!("vxcert store list: --socket must be an absolute path or resolvable: {path}");
                    return USAGE_EXIT;
                }
            }
        }
    };
    let config = StoreConfig {
        max_age_seconds: args.max_age_seconds,
        max_checkpoint_bytes: args.max_bytes,
        ..StoreConfig::default()
    };
    match list(args, socket, config, now) {
        Ok(listing) => {
            if args.json {
                println!("{}", listing_json(&listing));
            } else {
                print_table(&listing);
            }
            0
        }
        Err(err) => {
            if args.json {
                println!("{}", error_json(&err));
            }
            // stdout keeps RFC §6's error object (no path in it); stderr is for the
            // user at the terminal, so it names the directory and what it must be.
            let text = err.to_string();
            let fix = if text.contains("store directory") {
                " (--dir must be an existing directory owned by you, mode 0700, not a symlink: \
                 the daemon's …/venomx/recovery/<socket-key>)"
            } else {
                ""
            };
            eprintln!(
                "vxcert store list: --dir {}: {text}{fix}",
                args.dir.display()
            );
            err.exit_code()
        }
    }
}

fn list(
    args: &StoreListArgs,
    socket: Option<String>,
    config: StoreConfig,
    now: Timestamp,
) -> Result<Listing, StoreError> {
    let mut store = Store::open_dir(&args.dir, vx_store::current_uid(), socket, config)?;
    store.list(now)
}

/// The daemon records the socket with its parent resolved; do the same when the
/// parent exists, else take an absolute path as written.
fn resolve_socket(path: &str) -> Option<String> {
    match vx_store::resolve_socket_path(std::path::Path::new(path)) {
        Ok(resolved) => Some(resolved),
        Err(_) if path.starts_with('/') => Some(path.to_owned()),
        Err(_) => None,
    }
}

/// `{"checkpoints":[{"checkpoint":…,"status":…,"generation":…}]}` in the RFC's key order.
pub fn listing_json(listing: &Listing) -> String {
    let rows: Vec<String> = listing
        .entries
        .iter()
        .map(|e| {
            let mut row = format!(
                "{{\"checkpoint\":{},\"status\":{}",
                serde_json::Value::from(e.checkpoint.as_str()),
                serde_json::Value::from(e.status.as_str())
            );
            if let Some(generation) = e.generation {
                row.push_str(&format!(",\"generation\":{generation}"));
            }
            row.push('}');
            row
        })
        .collect();
    format!("{{\"checkpoints\":[{}]}}", rows.join(","))
}

/// RFC-0001's error shape with RFC §6's stable message and empty data.
fn error_json(err: &StoreError) -> String {
    let data = match err.code.param() {
        Some(param) => serde_json::json!({ "param": param }),
        None => serde_json::json!({}),
    };
    serde_json::json!({ "error": { "code": err.code.as_str(), "message": err.code.message(), "data": data } })
        .to_string()
}

fn print_table(listing: &Listing) {
    for e in &listing.entries {
        let generation = e
            .generation
            .map_or_else(|| "-".to_owned(), |g| g.to_string());
        match &e.reason {
            Some(reason) => println!("{}\t{}\t{}\t{}", e.checkpoint, e.status, generation, reason),
            None => println!("{}\t{}\t{}", e.checkpoint, e.status, generation),
        }
    }
    if listing.temp_files > 0 {
        eprintln!(
            "note: {} temporary file(s) (never candidates)",
            listing.temp_files
        );
    }
    for name in &listing.other_names {
        eprintln!("note: ignored entry that is not a checkpoint file: {name}");
    }
}
