//! Steps: Processes around the implementation: the daemon's own lifetime, children
//! and memory, panes, unrelated processes, PID reuse.

use super::prelude::*;

#[given(regex = r"^an unrelated process is running$")]
async fn unrelated_process_running(w: &mut World) {
    w.run(&[], None, |w, _| {
        let child = process::spawn_unrelated().or_harness("spawn sleep");
        w.vars
            .insert("unrelated_pid".into(), child.id().to_string());
        w.unrelated = Some(child);
    })
    .await;
}

#[when(regex = r"^the pane's process is killed and an unrelated process takes its PID$")]
async fn pane_process_killed_unrelated_process_takes_its(w: &mut World) {
    w.run(&[], None, |w, _| {
        let pid: i32 = w.vars["pid"].parse().or_harness("no pane pid");
        let reused =
            process::kill_and_free(pid, scaled(5_000)).and_then(|()| process::spawn_with_pid(pid));
        let child = match reused {
            Ok(child) => child,
            Err(why) => {
                // Still meaningful (nothing may touch an unrelated process), but say
                // that the PID itself could not be reused here.
                w.transcript.extend_from_slice(
                    format!("harness-note: PID reuse unavailable ({why:?}); using a stand-in\n")
                        .as_bytes(),
                );
                process::spawn_unrelated().or_harness("spawn sleep")
            }
        };
        w.vars
            .insert("unrelated_pid".into(), child.id().to_string());
        w.unrelated = Some(child);
    })
    .await;
}

#[then(regex = r"^the daemon exited (successfully|with a failure status) within (\d+) ms$")]
async fn daemon_exited_within_ms(w: &mut World, c: &[String]) {
    w.run(c, None, |w, c| {
        let (status, took) = w.stopped.or_harness("the daemon was not stopped");
        let limit = Duration::from_millis(c[2].parse().or_harness("a number in the step"));
        match &c[1] {
            "successfully" => assert!(status.success(), "exit status {status}"),
            _ => assert!(!status.success(), "exit status {status}"),
        }
        assert!(took <= limit, "shutdown took {took:?}, more than {limit:?}");
    })
    .await;
}

#[then(regex = r"^the second daemon exits with a failure status$")]
async fn second_daemon_exits_with_failure_status(w: &mut World) {
    w.run(&[], None, |w, _| {
        let (status, _) = w.second.or_harness("no second daemon");
        let status = status.expect("the second daemon kept running on a locked socket");
        assert!(!status.success(), "second daemon exit status {status}");
    })
    .await;
}

#[then(regex = r"^the first daemon is still serving$")]
async fn first_daemon_still_serving(w: &mut World) {
    w.run(&[], None, |w, _| {
        assert!(w.daemon_alive(), "the first daemon died");
        let token = w.owner_token();
        let r = w.wire(Some(&token), "session.list", Map::new());
        assert!(r.result.is_ok(), "session.list failed: {:?}", r.result);
    })
    .await;
}

#[then(regex = r"^no daemon is listening on the socket$")]
async fn no_daemon_listening_on_socket(w: &mut World) {
    w.run(&[], None, |w, _| {
        // Nothing may answer now or appear shortly after; a daemon on its way out
        // gets a moment to close its socket.
        let start = std::time::Instant::now();
        while std::os::unix::net::UnixStream::connect(&w.ph.socket).is_ok() {
            assert!(
                start.elapsed() < scaled(2_000),
                "something answers on the socket"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
        std::thread::sleep(scaled(300));
        assert!(
            std::os::unix::net::UnixStream::connect(&w.ph.socket).is_err(),
            "something answers on the socket"
        );
    })
    .await;
}

#[then(regex = r"^the unrelated process is still alive$")]
async fn unrelated_process_still_alive(w: &mut World) {
    w.run(&[], None, |w, _| {
        let child = w.unrelated.as_mut().or_harness("no unrelated process");
        assert!(
            matches!(child.try_wait(), Ok(None)),
            "the unrelated process was killed"
        );
    })
    .await;
}

#[then(regex = r"^the process (\$\w+|\d+) is gone$")]
async fn process_gone(w: &mut World, c: &[String]) {
    w.run(c, None, |_, c| {
        let pid: i32 = c[1].parse().or_harness("a number in the step");
        let limit = scaled(3_000);
        let start = std::time::Instant::now();
        while process::alive(pid) {
            assert!(
                start.elapsed() < limit,
                "process {pid} survived the shutdown"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    })
    .await;
}

#[then(regex = r"^the process (\$\w+|\d+) is still alive$")]
async fn process_still_alive(w: &mut World, c: &[String]) {
    w.run(c, None, |_, c| {
        let pid: i32 = c[1].parse().or_harness("a number in the step");
        assert!(process::alive(pid), "process {pid} was killed");
    })
    .await;
}

#[then(regex = r"^the daemon has exactly (\d+) child process(?:es)?$")]
async fn daemon_has_exactly_child_process(w: &mut World, c: &[String]) {
    w.run(c, None, |w, c| {
        let (new, roots) = w.new_descendants();
        assert_eq!(
            roots.len().to_string(),
            &c[1],
            "processes the daemon started since it was ready: {roots:?} (with their own: {:?})",
            new.iter().map(|p| p.pid).collect::<Vec<_>>()
        );
    })
    .await;
}

#[given(regex = r"^the daemon's peak memory is remembered as \$(\w+)$")]
async fn daemon_peak_memory_remembered_as(w: &mut World, c: &[String]) {
    w.run(c, None, |w, c| {
        let kib = process::peak_kib(w.daemon.as_ref().or_harness("no daemon is running").id());
        w.vars.insert(c[1].to_string(), kib.to_string());
    })
    .await;
}

#[then(regex = r"^the daemon's peak memory grew by less than (\d+) MiB since (\$\w+|\d+) KiB$")]
async fn daemon_peak_memory_grew_by_less_than(w: &mut World, c: &[String]) {
    w.run(c, None, |w, c| {
        let before: u64 = c[2].parse().or_harness("a number in the step");
        let limit: u64 = c[1].parse::<u64>().or_harness("a number in the step") * 1024;
        let now = process::peak_kib(w.daemon.as_ref().or_harness("no daemon is running").id());
        assert!(
            now.saturating_sub(before) < limit,
            "peak memory grew from {before} KiB to {now} KiB"
        );
    })
    .await;
}

#[then(regex = r"^the daemon has no child processes$")]
async fn daemon_has_no_child_processes(w: &mut World) {
    w.run(&[], None, |w, _| {
        let (new, _) = w.new_descendants();
        let pids: Vec<i32> = new.iter().map(|p| p.pid).collect();
        assert!(
            pids.is_empty(),
            "the daemon started processes after it was ready: {pids:?}"
        );
    })
    .await;
}
