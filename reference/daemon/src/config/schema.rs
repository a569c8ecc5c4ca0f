//! The config schema: sections, defaults, enums, ranges and cross-field rules.
//!
//! `.recovery` is RFC §2's section; its defaults and ranges come from the kit's one
//! limits table, `vx_format::limits::config`.
//! Errors name the field (`.recovery.interval_ms`) and the rule broken, never a value.

use super::doc::zon_to_json;
use super::zon::Zon;
use crate::auth::UnknownRead;
use crate::topology::float::{self, FloatSpec, Length};
use crate::topology::validate::valid_title;
use serde_json::Value;
use std::collections::BTreeMap;

/// A schema failure: where, and which rule.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConfigError {
    pub field: String,
    pub problem: &'static str,
}

impl std::fmt::Display for ConfigError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.field, self.problem)
    }
}

fn err(field: &str, problem: &'static str) -> ConfigError {
    ConfigError {
        field: field.to_string(),
        problem,
    }
}

/// RFC §2 ranges, inclusive.
pub mod limits {
    use vx_format::limits::{self as rfc, config};

    const fn wide((lo, hi): (u64, u64)) -> (i128, i128) {
        (lo as i128, hi as i128)
    }

    pub const INTERVAL_MS: (i128, i128) = wide(config::INTERVAL_MS);
    pub const MAX_CHECKPOINTS: (i128, i128) = wide(config::MAX_CHECKPOINTS);
    pub const MAX_CHECKPOINT_BYTES: (i128, i128) = wide(config::MAX_CHECKPOINT_BYTES);
    pub const MAX_AGE_SECONDS: (i128, i128) = wide(config::MAX_AGE_SECONDS);
    pub const TEXT_MAX_ROWS: (i128, i128) = wide(config::TEXT_MAX_ROWS);
    pub const TEXT_MAX_BYTES: (i128, i128) = wide(config::TEXT_MAX_BYTES);
    pub const TEXT_MAX_AGE_SECONDS: (i128, i128) = wide(config::TEXT_MAX_AGE_SECONDS);
    /// The daemon's own: retained scrollback per pane.
    pub const HISTORY_ROWS: (i128, i128) = (0, 1_000_000);
    pub const PANE_SIZE: (i128, i128) = wide((rfc::MIN_CELLS, rfc::MAX_CELLS));
    pub const OFFSET: (i128, i128) = (
        -rfc::MAX_FLOAT_OFFSET as i128,
        rfc::MAX_FLOAT_OFFSET as i128,
    );
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TerminalText {
    Off,
    Plain,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Recovery {
    pub enabled: bool,
    pub interval_ms: u64,
    pub max_checkpoints: u64,
    pub max_checkpoint_bytes: u64,
    pub max_age_seconds: u64,
    pub terminal_text: TerminalText,
    pub text_max_rows: u64,
    pub text_max_bytes: u64,
    pub text_max_age_seconds: u64,
}

impl Default for Recovery {
    fn default() -> Self {
        use vx_format::limits::{config, DEFAULT_MAX_CHECKPOINT_BYTES};
        Recovery {
            enabled: false,
            interval_ms: config::DEFAULT_INTERVAL_MS,
            max_checkpoints: config::DEFAULT_MAX_CHECKPOINTS,
            max_checkpoint_bytes: DEFAULT_MAX_CHECKPOINT_BYTES,
            max_age_seconds: config::DEFAULT_MAX_AGE_SECONDS,
            terminal_text: TerminalText::Off,
            text_max_rows: config::DEFAULT_TEXT_MAX_ROWS,
            text_max_bytes: config::DEFAULT_TEXT_MAX_BYTES,
            text_max_age_seconds: config::DEFAULT_TEXT_MAX_AGE_SECONDS,
        }
    }
}

impl Recovery {
    /// The store-relevant part.
    pub fn store_config(&self) -> vx_store::StoreConfig {
        vx_store::StoreConfig {
            max_checkpoints: self.max_checkpoints,
            max_checkpoint_bytes: self.max_checkpoint_bytes,
            max_age_seconds: self.max_age_seconds,
            terminal_text: match self.terminal_text {
                TerminalText::Off => vx_store::TextMode::Off,
                TerminalText::Plain => vx_store::TextMode::Plain,
            },
            text_max_age_seconds: self.text_max_age_seconds,
        }
    }

    /// Whether this config captures terminal text at all (zero rows or bytes disables it).
    pub fn text_enabled(&self) -> bool {
        self.terminal_text == TerminalText::Plain
            && self.text_max_rows > 0
            && self.text_max_bytes > 0
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Panes {
    pub history_rows: u64,
    pub default_cols: u16,
    pub default_rows: u16,
}

impl Default for Panes {
    fn default() -> Self {
        Panes {
            history_rows: 10_000,
            default_cols: 80,
            default_rows: 24,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Floats {
    pub default: FloatSpec,
    pub presets: BTreeMap<String, FloatSpec>,
}

impl Default for Floats {
    fn default() -> Self {
        Floats {
            default: FloatSpec {
                width: Some(Length::Percent(80)),
                height: Some(Length::Percent(60)),
                anchor: Some("center".into()),
                border: Some("rounded".into()),
                ..FloatSpec::default()
            },
            presets: BTreeMap::new(),
        }
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct Config {
    pub recovery: Recovery,
    pub unknown_read: UnknownRead,
    pub panes: Panes,
    pub floats: Floats,
    /// Not ZON: the plugin registry read beside the file (`plugins/`), loaded and
    /// activated with it so one reload swaps both.
    pub integrations: std::sync::Arc<crate::agent::Integrations>,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            recovery: Recovery::default(),
            unknown_read: UnknownRead::All,
            panes: Panes::default(),
            floats: Floats::default(),
            integrations: Default::default(),
        }
    }
}

fn fields<'a>(value: &'a Zon, path: &str) -> Result<&'a [(String, Zon)], ConfigError> {
    match value {
        Zon::Struct(f) => Ok(f),
        _ => Err(err(path, "expected a struct")),
    }
}

fn int(value: &Zon, path: &str, (min, max): (i128, i128)) -> Result<i128, ConfigError> {
    match value {
        Zon::Int(n) if (min..=max).contains(n) => Ok(*n),
        Zon::Int(_) => Err(err(path, "out of range")),
        _ => Err(err(path, "expected an integer")),
    }
}

fn boolean(value: &Zon, path: &str) -> Result<bool, ConfigError> {
    match value {
        Zon::Bool(b) => Ok(*b),
        _ => Err(err(path, "expected true or false")),
    }
}

fn enumeration<'v>(value: &'v Zon, path: &str, allowed: &[&str]) -> Result<&'v str, ConfigError> {
    match value {
        Zon::Enum(name) if allowed.contains(&name.as_str()) => Ok(name),
        Zon::Enum(_) => Err(err(path, "unknown enum value")),
        _ => Err(err(path, "expected an enum literal")),
    }
}

fn string<'v>(value: &'v Zon, path: &str) -> Result<&'v str, ConfigError> {
    match value {
        Zon::Str(s) => Ok(s),
        _ => Err(err(path, "expected a string")),
    }
}

impl Config {
    /// Reads a whole document; absent fields take their defaults, unknown ones fail.
    pub fn from_zon(doc: &Zon) -> Result<Config, ConfigError> {
        let mut config = Config::default();
        for (name, value) in fields(doc, ".")? {
            let path = format!(".{name}");
            match name.as_str() {
                "recovery" => config.recovery = read_recovery(value, &path)?,
                "principals" => {
                    for (k, v) in fields(value, &path)? {
                        let p = format!("{path}.{k}");
                        match k.as_str() {
                            "unknown_read" => {
                                config.unknown_read = match enumeration(v, &p, &["all", "none"])? {
                                    "all" => UnknownRead::All,
                                    _ => UnknownRead::None,
                                }
                            }
                            _ => return Err(err(&p, "unknown field")),
                        }
                    }
                }
                "panes" => {
                    for (k, v) in fields(value, &path)? {
                        let p = format!("{path}.{k}");
                        match k.as_str() {
                            "history_rows" => {
                                config.panes.history_rows = int(v, &p, limits::HISTORY_ROWS)? as u64
                            }
                            "default_cols" => {
                                config.panes.default_cols = int(v, &p, limits::PANE_SIZE)? as u16
                            }
                            "default_rows" => {
                                config.panes.default_rows = int(v, &p, limits::PANE_SIZE)? as u16
                            }
                            _ => return Err(err(&p, "unknown field")),
                        }
                    }
                }
                "floats" => {
                    for (k, v) in fields(value, &path)? {
                        let p = format!("{path}.{k}");
                        match k.as_str() {
                            "default" => {
                                config.floats.default =
                                    read_float_spec(v, &p)?.over(&Floats::default().default)
                            }
                            "presets" => {
                                for (preset, spec) in fields(v, &p)? {
                                    let pp = format!("{p}.@\"{preset}\"");
                                    if !float::valid_preset_name(preset) {
                                        return Err(err(
                                            &pp,
                                            "preset name must be <namespace>.<name>",
                                        ));
                                    }
                                    config
                                        .floats
                                        .presets
                                        .insert(preset.clone(), read_float_spec(spec, &pp)?);
                                }
                            }
                            _ => return Err(err(&p, "unknown field")),
                        }
                    }
                }
                _ => return Err(err(&path, "unknown field")),
            }
        }
        Ok(config)
    }

