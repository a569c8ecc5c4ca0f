//! Persistence models and ALICE's bounded enumeration strategies: from a logical log,
//! the crash states a model allows. Pure: no I/O (the replay materializes the states).
//!
//! A state is "crash after the first `crash` ops" with one deviation from the prefix:
//! one op dropped, the last op (a write) torn, or a set of one file's unsynced data
//! ops lost together (all of them, a head or a tail of them, or any subset when there
//! are few; see [`lost_sets`]). An op is *synced* at a crash point when a barrier
//! that covers it (see [`Model::covers`]) comes after it and before the crash; only
//! unsynced ops may be dropped.

use std::fmt;
use std::str::FromStr;

use super::log::{FsOp, Ino};

/// Sector and block sizes at which writes tear.
pub const SECTOR: u64 = 512;
pub const BLOCK: u64 = 4096;

/// A persistence model (docs/fault-injection.md, "Crash-state exploration", has each
/// rule with its source).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Model {
    /// Everything up to op k applied: what a process crash leaves (the page cache
    /// survives).
    Prefix,
    /// ALICE's abstract worst case: unsynced ops dropped, writes torn at 512 B/4 KiB,
    /// appends lost, zero-filled or short, directory entries durable only after a
    /// later fsync of their directory.
    Posix,
    /// ext4 with data=ordered: metadata commits in order and any fsync commits it all;
    /// appended data is never exposed as zeros; a rename that replaces a file carries
    /// the source's data (auto_da_alloc).
    Ext4Ordered,
}

impl FromStr for Model {
    type Err = ();
    fn from_str(s: &str) -> Result<Model, ()> {
        match s {
            "prefix" => Ok(Model::Prefix),
            "posix" => Ok(Model::Posix),
            "ext4-ordered" => Ok(Model::Ext4Ordered),
            _ => Err(()),
        }
    }
}

impl Model {
    pub const NAMES: &'static str = "prefix, posix, ext4-ordered";

    pub fn name(self) -> &'static str {
        match self {
            Model::Prefix => "prefix",
            Model::Posix => "posix",
            Model::Ext4Ordered => "ext4-ordered",
        }
    }

    /// Whether barrier `b` (an fsync) makes op `o` durable.
    pub fn covers(self, b: &FsOp, o: &FsOp) -> bool {
        let FsOp::Fsync {
            ino,
            path,
            dir,
            all,
        } = b
        else {
            return false;
        };
        if *all {
            return true;
        }
        if let Some(d) = o.data_ino() {
            return !dir && *ino == Some(d);
        }
        if let Some((target, at)) = o.attr_target() {
            return match self {
                // An fsync of the file (its inode) or, for a directory or node named
                // by path, of that directory.
                Model::Prefix | Model::Posix => {
                    (!dir && target.is_some() && *ino == target) || (*dir && path == at)
                }
                // The inode change is in the running transaction, which any fsync
                // commits.
                Model::Ext4Ordered => true,
            };
        }
        let dirs = o.entry_dirs();
        match self {
            // An fsync of every directory the entry change touches.
            Model::Prefix | Model::Posix => *dir && dirs.len() == 1 && dirs[0] == *path,
            // jbd2 commits the whole running transaction on any fsync.
            Model::Ext4Ordered => !dirs.is_empty(),
        }
    }
}

/// How a state was chosen.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Strategy {
    /// Crash after op k, all of it applied.
    Prefix,
    /// Crash after op k with one unsynced op omitted.
    OmitOne,
    /// Crash right after a write, which is torn.
    Torn,
    /// Crash after op k with two or more of one file's unsynced data ops lost (the
    /// file's pages were never written back); `zeroed`: the appends' size landed,
    /// their bytes did not.
    LoseWrites,
}

impl Strategy {
    pub const ALL: [Strategy; 4] = [
        Strategy::Prefix,
        Strategy::OmitOne,
        Strategy::Torn,
        Strategy::LoseWrites,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Strategy::Prefix => "prefix",
            Strategy::OmitOne => "omit-one",
            Strategy::Torn => "torn",
            Strategy::LoseWrites => "lose-writes",
        }
    }
}

/// How the last write of a torn state lands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tear {
    /// Only the bytes before absolute offset `cut` reached the disk (a short tail
    /// for an append).
    Head(u64),
    /// Only the bytes from `cut` on (the file reaches its new size; the head keeps
    /// what was there, zeros for an append).
    Tail(u64),
    /// An append whose size change landed but whose data did not: zeros.
    Zero,
}

impl fmt::Display for Tear {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Tear::Head(c) => write!(f, "only the bytes before offset {c} landed"),
            Tear::Tail(c) => write!(f, "only the bytes from offset {c} on landed"),
            Tear::Zero => write!(f, "the size grew but the bytes are zeros"),
        }
    }
}

