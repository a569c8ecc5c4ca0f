//! Matching, counting, probabilities, fork and exec, errno preservation, re-entrancy,
//! trace format and the load handshake.

mod common;

use std::fs;

use common::*;
use vxfault::Injector;

#[test]
fn paths_are_absolute_and_normalised() {
    let dir = tempdir();
    let d = dir.path();
    fs::create_dir(d.join("sub")).unwrap();
    let g = glob(&d.join("f"));
    // cwd-relative, dirfd-relative with `..`, and absolute with `./` and `//`.
    let steps = steps![
        "open:f:wc",
        format!("opendir:{}/sub", d.display()),
        "openat:dir:../f:w",
        format!("open:{}/./sub//../f:w", d.display()),
        format!("open:{}/other:wc", d.display()),
    ];
    let run = run_in(&format!("open@{g}=EACCES"), d, &steps);
    let rets: Vec<i64> = run.steps.iter().map(|s| s.ret).collect();
    assert_eq!(rets[0], -1, "{:?}", run.steps);
    assert!(rets[1] >= 0);
    assert_eq!(rets[2], -1, "{:?}", run.steps);
    assert_eq!(rets[3], -1, "{:?}", run.steps);
    assert!(rets[4] >= 0, "other paths pass");
    assert_eq!(run.outcome.rules[0].matched, 3);
    let want = d.join("f");
    for r in run.fired(1) {
        assert_eq!(r.path, want.to_str().unwrap());
    }
    // fd calls see the fd's path: a write on the fd of `sub/../f` is a write on f.
    let run = run_in(
        &format!("write@{g}=EIO"),
        d,
        &steps![
            format!("opendir:{}/sub", d.display()),
            "openat:dir:../f:wc",
            "write:x"
        ],
    );
    assert_eq!((run.steps[2].ret, run.steps[2].errno), (-1, 5));
}

#[test]
fn globs_select_calls() {
    let dir = tempdir();
    let d = dir.path();
    fs::create_dir(d.join("recovery")).unwrap();
    // The spec's example: the second fsync under */recovery/* fails; renames of *.json crash.
    let plan = "fsync@*/recovery/*#2=EIO;rename@*.json=EXDEV";
    let r = d.join("recovery");
    let run = run_in(
        plan,
        d,
        &steps![
            format!("open:{}/a:wc", r.display()),
            "fsync",
            format!("open:{}/b:wc", d.display()),
            "fsync",
            format!("open:{}/c:wc", r.display()),
            "fsync",
            "fsync",
            format!("rename:{}/c:{}/c.json", r.display(), r.display()),
            format!("rename:{}/a:{}/a2", r.display(), r.display()),
        ],
    );
    // The opens' descriptors are whatever the kernel hands out (a descriptor the
    // caller left open shifts them): each open returned its own one, >= 0.
    let fds = run.rets("open:");
    assert!(
        fds.iter().all(|&fd| fd >= 0)
            && fds.iter().collect::<std::collections::BTreeSet<_>>().len() == 3,
        "{:?}",
        run.steps
    );
    let rets: Vec<(i64, i64)> = run
        .steps
        .iter()
        .map(|s| {
            if s.step.starts_with("open:") {
                (0, s.errno)
            } else {
                (s.ret, s.errno)
            }
        })
        .collect();
    assert_eq!(
        rets,
        vec![
            (0, 0),
            (0, 0),
            (0, 0),
            (0, 0),
            (0, 0),
            (-1, 5),
            (0, 0),
            (-1, 18),
            (0, 0)
        ],
        "{:?}",
        run.steps
    );
    assert_eq!(run.outcome.rules[0].matched, 3);
    assert_eq!(run.outcome.rules[0].fired, 1);
    assert_eq!(run.outcome.rules[1].matched, 1);
    // Classes and '?'.
    assert!(vxfault::glob_match("/x/[a-c]?.json", b"/x/b1.json"));
    assert!(!vxfault::glob_match("/x/[!a-c]?.json", b"/x/b1.json"));
    assert!(vxfault::glob_match("*", b""));
    assert!(vxfault::glob_match(
        &vxfault::escape_glob(b"/a*b[1]#%=;\\"),
        b"/a*b[1]#%=;\\"
    ));
    assert!(!vxfault::glob_match(
        &vxfault::escape_glob(b"/a*b"),
        b"/axxb"
    ));
}

