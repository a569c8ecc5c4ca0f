//! `vxpersist drive --state DIR`: the runtime over JSON lines
//! (docs/spec/persist-drive.md). One exhaustive dispatch over [`proto::Request`].

pub mod exec;
pub mod faults;
pub mod inspect;
pub mod proto;

use std::io::{BufRead, Write};
use std::path::{Path, PathBuf};

use serde_json::{json, Value};

use crate::limits::MAX_DRIVE_LINE_BYTES;
use crate::runstore::{valid_graph_id, FsRunStore};
use crate::runtime::{InteractionSummary, Runtime, RuntimeError, VisitReport};
use crate::store::{BackendSessionStore, FsStore};
use exec::StubExecutor;
use faults::{FaultOp, FaultyRunStore, FaultyStore, SharedFaults};
use proto::{Refusal, Request};

pub const FIRST_POD: &str = "pod-1";

/// `vxpersist drive` arguments.
#[derive(clap::Args, Debug)]
pub struct DriveArgs {
    /// The state directory (must exist, not a symlink).
    #[arg(long, value_name = "DIR")]
    pub state: PathBuf,
    /// The `vxstub` executable (else `$VXPERSIST_VXSTUB`, else `vxstub` beside
    /// this executable).
    #[arg(long, value_name = "PATH")]
    pub vxstub: Option<PathBuf>,
}

/// Finds the executor: the argument, the environment, the sibling.
fn find_vxstub(arg: Option<&Path>) -> Option<PathBuf> {
    if let Some(p) = arg {
        return Some(p.to_owned());
    }
    if let Some(p) = std::env::var_os("VXPERSIST_VXSTUB") {
        return Some(PathBuf::from(p));
    }
    let sibling = std::env::current_exe().ok()?.parent()?.join("vxstub");
    sibling.is_file().then_some(sibling)
}

/// The drive's process: exit 0 at end of input, 2 for an unusable state dir, 1 when
/// stdout fails.
pub fn main(args: &DriveArgs) -> u8 {
    match std::fs::symlink_metadata(&args.state) {
        Ok(m) if m.is_dir() => {}
        _ => {
            eprintln!(
                "vxpersist drive: --state {}: must be an existing directory, not a symlink \
                 (create it first, or name the directory itself)",
                args.state.display()
            );
            return 2;
        }
    }
    let mut drive = Drive::new(&args.state, find_vxstub(args.vxstub.as_deref()));
    let stdin = std::io::stdin().lock();
    let stdout = std::io::stdout().lock();
    match drive.serve(stdin, stdout) {
        Ok(()) => 0,
        Err(_) => 1,
    }
}

pub struct Drive {
    state: PathBuf,
    vxstub: Option<PathBuf>,
    faults: SharedFaults,
    runtime: Option<Runtime>,
    /// False after `switch_pod` (the next visit loads the checkpoint).
    ram_live: bool,
    /// Set by `rewind` until `resume`: RAM is stale and must not run a visit.
    rewound: bool,
    pod: String,
    executes: Vec<Value>,
    events: Vec<Value>,
}

fn refusal(code: &str, reason: &str) -> Value {
    json!({"ok": false, "error": {"code": code, "reason": reason}})
}

fn interaction(i: &InteractionSummary) -> Value {
    json!({
        "node": i.node, "question": i.question, "session_id": i.session_id,
        "backend": i.backend, "blob_len": i.blob_len, "blob_sha256": i.blob_sha256,
    })
}

impl Drive {
    pub fn new(state: &Path, vxstub: Option<PathBuf>) -> Drive {
        Drive {
            state: state.to_owned(),
            vxstub,
            faults: SharedFaults::default(),
            runtime: None,
            ram_live: false,
            rewound: false,
            pod: FIRST_POD.to_owned(),
            executes: Vec::new(),
            events: Vec::new(),
        }
    }

