//! The store adapter: a `BackendSessionStore` driven by JSON lines
//! (docs/spec/persist-store-adapter.md), so a conformance kit can judge any
//! implementation's store without linking it (`vxpersist store serve --store SPEC`).
//!
//! One request per line on the input, one reply per line on the output, in order.
//! Blob bytes never travel on the lines: a request names a file to read (put) or to
//! create (get), so a reply carries only a code.

use std::io::{BufRead, Read, Write};
use std::path::Path;

use serde::Deserialize;

use crate::error::{ErrorCode, PersistError};
use crate::limits::MAX_BLOB_BYTES;
use crate::store::{BackendSessionStore, StateRef};

/// Longest request line, newline included; a longer one is refused, then skipped.
pub const MAX_REQUEST_LINE_BYTES: usize = 8 * 1024;

#[derive(Deserialize)]
#[serde(tag = "op", rename_all = "snake_case", deny_unknown_fields)]
enum Request {
    Put {
        run: String,
        #[serde(rename = "ref")]
        r: String,
        file: String,
    },
    Get {
        run: String,
        #[serde(rename = "ref")]
        r: String,
        file: String,
    },
    Delete {
        run: String,
        #[serde(rename = "ref")]
        r: String,
    },
    DeleteRun {
        run: String,
    },
}

/// A request the adapter could not even read: its reply code.
const BAD_REQUEST: &str = "invalid_params.request";

fn apply(store: &dyn BackendSessionStore, req: Request) -> Result<(), PersistError> {
    match req {
        Request::Put { run, r, file } => {
            let r = StateRef::parse(&r)?;
            let blob = read_bounded(Path::new(&file))?;
            store.put(&run, &r, &blob)
        }
        Request::Get { run, r, file } => {
            let r = StateRef::parse(&r)?;
            let blob = store.get(&run, &r)?;
            write_new(Path::new(&file), &blob)
        }
        Request::Delete { run, r } => store.delete(&run, &StateRef::parse(&r)?),
        Request::DeleteRun { run } => store.delete_run(&run),
    }
}

fn io_error(what: &'static str) -> PersistError {
    PersistError::new(ErrorCode::PersistIo, what)
}

fn read_bounded(path: &Path) -> Result<Vec<u8>, PersistError> {
    let f = std::fs::File::open(path).map_err(|_| io_error("the put's file cannot be read"))?;
    let mut blob = Vec::new();
    f.take(MAX_BLOB_BYTES + 1)
        .read_to_end(&mut blob)
        .map_err(|_| io_error("the put's file cannot be read"))?;
    crate::blob::check_length(blob.len() as u64)?;
    Ok(blob)
}

/// The get's file is created new (0600, never through a symlink, never replacing).
fn write_new(path: &Path, blob: &[u8]) -> Result<(), PersistError> {
    use std::os::unix::fs::OpenOptionsExt;
    let mut f = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .custom_flags(nix::libc::O_NOFOLLOW)
        .open(path)
        .map_err(|_| io_error("the get's file cannot be created"))?;
    f.write_all(blob)
        .and_then(|()| f.sync_all())
        .map_err(|_| io_error("the get's file cannot be written"))
}

fn reply(out: &mut dyn Write, result: Result<(), &str>) -> std::io::Result<()> {
    match result {
        Ok(()) => out.write_all(b"{\"ok\":true}\n")?,
        Err(code) => writeln!(out, "{{\"ok\":false,\"code\":{}}}", serde_json::json!(code))?,
    }
    out.flush()
}

/// Serves requests from `input` until it ends; an I/O error on either side ends it.
pub fn serve(
    store: &dyn BackendSessionStore,
    input: &mut dyn BufRead,
    out: &mut dyn Write,
) -> std::io::Result<()> {
    let mut line = Vec::new();
    loop {
        line.clear();
        let n = (&mut *input)
            .take(MAX_REQUEST_LINE_BYTES as u64)
            .read_until(b'\n', &mut line)?;
        if n == 0 {
            return Ok(());
        }
        if line.last() != Some(&b'\n') && n == MAX_REQUEST_LINE_BYTES {
            // Too long: refuse it once, then drop the rest of that line.
            skip_line(input)?;
            reply(out, Err(BAD_REQUEST))?;
            continue;
        }
        let result = match serde_json::from_slice::<Request>(&line) {
            Err(_) => Err(BAD_REQUEST),
            Ok(req) => apply(store, req).map_err(|e| e.code.as_str()),
        };
        reply(out, result)?;
    }
}

fn skip_line(input: &mut dyn BufRead) -> std::io::Result<()> {
    loop {
        let buf = input.fill_buf()?;
        if buf.is_empty() {
            return Ok(());
        }
        match buf.iter().position(|&b| b == b'\n') {
            Some(i) => {
                input.consume(i + 1);
                return Ok(());
            }
            None => {
                let len = buf.len();
                input.consume(len);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::FsStore;

    fn session(store: &FsStore, lines: &str) -> String {
        let mut out = Vec::new();
        serve(store, &mut lines.as_bytes(), &mut out).unwrap();
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn put_get_conflict_and_bad_requests() {
        let dir = tempfile::tempdir().unwrap();
        let store = FsStore::open(&dir.path().join("store")).unwrap();
        let src = dir.path().join("in");
        std::fs::write(&src, b"blob").unwrap();
        let out = dir.path().join("out");
        let r = "n/01J9ZQ4V7X8M2K3N4P5Q6R7S8T";
        let req = format!(
            "{{\"op\":\"put\",\"run\":\"r\",\"ref\":\"{r}\",\"file\":{src:?}}}\n\
             {{\"op\":\"put\",\"run\":\"r\",\"ref\":\"{r}\",\"file\":{src:?}}}\n\
             {{\"op\":\"get\",\"run\":\"r\",\"ref\":\"{r}\",\"file\":{out:?}}}\n\
             {{\"op\":\"get\",\"run\":\"r\",\"ref\":\"../x\",\"file\":{out:?}}}\n\
             {{\"op\":\"frob\"}}\n\
             {{\"op\":\"delete_run\",\"run\":\"r\",\"extra\":1}}\n\
             {}\n\
             {{\"op\":\"delete_run\",\"run\":\"r\"}}\n",
            "x".repeat(MAX_REQUEST_LINE_BYTES * 2)
        );
        let said = session(&store, &req);
        assert_eq!(
            said.lines().collect::<Vec<_>>(),
            [
                r#"{"ok":true}"#,
                r#"{"ok":false,"code":"conflict.exists"}"#,
                r#"{"ok":true}"#,
                r#"{"ok":false,"code":"invalid_params.ref"}"#,
                r#"{"ok":false,"code":"invalid_params.request"}"#,
                r#"{"ok":false,"code":"invalid_params.request"}"#,
                r#"{"ok":false,"code":"invalid_params.request"}"#,
                r#"{"ok":true}"#,
            ]
        );
        assert_eq!(std::fs::read(&out).unwrap(), b"blob");
    }
}
