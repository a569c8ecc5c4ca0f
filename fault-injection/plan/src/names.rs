//! Names of open flags and lock operations for the trace (`"flags":"O_WRONLY|O_CREAT"`,
//! `"lock":"EX|NB"`, `"lock":"SETLK F_WRLCK"`). Pure, fixed-size, no allocation.

/// Open flags by name. The access mode (the low two bits) is named separately.
#[cfg(target_arch = "x86_64")]
const OPEN_FLAGS: &[(i32, &str)] = &[
    (0o100, "O_CREAT"),
    (0o200, "O_EXCL"),
    (0o400, "O_NOCTTY"),
    (0o1000, "O_TRUNC"),
    (0o2000, "O_APPEND"),
    (0o4000, "O_NONBLOCK"),
    (0o4010000, "O_SYNC"),
    (0o10000, "O_DSYNC"),
    (0o20000, "O_ASYNC"),
    (0o40000, "O_DIRECT"),
    (0o100000, "O_LARGEFILE"),
    (0o20200000, "O_TMPFILE"),
    (0o200000, "O_DIRECTORY"),
    (0o400000, "O_NOFOLLOW"),
    (0o1000000, "O_NOATIME"),
    (0o2000000, "O_CLOEXEC"),
    (0o10000000, "O_PATH"),
];

/// Open flags by name (asm-generic layout). The access mode is named separately.
#[cfg(target_arch = "aarch64")]
const OPEN_FLAGS: &[(i32, &str)] = &[
    (0o100, "O_CREAT"),
    (0o200, "O_EXCL"),
    (0o400, "O_NOCTTY"),
    (0o1000, "O_TRUNC"),
    (0o2000, "O_APPEND"),
    (0o4000, "O_NONBLOCK"),
    (0o4010000, "O_SYNC"),
    (0o10000, "O_DSYNC"),
    (0o20000, "O_ASYNC"),
    (0o200000, "O_DIRECT"),
    (0o400000, "O_LARGEFILE"),
    (0o20040000, "O_TMPFILE"),
    (0o40000, "O_DIRECTORY"),
    (0o100000, "O_NOFOLLOW"),
    (0o1000000, "O_NOATIME"),
    (0o2000000, "O_CLOEXEC"),
    (0o10000000, "O_PATH"),
];

/// Appends to a fixed buffer, stopping at its end.
struct Out<'a> {
    buf: &'a mut [u8],
    len: usize,
}

impl Out<'_> {
    fn push(&mut self, s: &[u8]) {
        for &b in s {
            if let Some(slot) = self.buf.get_mut(self.len) {
                *slot = b;
                self.len += 1;
            }
        }
    }

    fn sep(&mut self) {
        if self.len > 0 {
            self.push(b"|");
        }
    }

    fn hex(&mut self, v: u32) {
        self.push(b"0x");
        let mut started = false;
        for shift in (0..8).rev() {
            let d = ((v >> (shift * 4)) & 0xf) as u8;
            if d != 0 || started || shift == 0 {
                started = true;
                self.push(&[if d < 10 { b'0' + d } else { b'a' + d - 10 }]);
            }
        }
    }
}

/// `O_WRONLY|O_CREAT|O_EXCL|O_NOFOLLOW|O_CLOEXEC`; bits without a name as `0x…`.
/// Returns the length written to `buf`.
pub fn open_flags(flags: i32, buf: &mut [u8]) -> usize {
    let mut o = Out { buf, len: 0 };
    o.push(match flags & 3 {
        0 => b"O_RDONLY",
        1 => b"O_WRONLY",
        2 => b"O_RDWR",
        _ => b"O_ACCMODE",
    });
    let mut rest = flags & !3;
    for &(bits, name) in OPEN_FLAGS {
        if rest & bits == bits {
            o.sep();
            o.push(name.as_bytes());
            rest &= !bits;
        }
    }
    if rest != 0 {
        o.sep();
        o.hex(rest as u32);
    }
    o.len
}

