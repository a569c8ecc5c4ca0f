//! `vx_broker::client`: the viewer side of the terminal route, the suite's viewer.
//!
//! It tracks the absolute offset it has consumed (`have`) and the master generation
//! (`gen`, from `seq` frames) and sends both on every reconnect, so a transient drop
//! resumes by delta and never blanks. `new=1` goes only on the first successful
//! connect (a reconnect must attach or resume, never launch a second new session),
//! an `id` frame switches it to the real id, and `force=1` is sent only by
//! [`Client::take_over`], never by [`Client::connect`] (the seed's one literal MUST).

use std::path::PathBuf;

use futures_util::{SinkExt, StreamExt};
use serde_json::Value;
use tokio::net::{TcpStream, UnixStream};
use tokio_tungstenite::tungstenite::protocol::Message;
use tokio_tungstenite::tungstenite::Error as WsError;
use tokio_tungstenite::{client_async, MaybeTlsStream, WebSocketStream};

use crate::frames::{self, ClientFrame};

/// Where the broker listens.
#[derive(Clone, Debug)]
pub enum Transport {
    Unix(PathBuf),
    /// `host:port` (loopback).
    Tcp(String),
}

/// The session a client views and who it is.
#[derive(Clone, Debug)]
pub struct Options {
    pub transport: Transport,
    pub engine: String,
    pub id: String,
    pub new: bool,
    pub cwd: Option<String>,
    /// `fp` and `tab`; `None` is a legacy viewer.
    pub claim: Option<(String, String)>,
}

/// What the broker sent.
#[derive(Clone, Debug, PartialEq)]
pub enum Event {
    Output(Vec<u8>),
    Seq {
        n: u64,
        gen: Option<u64>,
    },
    Role {
        owner: bool,
        holder: Option<Value>,
    },
    Id(String),
    Pong,
    /// The connection ended (close code, if one was sent).
    Closed(Option<u16>),
}

/// Why a connect failed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ClientError {
    /// No broker answered.
    Connect,
    /// The broker refused the request before the upgrade (`error.code` of its body).
    Refused { status: u16, code: Option<String> },
    /// The connection is closed; call [`Client::connect`].
    NotConnected,
}

enum Ws {
    Unix(WebSocketStream<UnixStream>),
    Tcp(WebSocketStream<MaybeTlsStream<TcpStream>>),
}

pub struct Client {
    opts: Options,
    ws: Option<Ws>,
    have: u64,
    gen: Option<u64>,
    connected_once: bool,
    last_path: String,
}

fn refused(e: WsError) -> ClientError {
    match e {
        WsError::Http(resp) => {
            let code = resp
                .body()
                .as_deref()
                .and_then(|b| serde_json::from_slice::<Value>(b).ok())
                .and_then(|v| v["error"]["code"].as_str().map(String::from));
            ClientError::Refused {
                status: resp.status().as_u16(),
                code,
            }
        }
        _ => ClientError::Connect,
    }
}

impl Client {
    pub fn new(opts: Options) -> Client {
        Client {
            opts,
            ws: None,
            have: 0,
            gen: None,
            connected_once: false,
            last_path: String::new(),
        }
    }

    /// Bytes consumed on the current master.
    pub fn have(&self) -> u64 {
        self.have
    }

    pub fn gen(&self) -> Option<u64> {
        self.gen
    }

    /// The request path of the last connect attempt.
    pub fn last_path(&self) -> &str {
        &self.last_path
    }

    /// The path of the next connect.
    fn path(&self, force: bool) -> String {
        let mut q = form_urlencoded::Serializer::new(String::new());
        if self.have > 0 {
            q.append_pair("have", &self.have.to_string());
        }
        if let Some(g) = self.gen {
            q.append_pair("gen", &g.to_string());
        }
        if self.opts.new && !self.connected_once {
            q.append_pair("new", "1");
        }
        if let Some(cwd) = &self.opts.cwd {
            q.append_pair("cwd", cwd);
        }
        if let Some((fp, tab)) = &self.opts.claim {
            q.append_pair("fp", fp).append_pair("tab", tab);
        }
        if force {
            q.append_pair("force", "1");
        }
        let query = q.finish();
        let base = format!("/ws/term/{}/{}", self.opts.engine, self.opts.id);
        if query.is_empty() {
            base
        } else {
            format!("{base}?{query}")
        }
    }

