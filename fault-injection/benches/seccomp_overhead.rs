//! Cost of the seccomp backend, as ratios within one run:
//! `cargo bench -p vxfault --bench seccomp_overhead`.
//!
//! The bench re-executes itself as a child per configuration; the child times `ITERS`
//! one-byte `write`s to /dev/null (or writes of 1 byte or 4 KiB to a tmpfs file; raw
//! system calls through std), `ROUNDS` times, and prints its fastest round's ns per
//! call. Configurations: no filter; a filter for
//! another family only (`rename=EIO`: `write` is outside the plan, so the kernel's
//! seccomp action cache lets it through without running the filter); the smallest
//! filter there is (one instruction, `return ALLOW`: the kernel's own cost of having
//! any filter, the floor for calls outside the plan); `write` intercepted
//! with no rule firing (`write#1000000000=EIO`), with and without the trace; and
//! Debian's strace doing the same with its own seccomp-bpf filter
//! (`strace -f --seccomp-bpf -e trace=write -e inject=write:error=EIO:when=65535`, strace's
//! largest call number: never reached).
//! The parent interleaves the configurations `REPS` times and reports each one's
//! median, its added cost per call over "no filter", and that cost as a fraction of
//! strace's.

use std::fs::OpenOptions;
use std::io::Write;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Instant;

use vxfault::seccomp::{spawn, Setup};

const ITERS: u32 = 4_000;
const ROUNDS: u32 = 3;
const REPS: usize = 7;

#[derive(Clone, Copy)]
enum How {
    Plain,
    /// The same loop writing this many bytes at offset 0 of a file in /dev/shm.
    PlainTmpfs(usize),
    /// That loop under a filter for `rename` only.
    SeccompTmpfs(usize),
    /// The /dev/null loop under the smallest filter there is: one instruction,
    /// `return ALLOW`. What any filter costs, whatever its program says.
    AllowOnly,
    Seccomp {
        plan: &'static str,
        trace: bool,
    },
    Strace,
}

const CONFIGS: &[(&str, How)] = &[
    ("no filter", How::Plain),
    ("no filter, tmpfs file", How::PlainTmpfs(1)),
    (
        "seccomp, write outside the plan (`rename=EIO`), tmpfs file",
        How::SeccompTmpfs(1),
    ),
    (
        "no filter, 4 KiB writes to a tmpfs file",
        How::PlainTmpfs(4096),
    ),
    (
        "seccomp, write outside the plan (`rename=EIO`), 4 KiB writes to a tmpfs file",
        How::SeccompTmpfs(4096),
    ),
    (
        "seccomp, write outside the plan (`rename=EIO`)",
        How::Seccomp {
            plan: "rename=EIO",
            trace: false,
        },
    ),
    (
        "a one-instruction filter (`return ALLOW`), no supervisor",
        How::AllowOnly,
    ),
    (
        "seccomp, write intercepted, no rule fires, no trace",
        How::Seccomp {
            plan: "write#1000000000=EIO",
            trace: false,
        },
    ),
    (
        "seccomp, write intercepted, no rule fires, traced (as `vxfault run`)",
        How::Seccomp {
            plan: "write#1000000000=EIO",
            trace: true,
        },
    ),
    ("strace -f --seccomp-bpf, inject never firing", How::Strace),
];

fn child() {
    let path = std::env::var("VXBENCH_FILE").unwrap_or_else(|_| "/dev/null".into());
    let mut f = OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(false)
        .open(path)
        .unwrap();
    let len = std::env::var("VXBENCH_LEN").map_or(1, |l| l.parse().unwrap());
    let buf = vec![b'x'; len];
    let mut best = f64::MAX;
    for _ in 0..ROUNDS {
        let t = Instant::now();
        for _ in 0..ITERS {
            // A position-less write: on a regular file it is reset to 0 each round.
            f.write_all(&buf).unwrap();
        }
        std::io::Seek::rewind(&mut f).unwrap();
        best = best.min(t.elapsed().as_nanos() as f64 / f64::from(ITERS));
    }
    println!("{best:.1}");
}

