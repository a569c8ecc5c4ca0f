//! Live steps of the open's re-probe (sw-recheck: a master appears while the broker
//! waits for the lock) and of the master's explicit modes (sw-mode-explicit: the
//! profile's create-only and attach-only commands on a path the suite prepared).

use std::io::Read;
use std::os::unix::fs::{FileTypeExt, MetadataExt};
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use cucumber::{given, then, when};

use crate::drivers::broker_ws::{restarting, Viewer};
use crate::drivers::{poll, scaled};
use crate::single_writer::live::{Live, WAIT_MS};
use crate::single_writer::World;
use crate::verdict::OrHarness;

/// A listener of the suite's own at a socket path: it accepts every connection, and
/// one that sends anything (a master hello: the broker ATTACHed) is counted and
/// closed, so the broker ends that viewer's stream. A bare `connect()` (a liveness
/// probe) sends nothing.
pub struct SuiteListener {
    pub path: PathBuf,
    pub ino: u64,
    pub attached: Arc<AtomicUsize>,
    stop: Arc<AtomicBool>,
}

impl SuiteListener {
    fn bind(path: &Path) -> std::io::Result<SuiteListener> {
        let listener = UnixListener::bind(path)?;
        listener.set_nonblocking(true)?;
        let ino = std::fs::symlink_metadata(path)?.ino();
        let attached = Arc::new(AtomicUsize::new(0));
        let stop = Arc::new(AtomicBool::new(false));
        let (seen, halt) = (attached.clone(), stop.clone());
        std::thread::spawn(move || {
            let until = Instant::now() + scaled(4 * WAIT_MS);
            while !halt.load(Ordering::Relaxed) && Instant::now() < until {
                let Ok((mut conn, _)) = listener.accept() else {
                    std::thread::sleep(Duration::from_millis(10));
                    continue;
                };
                let _ = conn.set_nonblocking(false);
                let _ = conn.set_read_timeout(Some(Duration::from_millis(300)));
                let mut b = [0u8; 64];
                if matches!(restarting(|| conn.read(&mut b)), Ok(1..)) {
                    seen.fetch_add(1, Ordering::Relaxed);
                }
            }
        });
        Ok(SuiteListener {
            path: path.to_path_buf(),
            ino,
            attached,
            stop,
        })
    }
}

impl Drop for SuiteListener {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
    }
}

/// What a planted regular file holds.
const PLANTED: &[u8] = b"not a socket\n";
/// How long a master that must fail may take to exit (scaled).
const FAIL_MS: u64 = 3_000;

#[when(regex = r#"^viewer (\w+) starts opening "([^"]+)" with "([^"]*)"$"#)]
async fn starts_opening(w: &mut World, c: &[String]) {
    w.run(c, None, |s, c| {
        let live = s.live();
        let socket = live.broker_socket(0);
        let route = live.route(&c[2], &c[3]);
        let thread = std::thread::spawn(move || {
            let mut v = Viewer::open(&socket, &route);
            if let Ok(v) = &mut v {
                v.pump(scaled(WAIT_MS), |v| {
                    v.close.is_some() || !v.frames("seq").is_empty()
                });
            }
            v
        });
        live.opening = Some((c[1].to_string(), thread));
    })
    .await;
}

#[when(
    regex = r#"^a listener of the suite takes the socket of "([^"]+)" while the broker waits for its lock$"#
)]
async fn listener_in_the_gap(w: &mut World, c: &[String]) {
    w.run(c, None, |s, c| {
        let live = s.live();
        let lock = live.lock_file(&c[1]);
        // The lock file exists once the broker opened it; its flock is delayed by
        // the fault plan, so its probe is behind it and its acquire not done.
        poll("the broker to open the lock file", scaled(WAIT_MS), || {
            lock.exists().then_some(())
        });
        let path = live.session_socket(&c[1], 0);
        let listener = SuiteListener::bind(&path).unwrap_or_else(|e| {
            panic!("the socket path was taken before the broker's acquire returned: {e}")
        });
        live.listener = Some(listener);
    })
    .await;
}

#[then(regex = r"^viewer (\w+)'s open has ended$")]
async fn open_ended(w: &mut World, c: &[String]) {
    w.run(c, None, |s, c| {
        let (name, thread) = s.live().opening.take().or_harness("no open in flight");
        assert_eq!(name, c[1], "the open in flight is another viewer's");
        let _ = thread
            .join()
            .unwrap_or_else(|_| crate::harness_error!("the opening thread panicked"));
    })
    .await;
}

#[then(regex = r"^the broker attached to the suite's listener$")]
async fn attached_to_listener(w: &mut World) {
    w.run(&[], None, |s, _| {
        let l = s
            .live()
            .listener
            .as_ref()
            .or_harness("no listener of the suite");
        // The viewer's open has ended, but the broker's attach may still be on its
        // way (seen 1 ms after a single read): a positive witness, bounded.
        let attached = crate::drivers::wait_until(scaled(WAIT_MS), || {
            let n = l.attached.load(Ordering::Relaxed);
            (n > 0, n)
        });
        assert!(
            attached > 0,
            "no connection to the suite's listener said a word within {} ms: the broker never attached",
            scaled(WAIT_MS).as_millis()
        );
    })
    .await;
}

#[then(regex = r#"^the suite's listener still has the socket of "([^"]+)"$"#)]
async fn listener_kept(w: &mut World, c: &[String]) {
    w.run(c, None, |s, c| {
        let live = s.live();
        let path = live.session_socket(&c[1], 0);
        let l = live
            .listener
            .as_ref()
            .or_harness("no listener of the suite");
        assert_eq!(l.path, path, "the listener is at another path");
        let now = std::fs::symlink_metadata(&path).map(|m| m.ino()).ok();
        assert_eq!(
            now,
            Some(l.ino),
            "the live socket at the session's path was unlinked or replaced"
        );
        assert!(
            UnixStream::connect(&path).is_ok(),
            "the suite's listener no longer accepts"
        );
    })
    .await;
}