#[test]
fn triggers_count_exactly() {
    let dir = tempdir();
    let d = dir.path();
    let f = glob(&d.join("f"));
    let writes: Vec<String> = std::iter::once(format!("open:{}/f:wc", d.display()))
        .chain((0..6).map(|_| "write:x".to_string()))
        .collect();
    let rets = |plan: &str| -> Vec<i64> {
        run_in(plan, d, &writes).steps[1..]
            .iter()
            .map(|s| s.ret)
            .collect()
    };
    assert_eq!(rets(&format!("write@{f}#3=EIO")), vec![1, 1, -1, 1, 1, 1]);
    assert_eq!(
        rets(&format!("write@{f}#4+=EIO")),
        vec![1, 1, 1, -1, -1, -1]
    );
    assert_eq!(rets(&format!("write@{f}=EIO")), vec![-1; 6]);
    assert_eq!(rets(&format!("write@{f}%0=EIO")), vec![1; 6]);
    assert_eq!(rets(&format!("write@{f}%100=EIO")), vec![-1; 6]);
    // Two rules on the same calls: both count, the first that fires acts.
    let run = run_in(&format!("write@{f}#2=EIO;write#2+=ENOSPC"), d, &writes);
    let got: Vec<(i64, i64)> = run.steps[1..].iter().map(|s| (s.ret, s.errno)).collect();
    assert_eq!(
        got,
        vec![(1, 0), (-1, 5), (-1, 28), (-1, 28), (-1, 28), (-1, 28)]
    );
    assert_eq!(
        (run.outcome.rules[0].matched, run.outcome.rules[0].fired),
        (6, 1)
    );
    assert_eq!(
        (run.outcome.rules[1].matched, run.outcome.rules[1].fired),
        (6, 4)
    );
}

#[test]
fn counting_is_exact_across_threads() {
    let dir = tempdir();
    let d = dir.path();
    let f = glob(&d.join("f"));
    // 8 threads x 250 writes: exactly one is the 777th.
    let steps = steps![format!("open:{}/f:wc", d.display()), "threads:8:250"];
    let run = run_in(&format!("write@{f}#777=EIO"), d, &steps);
    assert_eq!(run.steps[1].ret, 1, "one write failed");
    assert_eq!(run.outcome.rules[0].matched, 2000);
    assert_eq!(run.outcome.rules[0].fired, 1);
    assert_eq!(fs::metadata(d.join("f")).unwrap().len(), 1999);
    let writes: Vec<_> = run
        .calls()
        .into_iter()
        .filter(|r| r.op == "write")
        .collect();
    assert_eq!(writes.len(), 2000, "one trace line per call");
    let mut seqs: Vec<u64> = run.trace.iter().map(|r| r.seq).collect();
    seqs.sort_unstable();
    seqs.dedup();
    assert_eq!(seqs.len(), run.trace.len(), "unique seq numbers");
    let run = run_in(&format!("write@{f}#1001+=EIO"), d, &steps);
    assert_eq!(run.steps[1].ret, 1000);
    assert_eq!(run.outcome.rules[0].fired, 1000);
}

#[test]
fn probabilities_follow_the_seed() {
    let dir = tempdir();
    let d = dir.path();
    let f = glob(&d.join("f"));
    let steps: Vec<String> = std::iter::once(format!("open:{}/f:wc", d.display()))
        .chain((0..200).map(|_| "write:x".to_string()))
        .collect();
    let pattern = |seed: u64| -> Vec<i64> {
        let inj = Injector::new(&format!("write@{f}%30=EIO"))
            .unwrap()
            .seed(seed);
        run_with(inj, d, &steps).steps[1..]
            .iter()
            .map(|s| s.ret)
            .collect()
    };
    let a = pattern(7);
    assert_eq!(a, pattern(7), "same seed, same failures");
    let b = pattern(8);
    assert_ne!(a, b, "another seed, other failures");
    for p in [a, b] {
        let fails = p.iter().filter(|&&r| r == -1).count();
        assert!(
            (30..=90).contains(&fails),
            "about 30% of 200 failed: {fails}"
        );
    }
}

