//! The offline checkers of the checker part: the archive and template checkers run
//! on one input each, judged as the profile asks (`verdict_only` or the kit's pinned
//! verdict line), and every refusal preceded by its control, the checker on the
//! corpus's valid base input of the same kind.

use crate::contract::Contract;
use crate::drivers::checker::{self, Judging, Said};
use crate::drivers::sandbox::{self, Placeholders};
use crate::verdict::OrHarness;
use std::path::{Path, PathBuf};

/// The pin under which the kit's own verdict line (its members, codes, rule ids and
/// exit 1) is judged.
pub const PIN: &str = "asr-pin-checker-verdict";

/// Which checker judged the last input.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Archive,
    Template,
}

impl Kind {
    fn words(self) -> Vec<String> {
        let t = super::templates::templates();
        match self {
            Kind::Archive => t.archive_check,
            Kind::Template => t.template_check,
        }
    }

    /// The corpus's valid base input of this kind: the refusals' valid twin.
    fn twin(self) -> PathBuf {
        let corpus = super::templates::corpus_dir();
        match self {
            Kind::Archive => corpus.join("workspace/valid-phux-schema2.json"),
            Kind::Template => corpus.join("integrations/valid-peer-claude.toml"),
        }
    }

    fn name(self) -> &'static str {
        match self {
            Kind::Archive => "archive",
            Kind::Template => "template",
        }
    }
}

/// One scenario's offline checker runs: its sandbox (the checkers' working
/// directory), the inputs the scenario writes, and what the last run said.
pub struct Offline {
    dir: crate::drivers::sandbox::SandboxDir,
    inputs: checker::CheckerScenario,
    ph: Placeholders,
    last: Option<(Kind, Said)>,
}

fn with_file(words: &[String], file: &Path) -> Vec<String> {
    words
        .iter()
        .map(|w| w.replace("{file}", &file.to_string_lossy()))
        .collect()
}

impl Offline {
    pub fn new(bin_dir: PathBuf) -> Offline {
        let (dir, ph) = sandbox::create(bin_dir.clone());
        Offline {
            dir,
            inputs: checker::CheckerScenario::new(bin_dir),
            ph,
            last: None,
        }
    }

    pub fn judging() -> Judging {
        Judging::of(Contract::AgentRestore)
    }

    /// A file the scenario writes for a checker to read.
    pub fn write_input(&self, name: &str, bytes: &[u8]) -> PathBuf {
        self.inputs.write_input(name, bytes)
    }

    /// Runs the `kind` checker on `file`. Unless the profile judges by verdict
    /// alone, the line must be one JSON object; that it holds exactly `file`,
    /// `result`, `rule` and `reason`, `file` the input given, is the kit's pin.
    pub fn check(&mut self, kind: Kind, file: &Path) -> &Said {
        let judging = Self::judging();
        let said = checker::run_judged(
            &self.ph,
            &with_file(&kind.words(), file),
            self.dir.path(),
            &judging,
        );
        if !judging.verdict_only {
            let keys = checker::keys(&said.line);
            if keys != ["file", "reason", "result", "rule"] {
                crate::evidence::pin(
                    PIN,
                    "a verdict line of exactly file, result, rule and reason",
                    format!("the members {keys:?}"),
                );
            }
            let want = file.to_string_lossy();
            if said.line["file"].as_str() != Some(want.as_ref()) {
                crate::evidence::pin(
                    PIN,
                    format!("\"file\" {want:?}, the input given"),
                    format!("\"file\" {}", said.line["file"]),
                );
            }
        }
        self.last = Some((kind, said));
        self.last()
    }

    pub fn last(&self) -> &Said {
        &self
            .last
            .as_ref()
            .or_harness("no checker ran in this scenario")
            .1
    }

    /// The input was accepted: exit 0 (and `"result":"valid"` unless by verdict
    /// alone) is the seed's; a valid line naming no rule is the kit's pin.
    pub fn assert_accepted(&self) {
        let judging = Self::judging();
        let s = self.last();
        crate::evidence::ensure(checker::accepted(s, &judging), None, || {
            (
                "the checker to accept the input (exit 0)".into(),
                checker::said_words(s),
            )
        });
        if !judging.verdict_only && !s.line["rule"].is_null() {
            crate::evidence::pin(
                PIN,
                "a valid verdict names no rule",
                format!("\"rule\" {}", s.line["rule"]),
            );
        }
    }

    /// The input was refused: first the control (the same checker on the corpus's
    /// valid base input of the same kind, which it must accept, else the refusal
    /// proves nothing), then the refusal judged as the profile asks.
    pub fn assert_refused(&self, code: &str, rule: &str) {
        let (kind, said) = self
            .last
            .as_ref()
            .or_harness("no checker ran in this scenario");
        let judging = Self::judging();
        let twin = kind.twin();
        checker::control(
            &self.ph,
            &with_file(&kind.words(), &twin),
            self.dir.path(),
            &judging,
            "agent-restore.checker",
            &format!(
                "the {} checker on the corpus's valid {}",
                kind.name(),
                twin.file_name().unwrap_or_default().to_string_lossy()
            ),
        );
        checker::assert_refused_judged(said, code, rule, &judging);
    }
}
