//! Steps for exact values where the RFC gives them (fresh z = n+1…n+k, `cut_rows`,
//! an old cursor's replay without a gap) and for the §6 errors reached through the
//! CLI with a scoped token (`features/recovery/24_exact_values.feature`).

use super::prelude::*;
use crate::recovery::fixtures::timestamp;
use crate::recovery::restored::Restored;
use crate::recovery::scenario::Scenario;
use crate::recovery::streams::WAIT_MS;
use sha2::{Digest, Sha256};
use std::io::{BufRead, BufReader, Write};
use std::os::unix::net::UnixStream;

/// Columns of the format-1 fixture's pane p0: its planted wide row is longer.
const FIXTURE_COLS: usize = 80;

/// The owner's call through the wire; its ok result (an error fails the step).
fn owner_ok(w: &mut Scenario, verb: &str, params: Value) -> Value {
    let Value::Object(p) = params else {
        crate::harness_error!("params are not an object")
    };
    let token = w.owner_token();
    match w.wire(Some(&token), verb, p).result {
        Ok(v) => v,
        Err(e) => panic!("{verb} failed: {e}"),
    }
}

/// A valid format-1 envelope of the fixture payload with p0's text plain: 24 screen
/// rows whose first is `FIXTURE_COLS + 40` cells wide, and one history row.
fn wide_row_checkpoint(w: &Scenario, generation: u64) -> (String, Vec<u8>) {
    let f = w.fixture(1, generation, -60);
    let mut screen = vec![String::new(); 24];
    screen[0] = "W".repeat(FIXTURE_COLS + 40);
    let text = json!({
        "availability": "plain",
        "saved_at": timestamp(-60),
        "expires_at": timestamp(3600),
        "screen": screen,
        "history": ["PLANTED-HISTORY-ROW"],
    });
    let omitted = "\"text\":{\"availability\":\"omitted\"}";
    let base = f.payload();
    let payload = base.replacen(omitted, &format!("\"text\":{text}"), 1);
    if payload == base {
        crate::harness_error!("the format-1 fixture has no omitted text to replace");
    }
    let sum: String = Sha256::digest(payload.as_bytes())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    let envelope = json!({"format": 1, "payload": payload, "sha256": sum});
    let bytes = format!("{envelope}\n").into_bytes();
    // The file must be valid for the kit's own strict reader, or the scenario says
    // nothing about the implementation.
    let name = format!("{}.json", f.checkpoint);
    let ctx = vx_format::ReadContext {
        file_name: Some(&name),
        socket: Some(&f.socket),
        uid: Some(u64::from(f.uid)),
        max_bytes: vx_format::limits::DEFAULT_MAX_CHECKPOINT_BYTES,
    };
    if let Err(e) = vx_format::read(&bytes, &ctx) {
        crate::harness_error!("the wide-row fixture is invalid: {}", e.reason());
    }
    (f.checkpoint, bytes)
}

#[given(
    regex = r#"^checkpoint "(\w+)" of format 1 with generation (\d+) is planted in the store with a text row wider than its pane$"#
)]
async fn planted_with_wide_text_row(w: &mut World, c: &[String]) {
    w.run(c, None, |w, c| {
        let generation: u64 = c[2].parse().or_harness("a number in the step");
        let (checkpoint, bytes) = wide_row_checkpoint(w, generation);
        let store = w.ph.store.clone();
        w.plant_bytes(&store, &c[1], &checkpoint, bytes);
    })
    .await;
}

#[then(regex = r#"^the result maps pane "(\w+)" to \$(\w+)$"#)]
async fn result_maps_pane_to(w: &mut World, c: &[String]) {
    w.run(c, None, |w, c| {
        let current = Restored::from_result(&ok_value(w)).current_of(&c[1]);
        w.vars.insert(c[2].to_string(), current);
    })
    .await;
}

