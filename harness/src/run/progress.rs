//! Progress on stderr while a run goes (only on a terminal, never with `--quiet`):
//! scenarios done of those selected so far, and failures, per contract.

use crate::contract::Contract;
use crate::verdict::Verdict;
use std::collections::BTreeMap;
use std::io::{IsTerminal, Write};
use std::sync::Mutex;

#[derive(Default, Clone, Copy)]
struct Counts {
    selected: usize,
    done: usize,
    failed: usize,
}

pub struct Progress {
    enabled: bool,
    counts: Mutex<BTreeMap<Contract, Counts>>,
}

impl Progress {
    pub fn new(quiet: bool) -> Progress {
        Progress {
            enabled: !quiet && std::io::stderr().is_terminal(),
            counts: Mutex::new(BTreeMap::new()),
        }
    }

    /// A scenario of `contract` was selected to run.
    pub fn selected(&self, contract: Contract) {
        self.update(contract, |c| c.selected += 1);
    }

    /// A scenario of `contract` finished (or was judged without running).
    pub fn done(&self, contract: Contract, verdict: Verdict) {
        self.update(contract, |c| {
            if verdict == Verdict::UnsupportedOptional {
                c.selected += 1;
            }
            c.done += 1;
            if verdict.fails_run() {
                c.failed += 1;
            }
        });
    }

    fn update(&self, contract: Contract, f: impl FnOnce(&mut Counts)) {
        let mut counts = self.counts.lock().unwrap_or_else(|p| p.into_inner());
        f(counts.entry(contract).or_default());
        if self.enabled {
            let line: Vec<String> = counts
                .iter()
                .map(|(c, n)| format!("{c}: {}/{} done, {} failed", n.done, n.selected, n.failed))
                .collect();
            let mut err = std::io::stderr().lock();
            let _ = write!(err, "\r\x1b[2K{}", line.join(" · "));
            let _ = err.flush();
        }
    }

    /// Ends the progress line, so the summary starts on its own.
    pub fn finish(&self) {
        if self.enabled {
            eprintln!();
        }
    }
}
