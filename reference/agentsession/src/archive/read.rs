//! The archive reader: one strict scan, one look-up of `schema_version`, one typed
//! pass. Sessions, windows and panes are additive (members this reader does not
//! know are read past); the top level, layouts and the record are closed. Shape
//! failures end the pass at once; the later rules are noted as they are
//! met (the first of each rule, in document order) and the earliest rule in the
//! spec's order is reported, so the verdict never depends on member order.

use std::collections::HashSet;

use vx_format::json::{scan_document, Cursor, Kind, NumberPolicy, ScanError, ScanOptions};
use vx_format::Doc;

use super::model::*;
use super::ArchiveError;
use crate::limits::{
    ARCHIVE_SCHEMA_LEGACY, ARCHIVE_SCHEMA_NATIVE, MAX_ARCHIVE_BYTES, MAX_ARCHIVE_DEPTH,
    MAX_ARGV_ELEMENTS, MAX_PANE_CELLS, MAX_RATIO_TOKEN_BYTES, MIN_ARGV_ELEMENTS,
};
use crate::record::decode_fields;
use crate::rules::{ArchiveRule, Seg};

/// The scanner's limits for archives: depth 128, integers only except the split
/// ratios.
pub const SCAN_OPTIONS: ScanOptions = ScanOptions {
    max_depth: MAX_ARCHIVE_DEPTH,
    numbers: NumberPolicy::IntegersAndUnitFraction {
        scope: "layout",
        key: "ratio",
        max_len: MAX_RATIO_TOKEN_BYTES,
    },
};

/// Rule 1, for callers that know the length before reading (fstat).
pub fn check_length(len: u64) -> Result<(), ArchiveError> {
    if len > MAX_ARCHIVE_BYTES {
        return Err(ArchiveError::new(ArchiveRule::Size, &[]));
    }
    Ok(())
}

/// Reads an archive's bytes under every rule.
pub fn read(bytes: &[u8]) -> Result<Decoded, ArchiveError> {
    check_length(bytes.len() as u64)?;
    let checked = scan_document(bytes, Doc::File, &SCAN_OPTIONS).map_err(json_error)?;
    let schema_version = schema_version(Cursor::new(checked))?;
    let mut decoder = Decoder {
        schema_version,
        path: Vec::with_capacity(16),
        deferred: Default::default(),
        names: HashSet::new(),
    };
    let mut cur = Cursor::new(checked);
    let archive = decoder.archive(&mut cur)?;
    if let Some(first) = decoder.deferred.into_iter().flatten().next() {
        return Err(first);
    }
    Ok(Decoded {
        schema_version,
        archive,
    })
}

fn json_error(e: ScanError) -> ArchiveError {
    let (detail, offset) = match e {
        ScanError::Json(e) => (e.rule.id(), e.offset.unwrap_or(0)),
        ScanError::Number { refusal, offset } => (
            match refusal {
                vx_format::json::NumberRefusal::NotInteger => "json.not_integer",
                vx_format::json::NumberRefusal::UnitFraction => "json.ratio",
            },
            offset,
        ),
    };
    ArchiveError {
        rule: ArchiveRule::Json,
        path: Vec::new(),
        detail: Some(detail),
        offset: Some(offset),
    }
}

/// Rule 3 before the closed shapes: the top level must be an object (else
/// `archive.shape`) whose `schema_version` is the integer 1 or 2.
fn schema_version(mut cur: Cursor<'_>) -> Result<u64, ArchiveError> {
    if cur.kind() != Kind::Object {
        return Err(ArchiveError::new(ArchiveRule::Shape, &[]));
    }
    let at = [Seg::Key("schema_version")];
    cur.enter();
    while let Some(key) = cur.next_key() {
        if key != "schema_version" {
            cur.skip();
            continue;
        }
        let version = match cur.kind() {
            Kind::Number => cur.number().integer(),
            _ => None,
        };
        return match version {
            Some(v) if v == ARCHIVE_SCHEMA_LEGACY as i64 || v == ARCHIVE_SCHEMA_NATIVE as i64 => {
                Ok(v as u64)
            }
            _ => Err(ArchiveError::new(ArchiveRule::SchemaVersion, &at)),
        };
    }
    Err(ArchiveError::new(ArchiveRule::SchemaVersion, &at))
}

