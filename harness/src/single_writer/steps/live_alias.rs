//! Live steps of aliases: the agent of a self-minting engine (found by engine, as
//! its command line names no id), the `id` frame with the real key, the list's row
//! under it, opens by the real id, and the engine's index (the broker's to read,
//! never to write).

use std::time::Duration;

use cucumber::{given, then, when};

use crate::drivers::{poll, scaled};
use crate::single_writer::live::WAIT_MS;
use crate::single_writer::World;
use crate::verdict::OrHarness;

/// Longer than many of the broker's index polls: a real key not told by then is not
/// coming.
const NEVER_MS: u64 = 1_500;

fn noted_name(engine: &str) -> String {
    format!("engine:{engine}")
}

/// The noted agent of `engine` and the engine's live agents now.
fn noted_and_live(live: &mut crate::single_writer::live::Live, engine: &str) -> (i32, Vec<i32>) {
    let noted = *live
        .noted
        .get(&noted_name(engine))
        .or_harness("no agent was noted");
    (noted, live.sb.agents_of_engine(engine))
}

#[given(regex = r#"^the suite notes the only "(\w+)" agent$"#)]
async fn note_engine_agent(w: &mut World, c: &[String]) {
    w.run(c, None, |s, c| {
        let live = s.live();
        let pids = poll("the engine's agent", scaled(WAIT_MS), || {
            let pids = live.sb.agents_of_engine(&c[1]);
            (!pids.is_empty()).then_some(pids)
        });
        assert_eq!(pids.len(), 1, "agents of {}: {pids:?}", &c[1]);
        live.noted.insert(noted_name(&c[1]), pids[0]);
    })
    .await;
}

#[then(regex = r#"^the only "(\w+)" agent is the noted one$"#)]
async fn engine_agent_is_noted(w: &mut World, c: &[String]) {
    w.run(c, None, |s, c| {
        let (noted, pids) = noted_and_live(s.live(), &c[1]);
        assert_eq!(pids, vec![noted], "the agent was relaunched or duplicated");
    })
    .await;
}

#[then(regex = r#"^there are (\d+) "(\w+)" agents$"#)]
async fn engine_agents(w: &mut World, c: &[String]) {
    w.run(c, None, |s, c| {
        let want: usize = c[1].parse().or_harness("a count");
        let live = s.live();
        poll("the engine's agents", scaled(WAIT_MS), || {
            (live.sb.agents_of_engine(&c[2]).len() == want).then_some(())
        });
    })
    .await;
}

#[then(regex = r#"^the noted "(\w+)" agent is one of them$"#)]
async fn noted_among(w: &mut World, c: &[String]) {
    w.run(c, None, |s, c| {
        let (noted, pids) = noted_and_live(s.live(), &c[1]);
        assert!(
            pids.contains(&noted),
            "the first session's agent is gone: {pids:?}"
        );
    })
    .await;
}

#[then(regex = r"^viewer (\w+) is told the real key of the minted session$")]
async fn told_real_key(w: &mut World, c: &[String]) {
    w.run(c, None, |s, c| {
        let live = s.live();
        let t = live.viewer(&c[1]);
        t.viewer
            .pump(scaled(WAIT_MS), |v| !v.frames("id").is_empty());
        let ids = t.viewer.frames("id");
        assert_eq!(ids.len(), 1, "id frames: {ids:?}");
        let sid = ids[0]["sid"]
            .as_str()
            .or_harness("an id frame's sid")
            .to_string();
        let (engine, id) = sid
            .split_once(':')
            .unwrap_or_else(|| panic!("sid {sid:?} is no key"));
        let minted = live.sb.turns(&format!("{engine}@{id}"));
        assert!(
            minted
                .iter()
                .any(|t| t["turn"] == "minted" && t["id"] == id),
            "the real key {sid:?} is not the id the agent minted"
        );
        live.minted = Some(sid);
    })
    .await;
}

#[then(regex = r"^viewer (\w+) is never told a real key$")]
async fn never_told(w: &mut World, c: &[String]) {
    w.run(c, None, |s, c| {
        let t = s.live().viewer(&c[1]);
        t.viewer.settle(Duration::from_millis(NEVER_MS));
        let ids = t.viewer.frames("id");
        assert!(ids.is_empty(), "the broker guessed a real key: {ids:?}");
    })
    .await;
}

#[then(regex = r#"^the session list has one row for the minted session, aliased to "([^"]+)"$"#)]
async fn one_aliased_row(w: &mut World, c: &[String]) {
    w.run(c, None, |s, c| {
        let live = s.live();
        let real = live.minted.clone().or_harness("no real key was told");
        let rows = live.rows_of(&real);
        assert_eq!(rows.len(), 1, "rows: {rows:?}");
        assert_eq!(
            rows[0]["key"],
            real.as_str(),
            "the row is listed by the real key"
        );
        assert_eq!(rows[0]["alias"], c[1], "the row names its placeholder");
        let placeholder_rows = live.rows_of(&c[1]);
        assert_eq!(placeholder_rows, rows, "a ghost row under the placeholder");
    })
    .await;
}

