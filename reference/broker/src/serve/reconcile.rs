//! Placeholder → real id for engines that mint their own ids (`pin = "none"`;
//! docs/spec/single-writer.md "Aliases").
//!
//! Before a placeholder launch the broker snapshots the engine's id index for the
//! cwd (read-only); after it, it polls: exactly one new id ⇒ persist
//! `placeholder → real` in `<runtime>/aliases.json` and tell the viewer
//! `{"t":"id","sid"}`; two or more ⇒ ambiguous, keep the placeholder (never guess);
//! none within the budget ⇒ keep serving under the placeholder for good.

use std::collections::BTreeSet;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use tokio::sync::mpsc;

use super::App;
use crate::key::{IdKind, SessionKey};

/// Bytes of an index read at most (an index is the engine's, not ours: bounded).
const MAX_INDEX_BYTES: u64 = 1 << 20;
const POLL: Duration = Duration::from_millis(100);
/// How long a placeholder waits for its real id before it is kept for good.
const BUDGET: Duration = Duration::from_secs(60);

/// The index as the kit reads it: a text file, one session per line, `<id>` or
/// `<id>\t<cwd>`; lines whose id is not of the engine's kind are ignored, and with a
/// cwd only that cwd's lines (and lines without one) count.
pub(crate) fn read_index(path: &Path, kind: IdKind, cwd: Option<&str>) -> BTreeSet<String> {
    let mut text = String::new();
    if crate::negative::is(crate::negative::Defect::IndexReadWrite) {
        let _ = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .open(path);
    }
    let Ok(file) = std::fs::File::open(path) else {
        return BTreeSet::new();
    };
    if file
        .take(MAX_INDEX_BYTES)
        .read_to_string(&mut text)
        .is_err()
    {
        return BTreeSet::new();
    }
    text.lines()
        .filter_map(|line| {
            let (id, line_cwd) = line
                .split_once('\t')
                .map_or((line, None), |(i, c)| (i, Some(c)));
            let kind_ok = match kind {
                IdKind::Uuid => crate::key::is_uuid(id),
                IdKind::Ses => crate::key::is_ses(id),
            };
            let cwd_ok = matches!((cwd, line_cwd), (Some(want), Some(got)) if want == got)
                || line_cwd.is_none()
                || cwd.is_none();
            let cwd_ok = cwd_ok || crate::negative::is(crate::negative::Defect::AnyCwd);
            (kind_ok && cwd_ok).then(|| id.to_owned())
        })
        .collect()
}

/// What one placeholder launch needs to reconcile.
pub(crate) struct Pending {
    pub(crate) placeholder: SessionKey,
    pub(crate) index: PathBuf,
    pub(crate) kind: IdKind,
    pub(crate) cwd: Option<String>,
    pub(crate) snapshot: BTreeSet<String>,
}

/// Polls the index; on exactly one new id persists the alias and sends the real key.
pub(crate) async fn run(app: Arc<App>, p: Pending, found: mpsc::Sender<String>) {
    let deadline = tokio::time::Instant::now() + BUDGET;
    while tokio::time::Instant::now() < deadline {
        tokio::time::sleep(POLL).await;
        let now = read_index(&p.index, p.kind, p.cwd.as_deref());
        let new: Vec<&String> = now.difference(&p.snapshot).collect();
        match new.as_slice() {
            [] => continue,
            [id] => {
                let real = format!("{}@{id}", p.placeholder.engine());
                let Some(real) = SessionKey::from_physical(&real) else {
                    return;
                };
                let pushed = crate::negative::is(crate::negative::Defect::PushUnpersisted);
                if persist(&app, &p.placeholder, &real).is_ok() || pushed {
                    let _ = found.send(real.as_str().to_owned()).await;
                }
                return;
            }
            // Two launches in one cwd within the window: never attach the wrong one.
            _ => return,
        }
    }
}

fn persist(app: &App, placeholder: &SessionKey, real: &SessionKey) -> crate::error::Result<()> {
    let _one_writer = app.alias_lock.lock().unwrap_or_else(|p| p.into_inner());
    let mut map = crate::alias::load(&app.runtime)?;
    map.insert(placeholder.clone(), real.clone())?;
    crate::alias::publish(&app.runtime, &map)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn index_lines() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("index");
        std::fs::write(
            &p,
            "ses_a\nses_b\t/w\nses_c\t/x\nnot an id\n6a73c0de-1234-4abc-8def-0123456789ab\n",
        )
        .unwrap();
        let ids = |cwd| {
            read_index(&p, IdKind::Ses, cwd)
                .into_iter()
                .collect::<Vec<_>>()
        };
        assert_eq!(ids(Some("/w")), ["ses_a", "ses_b"]);
        assert_eq!(ids(None), ["ses_a", "ses_b", "ses_c"]);
        assert!(read_index(&dir.path().join("absent"), IdKind::Ses, None).is_empty());
    }
}
