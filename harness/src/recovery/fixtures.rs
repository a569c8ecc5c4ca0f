//! Checkpoint files the suite plants in an implementation's store: valid ones built
//! from the RFC's example payloads, and damaged ones, one named defect each.

use crate::verdict::OrHarness;
use sha2::{Digest, Sha256};

/// The two leaves of the format-3 fixture's split.
const SPLIT_LEAVES: &str =
    "{\"kind\":\"pane\",\"pane\":\"p0\"},{\"kind\":\"pane\",\"pane\":\"p1\"}";

/// What a planted file should be.
#[derive(Debug, Clone)]
pub struct Fixture {
    pub checkpoint: String,
    pub generation: u64,
    pub socket: String,
    pub uid: u32,
    /// Seconds relative to now for `captured_at` (negative: in the past).
    pub captured_offset_s: i64,
    pub format: u32,
}

pub fn new_checkpoint_id() -> String {
    let mut b = [0u8; 16];
    getrandom(&mut b);
    b[6] = (b[6] & 0x0f) | 0x40;
    b[8] = (b[8] & 0x3f) | 0x80;
    let h: String = b.iter().map(|x| format!("{x:02x}")).collect();
    format!(
        "c{}-{}-{}-{}-{}",
        &h[0..8],
        &h[8..12],
        &h[12..16],
        &h[16..20],
        &h[20..32]
    )
}

fn getrandom(buf: &mut [u8]) {
    use std::io::Read;
    let mut f = std::fs::File::open("/dev/urandom").or_harness("/dev/urandom");
    f.read_exact(buf).or_harness("/dev/urandom");
}

/// `YYYY-MM-DDTHH:MM:SS.mmmZ` for now + `offset_s`.
pub fn timestamp(offset_s: i64) -> String {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .expect("clock before 1970");
    let secs = now.as_secs() as i64 + offset_s;
    let ms = now.subsec_millis();
    let days = secs.div_euclid(86_400);
    let rem = secs.rem_euclid(86_400);
    let (y, m, d) = civil_from_days(days);
    format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}.{ms:03}Z",
        rem / 3600,
        (rem / 60) % 60,
        rem % 60
    )
}

fn civil_from_days(z: i64) -> (i64, u32, u32) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let y = yoe + era * 400;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    (if m <= 2 { y + 1 } else { y }, m, d)
}

impl Fixture {
    /// A clean single-window payload: one exited pane with a known exit code (format 1
    /// and 2 files), and for format 3 a resized split of two exited panes.
    pub fn payload(&self) -> String {
        let head = format!(
            r#""checkpoint":"{}","generation":{},"socket":{},"uid":{},"captured_at":"{}","shutdown":"clean","sessions":[{{"session":"s0","name":"work"}}]"#,
            self.checkpoint,
            self.generation,
            serde_json::Value::String(self.socket.clone()),
            self.uid,
            timestamp(self.captured_offset_s)
        );
        let body = if self.format == 2 {
            r#""windows":[{"window":"w0","session":"s0","name":"agents","revision":1,"nodes":[{"kind":"pane","pane":"p0"}]}],"panes":[{"pane":"p0","window":"w0","session":"s0","cols":80,"rows":24,"state":"exited","exit_code":0,"tags":[{"key":"owner","value":"venom"},{"key":"role","value":"agent"}],"text":{"availability":"omitted"}},{"pane":"p1","window":"w0","session":"s0","cols":64,"rows":19,"state":"exited","layer":"float","float":{"preset":"venom.settings","z":2},"text":{"availability":"omitted"}},{"pane":"p2","window":"w0","session":"s0","cols":48,"rows":12,"state":"exited","layer":"float","float":{"width":"60%","height":"12","anchor":"bottom_right","border":"single","title":"build log","z":1},"text":{"availability":"omitted"}}]"#
        } else if self.format == 3 {
            r#""windows":[{"window":"w0","session":"s0","name":"shell","revision":2,"nodes":[{"kind":"split","axis":"cols","first":1,"second":2,"ratio":6250},{"kind":"pane","pane":"p0"},{"kind":"pane","pane":"p1"}]}],"panes":[{"pane":"p0","window":"w0","session":"s0","cols":50,"rows":24,"state":"exited","exit_code":0,"text":{"availability":"omitted"}},{"pane":"p1","window":"w0","session":"s0","cols":29,"rows":24,"state":"exited","exit_code":3,"text":{"availability":"omitted"}}]"#
        } else {
            r#""windows":[{"window":"w0","session":"s0","name":"shell","revision":1,"nodes":[{"kind":"pane","pane":"p0"}]}],"panes":[{"pane":"p0","window":"w0","session":"s0","cols":80,"rows":24,"state":"exited","exit_code":0,"text":{"availability":"omitted"}}]"#
        };
        format!("{{{head},{body}}}")
    }