/// Slots of the deferred rules, in the spec's order.
const DEFERRED: [ArchiveRule; 6] = [
    ArchiveRule::Schema1Record,
    ArchiveRule::Record,
    ArchiveRule::DuplicateSession,
    ArchiveRule::Layout,
    ArchiveRule::Cells,
    ArchiveRule::Argv,
];

struct Decoder {
    schema_version: u64,
    path: Vec<Seg>,
    deferred: [Option<ArchiveError>; DEFERRED.len()],
    names: HashSet<String>,
}

type Res<T> = std::result::Result<T, ArchiveError>;

impl Decoder {
    fn shape(&self) -> ArchiveError {
        ArchiveError::new(ArchiveRule::Shape, &self.path)
    }

    fn shape_at(&self, key: &'static str) -> ArchiveError {
        let mut e = self.shape();
        e.path.push(Seg::Key(key));
        e
    }

    fn defer(&mut self, rule: ArchiveRule, detail: Option<&'static str>) {
        let slot = DEFERRED
            .iter()
            .position(|r| *r == rule)
            .expect("deferred rule");
        if self.deferred[slot].is_none() {
            let mut e = ArchiveError::new(rule, &self.path);
            e.detail = detail;
            self.deferred[slot] = Some(e);
        }
    }

    /// Runs `f` with `seg` appended to the path.
    fn within<T>(&mut self, seg: Seg, f: impl FnOnce(&mut Self) -> Res<T>) -> Res<T> {
        self.path.push(seg);
        let out = f(self);
        self.path.pop();
        out
    }

    fn object(&self, cur: &mut Cursor<'_>) -> Res<()> {
        if cur.kind() != Kind::Object {
            return Err(self.shape());
        }
        cur.enter();
        Ok(())
    }

