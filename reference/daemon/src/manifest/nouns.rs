//! What each noun of the CLI groups, for `vxref --help` (the verbs' own help comes
//! from the verb table). A test holds it to exactly the groups the CLI has.

pub const NOUNS: &[(&str, &str)] = &[
    ("server", "The daemon itself: its identity and capabilities"),
    ("auth", "The connection's principal: log in, who am I"),
    ("grant", "Issue and revoke principals and their grants"),
    ("session", "Sessions: create, list, rename, kill"),
    (
        "window",
        "Windows of a session: create, rename, kill, resize, split ratios",
    ),
    (
        "pane",
        "Panes: start, split, float, relaunch, list, capture, attach (in this terminal), send, tag, kill, place, resize",
    ),
    ("config", "The ZON configuration: get, set, check, reload"),
    (
        "recovery",
        "Checkpoints of the store: take, list, inspect, restore, forget",
    ),
    (
        "meta",
        "Pane metadata, among it the agent-session record (ADR-0068)",
    ),
    (
        "integration",
        "Integration templates from the plugin directories, and their checker",
    ),
    (
        "agent",
        "Launch an integration's agent natively (resume or mint its session)",
    ),
    ("workspace", "Workspace archives: save, restore, check"),
];

/// The description of `noun`, if it has one.
pub fn about(noun: &str) -> Option<&'static str> {
    NOUNS.iter().find(|(n, _)| *n == noun).map(|(_, d)| *d)
}

#[cfg(test)]
mod tests {
    #[test]
    fn every_command_of_the_cli_explains_itself_and_no_noun_is_stale() {
        let root = crate::cli::command();
        for c in root.get_subcommands().filter(|c| c.get_name() != "help") {
            assert!(
                c.get_about().is_some(),
                "`vxref {}` has no description",
                c.get_name()
            );
            for v in c.get_subcommands().filter(|v| v.get_name() != "help") {
                assert!(
                    v.get_about().is_some(),
                    "`vxref {} {}` has no description",
                    c.get_name(),
                    v.get_name()
                );
            }
        }
        for (noun, _) in super::NOUNS {
            assert!(
                root.find_subcommand(noun).is_some(),
                "no `vxref {noun}` group"
            );
        }
    }
}
