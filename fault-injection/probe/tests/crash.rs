//! The crash explorer (`vxfault record` / `vxfault explore`) on small publishers: it
//! finds the violation in each wrong one and none in the correct one; bad input is
//! one line and exit 2 with no state checked.

use std::ffi::OsString;
use std::fs;
use std::path::{Path, PathBuf};

const PUBLISHER: &str = env!("CARGO_BIN_EXE_vxfault-publisher");

fn vxfault(args: &[&str]) -> (i32, String, String) {
    let args: Vec<OsString> = args.iter().map(OsString::from).collect();
    let (mut out, mut err) = (Vec::new(), Vec::new());
    let code = vxfault::cli::run(&args, &mut out, &mut err);
    (
        code,
        String::from_utf8_lossy(&out).into_owned(),
        String::from_utf8_lossy(&err).into_owned(),
    )
}

/// Records `mode` publishing over a store holding the old generation.
fn record(tmp: &Path, mode: &str) -> PathBuf {
    let root = tmp.join("root");
    fs::create_dir(&root).unwrap();
    fs::write(root.join("gen"), b"generation 1\n").unwrap();
    record_run(tmp, &root, &[PUBLISHER, mode, root.to_str().unwrap()])
}

fn explore(rec: &Path, model: &str) -> (i32, String, String) {
    let check = format!("{PUBLISHER} check {{root}}");
    vxfault(&[
        "explore",
        "--log",
        rec.to_str().unwrap(),
        "--model",
        model,
        "--check",
        &check,
        "--jobs",
        "2",
    ])
}

fn verdict(mode: &str, model: &str) -> (i32, String) {
    let tmp = tempfile::tempdir().unwrap();
    let rec = record(tmp.path(), mode);
    let (code, out, err) = explore(&rec, model);
    assert!(code == 0 || code == 1, "{err}");
    // Exploring never touches the recorded directory: it holds what the run left.
    let left = fs::read(tmp.path().join("root/gen")).unwrap();
    assert!(left.starts_with(b"generation 2\n"), "{}", left.len());
    (code, out)
}

#[test]
fn the_correct_publisher_survives_every_posix_state() {
    let (code, out) = verdict("correct", "posix");
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("strategy omit-one: "), "{out}");
    assert!(out.contains("failing 0"), "{out}");
}

#[test]
fn no_directory_fsync_loses_the_acknowledged_generation() {
    let (code, out) = verdict("no-dir-fsync", "posix");
    assert_eq!(code, 1, "{out}");
    assert!(out.contains("acknowledged generation lost"), "{out}");
    assert!(out.contains("dropped (rename .gen.tmp -> gen)"), "{out}");
    assert!(out.contains("minimal reproducer"), "{out}");
}

#[test]
fn no_file_fsync_publishes_an_empty_file() {
    let (code, out) = verdict("no-file-fsync", "posix");
    assert_eq!(code, 1, "{out}");
    assert!(
        out.contains("corrupt: neither generation (0 bytes)"),
        "{out}"
    );
}

#[test]
fn writing_the_final_name_in_place_is_caught_even_by_a_process_crash() {
    let (code, out) = verdict("in-place", "prefix");
    assert_eq!(code, 1, "{out}");
    assert!(out.contains("corrupt: neither generation"), "{out}");
    let (code, out) = verdict("in-place", "posix");
    assert_eq!(code, 1, "{out}");
    assert!(out.contains("(torn)"), "{out}");
}

#[test]
fn a_process_crash_alone_does_not_show_the_missing_fsyncs() {
    for mode in ["no-dir-fsync", "no-file-fsync"] {
        let (code, out) = verdict(mode, "prefix");
        assert_eq!(code, 0, "{mode}: {out}");
    }
}

#[test]
fn ext4_ordered_hides_the_missing_file_fsync_but_not_the_missing_dir_fsync() {
    // auto_da_alloc: a rename over an existing file carries the source's data.
    let (code, out) = verdict("no-file-fsync", "ext4-ordered");
    assert_eq!(code, 0, "{out}");
    let (code, out) = verdict("no-dir-fsync", "ext4-ordered");
    assert_eq!(code, 1, "{out}");
}

