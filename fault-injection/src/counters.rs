//! The shared counter file (`VXFAULT_SHM`): every process of a preloaded tree counts
//! into it, so after (or during) a run it says how often each rule of the plan
//! matched and acted, and how many processes loaded the plan.

use std::fs;
use std::io;
use std::path::{Path, PathBuf};

use crate::{planlang, RuleInfo, RuleOutcome};

/// One run's counter file, made for one plan.
#[derive(Debug, Clone)]
pub struct Counters {
    path: PathBuf,
}

/// What the counter file says at one moment.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Counted {
    /// Processes that loaded the preload with this plan.
    pub loaded: u64,
    /// Processes that loaded it with another plan (their counts are not here).
    pub plan_mismatch: u64,
    /// Processes whose `VXFAULT_PLAN` did not parse.
    pub plan_errors: u64,
    /// Trace lines that could not be written.
    pub trace_errors: u64,
    /// Per rule of the plan, in its order.
    pub rules: Vec<RuleOutcome>,
}

impl Counters {
    /// Creates (or truncates) `path` as the counter file of `plan`: a process that
    /// loads another plan counts itself as a mismatch and keeps its own counts.
    pub fn create(path: &Path, plan: &str) -> io::Result<Counters> {
        let mut words = vec![0u64; planlang::SHM_SIZE / 8];
        words[planlang::SHM_MAGIC] = planlang::SHM_MAGIC_VALUE;
        words[planlang::SHM_PLAN_HASH] = planlang::fnv1a(plan.as_bytes());
        let bytes: Vec<u8> = words.iter().flat_map(|w| w.to_ne_bytes()).collect();
        fs::write(path, bytes)?;
        Ok(Counters {
            path: path.to_path_buf(),
        })
    }

    /// The file, for `VXFAULT_SHM`.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The counts now, for `rules` (the plan's, from [`crate::check_plan`]).
    pub fn read(&self, rules: &[RuleInfo]) -> io::Result<Counted> {
        let bytes = fs::read(&self.path)?;
        let w = |i: usize| -> u64 {
            bytes
                .get(i * 8..i * 8 + 8)
                .map(|b| u64::from_ne_bytes(b.try_into().unwrap_or([0; 8])))
                .unwrap_or(0)
        };
        let rules = rules
            .iter()
            .enumerate()
            .map(|(i, r)| RuleOutcome {
                text: r.text.clone(),
                op: r.op,
                reached: w(planlang::SHM_SEEN + r.op as usize) != 0,
                matched: w(planlang::SHM_MATCHED + i),
                fired: w(planlang::SHM_FIRED + i),
                kills: r.kills,
            })
            .collect();
        Ok(Counted {
            loaded: w(planlang::SHM_LOADED),
            plan_mismatch: w(planlang::SHM_PLAN_MISMATCH),
            plan_errors: w(planlang::SHM_PLAN_ERROR),
            trace_errors: w(planlang::SHM_TRACE_ERRORS),
            rules,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_fresh_file_counts_nothing_and_names_each_rule() {
        let dir = tempfile::tempdir().unwrap();
        let plan = "rename@/x/*#2=crash;fsync=EIO";
        let c = Counters::create(&dir.path().join("counters"), plan).unwrap();
        let rules = crate::check_plan(plan).unwrap();
        let got = c.read(&rules).unwrap();
        assert_eq!(got.loaded, 0);
        assert_eq!(got.rules.len(), 2);
        assert_eq!(got.rules[0].text, "rename@/x/*#2=crash");
        assert!(got.rules.iter().all(|r| r.matched == 0 && r.fired == 0));
        assert_eq!(
            fs::metadata(c.path()).unwrap().len() as usize,
            planlang::SHM_SIZE
        );
    }
}
