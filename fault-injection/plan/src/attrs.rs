//! What the trace says about the attribute calls, shared by both backends: the node
//! type a `mknod` makes and the modification time a timestamp call sets (`record`'s
//! crash log replays both).

/// How a timestamp call passes its two times (access, then modification).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Times {
    /// `struct timespec[2]` (utimensat, futimens).
    Timespec,
    /// `struct timeval[2]` (utimes, futimes, lutimes, futimesat).
    Timeval,
    /// `struct utimbuf` (utime): two `time_t` seconds.
    Utimbuf,
}

/// The modification time a timestamp call sets.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Mtime {
    /// The present (a null times pointer, or `UTIME_NOW`).
    Now,
    /// Left as it is (`UTIME_OMIT`).
    Omit,
    /// Seconds and nanoseconds since the epoch.
    At(i64, u32),
}

const UTIME_NOW: i64 = (1 << 30) - 1;
const UTIME_OMIT: i64 = (1 << 30) - 2;

/// Bytes of the times argument of each layout.
pub const fn times_size(t: Times) -> usize {
    match t {
        Times::Timespec | Times::Timeval => 32,
        Times::Utimbuf => 16,
    }
}

fn word(raw: &[u8], at: usize) -> Option<i64> {
    let b = raw.get(at..at + 8)?;
    let mut w = [0u8; 8];
    w.copy_from_slice(b);
    Some(i64::from_ne_bytes(w))
}

/// The modification time in a times argument (`None`: a null pointer, which means
/// the present). `None` when `raw` is too short (the caller could not read it).
pub fn mtime_of(t: Times, raw: Option<&[u8]>) -> Option<Mtime> {
    let Some(raw) = raw else {
        return Some(Mtime::Now);
    };
    Some(match t {
        Times::Timespec => {
            let (sec, nsec) = (word(raw, 16)?, word(raw, 24)?);
            match nsec {
                UTIME_NOW => Mtime::Now,
                UTIME_OMIT => Mtime::Omit,
                n => Mtime::At(sec, n.clamp(0, 999_999_999) as u32),
            }
        }
        Times::Timeval => {
            let (sec, usec) = (word(raw, 16)?, word(raw, 24)?);
            Mtime::At(sec, (usec.clamp(0, 999_999) * 1000) as u32)
        }
        Times::Utimbuf => Mtime::At(word(raw, 8)?, 0),
    })
}

/// The trace's `mtime`: `now`, `omit` or `SECONDS.NANOSECONDS` (nine digits).
pub fn mtime_text(m: Mtime, buf: &mut [u8; 32]) -> usize {
    let put = |buf: &mut [u8; 32], s: &[u8]| {
        buf[..s.len()].copy_from_slice(s);
        s.len()
    };
    let (sec, nsec) = match m {
        Mtime::Now => return put(buf, b"now"),
        Mtime::Omit => return put(buf, b"omit"),
        Mtime::At(s, n) => (s, n),
    };
    let mut n = 0;
    if sec < 0 {
        buf[0] = b'-';
        n = 1;
    }
    let mut digits = [0u8; 20];
    let mut v = sec.unsigned_abs();
    let mut k = 0;
    loop {
        digits[k] = b'0' + (v % 10) as u8;
        k += 1;
        v /= 10;
        if v == 0 {
            break;
        }
    }
    while k > 0 {
        k -= 1;
        buf[n] = digits[k];
        n += 1;
    }
    buf[n] = b'.';
    n += 1;
    let mut ns = nsec.min(999_999_999);
    for i in (0..9).rev() {
        buf[n + i] = b'0' + (ns % 10) as u8;
        ns /= 10;
    }
    n + 9
}

/// The trace's `node` for a `mknod` mode's type bits: `fifo`, `socket`, `char`,
/// `block` or `file` (a regular file; 0 means one too).
pub fn node_kind(mode: u32) -> &'static [u8] {
    match mode & 0o170000 {
        0o010000 => b"fifo",
        0o140000 => b"socket",
        0o020000 => b"char",
        0o060000 => b"block",
        _ => b"file",
    }
}

/// `AT_SYMLINK_NOFOLLOW`: the call acts on a symlink itself.
pub const AT_SYMLINK_NOFOLLOW: i32 = 0x100;

#[cfg(test)]
mod tests {
    use super::*;
    extern crate std;
    use std::vec::Vec;

    fn text(m: Mtime) -> std::string::String {
        let mut b = [0u8; 32];
        let n = mtime_text(m, &mut b);
        std::string::String::from_utf8(b[..n].to_vec()).unwrap()
    }

    fn pair(a: (i64, i64), m: (i64, i64)) -> Vec<u8> {
        [a.0, a.1, m.0, m.1]
            .iter()
            .flat_map(|w| w.to_ne_bytes())
            .collect()
    }

    #[test]
    fn times_decode_to_the_modification_time() {
        let ts = pair((1, 2), (1_577_836_800, 5));
        assert_eq!(
            mtime_of(Times::Timespec, Some(&ts)),
            Some(Mtime::At(1_577_836_800, 5))
        );
        let now = pair((1, 2), (0, UTIME_NOW));
        assert_eq!(mtime_of(Times::Timespec, Some(&now)), Some(Mtime::Now));
        let omit = pair((1, 2), (0, UTIME_OMIT));
        assert_eq!(mtime_of(Times::Timespec, Some(&omit)), Some(Mtime::Omit));
        let tv = pair((1, 2), (7, 3));
        assert_eq!(
            mtime_of(Times::Timeval, Some(&tv)),
            Some(Mtime::At(7, 3000))
        );
        let ub: Vec<u8> = [4i64, 9].iter().flat_map(|w| w.to_ne_bytes()).collect();
        assert_eq!(mtime_of(Times::Utimbuf, Some(&ub)), Some(Mtime::At(9, 0)));
        assert_eq!(mtime_of(Times::Timespec, None), Some(Mtime::Now));
        assert_eq!(mtime_of(Times::Timespec, Some(&ts[..20])), None);
    }

    #[test]
    fn mtime_text_has_nine_digits_of_nanoseconds() {
        assert_eq!(text(Mtime::At(1_577_836_800, 5)), "1577836800.000000005");
        assert_eq!(text(Mtime::At(-3, 0)), "-3.000000000");
        assert_eq!(text(Mtime::Now), "now");
        assert_eq!(text(Mtime::Omit), "omit");
    }

    #[test]
    fn node_kinds_follow_the_type_bits() {
        assert_eq!(node_kind(0o010644), b"fifo");
        assert_eq!(node_kind(0o020600), b"char");
        assert_eq!(node_kind(0o644), b"file");
    }
}
