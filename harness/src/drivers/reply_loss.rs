//! A loopback HTTP/1.1 proxy that loses one reply: it forwards every request to the
//! upstream and every response back, except the response to the first `PUT` after
//! it is armed, which it reads in full (so the upstream has committed) and then drops
//! by closing the client's connection. What the client sees is the "committed, but
//! the client got an error" case of a store behind a network.
//!
//! It frames messages itself (request line and headers, then `Content-Length` or
//! chunked bodies), so it works with keep-alive connections.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

/// Longest request or response head the proxy reads.
const MAX_HEAD_BYTES: usize = 64 * 1024;
/// How long either side may stay silent before the proxy gives the connection up.
const IDLE: Duration = Duration::from_secs(30);

/// A running proxy; it stops accepting when dropped.
pub struct ReplyLossProxy {
    pub addr: SocketAddr,
    armed: Arc<AtomicBool>,
    dropped: Arc<AtomicUsize>,
    stop: Arc<AtomicBool>,
}

impl ReplyLossProxy {
    /// Listens on 127.0.0.1 (a free port) in front of `upstream`, armed.
    pub fn start(upstream: SocketAddr) -> std::io::Result<ReplyLossProxy> {
        let listener = TcpListener::bind(("127.0.0.1", 0))?;
        let addr = listener.local_addr()?;
        listener.set_nonblocking(true)?;
        let armed = Arc::new(AtomicBool::new(true));
        let dropped = Arc::new(AtomicUsize::new(0));
        let stop = Arc::new(AtomicBool::new(false));
        let (a, d, st) = (armed.clone(), dropped.clone(), stop.clone());
        std::thread::spawn(move || {
            while !st.load(Ordering::Relaxed) {
                match listener.accept() {
                    Ok((client, _)) => {
                        let (a, d) = (a.clone(), d.clone());
                        std::thread::spawn(move || {
                            let _ = relay(client, upstream, &a, &d);
                        });
                    }
                    Err(_) => std::thread::sleep(Duration::from_millis(5)),
                }
            }
        });
        Ok(ReplyLossProxy {
            addr,
            armed,
            dropped,
            stop,
        })
    }

    /// How many replies it has dropped.
    pub fn dropped(&self) -> usize {
        self.dropped.load(Ordering::SeqCst)
    }

    /// Whether it will still drop the next PUT's reply.
    pub fn armed(&self) -> bool {
        self.armed.load(Ordering::SeqCst)
    }
}

impl Drop for ReplyLossProxy {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
    }
}

/// One HTTP message: its head (verbatim) and body (verbatim, framing included).
struct Message {
    head: Vec<u8>,
    body: Vec<u8>,
}

fn relay(
    client: TcpStream,
    upstream: SocketAddr,
    armed: &AtomicBool,
    dropped: &AtomicUsize,
) -> std::io::Result<()> {
    client.set_read_timeout(Some(IDLE))?;
    let up = TcpStream::connect_timeout(&upstream, IDLE)?;
    up.set_read_timeout(Some(IDLE))?;
    let mut from_client = BufReader::new(client.try_clone()?);
    let mut to_client = client;
    let mut from_up = BufReader::new(up.try_clone()?);
    let mut to_up = up;
    loop {
        let Some(req) = read_message(&mut from_client, true)? else {
            return Ok(());
        };
        let is_put = req.head.starts_with(b"PUT ");
        to_up.write_all(&req.head)?;
        to_up.write_all(&req.body)?;
        to_up.flush()?;
        let Some(resp) = read_message(&mut from_up, false)? else {
            return Ok(());
        };
        if is_put && armed.swap(false, Ordering::SeqCst) {
            dropped.fetch_add(1, Ordering::SeqCst);
            let _ = to_client.shutdown(std::net::Shutdown::Both);
            return Ok(());
        }
        to_client.write_all(&resp.head)?;
        to_client.write_all(&resp.body)?;
        to_client.flush()?;
    }
}

