//! `vxcert run --shard K/N`: which scenarios a shard runs. A scenario's stable id
//! (contract, feature file, scenario name, Examples row) is hashed with SHA-256, so
//! a scenario stays in its shard when others are added or moved, whatever the
//! machine, the Rust version or the process (Rust's own hasher is seeded per process).

use sha2::{Digest, Sha256};

/// Shard `index` (1-based) of `count`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Shard {
    pub index: u32,
    pub count: u32,
}

impl std::str::FromStr for Shard {
    type Err = String;

    fn from_str(s: &str) -> Result<Shard, String> {
        let bad = || format!("--shard {s:?}: expected K/N with 1 ≤ K ≤ N, for example 2/4");
        let (k, n) = s.split_once('/').ok_or_else(bad)?;
        let index: u32 = k.trim().parse().map_err(|_| bad())?;
        let count: u32 = n.trim().parse().map_err(|_| bad())?;
        if index == 0 || count == 0 || index > count {
            return Err(bad());
        }
        Ok(Shard { index, count })
    }
}

impl std::fmt::Display for Shard {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}/{}", self.index, self.count)
    }
}

/// A scenario's stable id: what names it however the files around it change.
pub fn scenario_id(contract: &str, feature: &str, name: &str, example: Option<&str>) -> String {
    format!(
        "{contract}\u{1f}{feature}\u{1f}{name}\u{1f}{}",
        example.unwrap_or("")
    )
}

impl Shard {
    /// Whether the scenario with this stable id belongs to this shard.
    pub fn holds(&self, id: &str) -> bool {
        let digest = Sha256::digest(id.as_bytes());
        let mut first = [0u8; 8];
        first.copy_from_slice(&digest[..8]);
        u64::from_be_bytes(first) % u64::from(self.count) == u64::from(self.index - 1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shards_parse_and_refuse_nonsense() {
        assert_eq!("2/4".parse::<Shard>(), Ok(Shard { index: 2, count: 4 }));
        for bad in ["0/4", "5/4", "4", "a/b", "1/0", ""] {
            assert!(bad.parse::<Shard>().is_err(), "{bad} was accepted");
        }
    }

    #[test]
    fn every_id_is_in_exactly_one_shard_and_shards_are_balanced() {
        let shards: Vec<Shard> = (1..=4).map(|k| Shard { index: k, count: 4 }).collect();
        let mut sizes = [0usize; 4];
        for i in 0..400 {
            let id = scenario_id("recovery", "01_x.feature", &format!("scenario {i}"), None);
            let holders: Vec<usize> = (0..4).filter(|k| shards[*k].holds(&id)).collect();
            assert_eq!(holders.len(), 1, "{id} is in shards {holders:?}");
            sizes[holders[0]] += 1;
        }
        assert!(
            sizes.iter().all(|n| (60..=140).contains(n)),
            "unbalanced: {sizes:?}"
        );
        // The hash is fixed (SHA-256, computed independently with Python's hashlib):
        // the same id lands in the same shard on every machine and in every process.
        let at = |name: &str| {
            let id = scenario_id("recovery", "02_grants.feature", name, Some("a | b"));
            (1..=4).find(|k| {
                Shard {
                    index: *k,
                    count: 4,
                }
                .holds(&id)
            })
        };
        assert_eq!(
            ["A grant", "B", "C", "D", "E"].map(at),
            [Some(1), Some(4), Some(4), Some(1), Some(2)]
        );
    }
}
