//! Recovery (RFC §2–§8) outside the reactor: the store worker thread, archive
//! metadata, text bounds and the error mapping. The reactor side (capture at one
//! turn, the verbs, restore's prepare-then-commit) is `reactor/recovery.rs`.
//!
//! The worker thread owns the [`vx_store::Store`]: every disk operation (encode,
//! publish, prune, list, inspect, load, forget) runs there, never in a reactor turn.
//! Jobs run one at a time in arrival order, so at most one write is ever in flight.
//! Replies to clients go straight from the worker to the waiting connection; what the
//! reactor must learn (a publish finished, a checkpoint was loaded for restore) comes
//! back to it as a [`Msg`].

use crate::config::schema::{Recovery as RecoveryConfig, TerminalText};
use crate::emulator::Capture;
use crate::errors::ApiError;
use crate::reactor::{Msg, Outcome};
use serde_json::{json, Value};
use std::path::Path;
use tokio::sync::{mpsc, oneshot};
use vx_format::{Checkpoint, Format, PlainText, PreviousState, Text, Timestamp};
use vx_store::{ErrorCode, Loaded, Store, StoreConfig, StoreError, StoreLocation, TextMode};

/// The final `shutdown="clean"` checkpoint's own deadline (RFC §3).
pub const FINAL_DEADLINE: std::time::Duration = std::time::Duration::from_millis(2000);

/// An archive's `text_state`, with the original timestamps of plain text (RFC §4:
/// recheckpointing never renews them).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ArchiveText {
    Omitted,
    Expired,
    Plain {
        saved_at: Timestamp,
        expires_at: Timestamp,
    },
}

/// RFC §5's per-archive recovery metadata.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Archive {
    pub checkpoint: String,
    pub previous_pane: String,
    pub process_state: PreviousState,
    pub text: ArchiveText,
    pub cut_rows: u64,
    /// A float whose saved preset the restoring daemon did not know (it fell back
    /// to `.floats.default`). Reported by doctor only; not part of the wire object.
    pub unknown_preset: bool,
}

impl Archive {
    /// The closed `recovery` object of pane.list and pane.capture.
    pub fn to_json(&self) -> Value {
        json!({
            "checkpoint": self.checkpoint,
            "previous_pane": self.previous_pane,
            "process_state": match self.process_state {
                PreviousState::Exited => "exited",
                PreviousState::Interrupted => "interrupted",
            },
            "text_state": match self.text {
                ArchiveText::Omitted => "omitted",
                ArchiveText::Expired => "expired",
                ArchiveText::Plain { .. } => "plain",
            },
            "cut_rows": self.cut_rows,
        })
    }
}

/// The store-relevant part of `.recovery`.
pub fn store_config(r: &RecoveryConfig) -> StoreConfig {
    StoreConfig {
        max_checkpoints: r.max_checkpoints,
        max_checkpoint_bytes: r.max_checkpoint_bytes,
        max_age_seconds: r.max_age_seconds,
        terminal_text: match r.terminal_text {
            TerminalText::Off => TextMode::Off,
            TerminalText::Plain => TextMode::Plain,
        },
        text_max_age_seconds: r.text_max_age_seconds,
    }
}

/// Whether this config captures terminal text at all (zero rows or bytes disables it).
pub fn text_enabled(r: &RecoveryConfig) -> bool {
    r.terminal_text == TerminalText::Plain && r.text_max_rows > 0 && r.text_max_bytes > 0
}

/// A store failure as a wire error: the RFC §6 code, its fixed message, and
/// `data.param` for the invalid id. The store's reason (a step or rule id) is not
/// sent; it never holds a path or content, but the wire keeps to fixed messages.
pub fn api_error(e: &StoreError) -> ApiError {
    let err = ApiError::new(e.code.into(), e.code.message());
    match e.code.param() {
        Some(p) => err.with("param", p),
        None => err,
    }
}

pub fn disabled() -> ApiError {
    ApiError::code(crate::errors::ErrorCode::RecoveryDisabled)
}

