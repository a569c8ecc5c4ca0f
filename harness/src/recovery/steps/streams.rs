//! Steps about streams: event subscriptions (`events.subscribe`) and attach viewers
//! (`pane.attach`) that stay open across steps, for the "Resume" and "Events/clients"
//! rows. A subscription's or an attach's reply becomes the scenario's last reply, so
//! the ordinary result and error steps read it.

use super::prelude::*;
use crate::drivers::attach::{self, kinds};
use crate::drivers::events::{self, types};
use crate::recovery::restore_events::{
    check_restore_events, judge_race, mentions, race, use_up_pane_ids,
};
use crate::recovery::restored::Restored;
use crate::recovery::scenario::Scenario;
use crate::recovery::streams::WAIT_MS;

/// The token a step's subject calls with: the owner's, or the one the step names.
fn token_of(w: &Scenario, who: &str, token: Option<&str>) -> Option<String> {
    match who {
        "the owner" => Some(w.owner_token()),
        _ => token.map(String::from),
    }
}

// ---- subscriptions
#[when(
    regex = r#"^(the owner|a client with token "([^"]*)") subscribes to events as "(\w+)"(?: from the cursor (\{.*\}|\$\w+))?$"#
)]
async fn owner_client_with_token_subscribes_events_as(w: &mut World, c: &[String]) {
    w.run(c, None, |w, c| {
        let token = token_of(w, &c[1], c.get(2).map(|m| m.as_str()));
        let cursor = c.get(4).map(|m| {
            serde_json::from_str::<Value>(m.as_str())
                .unwrap_or_else(|_| crate::harness_error!("cursor is not JSON: {}", m.as_str()))
        });
        let (reply, bytes, s) = events::subscribe(&w.ph.socket, token.as_deref(), cursor);
        w.transcript.extend_from_slice(&bytes);
        if let Some(s) = w.streams.keep(&c[3], &reply, s) {
            w.vars.insert(format!("{}_source", &c[3]), s.source.clone());
            w.streams.subs.insert(c[3].to_string(), s);
        }
        w.last = Some(reply);
    })
    .await;
}

#[then(regex = r#"^the cursor of "(\w+)" is saved as \$(\w+)$"#)]
async fn cursor_saved_as(w: &mut World, c: &[String]) {
    w.run(c, None, |w, c| {
        let s = w.streams.sub(&c[1]);
        let cursor = match s.events().last() {
            Some(e) => json!({"source": e["source"], "sequence": e["sequence"]}),
            None => json!({"source": s.source, "sequence": s.head}),
        };
        w.vars.insert(c[2].to_string(), cursor.to_string());
    })
    .await;
}

#[then(regex = r#"^"(\w+)" receives a "([a-z_.]+)" event$"#)]
async fn receives_event(w: &mut World, c: &[String]) {
    w.run(c, None, |w, c| {
        let want = c[2].to_string();
        let got = w.streams.sub(&c[1]).wait(
            &format!("a {want} event"),
            WAIT_MS,
            |r| r.events.iter().any(|e| e["type"] == want.as_str()),
            |r| r.events.iter().any(|e| e["type"] == want.as_str()),
        );
        assert!(got, "the event stream ended without a {want} event");
    })
    .await;
}

#[then(
    regex = r#"^the events of "(\w+)"(?: after its "([a-z_.]+)" event)? are, in order: ([a-z_., ]+)$"#
)]
async fn events_after_its_event_order(w: &mut World, c: &[String]) {
    w.run(c, None, |w, c| {
        let after = c.get(2).map(|m| m.as_str().to_string());
        let want: Vec<String> = c[3].split(',').map(|s| s.trim().to_string()).collect();
        let tail = |evs: &[Value]| -> Vec<String> {
            let all = types(evs);
            match &after {
                None => all,
                Some(a) => match all.iter().position(|x| x == a) {
                    Some(i) => all[i + 1..].to_vec(),
                    None => Vec::new(),
                },
            }
        };
        let got = w.streams.sub(&c[1]).wait(
            &format!("{} events", want.len()),
            WAIT_MS,
            |r| tail(&r.events).len() >= want.len(),
            |r| tail(&r.events),
        );
        let same = got.len() == want.len()
            && want
                .iter()
                .zip(&got)
                .all(|(w, g)| w == g || unspelled(w, g));
        assert!(
            same,
            "event types received by {}: {got:?}, where the row expects {want:?}",
            &c[1]
        );
        for (want, got) in want.iter().zip(&got).filter(|(w, g)| w != g) {
            crate::evidence::pin(
                "rfc-pin-event-names",
                format!("the event the seed describes is named {want}"),
                format!("it is named {got}"),
            );
        }
    })
    .await;
}

