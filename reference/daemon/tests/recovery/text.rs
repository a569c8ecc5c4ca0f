//! Terminal text: capture from the primary screen, literal hydration, secret exclusion, lifetimes and the text-off purges.

use super::*;

fn plain_of(cp: &vx_format::Checkpoint, pane: usize) -> Option<vx_format::PlainText> {
    match &cp.panes[pane].text {
        vx_format::Text::Plain(t) => Some(t.clone()),
        _ => None,
    }
}

fn read_checkpoint(d: &Daemon, id: &str) -> vx_format::Checkpoint {
    let bytes = std::fs::read(store_dir(d).join(format!("{id}.json"))).unwrap();
    vx_format::read(&bytes, &vx_format::ReadContext::default())
        .expect("valid checkpoint")
        .checkpoint
}

#[test]
fn plain_text_is_captured_from_the_primary_screen_and_hydrated_literally() {
    let mut d = Daemon::start_with_config(Some(PLAIN));
    let pane = d.pane(
        r#"["/bin/sh","-c","printf 'one\\ntwo\\n\\033[31mred\\033[0m \\344\\270\\226\\n'; printf '\\033[?1049h\\033[HALTSCREEN'; exec sleep 600"]"#,
    );
    d.wait_text(&pane, |r| r == "red 世");
    let id = d.ok(&["recovery", "checkpoint"])["checkpoint"]
        .as_str()
        .unwrap()
        .to_string();
    let file = std::fs::read_to_string(store_dir(&d).join(format!("{id}.json"))).unwrap();
    assert!(file.contains("red 世"), "plain rows are in the file");
    assert!(
        !file.contains("ALTSCREEN"),
        "the alternate screen is never saved"
    );
    assert!(!file.contains("[31m"), "no escape sequences");
    crash_and_restart(&mut d);
    let i = d.ok(&["recovery", "inspect", "--checkpoint", &id]);
    assert_eq!(
        (i["text_panes"].clone(), i["expired_text_panes"].clone()),
        (json!(1), json!(0))
    );
    let r = d.ok(&["recovery", "restore", "--checkpoint", &id]);
    let p = r["panes"][0]["current"].as_str().unwrap();
    let c = d.capture(p);
    assert_eq!(c["screen"][0], "one");
    assert_eq!(c["screen"][1], "two");
    assert_eq!(c["screen"][2], "red 世");
    assert_eq!(c["recovery"]["text_state"], "plain");
    assert_eq!(c["recovery"]["cut_rows"], 0);
}

#[test]
fn text_off_stores_no_terminal_bytes_and_secrets_never_reach_the_file() {
    let d = Daemon::start_with_config(Some(ENABLED));
    let s = d.ok(&["session", "create", "--name", "s"])["session"]
        .as_str()
        .unwrap()
        .to_string();
    let w = d.ok(&["window", "create", "--session", &s, "--name", "w"])["window"]
        .as_str()
        .unwrap()
        .to_string();
    let p = d.ok(&[
        "pane",
        "create",
        "--window",
        &w,
        "--argv",
        r#"["/bin/sh","-c","echo SCREEN-CANARY; exec sleep 600","ARGV-CANARY"]"#,
    ]);
    let pane = p["pane"].as_str().unwrap();
    let pid = p["pid"].as_i64().unwrap();
    let principal = p["principal"].as_str().unwrap();
    d.wait_text(pane, |r| r == "SCREEN-CANARY");
    let id = d.ok(&["recovery", "checkpoint"])["checkpoint"]
        .as_str()
        .unwrap()
        .to_string();
    let file = std::fs::read_to_string(store_dir(&d).join(format!("{id}.json"))).unwrap();
    let token = std::fs::read_to_string(format!("{}.owner", d.socket.display())).unwrap();
    for canary in [
        "SCREEN-CANARY",
        "ARGV-CANARY",
        "/bin/sh",
        token.trim(),
        &format!(":{pid},"),
        principal,
        d.dir.path().to_str().unwrap().trim_end_matches('/'),
    ] {
        // The socket path is the one allowed path (RFC §4 `socket`).
        let without_socket = file.replace(d.socket.to_str().unwrap(), "");
        assert!(!without_socket.contains(canary), "{canary} leaked");
    }
    assert!(file.contains("\\\"availability\\\":\\\"omitted\\\""));
}

