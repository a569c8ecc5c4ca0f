//! The shared counter file (`VXFAULT_SHM`): every process of a preloaded tree counts
//! into it, and so does the seccomp supervisor when it is given one, so after (or
//! during) a run it says how often each rule of the plan matched and acted, and how
//! many processes loaded the plan.

use std::fs;
use std::io;
use std::path::{Path, PathBuf};
use std::ptr::NonNull;
use std::sync::atomic::AtomicU64;

use crate::{planlang, RuleInfo, RuleOutcome};

/// One run's counter file, made for one plan.
#[derive(Debug, Clone)]
pub struct Counters {
    path: PathBuf,
}

/// What the counter file says at one moment.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Counted {
    /// Processes that loaded the preload with this plan.
    pub loaded: u64,
    /// Processes that loaded it with another plan (their counts are not here).
    pub plan_mismatch: u64,
    /// Processes whose `VXFAULT_PLAN` did not parse.
    pub plan_errors: u64,
    /// Trace lines that could not be written.
    pub trace_errors: u64,
    /// Per rule of the plan, in its order.
    pub rules: Vec<RuleOutcome>,
}

impl Counters {
    /// Creates (or truncates) `path` as the counter file of `plan`: a process that
    /// loads another plan counts itself as a mismatch and keeps its own counts.
    pub fn create(path: &Path, plan: &str) -> io::Result<Counters> {
        let mut words = vec![0u64; planlang::SHM_SIZE / 8];
        words[planlang::SHM_MAGIC] = planlang::SHM_MAGIC_VALUE;
        words[planlang::SHM_PLAN_HASH] = planlang::fnv1a(plan.as_bytes());
        let bytes: Vec<u8> = words.iter().flat_map(|w| w.to_ne_bytes()).collect();
        fs::write(path, bytes)?;
        Ok(Counters {
            path: path.to_path_buf(),
        })
    }

    /// The file, for `VXFAULT_SHM`.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Maps the file shared, for a counting party other than the preload (the seccomp
    /// supervisor): what it counts there, readers of the file see at once. A file
    /// made for another plan, or not by [`Counters::create`], is refused.
    pub fn map(&self, plan: &str) -> io::Result<Words> {
        let named = |what: &str| {
            io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("{}: {what}", self.path.display()),
            )
        };
        let file = fs::OpenOptions::new()
            .read(true)
            .write(true)
            .open(&self.path)?;
        if file.metadata()?.len() != planlang::SHM_SIZE as u64 {
            return Err(named("not a counter file (wrong size)"));
        }
        // SAFETY: a fresh shared mapping of the whole file at an address the kernel
        // picks; the file is SHM_SIZE bytes long (checked above), so every word of it
        // is backed.
        let ptr = unsafe {
            rustix::mm::mmap(
                std::ptr::null_mut(),
                planlang::SHM_SIZE,
                rustix::mm::ProtFlags::READ | rustix::mm::ProtFlags::WRITE,
                rustix::mm::MapFlags::SHARED,
                &file,
                0,
            )?
        };
        let words = Words(Backing::Mapped(
            NonNull::new(ptr.cast::<AtomicU64>()).ok_or_else(|| named("mapped at null"))?,
        ));
        let all = words.all();
        let magic = all[planlang::SHM_MAGIC].load(std::sync::atomic::Ordering::Acquire);
        let hash = all[planlang::SHM_PLAN_HASH].load(std::sync::atomic::Ordering::Acquire);
        if magic != planlang::SHM_MAGIC_VALUE {
            return Err(named("not a counter file (no magic number)"));
        }
        if hash != planlang::fnv1a(plan.as_bytes()) {
            return Err(named("made for another plan"));
        }
        Ok(words)
    }

    /// Starts every rule's tree-wide counts again (matched and acted), so a `##N`
    /// rule's N counts from now on: a test arms its plan once its setup is done,
    /// whatever calls the setup made.
    pub fn restart(&self, plan: &str) -> io::Result<()> {
        let words = self.map(plan)?;
        for first in [planlang::SHM_MATCHED, planlang::SHM_FIRED] {
            for word in words.rules(first) {
                word.store(0, std::sync::atomic::Ordering::SeqCst);
            }
        }
        Ok(())
    }

    /// The counts now, for `rules` (the plan's, from [`crate::check_plan`]).
    pub fn read(&self, rules: &[RuleInfo]) -> io::Result<Counted> {
        let bytes = fs::read(&self.path)?;
        let w = |i: usize| -> u64 {
            bytes
                .get(i * 8..i * 8 + 8)
                .map(|b| u64::from_ne_bytes(b.try_into().unwrap_or([0; 8])))
                .unwrap_or(0)
        };
        let rules = rules
            .iter()
            .enumerate()
            .map(|(i, r)| RuleOutcome {
                text: r.text.clone(),
                op: r.op,
                reached: w(planlang::SHM_SEEN + r.op as usize) != 0,
                matched: w(planlang::SHM_MATCHED + i),
                fired: w(planlang::SHM_FIRED + i),
                kills: r.kills,
            })
            .collect();
        Ok(Counted {
            loaded: w(planlang::SHM_LOADED),
            plan_mismatch: w(planlang::SHM_PLAN_MISMATCH),
            plan_errors: w(planlang::SHM_PLAN_ERROR),
            trace_errors: w(planlang::SHM_TRACE_ERRORS),
            rules,
        })
    }
}

/// The words of the counter file's layout (`planlang::SHM_*`) one party counts into:
/// the file mapped shared ([`Counters::map`]) or memory of its own ([`Words::own`]).
pub struct Words(Backing);

