//! `points` lists every injection point; failing each one in turn fails exactly that
//! call.

mod common;

use std::fs;
use std::path::Path;
use std::process::{Command, Stdio};

use common::*;
use vxfault::{Injector, PointFilter};

fn workload(d: &Path) -> Vec<String> {
    let d = d.display();
    steps![
        format!("mkdir:{d}/sub"),
        format!("open:{d}/sub/a:wct"),
        "write:one",
        "write:two",
        "fsync",
        "close",
        format!("opendir:{d}/sub"),
        format!("rename:{d}/sub/a:{d}/sub/b"),
        "fsync:dir",
        "fork:3",
        format!("open:{d}/sub/b:wa"),
        "write:three",
        "close",
        format!("unlink:{d}/sub/b"),
        format!("open:{d}/sub/c:wct"),
        "fallocate:512",
        format!("link:{d}/sub/c:{d}/sub/h"),
        "fdopen",
        "fputs:four",
        "fflush",
        "fclose",
        format!("unlink:{d}/sub/h"),
        format!("unlink:{d}/sub/c"),
        format!("rmdir:{d}/sub"),
    ]
}

fn clean(d: &Path) {
    let _ = fs::remove_dir_all(d.join("sub"));
}

fn probe_cmd(d: &Path) -> Command {
    let mut c = Command::new(probe());
    c.args(workload(d)).current_dir(d).stdout(Stdio::null());
    c
}

#[test]
fn points_list_every_call_and_each_can_be_failed() {
    let dir = tempdir();
    let d = dir.path();
    let filter = PointFilter {
        glob: Some(format!("{}/*", glob(d))),
        ..PointFilter::default()
    };
    let listed = vxfault::points(&mut probe_cmd(d), &filter).unwrap();
    let rules: Vec<String> = listed.points.iter().map(|p| p.rule.clone()).collect();
    let s = glob(&d.join("sub"));
    let want = vec![
        format!("mkdir@{s}##1"),
        format!("open@{s}/a##1"),
        format!("write@{s}/a##1"),
        format!("write@{s}/a##2"),
        format!("fsync@{s}/a##1"),
        format!("close@{s}/a##1"),
        format!("open@{s}##1"),
        format!("rename@{s}/a##1"),
        format!("fsync@{s}##1"),
        format!("open@{s}/b##1"),
        format!("write@{s}/b##1"),
        format!("close@{s}/b##1"),
        format!("unlink@{s}/b##1"),
        format!("open@{s}/c##1"),
        format!("fallocate@{s}/c##1"),
        format!("link@{s}/c##1"),
        format!("write@{s}/c##1"),
        format!("write@{s}/c##2"),
        format!("close@{s}/c##1"),
        format!("unlink@{s}/h##1"),
        format!("unlink@{s}/c##1"),
        format!("rmdir@{s}##1"),
    ];
    assert_eq!(rules, want);
    let child = listed
        .points
        .iter()
        .find(|p| p.rule.starts_with("write@") && p.rule.contains("/b"))
        .unwrap();
    assert_ne!(
        child.pid, listed.points[0].pid,
        "the forked child's calls are points too"
    );

    // Fail each point in turn: exactly that call fails, everything before it ran.
    for p in &listed.points {
        clean(d);
        let inj = Injector::new(&format!("{}=EIO", p.rule)).unwrap();
        let outcome = inj.run(&mut probe_cmd(d)).unwrap();
        outcome.injectable().unwrap();
        assert_eq!(outcome.rules[0].fired, 1, "{}", p.rule);
        let trace = outcome.records().unwrap();
        let again = vxfault::points_from_trace(&trace, &filter);
        let pos = again
            .iter()
            .position(|q| q.rule == p.rule)
            .unwrap_or_else(|| panic!("{} not hit", p.rule));
        let failed: Vec<_> = trace.iter().filter(|r| r.rule == Some(1)).collect();
        assert_eq!(failed.len(), 1);
        assert_eq!(
            (failed[0].op.as_str(), failed[0].errno, failed[0].result),
            (p.op.as_str(), 5, Some(-1))
        );
        assert_eq!(failed[0].path_bytes(), p.path);
        // Up to the failed call the run is the same as the listing.
        let before: Vec<&str> = again[..pos].iter().map(|q| q.rule.as_str()).collect();
        let listed_before: Vec<&str> = listed.points[..p.index - 1]
            .iter()
            .map(|q| q.rule.as_str())
            .collect();
        assert_eq!(before, listed_before, "{}", p.rule);
    }
}

#[test]
fn points_cli_prints_one_rule_per_line() {
    let dir = tempdir();
    let d = dir.path();
    // The probe reports on fd 1, which here is the test's own: send it to /dev/null
    // through a shell (whose own calls the --filter leaves out).
    let script = "exec \"$0\" \"$@\" >/dev/null".to_string();
    let mut args: Vec<std::ffi::OsString> = vec![
        "points".into(),
        "--json".into(),
        "--filter".into(),
        format!("{}/*", glob(d)).into(),
        "--".into(),
        "sh".into(),
        "-c".into(),
        script.into(),
        probe().into(),
    ];
    args.extend(workload(d).into_iter().map(Into::into));
    let (mut out, mut err) = (Vec::new(), Vec::new());
    let code = vxfault::cli::run(&args, &mut out, &mut err);
    assert_eq!(code, 0, "{}", String::from_utf8_lossy(&err));
    let lines: Vec<serde_json::Value> = String::from_utf8(out)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 22);
    assert_eq!(lines[0]["index"], 1);
    assert_eq!(lines[0]["op"], "mkdir");
    assert_eq!(
        lines[0]["rule"],
        format!("mkdir@{}##1", glob(&d.join("sub")))
    );
    assert_eq!(lines[2]["ordinal"], 1);
    assert_eq!(lines[3]["ordinal"], 2);
}
