//! The suite's viewer of a broker: a real WebSocket client (tungstenite, through
//! tokio-tungstenite's re-export, used blocking because step bodies run on blocking
//! threads) over the broker's Unix socket or loopback TCP port (the profile's
//! `listen`), and the two plain HTTP routes (session list, retire) with `httparse`
//! reading the reply. Every read is bounded.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::os::unix::net::UnixStream;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use serde_json::Value;
use tokio_tungstenite::tungstenite::protocol::frame::coding::CloseCode;
use tokio_tungstenite::tungstenite::{self, Message, WebSocket};

/// How long one read of a viewer waits before the pump looks at its deadline.
const READ_SLICE: Duration = Duration::from_millis(25);
/// Largest HTTP reply the suite reads.
const MAX_REPLY: usize = 1 << 20;

/// The kit's input frame; `{data}` is the typed text as a JSON string.
pub const INPUT_FRAME: &str = r#"{"t":"i","d":{data}}"#;
/// The kit's resize frame; `{cols}` and `{rows}` are numbers.
pub const RESIZE_FRAME: &str = r#"{"t":"r","cols":{cols},"rows":{rows}}"#;

/// The profile's own spelling of a viewer frame (`[single_writer] input_frame`,
/// `resize_frame`), else the kit's.
fn frame_template(key: &str, kit: &str) -> String {
    crate::profile::try_context()
        .and_then(|c| c.profile.single_writer.as_ref())
        .and_then(|t| t.get(key))
        .and_then(|v| v.as_str())
        .unwrap_or(kit)
        .to_string()
}

/// Why an open did not become a stream.
#[derive(Debug)]
pub enum Refused {
    /// The broker answered the upgrade with an HTTP error: status and JSON body.
    Http(u16, Value),
    /// The socket or the handshake failed.
    Transport(String),
}

impl std::fmt::Display for Refused {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Refused::Http(status, body) => write!(f, "HTTP {status}: {body}"),
            Refused::Transport(e) => write!(f, "the connection failed: {e}"),
        }
    }
}

/// Where a broker listens.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Endpoint {
    Unix(PathBuf),
    /// A loopback address.
    Tcp(SocketAddr),
}

/// A loopback connection to `to`, refused when the kernel made it to itself: while
/// nothing listens on a port in the ephemeral range, a connect can be given that same
/// port as its own and meet itself (TCP simultaneous open), which would read as "the
/// broker listens" before the broker has even started.
fn connect_tcp(to: &SocketAddr) -> std::io::Result<TcpStream> {
    refuse_self_connection(TcpStream::connect(to)?, to)
}

fn refuse_self_connection(s: TcpStream, to: &SocketAddr) -> std::io::Result<TcpStream> {
    if s.local_addr()? == *to {
        return Err(std::io::Error::new(
            std::io::ErrorKind::ConnectionRefused,
            format!("{to}: the connection met itself; nothing listens there"),
        ));
    }
    Ok(s)
}

/// One connection to a broker.
pub enum Conn {
    Unix(UnixStream),
    Tcp(TcpStream),
}

impl Endpoint {
    pub fn connect(&self) -> std::io::Result<Conn> {
        match self {
            Endpoint::Unix(p) => UnixStream::connect(p).map(Conn::Unix),
            Endpoint::Tcp(a) => connect_tcp(a).map(Conn::Tcp),
        }
    }

    /// The authority a request names (`Host`).
    fn host(&self) -> String {
        match self {
            Endpoint::Unix(_) => "localhost".into(),
            Endpoint::Tcp(a) => a.to_string(),
        }
    }
}

impl std::fmt::Display for Endpoint {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Endpoint::Unix(p) => write!(f, "unix:{}", p.display()),
            Endpoint::Tcp(a) => write!(f, "tcp:{a}"),
        }
    }
}

impl Conn {
    pub fn set_read_timeout(&self, d: Option<Duration>) -> std::io::Result<()> {
        match self {
            Conn::Unix(s) => s.set_read_timeout(d),
            Conn::Tcp(s) => s.set_read_timeout(d),
        }
    }
}