    /// The whole effective config as a ZON document (every field written).
    pub fn to_zon(&self) -> Zon {
        let r = &self.recovery;
        let int = |n: u64| Zon::Int(i128::from(n));
        let recovery = Zon::Struct(vec![
            ("enabled".into(), Zon::Bool(r.enabled)),
            ("interval_ms".into(), int(r.interval_ms)),
            ("max_checkpoints".into(), int(r.max_checkpoints)),
            ("max_checkpoint_bytes".into(), int(r.max_checkpoint_bytes)),
            ("max_age_seconds".into(), int(r.max_age_seconds)),
            (
                "terminal_text".into(),
                Zon::Enum(match r.terminal_text {
                    TerminalText::Off => "off".into(),
                    TerminalText::Plain => "plain".into(),
                }),
            ),
            ("text_max_rows".into(), int(r.text_max_rows)),
            ("text_max_bytes".into(), int(r.text_max_bytes)),
            ("text_max_age_seconds".into(), int(r.text_max_age_seconds)),
        ]);
        let principals = Zon::Struct(vec![(
            "unknown_read".into(),
            Zon::Enum(match self.unknown_read {
                UnknownRead::All => "all".into(),
                UnknownRead::None => "none".into(),
            }),
        )]);
        let panes = Zon::Struct(vec![
            ("history_rows".into(), int(self.panes.history_rows)),
            (
                "default_cols".into(),
                int(u64::from(self.panes.default_cols)),
            ),
            (
                "default_rows".into(),
                int(u64::from(self.panes.default_rows)),
            ),
        ]);
        let floats = Zon::Struct(vec![
            ("default".into(), spec_to_zon(&self.floats.default)),
            (
                "presets".into(),
                Zon::Struct(
                    self.floats
                        .presets
                        .iter()
                        .map(|(k, v)| (k.clone(), spec_to_zon(v)))
                        .collect(),
                ),
            ),
        ]);
        Zon::Struct(vec![
            ("recovery".into(), recovery),
            ("principals".into(), principals),
            ("panes".into(), panes),
            ("floats".into(), floats),
        ])
    }