    /// A clean payload holding every durable object its format has, so that each level
    /// can get an unknown key (`unknown key in the <level>`): a split of two tiled panes
    /// (format 3: with a ratio), p0 with plain text and p1 with omitted text; formats 2
    /// and 3 add tags on p0 and a float p2.
    pub fn every_level_payload(&self) -> String {
        let ratio = if self.format >= 3 {
            ",\"ratio\":6250"
        } else {
            ""
        };
        let tags = if self.format >= 2 {
            r#""tags":[{"key":"owner","value":"venom"},{"key":"role","value":"agent"}],"#
        } else {
            ""
        };
        let float = if self.format >= 2 {
            r#",{"pane":"p2","window":"w0","session":"s0","cols":64,"rows":19,"state":"exited","exit_code":2,"layer":"float","float":{"preset":"venom.settings","width":"60%","z":1},"text":{"availability":"omitted"}}"#
        } else {
            ""
        };
        let text = format!(
            r#"{{"availability":"plain","saved_at":"{}","expires_at":"{}","screen":["EVERY-LEVEL-ROW",""],"history":["EVERY-LEVEL-HISTORY"]}}"#,
            timestamp(-60),
            timestamp(3600)
        );
        format!(
            r#"{{"checkpoint":"{}","generation":{},"socket":{},"uid":{},"captured_at":"{}","shutdown":"clean","sessions":[{{"session":"s0","name":"work"}}],"windows":[{{"window":"w0","session":"s0","name":"shell","revision":1,"nodes":[{{"kind":"split","axis":"cols","first":1,"second":2{ratio}}},{{"kind":"pane","pane":"p0"}},{{"kind":"pane","pane":"p1"}}]}}],"panes":[{{"pane":"p0","window":"w0","session":"s0","cols":40,"rows":2,"state":"exited","exit_code":0,{tags}"text":{text}}},{{"pane":"p1","window":"w0","session":"s0","cols":39,"rows":2,"state":"exited","exit_code":1,"text":{{"availability":"omitted"}}}}{float}]}}"#,
            self.checkpoint,
            self.generation,
            serde_json::Value::String(self.socket.clone()),
            self.uid,
            timestamp(self.captured_offset_s)
        )
    }

