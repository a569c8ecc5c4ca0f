//! One single-writer scenario's state: the profile's offline checkers and what the
//! last one said.

pub use super::templates::{corpus_dir, templates, Templates};
use crate::contract::Contract;
use crate::drivers::checker::{self, Judging, Said};
use crate::drivers::sandbox::{self, Placeholders};
use crate::profile::context;
use crate::verdict::OrHarness;
use std::path::{Path, PathBuf};

/// What the scenario's checker read, for its twin.
#[derive(Debug, Clone, Default)]
pub enum Input {
    #[default]
    None,
    Key(String, bool),
    Sidecar(String),
    Plan([Option<String>; 5]),
}

/// One single-writer scenario: the offline checkers' sandbox.
pub struct Checks {
    /// What the last offline checker read.
    pub input: Input,
    dir: crate::drivers::sandbox::SandboxDir,
    ph: Placeholders,
    last: Option<Said>,
    /// The live rows' brokers, viewers and probes; built by the first live step.
    live: Option<super::live::Live>,
}

/// How this contract judges its checkers (the pin clause, `verdict_only`).
pub fn judging() -> Judging {
    Judging::of(Contract::SingleWriter)
}

/// A failed live row shows its brokers (argv, exit or still running, stderr's end)
/// and what changed in the sandbox since the suite first addressed a broker.
impl crate::drivers::step::OnFailure for Checks {
    fn on_failure(&mut self) {
        if let Some(live) = self.live.as_mut() {
            live.record_failure();
        }
    }
}

impl Checks {
    pub fn new() -> Checks {
        let (dir, ph) = sandbox::create(context().bin_dir.clone());
        Checks {
            input: Input::None,
            dir,
            ph,
            last: None,
            live: None,
        }
    }

    fn run(&mut self, words: Vec<String>) -> &Said {
        self.last = Some(checker::run_judged(
            &self.ph,
            &words,
            self.dir.path(),
            &judging(),
        ));
        self.last()
    }

    fn key_words(key: &str, new: bool) -> Vec<String> {
        let t = templates();
        let template = if new { t.key_check_new } else { t.key_check };
        template.iter().map(|w| w.replace("{key}", key)).collect()
    }

    /// Judges one session key; the line must be about that key (the kit's line shape:
    /// a pin).
    pub fn check_key(&mut self, key: &str, new: bool) {
        let said = self.run(Self::key_words(key, new));
        if !judging().verdict_only && said.line["key"].as_str() != Some(key) {
            crate::evidence::pin(
                &judging().pin_clause,
                format!("a line naming the key {key:?}"),
                said.line.to_string(),
            );
        }
    }

    /// Runs the key checker on `key`, the valid twin of a refused one, as the
    /// scenario's control.
    pub fn control_key(&mut self, key: &str, new: bool) {
        let what = format!("the key checker on the valid key {key:?}");
        self.control(Self::key_words(key, new), &what);
    }

    fn plan_words(have: Option<&str>, gen: Option<&str>, rest: [&str; 3]) -> Vec<String> {
        let mut words = templates().resume_plan;
        for (flag, v) in [("--have", have), ("--gen", gen)] {
            if let Some(v) = v {
                words.extend([flag.to_string(), v.to_string()]);
            }
        }
        for (flag, v) in ["--total", "--ring-len", "--master-gen"].iter().zip(rest) {
            words.extend([flag.to_string(), v.to_string()]);
        }
        words
    }

    /// Asks for a resume plan; `None` counters are absent.
    pub fn plan(&mut self, have: Option<&str>, gen: Option<&str>, rest: [&str; 3]) {
        self.run(Self::plan_words(have, gen, rest));
    }

    /// Asks for the plan of a valid twin as the scenario's control: accepted when the
    /// planner exits 0 with a plan.
    pub fn control_plan(&mut self, have: Option<&str>, gen: Option<&str>, rest: [&str; 3]) {
        let words = Self::plan_words(have, gen, rest);
        let said = checker::run_judged(&self.ph, &words, self.dir.path(), &judging());
        crate::evidence::control(
            "single-writer.resume_plan",
            crate::evidence::Control {
                what: format!(
                    "the resume planner on the valid twin have={have:?} gen={gen:?} total/ring_len/master_gen={rest:?}"
                ),
                accepted: said.exit == 0 && said.line["plan"].is_string(),
                observed: checker::said_words(&said),
                commands: crate::evidence::commands_of_step(),
            },
        );
    }

    fn sidecar_words(file: &Path) -> Vec<String> {
        templates()
            .sidecar_check
            .iter()
            .map(|w| w.replace("{file}", &file.to_string_lossy()))
            .collect()
    }

    /// Judges one sidecar file; the kit's line (`{file, result, rule, reason}` about
    /// that file) is a pin.
    pub fn check_sidecar(&mut self, file: &Path) {
        let said = self.run(Self::sidecar_words(file));
        let j = judging();
        if j.verdict_only {
            return;
        }
        let shape = checker::keys(&said.line) == ["file", "reason", "result", "rule"]
            && said.line["file"].as_str() == Some(file.to_string_lossy().as_ref());
        if !shape {
            crate::evidence::pin(
                &j.pin_clause,
                format!(
                    "exactly {{file, result, rule, reason}} about {}",
                    file.display()
                ),
                said.line.to_string(),
            );
        }
    }

    /// Runs the sidecar checker on `file`, the valid twin of a refused one, as the
    /// scenario's control.
    pub fn control_sidecar(&mut self, file: &Path) {
        let what = format!("the sidecar checker on the valid file {}", file.display());
        self.control(Self::sidecar_words(file), &what);
    }

    fn control(&mut self, words: Vec<String>, what: &str) {
        checker::control(
            &self.ph,
            &words,
            self.dir.path(),
            &judging(),
            "single-writer.checker",
            what,
        );
    }

    /// A file in the scenario's sandbox (an input the suite generates).
    pub fn write_input(&self, rel: &str, bytes: &[u8]) -> PathBuf {
        let p = self.dir.path().join(rel);
        if let Some(d) = p.parent() {
            std::fs::create_dir_all(d).or_harness("creating the input's directory");
        }
        std::fs::write(&p, bytes).or_harness("writing the scenario's input");
        p
    }

    /// The live rows' state, built on first use.
    pub fn live(&mut self) -> &mut super::live::Live {
        self.live.get_or_insert_with(super::live::Live::new)
    }

    pub fn last(&self) -> &Said {
        self.last
            .as_ref()
            .or_harness("no checker ran in this scenario")
    }
}
