//! Verdicts of the reader: an RFC error code, the rule that failed, and where.
//!
//! A reason names the rule and a JSON path (or a byte offset for syntax errors),
//! never payload content: unknown keys, names and terminal text stay out of it.

use std::fmt;

/// The RFC §6 error code a failed read maps to (pins.md "Error and status names").
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Code {
    /// `conflict.checkpoint_corrupt`, status `corrupt`.
    Corrupt,
    /// `unsupported.checkpoint_format`, status `incompatible`.
    Format,
    /// `unsupported.checkpoint_size`, status `incompatible`.
    Size,
}

impl Code {
    pub fn as_str(self) -> &'static str {
        match self {
            Code::Corrupt => "conflict.checkpoint_corrupt",
            Code::Format => "unsupported.checkpoint_format",
            Code::Size => "unsupported.checkpoint_size",
        }
    }

    /// The `recovery.list` status of a file failing with this code.
    pub fn list_status(self) -> &'static str {
        match self {
            Code::Corrupt => "corrupt",
            Code::Format | Code::Size => "incompatible",
        }
    }

    /// The CLI exit code of RFC §6's error table.
    pub fn exit_code(self) -> i32 {
        match self {
            Code::Corrupt => 5,
            Code::Format | Code::Size => 10,
        }
    }
}

