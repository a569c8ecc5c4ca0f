//! What a restore did, observed on the server rather than read from its reply (whose
//! member names are the kit's pin `asr-pin-restore-reply`): `session.list` before and
//! after it, and the records its panes read back.

pub use super::listed::{listed, Listed};
use super::live::{Live, RECORD_KEY};
use serde_json::{json, Value};

/// The sessions `session.list` holds now.
pub fn sessions(l: &mut Live) -> Vec<Listed> {
    listed(&l.ok("session.list", json!({})))
}

/// The sessions of `after` that `before` did not list (by id).
pub fn new_since<'a>(before: &[Listed], after: &'a [Listed]) -> Vec<&'a Listed> {
    after
        .iter()
        .filter(|s| !before.iter().any(|b| b.id == s.id))
        .collect()
}

/// An archive's sessions: each name and how many panes it lists.
fn archived(archive: &Value) -> Vec<(String, usize)> {
    archive["sessions"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|s| {
            let panes = s["windows"]
                .as_array()
                .into_iter()
                .flatten()
                .map(|w| w["panes"].as_array().map_or(0, Vec::len))
                .sum();
            (s["name"].as_str().unwrap_or_default().to_string(), panes)
        })
        .collect()
}

/// The archive's sessions a restore restored, and those it skipped: restored, a
/// session of that name that `before` did not list and that has panes (when the
/// archive gives it any: a name another client took meanwhile holds none of the
/// archive's); skipped, one not restored whose name is listed after.
pub fn classify(
    archive: &Value,
    before: &[Listed],
    after: &[Listed],
) -> (Vec<String>, Vec<String>) {
    let new = new_since(before, after);
    let (mut restored, mut skipped) = (Vec::new(), Vec::new());
    for (name, panes) in archived(archive) {
        let made = new
            .iter()
            .any(|s| s.name == name && (panes == 0 || !s.panes.is_empty()));
        if made {
            restored.push(name);
        } else if after.iter().any(|s| s.name == name) {
            skipped.push(name);
        }
    }
    (restored, skipped)
}

/// The records an archive holds for the session `name`.
fn records_of(archive: &Value, name: &str) -> Vec<Value> {
    archive["sessions"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|s| s["name"] == name)
        .flat_map(|s| s["windows"].as_array().cloned().unwrap_or_default())
        .flat_map(|w| w["panes"].as_array().cloned().unwrap_or_default())
        .filter_map(|p| p.get("agent_session").cloned())
        .collect()
}

/// The panes of the `restored` sessions (new since `before`) whose record reads back
/// one the archive holds for that session: the panes resumed natively.
pub fn native_panes(
    l: &mut Live,
    archive: &Value,
    before: &[Listed],
    after: &[Listed],
    restored: &[String],
) -> Vec<String> {
    let mut out = Vec::new();
    for s in new_since(before, after) {
        if !restored.contains(&s.name) {
            continue;
        }
        let records = records_of(archive, &s.name);
        for pane in &s.panes {
            let record = l
                .meta(pane, RECORD_KEY)
                .and_then(|t| serde_json::from_str::<Value>(&t).ok());
            if record.is_some_and(|r| records.contains(&r)) {
                out.push(pane.clone());
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(id: &str, name: &str, panes: &[&str]) -> Listed {
        Listed {
            id: id.into(),
            name: name.into(),
            panes: panes.iter().map(|p| p.to_string()).collect(),
        }
    }

    #[test]
    fn restored_is_new_with_panes_skipped_is_listed_otherwise() {
        let archive = json!({"sessions": [
            {"name": "a", "windows": [{"panes": [{}]}]},
            {"name": "b", "windows": [{"panes": [{}]}]},
            {"name": "c", "windows": [{"panes": [{}]}]},
            {"name": "d", "windows": [{"panes": [{}]}]},
        ]});
        let before = [s("s1", "b", &["p1"])];
        // a: restored; b: existed; c: taken meanwhile, no pane; d: never made.
        let after = [
            s("s1", "b", &["p1"]),
            s("s2", "a", &["p2"]),
            s("s3", "c", &[]),
        ];
        let (restored, skipped) = classify(&archive, &before, &after);
        assert_eq!(restored, ["a"]);
        assert_eq!(skipped, ["b", "c"]);
        // A second session of an existing name, with panes, is restored, not skipped.
        let after = [s("s1", "b", &["p1"]), s("s4", "b", &["p4"])];
        assert_eq!(
            classify(&archive, &before, &after),
            (vec!["b".into()], vec![])
        );
    }

    #[test]
    fn a_listing_gives_each_session_its_panes() {
        let v = json!({"sessions": [{"session": "s1", "name": "x", "windows": [
            {"nodes": [{"kind": "split"}, {"kind": "pane", "pane": "p1"}, {"kind": "pane", "pane": "p2"}]}]}]});
        assert_eq!(listed(&v), [s("s1", "x", &["p1", "p2"])]);
    }
}