/// One crash state.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CrashState {
    /// Position in the enumeration (what `--state` takes).
    pub id: usize,
    pub strategy: Strategy,
    /// Ops `0..crash` happened before the crash.
    pub crash: usize,
    /// Ops left out (ascending).
    pub dropped: Vec<usize>,
    pub torn: Option<(usize, Tear)>,
    /// Dropped writes that grew the file leave its new size, filled with zeros.
    pub zeroed: bool,
}

impl CrashState {
    /// Whether the state deviates from a prefix.
    pub fn deviates(&self) -> bool {
        !self.dropped.is_empty() || self.torn.is_some()
    }

    /// Ops applied, in order, as ranges of indices.
    pub fn describe(&self, ops: &[FsOp]) -> String {
        let mut s = format!("crash after op {} of {}", self.crash, ops.len());
        match self.dropped.as_slice() {
            [] => {}
            [d] => s += &format!("; op {d} dropped ({})", ops[*d].describe()),
            many => {
                s += &format!(
                    "; ops {} dropped (all {} lost writes of that file never landed{})",
                    ranges(many),
                    many.len(),
                    if self.zeroed {
                        "; the size they grew it to did, as zeros"
                    } else {
                        ""
                    },
                );
            }
        }
        if let Some((w, t)) = self.torn {
            s += &format!("; op {w} torn ({}: {t})", ops[w].describe());
        }
        s
    }
}

/// Ascending indices as ranges: `1-21, 23`.
fn ranges(ix: &[usize]) -> String {
    let mut out: Vec<String> = Vec::new();
    let mut i = 0;
    while i < ix.len() {
        let mut j = i;
        while j + 1 < ix.len() && ix[j + 1] == ix[j] + 1 {
            j += 1;
        }
        out.push(if j > i {
            format!("{}-{}", ix[i], ix[j])
        } else {
            ix[i].to_string()
        });
        i = j + 1;
    }
    out.join(", ")
}

/// For each op, the index of the first later barrier that makes it durable.
pub fn durable_at(model: Model, ops: &[FsOp]) -> Vec<Option<usize>> {
    let mut out = vec![None; ops.len()];
    for (i, o) in ops.iter().enumerate() {
        if !o.is_mutation() {
            continue;
        }
        let dirs = o.entry_dirs();
        if dirs.len() > 1 && model != Model::Ext4Ordered {
            // Both directories must be fsynced: durable at the later of the two.
            let mut at = Some(0);
            for d in &dirs {
                let one = FsOp::Mkdir {
                    path: d.join("x"),
                    mode: 0,
                };
                let first = (i + 1..ops.len()).find(|&j| model.covers(&ops[j], &one));
                at = match (at, first) {
                    (Some(a), Some(f)) => Some(a.max(f)),
                    _ => None,
                };
            }
            out[i] = at;
        } else {
            out[i] = (i + 1..ops.len()).find(|&j| model.covers(&ops[j], o));
        }
    }
    out
}

/// Whether ext4 journals the op (a directory entry or an inode's mode or times),
/// rather than writing it back with the file's data.
fn journaled(o: &FsOp) -> bool {
    !o.entry_dirs().is_empty() || o.attr_target().is_some()
}

/// Whether the model lets op `i` be lost at crash point `k` (ext4's ordering rules).
fn may_drop(model: Model, ops: &[FsOp], i: usize, k: usize) -> bool {
    match model {
        Model::Prefix => false,
        Model::Posix => true,
        Model::Ext4Ordered => {
            let later = &ops[i + 1..k];
            if journaled(&ops[i]) {
                // The journal commits metadata (names, modes, times) in order.
                return !later.iter().any(journaled);
            }
            // auto_da_alloc: a rename over an existing file carries the source's data.
            let ino = ops[i].data_ino();
            !later.iter().any(|o| {
                matches!(o, FsOp::Rename { src, replaces: true, .. } if *src == ino && ino.is_some())
            })
        }
    }
}

/// Absolute offsets inside `(off, off+len)` where the write may tear.
fn cut_points(off: u64, len: u64) -> Vec<u64> {
    let end = off + len;
    let mut cuts = Vec::new();
    for g in [SECTOR, BLOCK] {
        let first = (off / g + 1) * g;
        let last = if end.is_multiple_of(g) {
            end - g
        } else {
            end / g * g
        };
        for c in [first, last] {
            if c > off && c < end && !cuts.contains(&c) {
                cuts.push(c);
            }
        }
    }
    cuts.sort_unstable();
    cuts
}