    /// Connects or reconnects (automatic): never with `force=1`.
    pub async fn connect(&mut self) -> Result<(), ClientError> {
        self.open(false).await
    }

    /// The deliberate take-over: reconnects once with `force=1`.
    pub async fn take_over(&mut self) -> Result<(), ClientError> {
        self.open(true).await
    }

    /// Drops the connection as a network failure would.
    pub fn drop_connection(&mut self) {
        self.ws = None;
    }

    async fn open(&mut self, force: bool) -> Result<(), ClientError> {
        self.ws = None;
        let path = self.path(force);
        self.last_path = path.clone();
        let url = format!("ws://localhost{path}");
        let ws = match &self.opts.transport {
            Transport::Unix(sock) => {
                let stream = UnixStream::connect(sock)
                    .await
                    .map_err(|_| ClientError::Connect)?;
                Ws::Unix(client_async(url, stream).await.map_err(refused)?.0)
            }
            Transport::Tcp(addr) => {
                let url = format!("ws://{addr}{path}");
                Ws::Tcp(
                    tokio_tungstenite::connect_async(url)
                        .await
                        .map_err(refused)?
                        .0,
                )
            }
        };
        self.ws = Some(ws);
        self.connected_once = true;
        Ok(())
    }

    async fn send(&mut self, msg: Message) -> Result<(), ClientError> {
        let sent = match self.ws.as_mut().ok_or(ClientError::NotConnected)? {
            Ws::Unix(w) => w.send(msg).await,
            Ws::Tcp(w) => w.send(msg).await,
        };
        sent.map_err(|_| {
            self.ws = None;
            ClientError::NotConnected
        })
    }

    pub async fn input(&mut self, text: &str) -> Result<(), ClientError> {
        let frame = frames::encode_client(&ClientFrame::Input(text.into()));
        self.send(Message::Text(frame.into())).await
    }

    pub async fn resize(&mut self, cols: u16, rows: u16) -> Result<(), ClientError> {
        let frame = frames::encode_client(&ClientFrame::Resize { cols, rows });
        self.send(Message::Text(frame.into())).await
    }

    pub async fn ping(&mut self) -> Result<(), ClientError> {
        self.send(Message::Text(
            frames::encode_client(&ClientFrame::Ping).into(),
        ))
        .await
    }

    /// The next event; output advances `have`, `seq` sets it (and `gen`), `id`
    /// switches the client to the real id for later reconnects.
    pub async fn next(&mut self) -> Event {
        loop {
            let msg = match self.ws.as_mut() {
                None => return Event::Closed(None),
                Some(Ws::Unix(w)) => w.next().await,
                Some(Ws::Tcp(w)) => w.next().await,
            };
            match msg {
                Some(Ok(Message::Binary(b))) => {
                    self.have += b.len() as u64;
                    return Event::Output(b.to_vec());
                }
                Some(Ok(Message::Text(t))) => {
                    let Ok(v) = serde_json::from_str::<Value>(t.as_str()) else {
                        continue;
                    };
                    match v["t"].as_str() {
                        Some("seq") => {
                            let (Some(n), gen) = (v["n"].as_u64(), v["gen"].as_u64()) else {
                                continue;
                            };
                            self.have = n;
                            if gen.is_some() {
                                self.gen = gen;
                            }
                            return Event::Seq { n, gen };
                        }
                        Some("role") => {
                            return Event::Role {
                                owner: v["role"] == "owner",
                                holder: v.get("holder").cloned(),
                            }
                        }
                        Some("id") => {
                            let Some(sid) = v["sid"].as_str() else {
                                continue;
                            };
                            if let Some((_, id)) = sid.split_once(':') {
                                self.opts.id = id.to_owned();
                            }
                            return Event::Id(sid.to_owned());
                        }
                        Some("pong") => return Event::Pong,
                        _ => continue,
                    }
                }
                Some(Ok(Message::Close(f))) => {
                    self.ws = None;
                    return Event::Closed(f.map(|f| u16::from(f.code)));
                }
                Some(Ok(_)) => continue,
                Some(Err(_)) | None => {
                    self.ws = None;
                    return Event::Closed(None);
                }
            }
        }
    }
}
