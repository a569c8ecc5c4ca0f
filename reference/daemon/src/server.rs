//! `vxref serve`: lock, identity, socket, connections, signals, shutdown.
//!
//! Start-up order: take the exclusive `flock` on `<socket>.lock` (a second daemon
//! stops here, touching nothing else); load the config; write a fresh owner token to
//! `<socket>.owner` (0600); replace a stale socket; bind; accept. Nothing is printed
//! on stdout. Shutdown (SIGINT/SIGTERM): mutations are refused, supervised process
//! groups get SIGTERM, then SIGKILL at 1500 ms, all must be reaped by 2000 ms; then
//! with recovery enabled, the final `shutdown="clean"` checkpoint (its own 2000 ms);
//! then the socket and owner file are removed and the lock released. Exit status 0
//! means every step succeeded.

use crate::config;
use crate::paths::{lock_path, owner_path};
use crate::reactor::{self, Identity, Msg, ReactorHandle};
use crate::wire::{self, Frame};
use nix::fcntl::{Flock, FlockArg};
use std::fs::File;
use std::io::Write as _;
use std::os::unix::fs::{DirBuilderExt as _, FileTypeExt as _, OpenOptionsExt as _};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;
use tokio::io::{AsyncWriteExt as _, BufReader};
use tokio::net::{UnixListener, UnixStream};
use tokio::sync::oneshot;
use tokio::time::Instant;

/// Supervised groups get SIGKILL this long after SIGTERM.
pub const KILL_AFTER: Duration = Duration::from_millis(1500);
/// Every supervised process must be reaped this long after shutdown begins.
pub const SHUTDOWN_DEADLINE: Duration = Duration::from_millis(2000);
/// On-demand daemons stop this long after their last session ends.
pub const ON_DEMAND_GRACE: Duration = Duration::from_millis(5000);

pub const EXIT_CLEAN: i32 = 0;
pub const EXIT_UNCLEAN: i32 = 1;
pub const EXIT_CONFIG: i32 = 2;
pub const EXIT_LOCKED: i32 = 6;

pub struct ServeOptions {
    pub socket: PathBuf,
    pub on_demand: bool,
    /// Play an older server (ADR-0068 §4, §6): ignore `agent_session` on spawns and
    /// let clients write `session.created/v1/*`, so suites prove fallback and probe.
    pub legacy_spawn: bool,
}

fn fail(message: &str, code: i32) -> i32 {
    eprintln!("vxref serve: {message}");
    code
}