/// Runs `call` again while a signal interrupts it (EINTR). The suite's process gets
/// signals all the time (children exiting), and the kernel never restarts a read on a
/// socket with a receive timeout, which every viewer's socket has, whatever the
/// handler's `SA_RESTART`: left to tungstenite, an interrupted handshake read refused
/// a viewer ("Interrupted system call") with the broker doing nothing wrong.
pub fn restarting<T>(mut call: impl FnMut() -> std::io::Result<T>) -> std::io::Result<T> {
    loop {
        match call() {
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            other => return other,
        }
    }
}

impl Read for Conn {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        restarting(|| match self {
            Conn::Unix(s) => s.read(buf),
            Conn::Tcp(s) => s.read(buf),
        })
    }
}

impl Write for Conn {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        restarting(|| match self {
            Conn::Unix(s) => s.write(buf),
            Conn::Tcp(s) => s.write(buf),
        })
    }
    fn flush(&mut self) -> std::io::Result<()> {
        match self {
            Conn::Unix(s) => s.flush(),
            Conn::Tcp(s) => s.flush(),
        }
    }
}

/// Whether a read error leaves the connection as it was: the read slice ran out. (A
/// signal's EINTR never gets here: [`Conn`] makes the call again.)
fn read_again(e: &std::io::Error) -> bool {
    matches!(
        e.kind(),
        std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
    )
}

/// What one viewer has seen so far.
pub struct Viewer {
    ws: WebSocket<Conn>,
    /// PTY output (binary messages), in order.
    pub output: Vec<u8>,
    /// Control frames (text messages), in order, each with the output length when it
    /// arrived.
    pub texts: Vec<(usize, Value)>,
    /// The close code, once the broker closed (1006 when no close frame came).
    pub close: Option<u16>,
    /// How the connection ended without a close frame (a reset, an end of stream, a
    /// protocol error): its own outcome, never a close code a pin can name.
    pub broken: Option<String>,
}

impl Viewer {
    /// Opens `path_and_query` (e.g. `/ws/term/claude/<id>?have=3`) on the broker's
    /// endpoint.
    pub fn open(at: &Endpoint, path_and_query: &str) -> Result<Viewer, Refused> {
        let stream = at
            .connect()
            .map_err(|e| Refused::Transport(e.to_string()))?;
        stream
            .set_read_timeout(Some(Duration::from_secs(10)))
            .map_err(|e| Refused::Transport(e.to_string()))?;
        let url = format!("ws://{}{path_and_query}", at.host());
        crate::evidence::frame(format!("→ GET {path_and_query} (WebSocket upgrade)"));
        match tungstenite::client(url.as_str(), stream) {
            Ok((ws, _)) => {
                ws.get_ref()
                    .set_read_timeout(Some(READ_SLICE))
                    .map_err(|e| Refused::Transport(e.to_string()))?;
                Ok(Viewer {
                    ws,
                    output: Vec::new(),
                    texts: Vec::new(),
                    close: None,
                    broken: None,
                })
            }
            Err(tungstenite::HandshakeError::Failure(tungstenite::Error::Http(r))) => {
                let body = r
                    .body()
                    .as_deref()
                    .and_then(|b| serde_json::from_slice(b).ok())
                    .unwrap_or(Value::Null);
                crate::evidence::frame(format!("← HTTP {} {body}", r.status().as_u16()));
                Err(Refused::Http(r.status().as_u16(), body))
            }
            Err(e) => Err(Refused::Transport(e.to_string())),
        }
    }

