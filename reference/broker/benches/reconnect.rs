//! Reconnect cost and the same-key open race, through `vxbroker serve` with raw
//! WebSocket viewers (tokio-tungstenite), same run:
//!
//! - a delta reconnect (4 KiB missed) vs a full one (no `have`: the whole 256 KiB
//!   ring, then `seq`), bytes on the wire and time to the last byte;
//! - 16 concurrent opens of one new key per round: spawns counted by the agents
//!   themselves (one line each), and the p99 of the opens' time to `seq`.
//!
//! `cargo bench -p vx-broker --bench reconnect`; `VX_BENCH_ROUNDS` (default 40)
//! reconnects of each kind, alternating, and `VX_BENCH_RACES` (default 10) rounds of 16.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use futures_util::{SinkExt, StreamExt};
use tokio::net::UnixStream;
use tokio_tungstenite::tungstenite::Message;

const BIN: &str = env!("CARGO_BIN_EXE_vxbroker");
const RING: usize = 262_144;
const MISSED: usize = 4096;
const RACERS: usize = 16;

struct Reaped(Child);

impl Drop for Reaped {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn uuid(n: usize) -> String {
    format!("6a73c0de-1234-4abc-8def-{n:012x}")
}

/// A broker whose agent records its PID (one unbuffered append), then prints the ring's worth of bytes
/// after one line of input and echoes nothing.
fn broker(dir: &Path) -> (Reaped, PathBuf) {
    let sock = dir.join("b.sock");
    let pids = dir.join("spawns");
    let agent = format!(
        "import os,sys\nf=os.open({:?},os.O_WRONLY|os.O_APPEND|os.O_CREAT)\nos.write(f,(str(os.getpid())+'\\n').encode())\nsys.stdin.readline()\nos.write(1,b'x'*{RING})\nwhile True: os.read(0,4096)",
        pids.display().to_string()
    );
    let engines = dir.join("E.toml");
    std::fs::write(
        &engines,
        format!("[engine.claude]\npin = \"flag\"\nid = \"uuid\"\nlaunch = [\"python3\", \"-c\", {agent:?}, \"{{id}}\"]\nresume = [\"python3\", \"-c\", {agent:?}, \"{{id}}\"]\n"),
    )
    .unwrap();
    let child = Command::new(BIN)
        .arg("serve")
        .arg("--listen")
        .arg(format!("unix:{}", sock.display()))
        .arg("--runtime-dir")
        .arg(dir.join("run"))
        .arg("--lock-dir")
        .arg(dir.join("locks"))
        .arg("--engines")
        .arg(&engines)
        .arg("--ring")
        .arg(RING.to_string())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(10);
    while std::os::unix::net::UnixStream::connect(&sock).is_err() {
        assert!(Instant::now() < deadline, "no broker socket");
        std::thread::sleep(Duration::from_millis(5));
    }
    (Reaped(child), sock)
}

type Ws = tokio_tungstenite::WebSocketStream<UnixStream>;

async fn open(sock: &Path, id: &str, query: &str) -> Ws {
    let stream = UnixStream::connect(sock).await.unwrap();
    let url = format!("ws://localhost/ws/term/claude/{id}?{query}");
    tokio_tungstenite::client_async(url, stream)
        .await
        .unwrap()
        .0
}

/// Close 4503: the master dropped this viewer (it took nothing for 2 s); retryable.
const LOST: u16 = 4503;

/// Reads until `bytes` of output arrived (and, with `seq`, a seq frame); the seq
/// frame's `n` and `gen` if one came, and the wire bytes of the output.
async fn read(ws: &mut Ws, bytes: usize, seq: bool) -> (Option<(u64, u64)>, usize) {
    read_or_lost(ws, bytes, seq)
        .await
        .unwrap_or_else(|| panic!("the master dropped the viewer"))
}

/// [`read`], or `None` on a 4503 close.
async fn read_or_lost(ws: &mut Ws, bytes: usize, seq: bool) -> Option<(Option<(u64, u64)>, usize)> {
    let (mut got, mut frame) = (0usize, None);
    while got < bytes || (seq && frame.is_none()) {
        match ws.next().await.expect("the stream ended").unwrap() {
            Message::Binary(b) => got += b.len(),
            Message::Text(t) => {
                let v: serde_json::Value = serde_json::from_str(t.as_str()).unwrap();
                if v["t"] == "seq" {
                    frame = Some((v["n"].as_u64().unwrap(), v["gen"].as_u64().unwrap()));
                }
            }
            Message::Close(Some(c)) if u16::from(c.code) == LOST => return None,
            Message::Close(c) => panic!("closed: {c:?}"),
            _ => {}
        }
    }
    Some((frame, got))
}

async fn reconnects(dir: &Path, rounds: usize) -> (Vec<f64>, Vec<f64>, usize, usize, usize) {
    let (_broker, sock) = broker(dir);
    let id = uuid(0);
    let mut first = open(&sock, &id, "new=1").await;
    read(&mut first, 0, true).await;
    first
        .send(Message::Text(r#"{"t":"i","d":"go\r"}"#.into()))
        .await
        .unwrap();
    let (_, _) = read(&mut first, RING, false).await;
    let mut full = open(&sock, &id, "").await;
    let (seq, _) = read(&mut full, RING, true).await;
    let (total, gen) = seq.unwrap();
    drop((first, full));
    let (mut delta_t, mut full_t, mut delta_b, mut full_b) = (vec![], vec![], 0, 0);
    let mut lost = 0;
    for i in 0..rounds * 2 {
        let start = Instant::now();
        if i % 2 == 0 {
            let q = format!("have={}&gen={gen}", total - MISSED as u64);
            let mut ws = open(&sock, &id, &q).await;
            let (seq, got) = read(&mut ws, MISSED, false).await;
            assert!(seq.is_none(), "a delta got a replay");
            delta_t.push(start.elapsed().as_secs_f64());
            delta_b = got;
        } else {
            // A dropped viewer reconnects, as a client does; the retry is timed in.
            loop {
                let mut ws = open(&sock, &id, "").await;
                if let Some((_, got)) = read_or_lost(&mut ws, RING, true).await {
                    full_b = got;
                    break;
                }
                lost += 1;
            }
            full_t.push(start.elapsed().as_secs_f64());
        }
    }
    stop_all(dir);
    (delta_t, full_t, delta_b, full_b, lost)
}

async fn races(dir: &Path, rounds: usize) -> (Vec<f64>, usize, usize) {
    let (_broker, sock) = broker(dir);
    let mut times = Vec::new();
    let mut busy = 0;
    for r in 0..rounds {
        let id = uuid(r + 1);
        let tasks: Vec<_> = (0..RACERS)
            .map(|_| {
                let (sock, id) = (sock.clone(), id.clone());
                tokio::spawn(async move {
                    let start = Instant::now();
                    let mut ws = open(&sock, &id, "new=1").await;
                    loop {
                        match ws.next().await.unwrap().unwrap() {
                            Message::Close(Some(c)) if u16::from(c.code) == 4409 => {
                                return (start.elapsed().as_secs_f64(), true)
                            }
                            Message::Text(t) if t.as_str().contains("\"seq\"") => {
                                return (start.elapsed().as_secs_f64(), false)
                            }
                            Message::Close(c) => panic!("closed: {c:?}"),
                            _ => {}
                        }
                    }
                })
            })
            .collect();
        for t in tasks {
            let (s, was_busy) = t.await.unwrap();
            times.push(s);
            busy += usize::from(was_busy);
        }
    }
    // An agent records itself once python is up, after its master accepted: wait
    // for every round's agent, then a moment more for any extra one.
    let count = || {
        std::fs::read_to_string(dir.join("spawns"))
            .unwrap_or_default()
            .lines()
            .count()
    };
    let deadline = Instant::now() + Duration::from_secs(20);
    while count() < rounds && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    tokio::time::sleep(Duration::from_millis(500)).await;
    let spawns = count();
    stop_all(dir);
    (times, spawns, busy)
}

fn stop_all(dir: &Path) {
    for e in std::fs::read_dir(dir.join("run"))
        .into_iter()
        .flatten()
        .flatten()
    {
        vx_broker::master::request_stop(&e.path());
    }
}

fn q(mut v: Vec<f64>, p: f64) -> f64 {
    v.sort_by(|a, b| a.partial_cmp(b).unwrap());
    v[((v.len() - 1) as f64 * p).round() as usize]
}

fn env(name: &str, default: usize) -> usize {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

fn main() {
    let (rounds, race_rounds) = (env("VX_BENCH_ROUNDS", 40), env("VX_BENCH_RACES", 10));
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    let tmp = tempfile::tempdir().unwrap();
    let (delta, full, delta_b, full_b, lost) = rt.block_on(reconnects(tmp.path(), rounds));
    let ms = |s: f64| s * 1000.0;
    println!("{rounds} reconnects of each kind, 256 KiB ring, median / p99:");
    println!(
        "  delta ({MISSED} B missed)   {delta_b:7} B  {:7.3} ms / {:7.3} ms",
        ms(q(delta.clone(), 0.5)),
        ms(q(delta.clone(), 0.99))
    );
    println!(
        "  full (no have)        {full_b:7} B  {:7.3} ms / {:7.3} ms",
        ms(q(full.clone(), 0.5)),
        ms(q(full.clone(), 0.99))
    );
    println!("  full reconnects dropped by the master (4503) and retried: {lost}");
    println!(
        "  full / delta (median) {:7.1}x bytes, {:5.1}x time",
        full_b as f64 / delta_b as f64,
        q(full, 0.5) / q(delta, 0.5)
    );
    let tmp = tempfile::tempdir().unwrap();
    let (times, spawns, busy) = rt.block_on(races(tmp.path(), race_rounds));
    println!(
        "{race_rounds} rounds of {RACERS} concurrent opens of one new key: {spawns} spawns, {busy} BUSY"
    );
    println!(
        "  open to seq (or 4409)  median {:7.3} ms / p99 {:7.3} ms",
        ms(q(times.clone(), 0.5)),
        ms(q(times, 0.99))
    );
}