/// RFC §4's per-pane text bounds: the screen keeps exactly `rows` rows and is kept
/// whole or not at all; history is capped by the rows and bytes left (rows and bytes
/// count screen and history together; a row's bytes are its UTF-8 length), dropping
/// the oldest rows first.
pub fn bounded_text(
    capture: Capture,
    rows: u16,
    max_rows: u64,
    max_bytes: u64,
    saved_at: Timestamp,
    expires_at: Timestamp,
) -> Text {
    let (mut screen, mut history) = (capture.screen, capture.history);
    // Exactly `rows` rows; should the emulator still be taller, its top rows are
    // history, as in a terminal that shrinks.
    if screen.len() > usize::from(rows) {
        let extra = screen.len() - usize::from(rows);
        history.extend(screen.drain(..extra));
    }
    screen.resize(usize::from(rows), String::new());
    let screen_bytes: u64 = screen.iter().map(|r| r.len() as u64).sum();
    if screen.len() as u64 > max_rows || screen_bytes > max_bytes {
        return Text::Omitted;
    }
    let mut rows_left = max_rows - screen.len() as u64;
    let mut bytes_left = max_bytes - screen_bytes;
    let mut keep = 0;
    for row in history.iter().rev() {
        if rows_left == 0 || row.len() as u64 > bytes_left {
            break;
        }
        rows_left -= 1;
        bytes_left -= row.len() as u64;
        keep += 1;
    }
    history.drain(..history.len() - keep);
    Text::Plain(PlainText {
        saved_at,
        expires_at,
        screen,
        history,
    })
}

/// Encodes `cp` in the current format within `max_bytes`: when it does not fit, pane
/// text is omitted in reverse numeric pane order until it does (RFC §4); topology is
/// never dropped, so a checkpoint whose topology alone is too large fails.
pub fn encode_fitting(cp: &mut Checkpoint, max_bytes: u64) -> Result<Vec<u8>, StoreError> {
    let mut cursor = cp.panes.len();
    loop {
        let bytes = vx_format::write(cp, Format::CURRENT)?;
        if bytes.len() as u64 <= max_bytes {
            return Ok(bytes);
        }
        let mut need = bytes.len() as u64 - max_bytes;
        let mut dropped = false;
        while need > 0 && cursor > 0 {
            cursor -= 1;
            let pane = &mut cp.panes[cursor];
            if let Text::Plain(t) = &pane.text {
                // At least this much leaves the file: each row's bytes plus its quotes
                // and separator, plus the text object's fixed fields.
                let estimate: u64 = t
                    .screen
                    .iter()
                    .chain(&t.history)
                    .map(|r| r.len() as u64 + 3)
                    .sum::<u64>()
                    + 64;
                pane.text = Text::Omitted;
                need = need.saturating_sub(estimate);
                dropped = true;
            }
        }
        if !dropped {
            return Err(StoreError::new(
                ErrorCode::CheckpointSize,
                "topology alone exceeds max_checkpoint_bytes",
            ));
        }
    }
}

/// What the worker does.
pub enum Job {
    /// Encode and publish a captured checkpoint, then prune. `reply` is the explicit
    /// `recovery.checkpoint` request; `done` is the final shutdown checkpoint.
    Publish {
        checkpoint: Box<Checkpoint>,
        reply: Option<oneshot::Sender<Outcome>>,
        done: Option<oneshot::Sender<bool>>,
    },
    List {
        reply: oneshot::Sender<Outcome>,
    },
    Inspect {
        id: String,
        reply: oneshot::Sender<Outcome>,
    },
    Forget {
        id: String,
        reply: oneshot::Sender<Outcome>,
    },
    /// Restore, phase one: read and validate the whole file; the reactor commits.
    Load {
        id: String,
        principal: String,
        reply: oneshot::Sender<Outcome>,
    },
    /// Reload, retention phase: prune under the new config and, for `.plain` →
    /// `.off`, purge every checkpoint holding text; the reactor activates after.
    Reload {
        config: Box<crate::config::Config>,
        purge_text: bool,
        reply: oneshot::Sender<Outcome>,
    },
    /// `doctor`: the reactor's facts, completed with the store's (read only: no
    /// prune, no write; an enabled store that is not open yet is opened).
    Doctor {
        facts: Box<crate::doctor::ReactorFacts>,
        reply: oneshot::Sender<Outcome>,
    },
}

