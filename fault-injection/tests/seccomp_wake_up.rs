//! The seccomp supervisor asks the kernel to hand each watched call and its answer
//! over on one CPU (`SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP`, Linux 6.6): without it a
//! watched call cost 8× more on a 2-vCPU VM (docs/fault-injection.md, "Costs"). The
//! flag is passed by value, not through a pointer; a request the kernel refused would
//! only be slow, so this test is what notices.

use std::process::Command;

use vxfault::seccomp::{spawn, Setup};

/// The running kernel's (major, minor).
fn kernel() -> (u32, u32) {
    let release = std::fs::read_to_string("/proc/sys/kernel/osrelease").expect("osrelease");
    let mut parts = release
        .split(|c: char| !c.is_ascii_digit())
        .map(|p| p.parse::<u32>().unwrap_or(0));
    (parts.next().unwrap_or(0), parts.next().unwrap_or(0))
}

#[test]
fn on_linux_6_6_or_later_the_kernel_grants_synchronous_wake_ups() {
    let mut cmd = Command::new("/bin/sh");
    cmd.args(["-c", "echo watched > /dev/null"]);
    let setup = Setup {
        plan: "write#1000000000=EIO",
        ops: &[vxfault::Op::Write],
        seed: 0,
        trace: None,
        data: None,
        counters: None,
    };
    let (mut child, attached) = spawn(&mut cmd, &setup).expect("spawn under the filter");
    assert!(child.wait().expect("wait").success());
    let stats = attached.finish().expect("the supervisor's counts");
    let k = kernel();
    assert_eq!(
        stats.sync_wake_up,
        k >= (6, 6),
        "kernel {}.{}: synchronous wake-ups granted = {}",
        k.0,
        k.1,
        stats.sync_wake_up
    );
}
