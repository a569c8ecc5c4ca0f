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

/// The `[persist]` profile table: command templates and the stores to judge.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Templates {
    /// One blob's verdict (`{file}`), the pinned file verdict line.
    pub blob_check: Vec<String>,
    /// Packs `{id}` of `{backend}` from `{root}` into `{file}`.
    pub pack: Vec<String>,
    /// Unpacks `{file}` as `{id}` of `{backend}` into `{root}`.
    pub unpack: Vec<String>,
    /// Prints `true` or `false`: whether `{root}` holds session `{id}` of `{backend}`.
    pub has_session: Vec<String>,
    /// The store adapter (docs/spec/persist-store-adapter.md) over `{store}`.
    pub store_adapter: Vec<String>,
    /// The filesystem store's spec, e.g. `fs:{state_home}/persist`.
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
}

fn default_header_member() -> String {
    ".session-header.json".into()
}

impl Templates {
    pub fn of(profile: &Profile) -> Result<Templates, String> {
        let table = profile
            .persist
            .clone()
            .ok_or("the profile has no [persist] table")?;
        toml::Value::Table(table)
            .try_into()
            .map_err(|e| format!("the profile's [persist] table: {e}"))
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
}

/// One scenario.
pub struct Persist {
    dir: tempfile::TempDir,
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
}

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
            before: None,
            store: None,
            store_run: None,
            store_reply: None,
            proxy: None,
            drive: None,
            kept: BTreeMap::new(),
            forked: None,
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
        let out = sandbox::command(&self.ph, &words, env, self.dir.path())
            .stdin(Stdio::null())
            .output()
            .or_harness("running the implementation's command");
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
        let root = self.pod(pod).to_string_lossy().into_owned();
        let t = self.t.has_session.clone();
        let said = self.run(
            &t,
            &[("backend", backend), ("root", &root), ("id", id)],
            &[],
        );
        match (said.exit, said.stdout.trim()) {
            (Some(0), "true") => true,
            (Some(0), "false") => false,
            _ => panic!(
                "has-session must print true or false and exit 0, exited {:?}",
                said.exit
            ),
        }
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

    /// The injector library the profile names (or the kit's), which must exist.
    pub fn fault_library(&self) -> String {
        crate::drivers::fault::library(&self.ph)
    }

    pub fn before(&self) -> &Before {
        self.before
            .as_ref()
            .or_harness("no command was watched in this scenario")
    }
}