#[test]
fn fork_counts_per_process_unless_tree_wide() {
    let dir = tempdir();
    let d = dir.path();
    let f = glob(&d.join("f"));
    let steps = steps![
        format!("open:{}/f:wc", d.display()),
        "write:p",
        "fork:3",
        "write:c",
        "write:c",
        "write:c",
        "write:p",
        "write:p"
    ];
    // Per process: the child counts from zero, so its 2nd write fails, and so does
    // the parent's 2nd.
    let run = run_in(&format!("write@{f}#2=EIO"), d, &steps);
    let parent = run.steps[0].pid;
    let res: Vec<(bool, i64)> = run
        .steps
        .iter()
        .filter(|s| s.step.starts_with("write"))
        .map(|s| (s.pid == parent, s.ret))
        .collect();
    assert_eq!(
        res,
        vec![
            (true, 1),
            (false, 1),
            (false, -1),
            (false, 1),
            (true, -1),
            (true, 1)
        ]
    );
    assert_eq!(run.outcome.rules[0].fired, 2);
    // Tree-wide: one count for the whole tree: the child's 2nd write is the 3rd.
    let run = run_in(&format!("write@{f}##3=EIO"), d, &steps);
    let parent = run.steps[0].pid;
    let res: Vec<(bool, i64)> = run
        .steps
        .iter()
        .filter(|s| s.step.starts_with("write"))
        .map(|s| (s.pid == parent, s.ret))
        .collect();
    assert_eq!(
        res,
        vec![
            (true, 1),
            (false, 1),
            (false, -1),
            (false, 1),
            (true, 1),
            (true, 1)
        ]
    );
    assert_eq!(run.outcome.rules[0].matched, 6);
    assert_eq!(run.outcome.rules[0].fired, 1);
    let pids: std::collections::BTreeSet<i64> = run.calls().iter().map(|r| r.pid).collect();
    assert_eq!(pids.len(), 2, "both processes traced");
}

#[test]
fn exec_inherits_the_plan() {
    let dir = tempdir();
    let d = dir.path();
    let f = glob(&d.join("f"));
    let steps = steps![
        format!("open:{}/f:wc", d.display()),
        "write:a",
        "exec",
        format!("open:{}/f:wa", d.display()),
        "write:b",
        "write:c",
        "write:d"
    ];
    // Per process: the new image counts from zero.
    let run = run_in(&format!("write@{f}#2=EIO"), d, &steps);
    let rets = run.rets("write");
    assert_eq!(rets, vec![1, 1, -1, 1]);
    let loaded: Vec<_> = run.trace.iter().filter(|r| r.op == "loaded").collect();
    assert_eq!(loaded.len(), 2, "loaded before and after exec");
    assert_eq!(loaded[0].pid, loaded[1].pid);
    assert_eq!(run.outcome.loaded, 2);
    // Tree-wide: the count survives exec (the counter file is named by VXFAULT_SHM).
    let run = run_in(&format!("write@{f}##2=EIO"), d, &steps);
    let rets = run.rets("write");
    assert_eq!(rets, vec![1, -1, 1, 1]);
    // And in a forked child that execs.
    let steps = steps![
        format!("open:{}/f:wc", d.display()),
        "fork:3",
        "exec",
        format!("open:{}/f:wa", d.display()),
        "write:x"
    ];
    let run = run_in(&format!("write@{f}=ENOSPC"), d, &steps);
    let w = run.step("write:x");
    assert_eq!((w.ret, w.errno), (-1, 28));
    assert_ne!(w.pid, run.steps.last().unwrap().pid);
}

#[test]
fn errno_is_preserved_on_the_real_path() {
    let dir = tempdir();
    let d = dir.path();
    // A non-firing rule and a delay: the real call's errno comes back untouched.
    for plan in [
        format!("open@{}/nomatch=EIO", d.display()),
        "open=delay:1".to_string(),
        "open#99=EIO".to_string(),
    ] {
        let run = run_in(
            &plan,
            d,
            &steps![
                format!("open:{}/missing:r", d.display()),
                "write:x",
                format!("mkdir:{}", d.display())
            ],
        );
        let r: Vec<(i64, i64)> = run.steps.iter().map(|s| (s.ret, s.errno)).collect();
        assert_eq!(r, vec![(-1, 2), (-1, 9), (-1, 17)], "{plan}");
        let rec = run
            .calls()
            .into_iter()
            .find(|r| r.op == "open")
            .unwrap()
            .clone();
        assert_eq!((rec.result, rec.errno), (Some(-1), 2));
    }
    // short on a bad fd: the real error.
    let run = run_in("write=short:1", d, &steps!["write:xyz"]);
    assert_eq!((run.steps[0].ret, run.steps[0].errno), (-1, 9));
}

