//! `evidence.reproduce`: a directory under the report holding a scenario's sandbox as
//! it was when the scenario ended and a `repro.sh` that runs the failing step's
//! commands again against the implementation alone (test262's saved failing tests).

use crate::evidence::CommandRun;
use std::path::{Path, PathBuf};

/// The most bytes of sandbox a reproduction copies; larger files are left out (and
/// named in `repro.sh`).
const MAX_COPY: u64 = 64 << 20;

/// How long one replayed command may run (`timeout`'s exit 124 past it): a FIFO or
/// a lock the implementation waits on must not hang the replay.
const BOUND_S: u32 = 60;

/// Writes `<report>/repro/<name>/` for `commands` (the failing step's), returning the
/// directory relative to the report; `None` when there is nothing to replay.
pub fn write(report: &Path, name: &str, commands: &[CommandRun]) -> Option<String> {
    let first = commands.first()?;
    let rel = PathBuf::from("repro").join(name);
    let dir = report.join(&rel);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).ok()?;
    let mut skipped = Vec::new();
    let sandbox = first.cwd.clone();
    if let Some(src) = &sandbox {
        let mut budget = MAX_COPY;
        let roots = Roots {
            src,
            dst: &dir.join("sandbox"),
        };
        copy_tree(&roots, src, &dir.join("sandbox"), &mut budget, &mut skipped);
    }
    let mut script = String::from(
        "#!/bin/sh\n# Replays the failing step's commands against the implementation alone.\n\
         # ./sandbox is the scenario's directory as it was when the scenario ended.\n\
         # Links into it point into the copy; FIFOs and sockets are made again.\n\
         here=$(cd \"$(dirname \"$0\")\" && pwd)\ncd \"$here/sandbox\" 2>/dev/null || cd \"$here\"\n",
    );
    script += &format!(
        "# Each command runs under `timeout -k 5 {BOUND_S}`: exit 124 means it was still running.\n"
    );
    for s in &skipped {
        script += &format!("# not copied (over the size budget or not a plain file): {s}\n");
    }
    let local = |w: &str| match &sandbox {
        Some(sb) => {
            let sb = sb.to_string_lossy();
            if w.contains(sb.as_ref()) {
                format!(
                    "\"{}\"",
                    w.replace(sb.as_ref(), "$here/sandbox").replace('"', "\\\"")
                )
            } else {
                quote(w)
            }
        }
        None => quote(w),
    };
    for c in commands {
        script += &format!("# originally: {}\n(env ", c.exit_words());
        for (k, v) in &c.env {
            script += &format!("{k}={} ", local(v));
        }
        script += &format!("timeout -k 5 {BOUND_S} ");
        let argv: Vec<String> = c.argv.iter().map(|w| local(w)).collect();
        script += &argv.join(" ");
        script += " </dev/null)\necho \"exit $?\"\n";
    }
    let path = dir.join("repro.sh");
    std::fs::write(&path, script).ok()?;
    use std::os::unix::fs::PermissionsExt;
    let _ = std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755));
    Some(rel.to_string_lossy().into_owned())
}

/// How to run one scenario again with the kit (a live row: the suite itself starts
/// the implementation's processes): the run's own programs and paths.
#[derive(Debug, Clone)]
pub struct Rerun {
    pub vxcert: PathBuf,
    pub profile: Option<PathBuf>,
    pub features: Option<PathBuf>,
    pub bin_dir: Option<PathBuf>,
}

/// How long a live row's rerun may take.
const RERUN_BOUND_S: u32 = 600;

/// `--at FILE:LINE`.
pub fn parse_at(s: &str) -> Result<(String, usize), String> {
    let (file, line) = s
        .rsplit_once(':')
        .ok_or_else(|| format!("{s:?}: expected FILE:LINE, e.g. 08_faults.feature:28"))?;
    let line = line
        .parse()
        .map_err(|_| format!("{s:?}: the line {line:?} is not a number"))?;
    Ok((file.to_string(), line))
}

