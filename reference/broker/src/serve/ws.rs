//! `GET /ws/term/{engine}/{id}?have&gen&new&cwd&fp&tab&force`: check the request,
//! `open_action`, then bridge the WebSocket to the master's socket. Binary messages
//! carry PTY output (and raw input from the viewer); text messages carry the seed's
//! control frames. Close codes: 4409 BUSY, 4502 retryable spawn failure, 4500 any
//! other refusal after the upgrade, 4503 the master connection was lost (retryable),
//! 1000 when the agent exited.

use std::path::PathBuf;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use axum::extract::ws::{CloseFrame, Message, WebSocket, WebSocketUpgrade};
use axum::extract::{Path, Query, State};
use axum::response::Response;
use futures_util::{SinkExt, StreamExt};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::unix::OwnedReadHalf;
use tokio::net::UnixStream;

use super::{error_response, takeover, App};
use crate::claims::{flag, viewer, Decision, Viewer};
use crate::error::{BrokerError, Code, Param, Result, Rule};
use crate::frames::{self, ClientFrame};
use crate::key::{parse_key, SessionKey};
use crate::master::frame;
use crate::negative::{self, Defect};
use crate::open::{Action, MasterSpec};
use crate::resume::parse_counter;

pub(crate) const CLOSE_BUSY: u16 = 4409;
pub(crate) const CLOSE_SPAWN: u16 = 4502;
pub(crate) const CLOSE_REFUSED: u16 = 4500;
pub(crate) const CLOSE_LOST: u16 = 4503;
const HEARTBEAT: Duration = Duration::from_secs(1);

/// A checked terminal request.
struct Request {
    key: SessionKey,
    physical: SessionKey,
    new: bool,
    have: Option<u64>,
    gen: Option<u64>,
    viewer: Viewer,
    force: bool,
    cwd: Option<PathBuf>,
    /// Shown to other viewers as the holder (`--takeover`); never identity.
    label: String,
}

/// The one value of a query parameter; a repeated one is refused, not guessed.
fn single<'a>(q: &'a [(String, String)], name: &str, param: Param) -> Result<Option<&'a str>> {
    let mut values = q.iter().filter(|(k, _)| k == name).map(|(_, v)| v.as_str());
    let first = values.next();
    if values.next().is_some() {
        return Err(BrokerError::param(Rule::ParamDuplicate, param));
    }
    Ok(first)
}

fn parse_request(app: &App, key: &str, q: &[(String, String)]) -> Result<Request> {
    let new = flag(single(q, "new", Param::New)?, Param::New)?;
    let key = parse_key(key, &app.table, new)?;
    let counter = |name, p| single(q, name, p)?.map(|t| parse_counter(t, p)).transpose();
    let have = counter("have", Param::Have)?;
    let gen = counter("gen", Param::Gen)?;
    let viewer = viewer(single(q, "fp", Param::Fp)?, single(q, "tab", Param::Tab)?)?;
    let force = flag(single(q, "force", Param::Force)?, Param::Force)?;
    let cwd = match single(q, "cwd", Param::Cwd)? {
        Some(c) if c.starts_with('/') && !c.contains('\0') => Some(PathBuf::from(c)),
        Some(_) => return Err(BrokerError::param(Rule::CwdRelative, Param::Cwd)),
        None => None,
    };
    let label = single(q, "label", Param::Label)?
        .unwrap_or_default()
        .to_owned();
    if !crate::owner::is_label(&label) {
        return Err(BrokerError::param(Rule::LabelSyntax, Param::Label));
    }
    let aliases = crate::alias::load(&app.runtime)?;
    let physical = aliases.physical_key(&key).clone();
    Ok(Request {
        key,
        physical,
        new,
        have,
        gen,
        viewer,
        force,
        cwd,
        label,
    })
}

pub(crate) async fn handler(
    ws: WebSocketUpgrade,
    Path((engine, id)): Path<(String, String)>,
    q: Query<Vec<(String, String)>>,
    app: State<Arc<App>>,
) -> Response {
    handler_key(ws, Path(format!("{engine}:{id}")), q, app).await
}

