//! `vxcert merge --report OUT DIR…`: shard reports (and reports of separate
//! `--contract` runs) joined into the report one run would have written, in every
//! format. Reports of different kit versions, suites, profiles or implementations are
//! refused, named.

use super::load;
use super::report::{ClauseJson, Report, ReportJson, RunJson, ScenarioJson, NO_SCENARIO_NOTE};
use crate::contract::Contract;
use sha2::{Digest, Sha256};
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

#[derive(clap::Args, Debug)]
pub struct MergeArgs {
    /// Where the merged report.json, report.xml, report.md and report.html go.
    #[arg(long, value_name = "OUT")]
    pub report: PathBuf,
    /// The reports to join: report directories or report.json files.
    #[arg(required = true, value_name = "DIR")]
    pub inputs: Vec<PathBuf>,
}

/// Exit 0 when the merged report passes, 1 when it fails, 2 when the reports cannot
/// be merged.
pub fn run_merge(args: &MergeArgs) -> i32 {
    match merge_dirs(&args.inputs, &args.report) {
        Ok(rep) => {
            println!("{}", super::report::summary(&rep));
            if rep.ok {
                0
            } else {
                1
            }
        }
        Err(e) => {
            eprintln!("vxcert merge: {e}");
            2
        }
    }
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// SHA-256 of a file's bytes (empty when it cannot be read).
pub fn file_digest(path: &Path) -> String {
    std::fs::read(path)
        .map(|b| hex(&Sha256::digest(b)))
        .unwrap_or_default()
}

/// SHA-256 of a suite directory: every file's relative path and bytes, by path.
pub fn suite_digest(dir: &Path) -> String {
    fn walk(base: &Path, dir: &Path, out: &mut Vec<(String, Vec<u8>)>) {
        for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
            let p = entry.path();
            if p.is_dir() {
                walk(base, &p, out);
            } else if let Ok(bytes) = std::fs::read(&p) {
                let rel = p.strip_prefix(base).unwrap_or(&p).display().to_string();
                out.push((rel, bytes));
            }
        }
    }
    let mut files = Vec::new();
    walk(dir, dir, &mut files);
    files.sort();
    let mut h = Sha256::new();
    for (name, bytes) in files {
        h.update(name.as_bytes());
        h.update([0]);
        h.update((bytes.len() as u64).to_be_bytes());
        h.update(&bytes);
    }
    hex(&h.finalize())
}

/// How a report names itself in a merge: its path, shard and contracts.
fn label(path: &Path, r: &ReportJson) -> String {
    let shard = r
        .run
        .shard
        .as_deref()
        .map(|s| format!(" shard {s}"))
        .unwrap_or_default();
    format!("{} ({}{shard})", path.display(), r.run.contracts.join(", "))
}

/// Refuses a field on which two inputs differ, naming both values and reports.
fn same(
    what: &str,
    inputs: &[(PathBuf, ReportJson)],
    f: impl Fn(&RunJson) -> String,
) -> Result<(), String> {
    let (p0, r0) = &inputs[0];
    for (p, r) in &inputs[1..] {
        if f(&r.run) != f(&r0.run) {
            return Err(format!(
                "the reports differ in {what}: {} has {:?}, {} has {:?}; merge only reports of one kit, suite and profile",
                p0.display(),
                f(&r0.run),
                p.display(),
                f(&r.run)
            ));
        }
    }
    Ok(())
}

