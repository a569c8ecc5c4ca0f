//! The packer's caps as a pin. ADR-089 asks for "size+count caps" and leaves their
//! values to the implementer ("numeric caps from tool-blob ceiling"), so the kit's
//! numbers (64 files, 16 MiB a file, 32 MiB in all) are its reading, not the seed's.
//! The over-cap rows build their input one over the profile's `[persist.pins]`
//! caps (the kit's when undeclared), and the at-cap row at the count cap. A refusal
//! is the seed's MUST whatever the values: an implementation without caps fails the
//! over-cap rows. Undeclared, an implementation that accepts the input one over the
//! kit's cap but refuses the same row at twice the kit's cap has other caps: the row
//! records a deviation under `sp-pin-caps` (non-strict), and its remaining steps
//! judge that larger input. Larger caps than that are declared.

use crate::contract::Contract;
use crate::profile::{context, Profile};

/// The pin clause of the caps' values.
pub const CLAUSE: &str = "sp-pin-caps";
/// The seed's requirement the over-cap rows judge.
pub const MUST: &str = "sp-caps";
/// How far past the kit's cap an undeclared implementation's refusal is looked for.
pub const PROBE_FACTOR: u64 = 2;

const MIB: u64 = 1024 * 1024;

/// One cap key of `[persist.pins]`.
pub struct Key {
    pub key: &'static str,
    /// The kit's value, the default.
    pub kit: u64,
    /// The largest value the suite builds an input over (its files are planted and
    /// its blobs written in memory).
    pub bound: u64,
    pub meaning: &'static str,
}

/// Every cap key, in the order of [`Cap`].
pub const KEYS: [Key; 3] = [
    Key {
        key: "max_files",
        kit: 64,
        bound: 4096,
        meaning:
            "the most session files one session packs into a blob (the header member not counted)",
    },
    Key {
        key: "max_file_bytes",
        kit: 16 * MIB,
        bound: 256 * MIB,
        meaning: "the most bytes of one session file",
    },
    Key {
        key: "max_total_bytes",
        kit: 32 * MIB,
        bound: 256 * MIB,
        meaning: "the most bytes of a session's files in all",
    },
];

/// The text `profile --explain` and `init` show for a key.
pub fn explain(k: &Key) -> String {
    format!(
        "{}: a positive integer; past {} (the largest input the suite builds) its over-cap \
         rows do not apply; \"none\" is not a value, the seed asks for caps (default {}; \
         undeclared, a refusal past the kit's cap but by {PROBE_FACTOR} times it is non-strict)",
        k.meaning, k.bound, k.kit
    )
}

/// Which cap a row is over.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Cap {
    Files,
    FileBytes,
    TotalBytes,
}

impl Cap {
    /// The cap a row's words name ("file count", "file size", "total size").
    pub fn of_words(words: &str) -> Cap {
        match words {
            "file count" => Cap::Files,
            "file size" => Cap::FileBytes,
            "total size" => Cap::TotalBytes,
            other => crate::harness_error!("no cap named {other:?}"),
        }
    }

    /// The cap a blob of the fixed corpus is over (at the kit's caps), if it is one.
    pub fn of_corpus(file: &str) -> Option<Cap> {
        Cap::of_defect(file.strip_suffix(".tar")?)
    }

    /// The cap an unpack defect of the kit's is over, if it is one.
    pub fn of_defect(defect: &str) -> Option<Cap> {
        match defect {
            "members-65" => Some(Cap::Files),
            "member-16mib-plus-1" => Some(Cap::FileBytes),
            "members-total-32mib-plus-1" => Some(Cap::TotalBytes),
            _ => None,
        }
    }

    pub fn key(self) -> &'static Key {
        &KEYS[self as usize]
    }
}

/// Checks the profile's `[persist.pins]`: known keys, each a positive integer within
/// the suite's bound. The kit knows no other persist pin.
pub fn check(profile: &Profile) -> Result<(), String> {
    for (k, v) in &profile.claim(Contract::SessionPersist).pins {
        let Some(key) = KEYS.iter().find(|e| e.key == k) else {
            let known: Vec<&str> = KEYS.iter().map(|e| e.key).collect();
            return Err(format!(
                "[persist.pins] {k}: no such pin (the pins: {})",
                known.join(", ")
            ));
        };
        let n = v.as_integer().filter(|n| *n > 0);
        if n.is_none() {
            return Err(format!(
                "[persist.pins] {k} = {v}: expected a positive integer ({}; \"none\" is not a \
                 value: the seed asks for caps)",
                key.meaning
            ));
        }
    }
    Ok(())
}

