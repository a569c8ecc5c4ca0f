//! The error codes each verb can return, for its long help, the manifest JSON and
//! `docs/spec/verbs.md`. Most come from the verb's own entry: every declared param can
//! be invalid, an unknown param is refused, a dispatch grant can be denied, the
//! targeted resource can be missing. [`specific`] adds what only the handler knows,
//! through one exhaustive `match`, so a new verb does not compile without its list.
//! Debug builds hold the daemon to the list: a reply with a code outside it aborts
//! (`server.rs`), so every suite run checks the table against the handlers.

use super::{Target, Verb, VerbId};
use crate::errors::ErrorCode as E;
use crate::manifest::RightName;

/// Codes any verb can return, whatever its entry says: the daemon failed, is
/// stopping, or the connection's principal was revoked mid-connection. The frame
/// errors (`invalid_request.*`) come before any verb is known.
pub const ANY_VERB: &[E] = &[E::Internal, E::Shutdown, E::DeniedToken];

/// What every verb dispatched under the spawn right can return: the new pane's ids
/// can run out, its delegation can be refused, its program can fail to start.
const SPAWN: &[E] = &[E::Ids, E::DeniedDelegation, E::Spawn];
const STORE_READ: [E; 6] = [
    E::RecoveryIo,
    E::CheckpointNotFound,
    E::CheckpointCorrupt,
    E::CheckpointExpired,
    E::CheckpointFormat,
    E::CheckpointSize,
];
const RESTORE: [E; 9] = concat(STORE_READ, [E::RecoveryDisabled, E::NotEmpty, E::Ids]);

/// `a` then `b`, for code lists built from shared parts in a `const`.
const fn concat<const A: usize, const B: usize, const N: usize>(a: [E; A], b: [E; B]) -> [E; N] {
    assert!(A + B == N, "the list's length is the sum of its parts");
    let mut out = [E::Internal; N];
    let mut i = 0;
    while i < N {
        out[i] = if i < A { a[i] } else { b[i - A] };
        i += 1;
    }
    out
}
// A config write or reload reopens the recovery store and purges text a new policy
// no longer allows; either can fail on the disk.
const CONFIG_WRITE: &[E] = &[E::Param("config"), E::ConfigIo, E::RecoveryIo];

/// What a verb's handler can return beyond the codes its entry implies (its params,
/// its target, its right, and [`SPAWN`] for every verb under the spawn right).
pub fn specific(id: VerbId) -> &'static [E] {
    use VerbId as V;
    match id {
        V::ServerInfo | V::AuthWhoami | V::SessionList | V::IntegrationList => &[],
        V::AuthLogin => &[E::DeniedToken],
        V::GrantIssue => &[E::DeniedDelegation],
        V::GrantRevoke => &[E::PrincipalNotFound],
        V::SessionCreate => &[E::Exists, E::Ids],
        V::SessionRename | V::SessionKill => &[],
        V::WindowCreate => &[E::Ids],
        V::WindowRename | V::WindowKill | V::WindowResize => &[],
        V::WindowRatio => &[E::Revision],
        V::PaneCreate => &[E::NotEmpty],
        V::PaneSplit => &[E::Layer],
        V::PaneFloat => &[],
        V::PaneRelaunch => &[E::DeniedWrite, E::NotArchive],
        V::PaneList => &[E::WindowNotFound],
        V::PaneCapture => &[],
        V::PaneAttach => &[],
        V::PaneSend => &[E::Exited, E::InputFull],
        V::PaneTag => &[E::TagLimit],
        V::PaneKill => &[],
        V::PanePlace => &[E::Layer, E::WindowNotFound, E::NotEmpty],
        V::PaneResize => &[],
        V::ConfigGet => &[],
        V::ConfigSet | V::ConfigReload => CONFIG_WRITE,
        V::ConfigCheck => &[E::Param("config")],
        V::RecoveryCheckpoint => &[
            E::RecoveryDisabled,
            E::RecoveryBusy,
            E::RecoveryIo,
            E::CheckpointSize,
        ],
        V::RecoveryList => &[E::RecoveryIo],
        V::RecoveryInspect => &STORE_READ,
        V::RecoveryRestore => &RESTORE,
        V::RecoveryForget => &[E::RecoveryIo, E::CheckpointNotFound],
        V::EventsSubscribe => &[],
        V::Doctor => &[],
        V::MetaGet => &[],
        // The value of the record key is an `agent-session/v1` record.
        V::MetaSet => &[E::ReservedKey, E::MetaKeyLimit, E::Param("agent_session")],
        V::MetaDelete => &[E::ReservedKey],
        V::AgentLaunch => &[
            E::NotEmpty,
            E::IntegrationNotFound,
            E::IntegrationDisabled,
            E::IntegrationAmbiguous,
            E::IntegrationOwner,
            E::NativeRestore,
        ],
    }
}

