//! ZON (Zig Object Notation) reader and writer, the subset config files use:
//! structs `.{ .name = value, }`, tuples `.{ a, b }`, strings with Zig escapes,
//! integers (decimal, `0x`, `0o`, `0b`, `_` separators), floats (read, so the schema
//! can refuse them by name), `true`/`false`/`null`, enum literals `.name`, quoted
//! identifiers `.@"venom.settings"` and `//` comments.
//!
//! The reader is total: every input gets a value or a [`ZonError`] with a line and
//! column, never a panic; nesting is bounded by [`MAX_DEPTH`] and input by
//! [`MAX_INPUT_BYTES`]. Errors never echo the input.

use std::fmt::Write as _;

pub const MAX_DEPTH: usize = 64;
pub const MAX_INPUT_BYTES: usize = 1 << 20;

#[derive(Debug, Clone, PartialEq)]
pub enum Zon {
    /// `.{ .a = 1 }`; `.{}` reads as an empty struct.
    Struct(Vec<(String, Zon)>),
    Tuple(Vec<Zon>),
    Str(String),
    Int(i128),
    /// The float's source text (the schema has no float fields; kept to name the error).
    Float(String),
    Bool(bool),
    Null,
    Enum(String),
}

impl Zon {
    pub fn field(&self, name: &str) -> Option<&Zon> {
        match self {
            Zon::Struct(fields) => fields.iter().find(|(k, _)| k == name).map(|(_, v)| v),
            _ => None,
        }
    }

    pub fn kind(&self) -> &'static str {
        match self {
            Zon::Struct(_) => "struct",
            Zon::Tuple(_) => "tuple",
            Zon::Str(_) => "string",
            Zon::Int(_) => "integer",
            Zon::Float(_) => "float",
            Zon::Bool(_) => "bool",
            Zon::Null => "null",
            Zon::Enum(_) => "enum",
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ZonError {
    pub line: usize,
    pub column: usize,
    pub problem: &'static str,
}

impl std::fmt::Display for ZonError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "line {}, column {}: {}",
            self.line, self.column, self.problem
        )
    }
}

/// Reads one ZON document.
pub fn parse(input: &[u8]) -> Result<Zon, ZonError> {
    if input.len() > MAX_INPUT_BYTES {
        return Err(ZonError {
            line: 1,
            column: 1,
            problem: "document too large",
        });
    }
    let text = std::str::from_utf8(input).map_err(|e| {
        let p = Parser {
            src: input,
            pos: e.valid_up_to(),
        };
        p.error("invalid UTF-8")
    })?;
    let mut p = Parser {
        src: text.as_bytes(),
        pos: 0,
    };
    p.skip_trivia()?;
    let value = p.value(1)?;
    p.skip_trivia()?;
    if p.pos != p.src.len() {
        return Err(p.error("trailing data after the value"));
    }
    Ok(value)
}

struct Parser<'a> {
    src: &'a [u8],
    pos: usize,
}