/// A mode as four octal digits (`0600`).
pub fn octal4(mode: u32) -> [u8; 4] {
    let m = mode & 0o7777;
    [
        b'0' + ((m >> 9) & 7) as u8,
        b'0' + ((m >> 6) & 7) as u8,
        b'0' + ((m >> 3) & 7) as u8,
        b'0' + (m & 7) as u8,
    ]
}

/// A `flock(2)` operation: `SH`, `EX`, `UN`, with `|NB`; unknown bits as `0x…`.
pub fn flock_op(how: i32, buf: &mut [u8]) -> usize {
    const SH: i32 = 1;
    const EX: i32 = 2;
    const NB: i32 = 4;
    const UN: i32 = 8;
    let mut o = Out { buf, len: 0 };
    let mut rest = how;
    for (bits, name) in [(SH, "SH"), (EX, "EX"), (UN, "UN"), (NB, "NB")] {
        if rest & bits != 0 {
            o.sep();
            o.push(name.as_bytes());
            rest &= !bits;
        }
    }
    if rest != 0 || o.len == 0 {
        o.sep();
        o.hex(rest as u32);
    }
    o.len
}

/// An fcntl lock: the command (`SETLK`, `SETLKW`, `OFD_SETLK`, `OFD_SETLKW`) and the
/// lock type (`F_RDLCK`, `F_WRLCK`, `F_UNLCK`), as in `SETLK F_WRLCK`.
pub fn fcntl_lock(cmd: i32, kind: Option<i16>, buf: &mut [u8]) -> usize {
    let mut o = Out { buf, len: 0 };
    match cmd {
        6 => o.push(b"SETLK"),
        7 => o.push(b"SETLKW"),
        37 => o.push(b"OFD_SETLK"),
        38 => o.push(b"OFD_SETLKW"),
        c => o.hex(c as u32),
    }
    match kind {
        Some(0) => o.push(b" F_RDLCK"),
        Some(1) => o.push(b" F_WRLCK"),
        Some(2) => o.push(b" F_UNLCK"),
        Some(k) => {
            o.push(b" ");
            o.hex(k as u16 as u32);
        }
        None => {}
    }
    o.len
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(f: impl FnOnce(&mut [u8]) -> usize) -> std::string::String {
        let mut buf = [0u8; 256];
        let n = f(&mut buf);
        std::string::String::from_utf8(buf[..n].to_vec()).unwrap()
    }

    #[test]
    #[cfg(target_arch = "x86_64")]
    fn open_flags_by_name() {
        let f = 0o1 | 0o100 | 0o200 | 0o400000 | 0o2000000;
        assert_eq!(
            text(|b| open_flags(f, b)),
            "O_WRONLY|O_CREAT|O_EXCL|O_NOFOLLOW|O_CLOEXEC"
        );
        assert_eq!(text(|b| open_flags(0, b)), "O_RDONLY");
        assert_eq!(text(|b| open_flags(0o20200002, b)), "O_RDWR|O_TMPFILE");
        assert_eq!(text(|b| open_flags(0o4010000, b)), "O_RDONLY|O_SYNC");
        assert_eq!(text(|b| open_flags(0o10000, b)), "O_RDONLY|O_DSYNC");
        assert_eq!(text(|b| open_flags(0x4000_0000, b)), "O_RDONLY|0x40000000");
        // A buffer too small is cut, never overrun.
        let mut tiny = [0u8; 5];
        assert_eq!(open_flags(f, &mut tiny), 5);
    }

    #[test]
    fn modes_and_locks() {
        assert_eq!(&octal4(0o600), b"0600");
        assert_eq!(&octal4(0o104755), b"4755");
        assert_eq!(text(|b| flock_op(2 | 4, b)), "EX|NB");
        assert_eq!(text(|b| flock_op(1, b)), "SH");
        assert_eq!(text(|b| flock_op(8, b)), "UN");
        assert_eq!(text(|b| flock_op(0, b)), "0x0");
        assert_eq!(text(|b| fcntl_lock(6, Some(1), b)), "SETLK F_WRLCK");
        assert_eq!(text(|b| fcntl_lock(38, Some(2), b)), "OFD_SETLKW F_UNLCK");
        assert_eq!(text(|b| fcntl_lock(7, None, b)), "SETLKW");
    }
}
