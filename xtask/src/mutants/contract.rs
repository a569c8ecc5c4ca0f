//! The contracts the battery measures: where each one's mutants and clause registry
//! live, and which reference program a mutant of it rebuilds.

/// One contract of `vxcert run --contract NAME`, as the battery sees it.
#[derive(Debug)]
pub struct Contract {
    /// The name `vxcert run --contract` takes.
    pub name: &'static str,
    /// The battery's directory, relative to the workspace root (its `*.toml` files,
    /// not its subdirectories: recovery's directory holds the others').
    pub battery_dir: &'static str,
    /// The clause registry every mutant's `clause` must name.
    pub clauses: &'static str,
    /// The package a mutant rebuilds, alone, exactly as the clean one is built.
    pub package: &'static str,
    /// The program of `package` that the contract's profile runs (profiles/reference.toml)
    /// and that a mutant's build replaces in the bin dir.
    pub binary: &'static str,
}

pub const CONTRACTS: [Contract; 4] = [
    Contract {
        name: "recovery",
        battery_dir: "harness/mutants",
        clauses: "features/recovery/clauses.toml",
        package: "vxref",
        binary: "vxref",
    },
    Contract {
        name: "single-writer",
        battery_dir: "harness/mutants/single-writer",
        clauses: "features/single-writer/clauses.toml",
        package: "vx-broker",
        binary: "vxbroker",
    },
    Contract {
        name: "session-persist",
        battery_dir: "harness/mutants/session-persist",
        clauses: "features/session-persist/clauses.toml",
        package: "vx-persist",
        binary: "vxpersist",
    },
    Contract {
        name: "agent-restore",
        battery_dir: "harness/mutants/agent-restore",
        clauses: "features/agent-restore/clauses.toml",
        package: "vxref",
        binary: "vxref",
    },
];

/// The contract called `name`, or an error listing the known names.
pub fn by_name(name: &str) -> Result<&'static Contract, String> {
    CONTRACTS.iter().find(|c| c.name == name).ok_or_else(|| {
        let names: Vec<&str> = CONTRACTS.iter().map(|c| c.name).collect();
        format!(
            "--contract {name}: not a contract (one of {})",
            names.join(", ")
        )
    })
}