/// Runs the daemon until it is told to stop; returns the process exit status.
pub fn serve(opts: ServeOptions) -> i32 {
    let socket = opts.socket.clone();
    if let Some(dir) = socket.parent() {
        if std::fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(dir)
            .is_err()
        {
            return fail("cannot create the socket's directory", EXIT_LOCKED);
        }
    }
    let lock_file = match std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .mode(0o600)
        .open(lock_path(&socket))
    {
        Ok(f) => f,
        Err(_) => return fail("cannot open the lock file", EXIT_LOCKED),
    };
    let lock = match Flock::lock(lock_file, FlockArg::LockExclusiveNonblock) {
        Ok(lock) => lock,
        Err((_, nix::errno::Errno::EWOULDBLOCK)) => {
            return fail("another daemon is already serving this socket", EXIT_LOCKED)
        }
        Err(_) => return fail("cannot lock the lock file", EXIT_LOCKED),
    };
    let config_path = config::default_path();
    let config = match config_path.as_deref().map(config::load_with_plugins) {
        Some(Ok(c)) => c,
        Some(Err(e)) => return fail(&e.to_string(), EXIT_CONFIG),
        None => config::Config::default(),
    };
    // RFC §2/§3: only the lock holder touches the store; with recovery enabled it
    // is opened, cleaned of temporary files and pruned before readiness.
    let store = match crate::reactor::recovery::open_at_startup(&socket, &config.recovery) {
        Ok(s) => s,
        Err(_) => return fail("cannot open the recovery store", EXIT_LOCKED),
    };
    let owner_token = match crate::auth::fresh_token() {
        Ok(t) => t,
        Err(_) => return fail("no randomness for the owner token", EXIT_UNCLEAN),
    };
    if write_owner_file(&owner_path(&socket), &owner_token).is_err() {
        return fail("cannot write the owner token file", EXIT_LOCKED);
    }
    match std::fs::symlink_metadata(&socket) {
        Ok(m) if m.file_type().is_socket() => {
            // A previous daemon died without cleanup; we hold the lock, so it is stale.
            if std::fs::remove_file(&socket).is_err() {
                return fail("cannot remove the stale socket", EXIT_LOCKED);
            }
        }
        Ok(_) => {
            return fail(
                "the socket path is taken by something that is not a socket",
                EXIT_LOCKED,
            )
        }
        Err(_) => {}
    }
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
    {
        Ok(r) => r,
        Err(_) => return fail("cannot start the runtime", EXIT_UNCLEAN),
    };
    let identity = Identity {
        source: format!("venomx/{}", uuid::Uuid::new_v4()),
        socket: socket.to_string_lossy().into_owned(),
        config_path,
        legacy_spawn: opts.legacy_spawn,
    };
    let reaped = runtime.block_on(run(
        &socket,
        identity,
        config,
        &owner_token,
        opts.on_demand,
        store,
    ));
    runtime.shutdown_timeout(Duration::from_millis(200));
    let removed_socket = remove_if_present(&socket);
    let removed_owner = remove_if_present(&owner_path(&socket));
    let unlocked = lock.unlock().is_ok();
    match reaped {
        Ok(true) if removed_socket && removed_owner && unlocked => EXIT_CLEAN,
        Ok(_) => fail("shutdown did not complete cleanly", EXIT_UNCLEAN),
        Err(message) => fail(message, EXIT_UNCLEAN),
    }
}

fn remove_if_present(path: &Path) -> bool {
    match std::fs::remove_file(path) {
        Ok(()) => true,
        Err(e) => e.kind() == std::io::ErrorKind::NotFound,
    }
}

/// Writes the owner token to a fresh 0600 file and renames it into place.
fn write_owner_file(path: &Path, token: &str) -> std::io::Result<()> {
    let mut tmp_name = path.as_os_str().to_owned();
    tmp_name.push(".tmp");
    let tmp = PathBuf::from(tmp_name);
    let _ = std::fs::remove_file(&tmp);
    let mut f: File = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(&tmp)?;
    f.write_all(token.as_bytes())?;
    f.write_all(b"\n")?;
    f.sync_all()?;
    drop(f);
    std::fs::rename(&tmp, path)
}

/// Serves until a signal (or on-demand expiry); returns whether every child was reaped.
async fn run(
    socket: &Path,
    identity: Identity,
    config: config::Config,
    owner_token: &str,
    on_demand: bool,
    store: crate::reactor::recovery::StoreInit,
) -> Result<bool, &'static str> {
    use tokio::signal::unix::{signal, SignalKind};
    let mut sigterm =
        signal(SignalKind::terminate()).map_err(|_| "cannot install signal handlers")?;
    let mut sigint =
        signal(SignalKind::interrupt()).map_err(|_| "cannot install signal handlers")?;
    let listener = UnixListener::bind(socket).map_err(|_| "cannot bind the socket")?;
    let config_path = identity.config_path.clone();
    let handle = reactor::start(identity, config, owner_token, store);
    if let Some(path) = config_path {
        let tx = handle.tx.clone();
        config::watch::spawn(path, move || {
            tx.blocking_send(Msg::ConfigFileChanged).is_ok()
        });
    }
    let accept_handle = handle.clone();
    let streams = Arc::new(LiveStreams::default());
    let accept_streams = streams.clone();
    tokio::spawn(async move {
        loop {
            match listener.accept().await {
                Ok((stream, _)) => {
                    tokio::spawn(serve_connection(
                        stream,
                        accept_handle.clone(),
                        accept_streams.clone(),
                    ));
                }
                Err(_) => tokio::time::sleep(Duration::from_millis(10)).await,
            }
        }
    });
    let mut sessions = handle.sessions.clone();
    tokio::select! {
        _ = sigterm.recv() => {}
        _ = sigint.recv() => {}
        _ = on_demand_expiry(&handle, &mut sessions), if on_demand => {}
    }
    if !shut_down(&handle).await {
        return Ok(false);
    }
    let clean = final_checkpoint(&handle).await;
    // Shutdown closed every stream; let each write its `closed` line before the
    // runtime (and with it the stream tasks) goes away.
    streams.drained(STREAM_DRAIN).await;
    Ok(clean)
}

