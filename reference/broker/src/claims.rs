//! Per-tab ownership (pure): which viewer's input and resizes reach the agent
//! (docs/spec/single-writer.md "Claims").
//!
//! A claim key is `(fp, tab)`. A viewer is owner iff there is no claim, the claim is
//! its own, the claim was last seen more than 5000 ms ago, or it forces; otherwise
//! secondary. A viewer sending neither `fp` nor `tab` is a legacy owner: no claim,
//! no role frame, no gate.

use crate::error::{BrokerError, Param, Result, Rule};
use crate::limits::{CLAIM_LEASE_MS, FP_HEX_DIGITS, TAB_HEX_DIGITS};

/// `fp` (32 lower-case hex) and `tab` (16 lower-case hex).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct ClaimKey {
    fp: [u8; FP_HEX_DIGITS],
    tab: [u8; TAB_HEX_DIGITS],
}

fn lower_hex<const N: usize>(s: &str) -> Option<[u8; N]> {
    let b = s.as_bytes();
    (b.len() == N && b.iter().all(|c| matches!(c, b'0'..=b'9' | b'a'..=b'f')))
        .then(|| b.try_into().expect("length checked"))
}

impl ClaimKey {
    pub fn new(fp: &str, tab: &str) -> Result<ClaimKey> {
        let fp = lower_hex(fp).ok_or(BrokerError::new(Rule::FpSyntax))?;
        let tab = lower_hex(tab).ok_or(BrokerError::new(Rule::TabSyntax))?;
        Ok(ClaimKey { fp, tab })
    }

    pub fn fp(&self) -> &str {
        std::str::from_utf8(&self.fp).expect("hex digits")
    }

    pub fn tab(&self) -> &str {
        std::str::from_utf8(&self.tab).expect("hex digits")
    }
}

/// Who a connecting viewer says it is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Viewer {
    /// Neither `fp` nor `tab`: the pre-claims client.
    Legacy,
    Tab(ClaimKey),
}

/// The `fp` and `tab` query parameters as given. Exactly one of them is refused:
/// reading it as legacy would hand an ungated owner to a client that meant to be
/// gated (docs: fail closed).
pub fn viewer(fp: Option<&str>, tab: Option<&str>) -> Result<Viewer> {
    match (fp, tab) {
        (None, None) => Ok(Viewer::Legacy),
        (Some(fp), Some(tab)) => ClaimKey::new(fp, tab).map(Viewer::Tab),
        (Some(_), None) => Err(BrokerError::param(Rule::HalfPair, Param::Tab)),
        (None, Some(_)) => Err(BrokerError::param(Rule::HalfPair, Param::Fp)),
    }
}

/// A `0|1` flag (`force`, `new`); absent is 0.
pub fn flag(value: Option<&str>, param: Param) -> Result<bool> {
    match value {
        None | Some("0") => Ok(false),
        Some("1") => Ok(true),
        Some(_) => Err(BrokerError::param(Rule::FlagSyntax, param)),
    }
}

/// The current claim on a session: its key and when it was last seen (ms).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Claim {
    pub key: ClaimKey,
    pub last_seen_ms: u64,
}

impl Claim {
    /// Stale when last seen strictly more than the lease ago. A sighting in the
    /// future (clock step, another host's clock) counts as fresh: it never lets a
    /// newcomer steal.
    pub fn is_stale(&self, now_ms: u64) -> bool {
        now_ms.saturating_sub(self.last_seen_ms) > CLAIM_LEASE_MS
    }
}

/// What the claim layer knows about the session's current claim.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Prior {
    None,
    Held(Claim),
    /// The record exists but cannot be read (a corrupt owner file): someone may hold
    /// it, so only `force` takes it.
    Unreadable,
}

/// The role decided for one attach.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Decision {
    /// No claim recorded, no role frame, input not gated.
    LegacyOwner,
    /// Owner; `displaced` is a different, fresh holder that `force` demoted in place.
    Owner { displaced: Option<ClaimKey> },
    /// Read-only: output flows, input and resize are dropped server-side.
    Secondary { holder: Option<ClaimKey> },
}