/// Event types the seed describes without spelling them (another RFC's names): the
/// kit's name and the family an implementation's own name for it belongs to.
const UNSPELLED_EVENTS: [(&str, &str); 1] = [
    // "the normal principal issuance event" (RFC-0005's name).
    ("principal.issued", "principal."),
];

fn unspelled(want: &str, got: &str) -> bool {
    UNSPELLED_EVENTS
        .iter()
        .any(|(kit, family)| want == *kit && got.starts_with(family))
}

#[then(regex = r#"^"(\w+)" receives the restore's events in the RFC's order$"#)]
async fn receives_restore_events_rfc_order(w: &mut World, c: &[String]) {
    w.run(c, None, |w, c| {
        let reply = w.last().result.clone();
        let v = reply.unwrap_or_else(|e| panic!("the restore failed: {e}"));
        let r = Restored::from_result(&v);
        let s = w.streams.sub(&c[1]);
        let evs = s.wait(
            "recovery.restored",
            WAIT_MS,
            |r| r.events.iter().any(|e| e["type"] == "recovery.restored"),
            |r| r.events.clone(),
        );
        check_restore_events(&evs, &r, s);
        w.streams.restore = Some(r);
    })
    .await;
}

#[then(
    regex = r#"^in "(\w+)", the floats restored from "(\w+)" then "(\w+)" carry the restored window, a geometry and fresh z in that order$"#
)]
async fn floats_restored_from_then_carry_restored_window(w: &mut World, c: &[String]) {
    w.run(c, None, |w, c| {
        // RFC §8: a restored float's pane.created carries layer float, its window,
        // its resolved geometry and its new z; z keeps the saved order.
        let r = w.streams.restored();
        let evs = w.streams.sub(&c[1]).events();
        let window = r
            .windows
            .first()
            .map(|(_, cur)| cur.clone())
            .or_harness("the restore mapped no window");
        let z_of = |previous: &str| -> Option<u64> {
            let pane = r.current_of(previous);
            let e = evs
                .iter()
                .find(|e| e["type"] == "pane.created" && e["data"]["pane"] == pane.as_str())
                .unwrap_or_else(|| panic!("no pane.created for {pane}"));
            assert_eq!(e["data"]["layer"], "float", "layer in {e}");
            assert_eq!(e["data"]["window"], window.as_str(), "window in {e}");
            float_fields(&e["data"])
        };
        // Where the z sits is RFC-0016's: an event whose z the kit cannot find is the
        // pin's (noted by float_fields), and its order cannot be judged.
        if let (Some(lower), Some(upper)) = (z_of(&c[2]), z_of(&c[3])) {
            assert!(
                lower >= 1 && lower < upper,
                "saved z order not kept: the lower float got z {lower}, the upper {upper}"
            );
        }
    })
    .await;
}

/// A float's geometry and z in its `pane.created` data: the kit's reading of
/// RFC-0016 §8.3 puts them under `float` (`float.geometry`, `float.z`); at the
/// data's top level, or not found, is pin `rfc-pin-float-event-shape`.
fn float_fields(data: &Value) -> Option<u64> {
    let geometry = data["float"]["geometry"].is_object();
    let z = data["float"]["z"].as_u64();
    if geometry && z.is_some() {
        return z;
    }
    let keys: Vec<&String> = data
        .as_object()
        .map(|o| o.keys().collect())
        .unwrap_or_default();
    crate::evidence::pin(
        "rfc-pin-float-event-shape",
        "a restored float's pane.created data has float.geometry (an object) and float.z",
        format!("its data's members are {keys:?}"),
    );
    z.or_else(|| data["z"].as_u64())
}

