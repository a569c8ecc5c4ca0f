//! `vxbroker serve`: the seed's own transport, HTTP + WebSocket on axum
//! (docs/spec/single-writer.md "Broker").
//!
//! Routes: `GET /ws/term/{engine}/{id}` (the terminal), `GET /api/sessions`,
//! `POST /api/sessions/{key}/archive` (the seed's "archive"; the kit calls it
//! *retire*). Every open goes through [`crate::open::Opener`]; the broker reaches a
//! master only through its socket.

mod claims;
mod reconcile;
mod routes;
mod takeover;
mod ws;

use std::collections::HashMap;
use std::os::unix::fs::DirBuilderExt;
use std::path::PathBuf;
use std::sync::atomic::AtomicU64;
use std::sync::{Arc, Mutex};

use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use clap::Args;
use serde_json::json;

use crate::engines::{self, Engines};
use crate::error::{BrokerError, Code, Param, Result, Rule};
use crate::key::EngineTable;
use crate::lock::{lock_dir_from_env, LockDir};
use crate::master::DEFAULT_RING;
use crate::open::{probe, Liveness, Opener};
use crate::resume::parse_counter;

#[derive(Args, Debug)]
pub struct ServeArgs {
    /// `127.0.0.1:PORT`, `[::1]:PORT` or `unix:PATH`. Loopback only: the broker has no
    /// authentication of its own.
    #[arg(long)]
    pub listen: String,
    /// Sockets, the alias sidecar and owner files.
    #[arg(long = "runtime-dir")]
    pub runtime_dir: PathBuf,
    /// The shared lock directory (else `$VXBROKER_LOCK_DIR`, else the XDG state home).
    #[arg(long = "lock-dir")]
    pub lock_dir: Option<PathBuf>,
    /// The engines file.
    #[arg(long)]
    pub engines: PathBuf,
    /// `{history}` of the engine templates (default `<runtime-dir>/history`).
    #[arg(long = "history-dir")]
    pub history_dir: Option<PathBuf>,
    /// Ring capacity of every master this broker launches.
    #[arg(long, default_value = DEFAULT_RING)]
    pub ring: String,
    /// Claims in owner files beside the sockets, shared by brokers with one runtime
    /// directory (off by default).
    #[arg(long)]
    pub takeover: bool,
    /// Run each launched master in its own transient scope through this wrapper
    /// (`systemd-run`; off by default; `VXBROKER_SCOPE_PROPERTIES`).
    #[arg(long = "scope-wrapper", value_name = "CMD")]
    pub scope_wrapper: Option<std::ffi::OsString>,
}

/// Everything the routes share.
pub(crate) struct App {
    pub(crate) opener: Opener,
    pub(crate) engines: Engines,
    pub(crate) table: EngineTable,
    pub(crate) runtime: PathBuf,
    pub(crate) history: PathBuf,
    pub(crate) bin_dir: PathBuf,
    pub(crate) bin: PathBuf,
    pub(crate) ring: u64,
    pub(crate) claims: claims::Registry,
    pub(crate) viewers: Mutex<HashMap<String, usize>>,
    pub(crate) next_conn: AtomicU64,
    /// One writer of the alias sidecar at a time (load, insert, publish).
    pub(crate) alias_lock: Mutex<()>,
    pub(crate) takeover: bool,
    pub(crate) scopes: Option<crate::scope::Scopes>,
}

enum Listen {
    Tcp(std::net::SocketAddr),
    Unix(PathBuf),
}

fn parse_listen(text: &str) -> Result<Listen> {
    if let Some(path) = text.strip_prefix("unix:") {
        let path = PathBuf::from(path);
        return if path.is_absolute() {
            Ok(Listen::Unix(path))
        } else {
            Err(Rule::ListenSyntax.into())
        };
    }
    match text.parse::<std::net::SocketAddr>() {
        Ok(addr) if addr.ip().is_loopback() => Ok(Listen::Tcp(addr)),
        Ok(_) => Err(Rule::ListenNotLoopback.into()),
        Err(_) => Err(Rule::ListenSyntax.into()),
    }
}

/// A setup failure and the input it is about (the flag and its value), so the message
/// names what to fix; the error itself carries the spec's code and rule.
struct SetupFailure {
    input: String,
    error: BrokerError,
}

fn at(flag: &str, value: impl std::fmt::Display) -> impl FnOnce(BrokerError) -> SetupFailure {
    let input = format!("{flag} {value}");
    move |error| SetupFailure { input, error }
}

fn build(a: &ServeArgs) -> std::result::Result<(Arc<App>, Listen), SetupFailure> {
    let listen = parse_listen(&a.listen).map_err(at("--listen", &a.listen))?;
    let ring = parse_counter(&a.ring, Param::Ring).map_err(at("--ring", &a.ring))?;
    if ring == 0 {
        return Err(at("--ring", &a.ring)(Rule::RingZero.into()));
    }
    let mut engines = engines::load(&a.engines).map_err(at("--engines", a.engines.display()))?;
    if crate::variant::keys() {
        engines.retain_known(crate::variant::known_engine);
    }
    let uid = u64::from(nix::unistd::geteuid().as_raw());
    let lock_dir = lock_dir_from_env(a.lock_dir.as_deref()).map_err(at(
        "--lock-dir",
        a.lock_dir
            .as_deref()
            .map_or("(unset)".into(), |d| d.display().to_string()),
    ))?;
    let locks = LockDir::open(&lock_dir, uid).map_err(at("--lock-dir", lock_dir.display()))?;
    let history = a
        .history_dir
        .clone()
        .unwrap_or_else(|| a.runtime_dir.join("history"));
    for (flag, dir) in [
        ("--runtime-dir", &a.runtime_dir),
        ("--history-dir", &history),
    ] {
        std::fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(dir)
            .map_err(|_| at(flag, dir.display())(BrokerError::new(Rule::RuntimeDir)))?;
        check_private_dir(dir, uid).map_err(at(flag, dir.display()))?;
    }
    let bin = std::env::current_exe()
        .map_err(|_| at("the broker's own executable", "")(Rule::RuntimeDir.into()))?;
    let bin_dir = bin.parent().map(PathBuf::from).unwrap_or_default();
    let app = App {
        opener: Opener::new(a.runtime_dir.clone(), locks),
        table: engines.table(),
        engines,
        runtime: a.runtime_dir.clone(),
        history,
        bin_dir,
        bin,
        ring,
        claims: claims::Registry::default(),
        viewers: Mutex::new(HashMap::new()),
        next_conn: AtomicU64::new(1),
        alias_lock: Mutex::new(()),
        takeover: a.takeover,
        scopes: a.scope_wrapper.clone().map(crate::scope::Scopes::new),
    };
    Ok((Arc::new(app), listen))
}

