//! Shared by the integration tests and the benchmark: checkpoint states built with
//! the model, store directories in temporary directories, file helpers.
#![allow(dead_code)]

use std::ffi::OsStr;
use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};

use vx_format::{
    Axis, Checkpoint, Format, Node, Pane, PaneState, PlainText, Session, Shutdown, Text, Timestamp,
    Window,
};
use vx_store::{Store, StoreConfig, StoreLocation};

/// 2026-11-06T22:00:00.000Z, the RFC's example capture time.
pub const T0: Timestamp = Timestamp(1_794_002_400_000);
pub const HOUR_MS: i64 = 3_600_000;
pub const DAY_MS: i64 = 86_400_000;

/// `T0` plus `ms` milliseconds.
pub fn at(ms: i64) -> Timestamp {
    Timestamp(T0.0 + ms)
}

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
                    screen: (0..24)
                        .map(|r| format!("row {r} of pane {} $ ls -la /usr/share/doc", first + k))
                        .collect(),
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
        windows.push(Window {
            id: w,
            session: 0,
            name: format!("window-{w}"),
            revision: 1,
            nodes,
        });
    }
    Checkpoint {
        checkpoint: "c00000000-0000-4000-8000-000000000000".to_string(),
        generation: 1,
        socket: "/placeholder.sock".to_string(),
        uid: 0,
        captured_at,
        shutdown: Shutdown::Open,
        sessions: vec![Session {
            id: 0,
            name: "work".to_string(),
        }],
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
            nodes.push(Node::Split {
                axis: Axis::Cols,
                first: index + 1,
                second: index + 2,
                ratio: None,
            });
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
        let location = StoreLocation::resolve(
            Some(state_home.as_os_str()),
            None,
            &tmp.path().join("vx.sock"),
        )
        .unwrap();
        let store = Store::open(&location, uid(), config).unwrap();
        TestStore {
            tmp,
            location,
            store,
        }
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
        let mut names: Vec<String> = std::fs::read_dir(self.dir())
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        names
    }
}

pub fn write_private(path: &Path, bytes: &[u8]) {
    use std::io::Write;
    let mut f = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(path)
        .unwrap();
    f.write_all(bytes).unwrap();
    // The process umask never adds bits; make the mode exact regardless.
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o600)).unwrap();
}

pub fn os(s: &str) -> &OsStr {
    OsStr::new(s)
}

/// The failure seam: real calls, except that chosen calls fail with an errno, every write may be cut short, and every write may first be
/// interrupted once. Shares its call log with the test through an `Arc`.
pub struct FaultyIo {
    pub inner: vx_store::io::SysIo,
    /// `(step, nth, errno)`: the nth call (1-based) of step fails with errno.
    pub fails: Vec<(vx_store::io::Step, usize, nix::errno::Errno)>,
    /// At most this many bytes per write call.
    pub short_writes: Option<usize>,
    /// Return EINTR before every real write.
    pub interrupt_writes: bool,
    pub log: std::sync::Arc<std::sync::Mutex<Vec<vx_store::io::Step>>>,
    interrupted: bool,
}

impl FaultyIo {
    pub fn new() -> FaultyIo {
        FaultyIo {
            inner: vx_store::io::SysIo,
            fails: Vec::new(),
            short_writes: None,
            interrupt_writes: false,
            log: Default::default(),
            interrupted: false,
        }
    }

    pub fn failing(step: vx_store::io::Step, nth: usize, errno: nix::errno::Errno) -> FaultyIo {
        FaultyIo {
            fails: vec![(step, nth, errno)],
            ..FaultyIo::new()
        }
    }

    /// Records the call; `Err` when this one is to fail.
    fn enter(&mut self, step: vx_store::io::Step) -> nix::Result<()> {
        let mut log = self.log.lock().unwrap();
        log.push(step);
        let count = log.iter().filter(|s| **s == step).count();
        match self
            .fails
            .iter()
            .find(|(s, nth, _)| *s == step && *nth == count)
        {
            Some(&(_, _, errno)) => Err(errno),
            None => Ok(()),
        }
    }
}

impl vx_store::io::Io for FaultyIo {
    fn create_exclusive(
        &mut self,
        dir: std::os::fd::BorrowedFd<'_>,
        name: &str,
        mode: u32,
    ) -> nix::Result<std::os::fd::OwnedFd> {
        self.enter(vx_store::io::Step::CreateTemp)?;
        self.inner.create_exclusive(dir, name, mode)
    }

    fn write(&mut self, fd: std::os::fd::BorrowedFd<'_>, buf: &[u8]) -> nix::Result<usize> {
        if self.interrupt_writes && !self.interrupted {
            self.interrupted = true;
            return Err(nix::errno::Errno::EINTR);
        }
        self.interrupted = false;
        self.enter(vx_store::io::Step::Write)?;
        let len = self.short_writes.map_or(buf.len(), |n| n.min(buf.len()));
        self.inner.write(fd, &buf[..len])
    }

    fn fsync_file(&mut self, fd: std::os::fd::BorrowedFd<'_>) -> nix::Result<()> {
        self.enter(vx_store::io::Step::FsyncFile)?;
        self.inner.fsync_file(fd)
    }

    fn close(&mut self, fd: std::os::fd::OwnedFd) -> nix::Result<()> {
        // The descriptor is released either way, as close(2) does on Linux.
        let real = self.inner.close(fd);
        self.enter(vx_store::io::Step::Close)?;
        real
    }

    fn rename_noreplace(
        &mut self,
        dir: std::os::fd::BorrowedFd<'_>,
        from: &str,
        to: &str,
    ) -> nix::Result<()> {
        self.enter(vx_store::io::Step::Rename)?;
        self.inner.rename_noreplace(dir, from, to)
    }

    fn fsync_dir(&mut self, dir: std::os::fd::BorrowedFd<'_>) -> nix::Result<()> {
        self.enter(vx_store::io::Step::FsyncDir)?;
        self.inner.fsync_dir(dir)
    }

    fn unlink(&mut self, dir: std::os::fd::BorrowedFd<'_>, name: &str) -> nix::Result<()> {
        self.enter(vx_store::io::Step::Unlink)?;
        self.inner.unlink(dir, name)
    }
}

impl TestStore {
    /// Swaps in a failure seam; returns the shared call log.
    pub fn use_io(
        &mut self,
        io: FaultyIo,
    ) -> std::sync::Arc<std::sync::Mutex<Vec<vx_store::io::Step>>> {
        let log = io.log.clone();
        self.store.set_io(Box::new(io));
        log
    }
}
