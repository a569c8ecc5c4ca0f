//! Live steps of the stream: typing, resizing, dropping and reconnecting, what each
//! viewer received (replays, deltas, `seq` frames), what reached the agent (its
//! logged turns), and what lies at a session's socket path.

use std::os::unix::fs::FileTypeExt;
use std::time::Duration;

use cucumber::{given, then, when};

use crate::drivers::probe::contains;
use crate::drivers::{poll, scaled, wait_until};
use crate::single_writer::live::{stub_name, WAIT_MS};
use crate::single_writer::pins;
use crate::single_writer::World;
use crate::verdict::OrHarness;

/// What a planted regular file holds.
const PLANTED: &[u8] = b"not a socket\n";
/// How long the suite waits for something that must not happen.
const QUIET_MS: u64 = 600;

/// The bytes `vxstub agent` prints for `seq N`: a–z, cycling.
fn seq_bytes(n: usize) -> Vec<u8> {
    (0..n).map(|i| b'a' + (i % 26) as u8).collect()
}

#[when(regex = r#"^viewer (\w+) types "([^"]*)"$"#)]
async fn types(w: &mut World, c: &[String]) {
    w.run(c, None, |s, c| {
        s.live().viewer(&c[1]).viewer.input(&format!("{}\r", &c[2]));
    })
    .await;
}

#[when(regex = r"^viewer (\w+) resizes to (\d+)x(\d+)$")]
async fn resizes(w: &mut World, c: &[String]) {
    w.run(c, None, |s, c| {
        let (cols, rows) = (
            c[2].parse().or_harness("cols"),
            c[3].parse().or_harness("rows"),
        );
        s.live().viewer(&c[1]).viewer.resize(cols, rows);
    })
    .await;
}

#[when(regex = r"^viewer (\w+) drops$")]
async fn drops(w: &mut World, c: &[String]) {
    w.run(c, None, |s, c| s.live().drop_viewer(&c[1])).await;
}

#[when(regex = r"^viewer (\w+) reconnects with what it has$")]
async fn reconnects(w: &mut World, c: &[String]) {
    w.run(c, None, |s, c| s.live().reconnect(&c[1])).await;
}

#[when(regex = r"^viewer (\w+) drops and reconnects with what it has(?: (\d+) times)?$")]
async fn drops_and_reconnects(w: &mut World, c: &[String]) {
    w.run(c, None, |s, c| {
        let times: usize = c
            .get(2)
            .map_or(Ok(1), |n| n.as_str().parse())
            .or_harness("a count");
        for _ in 0..times {
            let live = s.live();
            live.drop_viewer(&c[1]);
            live.reconnect(&c[1]);
            let t = live.viewer(&c[1]);
            assert_eq!(t.viewer.close, None, "a reconnect was closed");
        }
    })
    .await;
}

// The agent logs a line before it writes the line's output: only a viewer that got
// the mode switch shows the master has seen it too (it updates its screen state
// before it forwards output).
#[when(regex = r"^viewer (\w+) sees the alternate screen entered$")]
async fn sees_alt_screen(w: &mut World, c: &[String]) {
    w.run(c, None, |s, c| {
        let t = s.live().viewer(&c[1]);
        let seen = t
            .viewer
            .pump(scaled(WAIT_MS), |v| contains(&v.output, b"\x1b[?1049h"));
        assert!(
            seen,
            "viewer {} never saw the alternate screen entered (close {:?})",
            &c[1], t.viewer.close
        );
    })
    .await;
}

#[when(regex = r#"^viewer (\w+) sees the output of "seq (\d+)"$"#)]
#[then(regex = r#"^viewer (\w+) sees the output of "seq (\d+)"$"#)]
async fn sees_seq(w: &mut World, c: &[String]) {
    w.run(c, None, |s, c| {
        let want = seq_bytes(c[2].parse().or_harness("a count"));
        let t = s.live().viewer(&c[1]);
        let seen = t
            .viewer
            .pump(scaled(WAIT_MS), |v| contains(&v.output, &want));
        assert!(
            seen,
            "viewer {} never saw the output (close {:?})",
            &c[1], t.viewer.close
        );
    })
    .await;
}

#[then(regex = r"^viewer (\w+) gets a replay ending in a seq frame of its length$")]
async fn replay_then_seq(w: &mut World, c: &[String]) {
    w.run(c, None, |s, c| {
        let t = s.live().viewer(&c[1]);
        t.viewer
            .pump(scaled(WAIT_MS), |v| !v.frames("seq").is_empty());
        let (at, seq) = t
            .viewer
            .first_seq()
            .unwrap_or_else(|| panic!("viewer {} got no seq frame", &c[1]));
        assert!(at > 0, "a ring with output was not replayed");
        assert_eq!(
            seq["n"].as_u64(),
            Some(at as u64),
            "the seq frame's n is the total the replay ends at"
        );
    })
    .await;
}