fn denied(right: RightName) -> E {
    match right {
        RightName::Read => E::DeniedRead,
        RightName::Write => E::DeniedWrite,
        RightName::Spawn => E::DeniedSpawn,
        RightName::Admin => E::DeniedAdmin,
    }
}

fn not_found(param: &str) -> Option<E> {
    match param {
        "session" => Some(E::SessionNotFound),
        "window" => Some(E::WindowNotFound),
        "pane" => Some(E::PaneNotFound),
        _ => None,
    }
}

impl Verb {
    /// Every code this verb can return but [`ANY_VERB`]'s, by class, then in the docs
    /// table's order ([`E::ALL`]), each once; `invalid_params.<param>` once per declared param.
    pub fn error_codes(&self) -> Vec<E> {
        let mut codes: Vec<E> = self.params.iter().map(|p| E::Param(p.name)).collect();
        codes.push(E::UnknownParam);
        match self.target {
            Target::Open | Target::Filtered => {}
            Target::Server => codes.push(denied(self.right)),
            Target::Param(p) => {
                codes.push(denied(self.right));
                codes.extend(not_found(p));
            }
        }
        let spawned = if self.right == RightName::Spawn {
            SPAWN
        } else {
            &[]
        };
        for &code in spawned.iter().chain(specific(self.id)) {
            if !codes.contains(&code) {
                codes.push(code);
            }
        }
        let rank = |c: &E| match c {
            E::Param(p) => self.params.iter().position(|q| q.name == *p).unwrap_or(0),
            _ => 0,
        };
        let order = |c: &E| {
            let at = E::ALL.iter().position(|a| match (a, c) {
                (E::Param(_), E::Param(_)) => true,
                _ => a == c,
            });
            let class = crate::errors::Class::ALL
                .iter()
                .position(|k| *k == c.class());
            (class, at.unwrap_or(usize::MAX), rank(c))
        };
        codes.sort_by_key(order);
        codes
    }

    /// Whether a reply of this verb may carry `code`.
    pub fn may_return(&self, code: E) -> bool {
        ANY_VERB.contains(&code) || self.error_codes().contains(&code)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::manifest::VERBS;

    #[test]
    fn every_listed_param_code_names_a_param_or_a_document() {
        for v in VERBS {
            for code in specific(v.id) {
                if let E::Param(p) = code {
                    let document = ["config", "agent_session"].contains(p);
                    assert!(document || v.param(p).is_some(), "{} {p}", v.name);
                }
            }
        }
    }

    #[test]
    fn codes_are_unique_and_the_targets_not_found_is_listed() {
        for v in VERBS {
            let codes = v.error_codes();
            let mut seen = Vec::new();
            for c in &codes {
                assert!(!seen.contains(c), "{} lists {c} twice", v.name);
                seen.push(*c);
            }
            if let Target::Param(p) = v.target {
                assert!(
                    codes.contains(&not_found(p).expect("an id param")),
                    "{}",
                    v.name
                );
            }
            assert!(!v.may_return(E::Malformed), "{}", v.name);
            assert!(v.may_return(E::Internal), "{}", v.name);
        }
    }

    #[test]
    fn relaunch_names_both_rights_and_restore_its_empty_tree_conflict() {
        let relaunch = VerbId::PaneRelaunch.verb();
        assert!(relaunch.may_return(E::DeniedSpawn) && relaunch.may_return(E::DeniedWrite));
        assert!(VerbId::RecoveryRestore.verb().may_return(E::NotEmpty));
        assert!(!VerbId::SessionList.verb().may_return(E::DeniedRead));
    }

    #[test]
    fn every_verb_under_the_spawn_right_can_fail_to_spawn_and_others_cannot() {
        for v in VERBS {
            let spawns = v.right == RightName::Spawn;
            assert_eq!(v.may_return(E::Spawn), spawns, "{}", v.name);
            assert_eq!(
                v.may_return(E::DeniedDelegation),
                spawns || v.id == VerbId::GrantIssue,
                "{}",
                v.name
            );
        }
        let restore = VerbId::RecoveryRestore.verb().error_codes();
        assert!(STORE_READ.iter().all(|c| restore.contains(c)));
    }
}