    /// Reads requests until end of input; one reply line per request.
    pub fn serve(&mut self, input: impl BufRead, mut out: impl Write) -> std::io::Result<()> {
        let mut input = input.take(u64::MAX);
        loop {
            let mut line = Vec::new();
            input.set_limit(MAX_DRIVE_LINE_BYTES as u64);
            let n = input.read_until(b'\n', &mut line)?;
            if n == 0 {
                return Ok(());
            }
            let reply = if line.len() == MAX_DRIVE_LINE_BYTES && line.last() != Some(&b'\n') {
                skip_to_newline(&mut input)?;
                refusal(
                    "invalid_request.line_too_long",
                    "a request line is over 1 MiB",
                )
            } else {
                self.handle(&line)
            };
            writeln!(out, "{reply}")?;
            out.flush()?;
        }
    }

    pub fn handle(&mut self, line: &[u8]) -> Value {
        let line = line.strip_suffix(b"\n").unwrap_or(line);
        match proto::parse(line) {
            Ok(req) => {
                let reply = self.dispatch(req).unwrap_or_else(|(c, r)| refusal(c, r));
                self.collect_events();
                reply
            }
            Err((code, reason)) => refusal(code, reason),
        }
    }

    fn collect_events(&mut self) {
        if let Some(rt) = self.runtime.as_mut() {
            for e in rt.events.drain(..) {
                self.events.push(json!({
                    "seq": self.events.len() + 1, "type": e.kind.as_str(), "node": e.node,
                    "code": e.code, "output": e.output,
                }));
            }
        }
    }

    fn dispatch(&mut self, req: Request) -> Result<Value, Refusal> {
        match req {
            Request::Graph {
                run,
                store,
                nodes,
                edges,
            } => self.graph(run, store, nodes, edges),
            Request::RunTo { node, ask } => self.run_to(&node, ask),
            Request::Answer { text, ask } => {
                self.visit_with(|rt, exec| rt.answer(text, ask, exec).map(Some))
            }
            Request::Resume {} => {
                let reply = self.visit_with(|rt, exec| rt.resume(exec));
                if reply.is_ok() {
                    self.rewound = false;
                }
                reply
            }
            Request::Rewind { to, drop } => {
                let rt = self.runtime.as_mut().ok_or(no_graph())?;
                let drop = drop.unwrap_or_else(|| vec![to.clone()]);
                let deleted = rt.rewind(&to, &drop).map_err(|e| (e.code(), e.reason()))?;
                self.rewound = true;
                Ok(json!({"ok": true, "deleted": deleted}))
            }
            Request::Fork { run } => {
                if !valid_graph_id(&run) {
                    return Err((
                        "invalid_request.field",
                        "the run id is not 1-64 bytes of [A-Za-z0-9_-]",
                    ));
                }
                let rt = self.runtime.as_mut().ok_or(no_graph())?;
                let cp = rt.fork(&run).map_err(|e| (e.code(), e.reason()))?;
                Ok(json!({"ok": true, "checkpoint": cp}))
            }
            Request::WipeRoot { pod } => {
                let pod = pod.unwrap_or_else(|| self.pod.clone());
                check_pod(&pod)?;
                match std::fs::remove_dir_all(self.state.join("pods").join(&pod)) {
                    Ok(()) => Ok(json!({"ok": true})),
                    Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(json!({"ok": true})),
                    Err(_) => Err((
                        "unavailable.persist_io",
                        "the pod root could not be removed",
                    )),
                }
            }
            Request::SwitchPod { pod } => {
                check_pod(&pod)?;
                self.pod = pod;
                self.ram_live = false;
                Ok(json!({"ok": true}))
            }
            Request::Inject {
                op,
                mode,
                count,
                skip,
            } => self.inject(&op, mode.as_deref(), count, skip),
            Request::Inspect { run } => self.inspect(run),
        }
    }

    fn graph(
        &mut self,
        run: String,
        store: bool,
        nodes: Vec<proto::NodeReq>,
        edges: Vec<proto::EdgeReq>,
    ) -> Result<Value, Refusal> {
        let graph = proto::graph(run, nodes, edges)?;
        let store: Option<Box<dyn BackendSessionStore>> = match store {
            true => Some(Box::new(FaultyStore {
                inner: FsStore::open(&self.state.join("persist"))
                    .map_err(|e| (e.code.as_str(), e.reason))?,
                faults: self.faults.clone(),
            })),
            false => None,
        };
        let runs = FaultyRunStore {
            inner: FsRunStore::open(&self.state.join("runstore"))
                .map_err(|e| (e.code.as_str(), e.reason))?,
            faults: self.faults.clone(),
        };
        let run = graph.run.clone();
        let rt = Runtime::new(graph, store, Box::new(runs)).map_err(|e| (e.code(), e.reason()))?;
        self.runtime = Some(rt);
        self.ram_live = true;
        self.rewound = false;
        Ok(json!({"ok": true, "run": run}))
    }