/// The path the mode rows prepare, in the sandbox.
fn master_path(live: &Live) -> PathBuf {
    let dir = live.sb.root.join("modes");
    std::fs::create_dir_all(&dir).or_harness("mkdir of the modes directory");
    dir.join("m.sock")
}

/// What is at `path`: its inode and, for a regular file, its bytes.
fn path_state(path: &std::path::Path) -> Option<(u64, Option<Vec<u8>>)> {
    let m = std::fs::symlink_metadata(path).ok()?;
    let bytes = m
        .file_type()
        .is_file()
        .then(|| std::fs::read(path).or_harness("reading the planted file"));
    Some((m.ino(), bytes))
}

#[given(
    regex = r"^(nothing|a regular file|a socket nobody listens on|a listener of the suite) is at the master path$"
)]
async fn prepare_master_path(w: &mut World, c: &[String]) {
    w.run(c, None, |s, c| {
        let live = s.live();
        let path = master_path(live);
        match &c[1] {
            "nothing" => {}
            "a regular file" => std::fs::write(&path, PLANTED).or_harness("planting a file"),
            "a socket nobody listens on" => {
                // Bound, then closed without a listener: a dead master's leftover.
                drop(UnixListener::bind(&path).or_harness("bind()"));
                assert!(std::fs::symlink_metadata(&path)
                    .or_harness("lstat")
                    .file_type()
                    .is_socket());
            }
            _ => live.listener = Some(SuiteListener::bind(&path).or_harness("bind()")),
        }
        live.noted_path = Some(path_state(&path));
    })
    .await;
}

#[when(regex = r"^the profile's (create-only|attach-only) master runs on the master path$")]
async fn master_runs(w: &mut World, c: &[String]) {
    w.run(c, None, |s, c| {
        let live = s.live();
        let template = if &c[1] == "create-only" {
            live.t.master_create.clone()
        } else {
            live.t.master_attach.clone()
        };
        if template.is_empty() {
            panic!(
                "the profile's [single_writer] table names no master_{} command",
                if &c[1] == "create-only" {
                    "create"
                } else {
                    "attach"
                }
            );
        }
        let path = master_path(live);
        let words: Vec<String> = template
            .iter()
            .map(|w| w.replace("{socket}", &path.to_string_lossy()))
            .collect();
        let tty = live.t.master_tty;
        live.start_command(&words, "the profile's master command", tty);
    })
    .await;
}

#[then(regex = r"^the master fails loud$")]
async fn fails_loud(w: &mut World) {
    w.run(&[], None, |s, _| {
        // A master that fails loud everywhere proves nothing by failing loud here.
        crate::evidence::require_accepted_control();
        let live = s.live();
        let mut running = live.running.take().or_harness("no master command ran");
        let limit = std::time::Instant::now() + scaled(FAIL_MS);
        let status = loop {
            if let Some(status) = running.0.try_wait().or_harness("waiting for the master") {
                break status;
            }
            if std::time::Instant::now() >= limit {
                panic!("the master kept running on a path it must refuse");
            }
            std::thread::sleep(Duration::from_millis(20));
        };
        let mut said = String::new();
        if let Some(mut e) = running.0.stderr.take() {
            let _ = e.read_to_string(&mut said);
        }
        if let Some(tty) = live.running_tty.clone() {
            // On a terminal: what the master wrote there, once the reader has it.
            let until = Instant::now() + scaled(2_000);
            loop {
                let out = tty.lock().unwrap_or_else(|p| p.into_inner()).clone();
                if !out.is_empty() || Instant::now() >= until {
                    said = String::from_utf8_lossy(&out).into_owned();
                    break;
                }
                std::thread::sleep(Duration::from_millis(20));
            }
        }
        assert!(!status.success(), "the master exited 0 ({status})");
        assert!(!said.trim().is_empty(), "the master failed without a word");
    })
    .await;
}

/// How long a foreground master must keep running once its socket accepts.
const FOREGROUND_MS: u64 = 300;

#[then(regex = r"^it serves on the master path$")]
async fn serves(w: &mut World) {
    w.run(&[], None, |s, _| {
        let live = s.live();
        let path = master_path(live);
        let daemonizes = live.t.master_daemonizes;
        let running = live.running.as_mut().or_harness("no master command ran");
        poll("the master to accept", scaled(WAIT_MS), || {
            if let Ok(Some(status)) = running.0.try_wait() {
                // A daemonizing master's foreground part leaves with 0 once it serves.
                if !(daemonizes && status.success()) {
                    panic!("the create-only master exited on a free path: {status}");
                }
            }
            UnixStream::connect(&path).is_ok().then_some(())
        });
        if !daemonizes {
            // A master in the foreground serves for as long as its command runs.
            std::thread::sleep(Duration::from_millis(FOREGROUND_MS));
            if let Ok(Some(status)) = running.0.try_wait() {
                panic!(
                    "the create-only master's command exited ({status}) while its socket \
                     serves: it daemonizes (the profile's master_daemonizes says it does not)"
                );
            }
        }
    })
    .await;
}

#[then(regex = r"^the master path is as it was$")]
async fn path_kept(w: &mut World) {
    w.run(&[], None, |s, _| {
        let live = s.live();
        let path = master_path(live);
        let was = live
            .noted_path
            .clone()
            .or_harness("the path was never noted");
        assert_eq!(
            path_state(&path),
            was,
            "what is at the master path changed (created, replaced or rewritten)"
        );
    })
    .await;
}
