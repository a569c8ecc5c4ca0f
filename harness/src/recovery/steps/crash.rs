//! Steps: the crash-state explorer (`@crash-explore`): one recorded publication or
//! forget, every crash state the model allows judged on a restarted implementation.

use super::prelude::*;
use crate::recovery::crash::{self, Expect, Workload};
use std::path::PathBuf;

fn workload(name: &str) -> Workload {
    match name {
        "checkpoint" => Workload::Checkpoint,
        "forget" => Workload::Forget,
        "prune" => Workload::Prune,
        other => crate::harness_error!("unknown crash-explore workload {other}"),
    }
}

fn record(w: &mut crate::recovery::scenario::Scenario, name: &str, plan: &str) {
    let (dir, expect) = crash::record(w, workload(name), plan);
    w.vars
        .insert("crash_dir".into(), dir.to_string_lossy().into_owned());
    w.vars
        .insert("crash_generation".into(), expect.old_generation.to_string());
    w.vars.insert(
        "crash_new_generation".into(),
        expect.new_generation.to_string(),
    );
    w.vars.insert("crash_workload".into(), name.to_string());
    w.vars.insert(
        "crash_topology".into(),
        expect.topology.to_string_lossy().into_owned(),
    );
}

#[given(
    regex = r#"^the daemon's "(checkpoint|forget|prune)" is recorded over a store holding a valid generation$"#
)]
async fn daemon_call_recorded_over_valid_generation(w: &mut World, c: &[String]) {
    w.run(c, None, |w, c| record(w, &c[1], "")).await;
}

#[given(
    regex = r#"^the daemon's "(checkpoint|forget)" is recorded under the fault plan "([^"]+)"$"#
)]
async fn daemon_call_recorded_under_fault_plan(w: &mut World, c: &[String]) {
    w.run(c, None, |w, c| record(w, &c[1], &c[2])).await;
}

#[given(
    regex = r#"^the daemon's "checkpoint" is recorded with the store writing the final name in place$"#
)]
async fn recorded_writing_in_place(w: &mut World) {
    w.run(&[], None, |w, _| {
        // The reference store's deliberately wrong publisher (vx-store's negative
        // control): no temporary file, no rename.
        w.extra_env
            .push(("VXSTORE_NEGATIVE_CONTROL".into(), "write-in-place".into()));
        record(w, "checkpoint", "");
    })
    .await;
}

#[when(regex = r#"^every "(prefix|posix|ext4-ordered)" crash state of the recording is checked$"#)]
async fn every_crash_state_checked(w: &mut World, c: &[String]) {
    w.run(c, None, |w, c| {
        let name: &str = &c[1];
        let model: vxfault::crash::Model = name
            .parse()
            .unwrap_or_else(|()| crate::harness_error!("unknown model {name}"));
        let dir = PathBuf::from(w.vars.get("crash_dir").cloned().or_harness("no recording"));
        let expect = Expect {
            old_generation: w.vars["crash_generation"].parse().or_harness("generation"),
            new_generation: w.vars["crash_new_generation"]
                .parse()
                .or_harness("generation"),
            workload: workload(&w.vars["crash_workload"]),
            socket: w.ph.socket.clone(),
            topology: PathBuf::from(w.vars["crash_topology"].clone()),
        };
        let report = crash::explore(&dir, &expect, model).or_harness("explore");
        let lines = crash::summary(&report);
        assert!(report.states > 0, "the model allowed no state: {lines:?}");
        w.vars.insert("crash_report".into(), lines.join("\n"));
        w.vars
            .insert("crash_failing".into(), report.violations.len().to_string());
    })
    .await;
}

#[then(regex = r"^no crash state violates the recovery contract$")]
async fn no_crash_state_violates(w: &mut World) {
    w.run(&[], None, |w, _| {
        let report = w
            .vars
            .get("crash_report")
            .cloned()
            .or_harness("no exploration");
        assert_eq!(w.vars["crash_failing"], "0", "{report}");
    })
    .await;
}

#[then(regex = r#"^a crash state violates the recovery contract with "([^"]+)"$"#)]
async fn a_crash_state_violates_with(w: &mut World, c: &[String]) {
    w.run(c, None, |w, c| {
        let report = w
            .vars
            .get("crash_report")
            .cloned()
            .or_harness("no exploration");
        assert_ne!(w.vars["crash_failing"], "0", "{report}");
        let want: &str = &c[1];
        assert!(report.contains(want), "{report}");
    })
    .await;
}