    pub fn to_json(&self) -> Value {
        zon_to_json(&self.to_zon())
    }
}

fn read_recovery(value: &Zon, path: &str) -> Result<Recovery, ConfigError> {
    let mut r = Recovery::default();
    for (k, v) in fields(value, path)? {
        let p = format!("{path}.{k}");
        match k.as_str() {
            "enabled" => r.enabled = boolean(v, &p)?,
            "interval_ms" => r.interval_ms = int(v, &p, limits::INTERVAL_MS)? as u64,
            "max_checkpoints" => r.max_checkpoints = int(v, &p, limits::MAX_CHECKPOINTS)? as u64,
            "max_checkpoint_bytes" => {
                r.max_checkpoint_bytes = int(v, &p, limits::MAX_CHECKPOINT_BYTES)? as u64
            }
            "max_age_seconds" => r.max_age_seconds = int(v, &p, limits::MAX_AGE_SECONDS)? as u64,
            "terminal_text" => {
                r.terminal_text = match enumeration(v, &p, &["off", "plain"])? {
                    "plain" => TerminalText::Plain,
                    _ => TerminalText::Off,
                }
            }
            "text_max_rows" => r.text_max_rows = int(v, &p, limits::TEXT_MAX_ROWS)? as u64,
            "text_max_bytes" => r.text_max_bytes = int(v, &p, limits::TEXT_MAX_BYTES)? as u64,
            "text_max_age_seconds" => {
                r.text_max_age_seconds = int(v, &p, limits::TEXT_MAX_AGE_SECONDS)? as u64
            }
            _ => return Err(err(&p, "unknown field")),
        }
    }
    if r.text_max_age_seconds > r.max_age_seconds {
        return Err(err(
            &format!("{path}.text_max_age_seconds"),
            "must not exceed .recovery.max_age_seconds",
        ));
    }
    Ok(r)
}

fn read_float_spec(value: &Zon, path: &str) -> Result<FloatSpec, ConfigError> {
    let mut s = FloatSpec::default();
    for (k, v) in fields(value, path)? {
        let p = format!("{path}.{k}");
        match k.as_str() {
            "width" => {
                s.width = Some(
                    Length::parse(string(v, &p)?)
                        .ok_or_else(|| err(&p, "expected \"N\" or \"N%\""))?,
                )
            }
            "height" => {
                s.height = Some(
                    Length::parse(string(v, &p)?)
                        .ok_or_else(|| err(&p, "expected \"N\" or \"N%\""))?,
                )
            }
            "anchor" => s.anchor = Some(enumeration(v, &p, float::ANCHORS)?.to_string()),
            "border" => s.border = Some(enumeration(v, &p, float::BORDERS)?.to_string()),
            "x" => s.x = Some(int(v, &p, limits::OFFSET)? as i32),
            "y" => s.y = Some(int(v, &p, limits::OFFSET)? as i32),
            "min_cols" => s.min_cols = Some(int(v, &p, limits::PANE_SIZE)? as u16),
            "min_rows" => s.min_rows = Some(int(v, &p, limits::PANE_SIZE)? as u16),
            "title" => {
                let t = string(v, &p)?;
                if !valid_title(t) {
                    return Err(err(&p, "1-128 bytes without control characters"));
                }
                s.title = Some(t.to_string());
            }
            _ => return Err(err(&p, "unknown field")),
        }
    }
    Ok(s)
}

fn spec_to_zon(spec: &FloatSpec) -> Zon {
    let mut f = Vec::new();
    if let Some(v) = spec.width {
        f.push(("width".into(), Zon::Str(v.to_text())));
    }
    if let Some(v) = spec.height {
        f.push(("height".into(), Zon::Str(v.to_text())));
    }
    if let Some(v) = &spec.anchor {
        f.push(("anchor".into(), Zon::Enum(v.clone())));
    }
    if let Some(v) = spec.x {
        f.push(("x".into(), Zon::Int(i128::from(v))));
    }
    if let Some(v) = spec.y {
        f.push(("y".into(), Zon::Int(i128::from(v))));
    }
    if let Some(v) = spec.min_cols {
        f.push(("min_cols".into(), Zon::Int(i128::from(v))));
    }
    if let Some(v) = spec.min_rows {
        f.push(("min_rows".into(), Zon::Int(i128::from(v))));
    }
    if let Some(v) = &spec.border {
        f.push(("border".into(), Zon::Enum(v.clone())));
    }
    if let Some(v) = &spec.title {
        f.push(("title".into(), Zon::Str(v.clone())));
    }
    Zon::Struct(f)
}

#[cfg(test)]
mod tests {
    use super::super::doc::{get_path, json_to_zon, set_path, split_key};
    use super::super::zon;
    use super::*;
    use serde_json::json;

