//! The offline checkers' verdicts (`vxref workspace check`, `vxref integration
//! check`), pinned like `vxcert validate`: with `--json` exactly one line per file,
//! `{"file":…,"result":"valid"|<error code>,"rule":<rule id>|null,"reason":…}`.
//! Pure: the caller opens the file, asks [`archive_length`] / [`template_length`]
//! before reading, then passes the bytes.

use vx_format::json::push_string;

use crate::limits::{MAX_ARCHIVE_BYTES, MAX_TEMPLATE_BYTES};
use crate::rules::TemplateRule;
use crate::{archive, template};

/// The `result` of a file that could not be opened or read.
pub const FILE_IO_CODE: &str = "unavailable.file_io";

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Verdict {
    /// `"valid"` or the error code.
    pub result: &'static str,
    pub rule: Option<&'static str>,
    pub reason: Option<String>,
}

impl Verdict {
    pub fn valid() -> Self {
        Verdict {
            result: "valid",
            rule: None,
            reason: None,
        }
    }

    pub fn is_valid(&self) -> bool {
        self.rule.is_none() && self.result == "valid"
    }

    /// A file that could not be read; `what` is an `io::ErrorKind`-like word.
    pub fn file_io(what: &str) -> Self {
        Verdict {
            result: FILE_IO_CODE,
            rule: None,
            reason: Some(format!("cannot read file: {what}")),
        }
    }

    /// The pinned JSON line (without the newline).
    pub fn json_line(&self, file: &str) -> String {
        let mut out = String::from("{\"file\":");
        push_string(&mut out, file);
        out.push_str(",\"result\":");
        push_string(&mut out, self.result);
        out.push_str(",\"rule\":");
        match self.rule {
            Some(rule) => push_string(&mut out, rule),
            None => out.push_str("null"),
        }
        out.push_str(",\"reason\":");
        match &self.reason {
            Some(reason) => push_string(&mut out, reason),
            None => out.push_str("null"),
        }
        out.push('}');
        out
    }

    /// The human line: `FILE: valid` or `FILE: CODE: REASON`.
    pub fn text_line(&self, file: &str) -> String {
        match &self.reason {
            None => format!("{file}: {}", self.result),
            Some(reason) => format!("{file}: {}: {reason}", self.result),
        }
    }
}

impl From<archive::ArchiveError> for Verdict {
    fn from(e: archive::ArchiveError) -> Self {
        Verdict {
            result: e.code(),
            rule: Some(e.rule.id()),
            reason: Some(e.reason()),
        }
    }
}

impl From<template::TemplateError> for Verdict {
    fn from(e: template::TemplateError) -> Self {
        Verdict {
            result: e.code(),
            rule: Some(e.rule.id()),
            reason: Some(e.reason()),
        }
    }
}

/// The verdict on an archive's length alone, when it is already refused.
pub fn archive_length(len: u64) -> Option<Verdict> {
    archive::check_length(len).err().map(Verdict::from)
}

/// The most bytes worth reading of an archive (one more proves it too long).
pub const ARCHIVE_READ_LIMIT: u64 = MAX_ARCHIVE_BYTES + 1;

pub fn archive(bytes: &[u8]) -> Verdict {
    match archive::read(bytes) {
        Ok(_) => Verdict::valid(),
        Err(e) => e.into(),
    }
}

/// The verdict on a template's length alone, when it is already refused.
pub fn template_length(len: u64) -> Option<Verdict> {
    (len > MAX_TEMPLATE_BYTES as u64).then(|| {
        template::TemplateError {
            rule: TemplateRule::Size,
            path: Vec::new(),
        }
        .into()
    })
}

/// The most bytes worth reading of a template.
pub const TEMPLATE_READ_LIMIT: u64 = MAX_TEMPLATE_BYTES as u64 + 1;

pub fn template(bytes: &[u8]) -> Verdict {
    match template::parse(bytes) {
        Ok(_) => Verdict::valid(),
        Err(e) => e.into(),
    }
}

/// Which checker a file goes to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum InputKind {
    WorkspaceArchive,
    IntegrationTemplate,
}

impl InputKind {
    pub fn length_verdict(self, len: u64) -> Option<Verdict> {
        match self {
            InputKind::WorkspaceArchive => archive_length(len),
            InputKind::IntegrationTemplate => template_length(len),
        }
    }

    pub fn read_limit(self) -> u64 {
        match self {
            InputKind::WorkspaceArchive => ARCHIVE_READ_LIMIT,
            InputKind::IntegrationTemplate => TEMPLATE_READ_LIMIT,
        }
    }

    pub fn verdict(self, bytes: &[u8]) -> Verdict {
        match self {
            InputKind::WorkspaceArchive => archive(bytes),
            InputKind::IntegrationTemplate => template(bytes),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rules::ArchiveRule;

    #[test]
    fn pinned_lines() {
        assert_eq!(
            archive(br#"{"schema_version":1,"sessions":[]}"#).json_line("a \"b\".json"),
            r#"{"file":"a \"b\".json","result":"valid","rule":null,"reason":null}"#
        );
        let line = archive(br#"{"schema_version":3,"sessions":[]}"#).json_line("x");
        assert_eq!(
            line,
            r#"{"file":"x","result":"unsupported.archive_schema","rule":"archive.schema_version","reason":"archive.schema_version: schema_version is not the integer 1 or 2 at $.schema_version"}"#
        );
        let too_long = archive_length(MAX_ARCHIVE_BYTES + 1).unwrap();
        assert_eq!(too_long.rule, Some(ArchiveRule::Size.id()));
        assert_eq!(too_long.result, "conflict.archive_corrupt");
        assert!(archive_length(MAX_ARCHIVE_BYTES).is_none());
        assert_eq!(template(b"id = 1").rule, Some("template.type"));
        assert_eq!(
            template_length(TEMPLATE_READ_LIMIT).unwrap().rule,
            Some("template.size")
        );
        assert_eq!(
            Verdict::file_io("NotFound").text_line("f"),
            "f: unavailable.file_io: cannot read file: NotFound"
        );
    }
}