fn measure(how: How, trace: &Path, file: &Path) -> Option<f64> {
    let me = std::env::current_exe().unwrap();
    let out = match how {
        How::Plain => Command::new(&me).env("VXBENCH_CHILD", "1").output().ok()?,
        How::PlainTmpfs(len) => Command::new(&me)
            .env("VXBENCH_CHILD", "1")
            .env("VXBENCH_FILE", file)
            .env("VXBENCH_LEN", len.to_string())
            .output()
            .ok()?,
        How::SeccompTmpfs(len) => {
            let mut cmd = Command::new(&me);
            cmd.env("VXBENCH_CHILD", "1")
                .env("VXBENCH_FILE", file)
                .env("VXBENCH_LEN", len.to_string())
                .stdout(Stdio::piped());
            let setup = Setup {
                plan: "rename=EIO",
                ops: &[vxfault::Op::Rename],
                seed: 0,
                trace: None,
                data: None,
                counters: None,
            };
            let (child, att) = spawn(&mut cmd, &setup).ok()?;
            let out = child.wait_with_output().ok()?;
            att.finish().ok()?;
            out
        }
        How::AllowOnly => {
            let mut cmd = Command::new(&me);
            cmd.env("VXBENCH_CHILD", "1");
            // SAFETY: runs in the forked child before exec; prctl and seccomp are
            // system calls on a stack-held program, nothing is allocated.
            unsafe {
                std::os::unix::process::CommandExt::pre_exec(&mut cmd, || {
                    let mut insn = [libc::sock_filter {
                        code: (libc::BPF_RET | libc::BPF_K) as u16,
                        jt: 0,
                        jf: 0,
                        k: libc::SECCOMP_RET_ALLOW,
                    }];
                    let prog = libc::sock_fprog {
                        len: 1,
                        filter: insn.as_mut_ptr(),
                    };
                    if libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0
                        || libc::syscall(
                            libc::SYS_seccomp,
                            libc::SECCOMP_SET_MODE_FILTER,
                            0,
                            &prog as *const libc::sock_fprog,
                        ) != 0
                    {
                        return Err(std::io::Error::last_os_error());
                    }
                    Ok(())
                });
            }
            cmd.output().ok()?
        }
        How::Strace => Command::new("strace")
            .args([
                "-f",
                "--seccomp-bpf",
                "-qq",
                "-o",
                "/dev/null",
                "-e",
                "trace=write",
            ])
            .args(["-e", "inject=write:error=EIO:when=65535"])
            .arg(&me)
            .env("VXBENCH_CHILD", "1")
            .output()
            .ok()?,
        How::Seccomp {
            plan,
            trace: traced,
        } => {
            let ops: Vec<vxfault::Op> = vxfault::check_plan(plan)
                .unwrap()
                .iter()
                .map(|r| r.op)
                .collect();
            let mut cmd = Command::new(&me);
            cmd.env("VXBENCH_CHILD", "1").stdout(Stdio::piped());
            let setup = Setup {
                plan,
                ops: &ops,
                seed: 0,
                trace: traced.then_some(trace),
                data: None,
                counters: None,
            };
            let (child, att) = spawn(&mut cmd, &setup).ok()?;
            let out = child.wait_with_output().ok()?;
            att.finish().ok()?;
            out
        }
    };
    String::from_utf8_lossy(&out.stdout).trim().parse().ok()
}

fn median(v: &mut [f64]) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn main() {
    if std::env::var_os("VXBENCH_CHILD").is_some() {
        return child();
    }
    let dir = tempfile::tempdir().unwrap();
    let trace = dir.path().join("trace.jsonl");
    let shm = tempfile::Builder::new()
        .prefix("vxbench-")
        .tempdir_in(if Path::new("/dev/shm").is_dir() {
            "/dev/shm"
        } else {
            "/tmp"
        })
        .unwrap();
    let file = shm.path().join("f");
    let strace = Command::new("strace").arg("-V").output().is_ok();
    let mut results: Vec<Vec<f64>> = vec![Vec::new(); CONFIGS.len()];
    for _ in 0..REPS {
        for (i, (_, how)) in CONFIGS.iter().enumerate() {
            if matches!(how, How::Strace) && !strace {
                continue;
            }
            let _ = std::fs::write(&trace, b"");
            if let Some(ns) = measure(*how, &trace, &file) {
                results[i].push(ns);
            }
        }
    }
    let meds: Vec<Option<f64>> = results
        .iter_mut()
        .map(|v| (!v.is_empty()).then(|| median(v)))
        .collect();
    let base = meds[0].unwrap_or(0.0);
    let strace_added = meds[CONFIGS.len() - 1].map(|s| s - base);
    println!("seccomp_overhead: one-byte write to /dev/null, {ITERS} calls x {ROUNDS} rounds (fastest), median of {REPS} interleaved runs");
    for ((name, how), m) in CONFIGS.iter().zip(&meds) {
        let Some(m) = m else {
            println!("  {name}: not measured (strace missing?)");
            continue;
        };
        // A tmpfs row is measured against the unfiltered tmpfs row of its size.
        let base = match how {
            How::PlainTmpfs(len) | How::SeccompTmpfs(len) => CONFIGS
                .iter()
                .position(|(_, h)| matches!(h, How::PlainTmpfs(l) if *l == *len))
                .and_then(|i| meds[i])
                .unwrap_or(base),
            _ => base,
        };
        let added = m - base;
        let pct = 100.0 * added / base;
        let vs = strace_added
            .filter(|s| *s > 0.0)
            .map(|s| format!(", {:.2}x strace's added cost", added / s))
            .unwrap_or_default();
        println!("  {name}: {m:.1} ns/call, added {added:+.1} ns ({pct:+.1} %){vs}");
    }
}