impl Parser<'_> {
    fn error(&self, problem: &'static str) -> ZonError {
        let upto = &self.src[..self.pos.min(self.src.len())];
        let line = upto.iter().filter(|&&b| b == b'\n').count() + 1;
        let line_start = upto.iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1);
        let column = String::from_utf8_lossy(&upto[line_start..]).chars().count() + 1;
        ZonError {
            line,
            column,
            problem,
        }
    }

    fn peek(&self) -> Option<u8> {
        self.src.get(self.pos).copied()
    }

    fn skip_trivia(&mut self) -> Result<(), ZonError> {
        loop {
            match self.peek() {
                Some(b' ' | b'\t' | b'\n' | b'\r') => self.pos += 1,
                Some(b'/') if self.src.get(self.pos + 1) == Some(&b'/') => {
                    while let Some(b) = self.peek() {
                        if b == b'\n' {
                            break;
                        }
                        self.pos += 1;
                    }
                }
                _ => return Ok(()),
            }
        }
    }

    fn expect(&mut self, byte: u8, problem: &'static str) -> Result<(), ZonError> {
        if self.peek() == Some(byte) {
            self.pos += 1;
            Ok(())
        } else {
            Err(self.error(problem))
        }
    }

    fn value(&mut self, depth: usize) -> Result<Zon, ZonError> {
        if depth > MAX_DEPTH {
            return Err(self.error("nesting too deep"));
        }
        match self.peek() {
            None => Err(self.error("expected a value")),
            Some(b'.') => {
                self.pos += 1;
                if self.peek() == Some(b'{') {
                    self.pos += 1;
                    self.container(depth)
                } else {
                    Ok(Zon::Enum(self.identifier()?))
                }
            }
            Some(b'"') => Ok(Zon::Str(self.string()?)),
            Some(b'-' | b'0'..=b'9') => self.number(),
            Some(b'a'..=b'z' | b'A'..=b'Z' | b'_') => {
                let start = self.pos;
                let word = self.bare_word();
                match word {
                    "true" => Ok(Zon::Bool(true)),
                    "false" => Ok(Zon::Bool(false)),
                    "null" => Ok(Zon::Null),
                    _ => {
                        self.pos = start;
                        Err(self.error("unexpected identifier"))
                    }
                }
            }
            Some(_) => Err(self.error("unexpected character")),
        }
    }

    fn bare_word(&mut self) -> &str {
        let start = self.pos;
        while let Some(b) = self.peek() {
            if b.is_ascii_alphanumeric() || b == b'_' {
                self.pos += 1;
            } else {
                break;
            }
        }
        std::str::from_utf8(&self.src[start..self.pos]).unwrap_or("")
    }

    /// After a `.`: `name` or `@"quoted name"`.
    fn identifier(&mut self) -> Result<String, ZonError> {
        match self.peek() {
            Some(b'@') => {
                self.pos += 1;
                if self.peek() != Some(b'"') {
                    return Err(self.error("expected a quoted identifier"));
                }
                let name = self.string()?;
                if name.is_empty() {
                    return Err(self.error("empty identifier"));
                }
                Ok(name)
            }
            Some(b'a'..=b'z' | b'A'..=b'Z' | b'_') => Ok(self.bare_word().to_string()),
            _ => Err(self.error("expected an identifier")),
        }
    }

    /// After `.{`: a struct (fields start with `.name =`) or a tuple.
    fn container(&mut self, depth: usize) -> Result<Zon, ZonError> {
        self.skip_trivia()?;
        if self.peek() == Some(b'}') {
            self.pos += 1;
            return Ok(Zon::Struct(Vec::new()));
        }
        let is_struct = self.looks_like_field();
        let mut fields: Vec<(String, Zon)> = Vec::new();
        let mut items = Vec::new();
        loop {
            self.skip_trivia()?;
            if self.peek() == Some(b'}') {
                self.pos += 1;
                break;
            }
            if is_struct {
                let at = self.pos;
                self.expect(b'.', "expected a field `.name = value`")?;
                let name = self.identifier()?;
                if fields.iter().any(|(k, _)| *k == name) {
                    self.pos = at;
                    return Err(self.error("duplicate field"));
                }
                self.skip_trivia()?;
                self.expect(b'=', "expected `=` after the field name")?;
                self.skip_trivia()?;
                let value = self.value(depth + 1)?;
                fields.push((name, value));
            } else {
                items.push(self.value(depth + 1)?);
            }
            self.skip_trivia()?;
            match self.peek() {
                Some(b',') => self.pos += 1,
                Some(b'}') => {
                    self.pos += 1;
                    break;
                }
                _ => return Err(self.error("expected `,` or `}`")),
            }
        }
        Ok(if is_struct {
            Zon::Struct(fields)
        } else {
            Zon::Tuple(items)
        })
    }

    fn looks_like_field(&self) -> bool {
        let mut probe = Parser {
            src: self.src,
            pos: self.pos,
        };
        if probe.peek() != Some(b'.') {
            return false;
        }
        probe.pos += 1;
        if probe.identifier().is_err() {
            return false;
        }
        if probe.skip_trivia().is_err() {
            return false;
        }
        probe.peek() == Some(b'=')
    }

    fn string(&mut self) -> Result<String, ZonError> {
        self.expect(b'"', "expected a string")?;
        let mut out = String::new();
        loop {
            let Some(b) = self.peek() else {
                return Err(self.error("unterminated string"));
            };
            match b {
                b'"' => {
                    self.pos += 1;
                    return Ok(out);
                }
                b'\n' | b'\r' => return Err(self.error("newline in string")),
                b'\\' => {
                    self.pos += 1;
                    let c = match self.peek() {
                        Some(b'n') => '\n',
                        Some(b'r') => '\r',
                        Some(b't') => '\t',
                        Some(b'\\') => '\\',
                        Some(b'\'') => '\'',
                        Some(b'"') => '"',
                        Some(b'x') => {
                            let v = self.hex_digits(2)?;
                            if v > 0x7f {
                                return Err(self.error("\\x escape above 0x7f"));
                            }
                            out.push(char::from(v as u8));
                            continue;
                        }
                        Some(b'u') => {
                            self.pos += 1;
                            self.expect(b'{', "expected `{` in \\u escape")?;
                            let start = self.pos;
                            while matches!(self.peek(), Some(b) if b.is_ascii_hexdigit()) {
                                self.pos += 1;
                            }
                            let digits =
                                std::str::from_utf8(&self.src[start..self.pos]).unwrap_or("");
                            if digits.is_empty() || digits.len() > 6 {
                                return Err(self.error("bad \\u escape"));
                            }
                            let v = u32::from_str_radix(digits, 16)
                                .map_err(|_| self.error("bad \\u escape"))?;
                            let c = char::from_u32(v)
                                .ok_or_else(|| self.error("\\u escape is not a scalar value"))?;
                            self.expect(b'}', "expected `}` in \\u escape")?;
                            out.push(c);
                            continue;
                        }
                        _ => return Err(self.error("unknown escape")),
                    };
                    self.pos += 1;
                    out.push(c);
                }
                _ => {
                    // Copy one UTF-8 character (the input is valid UTF-8).
                    let len = utf8_len(b);
                    let end = (self.pos + len).min(self.src.len());
                    out.push_str(
                        std::str::from_utf8(&self.src[self.pos..end])
                            .map_err(|_| self.error("invalid UTF-8"))?,
                    );
                    self.pos = end;
                }
            }
        }
    }

    /// After `\x`: exactly `n` hex digits.
    fn hex_digits(&mut self, n: usize) -> Result<u32, ZonError> {
        self.pos += 1;
        let end = self.pos + n;
        let digits = self
            .src
            .get(self.pos..end)
            .ok_or_else(|| self.error("bad \\x escape"))?;
        let text = std::str::from_utf8(digits).map_err(|_| self.error("bad \\x escape"))?;
        let v = u32::from_str_radix(text, 16).map_err(|_| self.error("bad \\x escape"))?;
        self.pos = end;
        Ok(v)
    }

    fn number(&mut self) -> Result<Zon, ZonError> {
        let start = self.pos;
        let negative = self.peek() == Some(b'-');
        if negative {
            self.pos += 1;
        }
        let body_start = self.pos;
        while let Some(b) = self.peek() {
            if b.is_ascii_alphanumeric()
                || b == b'_'
                || b == b'.'
                || ((b == b'+' || b == b'-')
                    && matches!(self.src.get(self.pos - 1), Some(b'e' | b'E' | b'p' | b'P')))
            {
                self.pos += 1;
            } else {
                break;
            }
        }
        let body = std::str::from_utf8(&self.src[body_start..self.pos]).unwrap_or("");
        let at_start = |p: &mut Self| {
            p.pos = start;
        };
        if body.is_empty() || body.starts_with('_') || body.ends_with('_') || body.contains("__") {
            at_start(self);
            return Err(self.error("malformed number"));
        }
        let (radix, digits) = if let Some(d) = body.strip_prefix("0x") {
            (16, d)
        } else if let Some(d) = body.strip_prefix("0o") {
            (8, d)
        } else if let Some(d) = body.strip_prefix("0b") {
            (2, d)
        } else {
            (10, body)
        };
        let clean: String = digits.chars().filter(|&c| c != '_').collect();
        if radix == 10 && (clean.contains('.') || clean.contains(['e', 'E'])) {
            let ok = clean.parse::<f64>().is_ok()
                && clean.bytes().next().is_some_and(|b| b.is_ascii_digit());
            if !ok {
                at_start(self);
                return Err(self.error("malformed number"));
            }
            let text = std::str::from_utf8(&self.src[start..self.pos])
                .unwrap_or("")
                .to_string();
            return Ok(Zon::Float(text));
        }
        if clean.is_empty() || (radix == 10 && clean.len() > 1 && clean.starts_with('0')) {
            at_start(self);
            return Err(self.error("malformed number"));
        }
        match i128::from_str_radix(&clean, radix) {
            // Bounded by value, not digit count: a hex literal must not exceed what
            // the writer's decimal form can read back.
            Ok(v) if v.unsigned_abs() < 10u128.pow(38) => {
                Ok(Zon::Int(if negative { -v } else { v }))
            }
            _ => {
                at_start(self);
                Err(self.error("malformed or too large integer"))
            }
        }
    }
}

