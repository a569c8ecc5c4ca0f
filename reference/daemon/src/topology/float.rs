//! The float layer: a pane's float spec (preset name plus the explicit geometry its
//! creator passed, pins.md "Float spec") and its resolution against config presets and
//! the window's area. The resolved size is the pane's PTY size; the border is drawn
//! outside it, so it does not shrink the PTY.

use serde_json::{json, Map, Value};

pub const ANCHORS: &[&str] = &[
    "top_left",
    "top",
    "top_right",
    "left",
    "center",
    "right",
    "bottom_left",
    "bottom",
    "bottom_right",
];
pub const BORDERS: &[&str] = &["none", "single", "double", "rounded", "heavy"];

/// A length: cells or percent of the window.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Length {
    Cells(u16),
    Percent(u8),
}

impl Length {
    /// `"N"` (1-65535, no leading zero) or `"N%"` (1-100).
    pub fn parse(text: &str) -> Option<Self> {
        let (digits, percent) = match text.strip_suffix('%') {
            Some(d) => (d, true),
            None => (text, false),
        };
        if digits.is_empty()
            || digits.len() > 5
            || !digits.bytes().all(|b| b.is_ascii_digit())
            || digits.starts_with('0')
        {
            return None;
        }
        let n: u32 = digits.parse().ok()?;
        if percent {
            (1..=100).contains(&n).then_some(Length::Percent(n as u8))
        } else {
            (1..=65535).contains(&n).then_some(Length::Cells(n as u16))
        }
    }

    pub fn resolve(self, area: u16) -> u16 {
        match self {
            Length::Cells(n) => n,
            Length::Percent(p) => ((u32::from(area) * u32::from(p)) / 100).max(1) as u16,
        }
    }

    pub fn to_text(self) -> String {
        match self {
            Length::Cells(n) => n.to_string(),
            Length::Percent(p) => format!("{p}%"),
        }
    }
}

/// What a float was asked for. Every field is optional; `None` means "not given".
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FloatSpec {
    pub preset: Option<String>,
    pub width: Option<Length>,
    pub height: Option<Length>,
    pub anchor: Option<String>,
    pub x: Option<i32>,
    pub y: Option<i32>,
    pub min_cols: Option<u16>,
    pub min_rows: Option<u16>,
    pub border: Option<String>,
    pub title: Option<String>,
}

/// `<namespace>.<name>`, each part `[a-z][a-z0-9_-]{0,63}`.
pub fn valid_preset_name(text: &str) -> bool {
    let Some((ns, name)) = text.split_once('.') else {
        return false;
    };
    let part = |s: &str| {
        let b = s.as_bytes();
        !b.is_empty()
            && b.len() <= 64
            && b[0].is_ascii_lowercase()
            && b.iter()
                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || *c == b'_' || *c == b'-')
    };
    part(ns) && part(name)
}

impl FloatSpec {
    /// Fields given here win over `base`.
    pub fn over(&self, base: &FloatSpec) -> FloatSpec {
        FloatSpec {
            preset: self.preset.clone().or_else(|| base.preset.clone()),
            width: self.width.or(base.width),
            height: self.height.or(base.height),
            anchor: self.anchor.clone().or_else(|| base.anchor.clone()),
            x: self.x.or(base.x),
            y: self.y.or(base.y),
            min_cols: self.min_cols.or(base.min_cols),
            min_rows: self.min_rows.or(base.min_rows),
            border: self.border.clone().or_else(|| base.border.clone()),
            title: self.title.clone().or_else(|| base.title.clone()),
        }
    }

    /// The spec as given (for pane.list and, later, checkpoints): only present fields.
    pub fn to_json(&self) -> Map<String, Value> {
        let mut m = Map::new();
        if let Some(v) = &self.preset {
            m.insert("preset".into(), json!(v));
        }
        if let Some(v) = self.width {
            m.insert("width".into(), json!(v.to_text()));
        }
        if let Some(v) = self.height {
            m.insert("height".into(), json!(v.to_text()));
        }
        if let Some(v) = &self.anchor {
            m.insert("anchor".into(), json!(v));
        }
        if let Some(v) = self.x {
            m.insert("x".into(), json!(v));
        }
        if let Some(v) = self.y {
            m.insert("y".into(), json!(v));
        }
        if let Some(v) = self.min_cols {
            m.insert("min_cols".into(), json!(v));
        }
        if let Some(v) = self.min_rows {
            m.insert("min_rows".into(), json!(v));
        }
        if let Some(v) = &self.border {
            m.insert("border".into(), json!(v));
        }
        if let Some(v) = &self.title {
            m.insert("title".into(), json!(v));
        }
        m
    }
}

/// A float placed in a window: position of its top-left cell and its size.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Geometry {
    pub col: i32,
    pub row: i32,
    pub cols: u16,
    pub rows: u16,
}

impl Geometry {
    pub fn to_json(self) -> Value {
        json!({"col": self.col, "row": self.row, "cols": self.cols, "rows": self.rows})
    }
}

/// Resolves a spec (already merged over its preset and the default) in an area.
/// Missing width/height fall back to 80% / 60% of the window.
pub fn resolve(spec: &FloatSpec, area_cols: u16, area_rows: u16) -> Geometry {
    let cols = spec
        .width
        .unwrap_or(Length::Percent(80))
        .resolve(area_cols)
        .max(spec.min_cols.unwrap_or(1));
    let rows = spec
        .height
        .unwrap_or(Length::Percent(60))
        .resolve(area_rows)
        .max(spec.min_rows.unwrap_or(1));
    let anchor = spec.anchor.as_deref().unwrap_or("center");
    let free_cols = i32::from(area_cols) - i32::from(cols);
    let free_rows = i32::from(area_rows) - i32::from(rows);
    let col = match anchor {
        "top_left" | "left" | "bottom_left" => 0,
        "top_right" | "right" | "bottom_right" => free_cols,
        _ => free_cols / 2,
    } + spec.x.unwrap_or(0);
    let row = match anchor {
        "top_left" | "top" | "top_right" => 0,
        "bottom_left" | "bottom" | "bottom_right" => free_rows,
        _ => free_rows / 2,
    } + spec.y.unwrap_or(0);
    Geometry {
        col,
        row,
        cols,
        rows,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lengths() {
        assert_eq!(Length::parse("12"), Some(Length::Cells(12)));
        assert_eq!(Length::parse("60%"), Some(Length::Percent(60)));
        assert_eq!(Length::parse("0"), None);
        assert_eq!(Length::parse("012"), None);
        assert_eq!(Length::parse("101%"), None);
        assert_eq!(Length::parse("65536"), None);
        assert_eq!(Length::parse("%"), None);
    }

    #[test]
    fn rfc_example_p3_resolves_to_48_by_12() {
        let spec = FloatSpec {
            width: Length::parse("60%"),
            height: Length::parse("12"),
            anchor: Some("bottom_right".into()),
            x: Some(-1),
            y: Some(-1),
            border: Some("single".into()),
            title: Some("build log".into()),
            ..FloatSpec::default()
        };
        let g = resolve(&spec, 80, 24);
        assert_eq!((g.cols, g.rows), (48, 12));
        assert_eq!((g.col, g.row), (31, 11));
    }

    #[test]
    fn preset_names() {
        assert!(valid_preset_name("venom.settings"));
        assert!(!valid_preset_name("venom"));
        assert!(!valid_preset_name("Venom.x"));
        assert!(!valid_preset_name("a.b.c"));
    }
}
