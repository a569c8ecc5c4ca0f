//! The decoded checkpoint: the allowlist of what a durable file may hold.
//!
//! These are the writer's input and the reader's output. Runtime structs of a daemon
//! are never serialized; a daemon builds one of these from its own state.

/// A durable format version (RFC §4, §4.1, §4.2).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Format {
    V1 = 1,
    V2 = 2,
    V3 = 3,
}

impl Format {
    pub const CURRENT: Format = Format::V3;
    pub const ALL: [Format; 3] = [Format::V1, Format::V2, Format::V3];

    pub fn number(self) -> u64 {
        self as u64
    }

    pub fn from_number(n: u64) -> Option<Format> {
        match n {
            1 => Some(Format::V1),
            2 => Some(Format::V2),
            3 => Some(Format::V3),
            _ => None,
        }
    }

    /// Format 2 added float layer fields and pane tags.
    pub fn has_floats_and_tags(self) -> bool {
        self >= Format::V2
    }

    /// Format 3 added split ratios.
    pub fn has_ratios(self) -> bool {
        self >= Format::V3
    }
}

/// Milliseconds since the Unix epoch, UTC. Durable timestamps have millisecond precision.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Timestamp(pub i64);

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Shutdown {
    Open,
    Clean,
}

/// A whole checkpoint payload.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Checkpoint {
    /// `c` + lowercase UUID v4; also the file name without `.json`.
    pub checkpoint: String,
    pub generation: u64,
    pub socket: String,
    pub uid: u64,
    pub captured_at: Timestamp,
    pub shutdown: Shutdown,
    pub sessions: Vec<Session>,
    pub windows: Vec<Window>,
    pub panes: Vec<Pane>,
}

/// IDs are kept as their numeric part: `s17` is `Session { id: 17, .. }`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Session {
    pub id: u64,
    pub name: String,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Window {
    pub id: u64,
    pub session: u64,
    pub name: String,
    pub revision: u64,
    /// The split tree in preorder; empty for an empty window.
    pub nodes: Vec<Node>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Axis {
    Cols,
    Rows,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Node {
    Pane {
        pane: u64,
    },
    /// `first`/`second` are indexes into the window's `nodes`; `ratio` is format 3 only.
    Split {
        axis: Axis,
        first: usize,
        second: usize,
        ratio: Option<u16>,
    },
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Exit {
    Code(u8),
    /// A symbolic name such as `SIGTERM`; historical display data, never a signal target.
    Signal(String),
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PaneState {
    Running,
    /// `exit` is `None` when no exit status is known; that never means success.
    Exited {
        exit: Option<Exit>,
    },
}

/// RFC §5's `previous_state`: an archive's historical process state.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum PreviousState {
    Exited,
    Interrupted,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Pane {
    pub id: u64,
    pub window: u64,
    pub session: u64,
    pub cols: u16,
    pub rows: u16,
    pub state: PaneState,
    pub previous_state: Option<PreviousState>,
    /// `Some` for a pane in the float layer (format 2+; `layer: "float"` on disk).
    pub float: Option<FloatSpec>,
    /// Sorted by key; empty means "no tags" (written as an absent field).
    pub tags: Vec<Tag>,
    pub text: Text,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Tag {
    pub key: String,
    pub value: String,
}

/// A float's creation spec (RFC-0016 §8.2 as carried by format 2): only what was given.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct FloatSpec {
    pub preset: Option<String>,
    pub width: Option<Extent>,
    pub height: Option<Extent>,
    pub anchor: Option<Anchor>,
    pub x: Option<i16>,
    pub y: Option<i16>,
    pub min_cols: Option<u16>,
    pub min_rows: Option<u16>,
    pub border: Option<Border>,
    pub title: Option<String>,
    pub z: u64,
}

/// A float width or height: `"12"` cells or `"60%"` of the window.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Extent {
    Cells(u16),
    Percent(u8),
}

macro_rules! named_enum {
    ($(#[$m:meta])* $name:ident { $($variant:ident = $text:literal,)* }) => {
        $(#[$m])*
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
        pub enum $name { $($variant,)* }
        impl $name {
            pub const ALL: &'static [$name] = &[$($name::$variant,)*];
            pub fn as_str(self) -> &'static str { match self { $($name::$variant => $text,)* } }
            pub fn parse(s: &str) -> Option<$name> { match s { $($text => Some($name::$variant),)* _ => None } }
        }
    };
}

named_enum!(Anchor {
    TopLeft = "top_left",
    Top = "top",
    TopRight = "top_right",
    Left = "left",
    Center = "center",
    Right = "right",
    BottomLeft = "bottom_left",
    Bottom = "bottom",
    BottomRight = "bottom_right",
});

named_enum!(Border {
    None = "none",
    Single = "single",
    Double = "double",
    Rounded = "rounded",
    Heavy = "heavy",
});

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Text {
    /// No terminal bytes saved (the default).
    Omitted,
    /// Retained text was discarded for age.
    Expired,
    Plain(PlainText),
    /// `Plain` with its rows already checked and encoded ([`crate::EncodedRows`]):
    /// a daemon may produce it so that an unchanged screen is not copied,
    /// checked and escaped again on every checkpoint. The writer writes exactly the
    /// bytes of the equivalent `Plain`; the reader never produces it, so compare
    /// through [`Text::to_plain`].
    Encoded(crate::EncodedText),
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PlainText {
    pub saved_at: Timestamp,
    pub expires_at: Timestamp,
    /// Exactly `rows` physical rows of the primary screen.
    pub screen: Vec<String>,
    /// Oldest first.
    pub history: Vec<String>,
}

impl Checkpoint {
    /// The lowest format that can hold this state: what a fixture writer should pick.
    pub fn minimal_format(&self) -> Format {
        let ratios = self
            .windows
            .iter()
            .flat_map(|w| &w.nodes)
            .any(|n| matches!(n, Node::Split { ratio: Some(_), .. }));
        if ratios {
            Format::V3
        } else if self
            .panes
            .iter()
            .any(|p| p.float.is_some() || !p.tags.is_empty())
        {
            Format::V2
        } else {
            Format::V1
        }
    }

    /// The file name this checkpoint must be stored under.
    pub fn file_name(&self) -> String {
        format!("{}.json", self.checkpoint)
    }
}

/// `SIG[A-Z0-9]+`.
pub(crate) fn is_signal_name(name: &str) -> bool {
    name.len() > 3
        && name.starts_with("SIG")
        && name
            .bytes()
            .skip(3)
            .all(|b| b.is_ascii_uppercase() || b.is_ascii_digit())
}