impl Decision {
    /// Whether this viewer's input and resizes reach the agent.
    pub fn may_write(self) -> bool {
        !matches!(self, Decision::Secondary { .. })
    }
}

/// Decides one attach of `viewer` at `now_ms`.
pub fn decide(prior: Prior, viewer: Viewer, force: bool, now_ms: u64) -> Decision {
    let key = match viewer {
        Viewer::Legacy => return Decision::LegacyOwner,
        Viewer::Tab(key) => key,
    };
    match prior {
        Prior::None => Decision::Owner { displaced: None },
        Prior::Held(c) if c.key == key || c.is_stale(now_ms) => Decision::Owner { displaced: None },
        Prior::Held(c) if force => Decision::Owner {
            displaced: Some(c.key),
        },
        Prior::Held(c) => Decision::Secondary {
            holder: Some(c.key),
        },
        Prior::Unreadable if force => Decision::Owner { displaced: None },
        Prior::Unreadable => Decision::Secondary { holder: None },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(n: u8) -> ClaimKey {
        let d = char::from(b'0' + n);
        ClaimKey::new(&d.to_string().repeat(32), &d.to_string().repeat(16)).unwrap()
    }

    fn held(n: u8, at: u64) -> Prior {
        Prior::Held(Claim {
            key: key(n),
            last_seen_ms: at,
        })
    }

    #[test]
    fn roles() {
        let me = Viewer::Tab(key(1));
        assert_eq!(
            decide(Prior::None, me, false, 0),
            Decision::Owner { displaced: None }
        );
        assert_eq!(
            decide(held(1, 0), me, false, 1),
            Decision::Owner { displaced: None }
        );
        assert_eq!(
            decide(held(2, 1000), me, false, 5000),
            Decision::Secondary {
                holder: Some(key(2))
            }
        );
        // Lease: silent 5000 ms is still fresh; 5001 ms is stale.
        assert!(!decide(held(2, 0), me, false, 5000).may_write());
        assert!(decide(held(2, 0), me, false, 5001).may_write());
        assert_eq!(
            decide(held(2, 0), me, true, 1),
            Decision::Owner {
                displaced: Some(key(2))
            }
        );
        assert_eq!(
            decide(held(2, 9_000), me, false, 1),
            Decision::Secondary {
                holder: Some(key(2))
            }
        );
        assert_eq!(
            decide(Prior::Unreadable, me, false, 1),
            Decision::Secondary { holder: None }
        );
        assert_eq!(
            decide(Prior::Unreadable, me, true, 1),
            Decision::Owner { displaced: None }
        );
        assert_eq!(
            decide(held(2, 0), Viewer::Legacy, false, 0),
            Decision::LegacyOwner
        );
    }

    #[test]
    fn params_are_strict() {
        let fp = "0123456789abcdef0123456789abcdef";
        let tab = "0123456789abcdef";
        assert!(matches!(viewer(Some(fp), Some(tab)), Ok(Viewer::Tab(_))));
        assert_eq!(viewer(None, None), Ok(Viewer::Legacy));
        let code = |r: Result<Viewer>| r.unwrap_err().code.as_str();
        assert_eq!(
            code(viewer(Some(&fp.to_uppercase()), Some(tab))),
            "invalid_params.fp"
        );
        assert_eq!(code(viewer(Some(&fp[1..]), Some(tab))), "invalid_params.fp");
        assert_eq!(code(viewer(Some(fp), Some("xyz"))), "invalid_params.tab");
        assert_eq!(code(viewer(Some(fp), None)), "invalid_params.tab");
        assert_eq!(code(viewer(None, Some(tab))), "invalid_params.fp");
        assert_eq!(flag(Some("1"), Param::Force), Ok(true));
        assert_eq!(flag(None, Param::Force), Ok(false));
        assert_eq!(
            flag(Some("true"), Param::Force).unwrap_err().code.as_str(),
            "invalid_params.force"
        );
    }
}