    fn run_to(&mut self, node: &str, ask: Option<String>) -> Result<Value, Refusal> {
        let rt = self.runtime.as_mut().ok_or(no_graph())?;
        if self.rewound {
            return Err(("conflict.run_state", "the run was rewound: resume it"));
        }
        if !self.ram_live {
            rt.reload_running().map_err(|e| (e.code(), e.reason()))?;
            self.ram_live = true;
        }
        if rt
            .rs
            .status
            .is_some_and(|s| s != crate::runstore::RunStatus::Running)
        {
            return Err((
                "conflict.run_state",
                "the run is paused or failed: answer or resume it",
            ));
        }
        let node = node.to_owned();
        self.visit_with(move |rt, exec| rt.visit(&node, ask, None, exec).map(Some))
    }

    /// Runs one runtime call that may execute a node, with a fresh executor over
    /// the current pod. `Ok(None)`: the run was restored and no node ran.
    fn visit_with(
        &mut self,
        call: impl FnOnce(
            &mut Runtime,
            &mut StubExecutor<'_>,
        ) -> Result<Option<VisitReport>, RuntimeError>,
    ) -> Result<Value, Refusal> {
        let rt = self.runtime.as_mut().ok_or(no_graph())?;
        let graph = rt.graph.clone();
        let before = self.executes.len();
        let mut exec = StubExecutor {
            vxstub: self.vxstub.as_deref(),
            pod: &self.pod,
            pod_dir: self.state.join("pods").join(&self.pod),
            graph: &graph,
            faults: self.faults.clone(),
            executes: &mut self.executes,
        };
        let report = call(rt, &mut exec);
        self.ram_live = true;
        let execute = self.executes.get(before).cloned().unwrap_or(Value::Null);
        match report {
            Err(e) => Err((e.code(), e.reason())),
            Ok(None) => Ok(json!({
                "ok": true, "result": "restored", "execute": null, "interaction": null,
                "edge_selected": false, "warnings": [],
            })),
            Ok(Some(report)) => Ok(json!({
                "ok": true, "result": report.outcome.as_str(), "execute": execute,
                "interaction": report.interaction.as_ref().map(interaction),
                "edge_selected": report.edge_selected, "warnings": report.warnings,
            })),
        }
    }

    fn inject(
        &mut self,
        op: &str,
        mode: Option<&str>,
        count: Option<u32>,
        skip: Option<u32>,
    ) -> Result<Value, Refusal> {
        if op == "clear" {
            self.faults.borrow_mut().clear();
            return Ok(json!({"ok": true}));
        }
        let op = FaultOp::parse(op).ok_or(("invalid_request.field", "unknown inject op"))?;
        let after = match mode {
            None | Some("before") => false,
            Some("after") if op.can_land() => true,
            Some(_) => {
                return Err((
                    "invalid_request.field",
                    "mode is before, or after for a write",
                ))
            }
        };
        self.faults
            .borrow_mut()
            .arm(op, after, skip.unwrap_or(0), count.unwrap_or(1));
        Ok(json!({"ok": true}))
    }
}

fn no_graph() -> Refusal {
    ("conflict.no_graph", "no graph yet")
}

fn check_pod(pod: &str) -> Result<(), Refusal> {
    if valid_graph_id(pod) {
        Ok(())
    } else {
        Err((
            "invalid_request.field",
            "a pod name is not 1-64 bytes of [A-Za-z0-9_-]",
        ))
    }
}

fn skip_to_newline(input: &mut std::io::Take<impl BufRead>) -> std::io::Result<()> {
    loop {
        input.set_limit(MAX_DRIVE_LINE_BYTES as u64);
        let mut sink = Vec::new();
        let n = input.read_until(b'\n', &mut sink)?;
        if n == 0 || sink.last() == Some(&b'\n') {
            return Ok(());
        }
    }
}
