//! The fd → path cache: after calls that close, reuse or rebind an fd number — also
//! those our open and close hooks do not see (issue 13, defect 7) — a write to file B
//! must never be matched, failed or traced as file A.

mod common;

use common::*;

#[test]
fn freopen_and_dupfd_onto_a_reused_number_are_matched_by_their_own_path() {
    let dir = tempdir();
    let d = dir.path();
    let (a, b) = (d.join("a"), d.join("b"));
    let plan = format!("write@{}=EIO", glob(&a));
    let open_a = format!("open:{}:wc", a.display());
    let open_b = format!("open:{}:wc", b.display());
    // freopen closes a's fd and opens b inside glibc, keeping the number.
    let run = run_in(
        &plan,
        d,
        &steps![&open_a, format!("freopen:{}", b.display()), "write:x"],
    );
    assert_eq!(
        run.steps[0].ret, run.steps[1].ret,
        "same fd number: {:?}",
        run.steps
    );
    let w = run.step("write:x");
    assert_eq!((w.ret, w.errno), (1, 0), "{:?}", run.steps);
    let traced = run.calls().into_iter().find(|r| r.op == "write").unwrap();
    assert_eq!(traced.path, b.display().to_string());
    assert_eq!(std::fs::read(&b).unwrap(), b"x");
    // a's number closed behind our back (raw close), then handed out again by
    // fcntl(F_DUPFD) of b's fd.
    let run = run_in(
        &plan,
        d,
        &steps![&open_a, &open_b, "raw:close:3", "dupfd:3", "write:y"],
    );
    assert_eq!(run.steps[0].ret, 3, "{:?}", run.steps);
    assert_eq!(run.step("dupfd").ret, 3, "{:?}", run.steps);
    let w = run.step("write:y");
    assert_eq!((w.ret, w.errno), (1, 0), "{:?}", run.steps);
    // … and by fopen.
    let run = run_in(
        &plan,
        d,
        &steps![
            &open_a,
            "raw:close:3",
            format!("fopen:{}", b.display()),
            "write:z"
        ],
    );
    assert_eq!(run.step("fopen").ret, 3, "{:?}", run.steps);
    let w = run.step("write:z");
    assert_eq!((w.ret, w.errno), (1, 0), "{:?}", run.steps);
    // The rule still fails writes to a itself.
    let run = run_in(&plan, d, &steps![&open_a, "write:x"]);
    assert_eq!(run.step("write:x").ret, -1);
}

#[test]
fn fd_paths_stay_true_when_fds_are_reused() {
    let dir = tempdir();
    let d = dir.path();
    let (f, g) = (d.join("f"), d.join("g"));
    let plan = format!("write@{}=EIO", glob(&f));
    let open_f = format!("open:{}:wc", f.display());
    let fopen_g = format!("fopen:{}", g.display());
    // Each sequence closes f's fd without close() (fclose, dup2 over it, close_range),
    // then reuses the number for g without open() (fopen) or by dup2: a write there
    // is a write on g and must pass.
    let cases = [
        steps![&open_f, "fclose", &fopen_g, "write:x"],
        steps![
            &open_f,
            format!("open:{}:wc", g.display()),
            "dup2:3",
            "write:x"
        ],
        steps![&open_f, "close_range:3:3", &fopen_g, "write:x"],
        steps![&open_f, "close", &fopen_g, "write:x"],
    ];
    for steps in &cases {
        let run = run_in(&plan, d, steps);
        assert_eq!(run.steps[0].ret, 3, "{:?}", run.steps);
        let w = run.step("write:x");
        assert_eq!((w.ret, w.errno), (1, 0), "{steps:?}: {:?}", run.steps);
        // And the same fd number still fails while it is f.
        let run = run_in(&plan, d, &steps![&open_f, "write:x"]);
        assert_eq!(run.step("write:x").ret, -1);
    }
    // fd calls see the canonical path: a write through a symlink is a write on its
    // target; the open itself is matched on the path as given.
    let link = d.join("link");
    let steps = steps![
        format!("symlink:{}:{}", f.display(), link.display()),
        format!("open:{}:wc", link.display()),
        "write:x"
    ];
    let run = run_in(&plan, d, &steps);
    assert_eq!(run.step("write:x").ret, -1);
    let run = run_in(
        &format!("write@{}=EIO;open@{}#1=delay:1", glob(&link), glob(&link)),
        d,
        &steps,
    );
    assert_eq!(run.step("write:x").ret, 1);
    assert_eq!(run.outcome.rules[1].fired, 1);
}
