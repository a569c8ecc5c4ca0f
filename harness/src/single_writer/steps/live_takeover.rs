//! `@optional-takeover` (seed: the owner claim across broker instances): two brokers
//! with take-over on share one runtime directory, and a claim made through one rules
//! the viewers of the other.

use cucumber::{given, then};

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
