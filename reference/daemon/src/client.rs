//! The CLI's client side: one connection, optional `auth.login`, then requests in
//! turn (one for a CLI call; the workspace clients keep theirs for several).
//! Blocking std I/O: a CLI call is two frames and needs no runtime.

use crate::errors::{ApiError, ErrorCode};
use crate::paths::owner_path;
use crate::wire;
use serde_json::{json, Map, Value};
use std::io::{BufRead as _, BufReader, Write as _};
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};

/// `VENOMX_TOKEN`: unset or empty is no token (`unknown`); `@owner` reads
/// `<socket>.owner`; anything else is the token itself.
pub fn token_from_env(socket: &Path) -> Result<Option<String>, ApiError> {
    match std::env::var("VENOMX_TOKEN") {
        Err(_) => Ok(None),
        Ok(t) if t.is_empty() => Ok(None),
        Ok(t) if t == "@owner" => std::fs::read_to_string(owner_path(socket))
            .map(|s| Some(s.trim().to_string()))
            .map_err(|_| ApiError::new(ErrorCode::OwnerToken, "owner token file cannot be read")),
        Ok(t) => Ok(Some(t)),
    }
}

/// The socket (`--socket`, then `VENOMX_SOCKET`, then `$XDG_RUNTIME_DIR/venomx/default.sock`)
/// and the token (`VENOMX_TOKEN`) of a CLI call.
pub fn target(socket_flag: Option<&Path>) -> Result<(PathBuf, Option<String>), ApiError> {
    let socket = crate::paths::select_socket(socket_flag).map_err(|_| {
        ApiError::new(
            ErrorCode::Daemon,
            "no socket path: give --socket, VENOMX_SOCKET or XDG_RUNTIME_DIR",
        )
    })?;
    let token = token_from_env(&socket)?;
    Ok((socket, token))
}

fn no_daemon() -> ApiError {
    ApiError::new(ErrorCode::Daemon, "no daemon answers on the socket")
}

/// Sends `verb` with `params`, authenticating first when a token is given. An error
/// is the wire's `{"code","message","data"}` object, from the daemon or made here.
pub fn call(
    socket: &Path,
    token: Option<&str>,
    verb: &str,
    params: Map<String, Value>,
) -> Result<Value, Value> {
    call_inner(socket, token, verb, params)
}

fn call_inner(
    socket: &Path,
    token: Option<&str>,
    verb: &str,
    params: Map<String, Value>,
) -> Result<Value, Value> {
    Connection::open(socket, token)?.call(verb, params)
}

/// One authenticated connection for several requests in turn: what the daemon binds
/// to a connection (a one-shot `session.created/v1/<token>` result) is read on it.
pub struct Connection {
    reader: BufReader<UnixStream>,
    writer: UnixStream,
    next_id: u64,
}

impl Connection {
    /// Connects and, when a token is given, logs in (its error is the call's).
    pub fn open(socket: &Path, token: Option<&str>) -> Result<Connection, Value> {
        let local = |e: ApiError| e.to_json();
        let writer = UnixStream::connect(socket).map_err(|_| local(no_daemon()))?;
        let reader = BufReader::new(writer.try_clone().map_err(|_| local(no_daemon()))?);
        let mut c = Connection {
            reader,
            writer,
            next_id: 0,
        };
        if let Some(t) = token {
            let mut p = Map::new();
            p.insert("token".into(), json!(t));
            c.call("auth.login", p)?;
        }
        Ok(c)
    }

    /// Sends one request and reads its reply: the `ok` object or the wire's error.
    pub fn call(&mut self, verb: &str, params: Map<String, Value>) -> Result<Value, Value> {
        let local = |e: ApiError| e.to_json();
        let id = self.next_id;
        self.next_id += 1;
        self.writer
            .write_all(&wire::encode_request(id, verb, &params))
            .map_err(|_| local(no_daemon()))?;
        let mut line = String::new();
        let n = self
            .reader
            .read_line(&mut line)
            .map_err(|_| local(no_daemon()))?;
        if n == 0 {
            return Err(local(no_daemon()));
        }
        let reply: Value = serde_json::from_str(&line).map_err(|_| local(ApiError::internal()))?;
        if let Some(err) = reply.get("error") {
            return Err(err.clone());
        }
        reply
            .get("ok")
            .cloned()
            .ok_or_else(|| local(ApiError::internal()))
    }
}

/// A verb's params from its CLI flags (the manifest's param table decides each
/// flag's kind); a JSON flag must be strict JSON.
pub(crate) fn params_from(
    verb: &crate::manifest::Verb,
    args: &clap::ArgMatches,
) -> Result<serde_json::Map<String, serde_json::Value>, crate::errors::ApiError> {
    let mut params = serde_json::Map::new();
    for p in verb.params {
        let value = match p.kind {
            crate::manifest::ParamKind::String => args
                .get_one::<String>(p.name)
                .map(|s| serde_json::Value::String(s.clone())),
            crate::manifest::ParamKind::Integer => args
                .get_one::<i64>(p.name)
                .map(|n| serde_json::Value::from(*n)),
            crate::manifest::ParamKind::Boolean => args
                .get_one::<bool>(p.name)
                .map(|b| serde_json::Value::Bool(*b)),
            crate::manifest::ParamKind::Json => match args.get_one::<String>(p.name) {
                None => None,
                Some(text) => Some(crate::strict_json::parse_strict(text.as_bytes()).map_err(
                    |_| crate::errors::ApiError::param(p.name, "flag value is not strict JSON"),
                )?),
            },
        };
        if let Some(v) = value {
            params.insert(p.name.to_string(), v);
        }
    }
    Ok(params)
}