fn check(inputs: &[(PathBuf, ReportJson)]) -> Result<(), String> {
    same("kit version", inputs, |r| r.suite_version.to_string())?;
    same("profile", inputs, |r| r.profile.clone())?;
    same("profile file contents (SHA-256)", inputs, |r| {
        r.profile_sha256.clone()
    })?;
    same("implementation", inputs, |r| r.implementation.clone())?;
    let mut suites: BTreeMap<&str, (&Path, &str)> = BTreeMap::new();
    for (p, r) in inputs {
        for (c, digest) in &r.run.suites {
            match suites.get(c) {
                Some((p0, d0)) if *d0 != digest => {
                    return Err(format!(
                        "the reports ran different {c} suites: {} has SHA-256 {d0}, {} has {digest}; merge only reports of one kit, suite and profile",
                        p0.display(),
                        p.display()
                    ))
                }
                _ => {
                    suites.insert(c, (p, digest));
                }
            }
        }
    }
    // Shards of one selection (contracts and tags) must all be there, each once.
    type Selection<'a> = (Vec<&'a str>, Option<&'a str>);
    let mut groups: BTreeMap<Selection, Vec<(&str, &Path)>> = BTreeMap::new();
    for (p, r) in inputs {
        if let Some(s) = r.run.shard.as_deref() {
            let key = (r.run.contracts.clone(), r.run.tags.as_deref());
            groups.entry(key).or_default().push((s, p));
        }
    }
    for ((contracts, _), shards) in groups {
        let count = shards[0].0.split('/').nth(1).unwrap_or("?");
        let mut seen = BTreeSet::new();
        for (s, p) in &shards {
            if s.split('/').nth(1) != Some(count) {
                return Err(format!(
                    "{} is shard {s} but {} is shard {} (of {count}): shards of one run must share N",
                    p.display(),
                    shards[0].1.display(),
                    shards[0].0
                ));
            }
            if !seen.insert(*s) {
                return Err(format!(
                    "shard {s} of {} is given twice",
                    contracts.join(", ")
                ));
            }
        }
        let n: u32 = count.parse().unwrap_or(0);
        let missing: Vec<String> = (1..=n)
            .map(|k| format!("{k}/{n}"))
            .filter(|k| !seen.contains(k.as_str()))
            .collect();
        if !missing.is_empty() {
            return Err(format!(
                "shard {} of {} is missing: a merge of some shards is not the run",
                missing.join(", "),
                contracts.join(", ")
            ));
        }
    }
    Ok(())
}

fn contract_rank(name: &str) -> usize {
    Contract::ALL
        .iter()
        .position(|c| c.name() == name)
        .unwrap_or(usize::MAX)
}

/// The merged report of `inputs` (already read), without writing it.
pub fn merge(inputs: &[(PathBuf, ReportJson)]) -> Result<Report, String> {
    check(inputs)?;
    let mut scenarios: Vec<ScenarioJson> = Vec::new();
    let mut from: BTreeMap<String, &Path> = BTreeMap::new();
    for (p, r) in inputs {
        for s in &r.scenarios {
            let id =
                super::shard::scenario_id(s.contract, &s.feature, &s.name, s.example.as_deref());
            let key = format!("{id}\u{1f}{}", s.line);
            if let Some(first) = from.insert(key, p) {
                return Err(format!(
                    "{}: {} / {} is in both {} and {}: merge shards or separate contracts, not overlapping runs",
                    s.contract,
                    s.row,
                    s.display_name(),
                    first.display(),
                    p.display()
                ));
            }
            scenarios.push(s.clone());
        }
    }
    scenarios.sort_by(|a, b| {
        (contract_rank(a.contract), &a.feature, a.line).cmp(&(
            contract_rank(b.contract),
            &b.feature,
            b.line,
        ))
    });
    let mut contracts: Vec<&'static str> = Vec::new();
    let mut templates: Vec<ClauseJson> = Vec::new();
    let mut parts_claimed = BTreeMap::new();
    let mut liveness: BTreeMap<String, (usize, usize)> = BTreeMap::new();
    for (_, r) in inputs {
        for c in &r.run.contracts {
            if !contracts.contains(c) {
                contracts.push(c);
                templates.extend(r.clauses.iter().filter(|k| k.contract == *c).map(|k| {
                    ClauseJson {
                        note: k.note.clone().filter(|n| n != NO_SCENARIO_NOTE),
                        ..k.clone()
                    }
                }));
            }
        }
        for (c, parts) in &r.run.parts_claimed {
            parts_claimed.insert(*c, parts.clone());
        }
        for (kind, (accepted, refused)) in &r.run.liveness_counts {
            let e = liveness.entry(kind.clone()).or_default();
            e.0 += accepted;
            e.1 += refused;
        }
    }
    contracts.sort_by_key(|c| contract_rank(c));
    templates.sort_by_key(|k| contract_rank(k.contract));
    let first = &inputs[0].1.run;
    let tags: BTreeSet<Option<&String>> = inputs.iter().map(|(_, r)| r.run.tags.as_ref()).collect();
    let repeats: BTreeSet<Option<u32>> = inputs.iter().map(|(_, r)| r.run.repeat).collect();
    let run = RunJson {
        suite_version: first.suite_version,
        rfc: first.rfc,
        contracts,
        profile: first.profile.clone(),
        profile_path: first.profile_path.clone(),
        implementation: first.implementation.clone(),
        started_at: inputs
            .iter()
            .map(|(_, r)| r.run.started_at.clone())
            .min()
            .unwrap_or_default(),
        // Shards run side by side: the merged run took as long as its longest shard.
        duration_ms: inputs
            .iter()
            .map(|(_, r)| r.run.duration_ms)
            .max()
            .unwrap_or(0),
        concurrency: inputs
            .iter()
            .map(|(_, r)| r.run.concurrency)
            .max()
            .unwrap_or(1),
        result: "fail",
        problems: Vec::new(),
        parts: BTreeMap::new(),
        parts_failing: BTreeMap::new(),
        parts_claimed,
        liveness: Vec::new(),
        liveness_counts: liveness,
        counts: BTreeMap::new(),
        shard: None,
        merged: inputs.iter().map(|(p, r)| label(p, r)).collect(),
        tags: (tags.len() == 1).then(|| first.tags.clone()).flatten(),
        repeat: (repeats.len() == 1).then_some(first.repeat).flatten(),
        baseline: None,
        profile_sha256: first.profile_sha256.clone(),
        suites: inputs
            .iter()
            .flat_map(|(_, r)| r.run.suites.clone())
            .collect(),
    };
    Ok(super::assemble::assemble(run, scenarios, &templates))
}

