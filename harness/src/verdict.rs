//! Verdicts, and how a step says which one it earned.
//!
//! A step fails the implementation by panicking the ordinary way (`assert!`,
//! `panic!`, `expect`): that is a [`Verdict::Fail`]. When the suite itself cannot do
//! what the step says (an undefined variable, a missing tool, a command that cannot
//! start), or a wait runs past its deadline, the step raises a typed [`StepFailure`]
//! with [`harness_error!`] or [`timed_out!`]. The runner tells them apart by the panic
//! payload's type, never by its text.

use serde::Serialize;

/// The verdict of one scenario, row or clause (`report.json`'s `verdict`).
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, serde::Deserialize,
)]
#[serde(rename_all = "kebab-case")]
pub enum Verdict {
    /// A part of the contract the profile does not claim (`parts = [...]`).
    NotClaimed,
    /// An optional feature the profile does not claim, an environment the suite
    /// lacks (root, libfaketime), a clause that binds the implementer's process, or a
    /// row whose subject the implementation's own choices leave out where the seed
    /// lets them (a backend or a session subtree its layouts do not have).
    UnsupportedOptional,
    Pass,
    /// Every MUST held, but the implementation chose differently from a kit pin (a
    /// name, a code, a shape the seed leaves open): reported, never fails the run.
    NonStrict,
    /// The scenario could not show what it is for: its valid twin (the control) was
    /// refused, or the implementation never accepted a valid input of that kind.
    Inconclusive,
    /// Run more than once (`vxcert run --repeat N`), the scenario got different
    /// verdicts; the report keeps the evidence of each.
    Flaky,
    /// An assertion about the implementation failed.
    Fail,
    /// A wait ran past its deadline.
    Timeout,
    /// The suite could not do what a step says.
    HarnessError,
}

impl Verdict {
    /// Every verdict, in the order reports show their counts.
    pub const ALL: [Verdict; 9] = [
        Verdict::Pass,
        Verdict::NonStrict,
        Verdict::Fail,
        Verdict::Flaky,
        Verdict::Inconclusive,
        Verdict::Timeout,
        Verdict::HarnessError,
        Verdict::UnsupportedOptional,
        Verdict::NotClaimed,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Verdict::Pass => "pass",
            Verdict::NonStrict => "non-strict",
            Verdict::Inconclusive => "inconclusive",
            Verdict::Flaky => "flaky",
            Verdict::NotClaimed => "not-claimed",
            Verdict::Fail => "fail",
            Verdict::Timeout => "timeout",
            Verdict::HarnessError => "harness-error",
            Verdict::UnsupportedOptional => "unsupported-optional",
        }
    }

    /// Whether a MUST scenario with this verdict makes the run fail: a certification
    /// needs evidence, so an inconclusive scenario fails it too (a pin never does).
    pub fn fails_run(self) -> bool {
        matches!(
            self,
            Verdict::Fail
                | Verdict::Flaky
                | Verdict::Inconclusive
                | Verdict::Timeout
                | Verdict::HarnessError
        )
    }

    /// Whether the scenario held its MUSTs (a pass, or a pass but for pins).
    pub fn held(self) -> bool {
        matches!(self, Verdict::Pass | Verdict::NonStrict)
    }

    /// The worst of a group (harness-error > timeout > fail > flaky > inconclusive >
    /// non-strict > pass > unsupported > not-claimed);
    /// `None` for an empty group.
    pub fn worst(vs: impl IntoIterator<Item = Verdict>) -> Option<Verdict> {
        vs.into_iter().max()
    }
}

impl std::fmt::Display for Verdict {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A step's typed failure: a panic payload the runner downcasts.
#[derive(Debug, Clone)]
pub struct StepFailure {
    pub verdict: Verdict,
    pub message: String,
}

impl StepFailure {
    /// Raises this failure as the step's panic.
    pub fn raise(self) -> ! {
        std::panic::panic_any(self)
    }

    /// Raises a failure with this verdict and message (the verdict macros' body).
    pub fn raise_with(verdict: Verdict, message: String) -> ! {
        StepFailure { verdict, message }.raise()
    }

    /// The verdict and message a step's panic payload stands for: a [`StepFailure`]
    /// keeps its own, any other panic is a failure of the implementation.
    pub fn from_panic(payload: &(dyn std::any::Any + Send)) -> StepFailure {
        if let Some(f) = payload.downcast_ref::<StepFailure>() {
            return f.clone();
        }
        let message = if let Some(s) = payload.downcast_ref::<String>() {
            s.clone()
        } else if let Some(s) = payload.downcast_ref::<&str>() {
            (*s).to_string()
        } else {
            "panic".into()
        };
        StepFailure {
            verdict: Verdict::Fail,
            message: as_sentence(&message),
        }
    }
}

/// A standard assertion's panic text as a report sentence: `assert_eq!`'s
/// "assertion `left == right` failed: WHAT / left: L / right: R" becomes
/// "WHAT: expected R; observed L" (the suites write `assert_eq!(observed, expected,
/// "what")`), `assert_ne!`'s "WHAT: expected anything but R; observed L", and a bare
/// `assert!`'s "the check `COND` did not hold". Any other text is kept.
pub fn as_sentence(raw: &str) -> String {
    if let Some(rest) = raw.strip_prefix("assertion `left ") {
        let parsed = rest.split_once(" right` failed").and_then(|(op, rest)| {
            let (what, rest) = match rest.strip_prefix(": ") {
                Some(r) => r.split_once("\n  left: ")?,
                None => ("the value", rest.strip_prefix("\n  left: ")?),
            };
            let (left, right) = rest.split_once("\n right: ")?;
            Some((op, what, left, right))
        });
        if let Some((op, what, left, right)) = parsed {
            let expected = if op == "==" {
                right.to_string()
            } else {
                format!("anything but {right}")
            };
            return format!("{what}: expected {expected}; observed {left}");
        }
    }
    if let Some(cond) = raw.strip_prefix("assertion failed: ") {
        return format!("the check `{cond}` did not hold");
    }
    raw.to_string()
}

impl std::fmt::Display for StepFailure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.verdict, self.message)
    }
}

