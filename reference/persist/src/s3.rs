//! `S3Store`: the `BackendSessionStore` on an S3 bucket (docs/spec/persist-store.md).
//!
//! `rusty-s3` signs (SigV4 presigned URLs, path style), `ureq` carries the requests,
//! synchronously. Objects live at `runs/<run>/<node>/<ulid>` and
//! `runs/<run>/<node>/pause/<ulid>`, the FsStore's layout. A put is create-only through
//! `If-None-Match: *` (412 is `conflict.exists`); the bucket must exist and is never
//! created. Reply bodies are bounded before they are read. Errors carry a fixed reason
//! and the HTTP status, never the URL (it holds the key id and the signature), a
//! credential or payload bytes.

use std::fmt;
use std::time::Duration;

use rusty_s3::actions::{DeleteObject, GetObject, HeadBucket, ListObjectsV2, PutObject};
use rusty_s3::{Bucket, Credentials, S3Action, UrlStyle};
use url::Url;

use crate::error::{BlobRule, ErrorCode, PersistError, Result};
use crate::limits::{
    MAX_BLOB_BYTES, MAX_S3_BUCKET_BYTES, MAX_S3_ERROR_BODY_BYTES, MAX_S3_LIST_BODY_BYTES,
    MAX_S3_SWEEP_PAGES, S3_CONNECT_TIMEOUT_SECS, S3_LIST_PAGE_KEYS, S3_REQUEST_TIMEOUT_SECS,
    S3_SIGNATURE_EXPIRY_SECS,
};
use crate::store::{check_run, BackendSessionStore, StateRef};

/// The environment variables an `s3:` store reads its identity from.
pub const ENV_ACCESS_KEY_ID: &str = "VXPERSIST_S3_ACCESS_KEY_ID";
pub const ENV_SECRET_ACCESS_KEY: &str = "VXPERSIST_S3_SECRET_ACCESS_KEY";
/// Optional; `us-east-1` when unset (what SeaweedFS and moto sign with by default).
pub const ENV_REGION: &str = "VXPERSIST_S3_REGION";
pub const DEFAULT_REGION: &str = "us-east-1";

/// Where a bucket is: an `http://` (or, with the `tls` feature, `https://`) endpoint
/// and the bucket name, written `URL/BUCKET`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct S3Location {
    pub endpoint: Url,
    pub bucket: String,
}

fn invalid(reason: &'static str) -> PersistError {
    PersistError::new(ErrorCode::InvalidStore, reason)
}

fn valid_bucket(name: &str) -> bool {
    (3..=MAX_S3_BUCKET_BYTES).contains(&name.len())
        && name
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'.' || b == b'-')
        && name.as_bytes()[0].is_ascii_alphanumeric()
        && name.as_bytes()[name.len() - 1].is_ascii_alphanumeric()
}

impl S3Location {
    /// `http://127.0.0.1:18333/bucket`: the last path segment is the bucket, what is
    /// before it the endpoint. No user info, query or fragment (a URL never carries a
    /// credential here).
    pub fn parse(text: &str) -> Result<S3Location> {
        let url = Url::parse(text).map_err(|_| invalid("the S3 store is not URL/BUCKET"))?;
        match url.scheme() {
            "http" => {}
            "https" if cfg!(feature = "tls") => {}
            "https" => return Err(invalid("https S3 endpoints need vx-persist's tls feature")),
            _ => return Err(invalid("the S3 endpoint is neither http nor https")),
        }
        if url.host_str().is_none()
            || !url.username().is_empty()
            || url.password().is_some()
            || url.query().is_some()
            || url.fragment().is_some()
        {
            return Err(invalid(
                "the S3 store URL has no host, or has user info, a query or a fragment",
            ));
        }
        let path = url.path().trim_end_matches('/');
        let (base, bucket) = path
            .rsplit_once('/')
            .ok_or_else(|| invalid("the S3 store is not URL/BUCKET"))?;
        if !valid_bucket(bucket) {
            return Err(invalid(
                "the S3 bucket name is not 3-63 bytes of [a-z0-9.-]",
            ));
        }
        let mut endpoint = url.clone();
        endpoint.set_path(if base.is_empty() { "/" } else { base });
        Ok(S3Location {
            endpoint,
            bucket: bucket.to_owned(),
        })
    }
}

