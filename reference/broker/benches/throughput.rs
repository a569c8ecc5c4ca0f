//! 64 MiB of agent output to one viewer: through `vxbroker master` alone, through
//! `vxbroker serve` + master over the WebSocket route, and through dtach 0.9 (the
//! performance peer; `dtach -a` on a PTY), in the same run, alternating, as ratios.
//!
//! `cargo bench -p vx-broker --bench throughput` (needs `dtach` on PATH; without it
//! only the kit's two paths run). `VX_BENCH_MIB` changes the size, `VX_BENCH_ROUNDS`
//! the rounds (default 3; the median is reported).

use std::io::{Read, Write};
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use vx_broker::master::frame;

const BIN: &str = env!("CARGO_BIN_EXE_vxbroker");

fn env_or(name: &str, default: usize) -> usize {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// The agent: waits for one line, writes `bytes` NULs, then idles until killed.
fn agent_script(bytes: usize) -> String {
    format!("read x; head -c {bytes} /dev/zero; exec sleep 600")
}

fn wait_socket(sock: &Path) {
    let deadline = Instant::now() + Duration::from_secs(10);
    while UnixStream::connect(sock).is_err() {
        assert!(Instant::now() < deadline, "no socket");
        std::thread::sleep(Duration::from_millis(5));
    }
}

struct Reaped(Child);

impl Drop for Reaped {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn count_nuls(data: &[u8]) -> usize {
    data.iter().filter(|&&b| b == 0).count()
}

/// Seconds for `bytes` through the kit's master and its own frames.
fn master_only(dir: &Path, bytes: usize) -> f64 {
    let sock = dir.join("m.sock");
    let _m = Reaped(
        Command::new(BIN)
            .args(["master", "--create"])
            .arg(&sock)
            .args(["--", "/bin/sh", "-c", &agent_script(bytes)])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap(),
    );
    wait_socket(&sock);
    let mut s = UnixStream::connect(&sock).unwrap();
    frame::write(&mut s, frame::HELLO, &frame::hello(None, None)).unwrap();
    let start = Instant::now();
    frame::write(&mut s, frame::INPUT, b"\n").unwrap();
    let mut got = 0;
    while got < bytes {
        let (kind, payload) = frame::read(&mut s).unwrap().expect("master ended early");
        if kind == frame::OUTPUT {
            got += count_nuls(&payload);
        }
    }
    let secs = start.elapsed().as_secs_f64();
    let _ = std::fs::remove_file(&sock);
    secs
}

/// Seconds for `bytes` through `vxbroker serve` + master to a WebSocket viewer.
fn broker(dir: &Path, bytes: usize) -> f64 {
    let sock = dir.join("b.sock");
    let engines = dir.join("E.toml");
    let script = agent_script(bytes);
    std::fs::write(
        &engines,
        format!(
            "[engine.claude]\npin = \"flag\"\nid = \"uuid\"\nlaunch = [\"/bin/sh\", \"-c\", {s:?}, \"{{id}}\"]\nresume = [\"/bin/sh\", \"-c\", {s:?}, \"{{id}}\"]\n",
            s = script
        ),
    )
    .unwrap();
    let run = dir.join("run");
    let _b = Reaped(
        Command::new(BIN)
            .arg("serve")
            .arg("--listen")
            .arg(format!("unix:{}", sock.display()))
            .arg("--runtime-dir")
            .arg(&run)
            .arg("--lock-dir")
            .arg(dir.join("locks"))
            .arg("--engines")
            .arg(&engines)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap(),
    );
    wait_socket(&sock);
    let masters = StopMasters(run.clone());
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let secs = rt.block_on(async {
        use vx_broker::client::{Client, Event, Options, Transport};
        let mut c = Client::new(Options {
            transport: Transport::Unix(sock.clone()),
            engine: "claude".into(),
            id: "6a73c0de-1234-4abc-8def-0123456789ab".into(),
            new: true,
            cwd: None,
            claim: None,
        });
        c.connect().await.unwrap();
        let start = Instant::now();
        c.input("\n").await.unwrap();
        let mut got = 0;
        while got < bytes {
            match c.next().await {
                Event::Output(b) => got += count_nuls(&b),
                Event::Closed(_) => panic!("closed early"),
                _ => {}
            }
        }
        start.elapsed().as_secs_f64()
    });
    drop(masters);
    secs
}

/// Stops, on drop, every master under a runtime dir through its socket (masters live
/// in their own sessions, so killing the broker does not end them).
struct StopMasters(PathBuf);

impl Drop for StopMasters {
    fn drop(&mut self) {
        for e in std::fs::read_dir(&self.0).into_iter().flatten().flatten() {
            vx_broker::master::request_stop(&e.path());
        }
    }
}

/// Seconds for `bytes` through dtach: `dtach -N` holds the agent, `dtach -a` runs on
/// a PTY whose master side is read here.
fn dtach(dir: &Path, bytes: usize) -> f64 {
    let sock = dir.join("d.sock");
    // -N: create without attaching and without daemonizing, so it stays our child.
    let _master = Reaped(
        Command::new("dtach")
            .arg("-N")
            .arg(&sock)
            .args(["-E", "-z", "/bin/sh", "-c", &agent_script(bytes)])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap(),
    );
    wait_socket(&sock);
    let (mut pty, pts) = pty_process::blocking::open().unwrap();
    let client = pty_process::blocking::Command::new("dtach")
        .arg("-a")
        .arg(&sock)
        .args(["-E", "-z", "-r", "none"])
        .spawn(pts)
        .unwrap();
    let _client = Reaped(client);
    std::thread::sleep(Duration::from_millis(100));
    let start = Instant::now();
    pty.write_all(b"\n").unwrap();
    let mut buf = vec![0u8; 1 << 16];
    let mut got = 0;
    while got < bytes {
        let n = pty.read(&mut buf).unwrap();
        assert!(n > 0, "dtach ended early");
        got += count_nuls(&buf[..n]);
    }
    start.elapsed().as_secs_f64()
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.partial_cmp(b).unwrap());
    v[v.len() / 2]
}

fn main() {
    // `cargo bench` passes --bench; nothing else is taken from the command line.
    let mib = env_or("VX_BENCH_MIB", 64);
    let rounds = env_or("VX_BENCH_ROUNDS", 3);
    let bytes = mib << 20;
    let have_dtach = Command::new("dtach")
        .arg("--help")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok();
    let (mut m, mut b, mut d) = (Vec::new(), Vec::new(), Vec::new());
    for round in 0..rounds {
        let tmp = tempfile::tempdir().unwrap();
        let dir: PathBuf = tmp.path().into();
        // Alternate the order so neither path always runs on a warmer machine.
        if round % 2 == 0 {
            m.push(master_only(&dir, bytes));
            b.push(broker(&dir, bytes));
            if have_dtach {
                d.push(dtach(&dir, bytes));
            }
        } else {
            if have_dtach {
                d.push(dtach(&dir, bytes));
            }
            b.push(broker(&dir, bytes));
            m.push(master_only(&dir, bytes));
        }
    }
    let rate = |s: f64| mib as f64 / s;
    let (m, b) = (median(m), median(b));
    println!("{mib} MiB, {rounds} rounds, medians:");
    println!(
        "  vxbroker master          {:8.1} MiB/s ({m:.3} s)",
        rate(m)
    );
    println!(
        "  vxbroker serve + master  {:8.1} MiB/s ({b:.3} s)",
        rate(b)
    );
    if have_dtach {
        let d = median(d);
        println!(
            "  dtach 0.9 -a             {:8.1} MiB/s ({d:.3} s)",
            rate(d)
        );
        println!("  master / dtach           {:8.2}x", d / m);
        println!("  serve + master / dtach   {:8.2}x", d / b);
    }
}