#[then(regex = r#"^viewer (\w+)'s replay holds the output of "seq (\d+)"$"#)]
async fn replay_holds(w: &mut World, c: &[String]) {
    w.run(c, None, |s, c| {
        let want = seq_bytes(c[2].parse().or_harness("a count"));
        let t = s.live().viewer(&c[1]);
        let (at, _) = t.viewer.first_seq().or_harness("a seq frame");
        assert!(
            contains(&t.viewer.output[..at], &want),
            "the replay lost output"
        );
    })
    .await;
}

/// A delta reconnect: the viewer gets exactly the bytes it missed, no more (a replay,
/// a reset) and no fewer (a gap). Whether a `seq` frame follows is not the seed's
/// (it names one after a non-delta attach only): the next step judges it.
#[then(regex = r#"^viewer (\w+) receives exactly the output of "seq (\d+)"$"#)]
async fn receives_exactly(w: &mut World, c: &[String]) {
    w.run(c, None, |s, c| {
        let want = seq_bytes(c[2].parse().or_harness("a count"));
        let t = s.live().viewer(&c[1]);
        t.viewer
            .pump(scaled(WAIT_MS), |v| v.output.len() >= want.len());
        t.viewer.settle(Duration::from_millis(QUIET_MS));
        let got = &t.viewer.output;
        crate::evidence::ensure(got == &want, Some("sw-delta"), || {
            (
                format!(
                    "viewer {} to get exactly the {} bytes it missed (no replay, no reset, no gap)",
                    &c[1],
                    want.len()
                ),
                missed_words(got, &want),
            )
        });
    })
    .await;
}

/// How the bytes a reconnected viewer got differ from the ones it missed, in
/// lengths and offsets (never the bytes themselves).
fn missed_words(got: &[u8], want: &[u8]) -> String {
    let common = got.iter().zip(want).take_while(|(a, b)| a == b).count();
    if got.len() > want.len() && contains(got, want) {
        format!(
            "{} bytes: the missed bytes and {} more (a replay)",
            got.len(),
            got.len() - want.len()
        )
    } else {
        format!(
            "{} bytes where {} were missed; the first {common} of them match",
            got.len(),
            want.len()
        )
    }
}

/// The `seq` frames of a delta reconnect. The seed's seq frame "sets the client's
/// authoritative offset", so any one a broker sends must carry the offset the viewer
/// has reached where it arrives (strict, sw-seq); whether one follows a delta at all
/// is a choice the seed leaves open (the pin `seq_after_delta`).
#[then(regex = r"^viewer (\w+)'s seq frames after its delta are as the profile says$")]
async fn seq_after_delta(w: &mut World, c: &[String]) {
    w.run(c, None, |s, c| {
        let own = pins::declared(pins::SEQ_AFTER_DELTA_KEY).and_then(|v| v.as_bool());
        let t = s.live().viewer(&c[1]);
        if own == Some(true) {
            t.viewer
                .pump(scaled(WAIT_MS), |v| !v.frames("seq").is_empty());
        }
        let base = t.base;
        for (at, seq) in t.viewer.texts.iter().filter(|(_, v)| v["t"] == "seq") {
            let offset = base + *at as u64;
            crate::evidence::ensure(seq["n"].as_u64() == Some(offset), Some("sw-seq"), || {
                (
                    format!(
                        "a seq frame carrying the offset viewer {} has reached where it arrives: have {base} + {at} bytes = {offset}",
                        &c[1]
                    ),
                    format!("a seq frame with n {}", seq["n"]),
                )
            });
        }
        let words = |sent: bool| if sent { "a seq frame" } else { "no seq frame" };
        let got = words(!t.viewer.frames("seq").is_empty());
        pins::judge(
            pins::SEQ_AFTER_DELTA_KEY,
            "after a delta,",
            words(false),
            own.map(words),
            got,
        );
    })
    .await;
}

#[then(regex = r"^viewer (\w+) gets no replay before its seq frame$")]
async fn no_replay(w: &mut World, c: &[String]) {
    w.run(c, None, |s, c| {
        let t = s.live().viewer(&c[1]);
        t.viewer
            .pump(scaled(WAIT_MS), |v| !v.frames("seq").is_empty());
        let (at, _) = t
            .viewer
            .first_seq()
            .unwrap_or_else(|| panic!("viewer {} got no seq frame", &c[1]));
        assert_eq!(
            at, 0,
            "primary-screen bytes were replayed into an alternate screen"
        );
        assert!(
            !contains(&t.viewer.output, b"vxstub agent ready"),
            "the ring was replayed"
        );
    })
    .await;
}

fn lines_of(turns: &[serde_json::Value]) -> Vec<&str> {
    turns
        .iter()
        .filter(|t| t["turn"] == "input")
        .filter_map(|t| t["line"].as_str())
        .collect()
}

