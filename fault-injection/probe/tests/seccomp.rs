//! The seccomp backend on programs the preload cannot see: a Go program and a static C
//! program (tests/seccomp/programs.rs builds them). Every action of the plan language,
//! every family, threads, child processes and per-process counting, each checked
//! against what the program itself reports and what is on disk.

mod common;
#[path = "seccomp/programs.rs"]
mod programs;

use std::fs;
use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use common::{glob, parse_steps, tempdir, Run};
use programs::{go, programs, Program};
use vxfault::{Backend, Injector, SetupError};

const EIO: i64 = 5;
const ENOSPC: i64 = 28;

/// Runs `p` with `steps` in `dir` under `plan` (backend `auto`, which must pick
/// seccomp for these programs).
fn run(p: &Program, plan: &str, dir: &Path, steps: &[&str]) -> Run {
    run_with(p, Injector::new(plan).expect("plan"), dir, steps)
}

fn run_with(p: &Program, inj: Injector, dir: &Path, steps: &[&str]) -> Run {
    let mut cmd = Command::new(&p.path);
    cmd.args(steps).current_dir(dir);
    let (outcome, out) = inj.output(&mut cmd).expect("run the program");
    assert_eq!(
        outcome.backend,
        Backend::Seccomp,
        "{}: {}",
        p.name,
        outcome.backend_reason
    );
    let trace = outcome.records().expect("trace");
    Run {
        steps: parse_steps(&out.stdout),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        outcome,
        trace,
    }
}

fn read(dir: &Path, name: &str) -> String {
    fs::read_to_string(dir.join(name)).unwrap_or_default()
}

#[test]
fn auto_chooses_seccomp_and_a_crash_kills_the_go_program_at_its_rename() {
    let Some(p) = go() else { return };
    let d = tempdir();
    let plan = format!("rename@{}/*#1=crash", glob(d.path()));
    let r = run(
        &p,
        &plan,
        d.path(),
        &["create:a", "write:a:x", "rename:a:b"],
    );
    assert_eq!(r.signal(), Some(9), "killed: {}", r.stderr);
    assert!(r.outcome.backend_reason.contains("Go program"));
    assert!(d.path().join("a").exists() && !d.path().join("b").exists());
    let loaded: Vec<_> = r.trace.iter().filter(|t| t.op == "loaded").collect();
    assert_eq!(loaded.len(), 1);
    assert_eq!(loaded[0].backend.as_deref(), Some("seccomp"));
    let hit = r.fired(1);
    assert_eq!(hit.len(), 1);
    assert_eq!(
        (hit[0].op.as_str(), hit[0].action.as_str(), hit[0].result),
        ("rename", "crash", None)
    );
    assert!(hit[0].path2.as_deref().unwrap().ends_with("/b"));
    assert_eq!(r.outcome.rules[0].fired, 1);
    r.outcome.injectable().unwrap();
}

#[test]
fn errno_short_and_lie_on_writes() {
    for p in programs() {
        let d = tempdir();
        let g = glob(d.path());
        // ENOSPC: the call fails and writes nothing.
        let r = run(
            &p,
            &format!("write@{g}/a=ENOSPC"),
            d.path(),
            &["create:a", "write:a:hello"],
        );
        let s = r.step("write:");
        assert_eq!((s.ret, s.errno), (-1, ENOSPC), "{}", p.name);
        assert_eq!(read(d.path(), "a"), "");
        assert_eq!(r.fired(1)[0].errno, ENOSPC);
        // short:3 on the first write: 3 bytes land and the call returns 3. Go's
        // os.File.Write writes the rest in a second call, the C program does not.
        let r = run(
            &p,
            &format!("write@{g}/b#1=short:3"),
            d.path(),
            &["create:b", "write:b:hello"],
        );
        let writes: Vec<_> = r
            .calls()
            .into_iter()
            .filter(|t| t.op == "write" && t.path.ends_with("/b"))
            .collect();
        assert_eq!(
            (writes[0].action.as_str(), writes[0].result),
            ("short:3", Some(3))
        );
        if p.name == "go" {
            assert_eq!(
                (r.step("write:").ret, read(d.path(), "b").as_str()),
                (5, "hello")
            );
            assert_eq!(writes.len(), 2, "the rest in a second call");
        } else {
            assert_eq!(
                (r.step("write:").ret, read(d.path(), "b").as_str()),
                (3, "hel")
            );
        }
        // lie: success without the call.
        let r = run(
            &p,
            &format!("write@{g}/c=lie"),
            d.path(),
            &["create:c", "write:c:hello"],
        );
        assert_eq!(r.step("write:").ret, 5, "{}", p.name);
        assert_eq!(read(d.path(), "c"), "");
        assert_eq!(r.fired(1)[0].result, Some(5));
    }
}