fn utf8_len(first: u8) -> usize {
    match first {
        0x00..=0x7f => 1,
        0xc0..=0xdf => 2,
        0xe0..=0xef => 3,
        _ => 4,
    }
}

/// Writes a value the way `zig fmt` lays out config files: one field per line,
/// four-space indents, trailing commas.
pub fn write(value: &Zon) -> String {
    let mut out = String::new();
    write_value(value, 0, &mut out);
    out.push('\n');
    out
}

fn write_value(value: &Zon, indent: usize, out: &mut String) {
    match value {
        Zon::Struct(fields) if fields.is_empty() => out.push_str(".{}"),
        Zon::Struct(fields) => {
            out.push_str(".{\n");
            for (name, v) in fields {
                push_indent(indent + 1, out);
                out.push('.');
                write_identifier(name, out);
                out.push_str(" = ");
                write_value(v, indent + 1, out);
                out.push_str(",\n");
            }
            push_indent(indent, out);
            out.push('}');
        }
        Zon::Tuple(items) if items.is_empty() => out.push_str(".{}"),
        Zon::Tuple(items) => {
            out.push_str(".{\n");
            for v in items {
                push_indent(indent + 1, out);
                write_value(v, indent + 1, out);
                out.push_str(",\n");
            }
            push_indent(indent, out);
            out.push('}');
        }
        Zon::Str(s) => write_string(s, out),
        Zon::Int(n) => {
            let _ = write!(out, "{n}");
        }
        Zon::Float(text) => out.push_str(text),
        Zon::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Zon::Null => out.push_str("null"),
        Zon::Enum(name) => {
            out.push('.');
            write_identifier(name, out);
        }
    }
}