#[test]
fn reload_from_plain_to_off_purges_text_checkpoints_first() {
    let d = Daemon::start_with_config(Some(PLAIN));
    let pane = d.pane(r#"["/bin/sh","-c","echo hello; exec sleep 600"]"#);
    d.wait_text(&pane, |r| r == "hello");
    d.ok(&["recovery", "checkpoint"]);
    assert_eq!(checkpoint_files(&d).len(), 1);
    std::fs::write(d.config_path(), ENABLED).unwrap();
    d.ok(&["config", "reload"]);
    assert!(checkpoint_files(&d).is_empty(), "text checkpoints are gone");
    assert_eq!(
        d.ok(&["config", "get", "--key", "recovery.terminal_text"])["value"],
        "off"
    );
    // Topology-only checkpoints survive a later reload.
    let id = d.ok(&["recovery", "checkpoint"])["checkpoint"].clone();
    d.ok(&["config", "reload"]);
    assert_eq!(
        d.ok(&["recovery", "list"])["checkpoints"][0]["checkpoint"],
        id
    );
}

#[test]
fn archived_text_keeps_its_original_lifetime_and_expires_in_place() {
    let config = ".{ .recovery = .{ .enabled = true, .interval_ms = 3600000, \
                  .terminal_text = .plain, .text_max_age_seconds = 8 } }";
    let mut d = Daemon::start_with_config(Some(config));
    let pane = d.pane(r#"["/bin/sh","-c","echo kept; exec sleep 600"]"#);
    d.wait_text(&pane, |r| r == "kept");
    let id = d.ok(&["recovery", "checkpoint"])["checkpoint"]
        .as_str()
        .unwrap()
        .to_string();
    let original = plain_of(&read_checkpoint(&d, &id), 0).expect("plain text");
    assert_eq!(original.expires_at.0 - original.saved_at.0, 8000);
    crash_and_restart(&mut d);
    let r = d.ok(&["recovery", "restore", "--checkpoint", &id]);
    let archive = r["panes"][0]["current"].as_str().unwrap().to_string();
    assert_eq!(d.capture(&archive)["screen"][0], "kept");
    // Recheckpointing the archive keeps saved_at/expires_at: never renewed.
    let again = d.ok(&["recovery", "checkpoint"])["checkpoint"]
        .as_str()
        .unwrap()
        .to_string();
    let rewritten = plain_of(&read_checkpoint(&d, &again), 0).expect("still plain");
    assert_eq!(
        (rewritten.saved_at, rewritten.expires_at),
        (original.saved_at, original.expires_at)
    );
    assert_eq!(rewritten.screen[0], "kept");
    // Past the expiry the live archive's text is discarded.
    let wait = original.expires_at.0 - vx_store::clock::now().0 + 200;
    std::thread::sleep(Duration::from_millis(wait.max(0) as u64));
    let c = d.capture(&archive);
    assert_eq!(c["recovery"]["text_state"], "expired");
    assert!(c["screen"].as_array().unwrap().iter().all(|r| r == ""));
    assert!(c["history"].as_array().unwrap().is_empty());
    let last = d.ok(&["recovery", "checkpoint"])["checkpoint"]
        .as_str()
        .unwrap()
        .to_string();
    assert_eq!(
        read_checkpoint(&d, &last).panes[0].text,
        vx_format::Text::Expired
    );
    // Restoring the first checkpoint now: the topology comes back, the text does not.
    crash_and_restart(&mut d);
    let i = d.ok(&["recovery", "inspect", "--checkpoint", &id]);
    assert_eq!(
        (i["text_panes"].clone(), i["expired_text_panes"].clone()),
        (json!(0), json!(1))
    );
    let r = d.ok(&["recovery", "restore", "--checkpoint", &id]);
    let c = d.capture(r["panes"][0]["current"].as_str().unwrap());
    assert_eq!(c["recovery"]["text_state"], "expired");
    assert!(c["screen"].as_array().unwrap().iter().all(|r| r == ""));
}

#[test]
fn rows_wider_than_the_saved_columns_are_cut_and_counted() {
    let d = Daemon::start_with_config(Some(PLAIN));
    d.ok(&["recovery", "list"]);
    let mut pane = record(0, None, &[]);
    pane.cols = 5;
    pane.rows = 2;
    let now = vx_store::clock::now();
    pane.text = vx_format::Text::Plain(vx_format::PlainText {
        saved_at: now,
        expires_at: vx_format::Timestamp(now.0 + 3_600_000),
        screen: vec!["[2J".into(), "abcdefgh".into()],
        history: vec!["界界界".into(), "ok".into()],
    });
    let id = plant(
        &d,
        fixture(vec![pane], vec![vx_format::Node::Pane { pane: 0 }]),
        vx_format::Format::V1,
    );
    let r = d.ok(&["recovery", "restore", "--checkpoint", &id]);
    let c = d.capture(r["panes"][0]["current"].as_str().unwrap());
    assert_eq!(c["screen"], json!(["[2J", "abcde"]));
    assert_eq!(
        c["history"],
        json!(["界界", "ok"]),
        "a wide cell never splits"
    );
    assert_eq!(c["recovery"]["cut_rows"], 2);
    assert_eq!(c["recovery"]["text_state"], "plain");
}

#[test]
fn starting_with_text_off_deletes_text_checkpoints_but_keeps_evidence() {
    let mut d = Daemon::start_with_config(Some(PLAIN));
    let s = d.ok(&["session", "create", "--name", "s"])["session"]
        .as_str()
        .unwrap()
        .to_string();
    // No pane yet: a checkpoint without text.
    let topology_only = d.ok(&["recovery", "checkpoint"])["checkpoint"].clone();
    let w = d.ok(&["window", "create", "--session", &s, "--name", "w"])["window"]
        .as_str()
        .unwrap()
        .to_string();
    let pane = d.ok(&[
        "pane",
        "create",
        "--window",
        &w,
        "--argv",
        r#"["/bin/sh","-c","echo hello; exec sleep 600"]"#,
    ])["pane"]
        .as_str()
        .unwrap()
        .to_string();
    d.wait_text(&pane, |r| r == "hello");
    d.ok(&["recovery", "checkpoint"]);
    let bad = store_dir(&d).join("c11111111-2222-4333-8444-555555555555.json");
    std::fs::write(&bad, b"{}").unwrap();
    use std::os::unix::fs::PermissionsExt as _;
    std::fs::set_permissions(&bad, std::fs::Permissions::from_mode(0o600)).unwrap();
    assert_eq!(checkpoint_files(&d).len(), 3);
    let mut child = d.child.take().unwrap();
    signal(child.id(), "KILL");
    let _ = child.wait();
    std::fs::write(d.config_path(), ENABLED).unwrap();
    d.child = Some(d.spawn_serve(&[]));
    d.wait_ready();
    let list = d.ok(&["recovery", "list"]);
    assert_eq!(
        list["checkpoints"],
        json!([
            {"checkpoint": topology_only, "status": "valid", "generation": 1},
            {"checkpoint": "c11111111-2222-4333-8444-555555555555", "status": "corrupt"},
        ])
    );
}