/// The terminal route with the key as one segment (`/ws/term/{key}`, the seed's):
/// a key without its engine (a bare id) is refused as malformed, never taken for
/// an engine's session.
pub(crate) async fn handler_key(
    ws: WebSocketUpgrade,
    Path(key): Path<String>,
    Query(q): Query<Vec<(String, String)>>,
    State(app): State<Arc<App>>,
) -> Response {
    match parse_request(&app, &key, &q) {
        Ok(req) => ws.on_upgrade(move |socket| session(app, req, socket)),
        Err(e) if crate::variant::on() => {
            ws.on_upgrade(move |socket| close(socket, close_refused(), e.code.as_str()))
        }
        Err(e) => error_response(e),
    }
}

fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64)
}

fn spec(app: &App, req: &Request) -> MasterSpec {
    let engine = app
        .engines
        .get(req.key.engine())
        .expect("parse_key checked the engine");
    let bin_dir = app.bin_dir.to_string_lossy();
    let history = app.history.to_string_lossy();
    let cwd = req
        .cwd
        .as_ref()
        .map(|c| c.to_string_lossy().into_owned())
        .unwrap_or_default();
    let vars = crate::engines::Vars {
        bin_dir: &bin_dir,
        id: req.physical.native_id(),
        cwd: &cwd,
        history: &history,
    };
    let argv = if req.new {
        engine.launch_argv(&vars)
    } else {
        engine.resume_argv(&vars)
    };
    MasterSpec {
        program: app.bin.clone(),
        ring: app.ring,
        gen: now_ms(),
        argv,
        cwd: req.cwd.clone(),
        wrapper: Vec::new(),
    }
}

/// The close code of a launch that failed before the master served: 4502, or under
/// the keys variant its own code for a spawn that failed (a launch not refused for
/// its cwd or an orphan socket first, and not through a scope wrapper, whose failure
/// at spawn the seed closes 4502).
fn spawn_close(req: &Request, rule: Rule, scoped: bool) -> u16 {
    let refused_first = rule == Rule::ReapFailed || req.cwd.as_ref().is_some_and(|c| !c.is_dir());
    if crate::variant::keys() && !refused_first && !scoped {
        crate::variant::CLOSE_SPAWN_FAILED
    } else {
        CLOSE_SPAWN
    }
}

/// The close code of a refusal after the upgrade (the pin variant's own).
fn close_refused() -> u16 {
    if crate::variant::on() {
        crate::variant::CLOSE_REFUSED
    } else {
        CLOSE_REFUSED
    }
}

async fn close(mut socket: WebSocket, code: u16, reason: &str) {
    let frame = CloseFrame {
        code,
        reason: reason.into(),
    };
    let _ = socket.send(Message::Close(Some(frame))).await;
}

async fn session(app: Arc<App>, req: Request, socket: WebSocket) {
    let opener = Arc::clone(&app);
    let physical = req.physical.clone();
    let master = spec(&app, &req);
    // The index is read before the launch, so the agent's own new id is the one
    // that appears after it.
    let early = !crate::negative::is(crate::negative::Defect::SnapshotAfterLaunch);
    let pending = if early {
        pending_alias(&app, &req)
    } else {
        None
    };
    let action = tokio::task::spawn_blocking(move || {
        // Only a LAUNCH builds the spec, so only a LAUNCH is scoped (and probes).
        let launch = || MasterSpec {
            wrapper: opener
                .scopes
                .as_ref()
                .and_then(|s| s.prefix(physical.engine(), physical.native_id()))
                .unwrap_or_default(),
            ..master
        };
        opener.opener.open(&physical, launch)
    })
    .await;
    let (found_tx, found_rx) = tokio::sync::mpsc::channel(1);
    match action {
        Ok(Ok(Action::Busy)) => return close(socket, CLOSE_BUSY, "busy").await,
        Ok(Ok(Action::Launch { .. })) => {
            let pending = if early {
                pending
            } else {
                pending_alias(&app, &req)
            };
            if let Some(p) = pending {
                tokio::spawn(super::reconcile::run(Arc::clone(&app), p, found_tx));
            }
        }
        Ok(Ok(Action::Attach)) => {}
        Ok(Err(e)) if e.code == Code::Spawn => {
            return close(
                socket,
                spawn_close(&req, e.rule, app.scopes.is_some()),
                e.code.as_str(),
            )
            .await
        }
        Ok(Err(e)) if e.code == Code::Lock && negative::is(Defect::ResetOnLockError) => {
            // Dropped without a close frame, a line on stderr: what a crashing
            // handler leaves (its traceback).
            eprintln!(
                "vxbroker: the terminal handler crashed: {}",
                e.code.as_str()
            );
            drop(socket);
            return;
        }
        Ok(Err(e)) if e.code == Code::Lock && negative::is(Defect::BusyOnLockError) => {
            return close(socket, CLOSE_BUSY, "busy").await
        }
        Ok(Err(e)) => return close(socket, close_refused(), e.code.as_str()).await,
        Err(_) => return close(socket, close_refused(), "internal.error").await,
    }
    let sock = app.opener.socket_path(&req.physical);
    let Ok(stream) = UnixStream::connect(&sock).await else {
        return close(socket, CLOSE_SPAWN, Code::Master.as_str()).await;
    };
    let physical = req.physical.physical();
    *app.viewers
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .entry(physical.clone())
        .or_default() += 1;
    bridge(&app, &req, &physical, stream, socket, found_rx).await;
    if let Some(n) = app
        .viewers
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .get_mut(&physical)
    {
        *n = n.saturating_sub(1);
    }
}

