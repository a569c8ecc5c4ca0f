//! One session-persist scenario's state: its sandbox, its pods, the blobs it packed,
//! what the implementation's last command said, and (for store rows) the store
//! adapter it talks to.

use super::pods::{self, Entry};
use super::store_adapter::StoreAdapter;
use crate::drivers::sandbox::{self, Placeholders};
use crate::profile::{context, Profile};
use crate::verdict::OrHarness;
use serde::Deserialize;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Stdio;

/// The `[persist]` profile table: command templates and the stores to judge. Every
/// key may be absent; [`Templates::of`] requires the keys of each part the profile
/// claims ([`PART_KEYS`]).
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Templates {
    /// One blob's verdict (`{file}`), the pinned file verdict line.
    #[serde(default)]
    pub blob_check: Vec<String>,
    /// Packs `{id}` of `{backend}` from `{root}` into `{file}`.
    #[serde(default)]
    pub pack: Vec<String>,
    /// Unpacks `{file}` as `{id}` of `{backend}` into `{root}`.
    #[serde(default)]
    pub unpack: Vec<String>,
    /// Prints `true` or `false`: whether `{root}` holds session `{id}` of `{backend}`.
    #[serde(default)]
    pub has_session: Vec<String>,
    /// The store adapter (docs/spec/persist-store-adapter.md) over `{store}`.
    #[serde(default)]
    pub store_adapter: Vec<String>,
    /// The filesystem store's spec, e.g. `fs:{state_home}/persist`.
    #[serde(default)]
    pub store: String,
    /// The S3 twins the store rows also run on; each one's spec is
    /// `s3:` + `$VXPERSIST_S3_<NAME>` (an endpoint URL with the bucket as its path).
    #[serde(default)]
    pub s3_twins: Vec<String>,
    /// The header member's name, when the implementation renames it.
    #[serde(default = "default_header_member")]
    pub header_member: String,
    /// The runtime driven over the drive protocol (docs/spec/persist-drive.md);
    /// `{state_home}` is its state directory.
    #[serde(default)]
    pub drive: Vec<String>,
    /// The implementation's own layouts document (the schema of
    /// `persist/layouts.toml`), relative to the profile's directory: the sessions the
    /// kit plants, the blobs it writes and the files it expects then follow it.
    /// Default: the kit's.
    #[serde(default)]
    pub layouts: String,
}

/// The kit's header member name (pin sp-pin-header-member), which its corpus uses.
pub const KIT_HEADER_MEMBER: &str = ".session-header.json";

fn default_header_member() -> String {
    KIT_HEADER_MEMBER.into()
}

/// The keys each part of the contract needs (`parts = [...]` in `[persist]`).
pub const PART_KEYS: [(&str, &[&str]); 4] = [
    ("packer", &["pack", "unpack", "has_session"]),
    ("checker", &["blob_check"]),
    ("store", &["store_adapter", "store"]),
    ("runtime", &["drive"]),
];

impl Templates {
    pub fn of(profile: &Profile) -> Result<Templates, String> {
        use crate::contract::Contract;
        let table = profile
            .persist
            .clone()
            .ok_or("the profile has no [persist] table")?;
        let t: Templates = toml::Value::Table(table.clone())
            .try_into()
            .map_err(|e| format!("the profile's [persist] table: {e}"))?;
        let mut missing = Vec::new();
        for (part, keys) in PART_KEYS {
            if !profile.claims_part(Contract::SessionPersist, part) {
                continue;
            }
            for key in keys.iter().filter(|k| !table.contains_key(**k)) {
                missing.push(format!("`{key}` (part {part})"));
            }
        }
        if !t.layouts.is_empty() {
            let text = std::fs::read_to_string(&t.layouts)
                .map_err(|e| format!("the profile's [persist] layouts {}: {e}", t.layouts))?;
            super::layout::parse(&text)
                .map_err(|e| format!("the profile's [persist] layouts {}: {e}", t.layouts))?;
        }
        if missing.is_empty() {
            Ok(t)
        } else {
            Err(format!(
                "the profile's [persist] table lacks {}: give each, or leave its part out of \
                 `parts = [...]` (claimed: {})",
                missing.join(", "),
                profile.claimed_parts(Contract::SessionPersist).join(", ")
            ))
        }
    }

