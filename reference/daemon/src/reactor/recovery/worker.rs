//! The recovery worker thread. It owns the [`vx_store::Store`]: every disk operation
//! (encode, publish, prune, list, inspect, load, forget, reload's retention) runs
//! here, never in a reactor turn. Jobs run one at a time in arrival order, so at most
//! one write is ever in flight. Replies to clients go straight from the worker to the
//! waiting connection ([`Reply`]); what the reactor must learn comes back to it as a
//! [`WorkerEvent`], the worker's own message type.

use super::text::{encode_fitting, encode_fresh, FreshText};
use crate::config::schema::{Recovery as RecoveryConfig, TerminalText};
use crate::errors::{ApiError, ApiResult};
use crate::stream::{Outcome, Reply};
use serde_json::{json, Value};
use std::path::Path;
use tokio::sync::{mpsc, oneshot};
use vx_format::Checkpoint;
use vx_store::{Loaded, Store, StoreConfig, StoreError, StoreLocation};

/// The final `shutdown="clean"` checkpoint's own deadline (RFC §3).
pub const FINAL_DEADLINE: std::time::Duration = std::time::Duration::from_millis(2000);

/// A checkpoint id that has the RFC's syntax (`c` + lowercase UUID v4); checked once,
/// when the verb's params are read, so a malformed id never reaches the store.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CheckpointId(String);