/// Ends the step with a `harness-error` verdict (format arguments as `format!`).
#[macro_export]
macro_rules! harness_error {
    ($($arg:tt)*) => {
        $crate::verdict::StepFailure::raise_with($crate::verdict::Verdict::HarnessError, format!($($arg)*))
    };
}

/// Ends the step with an `inconclusive` verdict: the scenario's control (its valid
/// twin) was refused, so a refusal proves nothing (format arguments as `format!`).
#[macro_export]
macro_rules! inconclusive {
    ($($arg:tt)*) => {
        $crate::verdict::StepFailure::raise_with($crate::verdict::Verdict::Inconclusive, format!($($arg)*))
    };
}

/// Ends the step with an `unsupported-optional` verdict: the row's subject is absent
/// from the implementation by a choice its seed leaves open (format arguments as
/// `format!`; the message names the choice).
#[macro_export]
macro_rules! does_not_apply {
    ($($arg:tt)*) => {
        $crate::verdict::StepFailure::raise_with($crate::verdict::Verdict::UnsupportedOptional, format!($($arg)*))
    };
}

/// Ends the step with a `timeout` verdict (format arguments as `format!`).
#[macro_export]
macro_rules! timed_out {
    ($($arg:tt)*) => {
        $crate::verdict::StepFailure::raise_with($crate::verdict::Verdict::Timeout, format!($($arg)*))
    };
}

/// `Result`/`Option` → value, or a `harness-error` naming what the suite was doing.
pub trait OrHarness<T> {
    fn or_harness(self, doing: &str) -> T;
}

impl<T, E: std::fmt::Display> OrHarness<T> for Result<T, E> {
    fn or_harness(self, doing: &str) -> T {
        match self {
            Ok(v) => v,
            Err(e) => harness_error!("{doing}: {e}"),
        }
    }
}

impl<T> OrHarness<T> for Option<T> {
    fn or_harness(self, doing: &str) -> T {
        match self {
            Some(v) => v,
            None => harness_error!("{doing}"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn verdict_of(f: impl FnOnce() + std::panic::UnwindSafe) -> Verdict {
        let p = std::panic::catch_unwind(f).expect_err("the closure panics");
        StepFailure::from_panic(p.as_ref()).verdict
    }

    #[test]
    fn panics_map_to_verdicts_by_type_not_text() {
        assert_eq!(
            verdict_of(|| harness_error!("no tool")),
            Verdict::HarnessError
        );
        assert_eq!(verdict_of(|| timed_out!("waiting")), Verdict::Timeout);
        assert_eq!(
            verdict_of(|| does_not_apply!("no subtree")),
            Verdict::UnsupportedOptional
        );
        assert_eq!(verdict_of(|| panic!("assertion failed")), Verdict::Fail);
        // A plain panic whose text looks like a verdict is still a failure.
        assert_eq!(verdict_of(|| panic!("harness-error: x")), Verdict::Fail);
        assert_eq!(
            verdict_of(|| {
                None::<u8>.or_harness("no pane");
            }),
            Verdict::HarnessError
        );
    }

    #[test]
    fn worst_orders_verdicts() {
        use Verdict::*;
        assert_eq!(Verdict::worst([Pass, Fail, Timeout]), Some(Timeout));
        assert_eq!(Verdict::worst([Pass, UnsupportedOptional]), Some(Pass));
        assert_eq!(Verdict::worst([Pass, NonStrict]), Some(NonStrict));
        assert_eq!(
            Verdict::worst([NonStrict, Inconclusive]),
            Some(Inconclusive)
        );
        assert_eq!(Verdict::worst([Inconclusive, Fail]), Some(Fail));
        assert_eq!(Verdict::worst([Inconclusive, Flaky, Pass]), Some(Flaky));
        assert_eq!(Verdict::worst([Flaky, Fail]), Some(Fail));
        assert!(Flaky.fails_run());
        assert_eq!(
            Verdict::worst([NotClaimed, UnsupportedOptional]),
            Some(UnsupportedOptional)
        );
        assert!(Inconclusive.fails_run() && !NonStrict.fails_run() && !NotClaimed.fails_run());
        assert_eq!(Verdict::worst([HarnessError, Timeout]), Some(HarnessError));
        assert_eq!(Verdict::worst([]), None);
        assert!(Fail.fails_run() && !Pass.fails_run() && !UnsupportedOptional.fails_run());
    }
}