/// Reads one message; `None` at a clean end of stream before it starts.
fn read_message(r: &mut impl BufRead, request: bool) -> std::io::Result<Option<Message>> {
    let mut head = Vec::new();
    loop {
        let before = head.len();
        let n = r
            .by_ref()
            .take((MAX_HEAD_BYTES - head.len()) as u64)
            .read_until(b'\n', &mut head)?;
        if n == 0 {
            return if head.is_empty() {
                Ok(None)
            } else {
                Err(std::io::ErrorKind::UnexpectedEof.into())
            };
        }
        if head.len() >= MAX_HEAD_BYTES {
            return Err(std::io::ErrorKind::InvalidData.into());
        }
        let line = &head[before..];
        if line == b"\r\n" || line == b"\n" {
            break;
        }
    }
    let text = String::from_utf8_lossy(&head).to_ascii_lowercase();
    let header = |name: &str| {
        text.lines()
            .skip(1)
            .find_map(|l| l.strip_prefix(name).map(|v| v.trim().to_string()))
    };
    let mut body = Vec::new();
    if header("transfer-encoding:").is_some_and(|v| v.contains("chunked")) {
        read_chunked(r, &mut body)?;
    } else if let Some(len) = header("content-length:") {
        let len: u64 = len
            .parse()
            .map_err(|_| std::io::Error::from(std::io::ErrorKind::InvalidData))?;
        r.by_ref().take(len).read_to_end(&mut body)?;
    } else if !request && !no_body_status(&text) {
        // A response without framing ends with the connection.
        r.read_to_end(&mut body)?;
    }
    Ok(Some(Message { head, body }))
}

fn no_body_status(head: &str) -> bool {
    let status = head.split_whitespace().nth(1).unwrap_or("");
    status.starts_with('1') || status == "204" || status == "304"
}

fn read_chunked(r: &mut impl BufRead, body: &mut Vec<u8>) -> std::io::Result<()> {
    loop {
        let start = body.len();
        r.by_ref().take(1024).read_until(b'\n', body)?;
        let size_line = String::from_utf8_lossy(&body[start..]).into_owned();
        let size = usize::from_str_radix(size_line.trim().split(';').next().unwrap_or(""), 16)
            .map_err(|_| std::io::Error::from(std::io::ErrorKind::InvalidData))?;
        if size == 0 {
            // Trailers, then the blank line.
            loop {
                let s = body.len();
                r.by_ref().take(8192).read_until(b'\n', body)?;
                if &body[s..] == b"\r\n" || body.len() == s {
                    return Ok(());
                }
            }
        }
        r.by_ref().take(size as u64 + 2).read_to_end(body)?;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An upstream that answers every request with a fixed response, counting them.
    fn upstream(count: Arc<AtomicUsize>) -> SocketAddr {
        let l = TcpListener::bind(("127.0.0.1", 0)).unwrap();
        let addr = l.local_addr().unwrap();
        std::thread::spawn(move || {
            for s in l.incoming() {
                let s = s.unwrap();
                let count = count.clone();
                std::thread::spawn(move || {
                    let mut r = BufReader::new(s.try_clone().unwrap());
                    let mut w = s;
                    while let Ok(Some(_)) = read_message(&mut r, true) {
                        count.fetch_add(1, Ordering::SeqCst);
                        w.write_all(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
                            .unwrap();
                    }
                });
            }
        });
        addr
    }

    #[test]
    fn drops_exactly_the_first_put_reply_after_forwarding_it() {
        let count = Arc::new(AtomicUsize::new(0));
        let proxy = ReplyLossProxy::start(upstream(count.clone())).unwrap();
        let mut c = TcpStream::connect(proxy.addr).unwrap();
        c.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
        c.write_all(b"GET /a HTTP/1.1\r\nHost: x\r\n\r\n").unwrap();
        let mut r = BufReader::new(c.try_clone().unwrap());
        let got = read_message(&mut r, false).unwrap().unwrap();
        assert_eq!(got.body, b"ok");
        c.write_all(b"PUT /a HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\n\r\nabc")
            .unwrap();
        assert!(read_message(&mut r, false).map_or(true, |m| m.is_none()));
        assert_eq!(
            count.load(Ordering::SeqCst),
            2,
            "the PUT reached the upstream"
        );
        assert_eq!(proxy.dropped(), 1);
        assert!(!proxy.armed());
        let mut c = TcpStream::connect(proxy.addr).unwrap();
        c.write_all(b"PUT /b HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\n\r\n")
            .unwrap();
        let mut r = BufReader::new(c);
        assert_eq!(read_message(&mut r, false).unwrap().unwrap().body, b"ok");
    }
}