enum Backing {
    Own(Box<[AtomicU64]>),
    /// `SHM_SIZE` bytes mapped shared, unmapped on drop.
    Mapped(NonNull<AtomicU64>),
}

// SAFETY: the mapping is owned by this value alone (unmapped only in its drop) and
// its memory is only ever reached through `&AtomicU64`, which is Sync.
unsafe impl Send for Words {}
// SAFETY: as for Send: shared access is only through atomics.
unsafe impl Sync for Words {}

impl Words {
    /// Words nobody else sees.
    pub fn own() -> Words {
        Words(Backing::Own(
            (0..planlang::SHM_SIZE / 8)
                .map(|_| AtomicU64::new(0))
                .collect(),
        ))
    }

    /// Every word of the layout.
    pub fn all(&self) -> &[AtomicU64] {
        match &self.0 {
            Backing::Own(w) => w,
            // SAFETY: the mapping is SHM_SIZE bytes, page aligned (so aligned for
            // u64), readable and writable, and lives as long as `self`; other
            // processes change it only through atomic operations too.
            Backing::Mapped(p) => unsafe {
                std::slice::from_raw_parts(p.as_ptr(), planlang::SHM_SIZE / 8)
            },
        }
    }

    /// The `MAX_RULES` per-rule words that start at `first` (`SHM_MATCHED`,
    /// `SHM_FIRED`).
    pub fn rules(&self, first: usize) -> &[AtomicU64] {
        &self.all()[first..first + planlang::MAX_RULES]
    }
}

impl Drop for Words {
    fn drop(&mut self) {
        if let Backing::Mapped(p) = self.0 {
            // SAFETY: our own mapping of SHM_SIZE bytes; no reference into it outlives
            // `self` (every borrow of `all` is tied to it).
            let _ = unsafe { rustix::mm::munmap(p.as_ptr().cast(), planlang::SHM_SIZE) };
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const PLAN: &str = "rename@/x/*#2=crash;fsync=EIO";

    /// A fresh counter file for [`PLAN`] in `dir`, and the plan's rules.
    fn fresh(dir: &Path) -> (Counters, Vec<RuleInfo>) {
        let c = Counters::create(&dir.join("counters"), PLAN).unwrap();
        (c, crate::check_plan(PLAN).unwrap())
    }

    #[test]
    fn a_fresh_file_counts_nothing_and_names_each_rule() {
        let dir = tempfile::tempdir().unwrap();
        let (c, rules) = fresh(dir.path());
        let got = c.read(&rules).unwrap();
        assert_eq!(got.loaded, 0);
        assert_eq!(got.rules.len(), 2);
        assert_eq!(got.rules[0].text, "rename@/x/*#2=crash");
        assert!(got.rules.iter().all(|r| r.matched == 0 && r.fired == 0));
        assert_eq!(
            fs::metadata(c.path()).unwrap().len() as usize,
            planlang::SHM_SIZE
        );
    }

    #[test]
    fn a_restart_zeroes_every_rules_counts_and_keeps_the_rest() {
        use std::sync::atomic::Ordering;
        let dir = tempfile::tempdir().unwrap();
        let (c, rules) = fresh(dir.path());
        let words = c.map(PLAN).unwrap();
        for first in [planlang::SHM_MATCHED, planlang::SHM_FIRED] {
            words.rules(first)[0].fetch_add(2, Ordering::Relaxed);
            words.rules(first)[1].fetch_add(5, Ordering::Relaxed);
        }
        words.all()[planlang::SHM_LOADED].fetch_add(1, Ordering::Relaxed);
        c.restart(PLAN).unwrap();
        let got = c.read(&rules).unwrap();
        assert!(got.rules.iter().all(|r| r.matched == 0 && r.fired == 0));
        assert_eq!(got.loaded, 1, "a restart keeps the load count");
        assert!(c.restart("fsync=EIO").is_err(), "another plan's file");
    }

    #[test]
    fn a_mapped_file_shows_what_its_holder_counts_at_once() {
        use std::sync::atomic::Ordering;
        let dir = tempfile::tempdir().unwrap();
        let (c, rules) = fresh(dir.path());
        let words = c.map(PLAN).unwrap();
        words.rules(planlang::SHM_MATCHED)[1].fetch_add(3, Ordering::Relaxed);
        words.rules(planlang::SHM_FIRED)[1].fetch_add(2, Ordering::Relaxed);
        words.all()[planlang::SHM_LOADED].fetch_add(1, Ordering::Relaxed);
        words.all()[planlang::SHM_SEEN + rules[1].op as usize].store(1, Ordering::Relaxed);
        let got = c.read(&rules).unwrap();
        assert_eq!(
            (got.loaded, got.rules[1].matched, got.rules[1].fired),
            (1, 3, 2)
        );
        assert!(got.rules[1].reached && !got.rules[0].reached);
        drop(words);
        assert_eq!(
            c.read(&rules).unwrap(),
            got,
            "the counts outlive the mapping"
        );
    }

    #[test]
    fn a_file_made_for_another_plan_or_not_a_counter_file_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let c = Counters::create(&dir.path().join("counters"), "fsync=EIO").unwrap();
        let e = c.map("fsync=EROFS").err().unwrap();
        assert!(e.to_string().contains("made for another plan"), "{e}");
        assert!(e.to_string().contains("counters"), "{e}");
        fs::write(c.path(), b"short").unwrap();
        let e = c.map("fsync=EIO").err().unwrap();
        assert!(e.to_string().contains("wrong size"), "{e}");
    }
}