#[test]
fn a_state_reproduces_alone_and_materializes_for_inspection() {
    let tmp = tempfile::tempdir().unwrap();
    let rec = record(tmp.path(), "no-file-fsync");
    let (_, out, _) = explore(&rec, "posix");
    let line = out
        .lines()
        .find(|l| l.starts_with("minimal reproducer"))
        .expect("a reproducer");
    let id = line.rsplit("--state ").next().unwrap().trim().to_string();
    let check = format!("{PUBLISHER} check {{root}}");
    let r = rec.to_str().unwrap();
    let (code, out, _) = vxfault(&["explore", "--log", r, "--check", &check, "--state", &id]);
    assert_eq!(code, 1, "{out}");
    assert!(out.contains("distinct 1, failing 1"), "{out}");
    let dest = tmp.path().join("state");
    let d = dest.to_str().unwrap();
    let (code, _, err) = vxfault(&["explore", "--log", r, "--state", &id, "--materialize", d]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(fs::read(dest.join("gen")).unwrap(), b"");
}

/// Runs explore with a checker that leaves a mark if it ever runs.
fn bad_input(rec: &Path, extra: &[&str], mark: &Path) -> (i32, String) {
    let check = format!("touch {} {{root}}", mark.display());
    let mut args = vec!["explore", "--log", rec.to_str().unwrap(), "--check", &check];
    args.extend_from_slice(extra);
    let (code, out, err) = vxfault(&args);
    assert_eq!(code, 2, "{out}{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(out.is_empty(), "{out}");
    assert!(!mark.exists(), "a state was materialized and checked");
    (code, err)
}

#[test]
fn bad_input_is_one_line_exit_2_and_nothing_materialized() {
    let tmp = tempfile::tempdir().unwrap();
    let rec = record(tmp.path(), "correct");
    let mark = tmp.path().join("checked");

    let (_, err) = bad_input(&rec, &["--model", "ext3"], &mark);
    assert!(err.contains("unknown model"), "{err}");

    let other = tempfile::tempdir().unwrap();
    let (_, err) = bad_input(&rec, &["--root", other.path().to_str().unwrap()], &mark);
    assert!(err.contains("another root"), "{err}");

    let not_exec = tmp.path().join("checker.sh");
    fs::write(&not_exec, "#!/bin/sh\nexit 0\n").unwrap();
    let check = format!("{} {{root}}", not_exec.display());
    let (code, _, err) = vxfault(&["explore", "--log", rec.to_str().unwrap(), "--check", &check]);
    assert_eq!(code, 2);
    assert!(err.contains("not an executable"), "{err}");

    // A log cut short (the recorder was killed, or the copy was incomplete).
    let log = rec.join("log.jsonl");
    let text = fs::read(&log).unwrap();
    fs::write(&log, &text[..text.len() * 2 / 3]).unwrap();
    let (_, err) = bad_input(&rec, &[], &mark);
    assert!(err.contains("truncated"), "{err}");
    fs::remove_file(rec.join("meta.json")).unwrap();
    let (_, err) = bad_input(&rec, &[], &mark);
    assert!(err.contains("not a complete recording"), "{err}");
}

#[test]
fn a_recording_of_another_directory_is_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let watched = tmp.path().join("watched");
    fs::create_dir(&watched).unwrap();
    let root = tmp.path().join("root");
    fs::create_dir(&root).unwrap();
    fs::write(root.join("gen"), b"generation 1\n").unwrap();
    let rec = tmp.path().join("rec");
    let (code, _, err) = vxfault(&[
        "record",
        "--out",
        rec.to_str().unwrap(),
        "--root",
        watched.to_str().unwrap(),
        "--",
        PUBLISHER,
        "correct",
        root.to_str().unwrap(),
    ]);
    assert_eq!(code, 0, "{err}");
    let (_, err) = bad_input(&rec, &[], &tmp.path().join("checked"));
    assert!(
        err.contains("no file-system operation under its root"),
        "{err}"
    );
}

/// Every file and directory under `root`, with contents (directories as `None`).
fn tree(root: &Path) -> Vec<(PathBuf, Option<Vec<u8>>)> {
    let mut out = Vec::new();
    let mut stack = vec![PathBuf::new()];
    while let Some(rel) = stack.pop() {
        for e in fs::read_dir(root.join(&rel)).unwrap() {
            let e = e.unwrap();
            let p = rel.join(e.file_name());
            if e.file_type().unwrap().is_dir() {
                out.push((p.clone(), None));
                stack.push(p);
            } else {
                out.push((p, Some(fs::read(e.path()).unwrap())));
            }
        }
    }
    out.sort();
    out
}

/// Records `argv` with `root` as the watched directory into `tmp/rec`.
fn record_run(tmp: &Path, root: &Path, argv: &[&str]) -> PathBuf {
    let rec = tmp.join("rec");
    let mut args = vec![
        "record",
        "--out",
        rec.to_str().unwrap(),
        "--root",
        root.to_str().unwrap(),
        "--",
    ];
    args.extend_from_slice(argv);
    let (code, _, err) = vxfault(&args);
    assert_eq!(code, 0, "{err}");
    rec
}

/// Materializes the state "every recorded op applied" into `dest`; the op list.
fn materialize_whole_log(rec: &Path, dest: &Path) -> String {
    let (code, list, err) = vxfault(&["explore", "--log", rec.to_str().unwrap(), "--list"]);
    assert_eq!(code, 0, "{err}");
    // Prefix states come first: state N is "crash after all N ops".
    let ops = list.lines().filter(|l| l.starts_with("op ")).count();
    let (code, _, err) = vxfault(&[
        "explore",
        "--log",
        rec.to_str().unwrap(),
        "--model",
        "prefix",
        "--state",
        &ops.to_string(),
        "--materialize",
        dest.to_str().unwrap(),
    ]);
    assert_eq!(code, 0, "{err}");
    list
}

#[test]
fn replaying_the_whole_log_rebuilds_what_the_run_left() {
    // Every write family, truncation, renames (of a file written through its fd
    // afterwards), links, unlinks, mkdir and a forked child writing too.
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("root");
    fs::create_dir(&root).unwrap();
    fs::write(root.join("old"), b"0123456789abcdef").unwrap();
    let d = root.display();
    let steps = [
        format!("mkdir:{d}/sub"),
        format!("open:{d}/sub/a:wct"),
        "write:hello ".to_string(),
        "pwrite:XY:2".to_string(),
        "writev:one,two,three".to_string(),
        "pwritev:PQ,RS:1".to_string(),
        "fsync".to_string(),
        format!("rename:{d}/sub/a:{d}/sub/b"),
        "write:-after-rename".to_string(),
        "close".to_string(),
        format!("open:{d}/old:w"),
        "pwrite:ZZ:4".to_string(),
        "ftruncate:10".to_string(),
        "close".to_string(),
        format!("link:{d}/old:{d}/old2"),
        format!("unlink:{d}/old"),
        "fork:2".to_string(),
        format!("open:{d}/c:wca"),
        "write:child-or-parent;".to_string(),
        "close".to_string(),
    ];
    let probe = env!("CARGO_BIN_EXE_vxfault-probe");
    let mut argv = vec![probe];
    argv.extend(steps.iter().map(String::as_str));
    let rec = record_run(tmp.path(), &root, &argv);
    let dest = tmp.path().join("replayed");
    let list = materialize_whole_log(&rec, &dest);
    assert_eq!(tree(&dest), tree(&root), "{list}");
    assert_eq!(
        fs::read(root.join("sub/b")).unwrap(),
        b"hPQRS onetwothree-after-rename"
    );
}

#[test]
fn a_shells_redirections_are_replayed_as_writes_under_the_root() {
    // dash opens the target, moves it to fd 1 (or 3) with F_DUPFD and writes there:
    // the bytes must be recorded although fd 1 is standard output.
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("root");
    fs::create_dir(&root).unwrap();
    let d = root.display();
    let script = format!(
        "echo first > {d}/a; echo second >> {d}/a; exec 3> {d}/b; echo three >&3; \
         echo to-the-log"
    );
    let rec = record_run(tmp.path(), &root, &["/bin/sh", "-c", &script]);
    let dest = tmp.path().join("replayed");
    let list = materialize_whole_log(&rec, &dest);
    assert_eq!(
        fs::read(dest.join("a")).unwrap(),
        b"first\nsecond\n",
        "{list}"
    );
    assert_eq!(fs::read(dest.join("b")).unwrap(), b"three\n", "{list}");
    assert_eq!(tree(&dest), tree(&root), "{list}");
}