/// An S3 bucket as a session-blob store.
pub struct S3Store {
    bucket: Bucket,
    credentials: Option<Credentials>,
    agent: ureq::Agent,
}

impl fmt::Debug for S3Store {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Never the credentials.
        f.debug_struct("S3Store")
            .field("bucket", &self.bucket.name())
            .field("signed", &self.credentials.is_some())
            .finish()
    }
}

/// Reads the identity from `VXPERSIST_S3_ACCESS_KEY_ID` / `VXPERSIST_S3_SECRET_ACCESS_KEY`
/// and the region from `VXPERSIST_S3_REGION`.
pub fn credentials_from_env() -> Result<(Credentials, String)> {
    let var = |name| std::env::var(name).ok().filter(|v: &String| !v.is_empty());
    match (var(ENV_ACCESS_KEY_ID), var(ENV_SECRET_ACCESS_KEY)) {
        (Some(key), Some(secret)) => Ok((
            Credentials::new(key, secret),
            var(ENV_REGION).unwrap_or_else(|| DEFAULT_REGION.to_owned()),
        )),
        _ => Err(invalid(
            "VXPERSIST_S3_ACCESS_KEY_ID and VXPERSIST_S3_SECRET_ACCESS_KEY must be set for an s3: store",
        )),
    }
}

/// A reply: its status and its body (read within the limit the request chose).
struct Reply {
    status: u16,
    body: Vec<u8>,
}

enum Body<'a> {
    Empty,
    Bytes(&'a [u8]),
}

/// The S3 error `<Code>` of an error document, when it has a plain one.
fn error_code(body: &[u8]) -> Option<&str> {
    let text = std::str::from_utf8(body).ok()?;
    let start = text.find("<Code>")? + "<Code>".len();
    let len = text[start..].find("</Code>")?;
    let code = &text[start..start + len];
    (!code.is_empty() && code.len() <= 64 && code.bytes().all(|b| b.is_ascii_alphanumeric()))
        .then_some(code)
}

/// The typed error of a reply no operation expected. Operations handle their own
/// expected answers (404 on get, 412 on put) before calling this.
fn reply_error(reply: &Reply) -> PersistError {
    let status = reply.status;
    let http = |code, reason| PersistError::http(code, reason, status);
    match (status, error_code(&reply.body)) {
        (_, Some("NoSuchBucket")) => {
            http(ErrorCode::BucketNotFound, "the S3 bucket does not exist")
        }
        (_, Some("SignatureDoesNotMatch")) => http(
            ErrorCode::StoreSignature,
            "the S3 store refused the request's signature",
        ),
        (_, Some("InvalidAccessKeyId")) => http(
            ErrorCode::StoreDenied,
            "the S3 store does not know the access key id",
        ),
        (401 | 403, _) => http(ErrorCode::StoreDenied, "the S3 store denied the request"),
        (500..=599, _) => http(
            ErrorCode::StoreUnavailable,
            "the S3 store answered a server error",
        ),
        _ => http(
            ErrorCode::StoreUnavailable,
            "the S3 store answered a status this client does not expect",
        ),
    }
}

fn transport_error(e: &ureq::Error) -> PersistError {
    let reason = match e {
        ureq::Error::Timeout(_) => "the S3 store did not answer in time",
        ureq::Error::HostNotFound => "the S3 store's host name does not resolve",
        ureq::Error::ConnectionFailed => "the S3 store could not be reached",
        ureq::Error::Io(_) => "the connection to the S3 store failed or closed before a reply",
        _ => "the S3 store's reply could not be read",
    };
    PersistError::new(ErrorCode::StoreUnavailable, reason)
}

fn blob_too_long() -> PersistError {
    PersistError::rule(
        ErrorCode::BlobSize,
        BlobRule::Size.id(),
        "blob is longer than 32 MiB + 64 KiB",
    )
}