#[test]
fn fcntl_other_commands_pass_through() {
    let dir = tempdir();
    let d = dir.path();
    let run = run_in(
        "flock=EIO",
        d,
        &steps![
            format!("open:{}/f:wc", d.display()),
            "getfl",
            "fcntl:getlk:w",
            "fcntl:setlk:w"
        ],
    );
    assert_eq!(run.steps[1].ret & 0o3, 1, "F_GETFL untouched (O_WRONLY)");
    assert_eq!(run.steps[2].ret, 2, "F_GETLK untouched (F_UNLCK)");
    assert_eq!((run.steps[3].ret, run.steps[3].errno), (-1, 5));
    let flocks: Vec<_> = run
        .calls()
        .into_iter()
        .filter(|r| r.op == "flock")
        .collect();
    assert_eq!(
        flocks.len(),
        1,
        "only the lock command is an injection point"
    );
}

#[test]
fn reentrant_calls_pass_through_and_the_guard_resets() {
    let dir = tempdir();
    let d = dir.path();
    let f = glob(&d.join("f"));
    // The alarm's handler writes "S" while the hooked write sleeps (delay:1500; the
    // alarm comes 300 ms after it is armed, right before the write): the nested write
    // is not delayed, injected or traced; the next write is again.
    let steps = steps![
        format!("open:{}/f:wc", d.display()),
        "alarmwrite:300:S",
        "write:hello",
        "write:!"
    ];
    let run = run_in(
        &format!("write@{f}#1=delay:1500;write@{f}#2=EIO"),
        d,
        &steps,
    );
    assert_eq!(run.steps[2].ret, 5);
    assert_eq!(
        (run.steps[3].ret, run.steps[3].errno),
        (-1, 5),
        "the guard was reset"
    );
    assert_eq!(fs::read(d.join("f")).unwrap(), b"Shello");
    let writes: Vec<_> = run
        .calls()
        .into_iter()
        .filter(|r| r.op == "write")
        .collect();
    assert_eq!(writes.len(), 2, "{writes:#?}");
}

#[test]
fn trace_lines_are_complete_json_with_escaped_paths() {
    let dir = tempdir();
    let d = dir.path();
    let name = "we\"ird\\name\twith\u{1}ctl and ünïcode";
    let p = d.join(name);
    let run = run_in(
        "",
        d,
        &steps![
            format!("open:{}:wc", p.display()),
            "write:x",
            "fsync",
            "close"
        ],
    );
    let raw = fs::read_to_string(&run.outcome.trace_path).unwrap();
    for line in raw.lines() {
        let v: serde_json::Value = serde_json::from_str(line).unwrap();
        for k in ["seq", "pid", "op", "path", "result", "errno", "action"] {
            assert!(v.get(k).is_some(), "{k} in {line}");
        }
    }
    assert!(raw.ends_with('\n'));
    let calls = run.calls();
    let ops: Vec<&str> = calls.iter().map(|r| r.op.as_str()).collect();
    assert_eq!(ops, vec!["open", "write", "fsync", "close"]);
    for r in &calls {
        assert_eq!(r.path, p.to_str().unwrap());
        assert_eq!(r.action, "pass");
    }
    assert_eq!(calls[0].call, "open");
    assert_eq!(calls[0].fd, Some(calls[1].fd.unwrap()));
    assert_eq!(calls[1].result, Some(1));
    assert_eq!(run.trace[0].op, "loaded");
    assert_eq!(run.trace[0].path, vxfault_probe_path());
    let seqs: Vec<u64> = run.trace.iter().map(|r| r.seq).collect();
    assert!(seqs.windows(2).all(|w| w[0] < w[1]), "{seqs:?}");
}

fn vxfault_probe_path() -> String {
    fs::canonicalize(probe())
        .unwrap()
        .to_str()
        .unwrap()
        .to_string()
}

