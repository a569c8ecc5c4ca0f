//! Shared by the integration tests and the benchmark: checkpoint states built with
//! the model, store directories in temporary directories, file helpers.
#![allow(dead_code)]

use std::ffi::OsStr;
use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};

use vx_format::{Axis, Checkpoint, Format, Node, Pane, PaneState, PlainText, Session, Shutdown, Text, Timestamp, Window};
use vx_store::{Store, StoreConfig, StoreLocation};

/// 2026-11-06T22:00:00.000Z, the RFC's example capture time.
pub const T0: Timestamp = Timestamp(1_794_002_400_000);
pub const HOUR_MS: i64 = 3_600_000;
pub const DAY_MS: i64 = 86_400_000;

pub fn uid() -> u64 {
    u64::from(nix::unistd::geteuid().as_raw())
}

/// A state of `panes` tiled panes in windows of up to 10 panes (a right-leaning
/// chain of column splits), captured at `captured_at`, each pane with 24 rows of
/// plain text when `with_text`. The four store-owned fields are placeholders.
pub fn state(panes: usize, captured_at: Timestamp, with_text: bool) -> Checkpoint {
    let mut windows = Vec::new();
    let mut pane_records = Vec::new();
    let mut next_pane = 0u64;
    let window_count = panes.div_ceil(10).max(1);
    for w in 0..window_count as u64 {
        let in_window = (panes - (w as usize * 10).min(panes)).min(10) as u64;
        let first = next_pane;
        let nodes = chain(first, in_window);
        for k in 0..in_window {
            let text = if with_text {
                Text::Plain(PlainText {
                    saved_at: captured_at,
                    expires_at: Timestamp(captured_at.0 + DAY_MS),
                    screen: (0..24).map(|r| format!("row {r} of pane {} $ ls -la /usr/share/doc", first + k)).collect(),
                    history: vec!["earlier output".to_string(); 10],
                })
            } else {
                Text::Omitted
            };
            pane_records.push(Pane {
                id: first + k,
                window: w,
                session: 0,
                cols: 80,
                rows: 24,
                state: PaneState::Running,
                previous_state: None,
                float: None,
                tags: Vec::new(),
                text,
            });
        }
        next_pane += in_window;
        windows.push(Window { id: w, session: 0, name: format!("window-{w}"), revision: 1, nodes });
    }
    Checkpoint {
        checkpoint: "c00000000-0000-4000-8000-000000000000".to_string(),
        generation: 1,
        socket: "/placeholder.sock".to_string(),
        uid: 0,
        captured_at,
        shutdown: Shutdown::Open,
        sessions: vec![Session { id: 0, name: "work".to_string() }],
        windows,
        panes: pane_records,
    }
}

/// Preorder nodes of a right-leaning chain of `n` panes starting at `first`.
fn chain(first: u64, n: u64) -> Vec<Node> {
    let mut nodes = Vec::new();
    for k in 0..n {
        if k + 1 < n {
            let index = nodes.len();
            nodes.push(Node::Split { axis: Axis::Cols, first: index + 1, second: index + 2, ratio: None });
        }
        nodes.push(Node::Pane { pane: first + k });
    }
    nodes
}

/// A store for a socket in a fresh temporary directory; keep the `TempDir` alive.
pub struct TestStore {
    pub tmp: tempfile::TempDir,
    pub location: StoreLocation,
    pub store: Store,
}

impl TestStore {
    pub fn new() -> TestStore {
        Self::with_config(StoreConfig::default())
    }

    pub fn with_config(config: StoreConfig) -> TestStore {
        let tmp = tempfile::tempdir().unwrap();
        let state_home = tmp.path().join("state");
        let location = StoreLocation::resolve(Some(state_home.as_os_str()), None, &tmp.path().join("vx.sock")).unwrap();
        let store = Store::open(&location, uid(), config).unwrap();
        TestStore { tmp, location, store }
    }

    pub fn dir(&self) -> PathBuf {
        self.location.dir()
    }

    pub fn path_of(&self, id: &str) -> PathBuf {
        self.dir().join(format!("{id}.json"))
    }

    /// Writes a checkpoint file directly (not through publish), as another
    /// implementation or a test fixture would: 0600, the store's identity.
    pub fn plant(&self, generation: u64, captured_at: Timestamp) -> String {
        let mut cp = state(2, captured_at, false);
        self.plant_state(generation, &mut cp)
    }

    pub fn plant_state(&self, generation: u64, cp: &mut Checkpoint) -> String {
        let id = vx_store::names::new_checkpoint_id().unwrap();
        cp.checkpoint = id.clone();
        cp.generation = generation;
        cp.socket = self.location.socket.clone();
        cp.uid = uid();
        let bytes = vx_format::write(cp, Format::CURRENT).unwrap();
        write_private(&self.path_of(&id), &bytes);
        id
    }

    /// Names of the entries in the store directory, sorted.
    pub fn entries(&self) -> Vec<String> {
        let mut names: Vec<String> =
            std::fs::read_dir(self.dir()).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
        names.sort();
        names
    }
}

pub fn write_private(path: &Path, bytes: &[u8]) {
    use std::io::Write;
    let mut f = std::fs::OpenOptions::new().write(true).create_new(true).mode(0o600).open(path).unwrap();
    f.write_all(bytes).unwrap();
    // The process umask never adds bits; make the mode exact regardless.
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o600)).unwrap();
}

pub fn os(s: &str) -> &OsStr {
    OsStr::new(s)
}