/// The runtime and history directories hold the masters' sockets (whoever can
/// connect can type into an agent), the claims and the histories: ours alone, no
/// group or other bits, never through a symlink.
fn check_private_dir(dir: &std::path::Path, uid: u64) -> Result<()> {
    use vx_store::safe_fs::{check_dir, DirRule, UnsafeReason};
    let st = nix::sys::stat::lstat(dir).map_err(|_| BrokerError::new(Rule::RuntimeDir))?;
    check_dir(&st, uid, DirRule::Private).map_err(|r| {
        BrokerError::new(match r {
            UnsafeReason::Symlink => Rule::RuntimeDirSymlink,
            UnsafeReason::OtherOwner => Rule::RuntimeDirForeignOwner,
            UnsafeReason::PermissiveMode => Rule::RuntimeDirShared,
            UnsafeReason::WrongType | UnsafeReason::Directory => Rule::RuntimeDirNotDir,
            _ => Rule::RuntimeDir,
        })
    })
}

/// Runs the broker until SIGINT/SIGTERM; returns the exit code.
pub fn run(a: &ServeArgs) -> i32 {
    let (app, listen) = match build(a) {
        Ok(v) => v,
        Err(SetupFailure { input, error }) => {
            eprintln!("vxbroker serve: {input}: {error}");
            return error.code.exit_code();
        }
    };
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(r) => r,
        Err(_) => return 1,
    };
    let listen_text = a.listen.clone();
    runtime.block_on(async move {
        let router = router(app);
        let result = match listen {
            Listen::Tcp(addr) => match tokio::net::TcpListener::bind(addr).await {
                Ok(l) => {
                    if let Ok(local) = l.local_addr() {
                        println!("listening {local}");
                    }
                    axum::serve(l, router)
                        .with_graceful_shutdown(shutdown())
                        .await
                        .map_err(|_| ())
                }
                Err(_) => Err(()),
            },
            Listen::Unix(path) => {
                // A broker socket nobody accepts on is a dead broker's; a live one is
                // another broker, which this one must not displace.
                match probe(&path) {
                    Liveness::Live | Liveness::NotSocket => return listen_error(&listen_text),
                    Liveness::Stale => {
                        let _ = std::fs::remove_file(&path);
                    }
                    Liveness::Absent => {}
                }
                match tokio::net::UnixListener::bind(&path) {
                    Ok(l) => {
                        println!("listening unix:{}", path.display());
                        let served = axum::serve(l, router)
                            .with_graceful_shutdown(shutdown())
                            .await;
                        let _ = std::fs::remove_file(&path);
                        served.map_err(|_| ())
                    }
                    Err(_) => Err(()),
                }
            }
        };
        match result {
            Ok(()) => 0,
            Err(()) => listen_error(&listen_text),
        }
    })
}

fn listen_error(listen: &str) -> i32 {
    let e = BrokerError::new(Rule::ListenBind);
    eprintln!("vxbroker serve: --listen {listen}: {e} (another broker or file is there, or the directory is missing)");
    e.code.exit_code()
}

async fn shutdown() {
    use tokio::signal::unix::{signal, SignalKind};
    let (Ok(mut term), Ok(mut int)) = (
        signal(SignalKind::terminate()),
        signal(SignalKind::interrupt()),
    ) else {
        return std::future::pending().await;
    };
    tokio::select! {
        _ = term.recv() => {}
        _ = int.recv() => {}
    }
}

fn router(app: Arc<App>) -> Router {
    Router::new()
        .route("/ws/term/{engine}/{id}", get(ws::handler))
        .route("/ws/term/{key}", get(ws::handler_key))
        .route("/api/sessions", get(routes::list))
        .route("/api/sessions/{key}/archive", post(routes::archive))
        .with_state(app)
}

/// `{"error":{"code","message","data"?}}` with the HTTP status of the code's class.
pub(crate) fn error_response(e: BrokerError) -> Response {
    let status = match e.code {
        Code::InvalidParams(_) | Code::MalformedFrame | Code::FrameSize => StatusCode::BAD_REQUEST,
        Code::EngineNotFound => StatusCode::NOT_FOUND,
        Code::SidecarCorrupt | Code::SocketExists | Code::NotSocket => StatusCode::CONFLICT,
        Code::SidecarVersion | Code::SidecarSize => StatusCode::UNPROCESSABLE_ENTITY,
        _ => StatusCode::SERVICE_UNAVAILABLE,
    };
    let mut error = json!({"code": e.code.as_str(), "message": e.reason()});
    if let Some(p) = e.code.param() {
        error["data"] = json!({ "param": p });
    }
    (status, Json(json!({ "error": error }))).into_response()
}
