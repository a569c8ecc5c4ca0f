//! `vxref pane attach` as a person uses it: in a terminal, here a pane of a private
//! tmux server (`tmux -L <unique> -f /dev/null`, its socket in a temp dir, killed at
//! the end). A script in that pane saves `stty -g`, runs the attach, then saves
//! `stty -g`, `stty -a` and the attach's exit code, so each test sees what the
//! terminal was left in. The keys are typed with `send-keys`; what the terminal shows
//! is read with `capture-pane -p`.
//!
//! Without tmux the tests print why and pass, unless `VXREF_REQUIRE_TMUX` is set
//! (CI sets it), when they fail.

mod common;
use common::*;
use nix::sys::signal::Signal;
use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Instant;

/// The terminal's size when the attach starts, and after the resize: neither is the
/// daemon's default window size (80×24), so each one seen on the pane came from here.
const START: (u16, u16) = (97, 29);
const RESIZED: (u16, u16) = (91, 21);

/// A pane program that shows a line, then answers every line it reads.
const ECHO_ARGV: &str =
    r#"["/bin/sh","-c","echo snapshot-mark; while read -r l; do echo \"got:$l\"; done"]"#;

fn tmux_available() -> bool {
    let found = Command::new("tmux")
        .arg("-V")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    if !found {
        assert!(
            std::env::var_os("VXREF_REQUIRE_TMUX").is_none(),
            "tmux is not installed and VXREF_REQUIRE_TMUX is set"
        );
        eprintln!("skipped: tmux is not installed (set VXREF_REQUIRE_TMUX=1 to fail instead)");
    }
    found
}

/// Runs `cmd` to completion, killing it after [`TIMEOUT`].
fn bounded(mut cmd: Command) -> Output {
    let child = cmd
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn tmux");
    let pid = child.id();
    let start = Instant::now();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(child.wait_with_output());
    });
    loop {
        if let Ok(out) = rx.try_recv() {
            return out.expect("tmux output");
        }
        if start.elapsed() > TIMEOUT {
            let _ = nix::sys::signal::kill(nix::unistd::Pid::from_raw(pid as i32), Signal::SIGKILL);
            panic!("tmux did not finish in time");
        }
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
}

/// A private tmux server whose one pane runs `vxref pane attach` in a script.
struct Tmux {
    name: String,
    dir: tempfile::TempDir,
    /// The server's and the pane shell's process ids, killed if still alive on drop.
    pids: Vec<i64>,
}

impl Tmux {
    /// Starts the server with a `START`-sized session whose pane attaches to `pane`.
    fn attach(d: &Daemon, pane: &str) -> Tmux {
        static SERVERS: AtomicUsize = AtomicUsize::new(0);
        let name = format!(
            "vxref-attach-{}-{}",
            std::process::id(),
            SERVERS.fetch_add(1, Ordering::Relaxed)
        );
        let mut t = Tmux {
            name,
            dir: tempfile::tempdir().expect("tempdir"),
            pids: Vec::new(),
        };
        let script = t.dir.path().join("attach.sh");
        std::fs::write(&script, t.script(d, pane)).unwrap();
        let (cols, rows) = START;
        let out = t.run(&[
            "new-session",
            "-d",
            "-s",
            "attach",
            "-x",
            &cols.to_string(),
            "-y",
            &rows.to_string(),
            &format!("/bin/sh {}", script.display()),
        ]);
        assert!(out.status.success(), "tmux new-session: {out:?}");
        for format in ["#{pid}", "#{pane_pid}"] {
            let out = t.run(&["display-message", "-p", "-t", "attach", format]);
            let pid: Option<i64> = String::from_utf8_lossy(&out.stdout).trim().parse().ok();
            t.pids.extend(pid);
        }
        t
    }

