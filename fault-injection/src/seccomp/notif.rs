//! The seccomp user-notification ioctls (linux/seccomp.h), made through rustix.

use std::io;
use std::os::fd::{AsFd, BorrowedFd};

use rustix::ioctl::{ioctl, opcode, IntegerSetter, Setter, Updater};

/// `struct seccomp_data`.
#[repr(C)]
#[derive(Clone, Copy, Default, Debug)]
pub struct SeccompData {
    pub nr: i32,
    pub arch: u32,
    pub instruction_pointer: u64,
    pub args: [u64; 6],
}

/// `struct seccomp_notif`: one intercepted call.
#[repr(C)]
#[derive(Clone, Copy, Default, Debug)]
pub struct Notif {
    pub id: u64,
    /// The calling thread, in our pid namespace.
    pub pid: u32,
    pub flags: u32,
    pub data: SeccompData,
}

/// `struct seccomp_notif_resp`.
#[repr(C)]
#[derive(Clone, Copy, Default, Debug)]
struct Resp {
    id: u64,
    val: i64,
    error: i32,
    flags: u32,
}

/// `struct seccomp_notif_addfd`.
#[repr(C)]
#[derive(Clone, Copy, Default, Debug)]
struct AddFd {
    id: u64,
    flags: u32,
    srcfd: u32,
    newfd: u32,
    newfd_flags: u32,
}

const FLAG_CONTINUE: u32 = 1;
const ADDFD_FLAG_SEND: u32 = 1 << 1;
const RECV: rustix::ioctl::Opcode = opcode::read_write::<Notif>(b'!', 0);
const SEND: rustix::ioctl::Opcode = opcode::read_write::<Resp>(b'!', 1);
const ID_VALID: rustix::ioctl::Opcode = opcode::write::<u64>(b'!', 2);
const ADDFD: rustix::ioctl::Opcode = opcode::write::<AddFd>(b'!', 3);
const SET_FLAGS: rustix::ioctl::Opcode = opcode::write::<u64>(b'!', 4);
const FD_SYNC_WAKE_UP: usize = 1;

/// Asks the kernel (Linux 6.6, `SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP`) to hand each
/// notification and each answer over on the CPU that made it, the way a synchronous
/// call would, instead of waking the other side wherever the scheduler puts it: the
/// caller sleeps while we answer, so the round trip costs a switch, not a migration.
/// `false` on an older kernel, where the listener works as before.
pub fn sync_wake_up(fd: BorrowedFd<'_>) -> bool {
    // SAFETY: SET_FLAGS takes the flags as the ioctl's argument itself, not through a
    // pointer (although the header declares it `_IOW(…, __u64)`); the value is a valid
    // flag set.
    unsafe { ioctl(fd, IntegerSetter::<SET_FLAGS>::new_usize(FD_SYNC_WAKE_UP)) }.is_ok()
}

/// Waits for the next notification. `Ok(None)`: the call it was about is gone (the
/// thread was killed before we read it), try again.
pub fn recv(fd: BorrowedFd<'_>) -> io::Result<Option<Notif>> {
    // The kernel refuses a buffer that is not zeroed.
    let mut n = Notif::default();
    // SAFETY: RECV fills a `struct seccomp_notif`, which `Notif` is (repr(C), same
    // fields and size).
    let r = unsafe { ioctl(fd, Updater::<RECV, Notif>::new(&mut n)) };
    match r {
        Ok(()) => Ok(Some(n)),
        Err(rustix::io::Errno::NOENT) | Err(rustix::io::Errno::INTR) => Ok(None),
        Err(e) => Err(e.into()),
    }
}

fn send(fd: BorrowedFd<'_>, mut resp: Resp) -> io::Result<()> {
    // SAFETY: SEND reads (and the kernel may write back) a `struct
    // seccomp_notif_resp`, which `Resp` is.
    match unsafe { ioctl(fd, Updater::<SEND, Resp>::new(&mut resp)) } {
        // The caller died meanwhile (a kill of ours, or another signal): nothing to do.
        Ok(()) | Err(rustix::io::Errno::NOENT) => Ok(()),
        Err(e) => Err(e.into()),
    }
}

/// Lets the call run in the kernel as the process made it.
pub fn allow(fd: BorrowedFd<'_>, id: u64) -> io::Result<()> {
    send(
        fd,
        Resp {
            id,
            flags: FLAG_CONTINUE,
            ..Resp::default()
        },
    )
}

/// Returns `val` (success) to the caller without the call.
pub fn reply(fd: BorrowedFd<'_>, id: u64, val: i64) -> io::Result<()> {
    send(
        fd,
        Resp {
            id,
            val,
            ..Resp::default()
        },
    )
}

/// Fails the call with `errno`, without making it.
pub fn fail(fd: BorrowedFd<'_>, id: u64, errno: i32) -> io::Result<()> {
    send(
        fd,
        Resp {
            id,
            error: -errno,
            ..Resp::default()
        },
    )
}

/// Whether the notification is still pending (its thread alive, the call waiting):
/// checked after reading the caller's memory, so what was read belongs to this call.
pub fn valid(fd: BorrowedFd<'_>, id: u64) -> bool {
    // SAFETY: ID_VALID reads one u64.
    unsafe { ioctl(fd, Setter::<ID_VALID, u64>::new(id)) }.is_ok()
}

/// Installs `src` in the caller as its next free fd (close-on-exec when `cloexec`) and
/// makes the call return that number (Linux 5.14's `SECCOMP_ADDFD_FLAG_SEND`).
pub fn send_fd(fd: BorrowedFd<'_>, id: u64, src: impl AsFd, cloexec: bool) -> io::Result<i64> {
    use std::os::fd::AsRawFd;
    let add = AddFd {
        id,
        flags: ADDFD_FLAG_SEND,
        srcfd: src.as_fd().as_raw_fd() as u32,
        newfd: 0,
        newfd_flags: if cloexec { libc::O_CLOEXEC as u32 } else { 0 },
    };
    // SAFETY: ADDFD reads a `struct seccomp_notif_addfd`, which `AddFd` is; it returns
    // the new fd's number, which rustix's Setter discards, so the raw ioctl is used.
    let r = unsafe {
        libc::ioctl(
            fd.as_raw_fd(),
            ADDFD as _,
            &add as *const AddFd as *const libc::c_void,
        )
    };
    if r < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(i64::from(r))
    }
}