    /// Whether the profile claims `part` of session-persist.
    pub fn claims(part: &str) -> bool {
        context()
            .profile
            .claims_part(crate::contract::Contract::SessionPersist, part)
    }
}

/// What one command of the implementation did.
#[derive(Debug, Clone)]
pub struct Ran {
    /// The exit status; `None` when a signal ended it.
    pub exit: Option<i32>,
    pub stdout: String,
}

/// A pod's state before a command, to prove what the command changed.
pub struct Before {
    pub pod: String,
    pub inside: BTreeMap<String, Entry>,
    pub outside: BTreeMap<String, Entry>,
}

/// The session the kit planted in a pod, and every file it holds.
#[derive(Debug, Clone)]
pub struct Planted {
    pub backend: String,
    pub id: String,
    /// The key file (the transcript HasSession looks for).
    pub key: String,
    pub files: BTreeMap<String, Vec<u8>>,
}

/// One point of a crash sweep: the unpack killed at its `k`-th rename (or not).
#[derive(Debug, Clone)]
pub struct SweepPoint {
    pub k: usize,
    /// The unpack's exit status; `None` when the injector killed it.
    pub exit: Option<i32>,
    /// What HasSession said of the pod afterwards.
    pub has_session: bool,
    /// Whether the pod then held exactly the session's files, byte for byte.
    pub whole: bool,
    /// Whether it held none of them.
    pub none: bool,
    /// Whether it still held, untouched, the earlier copy of the session the sweep
    /// planted first (false when it planted none).
    pub old_whole: bool,
}

/// One scenario.
pub struct Persist {
    dir: crate::drivers::sandbox::SandboxDir,
    pub ph: Placeholders,
    pub t: Templates,
    /// The session each pod was planted with.
    pub planted: BTreeMap<String, Planted>,
    pub sweep: Vec<SweepPoint>,
    /// The blob the scenario works with (packed, or copied from the corpus).
    pub blob: Option<PathBuf>,
    blobs: usize,
    pub last: Option<Ran>,
    pub before: Option<Before>,
    pub store: Option<StoreAdapter>,
    /// The run id the store rows use (fresh per scenario, so shared twins stay clean).
    pub store_run: Option<String>,
    pub store_reply: Option<super::store_adapter::Reply>,
    pub proxy: Option<crate::drivers::reply_loss::ReplyLossProxy>,
    pub drive: Option<super::drive::Drive>,
    /// Refs the scenario named (`"A"` → `w/pause/01J…`).
    pub kept: BTreeMap<String, String>,
    /// The checkpoint a fork wrote.
    pub forked: Option<serde_json::Value>,
    /// What the scenario did to each pod's planted session (a defect, files over a
    /// cap), with the session's files before: a pack's valid twin is planted with those.
    pub variations: BTreeMap<String, Variation>,
    /// HasSession asked of a pod before a defect, kept as the control of a later
    /// "has no session".
    pub before_defect: BTreeMap<String, crate::evidence::Control>,
    /// What the offline blob checker said of the scenario's blob, and which corpus
    /// blob it was.
    pub checked: Option<crate::drivers::checker::Said>,
    pub checked_corpus: Option<String>,
    /// A fault plan the next commands run under (the crash and fault sweeps), through
    /// the profile's `fault_backend`.
    pub injection: Option<crate::drivers::fault::Injection>,
    /// The cap the scenario's input is one over, and its pod (the corpus file on a
    /// checker row): a refusal's step judges an acceptance against the caps pin
    /// (`caps::judge_accepted`).
    pub over_cap: Option<(super::caps::Cap, String)>,
    /// The backend, session id and defect of an over-cap blob an unpack row wrote.
    pub over_cap_blob: Option<(String, String, String)>,
    /// The pod the control unpacked the kit's valid blob into: what an unpack of a
    /// defective twin may leave at most.
    pub control_pod: Option<String>,
}

/// What a scenario changed in a pod's planted session.
#[derive(Debug, Clone)]
pub struct Variation {
    pub what: Vec<String>,
    /// The planted session's files before the first change.
    pub base: BTreeMap<String, Vec<u8>>,
}

/// Session-persist rows record their commands and pods as they run.
impl crate::drivers::step::OnFailure for Persist {}

