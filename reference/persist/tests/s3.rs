//! S3Store on the twins `.ci/s3-twins.sh` starts (SeaweedFS 4.48, moto 5.2.1): the
//! store suite, refused identities, a missing bucket, a lost reply; and, without any
//! twin, bounded replies and an unreachable store.
//!
//! A twin's test skips with a printed reason when its endpoint variable
//! (`VXPERSIST_S3_SEAWEEDFS`, `VXPERSIST_S3_MOTO`) is unset, and fails instead when
//! `VXPERSIST_REQUIRE_TWINS=1` (CI).

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener};
use std::process::Command;

use rusty_s3::Credentials;
use vx_persist::s3::{credentials_from_env, S3Location, ENV_SECRET_ACCESS_KEY};
use vx_persist::store_suite::run_suite;
use vx_persist::testing::reply_loss::ReplyLossProxy;
use vx_persist::{BackendSessionStore, ErrorCode, S3Store, StateRef};

const REF: &str = "writer/01J9ZQ4V7X8M2K3N4P5Q6R7S8T";

/// The twin's `URL/BUCKET`, or `None` (skipped) when its variable is unset.
fn twin(var: &str) -> Option<String> {
    match std::env::var(var) {
        Ok(v) if !v.is_empty() => {
            credentials_from_env().expect("a twin's endpoint is set but its identity is not");
            Some(v)
        }
        _ if std::env::var("VXPERSIST_REQUIRE_TWINS").as_deref() == Ok("1") => {
            panic!("{var} is unset but VXPERSIST_REQUIRE_TWINS=1: start .ci/s3-twins.sh")
        }
        _ => {
            eprintln!("skipped: {var} is unset (run `eval \"$(bash .ci/s3-twins.sh start)\"`)");
            None
        }
    }
}

fn twins() -> Vec<(&'static str, String)> {
    [
        ("seaweedfs", "VXPERSIST_S3_SEAWEEDFS"),
        ("moto", "VXPERSIST_S3_MOTO"),
    ]
    .into_iter()
    .filter_map(|(name, var)| twin(var).map(|url| (name, url)))
    .collect()
}

fn run_id(tag: &str) -> String {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_nanos();
    format!("test-{tag}-{}-{nanos}", std::process::id())
}

fn sibling_bucket(url: &str, bucket: &str) -> String {
    let location = S3Location::parse(url).unwrap();
    format!(
        "{}/{bucket}",
        location.endpoint.as_str().trim_end_matches('/')
    )
}

fn suite_on(var: &str) {
    let Some(url) = twin(var) else { return };
    let store = S3Store::open(&url).unwrap();
    let outcomes = run_suite(&store, &run_id("suite"));
    assert_eq!(outcomes.len(), 8);
    for o in outcomes {
        assert!(o.failure.is_none(), "{var}: {}: {:?}", o.name, o.failure);
    }
}

#[test]
fn seaweedfs_passes_the_store_suite() {
    suite_on("VXPERSIST_S3_SEAWEEDFS");
}

#[test]
fn moto_passes_the_store_suite() {
    suite_on("VXPERSIST_S3_MOTO");
}

fn assert_no_secret(e: &vx_persist::PersistError) {
    let text = format!("{e} {e:?}");
    let (key, secret) = (
        std::env::var("VXPERSIST_S3_ACCESS_KEY_ID").unwrap_or_default(),
        std::env::var(ENV_SECRET_ACCESS_KEY).unwrap_or_default(),
    );
    for leak in [
        key.as_str(),
        secret.as_str(),
        "X-Amz",
        "http://",
        "127.0.0.1",
    ] {
        assert!(
            leak.is_empty() || !text.contains(leak),
            "error text carries {leak:?}: {text}"
        );
    }
}

