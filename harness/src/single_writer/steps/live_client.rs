//! Live steps of the client-side clause (sw-client-no-force): the suite plays the
//! broker's terminal route on 127.0.0.1, drops every connection the profile's viewer
//! makes right after a `seq` frame and some output (a transient drop), and reads the
//! query of every reconnect.

use std::net::TcpListener;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use cucumber::{given, then, when};
use tokio_tungstenite::tungstenite::handshake::server::{Request, Response};
use tokio_tungstenite::tungstenite::Message;

use crate::drivers::{poll, scaled};
use crate::single_writer::live::WAIT_MS;
use crate::single_writer::World;
use crate::verdict::OrHarness;

/// The suite's stand-in route: its address and the path of every request it got.
pub struct DroppingRoute {
    pub address: String,
    pub paths: Arc<Mutex<Vec<String>>>,
    stop: Arc<AtomicBool>,
}

impl Drop for DroppingRoute {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
    }
}

/// Serves one connection: the upgrade (noting its path), a `seq`, some output, then
/// a drop without a close frame.
// The handshake callback's error type is tungstenite's own (an HTTP response).
#[allow(clippy::result_large_err)]
fn serve_and_drop(stream: std::net::TcpStream, paths: &Mutex<Vec<String>>) {
    let _ = stream.set_nonblocking(false);
    let _ = stream.set_read_timeout(Some(Duration::from_secs(5)));
    let noted = |req: &Request, resp: Response| {
        paths
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .push(req.uri().to_string());
        Ok(resp)
    };
    // Through `Conn`, whose reads are made again when a signal interrupts them.
    let stream = crate::drivers::broker_ws::Conn::Tcp(stream);
    if let Ok(mut ws) = tokio_tungstenite::tungstenite::accept_hdr(stream, noted) {
        let _ = ws.send(Message::Text(r#"{"t":"seq","n":5,"gen":7}"#.into()));
        let _ = ws.send(Message::Binary(b"hello".to_vec().into()));
        let _ = ws.flush();
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[given(regex = r"^a terminal route of the suite's that drops every connection$")]
async fn dropping_route(w: &mut World) {
    w.run(&[], None, |s, _| {
        let listener = TcpListener::bind("127.0.0.1:0").or_harness("binding 127.0.0.1:0");
        let address = listener
            .local_addr()
            .or_harness("the route's address")
            .to_string();
        listener
            .set_nonblocking(true)
            .or_harness("a non-blocking listener");
        let paths = Arc::new(Mutex::new(Vec::new()));
        let stop = Arc::new(AtomicBool::new(false));
        let (p, st) = (paths.clone(), stop.clone());
        std::thread::spawn(move || {
            let until = std::time::Instant::now() + scaled(4 * WAIT_MS);
            while !st.load(Ordering::Relaxed) && std::time::Instant::now() < until {
                match listener.accept() {
                    Ok((stream, _)) => serve_and_drop(stream, &p),
                    Err(_) => std::thread::sleep(Duration::from_millis(10)),
                }
            }
        });
        s.live().route_stand_in = Some(DroppingRoute {
            address,
            paths,
            stop,
        });
    })
    .await;
}

#[when(regex = r#"^the profile's client (views|takes over) "([^"]+)" through it$"#)]
async fn client_views(w: &mut World, c: &[String]) {
    w.run(c, None, |s, c| {
        let live = s.live();
        let (template, which) = if &c[1] == "views" {
            (live.t.client.clone(), "client")
        } else {
            (live.t.client_take_over.clone(), "client_take_over")
        };
        if template.is_empty() {
            panic!("the profile's [single_writer] table names no {which} command");
        }
        let route = live
            .route_stand_in
            .as_ref()
            .or_harness("no route of the suite");
        let (engine, id) = c[2].split_once(':').or_harness("a key is engine:id");
        let words: Vec<String> = template
            .iter()
            .map(|w| {
                w.replace("{address}", &route.address)
                    .replace("{key}", &c[2])
                    .replace("{engine}", engine)
                    .replace("{id}", id)
                    .replace("{fp}", &"a".repeat(32))
                    .replace("{tab}", &"1".repeat(16))
            })
            .collect();
        live.start_command(&words, "the profile's client", false);
    })
    .await;
}

/// The queries of the requests so far, once at least `n` arrived.
fn queries(s: &mut crate::single_writer::checks::Checks, n: usize) -> Vec<Vec<(String, String)>> {
    let route = s
        .live()
        .route_stand_in
        .as_ref()
        .or_harness("no route of the suite");
    let paths = poll(
        &format!("{n} connections of the client"),
        scaled(WAIT_MS),
        || {
            let got = route
                .paths
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .clone();
            (got.len() >= n).then_some(got)
        },
    );
    paths
        .iter()
        .map(|p| {
            let q = p.split_once('?').map_or("", |(_, q)| q);
            form_urlencoded::parse(q.as_bytes()).into_owned().collect()
        })
        .collect()
}

fn forces(q: &[(String, String)]) -> bool {
    q.iter().any(|(k, v)| k == "force" && v != "0")
}

#[then(regex = r"^the client reconnects (\d+) times, none of them with force$")]
async fn reconnects_without_force(w: &mut World, c: &[String]) {
    w.run(c, None, |s, c| {
        let n: usize = c[1].parse().or_harness("a count");
        let all = queries(s, n + 1);
        for (i, q) in all.iter().enumerate().skip(1).take(n) {
            assert!(
                !forces(q),
                "reconnect {i} after a transient drop sent force=1: {q:?}"
            );
        }
    })
    .await;
}

#[then(regex = r"^the client's first connect (sends|does not send) force$")]
async fn first_connect(w: &mut World, c: &[String]) {
    w.run(c, None, |s, c| {
        let all = queries(s, 1);
        assert_eq!(
            forces(&all[0]),
            &c[1] == "sends",
            "the first connect's query: {:?}",
            all[0]
        );
    })
    .await;
}