#[then(
    regex = r#"^in "(\w+)", the pane restored from "(\w+)" (exited with code (\d+)|exited with no code|was created with layer "(\w+)")$"#
)]
async fn restored_pane_exited_or_was_created_as(w: &mut World, c: &[String]) {
    w.run(c, None, |w, c| {
        let r = w.streams.restored();
        let pane = r.current_of(&c[2]);
        let evs = w.streams.sub(&c[1]).events();
        let kind = if c.get(5).is_some() {
            "pane.created"
        } else {
            "pane.exited"
        };
        let e = evs
            .iter()
            .find(|e| e["type"] == kind && e["data"]["pane"] == pane.as_str())
            .unwrap_or_else(|| panic!("no {kind} event for {pane} in {evs:?}"));
        match (c.get(4), c.get(5)) {
            (Some(code), _) => assert_eq!(
                e["data"]["exit_code"].to_string(),
                code.as_str(),
                "exit code in {e}"
            ),
            (None, Some(layer)) => {
                assert_eq!(e["data"]["layer"], layer.as_str(), "layer in {e}")
            }
            (None, None) => {
                let data = e["data"].as_object().expect("event data object");
                assert!(
                    !data.contains_key("exit_code") && !data.contains_key("signal"),
                    "an interrupted archive's pane.exited carries a status: {e}"
                );
            }
        }
    })
    .await;
}

#[then(
    regex = r#"^"(\w+)" received no event about the restored resources and no "recovery.restored"$"#
)]
async fn received_no_event_about_restored_resources_no(w: &mut World, c: &[String]) {
    w.run(c, None, |w, c| {
        let r = w.streams.restored();
        let hidden = r.resources();
        for e in w.streams.sub(&c[1]).events() {
            assert_ne!(e["type"], "recovery.restored", "delivered: {e}");
            assert!(
                !mentions(&e, &hidden),
                "an event about a restored resource was delivered: {e}"
            );
        }
    })
    .await;
}

#[then(regex = r#"^the event stream of "(\w+)" ends$"#)]
async fn event_stream_ends(w: &mut World, c: &[String]) {
    w.run(c, None, |w, c| {
        let ended =
            w.streams
                .sub(&c[1])
                .wait("the end of the stream", WAIT_MS, |_| false, |r| r.eof);
        assert!(ended, "harness-error: wait returned before the end");
    })
    .await;
}

#[when(regex = r#"^(\d+) owner subscriptions start while the owner restores "([^"]+)"$"#)]
async fn owner_subscriptions_start_while_owner_restores(w: &mut World, c: &[String]) {
    w.run(c, None, |w, c| {
        race(w, c[1].parse().or_harness("a number in the step"), &c[2]);
    })
    .await;
}

#[then(
    regex = r#"^every racing snapshot shows all or none of the restored resources, consistent with the events of "(\w+)"$"#
)]
async fn every_racing_snapshot_shows_all_or_none(w: &mut World, c: &[String]) {
    w.run(c, None, |w, c| {
        judge_race(w, &c[1]);
    })
    .await;
}

#[when(regex = r"^the owner has used up (\d+) pane IDs and left the tree empty$")]
async fn owner_has_used_up_pane_ids_left(w: &mut World, c: &[String]) {
    w.run(c, None, |w, c| {
        use_up_pane_ids(w, c[1].parse().or_harness("a number in the step"));
    })
    .await;
}

// ---- attach
#[when(
    regex = r#"^(the owner|a client with token "([^"]*)") attaches to pane "([^"]+)" as "(\w+)"(?: resuming source "([^"]*)" at offset (\d+))?$"#
)]
async fn owner_client_with_token_attaches_pane_as(w: &mut World, c: &[String]) {
    w.run(c, None, |w, c| {
        let token = token_of(w, &c[1], c.get(2).map(|m| m.as_str()));
        let resume = c.get(5).map(|src| {
            let offset: u64 = c[6].parse().or_harness("a number in the step");
            json!({"source": src.as_str(), "offset": offset})
        });
        let (reply, bytes, v) = attach::attach(&w.ph.socket, token.as_deref(), &c[3], resume);
        w.transcript.extend_from_slice(&bytes);
        if let Some(v) = w.streams.keep(&c[4], &reply, v) {
            w.streams.viewers.insert(c[4].to_string(), v);
        }
        w.last = Some(reply);
    })
    .await;
}