/// The tears the model allows for write op `w`.
fn tears(model: Model, op: &FsOp) -> Vec<Tear> {
    let FsOp::Write {
        off, len, extends, ..
    } = *op
    else {
        return vec![];
    };
    let cuts = cut_points(off, len);
    let mut out = Vec::new();
    match model {
        Model::Prefix => {}
        Model::Posix => {
            out.extend(cuts.iter().map(|&c| Tear::Head(c)));
            out.extend(cuts.first().map(|&c| Tear::Tail(c)));
            if extends {
                out.push(Tear::Zero);
            }
        }
        // Ordered mode writes an append's data before the size that exposes it, so
        // only an overwrite in place can tear.
        Model::Ext4Ordered if !extends => {
            out.extend(cuts.iter().map(|&c| Tear::Head(c)));
            out.extend(cuts.first().map(|&c| Tear::Tail(c)));
        }
        Model::Ext4Ordered => {}
    }
    out
}

/// Every state of the model's strategies, in a stable order.
pub fn enumerate(model: Model, ops: &[FsOp]) -> Vec<CrashState> {
    let mut out = Vec::new();
    let mut push = |strategy, crash, dropped: Vec<usize>, torn, zeroed| {
        let id = out.len();
        out.push(CrashState {
            id,
            strategy,
            crash,
            dropped,
            torn,
            zeroed,
        });
    };
    for k in 0..=ops.len() {
        push(Strategy::Prefix, k, vec![], None, false);
    }
    if model == Model::Prefix {
        return out;
    }
    let durable = durable_at(model, ops);
    for k in 1..=ops.len() {
        for i in 0..k {
            let synced = durable[i].is_some_and(|d| d < k);
            if ops[i].is_mutation() && !synced && may_drop(model, ops, i, k) {
                push(Strategy::OmitOne, k, vec![i], None, false);
            }
        }
    }
    for (w, op) in ops.iter().enumerate() {
        for t in tears(model, op) {
            push(Strategy::Torn, w + 1, vec![], Some((w, t)), false);
        }
    }
    for k in 1..=ops.len() {
        // Per file, its data ops still unsynced at k that the model may lose.
        let mut files: Vec<(Ino, Vec<usize>)> = Vec::new();
        for i in 0..k {
            let Some(ino) = ops[i].data_ino() else {
                continue;
            };
            if durable[i].is_some_and(|d| d < k) || !may_drop(model, ops, i, k) {
                continue;
            }
            match files.iter_mut().find(|(f, _)| *f == ino) {
                Some((_, v)) => v.push(i),
                None => files.push((ino, vec![i])),
            }
        }
        for (_, unsynced) in files {
            for set in lost_sets(&unsynced) {
                let all = set.len() == unsynced.len();
                let grows = set
                    .iter()
                    .any(|&i| matches!(ops[i], FsOp::Write { extends: true, .. }));
                push(Strategy::LoseWrites, k, set.clone(), None, false);
                // ALICE's "append → zeros": the size reached the disk, the data not.
                if all && grows && model == Model::Posix {
                    push(Strategy::LoseWrites, k, set, None, true);
                }
            }
        }
    }
    out
}

/// At most this many unsynced data ops of one file have every subset enumerated.
pub const ALL_SUBSETS_UP_TO: usize = 4;

/// The sets of two or more of one file's unsynced data ops `u` (ascending) that a
/// state loses together: every subset when `u` has at most [`ALL_SUBSETS_UP_TO`];
/// otherwise all of them, every tail (the writes from the j-th on never landed:
/// writeback stopped) and every head (the first j never landed; later ones, written
/// back first, did) — at most 2·|u| − 3 sets instead of 2^|u|.
pub fn lost_sets(u: &[usize]) -> Vec<Vec<usize>> {
    let n = u.len();
    if n < 2 {
        return vec![];
    }
    if n <= ALL_SUBSETS_UP_TO {
        return (1u32..1 << n)
            .filter(|m| m.count_ones() >= 2)
            .map(|m| (0..n).filter(|b| m & (1 << b) != 0).map(|b| u[b]).collect())
            .collect();
    }
    let mut out = vec![u.to_vec()];
    for j in 1..n - 1 {
        out.push(u[j..].to_vec());
    }
    for j in 2..n {
        out.push(u[..j].to_vec());
    }
    out
}