impl S3Store {
    /// A store on `location`, signing with `credentials` (`None`: unsigned requests,
    /// which an S3 with identities refuses; the tests use that). Nothing is sent yet.
    pub fn new(
        location: &S3Location,
        credentials: Option<Credentials>,
        region: &str,
    ) -> Result<S3Store> {
        let bucket = Bucket::new(
            location.endpoint.clone(),
            UrlStyle::Path,
            location.bucket.clone(),
            region.to_owned(),
        )
        .map_err(|_| invalid("the S3 endpoint cannot hold a path-style bucket"))?;
        let agent = ureq::Agent::config_builder()
            .http_status_as_error(false)
            // A redirect would carry a signed URL elsewhere; an environment proxy would
            // take loopback traffic off the machine.
            .max_redirects(0)
            .proxy(None)
            .timeout_connect(Some(Duration::from_secs(S3_CONNECT_TIMEOUT_SECS)))
            .timeout_global(Some(Duration::from_secs(S3_REQUEST_TIMEOUT_SECS)))
            .build()
            .new_agent();
        Ok(S3Store {
            bucket,
            credentials,
            agent,
        })
    }

    /// `URL/BUCKET` with the identity from the environment; checks the bucket exists.
    pub fn open(location: &str) -> Result<S3Store> {
        let location = S3Location::parse(location)?;
        let (credentials, region) = credentials_from_env()?;
        let store = S3Store::new(&location, Some(credentials), &region)?;
        store.check_bucket()?;
        Ok(store)
    }

    /// HeadBucket: the bucket exists and the identity may use it. 404 is
    /// `not_found.bucket` (a HEAD reply has no error document to read).
    pub fn check_bucket(&self) -> Result<()> {
        let url = HeadBucket::new(&self.bucket, self.credentials.as_ref()).sign(expiry());
        let reply = self.send("HEAD", url, &[], Body::Empty, 0)?;
        match reply.status {
            200 => Ok(()),
            404 => Err(PersistError::http(
                ErrorCode::BucketNotFound,
                "the S3 bucket does not exist",
                404,
            )),
            _ => Err(reply_error(&reply)),
        }
    }

    fn key(run: &str, r: &StateRef) -> Result<String> {
        check_run(run)?;
        Ok(format!("{}{r}", run_prefix(run)))
    }

    /// Sends one request; the reply body is read up to `limit` bytes (a longer one is
    /// refused on its Content-Length before reading, or when the limit is reached).
    fn send(
        &self,
        method: &str,
        url: Url,
        headers: &[(&str, &str)],
        body: Body<'_>,
        limit: u64,
    ) -> Result<Reply> {
        let request = http_request(method, url.as_str(), headers);
        let sent = match body {
            Body::Empty => self
                .agent
                .run(request.body(()).expect("request parts are valid")),
            Body::Bytes(b) => self
                .agent
                .run(request.body(b).expect("request parts are valid")),
        };
        let mut response = sent.map_err(|e| transport_error(&e))?;
        let status = response.status().as_u16();
        let declared = response
            .headers()
            .get("content-length")
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.parse::<u64>().ok());
        let limit = if (200..300).contains(&status) {
            limit
        } else {
            MAX_S3_ERROR_BODY_BYTES
        };
        if declared.is_some_and(|n| n > limit) {
            return Err(too_long(limit));
        }
        if method == "HEAD" {
            return Ok(Reply {
                status,
                body: Vec::new(),
            });
        }
        let body = response
            .body_mut()
            .with_config()
            .limit(limit)
            .read_to_vec()
            .map_err(|e| match e {
                ureq::Error::BodyExceedsLimit(_) => too_long(limit),
                e => transport_error(&e),
            })?;
        Ok(Reply { status, body })
    }
}

fn too_long(limit: u64) -> PersistError {
    if limit == MAX_BLOB_BYTES {
        blob_too_long()
    } else {
        PersistError::new(
            ErrorCode::StoreUnavailable,
            "the S3 store's reply is longer than this client reads",
        )
    }
}

fn http_request(method: &str, url: &str, headers: &[(&str, &str)]) -> ureq::http::request::Builder {
    let mut builder = ureq::http::Request::builder().method(method).uri(url);
    for (name, value) in headers {
        builder = builder.header(*name, *value);
    }
    builder
}

fn expiry() -> Duration {
    Duration::from_secs(S3_SIGNATURE_EXPIRY_SECS)
}

/// Every key of a run starts with this (the trailing `/` keeps `run-1` and `run-10` apart).
fn run_prefix(run: &str) -> String {
    format!("runs/{run}/")
}