/// The store as the daemon opened it at startup.
pub struct StoreInit {
    /// `None` when the location could not be resolved (recovery verbs then fail
    /// `unavailable.recovery_io`).
    pub location: Option<StoreLocation>,
    pub uid: u64,
    pub store: Option<Store>,
}

/// Startup (RFC §2, §3), after the socket lock: with recovery enabled, open the
/// store, remove safe temporary files, prune and (with `.terminal_text = .off`)
/// delete checkpoints holding text, or fail initialization. With
/// recovery disabled nothing is touched; the store opens on the first recovery verb.
pub fn open_at_startup(socket: &Path, config: &RecoveryConfig) -> Result<StoreInit, StoreError> {
    let uid = vx_store::current_uid();
    let location = match StoreLocation::from_env(socket) {
        Ok(l) => l,
        Err(e) if config.enabled => return Err(e),
        Err(_) => {
            return Ok(StoreInit {
                location: None,
                uid,
                store: None,
            })
        }
    };
    if !config.enabled {
        return Ok(StoreInit {
            location: Some(location),
            uid,
            store: None,
        });
    }
    let mut store = Store::open(&location, uid, store_config(config))?;
    store.remove_temp_files().map_err(|e| e.error)?;
    store.prune(vx_store::clock::now()).map_err(|e| e.error)?;
    if config.terminal_text == TerminalText::Off {
        // The text policy holds for checkpoints written before this start (for
        // example under `.plain` before the config changed): every decodable
        // checkpoint holding text is deleted, or startup fails. Undecodable files
        // are left for `recovery.list` to show (the reload purge deletes them too,
        // since it cannot show they hold no text; startup keeps the evidence).
        let scan = store.scan()?;
        for entry in &scan.finals {
            if entry.summary().is_some_and(|s| s.has_text) {
                store.forget(&entry.id)?;
            }
        }
    }
    Ok(StoreInit {
        location: Some(location),
        uid,
        store: Some(store),
    })
}

fn outcome(result: Result<Value, ApiError>) -> Outcome {
    Outcome::reply(result)
}

struct Worker {
    init: StoreInit,
    config: StoreConfig,
    /// `.recovery.enabled`: a disabled daemon never prunes (RFC §2: disabling must
    /// not silently delete archives); list and inspect only read.
    enabled: bool,
    /// The code of the last reload whose retention cleanup failed (for doctor).
    last_reload_error: Option<crate::errors::ErrorCode>,
    reactor: mpsc::Sender<Msg>,
}

/// Starts the worker thread; it ends when the job sender is dropped.
pub fn start_worker(
    init: StoreInit,
    config: &RecoveryConfig,
    reactor: mpsc::Sender<Msg>,
) -> std::sync::mpsc::Sender<Job> {
    let (tx, rx) = std::sync::mpsc::channel::<Job>();
    let mut worker = Worker {
        init,
        config: store_config(config),
        enabled: config.enabled,
        last_reload_error: None,
        reactor,
    };
    let spawned = std::thread::Builder::new()
        .name("vxref-recovery".into())
        .spawn(move || {
            while let Ok(job) = rx.recv() {
                worker.run(job);
            }
        });
    // Without a thread every job's reply sender is dropped: callers see shutdown.
    drop(spawned);
    tx
}

impl Worker {
    fn store(&mut self) -> Result<&mut Store, StoreError> {
        if self.init.store.is_none() {
            let location = self
                .init
                .location
                .as_ref()
                .ok_or_else(|| StoreError::io("store location unavailable"))?;
            self.init.store = Some(Store::open(location, self.init.uid, self.config)?);
        }
        self.init
            .store
            .as_mut()
            .ok_or_else(|| StoreError::io("store unavailable"))
    }

