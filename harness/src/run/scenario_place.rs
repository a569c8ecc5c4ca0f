//! Where a scenario sits in its feature (its row, file, line, Examples row, its
//! reproduction directory's name) and the verdict it earned from how it finished.

use crate::contract::Contract;
use crate::verdict::Verdict;
use cucumber::event;

/// The row a scenario counts for: its feature's name, or the name of the `Rule:` it
/// sits in (a feature that gathers checks of several rows puts each under a `Rule:`
/// named after its row).
pub(super) fn row_of(
    f: &cucumber::gherkin::Feature,
    r: Option<&cucumber::gherkin::Rule>,
) -> String {
    r.map_or_else(|| f.name.clone(), |r| r.name.clone())
}

/// The text of the Examples row at `line`, when the scenario comes from an outline.
pub(super) fn example_row(f: &cucumber::gherkin::Feature, line: usize) -> Option<String> {
    let text = std::fs::read_to_string(f.path.as_ref()?).ok()?;
    let row = text.lines().nth(line.checked_sub(1)?)?.trim();
    row.starts_with('|').then(|| {
        row.trim_matches('|')
            .split('|')
            .map(str::trim)
            .collect::<Vec<_>>()
            .join(" | ")
    })
}

pub(super) fn feature_path(f: &cucumber::gherkin::Feature) -> String {
    f.path
        .as_ref()
        .map_or_else(|| f.name.clone(), |p| p.display().to_string())
}

/// `<contract>/<feature stem>-L<line>`: one reproduction directory per scenario.
pub(super) fn repro_name(
    contract: Contract,
    f: &cucumber::gherkin::Feature,
    line: usize,
) -> String {
    let stem = f
        .path
        .as_ref()
        .and_then(|p| p.file_stem())
        .map_or_else(|| "feature".into(), |n| n.to_string_lossy().into_owned());
    format!("{}/{stem}-L{line}", contract.name())
}

/// A scenario that held every MUST but deviated from a kit pin is `non-strict`, and
/// says where.
pub(super) fn with_pins(
    verdict: Verdict,
    message: Option<String>,
    kept: Option<&crate::evidence::Kept>,
) -> (Verdict, Option<String>) {
    match kept {
        Some(k) if verdict == Verdict::Pass && !k.pins.is_empty() => {
            let words: Vec<String> = k
                .pins
                .iter()
                .map(|p| {
                    format!(
                        "{}: expected {}; observed {}",
                        p.clause, p.expected, p.observed
                    )
                })
                .collect();
            (Verdict::NonStrict, Some(words.join("; ")))
        }
        _ => (verdict, message),
    }
}

pub(super) fn feature_file(f: &cucumber::gherkin::Feature) -> String {
    f.path
        .as_ref()
        .and_then(|p| p.file_name())
        .map_or_else(|| f.name.clone(), |n| n.to_string_lossy().into_owned())
}

/// A scenario's verdict from how it finished and the typed verdict its World kept.
pub(super) fn classify(
    ev: Option<&event::ScenarioFinished>,
    failure: Option<Verdict>,
) -> (Verdict, Option<String>) {
    match ev {
        None => (
            Verdict::HarnessError,
            Some("the scenario did not finish".into()),
        ),
        Some(event::ScenarioFinished::StepPassed) => (Verdict::Pass, None),
        Some(event::ScenarioFinished::StepSkipped) => (
            Verdict::HarnessError,
            Some("a step matches no step definition (undefined step)".into()),
        ),
        Some(event::ScenarioFinished::BeforeHookFailed(info)) => {
            (Verdict::HarnessError, Some(panic_text(info.as_ref())))
        }
        Some(event::ScenarioFinished::StepFailed(_, _, err)) => match err {
            event::StepError::Panic(p) => (
                failure.unwrap_or(Verdict::Fail),
                Some(panic_text(p.as_ref())),
            ),
            event::StepError::NotFound => (
                Verdict::HarnessError,
                Some("a step matches no step definition (undefined step)".into()),
            ),
            event::StepError::AmbiguousMatch(e) => (
                Verdict::HarnessError,
                Some(format!("a step matches several step definitions: {e}")),
            ),
        },
    }
}

fn panic_text(p: &(dyn std::any::Any + Send)) -> String {
    crate::verdict::StepFailure::from_panic(p).message
}
