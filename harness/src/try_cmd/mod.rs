//! `vxcert try --profile P [--contract NAME]…`: runs each command the profile claims
//! once, on an input the kit knows to be valid, and shows what it did (argv, exit
//! status, duration, the ends of stdout and stderr, the files it created or changed)
//! so the author of a profile debugs it before the suite. Programs are started as the
//! suite starts them: in a private sandbox (`HOME`, XDG directories, socket), with
//! the profile's `env` and nothing else inherited but `PATH`.

mod plans;

use crate::contract::Contract;
use crate::drivers::sandbox::{self, Placeholders};
use crate::evidence::CommandRun;
use crate::profile::Profile;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant};

#[derive(clap::Args, Debug)]
pub struct TryArgs {
    /// The profile to try.
    #[arg(long, value_name = "FILE")]
    pub profile: PathBuf,
    /// A contract to try (repeatable; default: every contract the profile claims).
    #[arg(long = "contract", value_name = "NAME")]
    pub contracts: Vec<String>,
    /// What `{bin_dir}` means (default: the directory of vxcert itself).
    #[arg(long, value_name = "DIR")]
    pub bin_dir: Option<PathBuf>,
}

/// How long one command may run (scaled by the profile's `timeout_multiplier`).
const COMMAND_MS: u64 = 30_000;

/// One command run by `try`, and what it showed.
pub struct Attempt {
    /// `[persist] pack`: the profile key.
    pub key: String,
    /// What the kit gave it, in words.
    pub input: String,
    pub run: Option<CommandRun>,
    /// Files under the sandbox created, changed or removed by the command.
    pub files: Vec<crate::evidence::FileChange>,
    /// `Ok(what it showed)` or `Err(what is wrong and what to check)`.
    pub verdict: Result<String, String>,
}

/// One contract's sandbox: the scenario directories, the placeholders, the env.
pub struct Bench {
    _dir: crate::drivers::sandbox::SandboxDir,
    pub root: PathBuf,
    pub ph: Placeholders,
    pub env: Vec<(String, String)>,
    pub deadline: Duration,
    pub attempts: Vec<Attempt>,
}

impl Bench {
    fn new(profile: &Profile, bin_dir: &Path) -> Bench {
        let (dir, mut ph) = sandbox::create(bin_dir.to_path_buf());
        ph.store = ph.state_home.join("store");
        Bench {
            root: dir.path().to_path_buf(),
            _dir: dir,
            ph,
            env: profile
                .env
                .iter()
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect(),
            deadline: Duration::from_millis(
                (COMMAND_MS as f64 * profile.timeout_multiplier) as u64,
            ),
            attempts: Vec::new(),
        }
    }

    /// The command of `template` with these extra placeholders filled, as the suite
    /// would start it.
    pub fn command(&self, template: &[String], extra: &[(&str, String)]) -> std::process::Command {
        let words: Vec<String> = template
            .iter()
            .map(|w| {
                extra
                    .iter()
                    .fold(w.clone(), |w, (name, value)| w.replace(name, value))
            })
            .collect();
        sandbox::command(&self.ph, &words, &self.env, &self.root)
    }

    /// Runs `cmd` to its end (or the deadline), records it with the sandbox's changes,
    /// and judges it with `judge` (given the run).
    pub fn run(
        &mut self,
        key: &str,
        input: &str,
        mut cmd: std::process::Command,
        judge: impl FnOnce(&CommandRun) -> Result<String, String>,
    ) -> bool {
        let before = snapshot(&self.root);
        let outcome = run_to_end(&mut cmd, &self.root, self.deadline);
        let files = crate::evidence::diff(&before, &snapshot(&self.root))
            .into_iter()
            .filter(|f| !f.path.starts_with(".try-"))
            .collect();
        let (run, verdict) = match outcome {
            Ok(run) => {
                let v = judge(&run);
                (Some(run), v)
            }
            Err(e) => (None, Err(e)),
        };
        let ok = verdict.is_ok();
        self.attempts.push(Attempt {
            key: key.into(),
            input: input.into(),
            run,
            files,
            verdict,
        });
        ok
    }