    fn run(&mut self, job: Job) {
        match job {
            Job::Publish {
                mut checkpoint,
                reply,
                done,
            } => {
                let explicit = reply.is_some();
                let result = self.publish(&mut checkpoint);
                // Free the capture before answering: it is no longer needed.
                drop(checkpoint);
                // The reactor learns first that the write is over, so a request the
                // client sends after this reply never finds it still in flight.
                let _ = self.reactor.blocking_send(Msg::Published { explicit });
                if let Some(reply) = reply {
                    let _ = reply.send(outcome(
                        result
                            .as_ref()
                            .map(|(id, generation)| {
                                json!({"checkpoint": id, "generation": generation})
                            })
                            .map_err(api_error),
                    ));
                }
                if let Some(done) = done {
                    let _ = done.send(result.is_ok());
                }
                // RFC §3: prune after the durable success is acknowledged; a prune
                // failure does not undo the publish and is recorded for doctor. A
                // write queued meanwhile runs after it.
                if result.is_ok() {
                    if let Some(store) = self.init.store.as_mut() {
                        let _ = store.prune(vx_store::clock::now());
                    }
                }
            }
            Job::List { reply } => {
                let now = vx_store::clock::now();
                let enabled = self.enabled;
                let result = self.store().and_then(|s| {
                    // RFC §2: prune before list (a failure is recorded for doctor).
                    if enabled {
                        let _ = s.prune(now);
                    }
                    s.list(now)
                });
                let _ = reply.send(outcome(result.map_err(|e| api_error(&e)).map(|l| {
                    let rows: Vec<Value> = l
                        .entries
                        .iter()
                        .map(|e| {
                            let mut row =
                                json!({"checkpoint": e.checkpoint, "status": e.status.as_str()});
                            if let Some(g) = e.generation {
                                row["generation"] = json!(g);
                            }
                            row
                        })
                        .collect();
                    json!({"checkpoints": rows})
                })));
            }
            Job::Inspect { id, reply } => {
                let now = vx_store::clock::now();
                let enabled = self.enabled;
                let result = valid_id(&id).and_then(|()| {
                    let s = self.store()?;
                    if enabled {
                        let _ = s.prune(now);
                    }
                    s.inspect(&id, now)
                });
                let _ = reply.send(outcome(result.map_err(|e| api_error(&e)).map(|i| {
                    json!({
                        "checkpoint": i.checkpoint,
                        "generation": i.generation,
                        "shutdown": match i.shutdown {
                            vx_format::Shutdown::Open => "open",
                            vx_format::Shutdown::Clean => "clean",
                        },
                        "sessions": i.sessions,
                        "windows": i.windows,
                        "panes": i.panes,
                        "text_panes": i.text_panes,
                        "expired_text_panes": i.expired_text_panes,
                    })
                })));
            }
            Job::Forget { id, reply } => {
                let result = valid_id(&id).and_then(|()| self.store()?.forget(&id));
                let _ = reply.send(outcome(
                    result.map(|()| json!({})).map_err(|e| api_error(&e)),
                ));
            }
            Job::Load {
                id,
                principal,
                reply,
            } => {
                let now = vx_store::clock::now();
                let result = valid_id(&id).and_then(|()| {
                    let s = self.store()?;
                    let _ = s.prune(now);
                    s.load(&id, now)
                });
                match result {
                    Err(e) => {
                        let _ = reply.send(outcome(Err(api_error(&e))));
                    }
                    Ok(loaded) => {
                        let msg = Msg::RestoreLoaded {
                            loaded: Box::new(loaded),
                            principal,
                            reply,
                        };
                        // If the reactor is gone, the reply sender inside is dropped
                        // and the client sees shutdown.
                        let _ = self.reactor.blocking_send(msg);
                    }
                }
            }
            Job::Doctor { facts, reply } => {
                let mut facts = *facts;
                if facts.last_reload_error.is_none() {
                    facts.last_reload_error = self.last_reload_error;
                }
                let store = self.doctor_facts();
                let _ = reply.send(outcome(Ok(crate::doctor::report(&facts, &store))));
            }
            Job::Reload {
                config,
                purge_text,
                reply,
            } => {
                let new = store_config(&config.recovery);
                let result = self.retention_for(new, purge_text, config.recovery.enabled);
                match result {
                    Err(e) => {
                        self.last_reload_error = Some(e.code.into());
                        let _ = reply.send(outcome(Err(api_error(&e))));
                    }
                    Ok(()) => {
                        self.last_reload_error = None;
                        self.config = new;
                        self.enabled = config.recovery.enabled;
                        if let Some(s) = self.init.store.as_mut() {
                            s.set_config(new);
                        }
                        let _ = self
                            .reactor
                            .blocking_send(Msg::ReloadCleaned { config, reply });
                    }
                }
            }
        }
    }

