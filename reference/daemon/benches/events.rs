//! `cargo bench -p vxref --bench events`: event delivery latency for
//! `docs/performance.md` ("Events").
//!
//! One release `vxref serve`, two owner connections: M sends requests, S is subscribed
//! (`events.subscribe`). Each round first times a plain `server.info` round trip on M,
//! then sends `session.rename` on M and times until S has read the rename's event line
//! (M's reply is read afterwards, outside the timing). Reports median and p99 of both
//! and their ratios, so the figure is relative to the same connection's round trip in
//! the same run. Environment: `VXBENCH_ROUNDS` (default 2000).

mod common;

use std::time::{Duration, Instant};

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    let i = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[i]
}

fn micros(d: Duration) -> f64 {
    d.as_secs_f64() * 1e6
}

fn main() {
    let rounds: usize = std::env::var("VXBENCH_ROUNDS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(2000);
    let dir = tempfile::tempdir().unwrap();
    let daemon = common::Served::start(common::VXREF, dir.path(), None);
    let mut m = daemon.connect();
    let created = m.call("session.create", serde_json::json!({"name": "bench"}));
    let session = created["session"].as_str().unwrap().to_string();
    let mut s = daemon.connect();
    s.send(r#"{"id":1,"verb":"events.subscribe","params":{}}"#);
    assert!(s.line().contains("\"resumed\":false"));
    let info = r#"{"id":2,"verb":"server.info"}"#;
    let rename =
        serde_json::json!({"id":3,"verb":"session.rename","params":{"session":session,"name":"r"}})
            .to_string();

    let mut rtt = Vec::with_capacity(rounds);
    let mut delivery = Vec::with_capacity(rounds);
    for round in 0..rounds + 50 {
        let t = Instant::now();
        m.send(info);
        m.line();
        let plain = t.elapsed();
        let t = Instant::now();
        m.send(&rename);
        let event = s.line();
        let delivered = t.elapsed();
        assert!(event.contains("session.renamed"), "{event}");
        assert!(m.line().contains("\"ok\""));
        // The first 50 rounds warm up.
        if round >= 50 {
            rtt.push(plain);
            delivery.push(delivered);
        }
    }
    rtt.sort_unstable();
    delivery.sort_unstable();
    let (rm, r99) = (percentile(&rtt, 0.5), percentile(&rtt, 0.99));
    let (dm, d99) = (percentile(&delivery, 0.5), percentile(&delivery, 0.99));
    println!("events bench: {rounds} rounds (after 50 warm-up)");
    println!("| measurement | median | p99 |");
    println!("|---|---|---|");
    println!(
        "| `server.info` round trip (M) | {:.1} µs | {:.1} µs |",
        micros(rm),
        micros(r99)
    );
    println!(
        "| `session.rename` sent on M → its event read on S | {:.1} µs | {:.1} µs |",
        micros(dm),
        micros(d99)
    );
    println!(
        "| ratio delivery / round trip | {:.2}× | {:.2}× |",
        micros(dm) / micros(rm),
        micros(d99) / micros(r99)
    );
}