/// Writes `<report>/repro/<name>/repro.sh` running the scenario at `at` (feature
/// file, line) of `contract` alone with the kit, bounded, its report in `./out`;
/// returns the directory relative to the report.
pub fn write_rerun(
    report: &Path,
    name: &str,
    rerun: &Rerun,
    contract: crate::contract::Contract,
    at: &(String, usize),
) -> Option<String> {
    let rel = PathBuf::from("repro").join(name);
    let dir = report.join(&rel);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).ok()?;
    let mut words = vec![rerun.vxcert.display().to_string(), "run".into()];
    for (flag, path) in [
        ("--profile", &rerun.profile),
        ("--features", &rerun.features),
        ("--bin-dir", &rerun.bin_dir),
    ] {
        if let Some(p) = path {
            words.push(flag.into());
            words.push(p.display().to_string());
        }
    }
    words.extend([
        "--contract".into(),
        contract.name().into(),
        "--at".into(),
        format!("{}:{}", at.0, at.1),
    ]);
    let argv: Vec<String> = words.iter().map(|w| quote(w)).collect();
    let script = format!(
        "#!/bin/sh\n# Runs this scenario again, alone, with the kit: the suite starts the\n\
         # implementation's processes (a broker, a daemon) as the profile says, in a fresh\n\
         # sandbox. Its report goes to ./out (report.md has the evidence); exit 124: it ran\n\
         # past {RERUN_BOUND_S} s.\n\
         here=$(cd \"$(dirname \"$0\")\" && pwd)\n\
         timeout -k 5 {RERUN_BOUND_S} {} --report \"$here/out\"\necho \"exit $?\"\n",
        argv.join(" ")
    );
    let path = dir.join("repro.sh");
    std::fs::write(&path, script).ok()?;
    use std::os::unix::fs::PermissionsExt;
    let _ = std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755));
    Some(rel.to_string_lossy().into_owned())
}

fn quote(w: &str) -> String {
    if !w.is_empty()
        && w.chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_./=:@%+,".contains(c))
    {
        w.to_string()
    } else {
        format!("'{}'", w.replace('\'', "'\\''"))
    }
}

/// The sandbox copied and where its copy goes.
struct Roots<'a> {
    src: &'a Path,
    dst: &'a Path,
}

/// Copies plain files (within the budget), directories, symlinks (a target inside the
/// sandbox made relative, so it points into the copy), FIFOs and sockets (made
/// again, empty); a device is named as not copied.
fn copy_tree(roots: &Roots, src: &Path, dst: &Path, budget: &mut u64, skipped: &mut Vec<String>) {
    use std::os::unix::fs::FileTypeExt;
    let Ok(meta) = std::fs::symlink_metadata(src) else {
        return;
    };
    let ft = meta.file_type();
    if ft.is_symlink() {
        if let Ok(target) = std::fs::read_link(src) {
            let target = within_copy(roots, dst, &target).unwrap_or(target);
            let _ = std::os::unix::fs::symlink(target, dst);
        }
    } else if ft.is_fifo() {
        if nix::unistd::mkfifo(dst, nix::sys::stat::Mode::from_bits_truncate(0o600)).is_err() {
            skipped.push(src.display().to_string());
        }
    } else if ft.is_socket() {
        // A socket file nobody listens on, as the scenario left it.
        if std::os::unix::net::UnixListener::bind(dst).is_err() {
            skipped.push(src.display().to_string());
        }
    } else if ft.is_dir() {
        if std::fs::create_dir_all(dst).is_err() {
            return;
        }
        let Ok(rd) = std::fs::read_dir(src) else {
            return;
        };
        let mut entries: Vec<_> = rd.flatten().collect();
        entries.sort_by_key(|e| e.file_name());
        for e in entries {
            copy_tree(roots, &e.path(), &dst.join(e.file_name()), budget, skipped);
        }
    } else if ft.is_file() && meta.len() <= *budget {
        if std::fs::copy(src, dst).is_ok() {
            *budget -= meta.len();
        }
    } else {
        skipped.push(src.display().to_string());
    }
}

