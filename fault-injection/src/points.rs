//! Injection points: every call a traced run made, each with the rule that selects
//! exactly it (`op@<escaped path>##k`).

use std::collections::HashMap;
use std::io;
use std::process::Command;

use crate::{escape_glob, glob_match, Injector, Op, Outcome, TraceRecord};

/// Which calls [`points`] lists.
#[derive(Debug, Clone, Default)]
pub struct PointFilter {
    /// Also list calls on non-absolute paths (pipes, sockets) and on /dev, /proc, /sys.
    pub all: bool,
    /// Only calls whose path (or rename destination) matches this glob.
    pub glob: Option<String>,
    /// Only these call families (empty: all).
    pub ops: Vec<Op>,
}

/// One injection point: a call the workload made, and the rule that selects exactly
/// it (append `=ACTION`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Point {
    /// 1-based index in the list.
    pub index: usize,
    pub op: String,
    pub call: String,
    pub path: Vec<u8>,
    pub path2: Option<Vec<u8>>,
    pub pid: i64,
    /// Ordinal of this call among the whole tree's calls of `op` on `path`.
    pub ordinal: u64,
    /// `op@<escaped path>##ordinal`: the rule prefix selecting this call.
    pub rule: String,
}

/// The points of one traced run.
#[derive(Debug)]
pub struct Points {
    pub points: Vec<Point>,
    pub outcome: Outcome,
}

/// Runs `cmd` once with an empty plan, tracing every call, and lists its injection
/// points. Ordinals count calls of the same family on the same path across the whole
/// process tree in trace order, which is what a `##N` rule counts, so
/// `format!("{}=EIO", point.rule)` fails exactly that call in a deterministic rerun.
pub fn points(cmd: &mut Command, filter: &PointFilter) -> io::Result<Points> {
    points_with(Injector::new("").map_err(io::Error::other)?, cmd, filter)
}

/// [`points`] with a configured injector (trace file, library); its plan is ignored.
pub fn points_with(inj: Injector, cmd: &mut Command, filter: &PointFilter) -> io::Result<Points> {
    let inj = Injector {
        plan: String::new(),
        rules: Vec::new(),
        ..inj
    };
    let outcome = inj.run(cmd)?;
    if let Err(why) = outcome.injectable() {
        return Err(io::Error::other(format!("not injectable: {why}")));
    }
    let records = outcome.records()?;
    Ok(Points {
        points: points_from_trace(&records, filter),
        outcome,
    })
}

/// Computes points from trace records (see [`points`]).
pub fn points_from_trace(records: &[TraceRecord], filter: &PointFilter) -> Vec<Point> {
    let mut counts: HashMap<(String, Vec<u8>), u64> = HashMap::new();
    let mut out = Vec::new();
    // A write glibc made for a stdio call already decided (`"action":"stdio"`) is
    // not a decision of its own: no rule can select it.
    for r in records
        .iter()
        .filter(|r| r.is_call() && r.action != "stdio")
    {
        let path = r.path_bytes();
        let path2 = r.path2_bytes();
        let mut bump = |p: &[u8]| -> u64 {
            let c = counts.entry((r.op.clone(), p.to_vec())).or_insert(0);
            *c += 1;
            *c
        };
        let ordinal = bump(&path);
        if let Some(p2) = &path2 {
            if *p2 != path {
                bump(p2);
            }
        }
        let interesting = |p: &[u8]| {
            filter.all
                || (p.first() == Some(&b'/')
                    && !p.starts_with(b"/dev/")
                    && !p.starts_with(b"/proc/")
                    && !p.starts_with(b"/sys/"))
        };
        if !interesting(&path) {
            continue;
        }
        if let Some(g) = &filter.glob {
            let hit = glob_match(g, &path) || path2.as_deref().is_some_and(|p| glob_match(g, p));
            if !hit {
                continue;
            }
        }
        if !filter.ops.is_empty() && !filter.ops.iter().any(|o| o.name() == r.op) {
            continue;
        }
        let rule = format!("{}@{}##{ordinal}", r.op, escape_glob(&path));
        out.push(Point {
            index: out.len() + 1,
            op: r.op.clone(),
            call: r.call.clone(),
            path,
            path2,
            pid: r.pid,
            ordinal,
            rule,
        });
    }
    out
}

impl Point {
    /// The point as one JSON object.
    pub fn to_json(&self) -> String {
        serde_json::json!({
            "index": self.index,
            "op": self.op,
            "call": self.call,
            "path": String::from_utf8_lossy(&self.path),
            "path2": self.path2.as_ref().map(|p| String::from_utf8_lossy(p).into_owned()),
            "pid": self.pid,
            "ordinal": self.ordinal,
            "rule": self.rule,
        })
        .to_string()
    }
}
