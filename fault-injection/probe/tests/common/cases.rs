//! The action matrix shared by `actions.rs` and `families.rs`: one intercepted call
//! ("case") broken by each action, checking the probe's return value and errno, the
//! bytes on disk and the trace line.
#![allow(dead_code)]

use std::fs;
use std::path::Path;

use super::common::*;

pub type Effect = Box<dyn Fn(&Path) -> bool>;

/// One intercepted call, ready to be broken.
pub struct Case {
    /// The plan's op.
    op: &'static str,
    /// The path the rule's glob names (relative to the temp dir; "" = the dir).
    target: &'static str,
    /// Steps before the call (`{D}` is the temp dir).
    setup: Vec<&'static str>,
    /// The call (`{D}` is the temp dir).
    step: &'static str,
    /// The call's visible effect on disk, if it has one.
    effect: Option<Effect>,
    /// The success value `lie` returns.
    lie: i64,
}

pub fn exists(rel: &'static str) -> Effect {
    Box::new(move |d: &Path| d.join(rel).exists())
}

pub fn gone(rel: &'static str) -> Effect {
    Box::new(move |d: &Path| !d.join(rel).exists())
}

pub fn content(rel: &'static str, want: &'static [u8]) -> Effect {
    Box::new(move |d: &Path| fs::read(d.join(rel)).ok().as_deref() == Some(want))
}

pub fn renamed(from: &'static str, to: &'static str) -> Effect {
    Box::new(move |d: &Path| d.join(to).exists() && !d.join(from).exists())
}

fn expand(s: &str, d: &Path) -> String {
    s.replace("{D}", d.to_str().unwrap())
}

#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Act {
    Baseline,
    Errno(&'static str, i64),
    Lie,
    Crash,
    CrashAfter,
    Delay,
    Short,
    Torn,
    After,
}

fn action_text(a: Act) -> String {
    match a {
        Act::Baseline => String::new(),
        Act::Errno(name, _) => name.to_string(),
        Act::Lie => "lie".into(),
        Act::Crash => "crash".into(),
        Act::CrashAfter => "crash-after".into(),
        Act::Delay => "delay:30".into(),
        Act::Short => "short:2".into(),
        Act::Torn => "torn:3".into(),
        Act::After => "after:EIO".into(),
    }
}

/// What the traced call returns on failure: -1, but 0 items for fwrite(_unlocked).
fn fail_value(rec: &vxfault::TraceRecord) -> i64 {
    if rec.call.starts_with("fwrite") {
        0
    } else {
        -1
    }
}