    /// The file bytes with `defect` applied (`intact` for none).
    pub fn bytes(&self, defect: &str) -> Result<Vec<u8>, String> {
        let every_level = defect == "every level" || defect.starts_with("unknown key in the ");
        let base = if every_level {
            self.every_level_payload()
        } else {
            self.payload()
        };
        let mut payload = base.clone();
        let mut format = self.format.to_string();
        let mut checksum_flip = false;
        let mut envelope_extra = "";
        let mut trailing = String::from("\n");
        match defect {
            "intact" | "every level" => {}
            // One key the format does not define, at one level of the every-level file.
            "unknown key in the envelope" => envelope_extra = ",\"extra\":1",
            "unknown key in the payload" => payload = payload.replacen('{', "{\"extra\":1,", 1),
            "unknown key in the session" => {
                payload = payload.replacen("{\"session\":\"s0\",", "{\"session\":\"s0\",\"extra\":1,", 1)
            }
            "unknown key in the window" => {
                payload = payload.replacen("{\"window\":\"w0\",", "{\"window\":\"w0\",\"extra\":1,", 1)
            }
            "unknown key in the split node" => {
                payload = payload.replacen("{\"kind\":\"split\",", "{\"kind\":\"split\",\"extra\":1,", 1)
            }
            "unknown key in the pane node" => {
                payload = payload.replacen(
                    "{\"kind\":\"pane\",\"pane\":\"p0\"}",
                    "{\"kind\":\"pane\",\"pane\":\"p0\",\"extra\":1}",
                    1,
                )
            }
            "unknown key in the pane" => {
                payload = payload.replacen("{\"pane\":\"p0\",", "{\"pane\":\"p0\",\"extra\":1,", 1)
            }
            "unknown key in the omitted text" => {
                payload = payload.replacen(
                    "{\"availability\":\"omitted\"}",
                    "{\"availability\":\"omitted\",\"extra\":1}",
                    1,
                )
            }
            "unknown key in the plain text" => {
                payload = payload.replacen(
                    "{\"availability\":\"plain\",",
                    "{\"availability\":\"plain\",\"extra\":1,",
                    1,
                )
            }
            "unknown key in the float" => {
                payload = payload.replacen("\"float\":{", "\"float\":{\"extra\":1,", 1)
            }
            "unknown key in the tag" => {
                payload = payload.replacen("{\"key\":", "{\"extra\":1,\"key\":", 1)
            }
            "generation 0" => {
                payload = payload.replacen(
                    &format!("\"generation\":{}", self.generation),
                    "\"generation\":0",
                    1,
                )
            }
            // A well-formed id, but not the one in the file's name.
            "checkpoint differs from file name" => {
                payload = payload.replacen(&self.checkpoint, &new_checkpoint_id(), 1)
            }
            "bad checksum" => checksum_flip = true,
            "duplicate key" => {
                payload = payload.replacen(
                    "\"shutdown\":\"clean\"",
                    "\"shutdown\":\"clean\",\"shutdown\":\"clean\"",
                    1,
                )
            }
            "unknown field" => payload = payload.replacen('{', "{\"extra\":1,", 1),
            "duplicate pane id" => {
                // One leaf names a pane twice (the single-pane and the split layouts).
                payload = if payload.contains(SPLIT_LEAVES) {
                    payload.replacen(
                        SPLIT_LEAVES,
                        "{\"kind\":\"pane\",\"pane\":\"p0\"},{\"kind\":\"pane\",\"pane\":\"p0\"}",
                        1,
                    )
                } else {
                    payload.replacen(
                        "\"nodes\":[{\"kind\":\"pane\",\"pane\":\"p0\"}]",
                        "\"nodes\":[{\"kind\":\"split\",\"axis\":\"cols\",\"first\":1,\"second\":2},{\"kind\":\"pane\",\"pane\":\"p0\"},{\"kind\":\"pane\",\"pane\":\"p0\"}]",
                        1,
                    )
                }
            }
            "invalid tree" => {
                // A split whose children indexes are not its preorder successors.
                payload = if payload.contains("\"first\":1,\"second\":2") {
                    payload.replacen("\"first\":1,\"second\":2", "\"first\":2,\"second\":1", 1)
                } else {
                    payload.replacen(
                        "\"nodes\":[{\"kind\":\"pane\",\"pane\":\"p0\"}]",
                        "\"nodes\":[{\"kind\":\"split\",\"axis\":\"cols\",\"first\":2,\"second\":1},{\"kind\":\"pane\",\"pane\":\"p0\"}]",
                        1,
                    )
                }
            }
            "running pane in a clean checkpoint" => {
                payload = payload.replacen("\"state\":\"exited\",\"exit_code\":0", "\"state\":\"running\"", 1)
            }
            "format-2 field in format 1" => {
                payload = payload.replacen(
                    "\"text\":",
                    "\"tags\":[{\"key\":\"owner\",\"value\":\"venomx\"}],\"text\":",
                    1,
                )
            }
            "unsafe integer" => {
                payload = payload.replacen(
                    &format!("\"generation\":{}", self.generation),
                    "\"generation\":9007199254740992",
                    1,
                )
            }
            "depth 33" => {
                let deep = format!("{}{}", "[".repeat(33), "]".repeat(33));
                payload = payload.replacen('{', &format!("{{\"deep\":{deep},"), 1)
            }
            "layer tile" => payload = payload.replacen("\"layer\":\"float\"", "\"layer\":\"tile\"", 1),
            "popup layer" => payload = payload.replacen("\"layer\":\"float\"", "\"layer\":\"popup\"", 1),
            "z 0" => payload = payload.replacen("\"z\":2", "\"z\":0", 1),
            "empty tags" => {
                payload = payload.replacen(
                    "[{\"key\":\"owner\",\"value\":\"venom\"},{\"key\":\"role\",\"value\":\"agent\"}]",
                    "[]",
                    1,
                )
            }
            "unsorted tags" => {
                payload = payload.replacen(
                    "[{\"key\":\"owner\",\"value\":\"venom\"},{\"key\":\"role\",\"value\":\"agent\"}]",
                    "[{\"key\":\"role\",\"value\":\"agent\"},{\"key\":\"owner\",\"value\":\"venom\"}]",
                    1,
                )
            }
            "float in a tree" => {
                payload = payload.replacen(
                    "\"nodes\":[{\"kind\":\"pane\",\"pane\":\"p0\"}]",
                    "\"nodes\":[{\"kind\":\"split\",\"axis\":\"cols\",\"first\":1,\"second\":2},{\"kind\":\"pane\",\"pane\":\"p0\"},{\"kind\":\"pane\",\"pane\":\"p1\"}]",
                    1,
                )
            }
            "bad anchor" => payload = payload.replacen("\"bottom_right\"", "\"middle\"", 1),
            "ratio 0" => payload = payload.replacen("\"ratio\":6250", "\"ratio\":0", 1),
            "ratio 10000" => payload = payload.replacen("\"ratio\":6250", "\"ratio\":10000", 1),
            "ratio 62.5" => payload = payload.replacen("\"ratio\":6250", "\"ratio\":62.5", 1),
            "ratio on a pane node" => {
                payload = payload.replacen(
                    "{\"kind\":\"pane\",\"pane\":\"p0\"}",
                    "{\"kind\":\"pane\",\"pane\":\"p0\",\"ratio\":5000}",
                    1,
                )
            }
            "read as format 2" => format = "2".into(),
            "read as format 1" => format = "1".into(),
            "other socket" => {
                payload = payload.replacen(
                    &format!("\"socket\":{}", serde_json::Value::String(self.socket.clone())),
                    "\"socket\":\"/run/other/venomx.sock\"",
                    1,
                )
            }
            "other uid" => {
                payload = payload.replacen(
                    &format!("\"uid\":{}", self.uid),
                    &format!("\"uid\":{}", self.uid + 4242),
                    1,
                )
            }
            "plain text" => payload = with_text(&payload, -60, 3600),
            // An OSC 0 ("set title") with its ESC and BEL left out: printable text
            // that only an escape parser would take for a sequence.
            "plain text like an OSC" => {
                payload = with_row(&payload, -60, 3600, "]0;PWNED-TITLE;[31mLITERAL")
            }
            // A real OSC 0 in a text row: the format forbids control characters.
            "plain text with an OSC" => {
                payload = with_row(&payload, -60, 3600, "\u{1b}]0;PWNED-TITLE\u{7}LITERAL")
            }
            "plain text saved in the future" => payload = with_text(&payload, 3600, 7200),
            "plain text expired" => payload = with_text(&payload, -7200, -3600),
            // Stored expiry far ahead: only the current text_max_age_seconds expires it.
            "plain text saved 120 s ago expiring in a day" => {
                payload = with_text(&payload, -120, 86_400)
            }
            "oversized 40 MiB" => trailing = " ".repeat(40 << 20) + "\n",
            "100001 sessions" => {
                let mut sessions = String::from("\"sessions\":[{\"session\":\"s0\",\"name\":\"work\"}");
                for i in 1..=100_000 {
                    sessions.push_str(&format!(",{{\"session\":\"s{i}\",\"name\":\"x\"}}"));
                }
                sessions.push(']');
                payload = payload.replacen(
                    "\"sessions\":[{\"session\":\"s0\",\"name\":\"work\"}]",
                    &sessions,
                    1,
                )
            }
            "format 0" => format = "0".into(),
            "format 4" => format = "4".into(),
            "format -1" => format = "-1".into(),
            "format 1.0" => format = "1.0".into(),
            "format string" => format = "\"1\"".into(),
            "oversized" => trailing = " ".repeat(70_000) + "\n",
            "truncated" => {}
            "trailing data" => trailing = "\n{}\n".into(),
            other => return Err(format!("unknown fixture defect {other:?}")),
        }
        let envelope_only = defect == "intact"
            || defect == "every level"
            || defect == "unknown key in the envelope"
            || defect == "bad checksum"
            || defect == "oversized"
            || defect == "oversized 40 MiB"
            || defect == "truncated"
            || defect == "trailing data"
            || defect.starts_with("format ")
            || defect.starts_with("read as format ");
        if !envelope_only && payload == base {
            return Err(format!(
                "defect {defect:?} does not apply to a format-{} fixture",
                self.format
            ));
        }
        let mut sum = hex(&Sha256::digest(payload.as_bytes()));
        if checksum_flip {
            let last = if sum.ends_with('0') { '1' } else { '0' };
            sum.pop();
            sum.push(last);
        }
        let envelope = format!(
            "{{\"format\":{format},\"payload\":{},\"sha256\":\"{sum}\"{envelope_extra}}}{trailing}",
            serde_json::Value::String(payload)
        );
        let mut bytes = envelope.into_bytes();
        if defect == "truncated" {
            bytes.truncate(bytes.len() / 2);
        }
        Ok(bytes)
    }
}

