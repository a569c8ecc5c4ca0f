//! The payload walk, after the envelope checks: a checked payload into the model,
//! every list bounded before it allocates.

use std::borrow::Cow;

use crate::error::{Doc, FormatError, Result, Rule};
use crate::json::{Checked, Cursor, Kind};
use crate::limits::{
    MAX_CELLS, MAX_EXIT_CODE, MAX_FLOAT_OFFSET, MAX_RATIO, MAX_SAFE_INTEGER, MAX_TAGS,
    MAX_TOPOLOGY_ITEMS, MIN_RATIO,
};
use crate::model::*;
use crate::time::parse_timestamp;

fn err(rule: Rule) -> FormatError {
    FormatError::new(rule, Doc::Payload)
}

fn missing(key: &'static str) -> FormatError {
    err(Rule::MissingField).in_key(key)
}

fn required<T>(value: Option<T>, key: &'static str) -> Result<T> {
    value.ok_or_else(|| missing(key))
}

/// Walks a checked payload into the model. Type, shape, enum and range rules of
/// single fields live here; rules across fields live in `validate`.
pub(super) struct PayloadDecoder<'a> {
    cur: Cursor<'a>,
    format: Format,
    /// sessions + windows + panes + nodes so far, bounded before each allocation.
    items: usize,
}

impl<'a> PayloadDecoder<'a> {
    pub(super) fn new(checked: Checked<'a>, format: Format) -> Self {
        PayloadDecoder {
            cur: Cursor::new(checked),
            format,
            items: 0,
        }
    }

    fn expect(&mut self, kind: Kind) -> Result<()> {
        if self.cur.kind() != kind {
            return Err(err(Rule::Type));
        }
        Ok(())
    }

