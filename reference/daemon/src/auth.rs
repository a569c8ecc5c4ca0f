//! Principals, tokens and grants.
//!
//! Rights `read`, `write`, `spawn`, `admin` on `server:root`, `session:sN`,
//! `window:wN`, `pane:pN`. `admin` implies the other three; `write` and `spawn` each
//! imply `read`. A grant on a container covers everything inside it. The owner holds
//! everything; `unknown` (no token) holds at most `read`, as far as the configured read
//! scope allows. Tokens are kept only as SHA-256 digests.

use crate::ids::{PaneId, SessionId, WindowId};
use crate::manifest::RightName;
use sha2::{Digest, Sha256};
use std::collections::HashMap;
use std::fmt;

pub type Right = RightName;

impl RightName {
    pub fn parse(text: &str) -> Option<Self> {
        Some(match text {
            "read" => RightName::Read,
            "write" => RightName::Write,
            "spawn" => RightName::Spawn,
            "admin" => RightName::Admin,
            _ => return None,
        })
    }

    /// Whether holding `self` gives `wanted`.
    pub fn implies(self, wanted: RightName) -> bool {
        self == wanted
            || self == RightName::Admin
            || (wanted == RightName::Read && matches!(self, RightName::Write | RightName::Spawn))
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Resource {
    Server,
    Session(SessionId),
    Window(WindowId),
    Pane(PaneId),
}

impl Resource {
    /// Parses `server:root`, `session:s0`, `window:w0`, `pane:p0`; `pane:self` is
    /// `self_pane` when one is given.
    pub fn parse(text: &str, self_pane: Option<PaneId>) -> Option<Self> {
        let (kind, id) = text.split_once(':')?;
        Some(match kind {
            "server" if id == "root" => Resource::Server,
            "session" => Resource::Session(SessionId::parse(id)?),
            "window" => Resource::Window(WindowId::parse(id)?),
            "pane" if id == "self" => Resource::Pane(self_pane?),
            "pane" => Resource::Pane(PaneId::parse(id)?),
            _ => return None,
        })
    }
}

impl fmt::Display for Resource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Resource::Server => f.write_str("server:root"),
            Resource::Session(s) => write!(f, "session:{s}"),
            Resource::Window(w) => write!(f, "window:{w}"),
            Resource::Pane(p) => write!(f, "pane:{p}"),
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Grant {
    pub right: Right,
    pub resource: Resource,
}

impl Grant {
    /// Parses `right@resource`.
    pub fn parse(text: &str, self_pane: Option<PaneId>) -> Option<Self> {
        let (right, resource) = text.split_once('@')?;
        Some(Grant {
            right: RightName::parse(right)?,
            resource: Resource::parse(resource, self_pane)?,
        })
    }
}

impl fmt::Display for Grant {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}@{}", self.right.as_str(), self.resource)
    }
}

/// How much the `unknown` principal may read (config `.principals.unknown_read`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum UnknownRead {
    /// `read` on `server:root`: everything is visible, nothing is writable.
    All,
    /// No rights at all.
    None,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PrincipalKind {
    Owner,
    Unknown,
    /// Issued by `grant.issue`.
    Issued,
    /// The token handed to a pane's child at spawn.
    Pane(PaneId),
}

#[derive(Debug, Clone)]
pub struct Principal {
    pub id: String,
    pub kind: PrincipalKind,
    /// Tag namespace: the `owner` tag of panes this principal creates.
    pub namespace: String,
    pub grants: Vec<Grant>,
}

pub const OWNER: &str = "owner";
pub const UNKNOWN: &str = "unknown";
/// The human owner's tag namespace.
pub const OWNER_NAMESPACE: &str = "venomx";

/// Containers of a resource, innermost first (empty when it does not exist).
pub type Ancestry = Vec<Resource>;

pub struct Registry {
    principals: HashMap<String, Principal>,
    by_digest: HashMap<[u8; 32], String>,
    next: u64,
    pub unknown_read: UnknownRead,
}

pub fn digest(token: &str) -> [u8; 32] {
    Sha256::digest(token.as_bytes()).into()
}

/// A fresh random token: `vxt_` and 64 hex digits (256 bits).
pub fn fresh_token() -> std::io::Result<String> {
    let mut bytes = [0u8; 32];
    getrandom::fill(&mut bytes).map_err(|_| std::io::Error::other("no randomness"))?;
    let mut text = String::with_capacity(68);
    text.push_str("vxt_");
    for b in bytes {
        text.push_str(&format!("{b:02x}"));
    }
    Ok(text)
}

impl Registry {
    /// A registry with only the owner (whose token is `owner_token`) and `unknown`.
    pub fn new(owner_token: &str, unknown_read: UnknownRead) -> Self {
        let mut principals = HashMap::new();
        principals.insert(
            OWNER.to_string(),
            Principal {
                id: OWNER.into(),
                kind: PrincipalKind::Owner,
                namespace: OWNER_NAMESPACE.into(),
                grants: vec![Grant {
                    right: RightName::Admin,
                    resource: Resource::Server,
                }],
            },
        );
        principals.insert(
            UNKNOWN.to_string(),
            Principal {
                id: UNKNOWN.into(),
                kind: PrincipalKind::Unknown,
                namespace: "unknown".into(),
                grants: Vec::new(),
            },
        );
        let mut by_digest = HashMap::new();
        by_digest.insert(digest(owner_token), OWNER.to_string());
        Registry {
            principals,
            by_digest,
            next: 0,
            unknown_read,
        }
    }

