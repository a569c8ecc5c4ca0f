//! The filter: compiled by libseccomp in the runner (before the fork: the compiler
//! allocates), loaded in the child between fork and exec with
//! `SECCOMP_FILTER_FLAG_NEW_LISTENER`, whose notification fd goes back to the runner
//! over a socketpair (`SCM_RIGHTS`).

use std::collections::HashMap;
use std::io::{self, Read, Seek};
use std::mem::MaybeUninit;
use std::os::fd::{AsFd, OwnedFd};

use libseccomp::{ScmpAction, ScmpArgCompare, ScmpCompareOp, ScmpFilterContext, ScmpSyscall};
use rustix::net::{
    RecvAncillaryBuffer, RecvAncillaryMessage, RecvFlags, SendAncillaryBuffer,
    SendAncillaryMessage, SendFlags,
};

use crate::planlang::syscalls::{self, Syscall, AT_REMOVEDIR, FCNTL_LOCK_CMDS, SYSCALLS};
use crate::Op;

/// `execve`/`execveat` are always watched (then let through): an exec starts a new
/// image, whose per-process counts start from zero as under the preload.
pub const EXEC_CALLS: [&str; 2] = ["execve", "execveat"];

/// A compiled filter: the BPF program, and the system call numbers it reports.
pub struct Filter {
    /// `struct sock_filter` entries, as the kernel takes them.
    prog: Vec<libc::sock_filter>,
    /// Native number → the table entry (`None`: an exec call).
    pub calls: HashMap<i32, Option<&'static Syscall>>,
}

fn seccomp_err(what: &str, e: libseccomp::error::SeccompError) -> io::Error {
    io::Error::other(format!("libseccomp: {what}: {e}"))
}

impl Filter {
    /// Compiles a filter that notifies exactly the system calls of `ops` (and exec);
    /// every other call, and calls of other architectures (32-bit programs), run
    /// untouched.
    pub fn compile(ops: &[Op]) -> io::Result<Filter> {
        let mut ctx = ScmpFilterContext::new(ScmpAction::Allow)
            .map_err(|e| seccomp_err("create a filter", e))?;
        ctx.set_act_badarch(ScmpAction::Allow)
            .map_err(|e| seccomp_err("set the foreign-architecture action", e))?;
        // The runner sets no_new_privs itself only when it must (see `install`).
        ctx.set_ctl_nnp(false)
            .map_err(|e| seccomp_err("leave no_new_privs", e))?;
        let mut calls = HashMap::new();
        let notify = ScmpAction::Notify;
        for sys in SYSCALLS {
            let wanted: Vec<Op> = sys
                .ops
                .iter()
                .copied()
                .filter(|o| ops.contains(o))
                .collect();
            if wanted.is_empty() {
                continue;
            }
            let Some(nr) = native(sys.name) else { continue };
            let add = |ctx: &mut ScmpFilterContext, conds: &[ScmpArgCompare]| {
                if conds.is_empty() {
                    ctx.add_rule(notify, nr)
                } else {
                    ctx.add_rule_conditional(notify, nr, conds)
                }
                .map(|_| ())
                .map_err(|e| seccomp_err(sys.name, e))
            };
            match sys.args {
                syscalls::Args::FcntlLock => {
                    for cmd in FCNTL_LOCK_CMDS {
                        let c = ScmpArgCompare::new(1, ScmpCompareOp::Equal, cmd as u64);
                        add(&mut ctx, &[c])?;
                    }
                }
                syscalls::Args::Unlinkat if wanted.len() == 1 => {
                    let datum = if wanted[0] == Op::Rmdir {
                        AT_REMOVEDIR as u64
                    } else {
                        0
                    };
                    let mask = ScmpCompareOp::MaskedEqual(AT_REMOVEDIR as u64);
                    add(&mut ctx, &[ScmpArgCompare::new(2, mask, datum)])?;
                }
                _ => {
                    add(&mut ctx, &[])?;
                }
            }
            calls.insert(nr.as_raw_syscall(), Some(sys));
        }
        for name in EXEC_CALLS {
            if let Some(nr) = native(name) {
                ctx.add_rule(notify, nr).map_err(|e| seccomp_err(name, e))?;
                calls.insert(nr.as_raw_syscall(), None);
            }
        }
        // libseccomp 2.5 (Debian 12) exports to an fd only (export_bpf_mem is 2.6).
        let mut file = tempfile::tempfile()?;
        ctx.export_bpf(file.as_fd())
            .map_err(|e| seccomp_err("export the program", e))?;
        file.rewind()?;
        let mut bytes = Vec::new();
        file.read_to_end(&mut bytes)?;
        let size = std::mem::size_of::<libc::sock_filter>();
        let prog = bytes
            .chunks_exact(size)
            .map(|c| libc::sock_filter {
                code: u16::from_ne_bytes([c[0], c[1]]),
                jt: c[2],
                jf: c[3],
                k: u32::from_ne_bytes([c[4], c[5], c[6], c[7]]),
            })
            .collect();
        Ok(Filter { prog, calls })
    }