    fn string(&mut self) -> Result<Cow<'a, str>> {
        self.expect(Kind::String)?;
        Ok(self.cur.string())
    }

    fn integer(&mut self) -> Result<i64> {
        self.expect(Kind::Number)?;
        self.cur.number().integer().ok_or_else(|| err(Rule::Type))
    }

    /// An integer in `lo..=hi`; a field with a rule of its own reports every
    /// failure, wrong type included, under that rule.
    fn integer_in(&mut self, lo: i64, hi: i64, rule: Rule) -> Result<i64> {
        let n = self
            .integer()
            .map_err(|e| if rule == Rule::Range { e } else { err(rule) })?;
        if n < lo || n > hi {
            return Err(err(rule));
        }
        Ok(n)
    }

    fn unsigned(&mut self, lo: u64, hi: u64) -> Result<u64> {
        Ok(self.integer_in(lo as i64, hi as i64, Rule::Range)? as u64)
    }

    fn cells(&mut self) -> Result<u16> {
        Ok(self.unsigned(1, MAX_CELLS)? as u16)
    }

    fn resource_id(&mut self, prefix: u8) -> Result<u64> {
        let text = self.string()?;
        crate::ids::parse_resource_id(&text, prefix).ok_or_else(|| err(Rule::IdSyntax))
    }

    fn timestamp(&mut self) -> Result<Timestamp> {
        let text = self.string()?;
        parse_timestamp(&text).ok_or_else(|| err(Rule::Timestamp))
    }

    fn enum_value<T>(&mut self, parse: impl Fn(&str) -> Option<T>, rule: Rule) -> Result<T> {
        let text = self
            .string()
            .map_err(|e| if rule == Rule::Enum { e } else { err(rule) })?;
        parse(&text).ok_or_else(|| err(rule))
    }

    fn count_item(&mut self) -> Result<()> {
        self.items += 1;
        if self.items > MAX_TOPOLOGY_ITEMS {
            return Err(err(Rule::TopologyCount));
        }
        Ok(())
    }

    /// Decodes an array element by element, tagging errors with the index.
    fn array<T>(&mut self, mut element: impl FnMut(&mut Self) -> Result<T>) -> Result<Vec<T>> {
        self.expect(Kind::Array)?;
        self.cur.enter();
        let mut out = Vec::new();
        while self.cur.next_element() {
            let index = out.len();
            out.push(element(self).map_err(|e| e.in_index(index))?);
        }
        Ok(out)
    }

    fn enter_object(&mut self) -> Result<()> {
        self.expect(Kind::Object)?;
        self.cur.enter();
        Ok(())
    }

    pub(super) fn checkpoint(&mut self) -> Result<Checkpoint> {
        self.enter_object()?;
        let (mut checkpoint, mut generation, mut socket, mut uid) = (None, None, None, None);
        let (mut captured_at, mut shutdown) = (None, None);
        let (mut sessions, mut windows, mut panes) = (None, None, None);
        while let Some(key) = self.cur.next_key() {
            let key: &'static str = match key.as_ref() {
                "checkpoint" => "checkpoint",
                "generation" => "generation",
                "socket" => "socket",
                "uid" => "uid",
                "captured_at" => "captured_at",
                "shutdown" => "shutdown",
                "sessions" => "sessions",
                "windows" => "windows",
                "panes" => "panes",
                _ => return Err(err(Rule::UnknownField)),
            };
            (|| -> Result<()> {
                match key {
                    "checkpoint" => checkpoint = Some(self.string()?.into_owned()),
                    "generation" => generation = Some(self.unsigned(1, MAX_SAFE_INTEGER)?),
                    "socket" => socket = Some(self.string()?.into_owned()),
                    "uid" => uid = Some(self.unsigned(0, MAX_SAFE_INTEGER)?),
                    "captured_at" => captured_at = Some(self.timestamp()?),
                    "shutdown" => {
                        shutdown = Some(self.enum_value(
                            |s| match s {
                                "open" => Some(Shutdown::Open),
                                "clean" => Some(Shutdown::Clean),
                                _ => None,
                            },
                            Rule::Enum,
                        )?)
                    }
                    "sessions" => sessions = Some(self.array(Self::session)?),
                    "windows" => windows = Some(self.array(Self::window)?),
                    _ => panes = Some(self.array(Self::pane)?),
                }
                Ok(())
            })()
            .map_err(|e| e.in_key(key))?;
        }
        Ok(Checkpoint {
            checkpoint: required(checkpoint, "checkpoint")?,
            generation: required(generation, "generation")?,
            socket: required(socket, "socket")?,
            uid: required(uid, "uid")?,
            captured_at: required(captured_at, "captured_at")?,
            shutdown: required(shutdown, "shutdown")?,
            sessions: required(sessions, "sessions")?,
            windows: required(windows, "windows")?,
            panes: required(panes, "panes")?,
        })
    }

    fn session(&mut self) -> Result<Session> {
        self.count_item()?;
        self.enter_object()?;
        let (mut id, mut name) = (None, None);
        while let Some(key) = self.cur.next_key() {
            match key.as_ref() {
                "session" => id = Some(self.resource_id(b's').map_err(|e| e.in_key("session"))?),
                "name" => name = Some(self.string().map_err(|e| e.in_key("name"))?.into_owned()),
                _ => return Err(err(Rule::UnknownField)),
            }
        }
        Ok(Session {
            id: required(id, "session")?,
            name: required(name, "name")?,
        })
    }

    fn window(&mut self) -> Result<Window> {
        self.count_item()?;
        self.enter_object()?;
        let (mut id, mut session, mut name, mut revision, mut nodes) =
            (None, None, None, None, None);
        while let Some(key) = self.cur.next_key() {
            match key.as_ref() {
                "window" => id = Some(self.resource_id(b'w').map_err(|e| e.in_key("window"))?),
                "session" => {
                    session = Some(self.resource_id(b's').map_err(|e| e.in_key("session"))?)
                }
                "name" => name = Some(self.string().map_err(|e| e.in_key("name"))?.into_owned()),
                "revision" => {
                    revision = Some(
                        self.unsigned(1, MAX_SAFE_INTEGER)
                            .map_err(|e| e.in_key("revision"))?,
                    )
                }
                "nodes" => nodes = Some(self.array(Self::node).map_err(|e| e.in_key("nodes"))?),
                _ => return Err(err(Rule::UnknownField)),
            }
        }
        Ok(Window {
            id: required(id, "window")?,
            session: required(session, "session")?,
            name: required(name, "name")?,
            revision: required(revision, "revision")?,
            nodes: required(nodes, "nodes")?,
        })
    }

    fn node(&mut self) -> Result<Node> {
        self.count_item()?;
        self.enter_object()?;
        let (mut kind, mut pane, mut axis, mut first, mut second, mut ratio) =
            (None, None, None, None, None, None);
        while let Some(key) = self.cur.next_key() {
            match key.as_ref() {
                "kind" => {
                    kind = Some(
                        self.enum_value(
                            |s| match s {
                                "pane" => Some(true),
                                "split" => Some(false),
                                _ => None,
                            },
                            Rule::Enum,
                        )
                        .map_err(|e| e.in_key("kind"))?,
                    )
                }
                "pane" => pane = Some(self.resource_id(b'p').map_err(|e| e.in_key("pane"))?),
                "axis" => {
                    axis = Some(
                        self.enum_value(
                            |s| match s {
                                "cols" => Some(Axis::Cols),
                                "rows" => Some(Axis::Rows),
                                _ => None,
                            },
                            Rule::Enum,
                        )
                        .map_err(|e| e.in_key("axis"))?,
                    )
                }
                "first" => first = Some(self.node_index().map_err(|e| e.in_key("first"))?),
                "second" => second = Some(self.node_index().map_err(|e| e.in_key("second"))?),
                "ratio" if self.format.has_ratios() => {
                    ratio = Some(
                        self.integer_in(MIN_RATIO as i64, MAX_RATIO as i64, Rule::Ratio)
                            .map_err(|e| e.in_key("ratio"))? as u16,
                    )
                }
                _ => return Err(err(Rule::UnknownField)),
            }
        }
        match required(kind, "kind")? {
            true => {
                if axis.is_some() || first.is_some() || second.is_some() || ratio.is_some() {
                    return Err(err(Rule::UnknownField));
                }
                Ok(Node::Pane {
                    pane: required(pane, "pane")?,
                })
            }
            false => {
                if pane.is_some() {
                    return Err(err(Rule::UnknownField).in_key("pane"));
                }
                Ok(Node::Split {
                    axis: required(axis, "axis")?,
                    first: required(first, "first")?,
                    second: required(second, "second")?,
                    ratio,
                })
            }
        }
    }

    /// A child index; anything that is no index of this window fails the tree rules.
    fn node_index(&mut self) -> Result<usize> {
        let n = self.integer()?;
        usize::try_from(n).map_err(|_| err(Rule::TreeIndex))
    }

    fn pane(&mut self) -> Result<Pane> {
        self.count_item()?;
        self.enter_object()?;
        let mut f = PaneFields::default();
        while let Some(key) = self.cur.next_key() {
            let key: &'static str = match key.as_ref() {
                "pane" => "pane",
                "window" => "window",
                "session" => "session",
                "cols" => "cols",
                "rows" => "rows",
                "state" => "state",
                "exit_code" => "exit_code",
                "signal" => "signal",
                "previous_state" => "previous_state",
                "text" => "text",
                "layer" if self.format.has_floats_and_tags() => "layer",
                "float" if self.format.has_floats_and_tags() => "float",
                "tags" if self.format.has_floats_and_tags() => "tags",
                _ => return Err(err(Rule::UnknownField)),
            };
            self.pane_field(key, &mut f).map_err(|e| e.in_key(key))?;
        }
        let state = required(f.state, "state")?;
        if state && (f.exit_code.is_some() || f.signal.is_some()) {
            let key = if f.exit_code.is_some() {
                "exit_code"
            } else {
                "signal"
            };
            return Err(err(Rule::ExitNotExited).in_key(key));
        }
        if state && f.previous_state.is_some() {
            return Err(err(Rule::PreviousStateNotExited).in_key("previous_state"));
        }
        let exit = match (f.exit_code, f.signal) {
            (Some(_), Some(_)) => return Err(err(Rule::ExitAndSignal).in_key("signal")),
            (Some(code), None) => Some(Exit::Code(code)),
            (None, Some(signal)) => Some(Exit::Signal(signal)),
            (None, None) => None,
        };
        if f.layer != f.float.is_some() {
            return Err(err(Rule::Layer).in_key("layer"));
        }
        Ok(Pane {
            id: required(f.pane, "pane")?,
            window: required(f.window, "window")?,
            session: required(f.session, "session")?,
            cols: required(f.cols, "cols")?,
            rows: required(f.rows, "rows")?,
            state: if state {
                PaneState::Running
            } else {
                PaneState::Exited { exit }
            },
            previous_state: f.previous_state,
            float: f.float,
            tags: f.tags.unwrap_or_default(),
            text: required(f.text, "text")?,
        })
    }

    fn pane_field(&mut self, key: &'static str, f: &mut PaneFields) -> Result<()> {
        match key {
            "pane" => f.pane = Some(self.resource_id(b'p')?),
            "window" => f.window = Some(self.resource_id(b'w')?),
            "session" => f.session = Some(self.resource_id(b's')?),
            "cols" => f.cols = Some(self.cells()?),
            "rows" => f.rows = Some(self.cells()?),
            "state" => {
                f.state = Some(self.enum_value(
                    |s| match s {
                        "running" => Some(true),
                        "exited" => Some(false),
                        _ => None,
                    },
                    Rule::Enum,
                )?)
            }
            "exit_code" => f.exit_code = Some(self.unsigned(0, MAX_EXIT_CODE)? as u8),
            "signal" => {
                let name = self.string()?;
                if !is_signal_name(&name) {
                    return Err(err(Rule::SignalSyntax));
                }
                f.signal = Some(name.into_owned());
            }
            "previous_state" => {
                f.previous_state = Some(self.enum_value(
                    |s| match s {
                        "exited" => Some(PreviousState::Exited),
                        "interrupted" => Some(PreviousState::Interrupted),
                        _ => None,
                    },
                    Rule::Enum,
                )?)
            }
            "layer" => {
                if self.string()? != "float" {
                    return Err(err(Rule::Layer));
                }
                f.layer = true;
            }
            "float" => f.float = Some(self.float_spec()?),
            "tags" => f.tags = Some(self.tags()?),
            _ => f.text = Some(self.text()?),
        }
        Ok(())
    }

    fn tags(&mut self) -> Result<Vec<Tag>> {
        self.expect(Kind::Array)?;
        self.cur.enter();
        let mut tags = Vec::new();
        while self.cur.next_element() {
            if tags.len() == MAX_TAGS {
                return Err(err(Rule::TagsCount));
            }
            let index = tags.len();
            tags.push(self.tag().map_err(|e| e.in_index(index))?);
        }
        if tags.is_empty() {
            return Err(err(Rule::TagsEmpty));
        }
        Ok(tags)
    }

    fn tag(&mut self) -> Result<Tag> {
        self.enter_object()?;
        let (mut k, mut v) = (None, None);
        while let Some(key) = self.cur.next_key() {
            match key.as_ref() {
                "key" => k = Some(self.string().map_err(|e| e.in_key("key"))?.into_owned()),
                "value" => v = Some(self.string().map_err(|e| e.in_key("value"))?.into_owned()),
                _ => return Err(err(Rule::UnknownField)),
            }
        }
        Ok(Tag {
            key: required(k, "key")?,
            value: required(v, "value")?,
        })
    }

    fn float_spec(&mut self) -> Result<FloatSpec> {
        self.enter_object()?;
        let mut spec = FloatSpec::default();
        let mut z = None;
        while let Some(key) = self.cur.next_key() {
            let key: &'static str = match key.as_ref() {
                "preset" => "preset",
                "width" => "width",
                "height" => "height",
                "anchor" => "anchor",
                "x" => "x",
                "y" => "y",
                "min_cols" => "min_cols",
                "min_rows" => "min_rows",
                "border" => "border",
                "title" => "title",
                "z" => "z",
                _ => return Err(err(Rule::UnknownField)),
            };
            (|| -> Result<()> {
                match key {
                    "preset" => spec.preset = Some(self.string()?.into_owned()),
                    "width" => spec.width = Some(self.extent()?),
                    "height" => spec.height = Some(self.extent()?),
                    "anchor" => {
                        spec.anchor = Some(self.enum_value(Anchor::parse, Rule::FloatAnchor)?)
                    }
                    "x" => spec.x = Some(self.offset()?),
                    "y" => spec.y = Some(self.offset()?),
                    "min_cols" => {
                        spec.min_cols =
                            Some(self.integer_in(1, MAX_CELLS as i64, Rule::FloatMin)? as u16)
                    }
                    "min_rows" => {
                        spec.min_rows =
                            Some(self.integer_in(1, MAX_CELLS as i64, Rule::FloatMin)? as u16)
                    }
                    "border" => {
                        spec.border = Some(self.enum_value(Border::parse, Rule::FloatBorder)?)
                    }
                    "title" => spec.title = Some(self.string()?.into_owned()),
                    _ => {
                        z = Some(self.integer_in(1, MAX_SAFE_INTEGER as i64, Rule::FloatZ)? as u64)
                    }
                }
                Ok(())
            })()
            .map_err(|e| e.in_key(key))?;
        }
        spec.z = required(z, "z")?;
        Ok(spec)
    }

    fn offset(&mut self) -> Result<i16> {
        Ok(self.integer_in(-MAX_FLOAT_OFFSET, MAX_FLOAT_OFFSET, Rule::FloatOffset)? as i16)
    }

    fn extent(&mut self) -> Result<Extent> {
        let text = self.string().map_err(|_| err(Rule::FloatSize))?;
        parse_extent(&text).ok_or_else(|| err(Rule::FloatSize))
    }

    fn text(&mut self) -> Result<Text> {
        self.enter_object()?;
        let (mut availability, mut saved_at, mut expires_at, mut screen, mut history) =
            (None, None, None, None, None);
        while let Some(key) = self.cur.next_key() {
            match key.as_ref() {
                "availability" => {
                    availability = Some(
                        self.enum_value(
                            |s| match s {
                                "omitted" | "expired" | "plain" => Some(s.to_string()),
                                _ => None,
                            },
                            Rule::Enum,
                        )
                        .map_err(|e| e.in_key("availability"))?,
                    )
                }
                "saved_at" => saved_at = Some(self.timestamp().map_err(|e| e.in_key("saved_at"))?),
                "expires_at" => {
                    expires_at = Some(self.timestamp().map_err(|e| e.in_key("expires_at"))?)
                }
                "screen" => {
                    screen = Some(
                        self.array(|d| Ok(d.string()?.into_owned()))
                            .map_err(|e| e.in_key("screen"))?,
                    )
                }
                "history" => {
                    history = Some(
                        self.array(|d| Ok(d.string()?.into_owned()))
                            .map_err(|e| e.in_key("history"))?,
                    )
                }
                _ => return Err(err(Rule::UnknownField)),
            }
        }
        let availability = required(availability, "availability")?;
        let any_plain_field =
            saved_at.is_some() || expires_at.is_some() || screen.is_some() || history.is_some();
        match availability.as_str() {
            "plain" => Ok(Text::Plain(PlainText {
                saved_at: required(saved_at, "saved_at")?,
                expires_at: required(expires_at, "expires_at")?,
                screen: required(screen, "screen")?,
                history: required(history, "history")?,
            })),
            _ if any_plain_field => Err(err(Rule::UnknownField)),
            "omitted" => Ok(Text::Omitted),
            _ => Ok(Text::Expired),
        }
    }
}

#[derive(Default)]
struct PaneFields {
    pane: Option<u64>,
    window: Option<u64>,
    session: Option<u64>,
    cols: Option<u16>,
    rows: Option<u16>,
    /// `true` for running.
    state: Option<bool>,
    exit_code: Option<u8>,
    signal: Option<String>,
    previous_state: Option<PreviousState>,
    layer: bool,
    float: Option<FloatSpec>,
    tags: Option<Vec<Tag>>,
    text: Option<Text>,
}

/// `"N"` (1–65535) or `"N%"` (1–100), no leading zero.
fn parse_extent(text: &str) -> Option<Extent> {
    let (digits, percent) = match text.strip_suffix('%') {
        Some(d) => (d, true),
        None => (text, false),
    };
    let n = crate::ids::parse_decimal(digits.as_bytes())?;
    match percent {
        true if (1..=100).contains(&n) => Some(Extent::Percent(n as u8)),
        false if (1..=MAX_CELLS).contains(&n) => Some(Extent::Cells(n as u16)),
        _ => None,
    }
}