impl Persist {
    pub fn new() -> Persist {
        let (dir, mut ph) = sandbox::create(context().bin_dir.clone());
        ph.store = ph.state_home.join("persist");
        let t = Templates::of(&context().profile).or_harness("the profile's [persist] table");
        Persist {
            dir,
            ph,
            t,
            planted: BTreeMap::new(),
            sweep: Vec::new(),
            blob: None,
            blobs: 0,
            last: None,
            injection: None,
            before: None,
            store: None,
            store_run: None,
            store_reply: None,
            proxy: None,
            drive: None,
            kept: BTreeMap::new(),
            forked: None,
            variations: BTreeMap::new(),
            before_defect: BTreeMap::new(),
            checked: None,
            checked_corpus: None,
            over_cap: None,
            over_cap_blob: None,
            control_pod: None,
        }
    }

    pub fn sandbox(&self) -> &Path {
        self.dir.path()
    }

    /// The pod's root, made 0700 on first use.
    pub fn pod(&self, name: &str) -> PathBuf {
        let p = self.dir.path().join("pods").join(name);
        pods::make_private_dirs(&p);
        p
    }

    /// A new blob file name (nothing there yet).
    pub fn new_blob_path(&mut self) -> PathBuf {
        self.blobs += 1;
        let dir = self.dir.path().join("blobs");
        pods::make_private_dirs(&dir);
        dir.join(format!("blob-{}.tar", self.blobs))
    }

    /// Runs a template with the session placeholders filled in.
    pub fn run(
        &mut self,
        template: &[String],
        fill: &[(&str, &str)],
        env: &[(String, String)],
    ) -> &Ran {
        if template.is_empty() {
            crate::harness_error!("the profile's [persist] table names no command for this step");
        }
        let words: Vec<String> = template
            .iter()
            .map(|w| {
                fill.iter()
                    .fold(w.clone(), |w, (k, v)| w.replace(&format!("{{{k}}}"), v))
            })
            .collect();
        let mut cmd = sandbox::command(&self.ph, &words, env, self.dir.path());
        let sup = self.injection.as_ref().and_then(|i| i.apply(&mut cmd));
        let out = crate::evidence::output(cmd.stdin(Stdio::null()));
        crate::drivers::fault::spawned_and_done(sup);
        let out = out.or_harness("running the implementation's command");
        self.last = Some(Ran {
            exit: out.status.code(),
            stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        });
        self.last()
    }

    pub fn last(&self) -> &Ran {
        self.last
            .as_ref()
            .or_harness("no command of the implementation ran in this scenario")
    }

    /// Asks the implementation whether `pod` holds session `id` of `backend`.
    pub fn has_session(&mut self, pod: &str, backend: &str, id: &str) -> bool {
        self.ask_has_session(pod, backend, id)
            .unwrap_or_else(|said| {
                crate::evidence::fail(
                    Some("sp-hassession-root"),
                    "has-session to print true or false and exit 0",
                    said,
                )
            })
    }

    /// HasSession's answer, or what it said instead of `true` or `false` with exit 0.
    pub fn ask_has_session(&mut self, pod: &str, backend: &str, id: &str) -> Result<bool, String> {
        let root = self.pod(pod).to_string_lossy().into_owned();
        let t = self.t.has_session.clone();
        let said = self.run(
            &t,
            &[("backend", backend), ("root", &root), ("id", id)],
            &[],
        );
        match (said.exit, said.stdout.trim()) {
            (Some(0), "true") => Ok(true),
            (Some(0), "false") => Ok(false),
            (exit, out) => Err(format!("exit {exit:?} with stdout {out:?}")),
        }
    }

    /// Records that the scenario changed pod's planted session (`what`), keeping its
    /// files from before the first change.
    pub fn vary(&mut self, pod: &str, what: String) {
        let base = self.planted(pod).files.clone();
        self.variations
            .entry(pod.to_string())
            .or_insert_with(|| Variation {
                what: Vec::new(),
                base,
            })
            .what
            .push(what);
    }