async fn read_frame(r: &mut OwnedReadHalf) -> Option<(u8, Vec<u8>)> {
    let mut header = [0u8; 5];
    r.read_exact(&mut header).await.ok()?;
    let len = u32::from_be_bytes(header[1..].try_into().ok()?) as usize;
    if len > frame::MAX_FRAME_PAYLOAD {
        return None;
    }
    let mut payload = vec![0u8; len];
    r.read_exact(&mut payload).await.ok()?;
    Some((header[0], payload))
}

/// What a placeholder launch of a `pin = "none"` engine reconciles, if this is one.
fn pending_alias(app: &App, req: &Request) -> Option<super::reconcile::Pending> {
    if !(req.new && req.key.is_placeholder()) {
        return None;
    }
    let engine = app.engines.get(req.key.engine())?;
    let template = engine.index.as_ref()?;
    let bin_dir = app.bin_dir.to_string_lossy();
    let history = app.history.to_string_lossy();
    let cwd = req.cwd.as_ref().map(|c| c.to_string_lossy().into_owned());
    let vars = crate::engines::Vars {
        bin_dir: &bin_dir,
        id: req.key.native_id(),
        cwd: cwd.as_deref().unwrap_or_default(),
        history: &history,
    };
    let index = PathBuf::from(crate::engines::expand(template, &vars));
    let snapshot = super::reconcile::read_index(&index, engine.spec.id, cwd.as_deref());
    Some(super::reconcile::Pending {
        placeholder: req.key.clone(),
        index,
        kind: engine.spec.id,
        cwd,
        snapshot,
    })
}

fn role_frame(owner: bool, holder: Option<&crate::owner::OwnerRecord>) -> String {
    let holder = holder.map(|h| frames::Holder {
        label: &h.label,
        since_ms: h.since_ms,
    });
    frames::role(owner, holder.as_ref())
}

