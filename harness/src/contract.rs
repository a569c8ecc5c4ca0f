//! The contracts the kit certifies. Each has a suite directory under `features/`
//! with its own clause registry, a profile table, and a World whose steps drive it.

/// One certified contract.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Contract {
    /// The venomx recovery RFC (`shared/seeds/002_…`).
    Recovery,
    /// phux ADR-0068 native agent-session restore (`000_…`).
    AgentRestore,
    /// The agent-sessions single-writer contract (`003_…`).
    SingleWriter,
    /// ADR-089 session persist (`004_…`).
    SessionPersist,
}

impl Contract {
    pub const ALL: [Contract; 4] = [
        Contract::Recovery,
        Contract::AgentRestore,
        Contract::SingleWriter,
        Contract::SessionPersist,
    ];

    /// The name on the command line, in profiles and in reports.
    pub fn name(self) -> &'static str {
        match self {
            Contract::Recovery => "recovery",
            Contract::AgentRestore => "agent-restore",
            Contract::SingleWriter => "single-writer",
            Contract::SessionPersist => "session-persist",
        }
    }

    pub fn from_name(name: &str) -> Option<Contract> {
        Contract::ALL.into_iter().find(|c| c.name() == name)
    }

    pub fn names() -> Vec<&'static str> {
        Contract::ALL.into_iter().map(Contract::name).collect()
    }

    /// The suite directory under the features root.
    pub fn suite_dir(self) -> &'static str {
        self.name()
    }

    /// The prefix of this contract's clause ids (tags `@<prefix>-…`).
    pub fn clause_prefix(self) -> &'static str {
        match self {
            Contract::Recovery => "rfc-",
            Contract::AgentRestore => "asr-",
            Contract::SingleWriter => "sw-",
            Contract::SessionPersist => "sp-",
        }
    }

    /// The document the contract comes from, for reports.
    pub fn source(self) -> &'static str {
        match self {
            Contract::Recovery => "venomx RFC: Durable session restore and daemon crash recovery (accepted 2026-11-06, history to 2026-11-10)",
            Contract::AgentRestore => "phux ADR-0068: Native agent-session restore",
            Contract::SingleWriter => "agent-sessions: Session handling, the single-writer contract",
            Contract::SessionPersist => "ADR-089: session persist",
        }
    }

    /// The parts a profile may claim alone (`parts = [...]` in the contract's table);
    /// each scenario carries the tag `@part-<name>` of the part it judges. Recovery
    /// has none: its optional features play that role.
    pub fn parts(self) -> &'static [&'static str] {
        match self {
            Contract::Recovery => &[],
            Contract::AgentRestore => &["checker", "server", "legacy"],
            Contract::SingleWriter => &["checker", "broker", "master", "client"],
            Contract::SessionPersist => &["packer", "checker", "store", "runtime"],
        }
    }

    /// The seed file the contract's clauses quote, under `shared/seeds/`.
    pub fn seed(self) -> &'static str {
        match self {
            Contract::Recovery => "002_db2fed4dbfadc150.txt",
            Contract::AgentRestore => "000_762b42388703ca93.txt",
            Contract::SingleWriter => "003_df8267c1b4854deb.txt",
            Contract::SessionPersist => "004_f9b2c105e15dcfff.txt",
        }
    }

    /// The profile table that carries this contract's command templates.
    pub fn profile_table(self) -> &'static str {
        match self {
            Contract::Recovery => "recovery",
            Contract::AgentRestore => "agent_restore",
            Contract::SingleWriter => "single_writer",
            Contract::SessionPersist => "persist",
        }
    }
}

/// What the runner needs from every contract's World.
pub trait SuiteWorld {
    /// When the scenario started.
    fn created(&self) -> std::time::Instant;
    /// The typed verdict of the step that failed, when a step raised one.
    fn failure(&self) -> Option<crate::verdict::Verdict>;
    /// What the scenario ran, saw and compared (for a report that is not `pass`).
    fn evidence(&self) -> crate::evidence::Shared;
}

impl std::fmt::Display for Contract {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_and_prefixes_are_distinct() {
        let mut prefixes = std::collections::BTreeSet::new();
        for c in Contract::ALL {
            assert_eq!(Contract::from_name(c.name()), Some(c));
            assert!(prefixes.insert(c.clause_prefix()));
        }
        assert_eq!(Contract::from_name("recovery-rfc"), None);
    }
}