/// How long shutdown waits for open streams to write their final line.
const STREAM_DRAIN: Duration = Duration::from_millis(1000);

/// The streaming connections (`events.subscribe`, `pane.attach`) still running.
#[derive(Default)]
struct LiveStreams {
    running: std::sync::atomic::AtomicUsize,
    idle: tokio::sync::Notify,
}

impl LiveStreams {
    /// Waits until no stream runs, at most `limit`.
    async fn drained(&self, limit: Duration) {
        let wait = async {
            loop {
                let idle = self.idle.notified();
                if self.running.load(std::sync::atomic::Ordering::Acquire) == 0 {
                    return;
                }
                idle.await;
            }
        };
        let _ = tokio::time::timeout(limit, wait).await;
    }
}

/// Counts one running stream for as long as it lives.
struct StreamGuard(Arc<LiveStreams>);

impl StreamGuard {
    fn new(streams: Arc<LiveStreams>) -> StreamGuard {
        streams
            .running
            .fetch_add(1, std::sync::atomic::Ordering::AcqRel);
        StreamGuard(streams)
    }
}

impl Drop for StreamGuard {
    fn drop(&mut self) {
        self.0
            .running
            .fetch_sub(1, std::sync::atomic::Ordering::AcqRel);
        self.0.idle.notify_waiters();
    }
}

/// RFC §3: after every child is reaped, the final `shutdown="clean"` checkpoint
/// (when recovery is enabled and this daemon became active), with its own deadline.
/// The lock is held until `serve` has removed the socket and owner file.
async fn final_checkpoint(handle: &ReactorHandle) -> bool {
    let (tx, rx) = oneshot::channel();
    if handle
        .tx
        .send(Msg::FinalCheckpoint { done: tx })
        .await
        .is_err()
    {
        return false;
    }
    matches!(
        tokio::time::timeout(crate::reactor::recovery::FINAL_DEADLINE, rx).await,
        Ok(Ok(true))
    )
}

/// Resolves when an on-demand daemon has had no session for a whole grace period and
/// the reactor agreed to stop (it refuses if a session was created meanwhile).
async fn on_demand_expiry(
    handle: &ReactorHandle,
    sessions: &mut tokio::sync::watch::Receiver<usize>,
) {
    loop {
        while *sessions.borrow_and_update() > 0 {
            if sessions.changed().await.is_err() {
                return;
            }
        }
        let grace = tokio::time::sleep(ON_DEMAND_GRACE);
        tokio::pin!(grace);
        loop {
            tokio::select! {
                _ = &mut grace => break,
                changed = sessions.changed() => if changed.is_err() { return },
            }
        }
        let (tx, rx) = oneshot::channel();
        if handle
            .tx
            .send(Msg::GraceExpired { stop: tx })
            .await
            .is_err()
        {
            return;
        }
        if rx.await.unwrap_or(false) {
            return;
        }
    }
}

/// Refuses mutations, terminates supervised groups and waits for them to be reaped.
async fn shut_down(handle: &ReactorHandle) -> bool {
    let started = Instant::now();
    let _ = handle.tx.send(Msg::BeginShutdown).await;
    let mut supervised = handle.supervised.clone();
    if !wait_reaped(&mut supervised, started + KILL_AFTER).await {
        let _ = handle.tx.send(Msg::KillAll).await;
        return wait_reaped(&mut supervised, started + SHUTDOWN_DEADLINE).await;
    }
    true
}