    /// Starts a long-running program, waits until `ready` says so (or it exits, or
    /// the readiness deadline passes), then stops it with SIGTERM (SIGKILL after 5 s).
    pub fn start_and_stop(
        &mut self,
        key: &str,
        input: &str,
        mut cmd: std::process::Command,
        ready_within: Duration,
        ready: impl Fn() -> Option<String>,
    ) -> bool {
        let before = snapshot(&self.root);
        let (out, err) = (self.root.join(".try-out"), self.root.join(".try-err"));
        let start = Instant::now();
        let spawned = std::fs::File::create(&out)
            .and_then(|o| Ok((o, std::fs::File::create(&err)?)))
            .and_then(|(o, e)| cmd.stdin(Stdio::piped()).stdout(o).stderr(e).spawn());
        let mut child = match spawned {
            Ok(c) => c,
            Err(e) => {
                self.attempts.push(Attempt {
                    key: key.into(),
                    input: input.into(),
                    run: None,
                    files: Vec::new(),
                    verdict: Err(cannot_start(&cmd, &e)),
                });
                return false;
            }
        };
        let mut verdict = Err(format!(
            "not ready within {} ms (raise [readiness] timeout_ms or timeout_multiplier if it is slow)",
            ready_within.as_millis()
        ));
        while start.elapsed() < ready_within {
            // After an exit too: a daemonizing program leaves once its daemon serves.
            let exited = matches!(child.try_wait(), Ok(Some(_)));
            if let Some(what) = ready() {
                verdict = Ok(format!(
                    "ready after {} ms ({what}); stopped with SIGTERM",
                    start.elapsed().as_millis()
                ));
                break;
            }
            if exited {
                let status = child.wait().map(|s| s.to_string()).unwrap_or_default();
                verdict = Err(format!(
                    "it exited ({status}) before it was ready: a server must stay in the foreground \
                     (a daemonizing one must serve before it exits)"
                ));
                break;
            }
            std::thread::sleep(Duration::from_millis(25));
        }
        let status = stop(&mut child);
        let run = CommandRun::of(
            &cmd,
            status,
            start.elapsed(),
            &std::fs::read(&out).unwrap_or_default(),
            &std::fs::read(&err).unwrap_or_default(),
        );
        let files = crate::evidence::diff(&before, &snapshot(&self.root))
            .into_iter()
            .filter(|f| !f.path.starts_with(".try-"))
            .collect();
        let ok = verdict.is_ok();
        self.attempts.push(Attempt {
            key: key.into(),
            input: input.into(),
            run: Some(run),
            files,
            verdict,
        });
        ok
    }

    /// A key the profile does not give, for a claimed part whose rows do not need it.
    pub fn not_tried(&mut self, key: &str, why: &str) {
        self.attempts.push(Attempt {
            key: key.into(),
            input: String::new(),
            run: None,
            files: Vec::new(),
            verdict: Ok(format!("not tried: {why}")),
        });
    }
}

/// Every entry but directories under `root` (symlinks not followed): a file by its
/// bytes, anything else by its kind, to tell what a command created, changed or removed.
fn snapshot(root: &Path) -> BTreeMap<String, Vec<u8>> {
    fn walk(dir: &Path, prefix: &str, out: &mut BTreeMap<String, Vec<u8>>) {
        let Ok(entries) = std::fs::read_dir(dir) else {
            return;
        };
        for e in entries.flatten() {
            let rel = format!("{prefix}{}", e.file_name().to_string_lossy());
            let Ok(t) = e.file_type() else { continue };
            let state = if t.is_dir() {
                walk(&e.path(), &format!("{rel}/"), out);
                continue;
            } else if t.is_file() {
                std::fs::read(e.path()).unwrap_or_default()
            } else if t.is_symlink() {
                b"symlink".to_vec()
            } else {
                b"other".to_vec()
            };
            out.insert(rel, state);
        }
    }
    let mut out = BTreeMap::new();
    walk(root, "", &mut out);
    out
}

