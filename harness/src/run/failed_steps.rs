//! The text of the step each scenario failed at, read off cucumber's own events (the
//! after-hook sees how a scenario ended, not which step ended it).

use cucumber::{event, parser, Event};
use std::collections::BTreeMap;
use std::sync::Mutex;

/// (feature file path, scenario line) → `Keyword text` of the step that failed.
static FAILED: Mutex<BTreeMap<(String, usize), String>> = Mutex::new(BTreeMap::new());

/// The step a scenario failed at, if one did.
pub fn of(feature_path: &str, line: usize) -> Option<String> {
    FAILED
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .get(&(feature_path.to_string(), line))
        .cloned()
}

/// A cucumber writer that keeps the failing step of every scenario.
pub struct Writer;

fn keep(
    feature: &cucumber::gherkin::Feature,
    scenario: &cucumber::gherkin::Scenario,
    step: &cucumber::gherkin::Step,
) {
    let path = feature
        .path
        .as_ref()
        .map_or_else(|| feature.name.clone(), |p| p.display().to_string());
    let text = format!("{}{}", step.keyword, step.value);
    FAILED
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .insert((path, scenario.position.line), text.trim().to_string());
}

fn failed_step<W>(ev: &event::RetryableScenario<W>) -> Option<&cucumber::gherkin::Step> {
    match &ev.event {
        event::Scenario::Step(step, event::Step::Failed(..))
        | event::Scenario::Background(step, event::Step::Failed(..)) => Some(step.as_ref()),
        _ => None,
    }
}

impl<W: cucumber::World> cucumber::Writer<W> for Writer {
    type Cli = cucumber::cli::Empty;

    async fn handle_event(&mut self, ev: parser::Result<Event<event::Cucumber<W>>>, _: &Self::Cli) {
        let Ok(ev) = ev else { return };
        if let event::Cucumber::Feature(feature, f) = &ev.value {
            let (scenario, sev) = match f {
                event::Feature::Scenario(s, sev) => (s, sev),
                event::Feature::Rule(_, event::Rule::Scenario(s, sev)) => (s, sev),
                _ => return,
            };
            if let Some(step) = failed_step(sev) {
                keep(feature, scenario, step);
            }
        }
    }
}