    fn check(text: &str) -> Result<Config, ConfigError> {
        Config::from_zon(&zon::parse(text.as_bytes()).unwrap())
    }

    #[test]
    fn empty_document_is_all_defaults() {
        assert_eq!(check(".{}").unwrap(), Config::default());
    }

    #[test]
    fn writer_output_reads_back_to_the_same_config() {
        let mut c = Config::default();
        c.recovery.enabled = true;
        c.recovery.terminal_text = TerminalText::Plain;
        c.floats.presets.insert(
            "venom.settings".into(),
            FloatSpec {
                width: Length::parse("64"),
                height: Length::parse("19"),
                ..FloatSpec::default()
            },
        );
        let text = zon::write(&c.to_zon());
        assert_eq!(check(&text).unwrap(), c);
    }

    #[test]
    fn errors_name_the_field_and_rule() {
        let e = check(".{ .recovery = .{ .interval_ms = 999 } }").unwrap_err();
        assert_eq!(
            (e.field.as_str(), e.problem),
            (".recovery.interval_ms", "out of range")
        );
        let e = check(".{ .recovery = .{ .terminal_text = .html } }").unwrap_err();
        assert_eq!(e.problem, "unknown enum value");
        let e = check(".{ .recovery = .{ .max_age_seconds = 10, .text_max_age_seconds = 11 } }")
            .unwrap_err();
        assert_eq!(e.field, ".recovery.text_max_age_seconds");
        let e = check(".{ .recovery = .{ .colour = 1 } }").unwrap_err();
        assert_eq!(
            (e.field.as_str(), e.problem),
            (".recovery.colour", "unknown field")
        );
        let e = check(".{ .recovery = .{ .enabled = 1 } }").unwrap_err();
        assert_eq!(e.problem, "expected true or false");
        let e = check(".{ .floats = .{ .presets = .{ .@\"bad\" = .{} } } }").unwrap_err();
        assert!(e.field.starts_with(".floats.presets"));
    }