#[then(regex = r#"^the stream of "(\w+)" is a snapshot, READY, then EXIT$"#)]
async fn stream_snapshot_ready_then_exit(w: &mut World, c: &[String]) {
    w.run(c, None, |w, c| {
        let frames = w.streams.viewer(&c[1]).wait(
            "an X frame",
            WAIT_MS,
            |f| f.frames.iter().any(|x| x.kind == b'X'),
            |f| f.frames.clone(),
        );
        let k = kinds(&frames);
        let x = frames
            .iter()
            .position(|f| f.kind == b'X')
            .unwrap_or_else(|| panic!("the stream ended without EXIT: frames {k}"));
        assert!(x >= 2, "frames {k}: want S, R, then X");
        assert_eq!(frames[0].kind, b'S', "frames {k}: the first must be S");
        assert_eq!(frames[1].kind, b'R', "frames {k}: READY must follow S");
        assert!(
            frames[2..x].iter().all(|f| f.kind == b'O'),
            "frames {k}: only output may come between READY and EXIT"
        );
        let json = frames[x].json();
        w.transcript.extend_from_slice(json.to_string().as_bytes());
        w.vars.insert(format!("{}_exit", &c[1]), json.to_string());
    })
    .await;
}

#[then(regex = r#"^the stream of "(\w+)" begins with a snapshot, then READY$"#)]
async fn stream_begins_with_snapshot_then_ready(w: &mut World, c: &[String]) {
    w.run(c, None, |w, c| {
        let frames = w.streams.viewer(&c[1]).wait(
            "S and R frames",
            WAIT_MS,
            |f| f.frames.len() >= 2,
            |f| f.frames.clone(),
        );
        let k = kinds(&frames);
        assert!(
            frames.len() >= 2 && frames[0].kind == b'S' && frames[1].kind == b'R',
            "frames {k}: want S, then R"
        );
    })
    .await;
}

#[then(regex = r#"^the EXIT of "(\w+)" has exit code (\d+)$"#)]
async fn exit_has_exit_code(w: &mut World, c: &[String]) {
    w.run(c, None, |w, c| {
        let x = w
            .vars
            .get(&format!("{}_exit", &c[1]))
            .unwrap_or_else(|| crate::harness_error!("no EXIT was read from {}", &c[1]));
        let x: Value = serde_json::from_str(x).unwrap();
        assert_eq!(x["exit_code"].to_string(), &c[2], "EXIT {x}");
    })
    .await;
}

#[then(regex = r#"^the snapshot of "(\w+)" (contains|does not contain) (?:the bytes )?"([^"]+)"$"#)]
async fn snapshot_contains_or_not(w: &mut World, c: &[String]) {
    w.run(c, None, |w, c| {
        let needle = unescape(&c[3]);
        let snap = w.streams.viewer(&c[1]).wait(
            "an S frame",
            WAIT_MS,
            |f| f.frames.iter().any(|x| x.kind == b'S'),
            |f| f.frames.iter().find(|x| x.kind == b'S').cloned(),
        );
        let snap = snap.unwrap_or_else(|| panic!("no S frame arrived on {}", &c[1]));
        let found = snap.payload.windows(needle.len()).any(|x| x == needle);
        assert_eq!(
            found,
            &c[2] == "contains",
            "the snapshot of {} {} {:?}",
            &c[1],
            if found { "contains" } else { "lacks" },
            &c[3]
        );
    })
    .await;
}

#[then(regex = r#"^the stream of "(\w+)" closes with reason "(\w+)"$"#)]
async fn stream_closes_with_reason(w: &mut World, c: &[String]) {
    w.run(c, None, |w, c| {
        let frames = w.streams.viewer(&c[1]).wait(
            "a C frame",
            WAIT_MS,
            |f| f.frames.iter().any(|x| x.kind == b'C'),
            |f| f.frames.clone(),
        );
        let close = frames
            .iter()
            .find(|f| f.kind == b'C')
            .unwrap_or_else(|| panic!("the stream ended without CLOSE: frames {}", kinds(&frames)));
        let json = close.json();
        w.transcript.extend_from_slice(json.to_string().as_bytes());
        assert_eq!(json["reason"], &c[2], "CLOSE {json}");
    })
    .await;
}

/// `\e` and `\a` in a step's text stand for ESC and BEL.
fn unescape(s: &str) -> Vec<u8> {
    s.replace("\\e", "\u{1b}")
        .replace("\\a", "\u{7}")
        .into_bytes()
}
