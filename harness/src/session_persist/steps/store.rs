//! The store conformance rows: the implementation's store behind its adapter, on the
//! filesystem and on each S3 twin, checked by the kit request by request.

use crate::drivers::reply_loss::ReplyLossProxy;
use crate::session_persist::bench::Persist;
use crate::session_persist::store_adapter::{twin_endpoint, twin_env, Reply, StoreAdapter};
use crate::session_persist::World;
use crate::verdict::OrHarness;
use cucumber::{given, then, when};
use std::net::ToSocketAddrs;

/// A run id no other scenario (or earlier CI run on a shared twin) uses.
fn fresh_run(s: &Persist) -> String {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    let tag = s
        .sandbox()
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    format!(
        "vxc-{}-{nanos}-{}",
        std::process::id(),
        tag.trim_start_matches("vxc")
    )
    .chars()
    .filter(|c| c.is_ascii_alphanumeric() || *c == '-')
    .collect()
}

/// The store spec of `store`: the profile's filesystem store, or `s3:` + a twin's
/// endpoint.
fn store_spec(s: &Persist, store: &str) -> (String, Option<String>) {
    if store == "fs" {
        return (s.ph.expand(&s.t.store), None);
    }
    let endpoint = twin_endpoint(store).unwrap_or_else(|| {
        crate::harness_error!(
            "the {store} twin is required here but ${} is not set",
            twin_env(store)
        )
    });
    (format!("s3:{endpoint}"), Some(store.to_string()))
}

fn start(s: &mut Persist, spec: &str, twin: Option<String>) {
    let t = s.t.store_adapter.clone();
    s.store = None;
    s.store = Some(StoreAdapter::start(&s.ph, &t, spec, twin, s.sandbox()));
}

#[given(regex = r"^the (fs|seaweedfs|moto) store behind the implementation's adapter$")]
async fn store_behind_adapter(w: &mut World, c: &[String]) {
    w.run(c, None, |s, c| {
        let (spec, twin) = store_spec(s, &c[1]);
        s.store_run = Some(fresh_run(s));
        start(s, &spec, twin);
    })
    .await;
}

#[given(regex = r"^the reply to the next put is lost on the way back$")]
async fn reply_lost(w: &mut World) {
    w.run(&[], None, |s, _| {
        let twin = s
            .store
            .as_ref()
            .and_then(|a| a.twin.clone())
            .or_harness("reply loss needs an S3 twin");
        let endpoint = twin_endpoint(&twin).or_harness("the twin's endpoint");
        let rest = endpoint
            .strip_prefix("http://")
            .or_harness("a twin endpoint is http://HOST:PORT/BUCKET");
        let (hostport, bucket) = rest.split_once('/').or_harness("a twin endpoint's bucket");
        let upstream = hostport
            .to_socket_addrs()
            .ok()
            .and_then(|mut a| a.next())
            .or_harness("the twin's address");
        if !upstream.ip().is_loopback() {
            crate::harness_error!("tests talk to loopback twins only");
        }
        let proxy = ReplyLossProxy::start(upstream).or_harness("starting the proxy");
        let spec = format!("s3:http://{}/{bucket}", proxy.addr);
        start(s, &spec, Some(twin));
        if let Some(a) = s.store.as_mut() {
            a.expect_lost_reply = true;
        }
        s.proxy = Some(proxy);
    })
    .await;
}

fn blob_bytes(name: &str) -> Vec<u8> {
    format!("blob {name}\n").repeat(64).into_bytes()
}

fn run_of(s: &Persist, other: bool) -> String {
    let run = s.store_run.clone().or_harness("no store in this scenario");
    if other {
        format!("{run}-other")
    } else {
        run
    }
}

fn adapter(s: &mut Persist) -> &mut StoreAdapter {
    s.store.as_mut().or_harness("no store in this scenario")
}

fn put(s: &mut Persist, r: &str, other: bool, bytes: &[u8]) -> Reply {
    let file = s.new_blob_path();
    std::fs::write(&file, bytes).or_harness("writing the blob to put");
    let run = run_of(s, other);
    let reply = adapter(s).put(&run, r, &file);
    s.store_reply = Some(reply.clone());
    reply
}

#[when(regex = r#"^blob "([a-z]+)" is put under "([^"]+)"( in the other run)?$"#)]
async fn blob_put(w: &mut World, c: &[String]) {
    w.run(c, None, |s, c| {
        put(s, &c[2], c.get(3).is_some(), &blob_bytes(&c[1]));
    })
    .await;
}

#[when(regex = r#"^a blob one byte over the cap is put under "([^"]+)"$"#)]
async fn oversized_put(w: &mut World, c: &[String]) {
    w.run(c, None, |s, c| {
        let cap = 32 * 1024 * 1024 + 64 * 1024;
        put(s, &c[1], false, &vec![0u8; cap + 1]);
    })
    .await;
}

#[when(regex = r#"^"([^"]+)" is deleted( in the other run)?$"#)]
async fn ref_deleted(w: &mut World, c: &[String]) {
    w.run(c, None, |s, c| {
        let run = run_of(s, c.get(2).is_some());
        let reply = adapter(s).delete(&run, &c[1]);
        s.store_reply = Some(reply);
    })
    .await;
}

#[when(regex = r"^the (run|other run) is deleted$")]
async fn run_deleted(w: &mut World, c: &[String]) {
    w.run(c, None, |s, c| {
        let run = run_of(s, &c[1] == "other run");
        let reply = adapter(s).delete_run(&run);
        s.store_reply = Some(reply);
    })
    .await;
}

#[then(regex = r#"^the store (succeeds|refuses it with "([a-z_.]+)")$"#)]
async fn store_said(w: &mut World, c: &[String]) {
    w.run(c, None, |s, c| {
        let said = s.store_reply.clone().or_harness("no store request ran");
        match c.get(2) {
            None => assert_eq!(said, None, "the store's reply"),
            Some(code) => assert_eq!(said.as_deref(), Some(code.as_str()), "the store's reply"),
        }
    })
    .await;
}

#[then(regex = r"^the store reports a failure$")]
async fn store_failed(w: &mut World) {
    w.run(&[], None, |s, _| {
        let said = s.store_reply.clone().or_harness("no store request ran");
        assert!(
            said.is_some(),
            "a put whose reply was lost cannot report success"
        );
        if let Some(p) = &s.proxy {
            assert!(
                p.dropped() == 1 && !p.armed(),
                "the proxy dropped the put's reply"
            );
        }
    })
    .await;
}

#[then(
    regex = r#"^getting "([^"]+)"( in the other run)? (gives blob "([a-z]+)"|is refused with "([a-z_.]+)")$"#
)]
async fn getting(w: &mut World, c: &[String]) {
    w.run(c, None, |s, c| {
        let run = run_of(s, c.get(2).is_some());
        let file = s.new_blob_path();
        let reply = adapter(s).get(&run, &c[1], &file);
        match (c.get(4), c.get(5)) {
            (Some(name), _) => {
                assert_eq!(reply, None, "the get's reply");
                let got = std::fs::read(&file).or_harness("reading the got blob");
                assert!(
                    got == blob_bytes(name.as_str()),
                    "the get returned other bytes"
                );
            }
            (None, Some(code)) => {
                assert_eq!(reply.as_deref(), Some(code.as_str()), "the get's reply");
            }
            _ => crate::harness_error!("a get step names a blob or a code"),
        }
    })
    .await;
}