    /// Doctor's view of the store. A disabled daemon's store is not opened (doctor
    /// touches nothing recovery has not touched); an enabled one was opened at
    /// startup, or is opened now.
    fn doctor_facts(&mut self) -> crate::doctor::StoreFacts {
        use crate::doctor::{StoreFacts, StoreState};
        let mut facts = StoreFacts {
            state: StoreState::NotOpened,
            summary: None,
            summary_error: None,
            health: vx_store::Health::default(),
        };
        if self.init.store.is_none() && self.enabled {
            if let Err(e) = self.store() {
                facts.state = StoreState::Unavailable(e.code.as_str());
                return facts;
            }
        }
        let Some(store) = self.init.store.as_mut() else {
            return facts;
        };
        facts.state = match store.check_dir() {
            Ok(()) => StoreState::Safe,
            Err(_) => StoreState::Unsafe,
        };
        match store.summary(vx_store::clock::now()) {
            Ok(s) => facts.summary = Some(s),
            Err(e) => facts.summary_error = Some(e.code.as_str()),
        }
        facts.health = store.health().clone();
        facts
    }

    /// Reload's retention cleanup under the new config, before activation: the
    /// `.plain` → `.off` purge, then (only when the new config is enabled) pruning
    /// under the new limits. A store that was never opened (recovery was disabled) is
    /// opened now only when the new config enables recovery or text must be purged;
    /// a fresh open first removes safe temporary files, like startup.
    fn retention_for(
        &mut self,
        new: StoreConfig,
        purge_text: bool,
        enabled: bool,
    ) -> Result<(), StoreError> {
        let fresh = self.init.store.is_none();
        if fresh && !purge_text && !enabled {
            return Ok(());
        }
        let store = self.store()?;
        if fresh {
            store.remove_temp_files().map_err(|e| e.error)?;
        }
        if purge_text {
            store.purge_text().map_err(|e| e.error)?;
        }
        // A disabled daemon deletes no archive by age or count.
        if enabled {
            store
                .prune_with(&new, vx_store::clock::now())
                .map_err(|e| e.error)?;
        }
        Ok(())
    }

    fn publish(&mut self, cp: &mut Checkpoint) -> Result<(String, u64), StoreError> {
        let now = vx_store::clock::now();
        let store = self.store()?;
        let socket = store
            .socket()
            .ok_or_else(|| StoreError::io("store has no socket identity"))?
            .to_string();
        let uid = store.uid();
        let max = store.config().max_bytes();
        let published = store.publish_with(now, |alloc| {
            cp.checkpoint = alloc.checkpoint.clone();
            cp.generation = alloc.generation;
            cp.socket = socket;
            cp.uid = uid;
            encode_fitting(cp, max)
        })?;
        Ok((published.checkpoint, published.generation))
    }
}

/// A malformed id never reaches the store's directory.
fn valid_id(id: &str) -> Result<(), StoreError> {
    if vx_format::ids::is_checkpoint_id(id) {
        Ok(())
    } else {
        Err(StoreError::invalid_id())
    }
}

/// What a restore is given: the validated checkpoint (text already expired by the
/// store where the clock, its stored expiry or the current config forbid it).
pub type LoadedCheckpoint = Loaded;

#[cfg(test)]
mod tests {
    use super::*;
    use vx_format::{Pane, PaneState, Session, Shutdown, Window};