#[test]
fn seaweedfs_refuses_unsigned_requests_and_bad_signatures_with_typed_errors() {
    let Some(url) = twin("VXPERSIST_S3_SEAWEEDFS") else {
        return;
    };
    let location = S3Location::parse(&url).unwrap();
    let (good, region) = credentials_from_env().unwrap();
    let r = StateRef::parse(REF).unwrap();
    let run = run_id("auth");

    let unsigned = S3Store::new(&location, None, &region).unwrap();
    for e in [
        unsigned.put(&run, &r, b"x").unwrap_err(),
        unsigned.get(&run, &r).unwrap_err(),
    ] {
        assert_eq!(e.code, ErrorCode::StoreDenied, "{e}");
        assert_eq!(e.http_status, Some(403), "{e}");
        assert_no_secret(&e);
    }

    let forged = Credentials::new(good.key(), "not-the-secret-of-this-identity");
    let bad = S3Store::new(&location, Some(forged), &region).unwrap();
    for e in [
        bad.put(&run, &r, b"x").unwrap_err(),
        bad.get(&run, &r).unwrap_err(),
        bad.delete_run(&run).unwrap_err(),
    ] {
        assert_eq!(e.code, ErrorCode::StoreSignature, "{e}");
        assert_no_secret(&e);
    }
    // Nothing got in.
    let store = S3Store::open(&url).unwrap();
    assert_eq!(
        store.get(&run, &r).unwrap_err().code,
        ErrorCode::BlobNotFound
    );
}

#[test]
fn a_missing_bucket_is_not_found_bucket_and_never_created() {
    for (name, url) in twins() {
        let missing = sibling_bucket(&url, "vx-no-such-bucket");
        assert_eq!(
            S3Store::open(&missing).unwrap_err().code,
            ErrorCode::BucketNotFound,
            "{name}"
        );
        let (credentials, region) = credentials_from_env().unwrap();
        let store = S3Store::new(
            &S3Location::parse(&missing).unwrap(),
            Some(credentials),
            &region,
        )
        .unwrap();
        let r = StateRef::parse(REF).unwrap();
        for e in [
            store.put("run-1", &r, b"x").unwrap_err(),
            store.get("run-1", &r).unwrap_err(),
            store.delete("run-1", &r).unwrap_err(),
            store.delete_run("run-1").unwrap_err(),
        ] {
            assert_eq!(e.code, ErrorCode::BucketNotFound, "{name}: {e}");
        }
        assert_eq!(
            store.check_bucket().unwrap_err().code,
            ErrorCode::BucketNotFound,
            "{name}: the put created the bucket"
        );
    }
}

#[test]
fn a_lost_put_reply_is_an_error_the_object_is_committed_and_a_retry_sees_conflict_exists() {
    for (name, url) in twins() {
        let location = S3Location::parse(&url).unwrap();
        let upstream: SocketAddr = format!(
            "{}:{}",
            location.endpoint.host_str().unwrap(),
            location.endpoint.port().unwrap()
        )
        .parse()
        .unwrap();
        let proxy = ReplyLossProxy::start(upstream, 1).unwrap();
        let mut through = location.clone();
        through
            .endpoint
            .set_port(Some(proxy.addr().port()))
            .unwrap();
        let (credentials, region) = credentials_from_env().unwrap();
        let lossy = S3Store::new(&through, Some(credentials), &region).unwrap();
        let direct = S3Store::open(&url).unwrap();
        let (run, r) = (run_id("replyloss"), StateRef::parse(REF).unwrap());

        let e = lossy.put(&run, &r, b"committed").unwrap_err();
        assert_eq!(e.code, ErrorCode::StoreUnavailable, "{name}: {e}");
        assert_no_secret(&e);
        assert_eq!(proxy.dropped(), 1, "{name}: the reply was not lost");
        assert_eq!(direct.get(&run, &r).unwrap(), b"committed", "{name}");
        let retry = lossy.put(&run, &r, b"retried").unwrap_err();
        assert_eq!(retry.code, ErrorCode::Exists, "{name}: {retry}");
        assert_eq!(direct.get(&run, &r).unwrap(), b"committed", "{name}");
        direct.delete_run(&run).unwrap();
    }
}

fn vxpersist_suite(store: &str) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_vxpersist"))
        .args(["store-suite", "--json", "--store", store])
        .output()
        .unwrap()
}

#[test]
fn store_suite_cli_passes_on_each_twin_and_is_exit_2_for_a_missing_bucket() {
    for (name, url) in twins() {
        let out = vxpersist_suite(&format!("s3:{url}"));
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert_eq!(out.status.code(), Some(0), "{name}: {stdout}");
        let lines: Vec<serde_json::Value> = stdout
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        assert_eq!(lines.len(), 8, "{name}");
        assert!(lines.iter().all(|l| l["verdict"] == "pass"), "{name}");
        let out = vxpersist_suite(&format!("s3:{}", sibling_bucket(&url, "vx-no-such-bucket")));
        assert_eq!(out.status.code(), Some(2), "{name}");
        assert!(
            out.stdout.is_empty(),
            "{name}: no verdict for an unjudged store"
        );
    }
}