async fn wait_reaped(supervised: &mut tokio::sync::watch::Receiver<usize>, until: Instant) -> bool {
    let wait = async {
        while *supervised.borrow_and_update() > 0 {
            if supervised.changed().await.is_err() {
                return false;
            }
        }
        true
    };
    tokio::time::timeout_at(until, wait).await.unwrap_or(false)
}

/// Each accepted connection's id, for what the reactor binds to one connection (the
/// one-shot `session.created/v1/<token>` results).
static NEXT_CONNECTION: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);

async fn serve_connection(stream: UnixStream, handle: ReactorHandle, streams: Arc<LiveStreams>) {
    let conn = NEXT_CONNECTION.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    serve_requests(stream, &handle, streams, conn).await;
    // Whatever this connection left unread goes with it.
    let _ = handle.tx.send(Msg::ConnectionClosed { conn }).await;
}

async fn serve_requests(
    stream: UnixStream,
    handle: &ReactorHandle,
    streams: Arc<LiveStreams>,
    conn: u64,
) {
    let (read_half, mut write_half) = stream.into_split();
    let mut reader = BufReader::new(read_half);
    let mut principal = crate::auth::UNKNOWN.to_string();
    loop {
        let frame = match wire::read_frame(&mut reader).await {
            Ok(Frame::Line(bytes)) => bytes,
            Ok(Frame::Oversized) => {
                let reply = wire::encode_error(&serde_json::Value::Null, &wire::frame_size_error());
                let _ = write_half.write_all(&reply).await;
                break;
            }
            Ok(Frame::Eof) | Err(_) => break,
        };
        if wire::is_blank(&frame) {
            continue;
        }
        let (reply, close, stream) = match wire::decode_request(&frame) {
            Err(e) => (wire::encode_error(&e.id, &e.error), false, None),
            Ok(req) => match crate::manifest::find(&req.verb) {
                None => (
                    wire::encode_error(
                        &req.id,
                        &crate::errors::ApiError::new(
                            crate::errors::ErrorCode::UnknownVerb,
                            "unknown verb",
                        ),
                    ),
                    false,
                    None,
                ),
                Some(verb) => {
                    let (tx, rx) = oneshot::channel();
                    let sent = handle
                        .tx
                        .send(Msg::Request {
                            principal: principal.clone(),
                            conn,
                            verb,
                            params: req.params,
                            reply: tx,
                        })
                        .await;
                    match (sent, rx.await) {
                        (Ok(()), Ok(outcome)) => {
                            if let Some(p) = outcome.principal {
                                principal = p;
                            }
                            let reply = match outcome.result {
                                Ok(crate::stream::Answer::Value(ok)) => {
                                    wire::encode_ok(&req.id, &ok)
                                }
                                Ok(crate::stream::Answer::Encoded(ok)) => {
                                    wire::encode_ok_encoded(&req.id, &ok)
                                }
                                Err(e) => {
                                    hold_to_manifest(verb, e.code);
                                    wire::encode_error(&req.id, &e)
                                }
                            };
                            (reply, outcome.close, outcome.stream)
                        }
                        _ => (
                            wire::encode_error(&req.id, &crate::errors::ApiError::shutdown()),
                            true,
                            None,
                        ),
                    }
                }
            },
        };
        if write_half.write_all(&reply).await.is_err() || close {
            break;
        }
        if let Some(stream) = stream {
            let _running = StreamGuard::new(streams);
            stream.run(reader, write_half).await;
            return;
        }
    }
}

/// Debug builds hold every verb's errors to its manifest list (`manifest/errors.rs`),
/// which the CLI's long help and the docs print: a reply outside it is a bug in the
/// list, and aborting makes whichever test provoked it fail.
fn hold_to_manifest(verb: &'static crate::manifest::Verb, code: crate::errors::ErrorCode) {
    if cfg!(debug_assertions) && !verb.may_return(code) {
        eprintln!(
            "vxref: {} replied {code}, which manifest/errors.rs does not list for it",
            verb.name
        );
        std::process::abort();
    }
}