fn push_indent(level: usize, out: &mut String) {
    for _ in 0..level {
        out.push_str("    ");
    }
}

const KEYWORDS: &[&str] = &["true", "false", "null"];

fn write_identifier(name: &str, out: &mut String) {
    let plain = name
        .bytes()
        .next()
        .is_some_and(|b| b.is_ascii_alphabetic() || b == b'_')
        && name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_')
        && !KEYWORDS.contains(&name);
    if plain {
        out.push_str(name);
    } else {
        out.push('@');
        write_string(name, out);
    }
}

fn write_string(s: &str, out: &mut String) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if (c as u32) < 0x20 || c as u32 == 0x7f || (0x80..=0x9f).contains(&(c as u32)) => {
                let _ = write!(out, "\\u{{{:x}}}", c as u32);
            }
            c => out.push(c),
        }
    }
    out.push('"');
}

#[cfg(test)]
mod tests {
    use super::*;

    const RFC_DEFAULTS: &str = r#".{
.recovery = .{
.enabled = false,
.interval_ms = 30000,
.max_checkpoints = 3,
.max_checkpoint_bytes = 16777216,
.max_age_seconds = 604800,
.terminal_text = .off,
.text_max_rows = 10000,
.text_max_bytes = 1048576,
.text_max_age_seconds = 86400,
},
}"#;

    #[test]
    fn reads_the_rfc_default_section() {
        let v = parse(RFC_DEFAULTS.as_bytes()).unwrap();
        let r = v.field("recovery").unwrap();
        assert_eq!(r.field("interval_ms"), Some(&Zon::Int(30000)));
        assert_eq!(r.field("terminal_text"), Some(&Zon::Enum("off".into())));
        assert_eq!(r.field("enabled"), Some(&Zon::Bool(false)));
    }

    #[test]
    fn round_trips_through_the_writer() {
        let src = br#"// comment
.{ .a = "x\n\"y\u{e9}", .@"venom.settings" = .{ .w = 0x10, .n = -1_000 }, .t = .{ 1, .two, "3" }, .e = .{}, .z = null, .f = 1.5 }"#;
        let v = parse(src).unwrap();
        let text = write(&v);
        assert_eq!(parse(text.as_bytes()).unwrap(), v);
        assert!(text.contains(".@\"venom.settings\" = .{"));
        assert_eq!(
            v.field("venom.settings").unwrap().field("w"),
            Some(&Zon::Int(16))
        );
        assert_eq!(
            v.field("venom.settings").unwrap().field("n"),
            Some(&Zon::Int(-1000))
        );
    }

    #[test]
    fn errors_point_at_the_problem_without_echoing() {
        let e = parse(b".{\n  .a = 1,\n  .a = 2,\n}").unwrap_err();
        assert_eq!((e.line, e.column, e.problem), (3, 3, "duplicate field"));
        let e = parse(b".{ .a = secret }").unwrap_err();
        assert_eq!(e.problem, "unexpected identifier");
        assert!(!e.to_string().contains("secret"));
        assert!(parse(b".{ .a = 1 } x").is_err());
        assert!(parse(b".{ .a = \"unterminated }").is_err());
        assert!(parse(b".{ .a = 01 }").is_err());
        assert!(parse(b"\xff").is_err());
        assert!(parse(b"").is_err());
    }

    #[test]
    fn depth_is_bounded() {
        let deep = ".{".repeat(10_000);
        assert_eq!(
            parse(deep.as_bytes()).unwrap_err().problem,
            "nesting too deep"
        );
    }
}