    /// Asks HasSession of a planted pod before a defect, kept for a later refusal.
    pub fn keep_has_session_before_defect(&mut self, pod: &str) {
        let Some(p) = self.planted.get(pod).cloned() else {
            return;
        };
        let said = self.ask_has_session(pod, &p.backend, &p.id);
        let commands = crate::evidence::last_command().into_iter().collect();
        self.before_defect.insert(
            pod.to_string(),
            crate::evidence::Control {
                what: format!(
                    "HasSession of pod {pod}'s {} session {:?} before the defect",
                    p.backend, p.id
                ),
                accepted: said == Ok(true),
                observed: match said {
                    Ok(b) => format!("HasSession {b}"),
                    Err(e) => format!("has-session {e}"),
                },
                commands,
            },
        );
    }

    /// Keeps the pod's tree and everything else in the sandbox, before a command.
    pub fn keep_before(&mut self, pod: &str) {
        let root = self.pod(pod);
        self.before = Some(Before {
            pod: pod.to_string(),
            inside: pods::snapshot(&root),
            outside: self.outside(pod),
        });
    }

    /// The sandbox but the pod (and the blobs the kit writes).
    pub fn outside(&self, pod: &str) -> BTreeMap<String, Entry> {
        let inside = format!("pods/{pod}/");
        let mut snap = pods::snapshot(self.dir.path());
        snap.retain(|k, _| !k.starts_with(&inside) && !k.starts_with("blobs/"));
        snap
    }

    pub fn planted(&self, pod: &str) -> &Planted {
        self.planted
            .get(pod)
            .or_harness("the scenario planted no session in that pod")
    }

    /// The blob the scenario works with.
    pub fn blob(&self) -> PathBuf {
        self.blob
            .clone()
            .or_harness("no blob was packed or chosen in this scenario")
    }

    /// The drive, started on first use.
    pub fn drive(&mut self) -> &mut super::drive::Drive {
        if self.drive.is_none() {
            if self.t.drive.is_empty() {
                crate::harness_error!("the profile's [persist] table names no drive");
            }
            let d = super::drive::Drive::start(&self.ph, &self.t.drive, self.dir.path());
            self.drive = Some(d);
        }
        self.drive.as_mut().or_harness("the drive")
    }

    /// A ref the scenario kept under `name`.
    pub fn kept(&self, name: &str) -> String {
        self.kept
            .get(name)
            .cloned()
            .or_harness("the scenario kept no ref of that name")
    }

    /// The next commands run `template`'s program under `plan` (traced into `trace`),
    /// through the profile's `fault_backend`, until [`Persist::injection`] is cleared.
    pub fn inject(&mut self, template: &[String], plan: &str, trace: Option<&Path>) {
        let i = crate::drivers::fault::Injection::plan(&self.ph, template, plan, trace);
        self.injection = Some(i);
    }

    pub fn before(&self) -> &Before {
        self.before
            .as_ref()
            .or_harness("no command was watched in this scenario")
    }
}

#[cfg(test)]
mod tests {
    use super::Templates;

    fn profile(persist: &str) -> crate::profile::Profile {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("p.toml");
        std::fs::write(
            &p,
            format!("name = \"x\"\ncontracts = [\"session-persist\"]\n[persist]\n{persist}"),
        )
        .unwrap();
        crate::profile::Profile::load(&p).unwrap()
    }

    /// A key is required only when its part is claimed, and a missing one is named
    /// with its part.
    #[test]
    fn a_key_is_required_only_for_a_claimed_part() {
        let packer = "pack = [\"p\"]\nunpack = [\"u\"]\nhas_session = [\"h\"]\n";
        let t = Templates::of(&profile(&format!("parts = [\"packer\"]\n{packer}"))).unwrap();
        assert!(t.blob_check.is_empty() && t.drive.is_empty() && t.store.is_empty());
        assert_eq!(t.header_member, ".session-header.json");
        let e = Templates::of(&profile(
            "parts = [\"packer\", \"checker\"]\npack = [\"p\"]\n",
        ))
        .unwrap_err();
        for named in [
            "`unpack` (part packer)",
            "`has_session` (part packer)",
            "`blob_check` (part checker)",
        ] {
            assert!(e.contains(named), "{e}");
        }
        assert!(!e.contains("drive"), "{e}");
        // No parts: every part is claimed, so every part's keys are required.
        let e = Templates::of(&profile(packer)).unwrap_err();
        for named in [
            "`blob_check` (part checker)",
            "`store_adapter` (part store)",
            "`store` (part store)",
            "`drive` (part runtime)",
        ] {
            assert!(e.contains(named), "{e}");
        }
    }
}
