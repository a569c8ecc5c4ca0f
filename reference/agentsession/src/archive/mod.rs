//! Workspace archives, schema 1 and 2 (`docs/spec/workspace-archive.md`).
//!
//! [`read`] applies the rules in the spec's order and the first failing rule wins:
//! `archive.size` (on the length, before a byte is read: [`check_length`]),
//! `archive.json`, `archive.schema_version`, `archive.shape`,
//! `archive.schema1_record`, `archive.record`, `archive.duplicate_session`,
//! `archive.layout`, `archive.cells`, `archive.argv`. [`write`] is canonical.

mod model;
mod read;
mod write;

pub use model::*;
pub use read::{check_length, read};
pub use write::write;

use crate::rules::{path_string, ArchiveRule, Seg};

/// A refused archive: rule, field path and, for the JSON and record rules, the
/// finer rule underneath. Never a name, argv or id.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ArchiveError {
    pub rule: ArchiveRule,
    pub path: Vec<Seg>,
    /// `json.duplicate_key`, `native.option_shaped`, …
    pub detail: Option<&'static str>,
    /// Byte offset, for `archive.json`.
    pub offset: Option<usize>,
}

impl ArchiveError {
    pub(crate) fn new(rule: ArchiveRule, path: &[Seg]) -> Self {
        ArchiveError {
            rule,
            path: path.to_vec(),
            detail: None,
            offset: None,
        }
    }

    pub fn code(&self) -> &'static str {
        self.rule.code()
    }

    pub fn reason(&self) -> String {
        let mut out = format!("{}: {}", self.rule.id(), self.rule.description());
        if let Some(detail) = self.detail {
            out.push_str(" (");
            out.push_str(detail);
            out.push(')');
        }
        match self.offset {
            Some(offset) => out.push_str(&format!(" at byte {offset}")),
            None if self.rule == ArchiveRule::Size => {}
            None => {
                out.push_str(" at ");
                out.push_str(&path_string(&self.path));
            }
        }
        out
    }
}

impl std::fmt::Display for ArchiveError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.code(), self.reason())
    }
}

impl std::error::Error for ArchiveError {}

#[cfg(test)]
mod tests;