    /// Reads until `done` holds, the broker closes, or `limit` passes; whether `done`
    /// held.
    pub fn pump(&mut self, limit: Duration, mut done: impl FnMut(&Viewer) -> bool) -> bool {
        let until = Instant::now() + limit;
        loop {
            if done(self) {
                return true;
            }
            if self.close.is_some() || Instant::now() >= until {
                return done(self);
            }
            match self.ws.read() {
                Ok(Message::Binary(b)) => self.output.extend_from_slice(&b),
                Ok(Message::Text(t)) => {
                    crate::evidence::frame(format!("← text {}", t.as_str()));
                    let v =
                        serde_json::from_str(t.as_str()).unwrap_or(Value::String(t.to_string()));
                    self.texts.push((self.output.len(), v));
                }
                Ok(Message::Close(f)) => {
                    self.close = Some(f.map_or(1005, |f| u16::from(f.code)));
                    crate::evidence::frame(format!("← close {:?}", self.close));
                    self.answer_close();
                }
                Ok(_) => {}
                // The read slice ran out; the connection is fine.
                Err(tungstenite::Error::Io(e)) if read_again(&e) => {}
                Err(e) => {
                    // No close frame came: the report says what the transport saw.
                    crate::evidence::frame(format!("← no close frame: {e}"));
                    self.broke(e.to_string());
                }
            }
        }
    }

    /// Completes the closing handshake the broker started (RFC 6455 §5.5.1: an
    /// endpoint that receives a Close frame sends one in response "as soon as
    /// practical"). tungstenite queues the reply and sends it only on the next read,
    /// write or flush, which a pump that stops at the close never makes: a broker
    /// whose handler waits for the reply before it ends (and releases what it holds)
    /// would wait for the suite's viewer to be dropped.
    fn answer_close(&mut self) {
        match self.ws.flush() {
            Ok(()) => crate::evidence::frame("→ close (the reply)"),
            Err(e) => crate::evidence::frame(format!("→ close reply not sent: {e}")),
        }
    }

    /// The connection ended without a close frame.
    fn broke(&mut self, how: String) {
        if self.close.is_none() {
            self.broken = Some(how);
            self.close = Some(1006);
        }
    }

    /// The close code the broker sent in a close frame; `None` while open, or when
    /// the connection ended without one (see [`Viewer::broken`]).
    pub fn close_frame_code(&self) -> Option<u16> {
        self.close.filter(|_| self.broken.is_none())
    }

    /// How the viewer ended, in words for a report: a close code, or the broken
    /// connection and what the transport said.
    pub fn ending(&self) -> String {
        match (&self.broken, self.close) {
            (Some(how), _) => format!("the connection ended without a close frame ({how})"),
            (None, Some(code)) => format!("close code {code}"),
            (None, None) => "still open".into(),
        }
    }

    /// Reads whatever arrives for `d`.
    pub fn settle(&mut self, d: Duration) {
        self.pump(d, |_| false);
    }

    fn send(&mut self, m: Message) {
        if self.close.is_some() {
            return;
        }
        if let Err(e) = self.ws.send(m) {
            self.broke(e.to_string());
        }
    }

    /// One input frame: the kit's `{"t":"i","d":…}`, or the profile's
    /// `[single_writer] input_frame` (the seed names an "i" frame, not its members).
    pub fn input(&mut self, text: &str) {
        let data = serde_json::Value::String(text.to_string()).to_string();
        let frame = frame_template("input_frame", INPUT_FRAME).replace("{data}", &data);
        self.send(Message::Text(frame.into()));
    }

    /// Raw input: one binary message (the seed's raw-byte frame).
    pub fn raw_input(&mut self, bytes: &[u8]) {
        self.send(Message::Binary(bytes.to_vec().into()));
    }

    /// One resize frame: the kit's `{"t":"r","cols","rows"}`, or the profile's
    /// `[single_writer] resize_frame`.
    pub fn resize(&mut self, cols: u16, rows: u16) {
        let frame = frame_template("resize_frame", RESIZE_FRAME)
            .replace("{cols}", &cols.to_string())
            .replace("{rows}", &rows.to_string());
        self.send(Message::Text(frame.into()));
    }

    /// Closes from the viewer's side (a tab closing, a transient drop).
    pub fn close_now(mut self) {
        let _ = self.ws.close(Some(tungstenite::protocol::CloseFrame {
            code: CloseCode::Normal,
            reason: "".into(),
        }));
        let until = Instant::now() + Duration::from_millis(500);
        while Instant::now() < until {
            match self.ws.read() {
                Ok(_) => {}
                Err(tungstenite::Error::Io(e)) if read_again(&e) => {}
                Err(_) => break,
            }
        }
    }