#[test]
fn torn_crash_after_and_crash_kill_where_the_action_says() {
    for p in programs() {
        let d = tempdir();
        let g = glob(d.path());
        let r = run(
            &p,
            &format!("write@{g}/a=torn:2"),
            d.path(),
            &["create:a", "write:a:hello", "create:after"],
        );
        assert_eq!(r.signal(), Some(9), "{}", p.name);
        assert_eq!(read(d.path(), "a"), "he");
        assert!(
            !d.path().join("after").exists(),
            "nothing ran after the kill"
        );
        assert_eq!(r.fired(1)[0].result, Some(2));

        let r = run(
            &p,
            &format!("rename@{g}/*=crash-after"),
            d.path(),
            &["create:x", "rename:x:y", "create:after"],
        );
        assert_eq!(r.signal(), Some(9));
        assert!(
            d.path().join("y").exists() && !d.path().join("x").exists(),
            "renamed, then killed"
        );
        assert_eq!(r.fired(1)[0].result, Some(0));
        assert!(!d.path().join("after").exists());

        let r = run(
            &p,
            &format!("fsync@{g}/y2=crash"),
            d.path(),
            &["create:y2", "write:y2:z", "fsync:y2", "create:after"],
        );
        assert_eq!(r.signal(), Some(9));
        assert_eq!(read(d.path(), "y2"), "z");
        assert!(!d.path().join("after").exists());
    }
}

/// `crash-after` of a lock: the process holds it and never runs again. Were the
/// kernel left to make the call, the process would run on until the SIGKILL landed
/// (long enough, in a broker, to fork a child that inherits the lock); the runs are
/// repeated because that window was a race.
#[test]
fn crash_after_a_lock_takes_it_and_the_process_never_runs_again() {
    for p in programs() {
        for round in 0..15 {
            let d = tempdir();
            let g = glob(d.path());
            let r = run(
                &p,
                &format!("flock@{g}/l=crash-after"),
                d.path(),
                &["flock:l", "create:after"],
            );
            assert_eq!(
                r.signal(),
                Some(9),
                "{} round {round}: {}",
                p.name,
                r.stderr
            );
            assert!(
                !d.path().join("after").exists(),
                "{} round {round}: the program ran on after its lock",
                p.name
            );
            assert_eq!(r.fired(1)[0].action, "crash-after");
            // The lock went with the process. Bounded: the supervisor's copy of the
            // locked fd is close-on-exec, but a child another test of this binary
            // forks in that instant holds it until its exec (a leaked copy never
            // frees it, and fails here).
            let f = fs::File::open(d.path().join("l")).unwrap();
            let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
            let free = loop {
                // SAFETY: flock takes our fd and an integer.
                let r = unsafe {
                    libc::flock(
                        std::os::fd::AsRawFd::as_raw_fd(&f),
                        libc::LOCK_EX | libc::LOCK_NB,
                    )
                };
                if r == 0 || std::time::Instant::now() > deadline {
                    break r;
                }
                std::thread::sleep(std::time::Duration::from_millis(10));
            };
            assert_eq!(free, 0, "{} round {round}: the lock is free", p.name);
        }
    }
}

#[test]
fn after_errno_does_the_call_and_delay_waits() {
    for p in programs() {
        let d = tempdir();
        let g = glob(d.path());
        let r = run(
            &p,
            &format!("rename@{g}/*=after:EIO"),
            d.path(),
            &["create:a", "rename:a:b"],
        );
        let s = r.step("rename:");
        assert_eq!((s.ret, s.errno), (-1, EIO), "{}", p.name);
        assert!(d.path().join("b").exists(), "the rename happened");
        assert_eq!(r.fired(1)[0].real_result, Some(0));

        let r = run(
            &p,
            &format!("mkdir@{g}/*=after:ENOSPC"),
            d.path(),
            &["mkdir:m"],
        );
        assert_eq!(r.step("mkdir:").errno, ENOSPC);
        assert!(d.path().join("m").is_dir());

        let start = Instant::now();
        let r = run(
            &p,
            &format!("fsync@{g}/f=delay:300"),
            d.path(),
            &["create:f", "fsync:f"],
        );
        assert!(start.elapsed() >= Duration::from_millis(300));
        assert_eq!(r.step("fsync:").ret, 0);
        assert_eq!(r.fired(1)[0].action, "delay:300");
    }
}