// The scan of the engine's index (seed point 4) is what keeps a retired session
// listed; its state's name is the implementation's, so only `alive` is asked.
#[then(
    regex = r#"^the session list has one row for the minted session, aliased to "([^"]+)", not alive$"#
)]
async fn one_aliased_row_not_alive(w: &mut World, c: &[String]) {
    w.run(c, None, |s, c| {
        let live = s.live();
        let real = live.minted.clone().or_harness("no real key was told");
        let rows = live.rows_of(&real);
        assert_eq!(rows.len(), 1, "one row per real session: {rows:?}");
        assert_eq!(
            rows[0]["key"],
            real.as_str(),
            "listed by the real key: {rows:?}"
        );
        assert_eq!(
            rows[0]["alias"], c[1],
            "the row names its placeholder: {rows:?}"
        );
        assert_eq!(rows[0]["alive"], false, "the master was retired: {rows:?}");
        assert_eq!(
            live.rows_of(&c[1]),
            rows,
            "a ghost row under the placeholder"
        );
    })
    .await;
}

#[when(regex = r"^the minted session is retired$")]
async fn minted_retired(w: &mut World, c: &[String]) {
    w.run(c, None, |s, _| {
        let live = s.live();
        let real = live.minted.clone().or_harness("no real key was told");
        let (status, body) = live.retire(&real);
        // The seed names the route, not its status: any success is one.
        assert!(
            (200..300).contains(&status),
            "retire answered {status}: {body}"
        );
    })
    .await;
}

#[then(regex = r#"^the session list has at most one row for "([^"]+)", under that key$"#)]
async fn one_row(w: &mut World, c: &[String]) {
    w.run(c, None, |s, c| {
        // "The placeholder is never scanned (it isn't in opencode.db)": a list built
        // from the engine's index may show no row for it at all. What the seed forbids
        // is a guess: a row that replaced the placeholder, or aliased a new id to it.
        let rows = s.live().rows_of(&c[1]);
        assert!(rows.len() <= 1, "rows: {rows:?}");
        if let Some(row) = rows.first() {
            assert_eq!(row["key"], c[1], "the placeholder was replaced: {rows:?}");
            assert!(row.get("alias").is_none(), "an alias was guessed: {rows:?}");
        }
    })
    .await;
}

#[when(regex = r"^viewer (\w+) opens the minted session$")]
async fn opens_minted(w: &mut World, c: &[String]) {
    w.run(c, None, |s, c| {
        let live = s.live();
        let real = live.minted.clone().or_harness("no real key was told");
        live.open(&c[1], &real, "", 0, 0);
    })
    .await;
}

#[then(regex = r"^the engine's index holds only the minted id$")]
async fn index_untouched(w: &mut World) {
    w.run(&[], None, |s, _| {
        let live = s.live();
        let real = live.minted.clone().or_harness("no real key was told");
        let (_, id) = real.split_once(':').or_harness("a key");
        let text = std::fs::read_to_string(live.sb.engine_index()).or_harness("the engine's index");
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 1, "the index changed: {text:?}");
        assert!(
            lines[0].split('\t').next() == Some(id),
            "the index changed: {text:?}"
        );
    })
    .await;
}

#[when(regex = r"^two other sessions' ids appear in the engine's index at once$")]
async fn two_ids_appear(w: &mut World) {
    w.run(&[], None, |s, _| {
        use std::io::Write;
        let index = s.live().sb.engine_index();
        let mut f = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(index)
            .or_harness("the engine's index");
        // One write: the broker's poll sees both or neither.
        f.write_all(b"ses_OtherOne\nses_OtherTwo\n")
            .or_harness("appending to the index");
    })
    .await;
}

#[then(regex = r"^the broker's alias sidecar is valid and holds (\d+) alias(?:es)?$")]
async fn alias_sidecar_holds(w: &mut World, c: &[String]) {
    w.run(c, None, |s, c| {
        let live = s.live();
        let file = live.alias_sidecar(0);
        let at = live.t.alias_sidecar_entries.clone();
        let profile = &crate::profile::context().profile;
        if profile.claims_part(crate::contract::Contract::SingleWriter, "checker") {
            s.check_sidecar(&file);
            let said = s.last();
            crate::evidence::ensure(
                crate::drivers::checker::accepted(said, &crate::single_writer::checks::judging()),
                Some("sw-durable-formats"),
                || {
                    (
                        "the sidecar checker to accept the broker's own alias sidecar".into(),
                        crate::drivers::checker::said_words(said),
                    )
                },
            );
        } else {
            crate::evidence::note(
                "the sidecar checker was not run on the broker's alias sidecar: the profile does not claim the checker part",
            );
        }
        let text = std::fs::read_to_string(&file).or_harness("reading the alias sidecar");
        let doc: serde_json::Value =
            serde_json::from_str(&text).or_harness("the sidecar is JSON (checked valid)");
        let n = match doc.pointer(&at) {
            Some(serde_json::Value::Object(m)) => m.len(),
            Some(serde_json::Value::Array(a)) => a.len(),
            _ => panic!("the alias sidecar has no object or array at {at:?} (the profile's alias_sidecar_entries): {doc}"),
        };
        assert_eq!(n.to_string(), c[1], "aliases in the sidecar at {at:?}: {doc}");
    })
    .await;
}