/// Reads the reports in `dirs`, merges them into `out` with their cucumber logs and
/// reproduction directories, and writes every format.
pub fn merge_dirs(dirs: &[PathBuf], out: &Path) -> Result<Report, String> {
    let inputs: Vec<(PathBuf, ReportJson)> = dirs
        .iter()
        .map(|d| Ok((d.clone(), load::report(d)?)))
        .collect::<Result<_, String>>()?;
    let rep = merge(&inputs)?;
    std::fs::create_dir_all(out).map_err(|e| format!("cannot create {}: {e}", out.display()))?;
    for contract in &rep.json.run.contracts {
        let mut log = String::new();
        let mut features: Vec<serde_json::Value> = Vec::new();
        for (p, r) in inputs
            .iter()
            .filter(|(_, r)| r.run.contracts.contains(contract))
        {
            let dir = load::json_path(p)
                .parent()
                .map(Path::to_path_buf)
                .unwrap_or_default();
            if let Ok(text) = std::fs::read_to_string(dir.join(format!("cucumber-{contract}.log")))
            {
                log += &format!("# {}\n{text}", label(p, r));
            }
            let json = std::fs::read_to_string(dir.join(format!("cucumber-{contract}.json")));
            if let Ok(serde_json::Value::Array(fs)) =
                json.map(|t| serde_json::from_str(&t).unwrap_or_default())
            {
                features.extend(fs);
            }
            for s in r.scenarios.iter().filter(|s| s.contract == *contract) {
                if let Some(rel) = s.evidence.as_ref().and_then(|e| e.reproduce.as_deref()) {
                    copy_tree(&dir.join(rel), &out.join(rel))?;
                }
            }
        }
        let w = |name: String, body: String| {
            std::fs::write(out.join(&name), body).map_err(|e| format!("cannot write {name}: {e}"))
        };
        w(format!("cucumber-{contract}.log"), log)?;
        w(
            format!("cucumber-{contract}.json"),
            serde_json::Value::Array(features).to_string(),
        )?;
    }
    super::report_files::write(out, &rep)?;
    Ok(rep)
}

fn copy_tree(from: &Path, to: &Path) -> Result<(), String> {
    if from == to || !from.exists() {
        return Ok(());
    }
    if from.is_dir() {
        std::fs::create_dir_all(to).map_err(|e| format!("cannot create {}: {e}", to.display()))?;
        for e in
            std::fs::read_dir(from).map_err(|e| format!("cannot read {}: {e}", from.display()))?
        {
            let e = e.map_err(|e| e.to_string())?;
            copy_tree(&e.path(), &to.join(e.file_name()))?;
        }
        Ok(())
    } else {
        std::fs::copy(from, to)
            .map(drop)
            .map_err(|e| format!("cannot copy {} to {}: {e}", from.display(), to.display()))
    }
}
