//! Steps: Processes around the implementation: panes, unrelated processes, PID reuse.

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