impl fmt::Display for Code {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

macro_rules! rules {
    ($($variant:ident => ($id:literal, $code:ident, $text:literal),)*) => {
        /// Every rule the reader enforces. The id is stable: corpora and reports use it.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
        pub enum Rule { $($variant,)* }

        impl Rule {
            pub const ALL: &'static [Rule] = &[$(Rule::$variant,)*];
            pub fn id(self) -> &'static str { match self { $(Rule::$variant => $id,)* } }
            pub fn code(self) -> Code { match self { $(Rule::$variant => Code::$code,)* } }
            pub fn description(self) -> &'static str { match self { $(Rule::$variant => $text,)* } }
            pub fn from_id(id: &str) -> Option<Rule> {
                match id { $($id => Some(Rule::$variant),)* _ => None }
            }
        }
    };
}

rules! {
    FileTooLarge => ("file.too_large", Size, "file longer than min(max_checkpoint_bytes, 64 MiB)"),
    Bom => ("json.bom", Corrupt, "byte order mark before the JSON text"),
    Utf8 => ("json.utf8", Corrupt, "invalid UTF-8"),
    LoneSurrogate => ("json.lone_surrogate", Corrupt, "escaped lone UTF-16 surrogate"),
    Syntax => ("json.syntax", Corrupt, "not JSON"),
    ControlInString => ("json.control_in_string", Corrupt, "unescaped control character in a JSON string"),
    DuplicateKey => ("json.duplicate_key", Corrupt, "duplicate key in an object"),
    UnsafeInteger => ("json.unsafe_integer", Corrupt, "integer outside the safe range"),
    TrailingData => ("json.trailing_data", Corrupt, "data after the top-level value"),
    Depth => ("json.depth", Size, "nesting deeper than 32"),
    EnvelopeNotObject => ("envelope.not_object", Corrupt, "envelope is not a JSON object"),
    FormatMissing => ("envelope.format_missing", Corrupt, "envelope has no format"),
    FormatType => ("envelope.format_type", Corrupt, "format is not an integer"),
    FormatUnsupported => ("envelope.format_unsupported", Format, "format is not 1, 2 or 3"),
    EnvelopeKeys => ("envelope.keys", Corrupt, "envelope keys are not exactly format, payload, sha256"),
    PayloadType => ("envelope.payload_type", Corrupt, "payload is not a string"),
    Sha256Syntax => ("envelope.sha256_syntax", Corrupt, "sha256 is not 64 lowercase hex digits"),
    Checksum => ("envelope.checksum", Corrupt, "sha256 does not match the payload"),
    Type => ("schema.type", Corrupt, "value has the wrong JSON type"),
    MissingField => ("schema.missing_field", Corrupt, "required field missing"),
    UnknownField => ("schema.unknown_field", Corrupt, "field unknown to this format"),
    Enum => ("schema.enum", Corrupt, "value not in the field's enumeration"),
    Range => ("schema.range", Corrupt, "integer outside the field's range"),
    CheckpointId => ("checkpoint.id_syntax", Corrupt, "checkpoint is not c + lowercase UUID v4"),
    FileName => ("checkpoint.file_name", Corrupt, "file name is not the checkpoint id + .json"),
    SocketSyntax => ("checkpoint.socket_syntax", Corrupt, "socket is not an absolute path of 1-4096 bytes without NUL"),
    SocketMismatch => ("checkpoint.socket_mismatch", Corrupt, "socket does not match the active store"),
    UidMismatch => ("checkpoint.uid_mismatch", Corrupt, "uid does not match the active store"),
    CleanWithRunning => ("checkpoint.clean_with_running", Corrupt, "clean checkpoint contains a running pane"),
    Timestamp => ("timestamp.syntax", Corrupt, "not a UTC YYYY-MM-DDTHH:MM:SS.mmmZ calendar time"),
    IdSyntax => ("id.syntax", Corrupt, "resource ID is not s<n>/w<n>/p<n> with a safe n and no leading zero"),
    NameSyntax => ("name.syntax", Corrupt, "name is not 1-255 bytes without control characters"),
    Unsorted => ("order.unsorted", Corrupt, "IDs not strictly ascending (unsorted or duplicate)"),
    SessionMissing => ("ref.session_missing", Corrupt, "window's session does not exist"),
    WindowMissing => ("ref.window_missing", Corrupt, "pane's window does not exist"),
    SessionMismatch => ("ref.session_mismatch", Corrupt, "pane's session differs from its window's session"),
    TopologyCount => ("count.topology", Size, "sessions + windows + panes + nodes over 100000"),
    TreeIndex => ("tree.index", Corrupt, "split child index out of range"),
    TreePreorder => ("tree.preorder", Corrupt, "split children not in preorder (cycle, gap or reuse)"),
    TreeLeftover => ("tree.leftover", Corrupt, "nodes not reached from the root"),
    LeafUnknownPane => ("tree.leaf_unknown_pane", Corrupt, "tree leaf names a pane that does not exist"),
    LeafOtherWindow => ("tree.leaf_other_window", Corrupt, "tree leaf names a pane of another window"),
    LeafFloat => ("tree.leaf_float", Corrupt, "tree leaf names a float pane"),
    LeafDuplicate => ("tree.leaf_duplicate", Corrupt, "pane appears twice in the tree"),
    PaneNotInTree => ("tree.pane_missing", Corrupt, "tiled pane missing from its window's tree"),
    Ratio => ("split.ratio", Corrupt, "ratio is not an integer in 1-9999"),
    ExitNotExited => ("pane.exit_not_exited", Corrupt, "exit_code or signal on a pane that is not exited"),
    ExitAndSignal => ("pane.exit_and_signal", Corrupt, "both exit_code and signal"),
    PreviousStateNotExited => ("pane.previous_state", Corrupt, "previous_state on a pane that is not exited"),
    SignalSyntax => ("pane.signal_syntax", Corrupt, "signal does not match SIG[A-Z0-9]+"),
    TextRows => ("text.rows", Corrupt, "screen does not have exactly rows entries"),
    TextControl => ("text.control", Corrupt, "text row contains a control character"),
    TextTimes => ("text.times", Corrupt, "not saved_at <= expires_at <= saved_at + 2592000 s"),
    TagsEmpty => ("tags.empty", Corrupt, "tags array is empty"),
    TagsCount => ("tags.count", Size, "more than 16 tags"),
    TagKey => ("tags.key_syntax", Corrupt, "tag key does not match [a-z][a-z0-9_.-]{0,63}"),
    TagValue => ("tags.value_syntax", Corrupt, "tag value is not 1-256 bytes without control characters"),
    TagsUnsorted => ("tags.unsorted", Corrupt, "tag keys not strictly ascending"),
    Layer => ("float.layer", Corrupt, "layer is not \"float\" or not present exactly when float is"),
    FloatZ => ("float.z", Corrupt, "z is not an integer in 1-9007199254740991"),
    FloatPreset => ("float.preset", Corrupt, "preset is not <namespace>.<name>"),
    FloatSize => ("float.size", Corrupt, "width/height is not \"N\" (1-65535) or \"N%\" (1-100)"),
    FloatAnchor => ("float.anchor", Corrupt, "anchor is not a known anchor"),
    FloatBorder => ("float.border", Corrupt, "border is not a known border"),
    FloatOffset => ("float.offset", Corrupt, "x/y is not an integer in -4096..4096"),
    FloatMin => ("float.min", Corrupt, "min_cols/min_rows is not an integer in 1-65535"),
    FloatTitle => ("float.title", Corrupt, "title is not 1-128 bytes without control characters"),
}

/// Which JSON document a path refers to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Doc {
    File,
    Envelope,
    Payload,
    /// A wire frame (the daemon's protocol uses the same strict JSON rules).
    Frame,
}