/// Ends an over-cap row when the profile declares `cap` past the largest input the
/// suite builds: the seed's ceiling is the implementer's ("numeric caps from tool-blob
/// ceiling"), so such a cap is judged by no row, never failed for being large.
pub fn require_buildable(cap: Cap) {
    let k = cap.key();
    if let Some(n) = declared(cap).filter(|n| *n > k.bound) {
        crate::does_not_apply!(
            "the profile's [persist.pins] {} = {n} is past the largest input the suite builds ({})",
            k.key,
            k.bound
        );
    }
}

fn declared_in(profile: &Profile, cap: Cap) -> Option<u64> {
    profile
        .claim(Contract::SessionPersist)
        .pins
        .get(cap.key().key)
        .and_then(toml::Value::as_integer)
        .map(|n| n as u64)
}

/// The profile's own value of a cap, when it declares one.
pub fn declared(cap: Cap) -> Option<u64> {
    declared_in(&context().profile, cap)
}

/// The three caps an input is built against.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Caps([u64; 3]);

impl Caps {
    pub fn get(&self, cap: Cap) -> u64 {
        self.0[cap as usize]
    }

    /// The kit's caps.
    pub fn kit() -> Caps {
        Caps(KEYS.map(|k| k.kit))
    }

    /// The profile's caps, the kit's where it declares none.
    pub fn of_profile() -> Caps {
        Caps::of(&context().profile)
    }

    fn of(profile: &Profile) -> Caps {
        let v = |c: Cap| declared_in(profile, c).unwrap_or(c.key().kit);
        Caps([v(Cap::Files), v(Cap::FileBytes), v(Cap::TotalBytes)])
    }

    /// The caps of the probe for an undeclared `cap`: that one at
    /// [`PROBE_FACTOR`] times the kit's.
    pub fn probe(cap: Cap) -> Caps {
        let mut c = Caps::of_profile();
        c.0[cap as usize] = Caps::kit().get(cap) * PROBE_FACTOR;
        c
    }

    /// What an input one over `cap` is, in words with its numbers.
    pub fn over(&self, cap: Cap) -> String {
        self.over_noting(cap, "")
    }

    /// [`Caps::over`] with `note` after the cap it is one over.
    fn over_noting(&self, cap: Cap, note: &str) -> String {
        let n = self.get(cap);
        match cap {
            Cap::Files => format!("{} files (one over {n}{note})", n + 1),
            Cap::FileBytes => format!("a file of {} bytes (one over {n}{note})", n + 1),
            Cap::TotalBytes => format!("{} bytes in all (one over {n}{note})", n + 1),
        }
    }
}

/// A command's exit in words.
pub fn exit_words(exit: Option<i32>) -> String {
    exit.map_or_else(|| "killed by a signal".to_string(), |e| format!("exit {e}"))
}

/// The sizes of the files to add to a session of `base_files` files and `base_bytes`
/// bytes so that it is one over `cap` (and, where it can be, under the other two).
pub fn extra_sizes(cap: Cap, caps: &Caps, base_files: u64, base_bytes: u64) -> Vec<u64> {
    match cap {
        Cap::Files => vec![1; (caps.get(Cap::Files) + 1).saturating_sub(base_files) as usize],
        Cap::FileBytes => vec![caps.get(Cap::FileBytes) + 1],
        Cap::TotalBytes => {
            let need = (caps.get(Cap::TotalBytes) + 1).saturating_sub(base_bytes);
            // Files at three quarters of the per-file cap: each under it by a margin,
            // so only the total is over (the kit's: 3 files of 10.7 MiB).
            let per = (caps.get(Cap::FileBytes) * 3 / 4).max(1);
            let n = need.div_ceil(per).max(1);
            (0..n).map(|i| need / n + u64::from(i < need % n)).collect()
        }
    }
}

/// The sizes of the files to add to a session of `base_files` files so that it has
/// exactly the count cap's files (1 KiB each).
pub fn at_count(caps: &Caps, base_files: u64) -> Vec<u64> {
    vec![1024; caps.get(Cap::Files).saturating_sub(base_files) as usize]
}