pub fn check(case: &Case, act: Act) {
    let dir = tempdir();
    let d = dir.path();
    let mut steps: Vec<String> = case.setup.iter().map(|s| expand(s, d)).collect();
    let call = expand(case.step, d);
    steps.push(call.clone());
    let target = if case.target.is_empty() {
        d.to_path_buf()
    } else {
        d.join(case.target)
    };
    let plan = match act {
        Act::Baseline => String::new(),
        a => format!("{}@{}={}", case.op, glob(&target), action_text(a)),
    };
    let started = std::time::Instant::now();
    let run = run_in(&plan, d, &steps);
    let elapsed = started.elapsed();
    let ctx = format!(
        "case {call} / plan {plan:?}\nsteps {:?}\nstderr {}\ntrace {:#?}",
        run.steps, run.stderr, run.trace
    );
    run.outcome
        .injectable()
        .unwrap_or_else(|e| panic!("not injectable: {e}\n{ctx}"));
    for s in &case.setup {
        let s = expand(s, d);
        let r = run
            .steps
            .iter()
            .find(|x| x.step == s)
            .unwrap_or_else(|| panic!("setup {s} missing\n{ctx}"));
        assert!(r.ret >= 0, "setup {s} failed\n{ctx}");
    }
    let reported = run.steps.iter().find(|x| x.step == call);
    let fired = run.fired(1);
    let effect = case.effect.as_ref().map(|f| f(d));
    let kills = matches!(act, Act::Crash | Act::CrashAfter | Act::Torn);
    if kills {
        assert_eq!(run.signal(), Some(9), "killed by SIGKILL\n{ctx}");
        assert!(reported.is_none(), "a killed call reports nothing\n{ctx}");
    } else {
        assert_eq!(run.outcome.status.code(), Some(0), "{ctx}");
    }
    if act != Act::Baseline {
        assert_eq!(fired.len(), 1, "exactly one traced call fired\n{ctx}");
        let rec = fired[0];
        assert_eq!(rec.action, action_text(act), "{ctx}");
        assert_eq!(rec.op, case.op, "{ctx}");
        assert_eq!(run.outcome.rules[0].fired, 1, "{ctx}");
        assert_eq!(run.outcome.rules[0].matched, 1, "{ctx}");
        if kills {
            // The line of the killing call is the last one: nothing after SIGKILL, and
            // nothing traced before it was lost.
            assert_eq!(run.trace.last(), Some(rec), "{ctx}");
        }
    }
    let rec = fired.first().copied();
    match act {
        Act::Baseline => {
            let r = reported.unwrap_or_else(|| panic!("{ctx}"));
            assert!(r.ret >= 0, "{ctx}");
            if let Some(e) = effect {
                assert!(e, "baseline call has its effect\n{ctx}");
            }
            assert!(run.fired(1).is_empty());
        }
        Act::Errno(_, code) => {
            let r = reported.unwrap_or_else(|| panic!("{ctx}"));
            assert_eq!((r.ret, r.errno), (-1, code), "{ctx}");
            assert_eq!(effect, effect.map(|_| false), "the call did nothing\n{ctx}");
            let rec = rec.unwrap();
            assert_eq!(
                (rec.result, rec.errno),
                (Some(fail_value(rec)), code),
                "{ctx}"
            );
        }
        Act::Lie => {
            let r = reported.unwrap_or_else(|| panic!("{ctx}"));
            assert_eq!((r.ret, r.errno), (case.lie, 0), "{ctx}");
            assert_eq!(effect, effect.map(|_| false), "lie does nothing\n{ctx}");
            assert_eq!(rec.unwrap().result, Some(case.lie), "{ctx}");
        }
        Act::Crash => {
            assert_eq!(
                effect,
                effect.map(|_| false),
                "crash is before the call\n{ctx}"
            );
            assert_eq!(rec.unwrap().result, None, "{ctx}");
        }
        Act::CrashAfter => {
            assert_eq!(
                effect,
                effect.map(|_| true),
                "crash-after does the call\n{ctx}"
            );
            assert!(rec.unwrap().result.unwrap() >= 0, "{ctx}");
        }
        Act::Delay => {
            let r = reported.unwrap_or_else(|| panic!("{ctx}"));
            assert!(r.ret >= 0, "{ctx}");
            assert_eq!(effect, effect.map(|_| true), "{ctx}");
            assert!(elapsed.as_millis() >= 30, "slept first\n{ctx}");
            assert_eq!(rec.unwrap().result, Some(r.ret), "{ctx}");
        }
        Act::Short => {
            let r = reported.unwrap_or_else(|| panic!("{ctx}"));
            assert_eq!((r.ret, r.errno), (2, 0), "{ctx}");
            assert_eq!(fs::read(d.join("f")).unwrap(), b"he", "{ctx}");
            assert_eq!(rec.unwrap().result, Some(2), "{ctx}");
        }
        Act::Torn => {
            assert_eq!(fs::read(d.join("f")).unwrap(), b"hel", "{ctx}");
            assert_eq!(rec.unwrap().result, Some(3), "{ctx}");
        }
        Act::After => {
            let r = reported.unwrap_or_else(|| panic!("{ctx}"));
            assert_eq!((r.ret, r.errno), (-1, 5), "the caller sees EIO\n{ctx}");
            assert_eq!(effect, effect.map(|_| true), "the call was done\n{ctx}");
            let rec = rec.unwrap();
            assert_eq!((rec.result, rec.errno), (Some(fail_value(rec)), 5), "{ctx}");
            assert!(
                rec.real_result.unwrap() >= 0,
                "the real call succeeded\n{ctx}"
            );
        }
    }
}

pub fn check_all(cases: &[Case], errno: Act, extra: &[Act]) {
    for case in cases {
        for act in [
            Act::Baseline,
            errno,
            Act::Crash,
            Act::CrashAfter,
            Act::Delay,
            Act::After,
        ]
        .into_iter()
        .chain(extra.iter().copied())
        {
            check(case, act);
        }
    }
}

pub fn case(
    op: &'static str,
    target: &'static str,
    setup: Vec<&'static str>,
    step: &'static str,
    effect: Option<Effect>,
    lie: i64,
) -> Case {
    Case {
        op,
        target,
        setup,
        step,
        effect,
        lie,
    }
}