    fn script(&self, d: &Daemon, pane: &str) -> String {
        let q = |p: &Path| format!("'{}'", p.display());
        let out = self.dir.path();
        format!(
            "echo $$ > {shell}\n\
             stty -g > {before}\n\
             VENOMX_TOKEN=@owner {bin} --socket {socket} pane attach --pane {pane}\n\
             rc=$?\n\
             stty -g > {after}\n\
             stty -a > {all}\n\
             echo \"$rc\" > {rc}.tmp && mv {rc}.tmp {rc}\n\
             exec sleep 600\n",
            shell = q(&out.join("shell.pid")),
            before = q(&out.join("stty.before")),
            after = q(&out.join("stty.after")),
            all = q(&out.join("stty.all")),
            rc = q(&out.join("rc")),
            bin = q(Path::new(BIN)),
            socket = q(&d.socket),
        )
    }

    fn run(&self, args: &[&str]) -> Output {
        let mut cmd = Command::new("tmux");
        env_for(&mut cmd, self.dir.path());
        cmd.env("TMUX_TMPDIR", self.dir.path())
            .env("SHELL", "/bin/sh")
            .env("TERM", "xterm-256color")
            .args(["-L", &self.name, "-f", "/dev/null"])
            .args(args);
        bounded(cmd)
    }

