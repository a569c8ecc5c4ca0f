//! `send` and `sendto`: writes to a socket (Rust's `UnixStream` and `TcpStream`, and
//! tokio's through them, write with `send`). They are the `write` family's: a plan's
//! `write@socket:*` rule acts on them, and the trace records them, so the crash log
//! sees a daemon's reply on its socket as an output (its acknowledgement).

use core::ffi::{c_int, c_void};

use plan::Op;
use vxfault_plan as plan;

use crate::call::{run, Bytes, Call, Target};

hook! {
    fn send(fd: c_int, buf: *const c_void, n: usize, flags: c_int) -> isize;
    real Send;
    op Op::Write;
    |f| {
        let mut c = Call::new(Op::Write, "send", Target::Fd(fd)).with_bytes(Bytes::Buf(buf), None);
        run(&mut c, n, n as i64, |lim| f(fd, buf, lim, flags) as i64) as isize
    }
}

hook! {
    fn sendto(
        fd: c_int,
        buf: *const c_void,
        n: usize,
        flags: c_int,
        to: *const c_void,
        to_len: u32,
    ) -> isize;
    real Sendto;
    op Op::Write;
    |f| {
        let mut c = Call::new(Op::Write, "sendto", Target::Fd(fd)).with_bytes(Bytes::Buf(buf), None);
        run(&mut c, n, n as i64, |lim| f(fd, buf, lim, flags, to, to_len) as i64) as isize
    }
}