#[test]
fn every_family_fails_with_its_errno() {
    for p in programs() {
        let d = tempdir();
        let g = glob(d.path());
        fs::write(d.path().join("lk"), "").unwrap();
        let cases: &[(&str, &[&str], &str, i64)] = &[
            ("open@{g}/a=EACCES", &["create:a"], "create:", 13),
            ("close@{g}/a=EIO", &["create:a", "close:a"], "close:", EIO),
            ("fsync@{g}=EIO", &["fsyncdir:."], "fsyncdir:", EIO),
            (
                "unlink@{g}/a=EPERM",
                &["create:a", "unlink:a"],
                "unlink:",
                1,
            ),
            ("mkdir@{g}/m=EDQUOT", &["mkdir:m"], "mkdir:", 122),
            ("rmdir@{g}/m=EBUSY", &["mkdir:m", "rmdir:m"], "rmdir:", 16),
            ("link@{g}/h=EMLINK", &["create:a", "link:a:h"], "link:", 31),
            ("link@{g}/s=EROFS", &["symlink:a:s"], "symlink:", 30),
            ("flock@{g}/lk=EWOULDBLOCK", &["flock:lk"], "flock:", 11),
            (
                "ftruncate@{g}/lk=EFBIG",
                &["flock:lk", "truncate:lk:0"],
                "truncate:",
                27,
            ),
        ];
        for (plan, steps, step, errno) in cases {
            let plan = plan.replace("{g}", &g);
            let r = run(&p, &plan, d.path(), steps);
            let s = r.step(step);
            assert_eq!(
                (s.ret, s.errno),
                (-1, *errno),
                "{} under {plan}: {}",
                p.name,
                r.stderr
            );
            assert_eq!(r.outcome.rules[0].fired, 1, "{} under {plan}", p.name);
            let _ = fs::remove_dir(d.path().join("m"));
            let _ = fs::remove_file(d.path().join("a"));
        }
        // A directory fsync is marked as one.
        let r = run(&p, &format!("fsync@{g}=EIO"), d.path(), &["fsyncdir:."]);
        assert_eq!(r.fired(1)[0].dir, Some(true));
    }
}

#[test]
fn threads_get_exactly_the_planned_faults() {
    for p in programs() {
        let d = tempdir();
        let g = glob(d.path());
        let r = run(
            &p,
            &format!("write@{g}/w2#3=EIO"),
            d.path(),
            &["writers:4:5"],
        );
        let errors: Vec<_> = r
            .steps
            .iter()
            .filter(|s| s.step.starts_with("writers:write"))
            .collect();
        assert_eq!(errors.len(), 1, "{}: {:?}", p.name, r.steps);
        assert_eq!(
            (errors[0].step.as_str(), errors[0].errno),
            ("writers:write:2:3", EIO)
        );
        for i in 0..4 {
            let want = if i == 2 { 32 } else { 40 };
            assert_eq!(
                read(d.path(), &format!("w{i}")).len(),
                want,
                "{} w{i}",
                p.name
            );
        }
        assert_eq!(
            (r.outcome.rules[0].matched, r.outcome.rules[0].fired),
            (5, 1)
        );
        // A random fault: the program saw exactly the calls the trace says fired.
        let inj = Injector::new(&format!("write@{g}/w*%40=EIO"))
            .unwrap()
            .seed(7);
        let r = run_with(&p, inj, d.path(), &["writers:3:10"]);
        let seen = r
            .steps
            .iter()
            .filter(|s| s.step.starts_with("writers:write"))
            .count();
        assert_eq!(seen as u64, r.outcome.rules[0].fired, "{}", p.name);
        assert_eq!(r.outcome.rules[0].matched, 30);
        assert!(seen > 0 && seen < 30);
    }
}