/// `N` or `N plus K` of a step, after `$name` substitution.
fn sum_of(base: &str, plus: Option<&str>) -> i64 {
    let n: i64 = base.parse().or_harness("a number in the step");
    let k: i64 = plus.map_or(0, |p| p.parse().or_harness("a number in the step"));
    n + k
}

#[then(regex = r#"^the result "([^"]*)" is (-?\d+|\$\w+) plus (\d+)$"#)]
async fn result_is_sum(w: &mut World, c: &[String]) {
    w.run(c, None, |w, c| {
        let got = ok_value(w);
        let want = sum_of(&c[2], c.get(3).map(|m| m.as_str()));
        assert_eq!(
            at(&got, &c[1]).and_then(Value::as_i64),
            Some(want),
            "result {:?} in {got}",
            &c[1]
        );
    })
    .await;
}

#[then(
    regex = r#"^the result's pane "([^"]+)" has "([^"]+)" equal to (-?\d+|\$\w+)(?: plus (\d+))?$"#
)]
async fn result_pane_field_equals(w: &mut World, c: &[String]) {
    w.run(c, None, |w, c| {
        let got = ok_value(w);
        let want = sum_of(&c[3], c.get(4).map(|m| m.as_str()));
        let pane = got["panes"]
            .as_array()
            .and_then(|ps| ps.iter().find(|p| p["pane"] == c[1]))
            .unwrap_or_else(|| panic!("no pane {} in {got}", &c[1]));
        assert_eq!(
            at(pane, &c[2]).and_then(Value::as_i64),
            Some(want),
            "{:?} of pane {}: {pane}",
            &c[2],
            &c[1]
        );
    })
    .await;
}

#[when(regex = r#"^the pane "([^"]+)" has exited$"#)]
async fn pane_has_exited(w: &mut World, c: &[String]) {
    w.run(c, None, |w, c| {
        let pane = c[1].to_string();
        crate::drivers::poll(&format!("pane {pane} to exit"), scaled(WAIT_MS), || {
            let list = owner_ok(w, "pane.list", json!({}));
            let listed = list["panes"]
                .as_array()
                .and_then(|ps| ps.iter().find(|p| p["pane"] == pane.as_str()).cloned())
                .unwrap_or_else(|| panic!("pane {pane} is not listed: {list}"));
            (listed["state"] == "exited").then_some(())
        });
    })
    .await;
}

/// The words after the colon, split at spaces, so they may hold JSON with quotes.
#[when(regex = r#"^(the owner|a client with token "([^"]*)") runs the CLI: (.+)$"#)]
async fn client_runs_cli_words(w: &mut World, c: &[String]) {
    w.run(c, None, |w, c| {
        let token = if &c[1] == "the owner" {
            "@owner"
        } else {
            &c[2]
        };
        let words: Vec<String> = c[3].split_whitespace().map(String::from).collect();
        let r = w.cli(Some(token), &words);
        w.last = Some(r);
        w.last_request = Some(crate::recovery::twins::Request::Cli {
            token: Some(token.to_string()),
            words,
        });
    })
    .await;
}

/// `count` renames of one session on one connection, written by a thread while this
/// one reads the replies (both directions stay drained): `count` events at least.
fn rename_many(w: &mut Scenario, count: usize) {
    let session = owner_ok(w, "session.create", json!({"name": "busy"}))["session"]
        .as_str()
        .expect("session id")
        .to_string();
    let token = w.owner_token();
    let stream = UnixStream::connect(&w.ph.socket)
        .unwrap_or_else(|e| panic!("cannot connect to the implementation's socket: {e}"));
    stream.set_read_timeout(Some(scaled(WAIT_MS))).ok();
    let mut out = stream.try_clone().or_harness("clone stream");
    let writer = std::thread::spawn(move || {
        let login = json!({"id": 0, "verb": "auth.login", "params": {"token": token}});
        let mut text = format!("{login}\n");
        for i in 1..=count {
            let params = json!({"session": session, "name": format!("r{i}")});
            let req = json!({"id": i, "verb": "session.rename", "params": params});
            text.push_str(&format!("{req}\n"));
        }
        out.write_all(text.as_bytes())
    });
    let mut reader = BufReader::new(stream);
    let mut line = String::new();
    for n in 0..=count {
        line.clear();
        match reader.read_line(&mut line) {
            Ok(0) => panic!("the implementation closed the connection after {n} replies"),
            Ok(_) => {}
            Err(e) => crate::timed_out!("reply {n} of {count} renames: {e}"),
        }
        let v: Value = serde_json::from_str(&line)
            .unwrap_or_else(|_| panic!("reply is not a JSON line: {line:?}"));
        assert!(v.get("ok").is_some(), "rename {n} of {count} failed: {v}");
    }
    writer
        .join()
        .unwrap_or_else(|p| std::panic::resume_unwind(p))
        .or_harness("writing the renames");
}

