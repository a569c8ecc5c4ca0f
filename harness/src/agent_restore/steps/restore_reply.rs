//! What a restore restored, skipped and resumed natively (`05_restore`), observed
//! in `session.list` before and after it and in the records its panes read back
//! (MUST: ADR-0068 §6, "Existing session names are still skipped"); the restore
//! command's reply, whose member names are the kit's, is judged under the pin
//! `asr-pin-restore-reply` (`crate::agent_restore::shapes`).

use super::restore::{archive_of, client_ok};
use crate::agent_restore::live::RECORD_KEY;
use crate::agent_restore::restored::{self, Listed};
use crate::agent_restore::shapes;
use crate::agent_restore::World;
use crate::verdict::OrHarness;
use cucumber::then;
use serde_json::{json, Value};

#[then(regex = r"^the restore succeeds with (\d+) restored, (\d+) skipped and (\d+) native$")]
async fn restore_counts(w: &mut World, c: &[String]) {
    w.run(c, None, |s, c| {
        let l = s.live();
        let v = client_ok(l);
        let (archive, before) = l.restoring.clone().or_harness("no restore ran");
        let a = archive_of(l, &archive);
        let after = restored::sessions(l);
        let (done, skipped) = restored::classify(&a, &before, &after);
        let native = restored::native_panes(l, &a, &before, &after, &done);
        let observed = [done.len(), skipped.len(), native.len()];
        let want = [1, 2, 3].map(|i| c[i].parse::<usize>().or_harness("a count"));
        crate::evidence::ensure(observed == want, None, || {
            (
                format!(
                    "{} restored, {} skipped and {} native, as session.list before and after the restore and the records of its panes show",
                    want[0], want[1], want[2]
                ),
                format!(
                    "restored {done:?}, skipped {skipped:?}, panes resumed natively {native:?} (the restore replied {v})"
                ),
            )
        });
        shapes::apply(shapes::judge_reply(&v, &shapes::reply_members(), observed));
    })
    .await;
}

/// The sessions named `name` that the race created, with panes.
fn made<'a>(before: &[Listed], after: &'a [Listed], name: &str) -> Vec<&'a Listed> {
    restored::new_since(before, after)
        .into_iter()
        .filter(|s| s.name == name && !s.panes.is_empty())
        .collect()
}

#[then(regex = r"^exactly one of them restored (?:\x22)(\w+)(?:\x22) and the other skipped it$")]
async fn one_restored(w: &mut World, c: &[String]) {
    w.run(c, None, |s, c| {
        let l = s.live();
        let mut replies = Vec::new();
        for (archive, reply) in &l.raced {
            let v = reply
                .result
                .as_ref()
                .unwrap_or_else(|e| panic!("the restore of {archive} failed: {e}"));
            replies.push((archive.clone(), v.clone()));
        }
        let (_, before) = l.restoring.clone().or_harness("no restore ran");
        let after = restored::sessions(l);
        let made = made(&before, &after, &c[1]);
        crate::evidence::ensure(made.len() == 1, None, || {
            (
                format!(
                    "exactly one session {:?} restored, as session.list shows",
                    &c[1]
                ),
                format!("new sessions of that name with panes: {made:?}"),
            )
        });
        // What each reply says, under the pin.
        let m = shapes::reply_members();
        let (Some(rm), Some(sm)) = (&m[0].0, &m[1].0) else {
            return;
        };
        let name = json!(c[1]);
        let lists = |v: &Value, k: &str| v[k].as_array().is_some_and(|a| a.contains(&name));
        let said: Vec<bool> = replies.iter().map(|(_, v)| lists(v, rm)).collect();
        let split = replies.iter().all(|(_, v)| lists(v, rm) != lists(v, sm));
        let mut findings = Vec::new();
        if !split || said.iter().filter(|r| **r).count() != 1 {
            findings.push(shapes::reply_finding(
                m[0].1 || m[1].1,
                format!("one reply listing {name} in {rm:?}, the other in {sm:?}"),
                format!("{replies:?}"),
            ));
        }
        shapes::apply(findings);
    })
    .await;
}

/// The record an archive of one native session holds.
fn archived_record(a: &Value) -> Value {
    a["sessions"][0]["windows"][0]["panes"][0]["agent_session"].clone()
}

#[then(regex = r#"^the pane of "(\w+)" has the record of the restore that won$"#)]
async fn winner_record(w: &mut World, c: &[String]) {
    w.run(c, None, |s, c| {
        let l = s.live();
        let listed = restored::sessions(l);
        let named: Vec<&Listed> = listed.iter().filter(|s| s.name == c[1]).collect();
        crate::evidence::ensure(named.len() == 1 && named[0].panes.len() == 1, None, || {
            (
                format!("one session {:?} with one pane", &c[1]),
                format!("{named:?}"),
            )
        });
        let pane = named[0].panes[0].clone();
        let panes: usize = l.ok("pane.list", json!({}))["panes"]
            .as_array()
            .map_or(0, Vec::len);
        assert_eq!(panes, 1, "the loser must create nothing");
        let got = l
            .meta(&pane, RECORD_KEY)
            .and_then(|t| serde_json::from_str::<Value>(&t).ok())
            .unwrap_or_else(|| panic!("the winner's pane has no record"));
        let archives: Vec<(String, Value)> = l
            .raced
            .iter()
            .map(|(a, _)| (a.clone(), archived_record(&archive_of(l, a))))
            .collect();
        let winner = archives.iter().find(|(_, r)| *r == got);
        crate::evidence::ensure(winner.is_some(), None, || {
            (
                format!("the record of one of the racing archives {archives:?}"),
                format!("{got}"),
            )
        });
        // The winner is the restore that started the pane's program: its native id.
        let started = l.dump("stub")["env"]["PHUX_STUB_SESSION_ID"].clone();
        crate::evidence::ensure(started == got["native_id"], None, || {
            (
                "the record of the restore whose program runs there".into(),
                format!("the record {got}, the program started for native id {started}"),
            )
        });
        // Which reply listed the native pane, under the pin.
        let m = shapes::reply_members();
        let Some(nm) = &m[2].0 else { return };
        let winner = winner.map(|(a, _)| a.clone()).unwrap_or_default();
        let lister = l.raced.iter().find(|(_, r)| {
            r.result
                .as_ref()
                .is_ok_and(|v| v[nm].as_array().is_some_and(|n| !n.is_empty()))
        });
        if lister.map(|(a, _)| a) != Some(&winner) {
            shapes::apply(vec![shapes::reply_finding(
                m[2].1,
                format!("the restore of {winner} listing the native pane in {nm:?}"),
                format!("{:?}", l.raced),
            )]);
        }
    })
    .await;
}