/// States per strategy.
pub fn counts(states: &[CrashState]) -> Vec<(Strategy, usize)> {
    Strategy::ALL
        .iter()
        .map(|&s| (s, states.iter().filter(|x| x.strategy == s).count()))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::PathBuf;

    fn p(s: &str) -> PathBuf {
        PathBuf::from(s)
    }

    /// tmp, write, fsync, rename, fsync dir: the correct publish.
    fn publish() -> Vec<FsOp> {
        vec![
            FsOp::Create {
                path: p("a.tmp"),
                ino: 2,
                mode: 0o600,
            },
            FsOp::Write {
                ino: 2,
                off: 0,
                len: 1000,
                data: 0,
                extends: true,
            },
            FsOp::Fsync {
                ino: Some(2),
                path: p("a.tmp"),
                dir: false,
                all: false,
            },
            FsOp::Rename {
                from: p("a.tmp"),
                to: p("a"),
                src: Some(2),
                replaces: true,
            },
            FsOp::Fsync {
                ino: None,
                path: p(""),
                dir: true,
                all: false,
            },
        ]
    }

    #[test]
    fn the_dir_fsync_makes_the_rename_durable_under_posix() {
        let ops = publish();
        let d = durable_at(Model::Posix, &ops);
        assert_eq!(d, vec![Some(4), Some(2), None, Some(4), None]);
        let states = enumerate(Model::Posix, &ops);
        // After the dir fsync (crash = 5) nothing may be dropped.
        assert!(!states.iter().any(|s| s.crash == 5 && s.deviates()));
        assert!(states.iter().any(|s| s.crash == 4 && s.dropped == [3]));
    }

    #[test]
    fn prefix_has_one_state_per_prefix() {
        let states = enumerate(Model::Prefix, &publish());
        assert_eq!(states.len(), 6);
        assert!(states.iter().all(|s| s.strategy == Strategy::Prefix));
    }

    #[test]
    fn ext4_keeps_metadata_in_order_and_appends_whole() {
        let ops = publish();
        let states = enumerate(Model::Ext4Ordered, &ops);
        // The create cannot be lost while the later rename is kept.
        assert!(!states
            .iter()
            .any(|s| s.crash == 4 && s.dropped.contains(&0)));
        assert!(!states.iter().any(|s| s.strategy == Strategy::Torn));
        let posix = enumerate(Model::Posix, &ops);
        assert!(posix
            .iter()
            .any(|s| s.torn.is_some_and(|t| t.1 == Tear::Zero)));
    }

    #[test]
    fn cuts_fall_on_sector_and_block_boundaries() {
        assert_eq!(cut_points(0, 1000), vec![512]);
        assert_eq!(cut_points(100, 9000), vec![512, 4096, 8192, 8704]);
        assert!(cut_points(0, 512).is_empty());
    }

    fn write(ino: Ino, off: u64, len: u64) -> FsOp {
        FsOp::Write {
            ino,
            off,
            len,
            data: 0,
            extends: true,
        }
    }

    /// A save of three writes published by a symlink flip, no fsync: the posix model
    /// loses all three writes behind the published name (an empty file), and zeroes
    /// them (the size landed); ext4-ordered loses them but never shows zeros.
    #[test]
    fn every_unsynced_write_of_a_file_can_be_lost_together() {
        let mut ops = vec![FsOp::Create {
            path: p("save"),
            ino: 1,
            mode: 0o644,
        }];
        ops.extend((0..3).map(|i| write(1, i * 10, 10)));
        ops.push(FsOp::Symlink {
            target: p("save"),
            path: p("last"),
        });
        let posix = enumerate(Model::Posix, &ops);
        let all = |s: &CrashState| s.crash == 5 && s.dropped == [1, 2, 3];
        assert!(posix.iter().any(|s| all(s) && !s.zeroed));
        assert!(posix.iter().any(|s| all(s) && s.zeroed));
        let ext4 = enumerate(Model::Ext4Ordered, &ops);
        assert!(ext4.iter().any(|s| all(s) && !s.zeroed));
        assert!(!ext4.iter().any(|s| s.zeroed));
        // After an fsync of the file nothing of it is lost.
        ops.insert(
            4,
            FsOp::Fsync {
                ino: Some(1),
                path: p("save"),
                dir: false,
                all: false,
            },
        );
        let synced = enumerate(Model::Posix, &ops);
        assert!(!synced
            .iter()
            .any(|s| s.crash >= 5 && s.dropped.iter().any(|&d| (1..=3).contains(&d))));
    }

    #[test]
    fn lost_sets_are_every_subset_when_few_and_heads_and_tails_when_many() {
        assert_eq!(lost_sets(&[1]), Vec::<Vec<usize>>::new());
        assert_eq!(lost_sets(&[1, 2, 3]).len(), 4);
        assert_eq!(lost_sets(&[1, 2, 3, 4]).len(), 11);
        let many: Vec<usize> = (0..10).collect();
        let sets = lost_sets(&many);
        assert_eq!(sets.len(), 2 * 10 - 3);
        assert!(sets.contains(&many));
        assert!(sets.contains(&vec![8, 9]));
        assert!(sets.contains(&vec![0, 1]));
    }

    #[test]
    fn model_names_parse_and_unknown_ones_do_not() {
        for m in [Model::Prefix, Model::Posix, Model::Ext4Ordered] {
            assert_eq!(m.name().parse::<Model>(), Ok(m));
        }
        assert!("ext3".parse::<Model>().is_err());
    }
}