async fn bridge(
    app: &App,
    req: &Request,
    physical: &str,
    stream: UnixStream,
    socket: WebSocket,
    mut found: tokio::sync::mpsc::Receiver<String>,
) {
    let (mut from_master, mut to_master) = stream.into_split();
    // `read_frame` is not cancellation-safe (a frame read across several polls would
    // be cut when another branch of the select below wins, and the stream would lose
    // its framing: a large replay came out as "master lost"). One task reads whole
    // frames; the select takes them from a channel, which is cancellation-safe.
    let (frame_tx, mut frames_rx) = tokio::sync::mpsc::channel(64);
    tokio::spawn(async move {
        while let Some(f) = read_frame(&mut from_master).await {
            if frame_tx.send(f).await.is_err() {
                break;
            }
        }
    });
    let hello = frame::encode(frame::HELLO, &frame::hello(req.have, req.gen));
    if to_master.write_all(&hello).await.is_err() {
        return;
    }
    let (mut tx, mut rx) = socket.split();
    let conn = app.next_conn.fetch_add(1, Ordering::Relaxed);
    let (decision, holder, mut demoted) = if app.takeover {
        // The owner file decides; a claim that cannot be checked is read-only.
        let (d, h) = takeover::claim(
            &app.runtime,
            physical,
            req.viewer,
            &req.label,
            req.force,
            now_ms(),
        )
        .unwrap_or((Decision::Secondary { holder: None }, None));
        (d, h, tokio::sync::watch::channel(false).1)
    } else {
        let (d, rx) = app
            .claims
            .attach(physical, conn, req.viewer, req.force, now_ms());
        (d, None, rx)
    };
    let owner = matches!(decision, Decision::Owner { .. });
    let mut writer = decision.may_write();
    if decision != Decision::LegacyOwner {
        let _ = tx
            .send(Message::Text(role_frame(owner, holder.as_ref()).into()))
            .await;
    }
    let mut beat = tokio::time::interval(HEARTBEAT);
    loop {
        tokio::select! {
            f = frames_rx.recv() => match f {
                Some((frame::OUTPUT, p)) => {
                    if tx.send(Message::Binary(p.into())).await.is_err() { break; }
                }
                Some((frame::SEQ, p)) if p.len() == 16 => {
                    let n = u64::from_be_bytes(p[..8].try_into().expect("eight bytes"));
                    let gen = u64::from_be_bytes(p[8..].try_into().expect("eight bytes"));
                    if tx.send(Message::Text(frames::seq(n, gen).into())).await.is_err() {
                        break;
                    }
                }
                Some((frame::EXIT, _)) => {
                    let close = CloseFrame { code: 1000, reason: "exited".into() };
                    let _ = tx.send(Message::Close(Some(close))).await;
                    break;
                }
                // The master dropped this viewer or went away without an exit:
                // retryable, the client reconnects with `have`.
                None => {
                    let close = CloseFrame { code: CLOSE_LOST, reason: "master_lost".into() };
                    let _ = tx.send(Message::Close(Some(close))).await;
                    break;
                }
                Some(_) => {}
            },
            m = rx.next() => {
                let binary = matches!(m, Some(Ok(Message::Binary(_))));
                let input = match m {
                    None | Some(Err(_)) | Some(Ok(Message::Close(_))) => break,
                    Some(Ok(Message::Binary(b))) => Some(frame::encode(frame::INPUT, &b)),
                    Some(Ok(Message::Text(t))) => match frames::decode_client(t.as_str()) {
                        Ok(ClientFrame::Input(d)) => Some(frame::encode(frame::INPUT, d.as_bytes())),
                        Ok(ClientFrame::Resize { cols, rows }) => {
                            let mut p = cols.to_be_bytes().to_vec();
                            p.extend_from_slice(&rows.to_be_bytes());
                            Some(frame::encode(frame::RESIZE, &p))
                        }
                        Ok(ClientFrame::Ping) => {
                            let _ = tx.send(Message::Text(frames::pong().into())).await;
                            None
                        }
                        // A malformed frame is dropped; the stream stays.
                        Err(_) => None,
                    },
                    Some(Ok(_)) => None,
                };
                // The gate: a secondary's input and resizes never reach the master.
                let gate_open = writer
                    || crate::negative::is(crate::negative::Defect::ForwardSecondary)
                    || (binary && crate::negative::is(crate::negative::Defect::GateTextOnly));
                if let (Some(bytes), true) = (input, gate_open) {
                    if to_master.write_all(&bytes).await.is_err() { break; }
                }
            }
            Some(sid) = found.recv() => {
                let _ = tx.send(Message::Text(frames::id(&sid).into())).await;
            }
            Ok(()) = demoted.changed() => {
                if *demoted.borrow() && writer && owner {
                    writer = false;
                    let _ = tx.send(Message::Text(frames::role(false, None).into())).await;
                }
            }
            _ = beat.tick() => {
                if owner && writer && app.takeover {
                    let Viewer::Tab(key) = req.viewer else { continue };
                    match takeover::heartbeat(&app.runtime, physical, key, now_ms()) {
                        Ok(None) => {}
                        // Taken over (possibly by another broker): read-only in place.
                        outcome => {
                            writer = false;
                            let holder = outcome.ok().flatten();
                            let _ = tx.send(Message::Text(role_frame(false, holder.as_ref()).into())).await;
                        }
                    }
                } else if owner && writer {
                    app.claims.beat(physical, conn, now_ms());
                }
            }
        }
    }
    app.claims.detach(physical, conn);
}
