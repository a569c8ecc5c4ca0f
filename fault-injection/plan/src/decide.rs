//! The per-call decision: which rules a call matches, how each counts it, and which one
//! acts. Pure over the counters it is given, so it is tested (and run under Miri)
//! without the preload.

use core::sync::atomic::{AtomicU64, Ordering};

use crate::{fires, Action, Op, Rule};

/// The counters a decision updates: per process and tree-wide per rule.
pub trait Counts {
    /// Rule `i`'s matching calls in this process (reset in a forked child).
    fn local(&self, i: usize) -> &AtomicU64;
    /// Rule `i`'s matching calls in the whole tree.
    fn matched(&self, i: usize) -> &AtomicU64;
    /// Calls rule `i` acted on in the whole tree.
    fn fired(&self, i: usize) -> &AtomicU64;
}

/// The rule that acts on a call.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct Decision {
    /// 0-based index of the rule in the plan.
    pub rule: usize,
    /// The call's ordinal for that rule (per process, or tree-wide for `##N`).
    pub ordinal: u64,
    pub action: Action,
}

/// The call a decision is about.
pub struct CallSite<'a> {
    pub op: Op,
    /// The path (or fd path) the call acts on.
    pub path: &'a [u8],
    /// The second path of rename and link calls.
    pub path2: Option<&'a [u8]>,
}

/// Counts the call for every rule whose op and glob match (all of them, in plan order)
/// and returns the first rule whose trigger fires. Exact under any number of threads:
/// every count is one `fetch_add`.
pub fn decide(
    rules: &[Rule],
    call: &CallSite<'_>,
    counts: &impl Counts,
    seed: u64,
    stream: u64,
) -> Option<Decision> {
    let mut chosen = None;
    for (i, rule) in rules.iter().enumerate() {
        if rule.op != call.op {
            continue;
        }
        let hit = rule.matches(call.path) || call.path2.is_some_and(|p| rule.matches(p));
        if !hit {
            continue;
        }
        let local = counts.local(i).fetch_add(1, Ordering::Relaxed) + 1;
        let tree = counts.matched(i).fetch_add(1, Ordering::Relaxed) + 1;
        let ordinal = if rule.tree { tree } else { local };
        if chosen.is_none() && fires(rule.trigger, seed, stream, i, ordinal) {
            counts.fired(i).fetch_add(1, Ordering::Relaxed);
            chosen = Some(Decision {
                rule: i,
                ordinal,
                action: rule.action,
            });
        }
    }
    chosen
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{parse, Plan, MAX_RULES};

    struct Arrays {
        local: [AtomicU64; MAX_RULES],
        matched: [AtomicU64; MAX_RULES],
        fired: [AtomicU64; MAX_RULES],
    }

    impl Arrays {
        fn new() -> Arrays {
            Arrays {
                local: core::array::from_fn(|_| AtomicU64::new(0)),
                matched: core::array::from_fn(|_| AtomicU64::new(0)),
                fired: core::array::from_fn(|_| AtomicU64::new(0)),
            }
        }
    }

    impl Counts for Arrays {
        fn local(&self, i: usize) -> &AtomicU64 {
            &self.local[i]
        }
        fn matched(&self, i: usize) -> &AtomicU64 {
            &self.matched[i]
        }
        fn fired(&self, i: usize) -> &AtomicU64 {
            &self.fired[i]
        }
    }

    fn plan(text: &str) -> std::boxed::Box<Plan> {
        let mut p = std::boxed::Box::new(Plan::EMPTY);
        parse(text.as_bytes(), &mut p).unwrap();
        p
    }

    fn write(path: &[u8]) -> CallSite<'_> {
        CallSite {
            op: Op::Write,
            path,
            path2: None,
        }
    }

    #[test]
    fn every_matching_rule_counts_and_the_first_firing_one_acts() {
        let p = plan("write@/a*#2=EIO;write#1+=ENOSPC;fsync=EIO;rename@/x=crash");
        let c = Arrays::new();
        let d1 = decide(p.rules(), &write(b"/a1"), &c, 0, 1).unwrap();
        assert_eq!((d1.rule, d1.ordinal), (1, 1), "rule 1 waits for #2");
        let d2 = decide(p.rules(), &write(b"/a2"), &c, 0, 1).unwrap();
        assert_eq!((d2.rule, d2.action), (0, Action::Errno(5)));
        let d3 = decide(p.rules(), &write(b"/b"), &c, 0, 1).unwrap();
        assert_eq!((d3.rule, d3.ordinal), (1, 3));
        assert_eq!(c.matched[0].load(Ordering::Relaxed), 2);
        assert_eq!(c.matched[1].load(Ordering::Relaxed), 3);
        assert_eq!(
            c.fired[1].load(Ordering::Relaxed),
            2,
            "not on the call rule 0 took"
        );
        assert_eq!(c.matched[2].load(Ordering::Relaxed), 0, "other op");
        // A rename matches on either path.
        let r = CallSite {
            op: Op::Rename,
            path: b"/y",
            path2: Some(b"/x"),
        };
        assert_eq!(
            decide(p.rules(), &r, &c, 0, 1).unwrap().action,
            Action::Crash
        );
    }

    #[test]
    fn tree_ordinals_use_the_tree_counter() {
        let p = plan("write##3=EIO");
        let c = Arrays::new();
        c.matched[0].store(2, Ordering::Relaxed); // two calls in other processes
        let d = decide(p.rules(), &write(b"/f"), &c, 0, 1).unwrap();
        assert_eq!((d.ordinal, c.local[0].load(Ordering::Relaxed)), (3, 1));
    }

    #[test]
    fn counting_is_exact_across_threads() {
        let p = plan("write#7=EIO");
        let c = Arrays::new();
        let per = if cfg!(miri) { 5 } else { 200 };
        let fired = std::thread::scope(|s| {
            let hs: std::vec::Vec<_> = (0..4)
                .map(|_| {
                    s.spawn(|| {
                        (0..per)
                            .filter(|_| decide(p.rules(), &write(b"/f"), &c, 0, 1).is_some())
                            .count()
                    })
                })
                .collect();
            hs.into_iter().map(|h| h.join().unwrap()).sum::<usize>()
        });
        assert_eq!(fired, 1);
        assert_eq!(c.matched[0].load(Ordering::Relaxed), 4 * per);
    }
}