#[when(regex = r"^the owner renames a session (\d+) times on one connection$")]
async fn owner_renames_many(w: &mut World, c: &[String]) {
    w.run(c, None, |w, c| {
        let count: usize = c[1].parse().or_harness("a number in the step");
        rename_many(w, count);
    })
    .await;
}

#[then(
    regex = r#"^"(\w+)" either resumed with every event after (\{.*\}|\$\w+) or was given a snapshot with reason "(\w+)"$"#
)]
async fn resumed_without_gap_or_snapshot(w: &mut World, c: &[String]) {
    w.run(c, None, |w, c| {
        let ok = ok_value(w);
        let cursor: Value = serde_json::from_str(&c[2]).or_harness("cursor is not JSON");
        let after = cursor["sequence"]
            .as_u64()
            .or_harness("cursor without sequence");
        let head = ok["sequence"]
            .as_u64()
            .unwrap_or_else(|| panic!("events.subscribe: no integer sequence in {ok}"));
        if ok["resumed"] != true {
            assert_eq!(ok["reason"], c[3], "a fresh stream's reason: {ok}");
            assert!(
                ok["snapshot"].is_object(),
                "no snapshot with {}: {ok}",
                &c[3]
            );
            return;
        }
        // A resume must replay every event after the cursor: nothing silently lost.
        let sub = w.streams.sub(&c[1]);
        let seqs: Vec<u64> = sub.wait(
            &format!("the replay up to sequence {head}"),
            WAIT_MS,
            |r| {
                r.events
                    .iter()
                    .any(|e| e["sequence"].as_u64() >= Some(head))
            },
            |r| {
                r.events
                    .iter()
                    .filter_map(|e| e["sequence"].as_u64())
                    .collect()
            },
        );
        let replayed: Vec<u64> = seqs.into_iter().take_while(|s| *s <= head).collect();
        let want: Vec<u64> = (after + 1..=head).collect();
        assert!(
            replayed == want,
            "resumed after {after} but replayed {} events, first {:?}, of the {} up to {head}",
            replayed.len(),
            replayed.first(),
            want.len()
        );
    })
    .await;
}

#[then(regex = r#"^some doctor check reports "(\w+)" as (\d+) with status "(\w+)"$"#)]
async fn doctor_check_reports(w: &mut World, c: &[String]) {
    w.run(c, None, |w, c| {
        let got = ok_value(w);
        let want: u64 = c[2].parse().or_harness("a number in the step");
        let checks = got["checks"]
            .as_array()
            .unwrap_or_else(|| panic!("no checks array in {got}"));
        assert!(
            checks
                .iter()
                .any(|k| k[&c[1]].as_u64() == Some(want) && k["status"] == c[3]),
            "no doctor check has {} = {want} and status {}: {got}",
            &c[1],
            &c[3]
        );
    })
    .await;
}

#[cfg(test)]
mod tests {
    #[test]
    fn sums() {
        assert_eq!(super::sum_of("3", Some("2")), 5);
        assert_eq!(super::sum_of("-1", None), -1);
    }
}