    fn text(screen: &[&str], history: &[&str]) -> Capture {
        Capture {
            screen: screen.iter().map(|s| s.to_string()).collect(),
            history: history.iter().map(|s| s.to_string()).collect(),
        }
    }

    #[test]
    fn history_is_capped_by_rows_and_bytes_oldest_first() {
        let t = bounded_text(
            text(&["s1", "s2"], &["h1", "h2", "h3"]),
            2,
            4,
            100,
            Timestamp(1),
            Timestamp(2),
        );
        let Text::Plain(p) = t else { panic!() };
        assert_eq!(p.history, vec!["h2", "h3"]);
        let t = bounded_text(
            text(&["s1", "s2"], &["h1", "hh2", "h3"]),
            2,
            100,
            8,
            Timestamp(1),
            Timestamp(2),
        );
        let Text::Plain(p) = t else { panic!() };
        assert_eq!(p.history, vec!["h3"], "bytes: 4 screen + 2 + 3 > 8");
    }

    #[test]
    fn a_screen_over_budget_omits_the_whole_text() {
        let t = bounded_text(
            text(&["abc", "d"], &[]),
            2,
            1,
            100,
            Timestamp(1),
            Timestamp(2),
        );
        assert_eq!(t, Text::Omitted);
        let t = bounded_text(
            text(&["abc", "d"], &[]),
            2,
            10,
            3,
            Timestamp(1),
            Timestamp(2),
        );
        assert_eq!(t, Text::Omitted);
        let t = bounded_text(text(&["a"], &[]), 3, 10, 3, Timestamp(1), Timestamp(2));
        let Text::Plain(p) = t else { panic!() };
        assert_eq!(p.screen, vec!["a", "", ""], "exactly rows rows");
        let t = bounded_text(
            text(&["s1", "s2", "s3"], &["h"]),
            2,
            10,
            100,
            Timestamp(1),
            Timestamp(2),
        );
        let Text::Plain(p) = t else { panic!() };
        assert_eq!(
            (p.screen, p.history),
            (
                vec!["s2".to_string(), "s3".into()],
                vec!["h".to_string(), "s1".into()]
            )
        );
    }

    fn checkpoint(panes: usize, row: &str) -> Checkpoint {
        Checkpoint {
            checkpoint: "c01234567-89ab-4cde-8fab-0123456789ab".into(),
            generation: 1,
            socket: "/s".into(),
            uid: 0,
            captured_at: Timestamp(1_700_000_000_000),
            shutdown: Shutdown::Open,
            sessions: vec![Session {
                id: 0,
                name: "s".into(),
            }],
            windows: vec![Window {
                id: 0,
                session: 0,
                name: "w".into(),
                revision: 1,
                nodes: vec![],
            }],
            panes: (0..panes as u64)
                .map(|id| Pane {
                    id,
                    window: 0,
                    session: 0,
                    cols: 10,
                    rows: 1,
                    state: PaneState::Running,
                    previous_state: None,
                    float: Some(vx_format::FloatSpec {
                        z: id + 1,
                        ..Default::default()
                    }),
                    tags: vec![],
                    text: Text::Plain(PlainText {
                        saved_at: Timestamp(1_700_000_000_000),
                        expires_at: Timestamp(1_700_000_001_000),
                        screen: vec![row.to_string()],
                        history: vec![],
                    }),
                })
                .collect(),
        }
    }

    #[test]
    fn text_is_omitted_in_reverse_pane_order_until_the_file_fits() {
        let row = "x".repeat(1000);
        let mut cp = checkpoint(4, &row);
        let full = vx_format::write(&cp, Format::CURRENT).unwrap().len() as u64;
        let bytes = encode_fitting(&mut cp, full - 500).unwrap();
        assert!(bytes.len() as u64 <= full - 500);
        let kept: Vec<bool> = cp
            .panes
            .iter()
            .map(|p| matches!(p.text, Text::Plain(_)))
            .collect();
        assert_eq!(kept, vec![true, true, true, false]);
        let mut cp = checkpoint(4, &row);
        let e = encode_fitting(&mut cp, 200).unwrap_err();
        assert_eq!(e.code, ErrorCode::CheckpointSize);
    }
}