/// Judges an over-cap input the implementation accepted (`observed`). Declared: a
/// fail. Undeclared: `probe` runs the row again at twice the kit's cap and says
/// whether that was refused and what it saw; refused, the row records a deviation
/// and its remaining steps judge the probe; accepted, a fail naming both.
pub fn judge_accepted(cap: Cap, observed: String, probe: impl FnOnce(&Caps) -> (bool, String)) {
    let k = cap.key();
    let built = Caps::of_profile().over(cap);
    if let Some(n) = declared(cap) {
        crate::evidence::fail(
            Some(MUST),
            format!(
                "{built} refused (the profile's [persist.pins] {} = {n})",
                k.key
            ),
            format!("{built} accepted ({observed})"),
        );
    }
    let big = Caps::probe(cap);
    let (refused, seen) = probe(&big);
    let larger = big.over_noting(cap, &format!(", {PROBE_FACTOR} times the kit's {}", k.key));
    if refused {
        crate::evidence::pin(
            CLAUSE,
            format!(
                "{built} refused (the kit's {} = {}; a profile may declare its own)",
                k.key, k.kit
            ),
            format!("{built} accepted ({observed}); {larger} refused ({seen})"),
        );
    } else {
        crate::evidence::fail(
            Some(MUST),
            format!(
                "{built} refused, or at the latest {larger}; a larger cap is declared as \
                 [persist.pins] {}",
                k.key
            ),
            format!("{built} accepted ({observed}); {larger} accepted too ({seen})"),
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn profile(pins: &str) -> Result<Profile, String> {
        let text = format!(
            "name = \"x\"\ncontracts = [\"session-persist\"]\n[persist]\nparts = [\"packer\"]\n\
             pack = [\"p\"]\n[persist.pins]\n{pins}\n"
        );
        let p = Profile::parse(&text, std::path::Path::new("p.toml"))?;
        check(&p)?;
        Ok(p)
    }

    /// A cap is a positive integer (past the suite's bound too); "none" and anything
    /// else is a profile error naming the key and the value.
    #[test]
    fn a_cap_is_a_positive_integer() {
        for k in &KEYS {
            let p = profile(&format!("{} = 100", k.key)).unwrap();
            let cap = [Cap::Files, Cap::FileBytes, Cap::TotalBytes]
                .into_iter()
                .find(|c| c.key().key == k.key)
                .unwrap();
            assert_eq!(Caps::of(&p).get(cap), 100);
            profile(&format!("{} = {}", k.key, k.bound)).unwrap();
            // Past the bound is the implementer's ceiling: accepted, its rows do not
            // apply (require_buildable).
            profile(&format!("{} = {}", k.key, k.bound + 1)).unwrap();
            for bad in ["0", "-3", "\"none\"", "1.5", "true"] {
                let e = profile(&format!("{} = {bad}", k.key)).unwrap_err();
                assert!(e.contains(k.key) && e.contains(bad), "{e}");
            }
        }
        let e = profile("header_member = \"h.json\"").unwrap_err();
        assert!(
            e.contains("header_member") && e.contains("max_files"),
            "{e}"
        );
        let p = profile("").unwrap();
        assert_eq!(Caps::of(&p), Caps::kit());
        assert_eq!(Caps::kit(), Caps([64, 16 * MIB, 32 * MIB]));
    }

    /// The inputs are one over the cap they name: the kit's rows are the ones they
    /// replaced (62 more files, one of 16 MiB + 1, three of about 10.7 MiB).
    #[test]
    fn the_inputs_are_one_over_their_cap() {
        let kit = Caps([64, 16 * MIB, 32 * MIB]);
        assert_eq!(extra_sizes(Cap::Files, &kit, 3, 100).len(), 62);
        assert_eq!(extra_sizes(Cap::FileBytes, &kit, 3, 100), [16 * MIB + 1]);
        let t = extra_sizes(Cap::TotalBytes, &kit, 3, 100);
        assert_eq!(t.len(), 3);
        assert_eq!(t.iter().sum::<u64>() + 100, 32 * MIB + 1);
        assert!(t.iter().all(|n| *n < 16 * MIB));
        let small = Caps([16, 1000, 3000]);
        let t = extra_sizes(Cap::TotalBytes, &small, 3, 100);
        assert_eq!(t.iter().sum::<u64>() + 100, 3001);
        assert!(t.iter().all(|n| *n < 1000));
        assert_eq!(at_count(&small, 3).len(), 13);
    }
}