impl CheckpointId {
    pub fn parse(id: &str) -> ApiResult<CheckpointId> {
        if vx_format::ids::is_checkpoint_id(id) {
            Ok(CheckpointId(id.to_string()))
        } else {
            Err(ApiError::param("checkpoint", "invalid checkpoint id"))
        }
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

/// What the worker tells the reactor.
pub enum WorkerEvent {
    /// A publish job finished (`explicit`: a `recovery.checkpoint`).
    Published { explicit: bool },
    /// A published checkpoint, its text dropped: the next capture reuses it.
    Spent(Box<Checkpoint>),
    /// Restore, phase one done: the checkpoint was read and validated.
    Loaded {
        loaded: Box<Loaded>,
        principal: String,
        reply: Reply,
    },
    /// Reload's retention cleanup succeeded: activate `config`.
    ReloadCleaned {
        config: Box<crate::config::Config>,
        reply: Reply,
    },
    /// Reload's retention cleanup failed: nothing changes; the reactor records the
    /// code (doctor) and answers.
    ReloadFailed { error: ApiError, reply: Reply },
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

/// What the worker does.
pub enum Job {
    /// Encode and publish a captured checkpoint, then prune. `reply` is the explicit
    /// `recovery.checkpoint` request; `done` is the final shutdown checkpoint.
    Publish {
        checkpoint: Box<Checkpoint>,
        /// Panes whose text the capture read as plain rows: encoded here.
        fresh: Vec<FreshText>,
        reply: Option<Reply>,
        done: Option<oneshot::Sender<bool>>,
    },
    List {
        reply: Reply,
    },
    Inspect {
        id: CheckpointId,
        reply: Reply,
    },
    Forget {
        id: CheckpointId,
        reply: Reply,
    },
    /// Restore, phase one: read and validate the whole file; the reactor commits.
    Load {
        id: CheckpointId,
        principal: String,
        reply: Reply,
    },
    /// Reload, retention phase: prune under the new config and, for `.plain` →
    /// `.off`, purge every checkpoint holding text; the reactor activates after.
    Reload {
        config: Box<crate::config::Config>,
        purge_text: bool,
        reply: Reply,
    },
    /// `doctor`: the reactor's facts, completed with the store's (read only: no
    /// prune, no write; an enabled store that is not open yet is opened).
    Doctor {
        facts: Box<crate::doctor::ReactorFacts>,
        reply: Reply,
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
    let mut store = Store::open(&location, uid, config.store_config())?;
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

struct Worker {
    init: StoreInit,
    config: StoreConfig,
    /// `.recovery.enabled`: a disabled daemon never prunes (RFC §2: disabling must
    /// not silently delete archives); list and inspect only read.
    enabled: bool,
    reactor: mpsc::Sender<WorkerEvent>,
    /// The encoded records of the last checkpoint written: an idle daemon writes
    /// the same sessions, windows and panes again and again.
    records: vx_format::RecordCache,
}

/// Starts the worker thread; it ends when the job sender is dropped.
pub fn start_worker(
    init: StoreInit,
    config: &RecoveryConfig,
    reactor: mpsc::Sender<WorkerEvent>,
) -> std::sync::mpsc::Sender<Job> {
    let (tx, rx) = std::sync::mpsc::channel::<Job>();
    let mut worker = Worker {
        init,
        config: config.store_config(),
        enabled: config.enabled,
        reactor,
        records: vx_format::RecordCache::new(),
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
                fresh,
                reply,
                done,
            } => {
                let explicit = reply.is_some();
                encode_fresh(&mut checkpoint, &fresh);
                drop(fresh);
                let result = self.publish(&mut checkpoint);
                // The reactor learns first that the write is over, so a request the
                // client sends after this reply never finds it still in flight.
                let _ = self
                    .reactor
                    .blocking_send(WorkerEvent::Published { explicit });
                if let Some(reply) = reply {
                    let _ = reply.send(Outcome::reply(
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
                // Freeing the text (a string per row of a screen not encoded) is no
                // part of the publish latency: it happens after the answer. The
                // records go back to the reactor for its next capture; if its queue
                // is full they are simply freed.
                for pane in &mut checkpoint.panes {
                    pane.text = vx_format::Text::Omitted;
                }
                let _ = self.reactor.try_send(WorkerEvent::Spent(checkpoint));
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
                let _ = reply.send(Outcome::reply(result.map_err(|e| api_error(&e)).map(|l| {
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
                let result = (|| {
                    let s = self.store()?;
                    if enabled {
                        let _ = s.prune(now);
                    }
                    s.inspect(id.as_str(), now)
                })();
                let _ = reply.send(Outcome::reply(result.map_err(|e| api_error(&e)).map(|i| {
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
                let result = self.store().and_then(|s| s.forget(id.as_str()));
                let _ = reply.send(Outcome::reply(
                    result.map(|()| json!({})).map_err(|e| api_error(&e)),
                ));
            }
            Job::Load {
                id,
                principal,
                reply,
            } => {
                let now = vx_store::clock::now();
                let result = (|| {
                    let s = self.store()?;
                    let _ = s.prune(now);
                    s.load(id.as_str(), now)
                })();
                match result {
                    Err(e) => {
                        let _ = reply.send(Outcome::reply(Err(api_error(&e))));
                    }
                    Ok(loaded) => {
                        release_freed_memory();
                        let msg = WorkerEvent::Loaded {
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
                let store = self.doctor_facts();
                let _ = reply.send(Outcome::reply(Ok(crate::doctor::report(&facts, &store))));
            }
            Job::Reload {
                config,
                purge_text,
                reply,
            } => {
                let new = config.recovery.store_config();
                let result = self.retention_for(new, purge_text, config.recovery.enabled);
                match result {
                    Err(e) => {
                        let error = api_error(&e);
                        let _ = self
                            .reactor
                            .blocking_send(WorkerEvent::ReloadFailed { error, reply });
                    }
                    Ok(()) => {
                        self.config = new;
                        self.enabled = config.recovery.enabled;
                        if let Some(s) = self.init.store.as_mut() {
                            s.set_config(new);
                        }
                        let _ = self
                            .reactor
                            .blocking_send(WorkerEvent::ReloadCleaned { config, reply });
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
        let mut records = std::mem::take(&mut self.records);
        let result = self.store().and_then(|store| {
            let max = store.config().max_bytes();
            store.publish_encoded(now, cp, |cp| encode_fitting(cp, max, &mut records))
        });
        self.records = records;
        let published = result?;
        Ok((published.checkpoint, published.generation))
    }
}

/// Hands the pages of freed heap memory back to the kernel. A restore's load frees
/// the file's bytes and the decoder's transients in this thread's malloc arena, which
/// glibc keeps resident (only a free top of the heap is trimmed): part of the
/// restore's peak beside the model and the state prepared from it (issue 14: ~15 MiB
/// at 100 000 resources). The reactor calls it again once the model is dropped.
pub(super) fn release_freed_memory() {
    #[cfg(target_env = "gnu")]
    // SAFETY: `malloc_trim` takes each glibc arena's own lock and only returns free
    // pages; it has no preconditions and touches no memory the program holds.
    unsafe {
        libc::malloc_trim(0);
    }
}