    /// Calls `each` per element of the array at the cursor, with the index on the path.
    fn array(
        &mut self,
        cur: &mut Cursor<'_>,
        mut each: impl FnMut(&mut Self, &mut Cursor<'_>) -> Res<()>,
    ) -> Res<()> {
        if cur.kind() != Kind::Array {
            return Err(self.shape());
        }
        cur.enter();
        let mut i = 0;
        while cur.next_element() {
            self.within(Seg::Index(i), |d| each(d, cur))?;
            i += 1;
        }
        Ok(())
    }

    fn string(&self, cur: &mut Cursor<'_>) -> Res<String> {
        if cur.kind() != Kind::String {
            return Err(self.shape());
        }
        Ok(cur.string().into_owned())
    }

    fn boolean(&self, cur: &mut Cursor<'_>) -> Res<bool> {
        if cur.kind() != Kind::Bool {
            return Err(self.shape());
        }
        Ok(cur.boolean())
    }

    fn integer(&self, cur: &mut Cursor<'_>) -> Res<i64> {
        if cur.kind() != Kind::Number {
            return Err(self.shape());
        }
        // The scan admits fractions only at layout ratios, which are not read here.
        cur.number().integer().ok_or_else(|| self.shape())
    }

    fn argv(&mut self, cur: &mut Cursor<'_>) -> Res<Vec<String>> {
        let mut argv = Vec::new();
        self.array(cur, |d, cur| {
            argv.push(d.string(cur)?);
            Ok(())
        })?;
        if !(MIN_ARGV_ELEMENTS..=MAX_ARGV_ELEMENTS).contains(&argv.len()) {
            self.defer(ArchiveRule::Argv, None);
        }
        Ok(argv)
    }

    fn cells(&mut self, cur: &mut Cursor<'_>) -> Res<Option<u16>> {
        let n = self.integer(cur)?;
        if !(0..=MAX_PANE_CELLS as i64).contains(&n) {
            self.defer(ArchiveRule::Cells, None);
            return Ok(Some(0));
        }
        Ok(Some(n as u16))
    }

    fn archive(&mut self, cur: &mut Cursor<'_>) -> Res<Archive> {
        self.object(cur)?;
        let mut sessions = None;
        while let Some(key) = cur.next_key() {
            match &*key {
                // Judged by `schema_version()` already.
                "schema_version" => cur.skip(),
                "sessions" => {
                    let mut list = Vec::new();
                    self.within(Seg::Key("sessions"), |d| {
                        d.array(cur, |d, cur| {
                            list.push(d.session(cur)?);
                            Ok(())
                        })
                    })?;
                    sessions = Some(list);
                }
                _ => return Err(self.shape()),
            }
        }
        Ok(Archive {
            sessions: sessions.ok_or_else(|| self.shape_at("sessions"))?,
        })
    }

    fn session(&mut self, cur: &mut Cursor<'_>) -> Res<Session> {
        self.object(cur)?;
        let mut s = Session::default();
        let (mut name, mut windows) = (None, None);
        while let Some(key) = cur.next_key() {
            match &*key {
                "name" => name = Some(self.within(Seg::Key("name"), |d| d.string(cur))?),
                "active" => s.active = self.within(Seg::Key("active"), |d| d.boolean(cur))?,
                "cwd" => s.cwd = Some(self.within(Seg::Key("cwd"), |d| d.string(cur))?),
                "command" => s.command = Some(self.within(Seg::Key("command"), |d| d.argv(cur))?),
                "windows" => {
                    let mut list = Vec::new();
                    self.within(Seg::Key("windows"), |d| {
                        d.array(cur, |d, cur| {
                            list.push(d.window(cur)?);
                            Ok(())
                        })
                    })?;
                    windows = Some(list);
                }
                // Additive outside the record (ADR-0068: schema 2 is an additive
                // data format change): a member this reader does not know is read past.
                _ => cur.skip(),
            }
        }
        s.name = name.ok_or_else(|| self.shape_at("name"))?;
        s.windows = windows.ok_or_else(|| self.shape_at("windows"))?;
        if s.name.trim().is_empty() || !self.names.insert(s.name.clone()) {
            self.within(Seg::Key("name"), |d| {
                d.defer(ArchiveRule::DuplicateSession, None);
                Ok(())
            })?;
        }
        Ok(s)
    }

    fn window(&mut self, cur: &mut Cursor<'_>) -> Res<Window> {
        self.object(cur)?;
        let mut w = Window::default();
        let (mut name, mut panes) = (None, None);
        while let Some(key) = cur.next_key() {
            match &*key {
                "name" => name = Some(self.within(Seg::Key("name"), |d| d.string(cur))?),
                "active" => w.active = self.within(Seg::Key("active"), |d| d.boolean(cur))?,
                "layout" => w.layout = Some(self.within(Seg::Key("layout"), |d| d.layout(cur))?),
                "panes" => {
                    let mut list = Vec::new();
                    self.within(Seg::Key("panes"), |d| {
                        d.array(cur, |d, cur| {
                            list.push(d.pane(cur)?);
                            Ok(())
                        })
                    })?;
                    panes = Some(list);
                }
                _ => cur.skip(),
            }
        }
        w.name = name.ok_or_else(|| self.shape_at("name"))?;
        w.panes = panes.ok_or_else(|| self.shape_at("panes"))?;
        if let Some(layout) = &w.layout {
            if !covers_exactly(layout, w.panes.len()) {
                self.within(Seg::Key("layout"), |d| {
                    d.defer(ArchiveRule::Layout, None);
                    Ok(())
                })?;
            }
        }
        Ok(w)
    }

    fn pane(&mut self, cur: &mut Cursor<'_>) -> Res<Pane> {
        self.object(cur)?;
        let mut p = Pane::default();
        while let Some(key) = cur.next_key() {
            match &*key {
                "active" => p.active = self.within(Seg::Key("active"), |d| d.boolean(cur))?,
                "title" => p.title = Some(self.within(Seg::Key("title"), |d| d.string(cur))?),
                "cwd" => p.cwd = Some(self.within(Seg::Key("cwd"), |d| d.string(cur))?),
                "command" => p.command = Some(self.within(Seg::Key("command"), |d| d.argv(cur))?),
                "cols" => p.cols = self.within(Seg::Key("cols"), |d| d.cells(cur))?,
                "rows" => p.rows = self.within(Seg::Key("rows"), |d| d.cells(cur))?,
                "agent_session" => {
                    p.agent_session =
                        Some(self.within(Seg::Key("agent_session"), |d| d.record(cur))?)
                }
                _ => cur.skip(),
            }
        }
        Ok(p)
    }

    fn record(&mut self, cur: &mut Cursor<'_>) -> Res<crate::record::Record> {
        let record = decode_fields(cur).map_err(|field| {
            let mut e = self.shape();
            e.path.extend(field.map(Seg::Key));
            e
        })?;
        if self.schema_version == ARCHIVE_SCHEMA_LEGACY {
            self.defer(ArchiveRule::Schema1Record, None);
        }
        if let Err(e) = record.validate() {
            let field = e.field();
            self.path.extend(field.map(Seg::Key));
            self.defer(ArchiveRule::Record, Some(e.rule_id()));
            if field.is_some() {
                self.path.pop();
            }
        }
        Ok(record)
    }

    fn layout(&mut self, cur: &mut Cursor<'_>) -> Res<Layout> {
        self.object(cur)?;
        let (mut kind, mut pane, mut dir, mut ratio, mut left, mut right) =
            (None, None, None, None, None, None);
        while let Some(key) = cur.next_key() {
            match &*key {
                "kind" => kind = Some(self.within(Seg::Key("kind"), |d| d.string(cur))?),
                "pane" => pane = Some(self.within(Seg::Key("pane"), |d| d.integer(cur))?),
                "dir" => dir = Some(self.within(Seg::Key("dir"), |d| d.string(cur))?),
                "ratio" => ratio = Some(self.within(Seg::Key("ratio"), |d| d.ratio(cur))?),
                "left" => left = Some(self.within(Seg::Key("left"), |d| d.layout(cur))?),
                "right" => right = Some(self.within(Seg::Key("right"), |d| d.layout(cur))?),
                _ => return Err(self.shape()),
            }
        }
        match kind.as_deref() {
            Some("pane") if (&dir, &ratio, &left, &right) == (&None, &None, &None, &None) => {
                let index = pane.ok_or_else(|| self.shape_at("pane"))?;
                // A negative index is out of range, not of the wrong type.
                Ok(Layout::Pane(usize::try_from(index).unwrap_or(usize::MAX)))
            }
            Some("split") if pane.is_none() => {
                let dir = match dir.as_deref() {
                    Some("horizontal") => SplitDir::Horizontal,
                    Some("vertical") => SplitDir::Vertical,
                    _ => return Err(self.shape_at("dir")),
                };
                Ok(Layout::Split {
                    dir,
                    ratio: ratio.ok_or_else(|| self.shape_at("ratio"))?,
                    left: Box::new(left.ok_or_else(|| self.shape_at("left"))?),
                    right: Box::new(right.ok_or_else(|| self.shape_at("right"))?),
                })
            }
            _ => Err(self.shape()),
        }
    }

    /// A ratio must be a JSON decimal; the scan proved any decimal here is in (0, 1).
    fn ratio(&self, cur: &mut Cursor<'_>) -> Res<f64> {
        if cur.kind() != Kind::Number {
            return Err(self.shape());
        }
        let token = cur.number();
        if token.integer().is_some() {
            return Err(self.shape());
        }
        std::str::from_utf8(token.text)
            .ok()
            .and_then(|t| t.parse::<f64>().ok())
            .filter(|r| *r > 0.0 && *r < 1.0)
            .ok_or_else(|| self.shape())
    }
}

/// Every leaf index is below `panes` and each pane index appears exactly once.
fn covers_exactly(layout: &Layout, panes: usize) -> bool {
    let leaves = layout.leaves();
    if leaves.len() != panes {
        return false;
    }
    let mut seen = vec![false; panes];
    leaves
        .into_iter()
        .all(|i| i < panes && !std::mem::replace(&mut seen[i], true))
}