    /// Loads the filter into the calling process and sends its notification fd over
    /// `sock`. Called between fork and exec: only system calls, no allocation.
    pub fn install(&self, sock: &OwnedFd) -> io::Result<()> {
        let prog = libc::sock_fprog {
            len: self.prog.len() as u16,
            filter: self.prog.as_ptr() as *mut libc::sock_filter,
        };
        let load = || {
            // SAFETY: seccomp(SET_MODE_FILTER) reads the `sock_fprog` above, whose
            // `filter` points to `len` live entries.
            unsafe {
                libc::syscall(
                    libc::SYS_seccomp,
                    libc::SECCOMP_SET_MODE_FILTER,
                    libc::SECCOMP_FILTER_FLAG_NEW_LISTENER,
                    &prog as *const libc::sock_fprog,
                )
            }
        };
        let mut fd = load();
        if fd < 0 && io::Error::last_os_error().raw_os_error() == Some(libc::EACCES) {
            // Without CAP_SYS_ADMIN a filter needs no_new_privs (setuid programs then
            // run without their privileges).
            // SAFETY: prctl(PR_SET_NO_NEW_PRIVS, 1) takes no pointers.
            if unsafe { libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) } != 0 {
                return Err(io::Error::last_os_error());
            }
            fd = load();
        }
        if fd < 0 {
            return Err(io::Error::last_os_error());
        }
        // The listener is close-on-exec: the exec drops the child's copy.
        // SAFETY: the kernel just returned this fd to us and nothing else owns it.
        let listener = unsafe { <OwnedFd as std::os::fd::FromRawFd>::from_raw_fd(fd as i32) };
        let mut space = [MaybeUninit::<u8>::uninit(); rustix::cmsg_space!(ScmRights(1))];
        let mut anc = SendAncillaryBuffer::new(&mut space);
        let fds = [listener.as_fd()];
        anc.push(SendAncillaryMessage::ScmRights(&fds));
        rustix::net::sendmsg(
            sock,
            &[io::IoSlice::new(b"L")],
            &mut anc,
            SendFlags::empty(),
        )?;
        // Dropping `listener` would close it: a call of the close family, which the
        // filter now reports. Leaving it to the exec's close-on-exec is silent.
        std::mem::forget(listener);
        Ok(())
    }
}

/// The native number of a system call, if this architecture has it.
fn native(name: &str) -> Option<ScmpSyscall> {
    ScmpSyscall::from_name(name)
        .ok()
        .filter(|n| n.as_raw_syscall() >= 0)
}

/// Receives the notification fd the child sent over `sock`.
pub fn receive(sock: &OwnedFd) -> io::Result<OwnedFd> {
    let mut space = [MaybeUninit::<u8>::uninit(); rustix::cmsg_space!(ScmRights(1))];
    let mut anc = RecvAncillaryBuffer::new(&mut space);
    let mut byte = [0u8; 1];
    let r = rustix::net::recvmsg(
        sock,
        &mut [io::IoSliceMut::new(&mut byte)],
        &mut anc,
        RecvFlags::CMSG_CLOEXEC,
    )?;
    if r.bytes == 0 {
        return Err(io::Error::new(
            io::ErrorKind::UnexpectedEof,
            "the child exited before handing over its seccomp listener",
        ));
    }
    for msg in anc.drain() {
        if let RecvAncillaryMessage::ScmRights(mut fds) = msg {
            if let Some(fd) = fds.next() {
                return Ok(fd);
            }
        }
    }
    Err(io::Error::other(
        "no seccomp listener in the child's message",
    ))
}
