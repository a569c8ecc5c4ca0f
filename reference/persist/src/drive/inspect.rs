//! `inspect`: the durable checkpoint as the strict reader reads it back, the RAM
//! state, the refs present in the store, and the drive's logs. Reading the store's
//! directory here is the drive's job (the runtime never lists anything).

use std::path::Path;

use serde_json::{json, Value};

use super::{Drive, Refusal};
use crate::runstore::{valid_graph_id, FsRunStore, RunStore, RunStoreCode, CHECKPOINT_FILE};

/// Every ref under `<store>/runs/<run>/`: `<node>/<ulid>` and `<node>/pause/<ulid>`
/// (temporaries skipped), sorted.
pub fn store_keys(store: &Path, run: &str) -> Vec<String> {
    let mut keys = Vec::new();
    let names = |dir: &Path| -> Vec<(String, bool)> {
        let Ok(rd) = std::fs::read_dir(dir) else {
            return Vec::new();
        };
        rd.filter_map(Result::ok)
            .filter_map(|e| {
                let name = e.file_name().into_string().ok()?;
                let is_dir = e.file_type().ok()?.is_dir();
                (!name.starts_with('.')).then_some((name, is_dir))
            })
            .collect()
    };
    let run_dir = store.join("runs").join(run);
    for (node, is_dir) in names(&run_dir) {
        if !is_dir {
            continue;
        }
        for (name, sub) in names(&run_dir.join(&node)) {
            match (sub, name.as_str()) {
                (true, "pause") => keys.extend(
                    names(&run_dir.join(&node).join("pause"))
                        .into_iter()
                        .filter(|(_, d)| !d)
                        .map(|(u, _)| format!("{node}/pause/{u}")),
                ),
                (false, _) => keys.push(format!("{node}/{name}")),
                (true, _) => {}
            }
        }
    }
    keys.sort();
    keys
}

impl Drive {
    pub(super) fn inspect(&mut self, run: Option<String>) -> Result<Value, Refusal> {
        let rt = self.runtime.as_ref().ok_or(super::no_graph())?;
        let current = rt.run().to_owned();
        let run = run.unwrap_or_else(|| current.clone());
        if !valid_graph_id(&run) {
            return Err((
                "invalid_request.field",
                "the run id is not 1-64 bytes of [A-Za-z0-9_-]",
            ));
        }
        let runs = FsRunStore::open(&self.state.join("runstore"))
            .map_err(|e| (e.code.as_str(), e.reason))?;
        let (checkpoint, error) = match runs.load_run(&run) {
            Ok(cp) => (serde_json::to_value(cp).unwrap_or(Value::Null), Value::Null),
            Err(e) if e.code == RunStoreCode::RunNotFound => (Value::Null, Value::Null),
            Err(e) => (
                Value::Null,
                json!({"code": e.code.as_str(), "rule": e.rule}),
            ),
        };
        let raw_len =
            std::fs::metadata(self.state.join("runstore").join(&run).join(CHECKPOINT_FILE))
                .ok()
                .map(|m| m.len());
        let ram = (run == current && self.ram_live).then(|| {
            json!({
                "outputs": rt.rs.outputs, "slots": rt.rs.node_sessions, "pause": rt.rs.pause,
                "loop_snapshots": rt.rs.loop_snapshots, "visits": rt.rs.visits,
            })
        });
        let deletes: Vec<Value> = self
            .faults
            .borrow()
            .ops()
            .iter()
            .filter(|o| o["op"] == "store_delete" && o["ok"] == true)
            .map(|o| o["ref"].clone())
            .collect();
        Ok(json!({
            "ok": true, "run": run, "pod": self.pod, "checkpoint": checkpoint,
            "checkpoint_error": error, "checkpoint_raw_len": raw_len, "ram": ram,
            "store_keys": store_keys(&self.state.join("persist"), &run),
            "executes": self.executes, "ops": self.faults.borrow().ops(),
            "deletes": deletes, "events": self.events,
        }))
    }
}