    /// The first `seq` frame and the output length when it arrived (where a
    /// non-delta attach's replay ends).
    pub fn first_seq(&self) -> Option<(usize, &Value)> {
        self.texts
            .iter()
            .find(|(_, v)| v["t"] == "seq")
            .map(|(at, v)| (*at, v))
    }

    /// The control frames of type `t`.
    pub fn frames(&self, t: &str) -> Vec<&Value> {
        self.texts
            .iter()
            .filter(|(_, v)| v["t"] == t)
            .map(|(_, v)| v)
            .collect()
    }
}

/// One HTTP/1.1 request to the broker: status and JSON body.
pub fn http(at: &Endpoint, method: &str, path: &str) -> Result<(u16, Value), String> {
    let mut s = at.connect().map_err(|e| e.to_string())?;
    s.set_read_timeout(Some(Duration::from_secs(10)))
        .map_err(|e| e.to_string())?;
    let req = format!(
        "{method} {path} HTTP/1.1\r\nHost: {}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n",
        at.host()
    );
    s.write_all(req.as_bytes()).map_err(|e| e.to_string())?;
    let mut reply = Vec::new();
    s.take(MAX_REPLY as u64)
        .read_to_end(&mut reply)
        .map_err(|e| e.to_string())?;
    let mut headers = [httparse::EMPTY_HEADER; 32];
    let mut r = httparse::Response::new(&mut headers);
    let head = match r.parse(&reply).map_err(|e| e.to_string())? {
        httparse::Status::Complete(n) => n,
        httparse::Status::Partial => return Err("a partial HTTP reply".into()),
    };
    let chunked = r.headers.iter().any(|h| {
        h.name.eq_ignore_ascii_case("transfer-encoding")
            && String::from_utf8_lossy(h.value).contains("chunked")
    });
    let status = r.code.unwrap_or(0);
    let body = if chunked {
        dechunk(&reply[head..])?
    } else {
        reply[head..].to_vec()
    };
    let v = serde_json::from_slice(&body).map_err(|_| "the reply is not JSON".to_string())?;
    Ok((status, v))
}