/// One step of a JSON path. Keys are the format's own field names, never file content.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Seg {
    Key(&'static str),
    Index(usize),
}

/// `$.panes[3].text` for a path, outermost segment first (shared with the kit's
/// other readers).
pub fn path_string(path: &[Seg]) -> String {
    let mut out = String::from("$");
    for seg in path {
        match seg {
            Seg::Key(k) => {
                out.push('.');
                out.push_str(k);
            }
            Seg::Index(i) => {
                out.push('[');
                out.push_str(&i.to_string());
                out.push(']');
            }
        }
    }
    out
}

/// A failed read: the rule, the document and the path (or byte offset) where it failed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FormatError {
    pub rule: Rule,
    pub doc: Doc,
    /// Outermost segment first.
    pub path: Vec<Seg>,
    /// Byte offset in the document, for errors found while scanning JSON.
    pub offset: Option<usize>,
}

impl FormatError {
    pub fn new(rule: Rule, doc: Doc) -> Self {
        FormatError {
            rule,
            doc,
            path: Vec::new(),
            offset: None,
        }
    }

    pub fn at_offset(rule: Rule, doc: Doc, offset: usize) -> Self {
        FormatError {
            rule,
            doc,
            path: Vec::new(),
            offset: Some(offset),
        }
    }

    pub fn code(&self) -> Code {
        self.rule.code()
    }

    /// Prepends a key while the error unwinds out of a nested decoder.
    pub fn in_key(mut self, key: &'static str) -> Self {
        self.path.insert(0, Seg::Key(key));
        self
    }

    /// Prepends an array index while the error unwinds.
    pub fn in_index(mut self, index: usize) -> Self {
        self.path.insert(0, Seg::Index(index));
        self
    }

    /// `$.panes[3].text`, the path as users read it.
    pub fn path_string(&self) -> String {
        path_string(&self.path)
    }

    /// The human reason: rule id, description and location. Never file content.
    pub fn reason(&self) -> String {
        let doc = match self.doc {
            Doc::File => "file",
            Doc::Envelope => "envelope",
            Doc::Payload => "payload",
            Doc::Frame => "frame",
        };
        let place = match self.offset {
            Some(off) => format!("{doc} byte {off}"),
            None if self.doc == Doc::File => doc.to_string(),
            None => format!("{doc} {}", self.path_string()),
        };
        format!(
            "{}: {} at {}",
            self.rule.id(),
            self.rule.description(),
            place
        )
    }
}

impl fmt::Display for FormatError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} ({})", self.code(), self.reason())
    }
}

impl std::error::Error for FormatError {}

pub type Result<T> = std::result::Result<T, FormatError>;
