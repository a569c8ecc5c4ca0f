//! A loopback TCP proxy that loses replies: it forwards every request to the
//! upstream store and, for the next `budget` PUTs, reads the start of the store's
//! answer (so the store has committed: S3 servers answer a PUT after storing it) and
//! closes the client's connection instead of passing the answer on. The client sees an
//! error for a write that happened, the case ADR-089's "a client error does not mean
//! the write was rolled back" is about.
//!
//! Requests are recognised at the start of a read from the client. That holds for
//! clients that wait for an answer before sending their next request on a connection
//! (ureq, boto3; no pipelining), which is what a store client does.

use std::io::{self, Read, Write};
use std::net::{Shutdown, SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

/// No socket of the proxy waits longer than this for its peer.
const IO_TIMEOUT: Duration = Duration::from_secs(30);

/// The proxy; dropping it stops accepting (open connections end with their peers).
pub struct ReplyLossProxy {
    addr: SocketAddr,
    stop: Arc<AtomicBool>,
    budget: Arc<AtomicUsize>,
    dropped: Arc<AtomicUsize>,
    acceptor: Option<JoinHandle<()>>,
}

impl ReplyLossProxy {
    /// Listens on 127.0.0.1 (an ephemeral port) in front of `upstream`, losing the
    /// replies of the next `budget` PUTs.
    pub fn start(upstream: SocketAddr, budget: usize) -> io::Result<ReplyLossProxy> {
        let listener = TcpListener::bind(("127.0.0.1", 0))?;
        let addr = listener.local_addr()?;
        let stop = Arc::new(AtomicBool::new(false));
        let budget = Arc::new(AtomicUsize::new(budget));
        let dropped = Arc::new(AtomicUsize::new(0));
        let acceptor = {
            let (stop, budget, dropped) = (stop.clone(), budget.clone(), dropped.clone());
            std::thread::spawn(move || {
                for client in listener.incoming() {
                    if stop.load(Ordering::SeqCst) {
                        break;
                    }
                    let Ok(client) = client else { continue };
                    let (budget, dropped) = (budget.clone(), dropped.clone());
                    std::thread::spawn(move || {
                        let _ = relay(client, upstream, &budget, &dropped);
                    });
                }
            })
        };
        Ok(ReplyLossProxy {
            addr,
            stop,
            budget,
            dropped,
            acceptor: Some(acceptor),
        })
    }

    /// Where clients connect.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// Replies lost so far.
    pub fn dropped(&self) -> usize {
        self.dropped.load(Ordering::SeqCst)
    }

    /// PUT replies still to lose.
    pub fn remaining(&self) -> usize {
        self.budget.load(Ordering::SeqCst)
    }
}

impl Drop for ReplyLossProxy {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        // Wakes the blocking accept so the acceptor sees the stop flag.
        let _ = TcpStream::connect_timeout(&self.addr, Duration::from_secs(1));
        if let Some(acceptor) = self.acceptor.take() {
            let _ = acceptor.join();
        }
    }
}

fn take_one(budget: &AtomicUsize) -> bool {
    budget
        .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |n| n.checked_sub(1))
        .is_ok()
}

fn relay(
    client: TcpStream,
    upstream: SocketAddr,
    budget: &Arc<AtomicUsize>,
    dropped: &AtomicUsize,
) -> io::Result<()> {
    let server = TcpStream::connect_timeout(&upstream, Duration::from_secs(5))?;
    for s in [&client, &server] {
        s.set_read_timeout(Some(IO_TIMEOUT))?;
        s.set_write_timeout(Some(IO_TIMEOUT))?;
    }
    let lose_next_reply = Arc::new(AtomicBool::new(false));
    let forward = {
        let (mut from, mut to) = (client.try_clone()?, server.try_clone()?);
        let (lose, budget) = (lose_next_reply.clone(), budget.clone());
        std::thread::spawn(move || -> io::Result<()> {
            let mut buf = vec![0u8; 64 * 1024];
            loop {
                let n = from.read(&mut buf)?;
                if n == 0 {
                    break;
                }
                // Set before the request reaches the store, so no byte of its
                // answer can be passed on first.
                if buf[..n].starts_with(b"PUT ") && take_one(&budget) {
                    lose.store(true, Ordering::SeqCst);
                }
                to.write_all(&buf[..n])?;
            }
            to.shutdown(Shutdown::Write)
        })
    };
    let (mut from, mut to) = (server, client);
    let mut buf = vec![0u8; 64 * 1024];
    loop {
        let n = from.read(&mut buf)?;
        if n == 0 {
            break;
        }
        if lose_next_reply.load(Ordering::SeqCst) {
            dropped.fetch_add(1, Ordering::SeqCst);
            break;
        }
        to.write_all(&buf[..n])?;
    }
    let _ = to.shutdown(Shutdown::Both);
    let _ = from.shutdown(Shutdown::Both);
    let _ = forward.join();
    Ok(())
}
