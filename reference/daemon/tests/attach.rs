//! `pane.attach` against real daemons: snapshot, READY and output frames with absolute
//! offsets; resume inside and outside the ring; several viewers; input, resize and
//! detach frames; EXIT and CLOSE reasons; archives and relaunch; stalled viewers.

mod common;
use common::*;
use serde_json::{json, Value};
use vxref::attach::client::{self, Attached, Frame};
use vxref::attach::frame;

const PLAIN: &str =
    ".{ .recovery = .{ .enabled = true, .interval_ms = 3600000, .terminal_text = .plain } }";

fn owner_token(d: &Daemon) -> String {
    std::fs::read_to_string(format!("{}.owner", d.socket.display()))
        .unwrap()
        .trim()
        .to_string()
}

fn attach_as(d: &Daemon, token: Option<&str>, pane: &str, resume: Option<(&str, u64)>) -> Attached {
    let a = client::attach(&d.socket, token, pane, resume)
        .unwrap_or_else(|e| panic!("attach failed: {e:?}"));
    a.set_read_timeout(Some(TIMEOUT)).unwrap();
    a
}

fn attach(d: &Daemon, pane: &str, resume: Option<(&str, u64)>) -> Attached {
    attach_as(d, Some(&owner_token(d)), pane, resume)
}

fn attach_error(d: &Daemon, token: Option<&str>, pane: &str, resume: Value) -> Value {
    let mut w = d.wire();
    if let Some(t) = token {
        let r = w.request(json!({"id":0,"verb":"auth.login","params":{"token":t}}));
        assert!(r.get("ok").is_some(), "{r}");
    }
    let mut params = json!({"pane": pane});
    if !resume.is_null() {
        params["resume"] = resume;
    }
    let r = w.request(json!({"id":1,"verb":"pane.attach","params":params}));
    r["error"].clone()
}

fn next(a: &mut Attached) -> Frame {
    a.read_frame()
        .expect("read frame")
        .expect("connection open")
}

/// The frames before the first output: the snapshot (if any), then READY.
fn until_ready(a: &mut Attached) -> Option<Vec<u8>> {
    match next(a) {
        Frame::Ready => None,
        Frame::Snapshot(s) => {
            assert_eq!(next(a), Frame::Ready, "READY follows the snapshot");
            Some(s)
        }
        other => panic!("expected a snapshot or READY, got {other:?}"),
    }
}

/// Output from `*offset` on, checked contiguous, until `done` holds for everything
/// read so far; other frames are errors.
fn output_until(a: &mut Attached, offset: &mut u64, done: impl Fn(&[u8]) -> bool) -> Vec<u8> {
    let mut got = Vec::new();
    while !done(&got) {
        match next(a) {
            Frame::Output { offset: o, bytes } => {
                assert_eq!(o, *offset, "frames are contiguous");
                assert!(!bytes.is_empty());
                *offset += bytes.len() as u64;
                got.extend(bytes);
            }
            other => panic!("expected output, got {other:?}"),
        }
    }
    got
}

fn contains(hay: &[u8], needle: &[u8]) -> bool {
    hay.windows(needle.len()).any(|w| w == needle)
}

fn screen_of(snapshot: &[u8], cols: u64, rows: u64) -> Vec<String> {
    let mut t = avt::Terminal::new(cols as usize, rows as usize).unwrap();
    t.feed(String::from_utf8_lossy(snapshot).as_ref());
    t.screen()
        .visible_lines()
        .map(vxref::emulator::plain_row)
        .collect()
}

fn send(d: &Daemon, pane: &str, text: &str) {
    d.ok(&["pane", "send", "--pane", pane, "--text", text]);
}