#[test]
fn children_stay_under_the_filter_and_count_per_process_or_per_tree() {
    let Some(p) = go() else { return };
    let d = tempdir();
    let g = glob(d.path());
    let prog = p.path.display().to_string();
    let script = format!("'{prog}' create:a rename:a:b; '{prog}' create:c rename:c:e");
    for (plan, failed) in [("#1", 2), ("##2", 1)] {
        let mut cmd = Command::new("sh");
        cmd.args(["-c", &script]).current_dir(d.path());
        let inj = Injector::new(&format!("rename@{g}/*{plan}=EIO"))
            .unwrap()
            .backend(Backend::Seccomp);
        let (o, out) = inj.output(&mut cmd).unwrap();
        let steps = parse_steps(&out.stdout);
        let fails = steps
            .iter()
            .filter(|s| s.step.starts_with("rename") && s.errno == EIO)
            .count();
        assert_eq!(fails, failed, "{plan}: {steps:?}");
        assert_eq!(o.loaded, 3, "sh and two Go processes");
        let pids: std::collections::HashSet<i64> = steps.iter().map(|s| s.pid).collect();
        assert_eq!(pids.len(), 2);
        let _ = fs::remove_file(d.path().join("b"));
        let _ = fs::remove_file(d.path().join("e"));
    }
}

#[test]
fn a_plan_the_backend_cannot_honour_is_refused_before_running() {
    let Some(p) = go() else { return };
    let d = tempdir();
    let marker = d.path().join("ran");
    let mut cmd = Command::new(&p.path);
    cmd.arg(format!("create:{}", marker.display()));
    let err = Injector::new("close=after:EIO")
        .unwrap()
        .backend(Backend::Seccomp)
        .run(&mut cmd)
        .unwrap_err();
    let setup = SetupError::of(&err).expect("a setup error");
    assert!(
        setup.to_string().contains("needs the preload backend"),
        "{setup}"
    );
    assert!(!marker.exists(), "nothing ran");
}

#[test]
fn points_list_the_go_programs_calls() {
    let Some(p) = go() else { return };
    let d = tempdir();
    let mut cmd = Command::new(&p.path);
    cmd.args(["create:a", "write:a:x", "fsync:a", "close:a", "rename:a:b"])
        .current_dir(d.path());
    let filter = vxfault::PointFilter {
        glob: Some(format!("{}/*", glob(d.path()))),
        ..Default::default()
    };
    let pts = vxfault::points(&mut cmd, &filter).unwrap();
    let ops: Vec<&str> = pts.points.iter().map(|p| p.op.as_str()).collect();
    assert_eq!(
        ops,
        ["open", "write", "fsync", "close", "rename"],
        "{:?}",
        pts.points
    );
    // The listed rule fails exactly that call on a rerun.
    let rename = &pts.points[4].rule;
    let r = run(
        &p,
        &format!("{rename}=EIO"),
        d.path(),
        &["create:a", "write:a:x", "rename:a:b"],
    );
    assert_eq!(r.step("rename:").errno, EIO);
}

/// `vxfault record` + `explore` on a Go program's publish: the correct one (tmp,
/// write, fsync, rename, directory fsync) survives every posix crash state; without
/// the file fsync a state publishes an empty file.
#[test]
fn record_and_explore_a_go_publish() {
    use vxfault::crash::{self, Checker, Model, Options};
    let Some(p) = go() else { return };
    let check = r#"test "$(cat {root}/cur)" = gen1 || test "$(cat {root}/cur)" = gen2"#;
    for (fsync, failing) in [(true, false), (false, true)] {
        let d = tempdir();
        let root = d.path().join("root");
        fs::create_dir(&root).unwrap();
        fs::write(root.join("cur"), "gen1").unwrap();
        let mut steps = vec!["create:tmp", "write:tmp:gen2"];
        if fsync {
            steps.push("fsync:tmp");
        }
        steps.extend(["close:tmp", "rename:tmp:cur", "fsyncdir:."]);
        let mut cmd = Command::new(&p.path);
        cmd.args(&steps).current_dir(&root);
        let out = d.path().join("rec");
        let r = crash::record_with(&out, &root, &mut cmd, Backend::Auto).unwrap();
        assert!(r.status.success());
        assert_eq!(read(&root, "cur"), "gen2");
        let opts = Options {
            model: Model::Posix,
            checker: Checker::new(check).unwrap(),
            jobs: 2,
            only: None,
            timeout: Duration::from_secs(30),
        };
        let report = crash::explore(&out, None, &opts).unwrap();
        let ops: Vec<String> = crash::read(&out, None)
            .unwrap()
            .ops
            .iter()
            .map(|o| o.describe())
            .collect();
        assert!(ops.iter().any(|o| o == "rename tmp -> cur"), "{ops:?}");
        assert_eq!(
            !report.violations.is_empty(),
            failing,
            "fsync {fsync}: {ops:?}"
        );
    }
}
