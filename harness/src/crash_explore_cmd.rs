//! `vxcert crash-explore`: records the implementation (the profile's `serve`)
//! publishing generation N+1 over a store holding a valid generation N (or, with
//! `--workload forget`, forgetting N), and checks every crash state the persistence
//! model allows by starting the implementation on it (`recovery::crash`).
//!
//! With `--publish FILE -- CMD ARGS...` the recorded program is CMD replacing FILE
//! instead (`publish`): any program, under the profile's `fault_backend`.
//!
//! Exit: 0 every state passes, 1 a state fails, 2 bad input or a harness error.

mod publish;

use std::path::PathBuf;

use crate::profile::{self, Profile, RunContext};
use crate::recovery::crash::{self, Expect, Workload};
use crate::recovery::scenario::Scenario;

#[derive(clap::Args, Debug)]
pub struct CrashExploreArgs {
    /// The implementation's profile (default: the reference's).
    #[arg(long, value_name = "FILE")]
    pub profile: Option<PathBuf>,
    /// Directory of the implementation's binaries, for `{bin_dir}` (default: vxcert's).
    #[arg(long, value_name = "DIR")]
    pub bin_dir: Option<PathBuf>,
    /// Persistence model: prefix, posix or ext4-ordered.
    #[arg(long, default_value = "posix")]
    pub model: String,
    /// What the recorded call does to the store.
    #[arg(long, value_enum, default_value_t = Workload::Checkpoint)]
    pub workload: Workload,
    /// A fault plan for the recorded run: `fsync@GLOB=lie` skips an fsync while
    /// reporting success, making a deliberately wrong publisher of the implementation.
    #[arg(long, default_value = "")]
    pub plan: String,
    /// Keep the recording here (default: removed with the sandbox).
    #[arg(long, value_name = "DIR")]
    pub keep: Option<PathBuf>,
    /// Record the command after `--` replacing FILE (relative to its root, `{root}`;
    /// `{file}` is FILE's path) instead of the profile's daemon: FILE must hold the
    /// old or the new generation whole in every crash state, the new one once
    /// acknowledged. The profile's `fault_backend` records it (seccomp for Go).
    #[arg(long, value_name = "FILE")]
    pub publish: Option<PathBuf>,
    /// The command for --publish.
    #[arg(last = true, value_name = "CMD")]
    pub command: Vec<String>,
    /// Internal: judge the one crash state in DIR (the explorer's checker).
    #[arg(long, value_name = "DIR", hide = true)]
    pub check_state: Option<PathBuf>,
    /// Internal: the recorded daemon's socket, for --check-state.
    #[arg(long, hide = true)]
    pub socket: Option<PathBuf>,
    /// Internal: generation N, for --check-state.
    #[arg(long, hide = true, default_value_t = 0)]
    pub old_generation: u64,
    /// Internal: the generation the recorded call acknowledged (N + 1 unless the
    /// daemon also wrote on its own), for --check-state.
    #[arg(long, hide = true)]
    pub new_generation: Option<u64>,
    /// Internal: the generations' topologies, for --check-state.
    #[arg(long, hide = true)]
    pub topology: Option<PathBuf>,
    /// Internal: SHA-256 of --publish's old generation, for --check-state.
    #[arg(long, hide = true)]
    pub old_sha256: Option<String>,
    /// Internal: SHA-256 of --publish's new generation, for --check-state.
    #[arg(long, hide = true)]
    pub new_sha256: Option<String>,
}

pub fn run(args: &CrashExploreArgs) -> i32 {
    // A failed step (the implementation not starting on a state, a call failing) is
    // one line, not a panic report.
    std::panic::set_hook(Box::new(|_| {}));
    let result = std::panic::catch_unwind(|| run_inner(args));
    match result {
        Ok(Ok(code)) => code,
        Ok(Err(e)) => {
            eprintln!("vxcert crash-explore: {e}");
            2
        }
        Err(payload) => {
            let f = crate::verdict::StepFailure::from_panic(payload.as_ref());
            let line = f.message.lines().next().unwrap_or("").to_string();
            if args.check_state.is_some() {
                // The judge's verdict on this state: the implementation failed on it.
                println!("{line}");
                1
            } else {
                eprintln!("vxcert crash-explore: {line}");
                2
            }
        }
    }
}

fn run_inner(args: &CrashExploreArgs) -> Result<i32, String> {
    let Ok(model) = args.model.parse::<vxfault::crash::Model>() else {
        return Err(format!(
            "unknown model (known: {})",
            vxfault::crash::Model::NAMES
        ));
    };
    let profile_path = match &args.profile {
        Some(p) => p.clone(),
        None => crate::run::default_profile()?,
    };
    let profile_path = std::path::absolute(&profile_path).map_err(|e| format!("--profile: {e}"))?;
    let loaded = Profile::load(&profile_path)?;
    let bin_dir = match &args.bin_dir {
        Some(d) => std::path::absolute(d).map_err(|e| format!("--bin-dir: {e}"))?,
        None => std::env::current_exe()
            .map_err(|e| e.to_string())?
            .parent()
            .map(std::path::Path::to_path_buf)
            .ok_or("no directory for vxcert")?,
    };
    crate::drivers::set_timeout_multiplier(loaded.timeout_multiplier);
    profile::set_context(RunContext {
        profile: loaded,
        bin_dir,
        profile_path: profile_path.clone(),
        faketime: None,
    })?;
    if let (Some(state), Some(file)) = (&args.check_state, &args.publish) {
        let p = publish::Published {
            file: file.clone(),
            old: args
                .old_sha256
                .clone()
                .ok_or("--check-state needs --old-sha256")?,
            new: args
                .new_sha256
                .clone()
                .ok_or("--check-state needs --new-sha256")?,
        };
        return Ok(match publish::check_state(state, &p) {
            Ok(()) => 0,
            Err(why) => {
                println!("{why}");
                1
            }
        });
    }
    if let Some(file) = &args.publish {
        let work = tempfile::Builder::new()
            .prefix("vxcert-publish-")
            .tempdir()
            .map_err(|e| format!("create the sandbox: {e}"))?;
        let (dir, published) = publish::record(work.path(), file, &args.command, &args.plan)?;
        if let Some(keep) = &args.keep {
            vxfault::crash::copy_tree(&dir, keep).map_err(|e| format!("--keep: {e}"))?;
        }
        let report = publish::explore(&dir, &published, model)?;
        for line in crash::summary(&report) {
            println!("{line}");
        }
        return Ok(if report.violations.is_empty() { 0 } else { 1 });
    }
    if !args.command.is_empty() {
        return Err("a command after `--` needs --publish FILE".into());
    }
    if let Some(state) = &args.check_state {
        let expect = Expect {
            old_generation: args.old_generation,
            new_generation: args.new_generation.unwrap_or(args.old_generation + 1),
            workload: args.workload,
            socket: args.socket.clone().ok_or("--check-state needs --socket")?,
            topology: args
                .topology
                .clone()
                .ok_or("--check-state needs --topology")?,
        };
        return Ok(match crash::check_state(state, &expect) {
            Ok(()) => 0,
            Err(why) => {
                println!("{why}");
                1
            }
        });
    }
    let mut s = Scenario::new();
    let (dir, expect) = crash::record(&mut s, args.workload, &args.plan);
    if let Some(keep) = &args.keep {
        vxfault::crash::copy_tree(&dir, keep).map_err(|e| format!("--keep: {e}"))?;
    }
    let report = crash::explore(&dir, &expect, model)?;
    for line in crash::summary(&report) {
        println!("{line}");
    }
    Ok(if report.violations.is_empty() { 0 } else { 1 })
}