/// A port nothing listens on (bound, then released).
fn closed_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

#[test]
fn an_unreachable_store_is_a_harness_error_never_a_pass() {
    let store = format!("s3:http://127.0.0.1:{}/vxpersist-test", closed_port());
    let out = Command::new(env!("CARGO_BIN_EXE_vxpersist"))
        .args(["store-suite", "--json", "--store", &store])
        .env("VXPERSIST_S3_ACCESS_KEY_ID", "k")
        .env("VXPERSIST_S3_SECRET_ACCESS_KEY", "s")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(out.stdout.is_empty());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("unavailable.store"), "{stderr}");
    assert!(!stderr.contains("127.0.0.1"), "{stderr}");
    // No identity in the environment: also exit 2, before any request.
    let out = Command::new(env!("CARGO_BIN_EXE_vxpersist"))
        .args(["store-suite", "--store", &store])
        .env_remove("VXPERSIST_S3_ACCESS_KEY_ID")
        .env_remove("VXPERSIST_S3_SECRET_ACCESS_KEY")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("invalid_params.store"));
}

/// A one-shot HTTP server answering every request on one connection with `reply`.
fn fake_s3(reply: &'static [u8]) -> (S3Store, std::thread::JoinHandle<()>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let server = std::thread::spawn(move || {
        let (mut conn, _) = listener.accept().unwrap();
        let mut buf = [0u8; 8192];
        let _ = conn.read(&mut buf);
        let _ = conn.write_all(reply);
    });
    let location = S3Location::parse(&format!("http://127.0.0.1:{port}/bucket")).unwrap();
    let store = S3Store::new(&location, Some(Credentials::new("k", "s")), "us-east-1").unwrap();
    (store, server)
}

#[test]
fn replies_are_bounded_before_they_are_read() {
    let r = StateRef::parse(REF).unwrap();
    // A 1 GiB blob announced: refused on its length, nothing allocated.
    let (store, server) = fake_s3(b"HTTP/1.1 200 OK\r\nContent-Length: 1073741824\r\n\r\nxx");
    let e = store.get("run-1", &r).unwrap_err();
    assert_eq!((e.code, e.rule), (ErrorCode::BlobSize, Some("blob.size")));
    server.join().unwrap();
    // An error document longer than the error cap.
    let (store, server) = fake_s3(b"HTTP/1.1 500 Oops\r\nContent-Length: 99999999\r\n\r\n");
    let e = store.put("run-1", &r, b"x").unwrap_err();
    assert_eq!(e.code, ErrorCode::StoreUnavailable, "{e}");
    server.join().unwrap();
    // A server error with a short document.
    let (store, server) =
        fake_s3(b"HTTP/1.1 503 Slow Down\r\nContent-Length: 37\r\n\r\n<Error><Code>SlowDown</Code></Error>\n");
    let e = store.get("run-1", &r).unwrap_err();
    assert_eq!(
        (e.code, e.http_status),
        (ErrorCode::StoreUnavailable, Some(503))
    );
    server.join().unwrap();
    // A put refused before any request for a blob over the cap.
    let big = vec![0u8; (vx_persist::limits::MAX_BLOB_BYTES + 1) as usize];
    let location = S3Location::parse(&format!("http://127.0.0.1:{}/b-1", closed_port())).unwrap();
    let store = S3Store::new(&location, None, "us-east-1").unwrap();
    assert_eq!(
        store.put("run-1", &r, &big).unwrap_err().code,
        ErrorCode::BlobSize
    );
}

#[test]
fn store_locations_are_strict() {
    for bad in [
        "127.0.0.1:18333/bucket",
        "ftp://127.0.0.1/bucket",
        "http://127.0.0.1:18333",
        "http://127.0.0.1:18333/",
        "http://127.0.0.1:18333/Bucket",
        "http://127.0.0.1:18333/ab",
        "http://user:pw@127.0.0.1:18333/bucket",
        "http://127.0.0.1:18333/bucket?x=1",
    ] {
        assert_eq!(
            S3Location::parse(bad).unwrap_err().code,
            ErrorCode::InvalidStore,
            "{bad}"
        );
    }
    let l = S3Location::parse("http://127.0.0.1:18333/base/vx-bucket").unwrap();
    assert_eq!(
        (l.endpoint.as_str(), l.bucket.as_str()),
        ("http://127.0.0.1:18333/base", "vx-bucket")
    );
}
