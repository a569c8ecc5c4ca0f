//! `@optional-takeover` (seed: the owner claim across broker instances): two brokers
//! with take-over on share one runtime directory, and a claim made through one rules
//! the viewers of the other.

use cucumber::{given, then};

use crate::drivers::scaled;
use crate::single_writer::live::WAIT_MS;
use crate::single_writer::World;

#[given(regex = r"^two brokers with take-over share one runtime directory$")]
async fn two_takeover_brokers(w: &mut World) {
    w.run(&[], None, |s, _| {
        let live = s.live();
        live.start_takeover_broker(0);
        live.start_takeover_broker(1);
    })
    .await;
}

// The holder is what a read-only tab shows its user ("held by desk"): the label the
// owner's tab gave, whichever broker it came through.
#[then(regex = r#"^viewer (\w+) is told it is secondary, held by "([^"]+)"$"#)]
async fn told_secondary_held_by(w: &mut World, c: &[String]) {
    w.run(c, None, |s, c| {
        let t = s.live().viewer(&c[1]);
        let label = c[2].to_string();
        let told = t.viewer.pump(scaled(WAIT_MS), |v| {
            v.frames("role")
                .last()
                .is_some_and(|f| f["role"] == "secondary" && f["holder"]["label"] == label.as_str())
        });
        assert!(
            told,
            "viewer {} was told {:?}",
            &c[1],
            t.viewer.frames("role")
        );
    })
    .await;
}

#[then(regex = r"^viewer (\w+) got only role, seq and id control frames$")]
async fn only_seed_frames(w: &mut World, c: &[String]) {
    w.run(c, None, |s, c| {
        let t = s.live().viewer(&c[1]);
        t.viewer.settle(std::time::Duration::from_millis(300));
        let other: Vec<&serde_json::Value> = t
            .viewer
            .texts
            .iter()
            .map(|(_, v)| v)
            .filter(|v| !["role", "seq", "id", "pong"].iter().any(|k| v["t"] == *k))
            .collect();
        assert!(other.is_empty(), "frames outside the seed's: {other:?}");
    })
    .await;
}