fn dechunk(mut b: &[u8]) -> Result<Vec<u8>, String> {
    let mut out = Vec::new();
    loop {
        match httparse::parse_chunk_size(b).map_err(|_| "a bad chunk".to_string())? {
            httparse::Status::Complete((at, 0)) => {
                let _ = at;
                return Ok(out);
            }
            httparse::Status::Complete((at, n)) => {
                let n = usize::try_from(n).map_err(|_| "a huge chunk".to_string())?;
                let end = at.checked_add(n).filter(|e| *e <= b.len());
                let end = end.ok_or("a short chunk")?;
                out.extend_from_slice(&b[at..end]);
                b = b.get(end + 2..).unwrap_or_default();
            }
            httparse::Status::Partial => return Err("a partial chunk".into()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use nix::sys::socket::{bind, connect, socket, AddressFamily, SockFlag, SockType, SockaddrIn};

    /// A socket bound to a port nobody listens on, then connected to that same port:
    /// the simultaneous open a connect loop can stumble into by chance.
    fn self_connected() -> (TcpStream, SocketAddr) {
        let fd = socket(
            AddressFamily::Inet,
            SockType::Stream,
            SockFlag::empty(),
            None,
        )
        .unwrap();
        let port = std::net::TcpListener::bind(("127.0.0.1", 0))
            .and_then(|l| l.local_addr())
            .unwrap()
            .port();
        let at = SockaddrIn::new(127, 0, 0, 1, port);
        bind(std::os::fd::AsRawFd::as_raw_fd(&fd), &at).unwrap();
        connect(std::os::fd::AsRawFd::as_raw_fd(&fd), &at).unwrap();
        (
            TcpStream::from(fd),
            SocketAddr::from(([127, 0, 0, 1], port)),
        )
    }

    #[test]
    fn a_connection_that_met_itself_is_refused() {
        let (s, to) = self_connected();
        assert_eq!(s.peer_addr().unwrap(), to, "the socket did not meet itself");
        let e = refuse_self_connection(s, &to).unwrap_err();
        assert_eq!(e.kind(), std::io::ErrorKind::ConnectionRefused);
    }

    #[test]
    fn a_read_slice_running_out_is_tried_again_and_a_reset_is_not() {
        use std::io::{Error, ErrorKind};
        for kind in [ErrorKind::WouldBlock, ErrorKind::TimedOut] {
            assert!(read_again(&Error::from(kind)), "{kind:?}");
        }
        for kind in [ErrorKind::ConnectionReset, ErrorKind::UnexpectedEof] {
            assert!(!read_again(&Error::from(kind)), "{kind:?}");
        }
    }

    #[test]
    fn an_interrupted_call_is_made_again_and_other_errors_are_returned() {
        use std::io::{Error, ErrorKind};
        let mut interruptions = 2;
        let got = restarting(|| {
            if interruptions > 0 {
                interruptions -= 1;
                Err(Error::from(ErrorKind::Interrupted))
            } else {
                Ok(7)
            }
        });
        assert_eq!(got.unwrap(), 7);
        assert_eq!(interruptions, 0);
        let mut calls = 0;
        let got: std::io::Result<()> = restarting(|| {
            calls += 1;
            Err(Error::from(ErrorKind::ConnectionReset))
        });
        assert_eq!(got.unwrap_err().kind(), ErrorKind::ConnectionReset);
        assert_eq!(calls, 1);
    }

    /// A broker stand-in on a Unix socket: accepts one WebSocket and runs `then` on
    /// it on a thread; the endpoint to open.
    fn stand_in<R: Send + 'static>(
        then: impl FnOnce(WebSocket<UnixStream>) -> R + Send + 'static,
    ) -> (tempfile::TempDir, Endpoint, std::thread::JoinHandle<R>) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("b.sock");
        let l = std::os::unix::net::UnixListener::bind(&path).unwrap();
        let t = std::thread::spawn(move || {
            let (s, _) = l.accept().unwrap();
            s.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
            then(tungstenite::accept(s).unwrap())
        });
        (dir, Endpoint::Unix(path), t)
    }

    #[test]
    fn a_close_frame_is_answered_while_the_viewer_is_still_held() {
        let (_dir, at, broker) = stand_in(|mut ws| {
            ws.close(Some(tungstenite::protocol::CloseFrame {
                code: CloseCode::Library(4409),
                reason: "busy".into(),
            }))
            .unwrap();
            // What a broker whose handler waits for the reply sees: the viewer's
            // answer, or (unanswered) the read timing out.
            loop {
                match ws.read() {
                    Ok(Message::Close(_)) | Err(tungstenite::Error::ConnectionClosed) => {
                        return Ok(())
                    }
                    Ok(_) => {}
                    Err(e) => return Err(e.to_string()),
                }
            }
        });
        let mut v = Viewer::open(&at, "/ws/term/claude/x").unwrap();
        assert!(v.pump(Duration::from_secs(5), |v| v.close.is_some()));
        assert_eq!(v.close_frame_code(), Some(4409));
        assert!(v.broken.is_none(), "{:?}", v.broken);
        // The viewer is not dropped yet: the broker got its reply anyway.
        assert_eq!(broker.join().unwrap(), Ok(()));
        drop(v);
    }

    #[test]
    fn a_connection_dropped_without_a_close_frame_is_broken_not_a_code() {
        let (_dir, at, broker) = stand_in(drop);
        let mut v = Viewer::open(&at, "/ws/term/claude/x").unwrap();
        broker.join().unwrap();
        v.pump(Duration::from_secs(5), |v| v.close.is_some());
        assert!(v.broken.is_some(), "the drop was read as {:?}", v.close);
        assert_eq!(v.close_frame_code(), None);
        assert!(
            v.ending().contains("without a close frame"),
            "{}",
            v.ending()
        );
    }

    #[test]
    fn a_connection_to_a_listener_is_kept() {
        let l = std::net::TcpListener::bind(("127.0.0.1", 0)).unwrap();
        let to = l.local_addr().unwrap();
        assert!(Endpoint::Tcp(to).connect().is_ok());
    }
}