#[when(regex = r#"^the agent of "([^"]+)" (got|never got) the line "([^"]*)"$"#)]
#[then(regex = r#"^the agent of "([^"]+)" (got|never got) the line "([^"]*)"$"#)]
async fn agent_got(w: &mut World, c: &[String]) {
    w.run(c, None, |s, c| {
        let sb = &s.live().sb;
        let p = stub_name(&c[1]);
        if &c[2] == "got" {
            poll("the agent's input", scaled(WAIT_MS), || {
                lines_of(&sb.turns(&p)).contains(&&c[3]).then_some(())
            });
        } else {
            std::thread::sleep(Duration::from_millis(QUIET_MS));
            let turns = sb.turns(&p);
            assert!(
                !lines_of(&turns).contains(&&c[3]),
                "the line reached the agent: {:?}",
                lines_of(&turns)
            );
        }
    })
    .await;
}

fn sizes(turns: &[serde_json::Value]) -> Vec<(u64, u64)> {
    turns
        .iter()
        .filter(|t| t["turn"] == "winch")
        .map(|t| {
            (
                t["cols"].as_u64().unwrap_or(0),
                t["rows"].as_u64().unwrap_or(0),
            )
        })
        .collect()
}

#[then(regex = r#"^the agent of "([^"]+)" (saw|never saw) the size (\d+)x(\d+)$"#)]
async fn agent_size(w: &mut World, c: &[String]) {
    w.run(c, None, |s, c| {
        let sb = &s.live().sb;
        let p = stub_name(&c[1]);
        let size = (
            c[3].parse().or_harness("cols"),
            c[4].parse().or_harness("rows"),
        );
        if &c[2] == "saw" {
            poll("the agent's window size", scaled(WAIT_MS), || {
                sizes(&sb.turns(&p)).contains(&size).then_some(())
            });
        } else {
            std::thread::sleep(Duration::from_millis(QUIET_MS));
            let seen = sizes(&sb.turns(&p));
            assert!(!seen.contains(&size), "the PTY took the size: {seen:?}");
        }
    })
    .await;
}

#[then(regex = r#"^the agent of "([^"]+)" logged a redraw nudge$"#)]
async fn nudged(w: &mut World, c: &[String]) {
    w.run(c, None, |s, c| {
        let sb = &s.live().sb;
        let p = stub_name(&c[1]);
        poll("the redraw nudge (SIGWINCH)", scaled(WAIT_MS), || {
            (!sizes(&sb.turns(&p)).is_empty()).then_some(())
        });
    })
    .await;
}

#[given(regex = r#"^a socket nobody listens on is at the socket of "([^"]+)"$"#)]
async fn plant_orphan(w: &mut World, c: &[String]) {
    w.run(c, None, |s, c| {
        use nix::sys::socket::{bind, socket, AddressFamily, SockFlag, SockType, UnixAddr};
        let path = s.live().session_socket(&c[1], 0);
        let fd = socket(
            AddressFamily::Unix,
            SockType::Stream,
            SockFlag::empty(),
            None,
        )
        .or_harness("socket()");
        let addr = UnixAddr::new(&path).or_harness("the socket path");
        bind(std::os::fd::AsRawFd::as_raw_fd(&fd), &addr).or_harness("bind()");
        // Closed without listen(): a master that died without unlinking.
        drop(fd);
    })
    .await;
}

#[given(regex = r#"^a regular file is at the socket of "([^"]+)"$"#)]
async fn plant_file(w: &mut World, c: &[String]) {
    w.run(c, None, |s, c| {
        let path = s.live().session_socket(&c[1], 0);
        std::fs::write(path, PLANTED).or_harness("planting a file");
    })
    .await;
}

#[then(regex = r#"^the regular file at the socket of "([^"]+)" is unchanged$"#)]
async fn file_kept(w: &mut World, c: &[String]) {
    w.run(c, None, |s, c| {
        let path = s.live().session_socket(&c[1], 0);
        let bytes = std::fs::read(&path).unwrap_or_else(|_| panic!("the file was removed"));
        assert_eq!(bytes, PLANTED, "the file was changed");
    })
    .await;
}

#[then(regex = r#"^the orphan socket of "([^"]+)" is still there$"#)]
async fn orphan_kept(w: &mut World, c: &[String]) {
    w.run(c, None, |s, c| {
        let path = s.live().session_socket(&c[1], 0);
        let m = std::fs::symlink_metadata(&path)
            .unwrap_or_else(|_| panic!("the orphan was unlinked without the lock"));
        assert!(m.file_type().is_socket(), "something replaced the orphan");
        assert!(
            std::os::unix::net::UnixStream::connect(&path).is_err(),
            "a master serves the path"
        );
    })
    .await;
}

#[then(regex = r#"^the socket of "([^"]+)" (is absent|accepts)$"#)]
async fn socket_is(w: &mut World, c: &[String]) {
    w.run(c, None, |s, c| {
        let path = s.live().session_socket(&c[1], 0);
        if &c[2] == "accepts" {
            assert!(
                std::os::unix::net::UnixStream::connect(&path).is_ok(),
                "no master accepts on the session's socket"
            );
        } else {
            let gone = wait_until(scaled(WAIT_MS), || {
                let gone = std::fs::symlink_metadata(&path).is_err();
                (gone, gone)
            });
            assert!(gone, "the session's socket is still there");
        }
    })
    .await;
}
