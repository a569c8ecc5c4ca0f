//! The CLI's client side: one connection, optional `auth.login`, one request.
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
    let local = |e: ApiError| e.to_json();
    let mut stream = UnixStream::connect(socket).map_err(|_| local(no_daemon()))?;
    let mut out = Vec::new();
    if let Some(t) = token {
        let mut p = Map::new();
        p.insert("token".into(), json!(t));
        out.extend(wire::encode_request(0, "auth.login", &p));
    }
    out.extend(wire::encode_request(1, verb, &params));
    stream.write_all(&out).map_err(|_| local(no_daemon()))?;
    let mut reader = BufReader::new(stream);
    let mut replies_left = if token.is_some() { 2 } else { 1 };
    let mut line = String::new();
    loop {
        line.clear();
        let n = reader
            .read_line(&mut line)
            .map_err(|_| local(no_daemon()))?;
        if n == 0 {
            return Err(local(no_daemon()));
        }
        let reply: Value = serde_json::from_str(&line).map_err(|_| local(ApiError::internal()))?;
        replies_left -= 1;
        if let Some(err) = reply.get("error") {
            return Err(err.clone());
        }
        if replies_left == 0 {
            return reply
                .get("ok")
                .cloned()
                .ok_or_else(|| local(ApiError::internal()));
        }
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
