//! Steps: Processes around the implementation: panes, unrelated processes, PID reuse.

use super::*;

pub(super) fn dispatch(w: &mut Inner, t: &str) -> bool {
    if step!(t, r"^an unrelated process is running$").is_some() {
        let child = super::super::pids::spawn_unrelated().expect("harness-error: spawn sleep");
        w.vars
            .insert("unrelated_pid".into(), child.id().to_string());
        w.unrelated = Some(child);
        return true;
    }

    if step!(
        t,
        r"^the pane's process is killed and an unrelated process takes its PID$"
    )
    .is_some()
    {
        let pid: i32 = w.vars["pid"].parse().expect("harness-error: no pane pid");
        let reused = super::super::pids::kill_and_free(pid, scaled(5_000))
            .and_then(|()| super::super::pids::spawn_with_pid(pid));
        let child = match reused {
            Ok(child) => child,
            Err(why) => {
                // Still meaningful (nothing may touch an unrelated process), but say
                // that the PID itself could not be reused here.
                w.transcript.extend_from_slice(
                    format!("harness-note: PID reuse unavailable ({why:?}); using a stand-in\n")
                        .as_bytes(),
                );
                super::super::pids::spawn_unrelated().expect("harness-error: spawn sleep")
            }
        };
        w.vars
            .insert("unrelated_pid".into(), child.id().to_string());
        w.unrelated = Some(child);
        return true;
    }
    false
}
