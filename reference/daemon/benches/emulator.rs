//! The emulator's share of the attach target: how fast the pinned avt consumes the
//! attach bench's kind of output (77-byte text lines) on its own, and what vxref's
//! `Emulator` wrapper (UTF-8 carry-over, locking aside) adds on top, in the same run.
//! `VXBENCH_MIB` (default 32) sets the volume; `VXBENCH_ROUNDS` (default 5).

use std::time::{Duration, Instant};
use vxref::emulator::Emulator;

const CHUNK: usize = 4096;

fn env(name: &str, default: usize) -> usize {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

fn lines(bytes: usize) -> Vec<u8> {
    let mut out = Vec::with_capacity(bytes + 128);
    let mut i = 0u64;
    while out.len() < bytes {
        out.extend_from_slice(
            format!("{i:08} the quick brown fox jumps over the lazy dog 0123456789 abcdefghij\r\n")
                .as_bytes(),
        );
        i += 1;
    }
    out
}

fn time(f: impl FnOnce()) -> Duration {
    let start = Instant::now();
    f();
    start.elapsed()
}

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

fn main() {
    let mib = env("VXBENCH_MIB", 32);
    let rounds = env("VXBENCH_ROUNDS", 5).max(1);
    let text = lines(mib << 20);
    let (mut raw, mut wrapped) = (Vec::new(), Vec::new());
    for _ in 0..rounds {
        raw.push(time(|| {
            let mut t = avt::Terminal::with_scrollback(80, 24, Some(2000)).expect("size");
            for chunk in text.chunks(CHUNK) {
                t.feed(std::str::from_utf8(chunk).expect("ascii"));
            }
            std::hint::black_box(t.cursor_position());
        }));
        wrapped.push(time(|| {
            let mut e = Emulator::new(80, 24, 2000);
            for chunk in text.chunks(CHUNK) {
                e.feed(chunk);
            }
            std::hint::black_box(e.alternate_active());
        }));
    }
    let (raw, wrapped) = (median(raw), median(wrapped));
    let rate = |d: Duration| (text.len() as f64 / (1 << 20) as f64) / d.as_secs_f64();
    println!(
        "emulator {mib} MiB of 77-byte lines in {CHUNK}-byte chunks, median of {rounds}: \
         avt {:.3} s ({:.1} MiB/s); vxref Emulator {:.3} s ({:.1} MiB/s) = {:.2}x avt; \
         256 MiB at the avt rate: {:.2} s",
        raw.as_secs_f64(),
        rate(raw),
        wrapped.as_secs_f64(),
        rate(wrapped),
        wrapped.as_secs_f64() / raw.as_secs_f64(),
        256.0 / rate(raw),
    );
}