/// An absolute link target inside the copied sandbox, as a path relative to the
/// link `dst` (in the copy) that reaches the same place in the copy.
fn within_copy(roots: &Roots, dst: &Path, target: &Path) -> Option<PathBuf> {
    let inside = target.strip_prefix(roots.src).ok()?;
    let link_dir = dst.parent()?.strip_prefix(roots.dst).ok()?;
    let mut rel = PathBuf::new();
    for _ in link_dir.components() {
        rel.push("..");
    }
    Some(rel.join(inside))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Runs `cmd` and records it as the suite does.
    fn ran(cmd: &mut std::process::Command) -> CommandRun {
        let out = cmd.output().unwrap();
        CommandRun::of(
            cmd,
            out.status,
            Default::default(),
            &out.stdout,
            &out.stderr,
        )
    }

    #[test]
    fn the_script_replays_the_commands_in_a_copy_of_the_sandbox() {
        let sandbox = tempfile::tempdir().unwrap();
        std::fs::write(sandbox.path().join("in.txt"), "hello").unwrap();
        let mut cmd = std::process::Command::new("sh");
        cmd.args(["-c", "cat \"$1\"; exit 3", "x"])
            .arg(sandbox.path().join("in.txt"))
            .current_dir(sandbox.path());
        let report = tempfile::tempdir().unwrap();
        let rel = write(report.path(), "c/f-L1", &[ran(&mut cmd)]).unwrap();
        drop(sandbox);
        let replay = std::process::Command::new("sh")
            .arg(report.path().join(&rel).join("repro.sh"))
            .output()
            .unwrap();
        assert_eq!(String::from_utf8_lossy(&replay.stdout), "helloexit 3\n");
    }

    #[test]
    fn at_names_a_file_and_a_line() {
        assert_eq!(
            parse_at("08_faults.feature:38"),
            Ok(("08_faults.feature".to_string(), 38))
        );
        assert!(parse_at("08_faults.feature")
            .unwrap_err()
            .contains("FILE:LINE"));
        assert!(parse_at("a:b").unwrap_err().contains("not a number"));
    }

    /// A hostile destination replays as it was: a link to a file elsewhere in the
    /// sandbox reaches that file's copy, a FIFO is a FIFO again, and every command
    /// runs under a bound.
    #[test]
    fn links_fifos_and_a_bound_come_with_the_replay() {
        let sandbox = tempfile::tempdir().unwrap();
        let sb = sandbox.path();
        std::fs::create_dir_all(sb.join("outside")).unwrap();
        std::fs::create_dir_all(sb.join("pods/b")).unwrap();
        std::fs::write(sb.join("outside/t.txt"), "target").unwrap();
        std::os::unix::fs::symlink(sb.join("outside/t.txt"), sb.join("pods/b/key")).unwrap();
        nix::unistd::mkfifo(&sb.join("pods/b/f"), nix::sys::stat::Mode::S_IRUSR).unwrap();
        let mut cmd = std::process::Command::new("sh");
        cmd.args([
            "-c",
            "cat pods/b/key; test -p pods/b/f && echo ' fifo'; exit 3",
        ])
        .current_dir(sb);
        let report = tempfile::tempdir().unwrap();
        let rel = write(report.path(), "c/f-L2", &[ran(&mut cmd)]).unwrap();
        drop(sandbox);
        let script = std::fs::read_to_string(report.path().join(&rel).join("repro.sh")).unwrap();
        assert!(
            script.contains(&format!("timeout -k 5 {BOUND_S} sh")),
            "{script}"
        );
        let replay = std::process::Command::new("sh")
            .arg(report.path().join(&rel).join("repro.sh"))
            .output()
            .unwrap();
        assert_eq!(
            String::from_utf8_lossy(&replay.stdout),
            "target fifo\nexit 3\n"
        );
    }
}
