//! Real programs on PTYs: capture text rules, the alternate screen, exits, input,
//! resize, argv0.

mod common;
use common::*;
use serde_json::Value;

fn rows(c: &Value, key: &str) -> Vec<String> {
    c[key]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r.as_str().unwrap().to_string())
        .collect()
}

#[test]
fn printf_escapes_tabs_and_wide_characters_capture_as_plain_rows() {
    let d = Daemon::start();
    let pane = d.pane(r#"["printf","a\tb\u001b[31mred\u001b[0m\r\n\u754c|\u0007bell\r\n"]"#);
    let c = d.wait_exited(&pane);
    let screen = rows(&c, "screen");
    assert_eq!(screen.len(), 24, "exactly rows entries");
    assert_eq!(screen[0], "a       bred");
    assert_eq!(screen[1], "\u{754c}|bell");
    for r in &screen {
        assert!(
            !r.chars()
                .any(|ch| (ch as u32) < 0x20 || (0x7f..=0x9f).contains(&(ch as u32))),
            "{r:?}"
        );
    }
    assert_eq!(c["exit_code"], 0);
}

#[test]
fn capture_reads_the_primary_screen_while_the_alternate_screen_is_active() {
    let d = Daemon::start();
    let marker = d.dir.path().join("alt-written");
    let script = format!(
        "echo primary-text; printf '\\033[?1049h\\033[Halternate-text\\n'; touch {}; sleep 300",
        marker.display()
    );
    let pane = d.pane(&serde_json::json!(["sh", "-c", script]).to_string());
    d.wait_text(&pane, |r| r == "primary-text");
    poll("alternate output written", || marker.exists().then_some(()));
    // The PTY output is read asynchronously; sample the capture for a while.
    for _ in 0..10 {
        std::thread::sleep(std::time::Duration::from_millis(30));
        let c = d.capture(&pane);
        let all: Vec<String> = rows(&c, "screen")
            .into_iter()
            .chain(rows(&c, "history"))
            .collect();
        assert!(all.iter().any(|r| r == "primary-text"), "{all:?}");
        assert!(!all.iter().any(|r| r.contains("alternate-text")), "{all:?}");
        assert_eq!(c["exited"], false);
    }
}

#[test]
fn exit_codes_and_signals_are_recorded_and_exited_panes_retained() {
    let d = Daemon::start();
    let coded = d.pane(r#"["sh","-c","exit 7"]"#);
    let c = d.wait_exited(&coded);
    assert_eq!(c["exit_code"], 7);
    assert!(c.get("signal").is_none());

    let killed = d.pane(r#"["sh","-c","kill -KILL $$"]"#);
    let c = d.wait_exited(&killed);
    assert_eq!(c["signal"], "SIGKILL");
    assert!(c.get("exit_code").is_none());

    let list = d.ok(&["pane", "list"]);
    let states: Vec<&str> = list["panes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["state"].as_str().unwrap())
        .collect();
    assert_eq!(states, ["exited", "exited"]);
    let (code, v) = d.owner(&["pane", "send", "--pane", &coded, "--text", "x"]);
    assert_eq!(
        (code, v["error"]["code"].as_str()),
        (5, Some("conflict.exited"))
    );
}

#[test]
fn cat_echoes_sent_input() {
    let d = Daemon::start();
    let pane = d.pane(r#"["cat"]"#);
    d.ok(&["pane", "send", "--pane", &pane, "--text", "hello cat\n"]);
    // The tty echoes the line and cat writes it back: wait for both, since the echo
    // can be on screen before cat's copy is.
    let start = std::time::Instant::now();
    let count = loop {
        let c = d.wait_text(&pane, |r| r == "hello cat");
        let n = rows(&c, "screen")
            .iter()
            .filter(|r| *r == "hello cat")
            .count();
        if n >= 2 || start.elapsed() > std::time::Duration::from_secs(10) {
            break n;
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    };
    assert_eq!(count, 2);
}

#[test]
fn resize_reaches_the_program_as_sigwinch() {
    let d = Daemon::start();
    let pane = d.pane(r#"["sh","-c","trap 'echo size=$(stty size)' WINCH; echo ready; while :; do sleep 0.05; done"]"#);
    d.wait_text(&pane, |r| r == "ready");
    let r = d.ok(&[
        "pane", "resize", "--pane", &pane, "--cols", "100", "--rows", "30",
    ]);
    assert_eq!(
        (r["cols"].as_u64(), r["rows"].as_u64()),
        (Some(100), Some(30))
    );
    let c = d.wait_text(&pane, |r| r == "size=30 100");
    assert_eq!(rows(&c, "screen").len(), 30);
}

#[test]
fn argv0_is_the_only_part_of_argv_that_appears() {
    let d = Daemon::start();
    let dir = d.dir.path().join("CANARYDIR");
    std::fs::create_dir_all(&dir).unwrap();
    let program = dir.join("tool");
    std::fs::write(&program, "#!/bin/sh\nexit 0\n").unwrap();
    std::fs::set_permissions(
        &program,
        std::os::unix::fs::PermissionsExt::from_mode(0o755),
    )
    .unwrap();
    let argv = serde_json::json!([program.to_str().unwrap(), "CANARYARG"]).to_string();
    let pane = d.pane(&argv);
    d.wait_exited(&pane);
    let list = d.ok(&["pane", "list"]).to_string();
    assert!(list.contains("\"argv0\":\"tool\""), "{list}");
    assert!(!list.contains("CANARY"), "{list}");
    let sessions = d.ok(&["session", "list"]).to_string();
    assert!(!sessions.contains("CANARY"));
    // A failed spawn's error carries no argv either.
    let w = d.ok(&["window", "create", "--session", "s0", "--name", "w2"]);
    let (code, err) = d.owner(&[
        "pane",
        "create",
        "--window",
        w["window"].as_str().unwrap(),
        "--argv",
        r#"["/CANARYDIR/missing","CANARYARG"]"#,
    ]);
    assert_eq!(code, 6);
    assert_eq!(err["error"]["code"], "unavailable.spawn");
    assert!(!err.to_string().contains("CANARY"));
}

#[test]
fn long_output_scrolls_into_history_oldest_first() {
    let d = Daemon::start();
    let pane =
        d.pane(r#"["sh","-c","i=0; while [ $i -lt 60 ]; do echo line$i; i=$((i+1)); done"]"#);
    let c = d.wait_exited(&pane);
    let history = rows(&c, "history");
    let screen = rows(&c, "screen");
    let all: Vec<&String> = history
        .iter()
        .chain(screen.iter())
        .filter(|r| r.starts_with("line"))
        .collect();
    assert_eq!(all.len(), 60);
    assert_eq!(all[0], "line0");
    assert_eq!(all[59], "line59");
}