/// Pane p0's text becomes plain, 24 screen rows (the fixture's `rows`) and one history
/// row, saved and expiring at the given offsets from now.
fn with_text(payload: &str, saved_s: i64, expires_s: i64) -> String {
    with_row(payload, saved_s, expires_s, "PLANTED-TEXT-ROW \u{2713}")
}

/// As [`with_text`], with `row` as the first screen row.
fn with_row(payload: &str, saved_s: i64, expires_s: i64, row: &str) -> String {
    let mut screen = vec![String::new(); 24];
    screen[0] = row.into();
    let text = serde_json::json!({
        "availability": "plain",
        "saved_at": timestamp(saved_s),
        "expires_at": timestamp(expires_s),
        "screen": screen,
        "history": ["PLANTED-HISTORY-ROW"],
    });
    payload.replacen(
        "\"text\":{\"availability\":\"omitted\"}",
        &format!("\"text\":{text}"),
        1,
    )
}

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use vx_format::{read, ReadContext};

    fn fixture(format: u32, offset: i64) -> Fixture {
        Fixture {
            checkpoint: new_checkpoint_id(),
            generation: 4,
            socket: "/run/user/0/venomx/s.sock".into(),
            uid: 0,
            captured_offset_s: offset,
            format,
        }
    }

    fn verdict(f: &Fixture, defect: &str) -> String {
        let bytes = f.bytes(defect).unwrap();
        let name = format!("{}.json", f.checkpoint);
        let ctx = ReadContext {
            file_name: Some(&name),
            socket: Some(&f.socket),
            uid: Some(u64::from(f.uid)),
            max_bytes: 65_536,
        };
        if vx_format::check_length(bytes.len() as u64, 65_536).is_err() {
            return "unsupported.checkpoint_size".into();
        }
        match read(&bytes, &ctx) {
            Ok(_) => "valid".into(),
            Err(e) => e.code().as_str().to_string(),
        }
    }

    /// The planted files mean what the scenarios say: the kit's own strict reader
    /// agrees with every defect's expected verdict.
    #[test]
    fn fixtures_have_the_verdicts_the_scenarios_expect() {
        for format in 1..=3 {
            assert_eq!(
                verdict(&fixture(format, -60), "intact"),
                "valid",
                "format {format}"
            );
        }
        let f = fixture(1, -60);
        let cases = [
            ("bad checksum", "conflict.checkpoint_corrupt"),
            ("duplicate key", "conflict.checkpoint_corrupt"),
            ("unknown field", "conflict.checkpoint_corrupt"),
            ("duplicate pane id", "conflict.checkpoint_corrupt"),
            ("invalid tree", "conflict.checkpoint_corrupt"),
            (
                "running pane in a clean checkpoint",
                "conflict.checkpoint_corrupt",
            ),
            ("format-2 field in format 1", "conflict.checkpoint_corrupt"),
            ("unsafe integer", "conflict.checkpoint_corrupt"),
            ("truncated", "conflict.checkpoint_corrupt"),
            ("trailing data", "conflict.checkpoint_corrupt"),
            ("format 1.0", "conflict.checkpoint_corrupt"),
            ("format string", "conflict.checkpoint_corrupt"),
            ("format 0", "unsupported.checkpoint_format"),
            ("format 4", "unsupported.checkpoint_format"),
            ("format -1", "unsupported.checkpoint_format"),
            ("depth 33", "unsupported.checkpoint_size"),
            ("oversized", "unsupported.checkpoint_size"),
            ("100001 sessions", "unsupported.checkpoint_size"),
        ];
        for (defect, want) in cases {
            assert_eq!(verdict(&f, defect), want, "{defect}");
        }
        assert!(f.bytes("no such defect").is_err());
        assert_eq!(verdict(&f, "plain text like an OSC"), "valid");
        assert_eq!(
            verdict(&f, "plain text with an OSC"),
            "conflict.checkpoint_corrupt"
        );
        for variant in [
            "plain text",
            "plain text saved in the future",
            "plain text expired",
            "plain text saved 120 s ago expiring in a day",
        ] {
            assert_eq!(verdict(&f, variant), "valid", "{variant}");
            assert!(f
                .bytes(variant)
                .unwrap()
                .windows(16)
                .any(|w| w == b"PLANTED-TEXT-ROW"));
        }
        let f2 = fixture(2, -60);
        for defect in [
            "layer tile",
            "popup layer",
            "z 0",
            "empty tags",
            "unsorted tags",
            "float in a tree",
            "bad anchor",
            "read as format 1",
        ] {
            assert_eq!(
                verdict(&f2, defect),
                "conflict.checkpoint_corrupt",
                "format 2: {defect}"
            );
        }
        // The damaged-file examples of "Corrupt/partial state" plant format-3 files.
        let f3 = fixture(3, -60);
        for (defect, want) in &cases {
            if *defect == "format-2 field in format 1" {
                continue;
            }
            assert_eq!(verdict(&f3, defect), *want, "format 3: {defect}");
        }
        assert!(
            f3.bytes("layer tile").is_err(),
            "a defect that changes nothing"
        );
        for defect in [
            "ratio 0",
            "ratio 10000",
            "ratio 62.5",
            "ratio on a pane node",
            "read as format 2",
            "read as format 1",
            "other socket",
            "other uid",
        ] {
            assert_eq!(
                verdict(&f3, defect),
                "conflict.checkpoint_corrupt",
                "format 3: {defect}"
            );
        }
    }

    /// Closed shapes: the every-level file is valid in each format, and one unknown key
    /// at any level it has makes it corrupt; a level a format lacks is refused.
    #[test]
    fn every_level_fixture_is_valid_and_each_unknown_key_corrupt() {
        const LEVELS: [&str; 9] = [
            "envelope",
            "payload",
            "session",
            "window",
            "split node",
            "pane node",
            "pane",
            "omitted text",
            "plain text",
        ];
        for format in 1..=3 {
            let f = fixture(format, -60);
            assert_eq!(verdict(&f, "every level"), "valid", "format {format}");
            let extra = if format >= 2 {
                &["float", "tag"][..]
            } else {
                &[][..]
            };
            for level in LEVELS.iter().chain(extra) {
                let defect = format!("unknown key in the {level}");
                assert_eq!(
                    verdict(&f, &defect),
                    "conflict.checkpoint_corrupt",
                    "format {format}: {defect}"
                );
            }
            for defect in ["generation 0", "checkpoint differs from file name"] {
                assert_eq!(
                    verdict(&f, defect),
                    "conflict.checkpoint_corrupt",
                    "format {format}: {defect}"
                );
            }
        }
        let f1 = fixture(1, -60);
        assert!(f1.bytes("unknown key in the float").is_err());
        assert!(f1.bytes("unknown key in the tag").is_err());
    }

    #[test]
    fn timestamps_are_rfc3339_with_milliseconds() {
        let t = timestamp(0);
        assert_eq!(t.len(), 24, "{t}");
        assert!(t.ends_with('Z') && &t[10..11] == "T", "{t}");
        assert_eq!(civil_from_days(0), (1970, 1, 1));
        assert_eq!(civil_from_days(20_454), (2026, 1, 1));
    }
}