impl BackendSessionStore for S3Store {
    fn put(&self, run: &str, r: &StateRef, blob: &[u8]) -> Result<()> {
        if blob.len() as u64 > MAX_BLOB_BYTES {
            return Err(blob_too_long());
        }
        let key = S3Store::key(run, r)?;
        let mut action = PutObject::new(&self.bucket, self.credentials.as_ref(), &key);
        // Signed, so no hop can drop the precondition.
        action.headers_mut().insert("if-none-match", "*");
        let url = action.sign(expiry());
        let reply = self.send(
            "PUT",
            url,
            &[("if-none-match", "*")],
            Body::Bytes(blob),
            MAX_S3_ERROR_BODY_BYTES,
        )?;
        match reply.status {
            200 => Ok(()),
            // 409 ConditionalRequestConflict: another put of the ref is in flight; it
            // wins or fails, either way this put did not store these bytes.
            412 | 409 if error_code(&reply.body) != Some("NoSuchBucket") => {
                Err(PersistError::http(
                    ErrorCode::Exists,
                    "a blob already exists under the ref",
                    reply.status,
                ))
            }
            _ => Err(reply_error(&reply)),
        }
    }

    fn get(&self, run: &str, r: &StateRef) -> Result<Vec<u8>> {
        let key = S3Store::key(run, r)?;
        let url = GetObject::new(&self.bucket, self.credentials.as_ref(), &key).sign(expiry());
        let reply = self.send("GET", url, &[], Body::Empty, MAX_BLOB_BYTES)?;
        match (reply.status, error_code(&reply.body)) {
            (200, _) => Ok(reply.body),
            (404, None | Some("NoSuchKey")) => Err(PersistError::http(
                ErrorCode::BlobNotFound,
                "no blob under the ref",
                404,
            )),
            _ => Err(reply_error(&reply)),
        }
    }

    fn delete(&self, run: &str, r: &StateRef) -> Result<()> {
        let key = S3Store::key(run, r)?;
        self.delete_key(&key)
    }

    fn delete_run(&self, run: &str) -> Result<()> {
        check_run(run)?;
        let prefix = run_prefix(run);
        // Lists the first page again after deleting each one: no continuation token
        // outlives the keys it pointed into.
        for _ in 0..MAX_S3_SWEEP_PAGES {
            let keys = self.list_page(&prefix)?;
            if keys.is_empty() {
                return Ok(());
            }
            for key in keys {
                self.delete_key(&key)?;
            }
        }
        Err(PersistError::new(
            ErrorCode::StoreUnavailable,
            "the S3 store kept listing keys of the run after they were deleted",
        ))
    }
}

impl S3Store {
    fn delete_key(&self, key: &str) -> Result<()> {
        let url = DeleteObject::new(&self.bucket, self.credentials.as_ref(), key).sign(expiry());
        let reply = self.send("DELETE", url, &[], Body::Empty, MAX_S3_ERROR_BODY_BYTES)?;
        match (reply.status, error_code(&reply.body)) {
            (200 | 204, _) => Ok(()),
            // Idempotent: a key already gone is deleted.
            (404, None | Some("NoSuchKey")) => Ok(()),
            _ => Err(reply_error(&reply)),
        }
    }

    /// One page of the keys under `prefix`; a key outside it is a reply this client
    /// does not trust.
    fn list_page(&self, prefix: &str) -> Result<Vec<String>> {
        let mut action = ListObjectsV2::new(&self.bucket, self.credentials.as_ref());
        action.with_prefix(prefix);
        action.with_max_keys(S3_LIST_PAGE_KEYS);
        let url = action.sign(expiry());
        let reply = self.send("GET", url, &[], Body::Empty, MAX_S3_LIST_BODY_BYTES)?;
        if reply.status != 200 {
            return Err(reply_error(&reply));
        }
        let unreadable = || {
            PersistError::new(
                ErrorCode::StoreUnavailable,
                "the S3 store's listing could not be read",
            )
        };
        let text = std::str::from_utf8(&reply.body).map_err(|_| unreadable())?;
        let page = ListObjectsV2::parse_response(text).map_err(|_| unreadable())?;
        let keys: Vec<String> = page.contents.into_iter().map(|c| c.key).collect();
        if keys.iter().any(|k| !k.starts_with(prefix)) {
            return Err(PersistError::new(
                ErrorCode::StoreUnavailable,
                "the S3 store listed a key outside the run",
            ));
        }
        Ok(keys)
    }
}
