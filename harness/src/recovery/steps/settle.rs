//! Steps: the store once the setup's own writes are done. The seed lets a daemon
//! checkpoint as soon as its first mutation activates it ("MUST NOT automatically
//! checkpoint until its first successful product mutation"), so a periodic tick may
//! write at activation: rows that count files, generations or the store's calls
//! count from here, not from the daemon's start.

use super::prelude::*;
use crate::recovery::scenario::Scenario;

/// How long the store must stay unchanged, with no temporary file, to be settled.
const QUIET_MS: u64 = 300;
/// How long a setup's writes may take before the row is a harness error.
const SETTLE_MS: u64 = 5000;

/// The final checkpoint files' (name, length, mtime), and whether a temporary file
/// is in the store.
fn snapshot(w: &Scenario) -> (Vec<(String, u64, i64, i64)>, bool) {
    let entries = w.store_entries();
    let busy = entries.iter().any(|(name, _)| name.starts_with(".tmp-"));
    let files = entries
        .into_iter()
        .filter(|(name, _)| name.starts_with('c') && name.ends_with(".json"))
        .map(|(name, m)| (name, m.size(), m.mtime(), m.mtime_nsec()))
        .collect();
    (files, busy)
}

/// A final file's generation, read leniently (a planted damaged file has none).
fn generation_of(w: &Scenario, name: &str) -> Option<u64> {
    let bytes = std::fs::read(w.ph.store.join(name)).ok()?;
    let env: Value = serde_json::from_slice(&bytes).ok()?;
    let payload: Value = serde_json::from_str(env["payload"].as_str()?).ok()?;
    payload["generation"].as_u64()
}

#[given(regex = r"^the store has settled after setup$")]
#[when(regex = r"^the store has settled after setup$")]
async fn store_settled(w: &mut World, c: &[String]) {
    w.run(c, None, |w, _| {
        let deadline = std::time::Instant::now() + scaled(SETTLE_MS);
        let mut last = snapshot(w);
        let mut quiet_since = std::time::Instant::now();
        loop {
            std::thread::sleep(Duration::from_millis(25));
            let now = snapshot(w);
            if now != last {
                last = now;
                quiet_since = std::time::Instant::now();
            } else if !now.1 && quiet_since.elapsed() >= scaled(QUIET_MS) {
                break;
            }
            if std::time::Instant::now() > deadline {
                crate::harness_error!(
                    "the store kept changing for {SETTLE_MS} ms after the setup"
                );
            }
        }
        let (files, _) = last;
        let generation = files
            .iter()
            .filter_map(|(name, ..)| generation_of(w, name))
            .max()
            .unwrap_or(0);
        crate::evidence::note(format!(
            "after the setup the store holds {} checkpoint file(s), the newest of generation {generation}",
            files.len()
        ));
        w.vars
            .insert("settled_count".into(), files.len().to_string());
        w.vars
            .insert("settled_generation".into(), generation.to_string());
        w.restart_fault_counts();
    })
    .await;
}
