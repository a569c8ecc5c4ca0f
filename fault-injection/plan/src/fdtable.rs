//! The fd → path table of the preload: one slot per fd number below [`FDS`], holding the
//! canonical path `/proc/self/fd/N` gave when our open hooks returned N.
//!
//! Slots are seqlocks over atomics (so there is no data race even when a reader copies
//! a slot that a writer is changing): a writer makes `seq` odd, stores the words, makes
//! it even again; a reader copies the words between two reads of `seq` and keeps the
//! copy only if `seq` was even and unchanged. Readers never wait; writers wait only for
//! another writer of the same fd. Only fds that are opened and closed by hooked calls
//! ever change a slot, so contention is the rare case.

use core::mem::MaybeUninit;
use core::sync::atomic::{fence, AtomicU32, AtomicU64, Ordering};

/// fd numbers with a slot.
pub const FDS: usize = 1024;
/// u64 words of path per slot.
const WORDS: usize = 31;
/// Longest path a slot holds, in bytes; longer paths are not cached.
pub const SLOT_CAP: usize = WORDS * 8;

struct Slot {
    /// Even: stable; odd: being written.
    seq: AtomicU32,
    /// 0: empty.
    len: AtomicU32,
    words: [AtomicU64; WORDS],
}

impl Slot {
    const fn empty() -> Slot {
        Slot {
            seq: AtomicU32::new(0),
            len: AtomicU32::new(0),
            words: [const { AtomicU64::new(0) }; WORDS],
        }
    }

    /// Takes the write side; returns the even sequence number it replaced.
    fn lock(&self) -> u32 {
        loop {
            let v = self.seq.load(Ordering::Relaxed);
            if v & 1 == 0
                && self
                    .seq
                    .compare_exchange_weak(
                        v,
                        v.wrapping_add(1),
                        Ordering::Acquire,
                        Ordering::Relaxed,
                    )
                    .is_ok()
            {
                // The stores below must not become visible before the odd `seq`.
                fence(Ordering::Release);
                return v;
            }
            core::hint::spin_loop();
        }
    }

    fn unlock(&self, v: u32) {
        self.seq.store(v.wrapping_add(2), Ordering::Release);
    }
}

/// The table. `const`-constructible so it can be a `static`.
pub struct FdTable {
    slots: [Slot; FDS],
}

impl Default for FdTable {
    fn default() -> Self {
        FdTable::new()
    }
}

impl FdTable {
    pub const fn new() -> FdTable {
        FdTable {
            slots: [const { Slot::empty() }; FDS],
        }
    }

    fn slot(&self, fd: i32) -> Option<&Slot> {
        usize::try_from(fd).ok().and_then(|i| self.slots.get(i))
    }

    /// Forgets fd `fd`'s path (cheap when the slot is already empty).
    pub fn clear(&self, fd: i32) {
        let Some(s) = self.slot(fd) else { return };
        if s.len.load(Ordering::Relaxed) == 0 && s.seq.load(Ordering::Relaxed) & 1 == 0 {
            return;
        }
        let v = s.lock();
        s.len.store(0, Ordering::Relaxed);
        s.unlock(v);
    }

    /// Records `path` for `fd` (an empty or too long path empties the slot).
    pub fn store(&self, fd: i32, path: &[u8]) {
        let Some(s) = self.slot(fd) else { return };
        let v = s.lock();
        if path.is_empty() || path.len() > SLOT_CAP {
            s.len.store(0, Ordering::Relaxed);
        } else {
            for (w, chunk) in s.words.iter().zip(path.chunks(8)) {
                let mut b = [0u8; 8];
                b[..chunk.len()].copy_from_slice(chunk);
                w.store(u64::from_ne_bytes(b), Ordering::Relaxed);
            }
            s.len.store(path.len() as u32, Ordering::Relaxed);
        }
        s.unlock(v);
    }

    /// Copies fd `fd`'s path into `out` and returns its length n (`out[..n]` is then
    /// initialised); `None` when the slot is empty, being written, changed while
    /// copying, or `out` is too small.
    pub fn load(&self, fd: i32, out: &mut [MaybeUninit<u8>]) -> Option<usize> {
        let s = self.slot(fd)?;
        let v1 = s.seq.load(Ordering::Acquire);
        if v1 & 1 == 1 {
            return None;
        }
        let len = (s.len.load(Ordering::Relaxed) as usize).min(SLOT_CAP);
        if len == 0 || len > out.len() {
            return None;
        }
        for (i, w) in s.words.iter().enumerate().take(len.div_ceil(8)) {
            let b = w.load(Ordering::Relaxed).to_ne_bytes();
            let start = i * 8;
            let n = (len - start).min(8);
            for (dst, &src) in out[start..start + n].iter_mut().zip(&b[..n]) {
                dst.write(src);
            }
        }
        fence(Ordering::Acquire);
        if s.seq.load(Ordering::Relaxed) != v1 {
            return None;
        }
        Some(len)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `load` into a byte array (tests only: zero-initialised, so reading it is fine).
    fn load(t: &FdTable, fd: i32, out: &mut [u8; SLOT_CAP]) -> Option<usize> {
        let mut buf = [MaybeUninit::new(0u8); SLOT_CAP];
        let n = t.load(fd, &mut buf)?;
        for (o, b) in out.iter_mut().zip(&buf[..n]) {
            // SAFETY: `buf` was fully initialised above.
            *o = unsafe { b.assume_init() };
        }
        Some(n)
    }

    #[test]
    fn store_load_clear() {
        let t = std::boxed::Box::new(FdTable::new());
        let mut out = [0u8; SLOT_CAP];
        assert_eq!(load(&t, 3, &mut out), None);
        t.store(3, b"/tmp/some/file.json");
        let n = load(&t, 3, &mut out).unwrap();
        assert_eq!(&out[..n], b"/tmp/some/file.json");
        t.clear(3);
        assert_eq!(load(&t, 3, &mut out), None);
        t.store(3, &[b'x'; SLOT_CAP + 1]);
        assert_eq!(load(&t, 3, &mut out), None, "too long: not cached");
        t.store(-1, b"/x");
        t.store(FDS as i32, b"/x");
        assert_eq!(load(&t, -1, &mut out), None);
        assert_eq!(load(&t, FDS as i32, &mut out), None);
        let exact = [b'y'; SLOT_CAP];
        t.store(5, &exact);
        assert_eq!(load(&t, 5, &mut out), Some(SLOT_CAP));
        assert_eq!(out, exact);
    }

    #[test]
    fn a_reader_sees_a_whole_path_or_none() {
        let t = std::boxed::Box::new(FdTable::new());
        let (a, b) = ([b'a'; 40], [b'b'; 17]);
        let rounds = if cfg!(miri) { 20 } else { 20_000 };
        std::thread::scope(|s| {
            s.spawn(|| {
                for i in 0..rounds {
                    match i % 3 {
                        0 => t.store(7, &a),
                        1 => t.store(7, &b),
                        _ => t.clear(7),
                    }
                }
            });
            s.spawn(|| {
                let mut out = [0u8; SLOT_CAP];
                for _ in 0..rounds {
                    if let Some(n) = load(&t, 7, &mut out) {
                        let got = &out[..n];
                        assert!(got == a || got == b, "torn read: {got:?}");
                    }
                }
            });
        });
    }
}
