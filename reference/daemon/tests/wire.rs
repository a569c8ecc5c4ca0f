//! The raw wire: request/reply shapes, malformed and oversized frames.

mod common;
use common::*;
use serde_json::json;

#[test]
fn replies_echo_ids_and_carry_ok_or_error() {
    let d = Daemon::start();
    let mut w = d.wire();
    let r = w.request(json!({"id": 41, "verb": "server.info", "params": {}}));
    assert_eq!(r["id"], 41);
    assert!(r["ok"]["source"].is_string());
    let r = w.request(json!({"id": "abc", "verb": "session.list"}));
    assert_eq!(r["id"], "abc");
    assert_eq!(r["ok"], json!({"sessions": []}));
    let r = w.request(json!({"id": 7, "verb": "session.create", "params": {"name": "x"}}));
    assert_eq!(r["id"], 7);
    assert_eq!(r["error"]["code"], "denied.write");
    assert!(r["error"]["message"].is_string());
    assert_eq!(r["error"]["data"]["principal"], "unknown");
}

#[test]
fn malformed_frames_get_an_error_and_the_connection_survives() {
    let d = Daemon::start();
    let mut w = d.wire();
    let cases: &[&[u8]] = &[
        b"not json\n",
        b"[1,2]\n",
        b"{\"id\":1,\"id\":2,\"verb\":\"server.info\"}\n",
        b"{\"id\":1.5,\"verb\":\"server.info\"}\n",
        b"{\"id\":9007199254740993,\"verb\":\"server.info\"}\n",
        b"{\"id\":1,\"verb\":\"server.info\",\"params\":{\"a\":1,\"a\":1}}\n",
        b"{\"id\":1,\"verb\":\"server.info\"} trailing\n",
        b"\xff\xfe\n",
        b"{\"id\":\"\\ud800\",\"verb\":\"server.info\"}\n",
    ];
    for case in cases {
        w.send_raw(case);
        let r = w.reply().expect("a reply, not a closed connection");
        assert_eq!(r["error"]["code"], "invalid_request.malformed", "{case:?}");
        assert!(r["id"].is_null());
    }
    let r = w.request(json!({"id": 3, "verb": "server.info"}));
    assert!(r["ok"].is_object());
}

#[test]
fn shape_errors_keep_the_id() {
    let d = Daemon::start();
    let mut w = d.wire();
    let r = w.request(json!({"id": 5, "verb": "no.such.verb"}));
    assert_eq!(
        (r["id"].clone(), r["error"]["code"].clone()),
        (json!(5), json!("invalid_request.unknown_verb"))
    );
    let r = w.request(json!({"id": 6, "verb": "session.list", "params": {"bogus": 1}}));
    assert_eq!(r["error"]["code"], "invalid_params.unknown_param");
    let r = w.request(json!({"id": 8, "verb": "pane.capture", "params": {}}));
    assert_eq!(r["error"]["code"], "invalid_params.pane");
    assert_eq!(r["error"]["data"]["param"], "pane");
    let r = w.request(json!({"id": 9, "verb": "pane.capture", "params": {"pane": 3}}));
    assert_eq!(r["error"]["code"], "invalid_params.pane");
    let r = w.request(json!({"id": 10, "verb": "pane.capture", "params": {"pane": "p01"}}));
    assert_eq!(r["error"]["code"], "invalid_params.pane");
}

#[test]
fn oversized_frame_is_answered_then_closed_and_the_daemon_lives() {
    let d = Daemon::start();
    let mut w = d.wire();
    let big = vec![b'x'; 2 * 1024 * 1024];
    // The daemon may close before reading everything; a write error is fine.
    let _ = std::io::Write::write_all(&mut w.stream, &big);
    let r = w.reply().expect("error reply before close");
    assert_eq!(r["error"]["code"], "invalid_request.frame_size");
    assert!(w.reply().is_none(), "connection closed");
    let mut again = d.wire();
    assert!(again.request(json!({"id": 1, "verb": "server.info"}))["ok"].is_object());
}

#[test]
fn invalid_token_is_denied_and_closes_without_falling_back_to_unknown() {
    let d = Daemon::start();
    let mut w = d.wire();
    let r = w.request(json!({"id": 1, "verb": "auth.login", "params": {"token": "vxt_forged"}}));
    assert_eq!(r["error"]["code"], "denied.token");
    assert!(w.reply().is_none(), "connection closed after denied.token");
    let (code, v) = parse(d.cli_as(Some("vxt_forged"), &["session", "list"]));
    assert_eq!(code, 4);
    assert_eq!(v["error"]["code"], "denied.token");
}

#[test]
fn many_clients_and_pipelined_requests() {
    let d = Daemon::start();
    let handles: Vec<_> = (0..8)
        .map(|i| {
            let mut w = d.wire();
            w.login_owner(&d);
            std::thread::spawn(move || {
                let mut frames = Vec::new();
                for j in 0..20 {
                    frames.extend(serde_json::to_vec(&json!({"id": j, "verb": "session.create", "params": {"name": format!("c{i}-{j}")}})).unwrap());
                    frames.push(b'\n');
                }
                w.send_raw(&frames);
                (0..20).all(|j| w.reply().unwrap()["id"] == j)
            })
        })
        .collect();
    for h in handles {
        assert!(h.join().unwrap());
    }
    let sessions = d.ok(&["session", "list"])["sessions"]
        .as_array()
        .unwrap()
        .len();
    assert_eq!(sessions, 160);
}