/// SIGTERM, then SIGKILL after 5 s; the exit status.
fn stop(child: &mut std::process::Child) -> std::process::ExitStatus {
    use nix::sys::signal::{kill, Signal};
    let pid = nix::unistd::Pid::from_raw(child.id() as i32);
    drop(child.stdin.take());
    if let Ok(Some(s)) = child.try_wait() {
        return s;
    }
    let _ = kill(pid, Signal::SIGTERM);
    let until = Instant::now() + Duration::from_secs(5);
    while Instant::now() < until {
        if let Ok(Some(s)) = child.try_wait() {
            return s;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let _ = child.kill();
    child.wait().unwrap_or_else(|_| {
        use std::os::unix::process::ExitStatusExt;
        std::process::ExitStatus::from_raw(9)
    })
}

fn cannot_start(cmd: &std::process::Command, e: &std::io::Error) -> String {
    format!(
        "cannot start {}: {e} (check the program path in the profile; {{bin_dir}} is the \
         --bin-dir given to vxcert, else vxcert's own directory)",
        crate::drivers::start_state::shown_argv(cmd)
            .0
            .to_string_lossy()
    )
}

/// Runs `cmd` to its end with stdin closed, stdout and stderr to files, killing it
/// at `deadline`.
fn run_to_end(
    cmd: &mut std::process::Command,
    dir: &Path,
    deadline: Duration,
) -> Result<CommandRun, String> {
    let (out, err) = (dir.join(".try-out"), dir.join(".try-err"));
    let start = Instant::now();
    let files = std::fs::File::create(&out)
        .and_then(|o| Ok((o, std::fs::File::create(&err)?)))
        .map_err(|e| format!("cannot create the output files in {}: {e}", dir.display()))?;
    let mut child = cmd
        .stdin(Stdio::null())
        .stdout(files.0)
        .stderr(files.1)
        .spawn()
        .map_err(|e| cannot_start(cmd, &e))?;
    let status = loop {
        if let Ok(Some(s)) = child.try_wait() {
            break Some(s);
        }
        if start.elapsed() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            break None;
        }
        std::thread::sleep(Duration::from_millis(10));
    };
    let Some(status) = status else {
        return Err(format!(
            "still running after {} ms: killed (a command must exit; raise timeout_multiplier if it is slow)",
            deadline.as_millis()
        ));
    };
    Ok(CommandRun::of(
        cmd,
        status,
        start.elapsed(),
        &std::fs::read(&out).unwrap_or_default(),
        &std::fs::read(&err).unwrap_or_default(),
    ))
}

/// Exit 0, or the problem.
pub fn exit_zero(run: &CommandRun) -> Result<String, String> {
    match run.exit_status {
        Some(0) => Ok("exit 0".into()),
        _ => Err(format!(
            "{} on a valid input (the suite expects exit 0; see stderr)",
            run.exit_words()
        )),
    }
}

pub fn run(args: &TryArgs) -> i32 {
    match run_inner(args) {
        Ok(all_ok) => i32::from(!all_ok),
        Err(e) => {
            eprintln!("vxcert try: {e}");
            2
        }
    }
}

fn run_inner(args: &TryArgs) -> Result<bool, String> {
    let profile = Profile::load(&args.profile)?;
    let contracts: Vec<Contract> = if args.contracts.is_empty() {
        profile
            .contracts
            .iter()
            .filter_map(|c| Contract::from_name(c))
            .collect()
    } else {
        let mut out = Vec::new();
        for n in &args.contracts {
            let c = Contract::from_name(n).ok_or_else(|| {
                format!(
                    "--contract {n:?}: no such contract (known: {})",
                    Contract::names().join(", ")
                )
            })?;
            if !profile.claims(c.name()) {
                return Err(format!(
                    "--contract {c}: the profile {} does not claim it (add it to `contracts`)",
                    args.profile.display()
                ));
            }
            out.push(c);
        }
        out
    };
    let bin_dir = match &args.bin_dir {
        Some(d) => d
            .canonicalize()
            .map_err(|e| format!("--bin-dir {}: {e}", d.display()))?,
        None => std::env::current_exe()
            .map_err(|e| e.to_string())?
            .parent()
            .map(Path::to_path_buf)
            .ok_or("no directory for vxcert")?,
    };
    let kit = crate::assets::root().map_err(|e| e.to_string())?;
    let mut all_ok = true;
    for c in contracts {
        let mut bench = Bench::new(&profile, &bin_dir);
        let parts = profile.claimed_parts(c);
        if parts.is_empty() {
            println!("== {c}");
        } else {
            println!("== {c} (parts: {})", parts.join(", "));
        }
        println!("   sandbox: {} (removed at the end)", bench.root.display());
        plans::run(c, &profile, kit, &mut bench)?;
        for a in &bench.attempts {
            all_ok &= a.verdict.is_ok();
            print!("{}", show(a));
        }
    }
    println!(
        "{}",
        if all_ok {
            "vxcert try: every command did what the suite expects of a valid input; next: vxcert run --profile ..."
        } else {
            "vxcert try: some commands did not (PROBLEM above); fix the profile or the program first"
        }
    );
    Ok(all_ok)
}

/// What one attempt showed, as `try` prints it.
pub fn show(a: &Attempt) -> String {
    let mut out = format!("\n-- {}", a.key);
    if !a.input.is_empty() {
        out += &format!(": {}", a.input);
    }
    out += "\n";
    if let Some(r) = &a.run {
        out += &format!("   $ {}\n", shell_words(&r.argv));
        out += &format!("   {} in {} ms\n", r.exit_words(), r.duration_ms);
        for (name, text) in [("stdout", &r.stdout_tail), ("stderr", &r.stderr_tail)] {
            let lines: Vec<&str> = text.lines().collect();
            if lines.is_empty() {
                continue;
            }
            out += &format!("   {name}:\n");
            for l in &lines[lines.len().saturating_sub(8)..] {
                out += &format!("     | {l}\n");
            }
        }
    }
    let mut by_change: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
    for f in &a.files {
        by_change.entry(f.change).or_default().push(&f.path);
    }
    for (change, paths) in by_change {
        out += &format!("   files {change}: {}\n", paths.join(", "));
    }
    out += &match &a.verdict {
        Ok(what) => format!("   ok: {what}\n"),
        Err(why) => format!("   PROBLEM: {why}\n"),
    };
    out
}

fn shell_words(argv: &[String]) -> String {
    argv.iter()
        .map(|w| {
            if !w.is_empty()
                && w.chars()
                    .all(|c| c.is_ascii_alphanumeric() || "/._-:=@{}+,".contains(c))
            {
                w.clone()
            } else {
                format!("'{}'", w.replace('\'', r"'\''"))
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}