#[test]
fn fresh_attach_sends_a_snapshot_then_ready_then_output_at_absolute_offsets() {
    let d = Daemon::start();
    let pane = d.pane(r#"["tr","a-z","A-Z"]"#);
    send(&d, &pane, "first\n");
    let cap = d.wait_text(&pane, |r| r == "FIRST");
    let mut a = attach(&d, &pane, None);
    let r = a.reply.clone();
    assert_eq!(r["pane"], pane.as_str());
    assert_eq!(r["resumed"], false);
    assert_eq!(r["input"], true);
    assert!(r["source"].as_str().unwrap().starts_with("venomx/"));
    let mut offset = a.offset();
    assert!(offset >= "first\r\nFIRST\r\n".len() as u64, "{r}");
    let snap = until_ready(&mut a).expect("a fresh attach has a snapshot");
    assert_eq!(
        json!(screen_of(
            &snap,
            r["cols"].as_u64().unwrap(),
            r["rows"].as_u64().unwrap()
        )),
        cap["screen"],
        "the snapshot redraws the screen"
    );
    send(&d, &pane, "second\n");
    let out = output_until(&mut a, &mut offset, |b| contains(b, b"SECOND\r\n"));
    assert_eq!(out, b"second\r\nSECOND\r\n", "exactly the new output");
}

#[test]
fn resume_inside_the_ring_gets_exactly_the_missing_bytes() {
    let d = Daemon::start();
    let pane = d.pane(r#"["tr","a-z","A-Z"]"#);
    let mut witness = attach(&d, &pane, None);
    let mut a = attach(&d, &pane, None);
    let start = a.offset();
    assert_eq!(witness.offset(), start);
    until_ready(&mut witness);
    until_ready(&mut a);
    send(&d, &pane, "one\n");
    let mut last = start;
    output_until(&mut a, &mut last, |b| contains(b, b"ONE\r\n"));
    let source = a.source().to_string();
    drop(a);
    send(&d, &pane, "two\n");
    let mut w_off = start;
    let all = output_until(&mut witness, &mut w_off, |b| contains(b, b"TWO\r\n"));
    let missing = &all[(last - start) as usize..];
    assert!(contains(missing, b"TWO") && !contains(missing, b"ONE"));

    let mut b = attach(&d, &pane, Some((&source, last)));
    assert_eq!(
        (b.reply["resumed"].clone(), b.offset()),
        (json!(true), last)
    );
    assert_eq!(until_ready(&mut b), None, "no snapshot when resumed");
    let mut off = last;
    let got = output_until(&mut b, &mut off, |g| g.len() >= missing.len());
    assert_eq!(got, missing, "the missing bytes, no duplicates");
}

#[test]
fn resume_after_falling_out_of_the_ring_gets_a_fresh_snapshot() {
    let d = Daemon::start();
    let pane = d.pane(
        r#"["/bin/sh","-c","read x; head -c 1500000 /dev/zero | tr '\\0' a; echo; echo done; exec sleep 600"]"#,
    );
    let a = attach(&d, &pane, None);
    let (source, old) = (a.source().to_string(), a.offset());
    drop(a);
    send(&d, &pane, "go\n");
    d.wait_text(&pane, |r| r == "done");
    let mut b = attach(&d, &pane, Some((&source, old)));
    assert_eq!(b.reply["resumed"], false);
    assert!(b.offset() > old + 1_500_000);
    let snap = until_ready(&mut b).expect("snapshot");
    let rows = screen_of(
        &snap,
        b.reply["cols"].as_u64().unwrap(),
        b.reply["rows"].as_u64().unwrap(),
    );
    assert!(rows.iter().any(|r| r == "done"), "{rows:?}");
}

#[test]
fn resume_with_another_source_is_not_resumed() {
    let d = Daemon::start();
    let pane = d.pane(r#"["cat"]"#);
    let mut a = attach(
        &d,
        &pane,
        Some(("venomx/00000000-0000-4000-8000-000000000000", 0)),
    );
    assert_eq!(a.reply["resumed"], false);
    assert!(until_ready(&mut a).is_some());
}

#[test]
fn several_viewers_get_identical_streams() {
    let d = Daemon::start();
    let pane = d.pane(r#"["/bin/sh","-c","read x; seq 1 30000; exec sleep 600"]"#);
    let mut viewers: Vec<Attached> = (0..3).map(|_| attach(&d, &pane, None)).collect();
    let start = viewers[0].offset();
    for v in &mut viewers {
        assert_eq!(v.offset(), start);
        until_ready(v);
    }
    send(&d, &pane, "go\n");
    let streams: Vec<Vec<u8>> = viewers
        .iter_mut()
        .map(|v| {
            let mut off = start;
            output_until(v, &mut off, |b| contains(b, b"\r\n30000\r\n"))
        })
        .collect();
    let n = streams.iter().map(Vec::len).min().unwrap();
    assert!(streams.iter().all(|s| s[..n] == streams[0][..n]));
}

#[test]
fn input_frames_reach_the_program_and_detach_closes() {
    let d = Daemon::start();
    let pane = d.pane(r#"["tr","a-z","A-Z"]"#);
    let mut a = attach(&d, &pane, None);
    let mut off = a.offset();
    until_ready(&mut a);
    a.send_input(b"ping\n").unwrap();
    output_until(&mut a, &mut off, |b| contains(b, b"PING\r\n"));
    a.send_detach().unwrap();
    assert_eq!(next(&mut a), Frame::Close("detached".into()));
    assert_eq!(
        a.read_frame().unwrap(),
        None,
        "the daemon closes after CLOSE"
    );
}

#[test]
fn input_and_resize_need_write_on_the_pane() {
    let d = Daemon::start();
    let pane = d.pane(r#"["cat"]"#);
    let issued = d.ok(&[
        "grant",
        "issue",
        "--grants",
        &format!(r#"["read@pane:{pane}"]"#),
    ]);
    let token = issued["token"].as_str().unwrap();
    for input in [true, false] {
        let mut a = attach_as(&d, Some(token), &pane, None);
        assert_eq!(a.reply["input"], false);
        until_ready(&mut a);
        if input {
            a.send_input(b"x").unwrap();
        } else {
            a.send_resize(50, 10).unwrap();
        }
        assert_eq!(next(&mut a), Frame::Close("denied".into()));
        assert_eq!(a.read_frame().unwrap(), None);
    }
}

#[test]
fn malformed_client_frames_close_with_protocol() {
    let d = Daemon::start();
    let pane = d.pane(r#"["cat"]"#);
    for (kind, payload) in [
        (b'Q', vec![]),
        (frame::RESIZE, vec![0, 1, 0]),
        (frame::RESIZE, vec![0, 0, 0, 5]),
    ] {
        let mut a = attach(&d, &pane, None);
        until_ready(&mut a);
        a.send(kind, &payload).unwrap();
        assert_eq!(next(&mut a), Frame::Close("protocol".into()));
    }
    let mut a = attach(&d, &pane, None);
    until_ready(&mut a);
    // Only the header of an oversized frame: its length alone ends the stream.
    let mut raw = vec![frame::INPUT];
    raw.extend(((frame::MAX_PAYLOAD + 1) as u32).to_be_bytes());
    a.send_raw(&raw).unwrap();
    assert_eq!(next(&mut a), Frame::Close("protocol".into()));
}

#[test]
fn a_resize_frame_resizes_the_window_and_its_pane() {
    let d = Daemon::start();
    let pane = d.pane(r#"["cat"]"#);
    let mut a = attach(&d, &pane, None);
    until_ready(&mut a);
    a.send_resize(100, 30).unwrap();
    poll("resized pane", || {
        let c = d.capture(&pane);
        (c["cols"] == 100 && c["rows"] == 30).then_some(())
    });
    let w = &d.ok(&["session", "list"])["sessions"][0]["windows"][0];
    assert_eq!(
        (w["cols"].clone(), w["rows"].clone()),
        (json!(100), json!(30))
    );
}

#[test]
fn exit_follows_the_last_output_and_the_stream_stays_open() {
    let d = Daemon::start();
    let pane = d.pane(r#"["/bin/sh","-c","read x; echo bye; exit 7"]"#);
    let mut a = attach(&d, &pane, None);
    let mut off = a.offset();
    until_ready(&mut a);
    a.send_input(b"x\n").unwrap();
    let mut out = Vec::new();
    let exit = loop {
        match next(&mut a) {
            Frame::Output { offset, bytes } => {
                assert_eq!(offset, off);
                off += bytes.len() as u64;
                out.extend(bytes);
            }
            Frame::Exit(v) => break v,
            other => panic!("unexpected {other:?}"),
        }
    };
    assert_eq!(exit, json!({"exit_code": 7}));
    assert!(contains(&out, b"bye\r\n"), "all output came before EXIT");
    // Attaching to the exited pane: snapshot, READY, then EXIT at once.
    let mut b = attach(&d, &pane, None);
    assert_eq!(b.offset(), off);
    let snap = until_ready(&mut b).unwrap();
    let rows = screen_of(
        &snap,
        b.reply["cols"].as_u64().unwrap(),
        b.reply["rows"].as_u64().unwrap(),
    );
    assert!(rows.iter().any(|r| r == "bye"), "{rows:?}");
    assert_eq!(next(&mut b), Frame::Exit(json!({"exit_code": 7})));
    a.send_detach().unwrap();
    assert_eq!(next(&mut a), Frame::Close("detached".into()));
}

#[test]
fn killing_the_pane_closes_its_streams_with_pane_removed() {
    let d = Daemon::start();
    let pane = d.pane(r#"["cat"]"#);
    let mut a = attach(&d, &pane, None);
    until_ready(&mut a);
    d.ok(&["pane", "kill", "--pane", &pane]);
    assert_eq!(next(&mut a), Frame::Close("pane_removed".into()));
    assert_eq!(a.read_frame().unwrap(), None);
}

#[test]
fn an_archive_attaches_with_its_text_then_exit_and_relaunch_closes_it() {
    let mut d = Daemon::start_with_config(Some(PLAIN));
    let pane = d.pane(r#"["/bin/sh","-c","printf 'saved one\\nsaved two\\n'; exec sleep 600"]"#);
    d.wait_text(&pane, |r| r == "saved two");
    let live = attach(&d, &pane, None);
    let (old_source, old_offset) = (live.source().to_string(), live.offset());
    drop(live);
    let id = d.ok(&["recovery", "checkpoint"])["checkpoint"]
        .as_str()
        .unwrap()
        .to_string();
    let mut child = d.child.take().unwrap();
    signal(child.id(), "KILL");
    let _ = child.wait();
    d.child = Some(d.spawn_serve(&[]));
    d.wait_ready();
    let r = d.ok(&["recovery", "restore", "--checkpoint", &id]);
    let archive = r["panes"][0]["current"].as_str().unwrap().to_string();

    let mut a = attach(&d, &archive, Some((&old_source, old_offset)));
    assert_eq!(a.reply["resumed"], false);
    assert_eq!(a.offset(), 0, "a restored archive starts a new counter");
    assert_ne!(a.source(), old_source);
    let snap = until_ready(&mut a).expect("snapshot");
    let rows = screen_of(
        &snap,
        a.reply["cols"].as_u64().unwrap(),
        a.reply["rows"].as_u64().unwrap(),
    );
    assert_eq!(rows[..2], ["saved one", "saved two"]);
    assert!(matches!(next(&mut a), Frame::Exit(_)));

    let r = d.ok(&[
        "pane",
        "relaunch",
        "--pane",
        &archive,
        "--argv",
        r#"["/bin/sh","-c","echo again; exec sleep 600"]"#,
        "--ack-orphans=true",
    ]);
    assert_eq!(next(&mut a), Frame::Close("pane_removed".into()));
    let new = r["pane"].as_str().unwrap();
    let e = attach_error(&d, Some(&owner_token(&d)), &archive, Value::Null);
    assert_eq!(e["code"], "not_found.pane");
    d.wait_text(new, |r| r == "again");
    let b = attach(&d, new, None);
    assert_eq!(
        b.offset(),
        "again\r\n".len() as u64,
        "the relaunched pane counts from 0"
    );
}

#[test]
fn a_stalled_viewer_never_slows_the_pane() {
    let d = Daemon::start();
    let pane = d.pane(
        r#"["/bin/sh","-c","read x; head -c 3000000 /dev/zero | tr '\\0' x; echo; echo finished; exec sleep 600"]"#,
    );
    let mut a = attach(&d, &pane, None);
    let mut off = a.offset();
    until_ready(&mut a);
    send(&d, &pane, "go\n");
    // The viewer reads nothing while the program writes everything.
    d.wait_text(&pane, |r| r == "finished");
    let mut got = Vec::new();
    loop {
        match next(&mut a) {
            Frame::Output { offset, bytes } => {
                assert_eq!(offset, off, "contiguous until it lags");
                off += bytes.len() as u64;
                got.extend(bytes);
                if contains(&got[got.len().saturating_sub(64)..], b"finished\r\n") {
                    break;
                }
            }
            Frame::Close(reason) => {
                assert_eq!(reason, "lagging");
                break;
            }
            other => panic!("unexpected {other:?}"),
        }
    }
}

#[test]
fn unknown_panes_bad_resume_and_read_denial() {
    let d = Daemon::start();
    let pane = d.pane(r#"["cat"]"#);
    let owner = owner_token(&d);
    assert_eq!(
        attach_error(&d, Some(&owner), "p999", Value::Null)["code"],
        "not_found.pane"
    );
    for bad in [
        json!(5),
        json!({"source": "x"}),
        json!({"source": "x", "offset": -1}),
        json!({"source": 1, "offset": 1}),
        json!({"source": "x", "offset": 1, "more": 1}),
    ] {
        let e = attach_error(&d, Some(&owner), &pane, bad.clone());
        assert_eq!(e["code"], "invalid_params.resume", "{bad}");
    }
    // The default config lets unknown read: it attaches without input.
    let a = attach_as(&d, None, &pane, None);
    assert_eq!(a.reply["input"], false);

    let d = Daemon::start_with_config(Some(".{ .principals = .{ .unknown_read = .none } }"));
    let pane = d.pane(r#"["cat"]"#);
    assert_eq!(
        attach_error(&d, None, &pane, Value::Null)["code"],
        "denied.read"
    );
    assert_eq!(
        attach_error(&d, None, "p999", Value::Null)["code"],
        "denied.read"
    );
}

#[test]
fn shutdown_and_session_kill_close_streams() {
    let mut d = Daemon::start();
    let pane = d.pane(r#"["cat"]"#);
    let second = d.ok(&[
        "pane",
        "split",
        "--pane",
        &pane,
        "--axis",
        "cols",
        "--argv",
        r#"["cat"]"#,
    ]);
    let mut a = attach(&d, &pane, None);
    until_ready(&mut a);
    let mut b = attach(&d, second["pane"].as_str().unwrap(), None);
    until_ready(&mut b);
    d.ok(&[
        "session",
        "kill",
        "--session",
        second["session"].as_str().unwrap(),
    ]);
    assert_eq!(next(&mut a), Frame::Close("pane_removed".into()));
    assert_eq!(next(&mut b), Frame::Close("pane_removed".into()));

    let pane = d.pane(r#"["cat"]"#);
    let mut c = attach(&d, &pane, None);
    until_ready(&mut c);
    let (status, _) = d.stop();
    assert!(status.success());
    assert_eq!(next(&mut c), Frame::Close("shutdown".into()));
}

/// A viewer's snapshot and every output byte after it, until EXIT; None when the
/// viewer fell out of the ring (`CLOSE lagging` is the protocol's answer to a viewer
/// that did not keep up, which a loaded test machine can cause).
fn replay_until_exit(a: &mut Attached) -> Option<(Vec<u8>, Vec<u8>)> {
    let mut offset = a.offset();
    let snapshot = until_ready(a).expect("a fresh attach has a snapshot");
    let mut bytes = Vec::new();
    loop {
        match next(a) {
            Frame::Output {
                offset: o,
                bytes: b,
            } => {
                assert_eq!(o, offset, "frames are contiguous");
                offset += b.len() as u64;
                bytes.extend(b);
            }
            Frame::Exit(_) => return Some((snapshot, bytes)),
            Frame::Close(reason) if reason == "lagging" => return None,
            other => panic!("expected output or EXIT, got {other:?}"),
        }
    }
}

#[test]
fn snapshots_taken_during_a_flood_match_their_offsets_exactly() {
    // The emulator is fed beside the PTY reader (attach::feed), so a snapshot may lag
    // the ring. Its offset must be the emulator's: the snapshot shows exactly the
    // output before the offset, and the frames carry exactly the output after it.
    let d = Daemon::start();
    let lines = 500_000;
    let pane = d.pane(&format!(
        r#"["sh","-c","sleep 0.2; seq 1 {lines}; echo FLOOD-DONE"]"#
    ));
    let mut expected = Vec::new();
    for i in 1..=lines {
        expected.extend_from_slice(format!("{i}\r\n").as_bytes());
    }
    expected.extend_from_slice(b"FLOOD-DONE\r\n");
    std::thread::sleep(std::time::Duration::from_millis(150));
    // Viewers attach every 25 ms across the flood, each reading on its own thread.
    let handles: Vec<_> = (0..16)
        .map(|_| {
            let mut a = attach(&d, &pane, None);
            std::thread::sleep(std::time::Duration::from_millis(25));
            std::thread::spawn(move || {
                let replay = replay_until_exit(&mut a);
                (a, replay)
            })
        })
        .collect();
    let mut inside = 0;
    for h in handles {
        let (a, replay) = h.join().unwrap();
        let Some((snapshot, after)) = replay else {
            continue;
        };
        let at = a.offset() as usize;
        let (cols, rows) = (
            a.reply["cols"].as_u64().unwrap(),
            a.reply["rows"].as_u64().unwrap(),
        );
        assert_eq!(after, &expected[at..], "output after offset {at}");
        assert_eq!(
            screen_of(&snapshot, cols, rows),
            screen_of(&expected[..at], cols, rows),
            "the snapshot at offset {at} shows exactly the output before it"
        );
        inside += usize::from(at > 0 && at < expected.len());
    }
    assert!(inside > 0, "no viewer attached during the flood");
    let final_screen = d.wait_exited(&pane)["screen"].clone();
    assert!(
        final_screen.to_string().contains("FLOOD-DONE"),
        "{final_screen}"
    );
}
