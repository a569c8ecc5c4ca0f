//! Delta resume (pure): what a (re)connecting viewer is sent, from the offset it has
//! consumed (`have`), the generation it saw (`gen`) and the master's ring state
//! (docs/spec/single-writer.md "Delta resume").

use crate::error::{BrokerError, Param, Result, Rule};
use crate::limits::MAX_SAFE_INTEGER;

/// The answer to one (re)connect.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Plan {
    /// Stream ring bytes from absolute offset `from` up to `total`; empty when
    /// `from == total`. No replay, no `seq` frame: the viewer's offset is right.
    Delta { from: u64 },
    /// A first attach (`have` absent or 0): replay, then `{"t":"seq","n":total}`.
    Fresh,
    /// The viewer's offset belongs to another master generation, or lies beyond
    /// what this master ever wrote: replay, then `seq`.
    Full,
    /// The viewer's offset has left the ring: replay, then `seq`.
    FellBehind,
}

impl Plan {
    /// The `plan` value of `vxbroker resume-plan --json`.
    pub fn name(self) -> &'static str {
        match self {
            Plan::Delta { .. } => "delta",
            Plan::Fresh => "fresh",
            Plan::Full => "full",
            Plan::FellBehind => "fell_behind",
        }
    }

    /// Whether the viewer needs the full-replay path (ring or redraw nudge, then `seq`).
    pub fn replays(self) -> bool {
        !matches!(self, Plan::Delta { .. })
    }
}

/// The plan for a viewer that has consumed `have` bytes of generation `gen`, when the
/// master (generation `master_gen`) has written `total` bytes of which its ring still
/// holds the last `ring_len`.
///
/// Total over every input: a `ring_len` above `total` (a ring cannot hold bytes
/// never written) is read as `ring_len == total`. An absent `gen` matches (the seed's
/// own clients send none).
pub fn plan(
    have: Option<u64>,
    gen: Option<u64>,
    total: u64,
    ring_len: u64,
    master_gen: u64,
) -> Plan {
    let have = match have {
        None | Some(0) => return Plan::Fresh,
        Some(h) => h,
    };
    if gen.is_some_and(|g| g != master_gen) || have > total {
        return Plan::Full;
    }
    if have >= total - ring_len.min(total) {
        Plan::Delta { from: have }
    } else {
        Plan::FellBehind
    }
}

/// Where a delta starts inside the ring (`ring[index..]` is what is sent), for a
/// `from` that [`plan`] returned with the same `total` and `ring_len`.
pub fn ring_index(from: u64, total: u64, ring_len: u64) -> u64 {
    from - (total - ring_len.min(total))
}

/// A byte offset or generation as the routes and the CLI spell it: decimal, no sign,
/// no leading zero, at most 2^53 - 1 (so `-1` and `1.5` are refused, as is `01`).
pub fn parse_counter(text: &str, param: Param) -> Result<u64> {
    let b = text.as_bytes();
    let digits_only = !b.is_empty() && b.iter().all(u8::is_ascii_digit);
    if !digits_only || (b.len() > 1 && b[0] == b'0') {
        return Err(BrokerError::param(Rule::CounterSyntax, param));
    }
    // Sixteen digits reach 10^16 > 2^53: anything longer is out of range unparsed.
    let value = if b.len() > 16 {
        None
    } else {
        text.parse::<u64>().ok().filter(|&v| v <= MAX_SAFE_INTEGER)
    };
    value.ok_or(BrokerError::param(Rule::CounterRange, param))
}

/// The master-side inputs as a request names them, checked together.
pub fn check_ring(total: u64, ring_len: u64) -> Result<()> {
    if ring_len > total {
        return Err(Rule::RingExceedsTotal.into());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// The issue's definition, written as a plain case analysis over a simulated ring.
    fn naive(
        have: Option<u64>,
        gen: Option<u64>,
        total: u64,
        ring_len: u64,
        master_gen: u64,
    ) -> Plan {
        let ring_len = if ring_len > total { total } else { ring_len };
        let first_in_ring = total - ring_len;
        let gen_matches = match gen {
            None => true,
            Some(g) => g == master_gen,
        };
        match have {
            None => Plan::Fresh,
            Some(0) => Plan::Fresh,
            Some(h) => {
                if !gen_matches || h > total {
                    Plan::Full
                } else if (first_in_ring..=total).contains(&h) {
                    Plan::Delta { from: h }
                } else {
                    Plan::FellBehind
                }
            }
        }
    }

    fn counter() -> impl Strategy<Value = u64> {
        prop_oneof![
            0u64..64,
            0u64..=MAX_SAFE_INTEGER,
            Just(MAX_SAFE_INTEGER),
            any::<u64>()
        ]
    }

    proptest! {
        #[test]
        fn plan_matches_the_naive_model(
            have in proptest::option::of(counter()),
            gen in proptest::option::of(0u64..4),
            total in counter(),
            ring_len in counter(),
            master_gen in 0u64..4,
        ) {
            prop_assert_eq!(plan(have, gen, total, ring_len, master_gen), naive(have, gen, total, ring_len, master_gen));
        }

        #[test]
        fn delta_covers_only_ring_bytes_ending_at_total(
            have in counter(), total in counter(), ring_len in counter(), g in 0u64..3,
        ) {
            if let Plan::Delta { from } = plan(Some(have), Some(g), total, ring_len, g) {
                let index = ring_index(from, total, ring_len);
                prop_assert!(index <= ring_len.min(total));
                prop_assert_eq!(from + (ring_len.min(total) - index), total);
            }
        }

        #[test]
        fn never_delta_across_generations(have in counter(), total in counter(), ring_len in counter(), g in 0u64..8, m in 0u64..8) {
            prop_assume!(g != m);
            prop_assert!(plan(Some(have), Some(g), total, ring_len, m).replays());
        }
    }

    #[test]
    fn the_issues_outline() {
        assert_eq!(
            plan(Some(100), Some(1), 150, 80, 1),
            Plan::Delta { from: 100 }
        );
        assert_eq!(plan(Some(150), None, 150, 80, 1), Plan::Delta { from: 150 });
        assert_eq!(plan(Some(100), Some(2), 150, 80, 1), Plan::Full);
        assert_eq!(plan(Some(151), Some(1), 150, 80, 1), Plan::Full);
        assert_eq!(plan(None, Some(2), 150, 80, 1), Plan::Fresh);
        assert_eq!(plan(Some(0), None, 150, 80, 1), Plan::Fresh);
        assert_eq!(plan(Some(69), Some(1), 150, 80, 1), Plan::FellBehind);
        assert_eq!(
            plan(Some(70), Some(1), 150, 80, 1),
            Plan::Delta { from: 70 }
        );
    }

    #[test]
    fn counters_are_strict() {
        assert_eq!(parse_counter("0", Param::Have), Ok(0));
        assert_eq!(
            parse_counter("9007199254740991", Param::Have),
            Ok(MAX_SAFE_INTEGER)
        );
        for bad in ["", "-1", "1.5", "01", "+1", " 1", "1e3", "0x10"] {
            let e = parse_counter(bad, Param::Have).unwrap_err();
            assert_eq!(
                (e.code.as_str(), e.rule.id()),
                ("invalid_params.have", "counter.syntax"),
                "{bad:?}"
            );
        }
        for big in ["9007199254740992", "99999999999999999999"] {
            let e = parse_counter(big, Param::Gen).unwrap_err();
            assert_eq!(
                (e.code.as_str(), e.rule.id()),
                ("invalid_params.gen", "counter.range")
            );
        }
    }
}