    /// What the terminal shows now.
    fn screen(&self) -> String {
        let out = self.run(&["capture-pane", "-p", "-t", "attach"]);
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    fn wait_screen(&self, what: &str) -> String {
        poll(what, || {
            let s = self.screen();
            s.contains(what).then_some(s)
        })
    }

    /// Types `text` literally, then Enter.
    fn type_line(&self, text: &str) {
        assert!(self
            .run(&["send-keys", "-t", "attach", "-l", text])
            .status
            .success());
        assert!(self
            .run(&["send-keys", "-t", "attach", "Enter"])
            .status
            .success());
    }

    fn keys(&self, keys: &[&str]) {
        let mut args = vec!["send-keys", "-t", "attach"];
        args.extend_from_slice(keys);
        assert!(self.run(&args).status.success());
    }

    fn resize(&self, (cols, rows): (u16, u16)) {
        let out = self.run(&[
            "resize-window",
            "-t",
            "attach",
            "-x",
            &cols.to_string(),
            "-y",
            &rows.to_string(),
        ]);
        assert!(out.status.success(), "tmux resize-window: {out:?}");
    }

    /// The attach's exit code, once the script has recorded it.
    fn exit_code(&self) -> i32 {
        let path = self.dir.path().join("rc");
        let text = poll("the attach to exit", || std::fs::read_to_string(&path).ok());
        text.trim().parse().expect("exit code")
    }

    fn file(&self, name: &str) -> String {
        std::fs::read_to_string(self.dir.path().join(name)).expect(name)
    }

    /// The terminal settings after the attach are the ones before it, and cooked.
    fn assert_restored(&self) {
        assert_eq!(
            self.file("stty.before"),
            self.file("stty.after"),
            "stty -g differs after the attach"
        );
        let all = self.file("stty.all");
        let words: Vec<&str> = all.split(|c: char| c.is_whitespace() || c == ';').collect();
        for flag in ["icanon", "echo", "isig", "opost"] {
            assert!(
                words.contains(&flag),
                "{flag} is not set after the attach: {all}"
            );
        }
    }

    /// The process id of the attach: the script shell's one child.
    fn attach_pid(&self) -> i32 {
        let shell = self.file("shell.pid");
        let shell = shell.trim();
        poll("the attach process", || {
            let children =
                std::fs::read_to_string(format!("/proc/{shell}/task/{shell}/children")).ok()?;
            children.split_whitespace().next()?.parse().ok()
        })
    }
}

impl Drop for Tmux {
    fn drop(&mut self) {
        let _ = self.run(&["kill-server"]);
        let script = std::fs::read_to_string(self.dir.path().join("shell.pid"));
        let script = script.ok().and_then(|s| s.trim().parse().ok());
        for &pid in self.pids.iter().chain(&script) {
            if process_alive(pid) {
                let _ =
                    nix::sys::signal::kill(nix::unistd::Pid::from_raw(pid as i32), Signal::SIGKILL);
            }
        }
    }
}

fn pane_entry(d: &Daemon, pane: &str) -> serde_json::Value {
    let list = d.ok(&["pane", "list"]);
    let entry = list["panes"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["pane"] == pane);
    entry
        .cloned()
        .unwrap_or_else(|| panic!("{pane} is not listed: {list}"))
}

fn wait_size(d: &Daemon, pane: &str, (cols, rows): (u16, u16)) {
    poll("the pane's size", || {
        let p = pane_entry(d, pane);
        (p["cols"] == cols && p["rows"] == rows).then_some(())
    });
}

/// A daemon with one pane running `argv`, its first line already on the pane's
/// screen (so it reaches the terminal as the snapshot, not as live output).
fn daemon_with_pane(argv: &str, mark: &str) -> (Daemon, String) {
    let d = Daemon::start();
    let pane = d.pane(argv);
    d.wait_text(&pane, |row| row.contains(mark));
    (d, pane)
}

#[test]
fn attach_shows_the_pane_types_resizes_and_detaches_leaving_it_running() {
    if !tmux_available() {
        return;
    }
    let (d, pane) = daemon_with_pane(ECHO_ARGV, "snapshot-mark");
    let t = Tmux::attach(&d, &pane);
    t.wait_screen("snapshot-mark");
    // The terminal's size reached the pane's window when the attach started.
    wait_size(&d, &pane, START);

    t.type_line("hello-typed");
    let screen = t.wait_screen("got:hello-typed");
    // Raw mode: the terminal does not echo, so the typed line shows once, from the
    // pane's own terminal echo, and the answer once.
    assert_eq!(screen.matches("hello-typed").count(), 2, "{screen}");

    t.resize(RESIZED);
    wait_size(&d, &pane, RESIZED);

    t.keys(&["C-\\", "d"]);
    assert_eq!(t.exit_code(), 0, "{}", t.screen());
    t.assert_restored();
    t.wait_screen(&format!(
        "vxref: detached from pane {pane}; it keeps running"
    ));

    assert_eq!(pane_entry(&d, &pane)["state"], "running");
    d.ok(&["pane", "send", "--pane", &pane, "--text", "after-detach\n"]);
    d.wait_text(&pane, |row| row.contains("got:after-detach"));
}

#[test]
fn a_ctrl_backslash_not_followed_by_d_goes_to_the_pane() {
    if !tmux_available() {
        return;
    }
    // `od -c` shows what the pane's program read: FS (Ctrl-\) as `034`.
    let argv = r#"["/bin/sh","-c","stty raw -echo; echo snapshot-mark; dd bs=1 count=2 2>/dev/null | od -c | head -1; sleep 600"]"#;
    let (d, pane) = daemon_with_pane(argv, "snapshot-mark");
    let t = Tmux::attach(&d, &pane);
    t.wait_screen("snapshot-mark");
    t.keys(&["C-\\", "x"]);
    t.wait_screen("034   x");
    assert_eq!(pane_entry(&d, &pane)["state"], "running");
    t.keys(&["C-\\", "d"]);
    assert_eq!(t.exit_code(), 0);
    t.assert_restored();
}

#[test]
fn the_pane_exiting_ends_the_attach_and_restores_the_terminal() {
    if !tmux_available() {
        return;
    }
    let argv = r#"["/bin/sh","-c","echo exit-mark; read -r l; echo \"bye:$l\"; exit 3"]"#;
    let (d, pane) = daemon_with_pane(argv, "exit-mark");
    let t = Tmux::attach(&d, &pane);
    t.wait_screen("exit-mark");
    t.type_line("x");
    assert_eq!(t.exit_code(), 0, "{}", t.screen());
    t.assert_restored();
    let screen = t.wait_screen(&format!("vxref: pane {pane} exited (exit code 3)"));
    assert!(screen.contains("bye:x"), "{screen}");
}

#[test]
fn the_daemon_shutting_down_ends_the_attach_and_restores_the_terminal() {
    if !tmux_available() {
        return;
    }
    let (mut d, pane) = daemon_with_pane(ECHO_ARGV, "snapshot-mark");
    let t = Tmux::attach(&d, &pane);
    t.wait_screen("snapshot-mark");
    d.stop();
    let code = t.exit_code();
    t.assert_restored();
    t.wait_screen("vxref: unavailable.shutdown: daemon is shutting down");
    assert_eq!(code, vxref::errors::ErrorCode::Shutdown.exit_code());
}

#[test]
fn sigterm_and_sighup_end_the_attach_and_restore_the_terminal() {
    if !tmux_available() {
        return;
    }
    let (d, pane) = daemon_with_pane(ECHO_ARGV, "snapshot-mark");
    for signal in [Signal::SIGTERM, Signal::SIGHUP] {
        let t = Tmux::attach(&d, &pane);
        t.wait_screen("snapshot-mark");
        let pid = nix::unistd::Pid::from_raw(t.attach_pid());
        nix::sys::signal::kill(pid, signal).expect("signal the attach");
        assert_eq!(t.exit_code(), 128 + signal as i32, "{}", t.screen());
        t.assert_restored();
        t.wait_screen(&format!("vxref: ended by {}", signal.as_str()));
        assert_eq!(pane_entry(&d, &pane)["state"], "running");
    }
}

#[test]
fn a_viewer_that_fell_behind_reattaches_and_goes_on() {
    if !tmux_available() {
        return;
    }
    // `flood` writes 4 MB at once: more than the pane's ring (1 MiB) and the socket's
    // buffers, so an attach that is not reading falls out of the ring.
    let argv = r#"["/bin/sh","-c","echo snapshot-mark; while read -r l; do if [ \"$l\" = flood ]; then head -c 4000000 /dev/zero | tr '\\0' x; echo; echo flood-done; else echo \"got:$l\"; fi; done"]"#;
    let (d, pane) = daemon_with_pane(argv, "snapshot-mark");
    let t = Tmux::attach(&d, &pane);
    t.wait_screen("snapshot-mark");
    let pid = nix::unistd::Pid::from_raw(t.attach_pid());
    nix::sys::signal::kill(pid, Signal::SIGSTOP).expect("stop the attach");
    d.ok(&["pane", "send", "--pane", &pane, "--text", "flood\n"]);
    d.wait_text(&pane, |row| row.contains("flood-done"));
    nix::sys::signal::kill(pid, Signal::SIGCONT).expect("continue the attach");
    t.wait_screen("flood-done");
    t.type_line("after-flood");
    t.wait_screen("got:after-flood");
    assert!(
        !t.dir.path().join("rc").exists(),
        "the attach ended: {}",
        t.screen()
    );
    t.keys(&["C-\\", "d"]);
    assert_eq!(t.exit_code(), 0, "{}", t.screen());
    t.assert_restored();
}

#[test]
fn without_a_terminal_the_attach_is_refused_with_its_code() {
    let d = Daemon::start();
    let pane = d.pane(r#"["/bin/cat"]"#);
    // `owner` runs the CLI with standard input from /dev/null and `--json`.
    let (code, v) = d.owner(&["pane", "attach", "--pane", &pane]);
    assert_eq!(v["error"]["code"], "unavailable.terminal", "{v}");
    assert_eq!(code, vxref::errors::ErrorCode::Terminal.exit_code());
    assert_ne!(code, 0);
    let out = d.cli_as(Some("@owner"), &["pane", "attach", "--pane", &pane]);
    assert!(
        out.stderr.is_empty(),
        "--json puts the error on stdout only"
    );
}
