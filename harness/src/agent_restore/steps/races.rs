//! What the clients must do when the daemon's state changes under them, made
//! deterministic by the suite's relay (`replace-after-read`, `name-taken`): save
//! archives no pane whose record was reaped during its reads (ADR-0068 §5), and
//! restore skips a name another client took after it read the sessions, leaving
//! that session untouched (§6, consequences).

use super::restore::{archive_of, panes_of_archive};
use crate::agent_restore::live::RECORD_KEY;
use crate::agent_restore::World;
use cucumber::then;
use serde_json::{json, Value};

/// The archive's records are exactly those the daemon's panes hold now, as a
/// multiset: a pane replaced during the reads is not archived with its record.
#[then(
    regex = r#"^the archive "([\w.-]+)" holds exactly the records of the panes that exist now$"#
)]
async fn archive_records_now(w: &mut World, c: &[String]) {
    w.run(c, None, |s, c| {
        let l = s.live();
        let archived = archive_of(l, &c[1]);
        let mut got: Vec<String> = panes_of_archive(&archived)
            .iter()
            .filter_map(|p| p.get("agent_session").map(Value::to_string))
            .collect();
        let panes = l.ok("pane.list", json!({}))["panes"].clone();
        let mut want = Vec::new();
        for p in panes.as_array().into_iter().flatten() {
            let id = p["pane"].as_str().unwrap_or_default().to_string();
            if let Some(text) = l.meta(&id, RECORD_KEY) {
                let v: Value = serde_json::from_str(&text).unwrap_or(Value::Null);
                want.push(v.to_string());
            }
        }
        got.sort();
        want.sort();
        assert_eq!(
            got, want,
            "the archive's records are not those of the panes that exist"
        );
    })
    .await;
}

/// One session of that name, with no window: restore put nothing into the session
/// another client created.
#[then(regex = r#"^exactly one session is named "(\w+)", and it has no window$"#)]
async fn one_untouched_session(w: &mut World, c: &[String]) {
    w.run(c, None, |s, c| {
        let l = s.live();
        let listed = l.ok("session.list", json!({}));
        let named: Vec<&Value> = listed["sessions"]
            .as_array()
            .into_iter()
            .flatten()
            .filter(|s| s["name"] == json!(c[1]))
            .collect();
        assert_eq!(named.len(), 1, "sessions named {}: {named:?}", &c[1]);
        let windows = named[0]["windows"].as_array().map_or(0, Vec::len);
        assert_eq!(windows, 0, "the other client's session was given windows");
    })
    .await;
}