#[test]
fn trace_survives_sigkill() {
    let dir = tempdir();
    let d = dir.path();
    let f = glob(&d.join("f"));
    let mut steps = steps![format!("open:{}/f:wc", d.display())];
    steps.extend((0..50).map(|i| format!("write:{i}")));
    let run = run_in(&format!("write@{f}#50=crash"), d, &steps);
    assert_eq!(run.signal(), Some(9));
    let writes: Vec<_> = run
        .calls()
        .into_iter()
        .filter(|r| r.op == "write")
        .collect();
    assert_eq!(
        writes.len(),
        50,
        "every call before the kill is in the trace"
    );
    assert_eq!(writes[49].action, "crash");
    assert_eq!(writes[49].result, None);
}

#[test]
fn not_injectable_when_the_op_is_never_reached() {
    let dir = tempdir();
    let d = dir.path();
    // Raw syscall instructions bypass every hook.
    let run = run_in(
        "fsync=EIO",
        d,
        &steps![
            format!("open:{}/f:wc", d.display()),
            "raw:fsync",
            "raw:write:x"
        ],
    );
    assert_eq!(run.steps[1].ret, 0, "the raw fsync was not injected");
    let why = run.outcome.injectable().unwrap_err();
    assert!(why.contains("no fsync call reached the hooks"), "{why}");
    // Never called at all: same verdict (no pass).
    let run = run_in(
        "rename=EIO",
        d,
        &steps![format!("open:{}/f:wc", d.display())],
    );
    assert!(run.outcome.injectable().is_err());
    // An injected crash ended the run before the second op: not a hook problem.
    let run = run_in(
        &format!("write@{}=crash;rename=EIO", glob(&d.join("f"))),
        d,
        &steps![format!("open:{}/f:wc", d.display()), "write:x"],
    );
    assert_eq!(run.signal(), Some(9));
    run.outcome.injectable().unwrap();
}

#[test]
fn not_injectable_when_the_library_is_not_loaded() {
    let dir = tempdir();
    let d = dir.path();
    // A statically linked program: glibc inside, no dynamic loader, no preload.
    let stat = vxfault::static_probe().unwrap();
    let out = d.join("s");
    // The preload's verdict (`auto` would choose the seccomp backend for it).
    let inj = Injector::new("write=EIO;fsync=EIO")
        .unwrap()
        .backend(vxfault::Backend::Preload);
    let outcome = inj
        .run(std::process::Command::new(&stat).arg(&out))
        .unwrap();
    assert_eq!(
        outcome.status.code(),
        Some(0),
        "the static program ran unharmed"
    );
    assert_eq!(fs::read(d.join("s.renamed")).unwrap(), b"static\n");
    assert_eq!(outcome.loaded, 0);
    assert!(outcome.injectable().unwrap_err().contains("never loaded"));
    // A dynamic program whose environment lost LD_PRELOAD.
    let mut cmd = std::process::Command::new("env");
    cmd.args([
        "-u",
        "LD_PRELOAD",
        probe(),
        &format!("open:{}/f:wc", d.display()),
        "fsync",
    ])
    .stdout(std::process::Stdio::null());
    let outcome = Injector::new("fsync=EIO").unwrap().run(&mut cmd).unwrap();
    assert_eq!(outcome.status.code(), Some(0));
    assert!(outcome.loaded >= 1, "env itself loaded it");
    assert!(outcome.injectable().unwrap_err().contains("no fsync call"));
}

#[test]
fn non_utf8_paths_are_exact_in_the_trace_and_selectable() {
    use std::os::unix::ffi::OsStrExt;
    let dir = tempdir();
    let d = dir.path();
    let mut name = d.as_os_str().as_bytes().to_vec();
    name.extend_from_slice(b"/bad\xff\xfename");
    let hex: String = name.iter().map(|b| format!("{b:02x}")).collect();
    let steps = steps![format!("openhex:{hex}:wc"), "write:x"];
    let run = run_in("", d, &steps);
    let w = run
        .calls()
        .into_iter()
        .find(|r| r.op == "write")
        .unwrap()
        .clone();
    assert_eq!(w.path_bytes(), name, "exact bytes via path_hex");
    assert!(w.path.contains('\u{fffd}'));
    let points = vxfault::points_from_trace(&run.trace, &vxfault::PointFilter::default());
    let p = points.iter().find(|p| p.op == "write").unwrap();
    assert_eq!(p.path, name);
    let run = run_in(&format!("{}=EIO", p.rule), d, &steps);
    assert_eq!((run.steps[1].ret, run.steps[1].errno), (-1, 5));
}