    pub fn get(&self, id: &str) -> Option<&Principal> {
        self.principals.get(id)
    }

    pub fn resolve_token(&self, token: &str) -> Option<&str> {
        self.by_digest.get(&digest(token)).map(String::as_str)
    }

    /// Registers a new principal with a fresh token; returns (id, token).
    pub fn issue(
        &mut self,
        kind: PrincipalKind,
        namespace: String,
        grants: Vec<Grant>,
    ) -> std::io::Result<(String, String)> {
        let token = fresh_token()?;
        let id = format!("t{}", self.next);
        self.next += 1;
        self.by_digest.insert(digest(&token), id.clone());
        self.principals.insert(
            id.clone(),
            Principal {
                id: id.clone(),
                kind,
                namespace,
                grants,
            },
        );
        Ok((id, token))
    }

    /// Removes an issued or pane principal. The owner and unknown cannot be revoked.
    pub fn revoke(&mut self, id: &str) -> bool {
        if id == OWNER || id == UNKNOWN || !self.principals.contains_key(id) {
            return false;
        }
        self.principals.remove(id);
        self.by_digest.retain(|_, v| v != id);
        true
    }

    /// The effective grants of a principal (unknown's come from the read scope).
    pub fn grants_of(&self, principal: &Principal) -> Vec<Grant> {
        match principal.kind {
            PrincipalKind::Unknown => match self.unknown_read {
                UnknownRead::All => vec![Grant {
                    right: RightName::Read,
                    resource: Resource::Server,
                }],
                UnknownRead::None => Vec::new(),
            },
            _ => principal.grants.clone(),
        }
    }

    /// Whether `principal` holds `right` on `resource`, whose containers are
    /// `ancestry`. Callers compute ancestry without revealing existence: a missing
    /// resource has none, so only grants on it or on `server:root` can match.
    pub fn allows(
        &self,
        principal: &Principal,
        right: Right,
        resource: Resource,
        ancestry: &[Resource],
    ) -> bool {
        if principal.kind == PrincipalKind::Owner {
            return true;
        }
        self.grants_of(principal).iter().any(|g| {
            g.right.implies(right)
                && (g.resource == Resource::Server
                    || g.resource == resource
                    || ancestry.contains(&g.resource))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn registry() -> Registry {
        Registry::new("owner-token", UnknownRead::All)
    }

    #[test]
    fn rights_lattice() {
        assert!(RightName::Admin.implies(RightName::Spawn));
        assert!(RightName::Write.implies(RightName::Read));
        assert!(RightName::Spawn.implies(RightName::Read));
        assert!(!RightName::Spawn.implies(RightName::Write));
        assert!(!RightName::Read.implies(RightName::Write));
    }

    #[test]
    fn grants_parse_and_print() {
        let g = Grant::parse("write@session:s3", None).unwrap();
        assert_eq!(g.to_string(), "write@session:s3");
        assert_eq!(
            Grant::parse("read@pane:self", Some(PaneId(9)))
                .unwrap()
                .resource,
            Resource::Pane(PaneId(9))
        );
        assert!(Grant::parse("read@pane:self", None).is_none());
        assert!(Grant::parse("fly@server:root", None).is_none());
        assert!(Grant::parse("read@server:other", None).is_none());
    }

    #[test]
    fn container_grants_cover_contents() {
        let mut r = registry();
        let (id, token) = r
            .issue(
                PrincipalKind::Issued,
                "agent".into(),
                vec![Grant::parse("write@session:s1", None).unwrap()],
            )
            .unwrap();
        assert_eq!(r.resolve_token(&token), Some(id.as_str()));
        let p = r.get(&id).unwrap().clone();
        let pane = Resource::Pane(PaneId(4));
        let inside = [
            Resource::Window(WindowId(2)),
            Resource::Session(SessionId(1)),
        ];
        let outside = [
            Resource::Window(WindowId(3)),
            Resource::Session(SessionId(2)),
        ];
        assert!(r.allows(&p, RightName::Write, pane, &inside));
        assert!(r.allows(&p, RightName::Read, pane, &inside));
        assert!(!r.allows(&p, RightName::Spawn, pane, &inside));
        assert!(!r.allows(&p, RightName::Write, pane, &outside));
        assert!(!r.allows(&p, RightName::Write, pane, &[]));
    }

    #[test]
    fn unknown_is_read_only_and_scoped() {
        let mut r = registry();
        let unknown = r.get(UNKNOWN).unwrap().clone();
        assert!(r.allows(&unknown, RightName::Read, Resource::Server, &[]));
        assert!(!r.allows(&unknown, RightName::Write, Resource::Server, &[]));
        r.unknown_read = UnknownRead::None;
        assert!(!r.allows(&unknown, RightName::Read, Resource::Server, &[]));
    }

    #[test]
    fn revoked_tokens_stop_resolving() {
        let mut r = registry();
        let (id, token) = r.issue(PrincipalKind::Issued, "x".into(), vec![]).unwrap();
        assert!(r.revoke(&id));
        assert_eq!(r.resolve_token(&token), None);
        assert!(!r.revoke(OWNER));
        assert_eq!(r.resolve_token("owner-token"), Some(OWNER));
    }
}