    #[test]
    fn ranges_are_inclusive_at_both_ends() {
        assert!(check(".{ .recovery = .{ .interval_ms = 1000 } }").is_ok());
        assert!(check(".{ .recovery = .{ .interval_ms = 3600000 } }").is_ok());
        assert!(check(".{ .recovery = .{ .interval_ms = 3600001 } }").is_err());
        assert!(check(".{ .recovery = .{ .text_max_rows = 0 } }").is_ok());
        assert!(check(".{ .recovery = .{ .max_checkpoint_bytes = 65535 } }").is_err());
    }

    #[test]
    fn keys_and_paths() {
        assert_eq!(
            split_key("floats.presets.venom.settings.width").unwrap(),
            vec!["floats", "presets", "venom.settings", "width"]
        );
        assert!(split_key("a..b").is_none());
        let mut doc = Zon::Struct(Vec::new());
        let path = split_key("recovery.terminal_text").unwrap();
        assert!(set_path(
            &mut doc,
            &path,
            json_to_zon(&json!("plain"), "terminal_text").unwrap()
        ));
        assert_eq!(
            check(&zon::write(&doc)).unwrap().recovery.terminal_text,
            TerminalText::Plain
        );
        assert_eq!(get_path(&doc, &path), Some(&Zon::Enum("plain".into())));
    }
}
