//! `vxstub`: the stand-in program the kit's suites start as the "agent" or "CLI"
//! whose behaviour they observe. Each mode does one observable thing and nothing
//! else; later contracts add their modes here.
//!
//! ```text
//! vxstub argv-dump FILE [--env NAME]...   write {"argv","env","cwd","pid"} to FILE, then sleep
//! vxstub print N [--byte B]               write N bytes (default 'x') to stdout, then exit 0
//! vxstub hold-lock FILE                   flock(FILE, LOCK_EX|LOCK_NB), print "locked", sleep;
//!                                         exit 97 when another process holds it
//! vxstub exit CODE                        exit with CODE
//! vxstub sleep                            sleep until a signal ends it
//! ```
//!
//! A dump is published atomically (temporary file, fsync, rename), so a reader that
//! sees the file sees all of it.

// Modes with their own files live in src/bin/vxstub/ (a file directly in
// src/bin/ would be discovered as a binary of its own).
#[path = "vxstub_agent.rs"]
mod agent;
#[path = "vxstub/cli.rs"]
mod cli;
// Only `reset_dispositions` is used here; the rest serves vxcert.
#[allow(dead_code)]
#[path = "../drivers/start_state.rs"]
mod start_state;

use clap::{Parser, Subcommand};
use std::io::Write;
use std::path::{Path, PathBuf};

/// Exit status when `hold-lock` finds the lock held by someone else.
const LOCK_HELD_EXIT: i32 = 97;

#[derive(Parser, Debug)]
#[command(
    name = "vxstub",
    version,
    about = "Stand-in program for the kit's suites"
)]
struct Cli {
    #[command(subcommand)]
    mode: Mode,
}

#[derive(Subcommand, Debug)]
enum Mode {
    /// Write argv, the named environment variables and the cwd to FILE, then sleep.
    ArgvDump {
        file: PathBuf,
        /// An environment variable to include (repeatable); absent ones are null.
        #[arg(long = "env", value_name = "NAME")]
        env: Vec<String>,
        /// The rest of the command line, dumped as it arrived.
        #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
        rest: Vec<String>,
    },
    /// Write N bytes to stdout, then exit 0.
    Print {
        n: u64,
        #[arg(long, default_value_t = b'x')]
        byte: u8,
    },
    /// Hold an exclusive flock on FILE until killed.
    HoldLock { file: PathBuf },
    /// Exit with CODE.
    Exit { code: i32 },
    /// Sleep until a signal ends the process.
    Sleep,
    /// An agent's background process (`vxstub agent`'s `fork`): sleeps until killed,
    /// at most two minutes. `--history` names the agent's sandbox in its command line,
    /// so the suite finds it.
    Background {
        #[arg(long)]
        history: PathBuf,
    },
    /// A fake CLI agent for session persist (docs/spec/persist-drive.md).
    Cli(cli::CliArgs),
    /// The single-writer suite's agent (see vxstub_agent.rs).
    Agent(agent::AgentArgs),
}

fn main() {
    // As a real agent CLI: default dispositions and an empty mask, whatever its
    // parent left it (a broker started under `nohup` hands its agents SIGHUP
    // ignored, and the suites observe what a SIGHUP does to the agent). SIGPIPE
    // stays ignored as Rust's runtime (and Node's, a real agent's) sets it.
    start_state::reset_dispositions();
    // SAFETY: SIG_IGN involves no handler; no other thread runs yet.
    unsafe {
        nix::libc::signal(nix::libc::SIGPIPE, nix::libc::SIG_IGN);
    }
    let cli = Cli::parse();
    let code = match cli.mode {
        Mode::ArgvDump { file, env, .. } => argv_dump(&file, &env),
        Mode::Print { n, byte } => print(n, byte),
        Mode::HoldLock { file } => hold_lock(&file),
        Mode::Exit { code } => code,
        Mode::Sleep => sleep_forever(),
        Mode::Background { .. } => {
            std::thread::sleep(std::time::Duration::from_secs(120));
            0
        }
        Mode::Cli(args) => cli::run(&args),
        Mode::Agent(a) => agent::run(&a),
    };
    std::process::exit(code);
}

fn sleep_forever() -> ! {
    loop {
        std::thread::sleep(std::time::Duration::from_secs(3600));
    }
}

fn argv_dump(file: &Path, names: &[String]) -> i32 {
    let env: serde_json::Map<String, serde_json::Value> = names
        .iter()
        .map(|n| {
            let v = std::env::var(n).map_or(serde_json::Value::Null, serde_json::Value::from);
            (n.clone(), v)
        })
        .collect();
    let dump = serde_json::json!({
        "argv": std::env::args().collect::<Vec<_>>(),
        "env": env,
        "cwd": std::env::current_dir().map(|d| d.display().to_string()).ok(),
        "pid": std::process::id(),
    });
    if let Err(e) = publish(file, format!("{dump}\n").as_bytes()) {
        eprintln!("vxstub: cannot write the dump: {e}");
        return 1;
    }
    sleep_forever()
}

fn publish(file: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let mut tmp = file.as_os_str().to_owned();
    tmp.push(format!(".tmp{}", std::process::id()));
    let tmp = PathBuf::from(tmp);
    let mut f = std::fs::File::create(&tmp)?;
    f.write_all(bytes)?;
    f.sync_all()?;
    std::fs::rename(&tmp, file)
}

fn print(n: u64, byte: u8) -> i32 {
    let chunk = [byte; 8192];
    let mut out = std::io::stdout().lock();
    let mut left = n;
    while left > 0 {
        let k = left.min(chunk.len() as u64) as usize;
        if out.write_all(&chunk[..k]).is_err() {
            return 1;
        }
        left -= k as u64;
    }
    i32::from(out.flush().is_err())
}

fn hold_lock(file: &Path) -> i32 {
    use nix::fcntl::{Flock, FlockArg};
    use std::os::unix::fs::OpenOptionsExt;
    let f = match std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .mode(0o600)
        .open(file)
    {
        Ok(f) => f,
        Err(e) => {
            eprintln!("vxstub: cannot open the lock file: {e}");
            return 1;
        }
    };
    match Flock::lock(f, FlockArg::LockExclusiveNonblock) {
        Ok(_held) => {
            println!("locked");
            let _ = std::io::stdout().flush();
            sleep_forever()
        }
        Err((_, nix::errno::Errno::EWOULDBLOCK)) => {
            eprintln!("vxstub: the lock is held by another process");
            LOCK_HELD_EXIT
        }
        Err((_, e)) => {
            eprintln!("vxstub: flock failed: {e}");
            1
        }
    }
}
