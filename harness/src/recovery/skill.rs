//! The implementation's generated agent skill (`docs/spec/recovery-skill.md`): the
//! profile's `skill` command run in the scenario's sandbox, and the two readings the
//! `@rfc-1-skill-no-owner` scenario judges it by (no `@owner` in any case, a heading per
//! required point).

use super::scenario::{profile, Scenario};
use crate::verdict::OrHarness;
use std::io::Read as _;
use std::process::Stdio;

/// At most this much Markdown is read; more fails the scenario (a strict reader bounds
/// what it reads before it keeps it).
pub const MAX_SKILL_BYTES: u64 = 1 << 20;

/// Runs the profile's `skill` command (stdin closed, stderr to a file in the sandbox)
/// and returns its stdout, which must be at most [`MAX_SKILL_BYTES`] of non-empty UTF-8
/// from a command that exits 0.
pub fn generate(s: &Scenario) -> String {
    let template = profile().skill.clone();
    if template.is_empty() {
        // Preflight refuses a profile that claims the feature without the command.
        crate::harness_error!("the profile has no skill command");
    }
    let stderr = std::fs::File::create(s.dir.path().join("skill.stderr"))
        .or_harness("creating the skill command's stderr file");
    let mut child = s
        .command(&template)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(stderr)
        .spawn()
        .or_harness("cannot start the skill command");
    let mut bytes = Vec::new();
    let read = child
        .stdout
        .take()
        .or_harness("the skill command's stdout")
        .take(MAX_SKILL_BYTES + 1)
        .read_to_end(&mut bytes);
    if read.is_err() || bytes.len() as u64 > MAX_SKILL_BYTES {
        let _ = child.kill();
        let _ = child.wait();
        assert!(read.is_ok(), "the skill command's stdout could not be read");
        panic!("the skill command printed more than {MAX_SKILL_BYTES} bytes");
    }
    let status = child.wait().or_harness("waiting for the skill command");
    assert!(status.success(), "the skill command failed: {status}");
    let text = String::from_utf8(bytes).unwrap_or_else(|e| {
        panic!(
            "the skill is not UTF-8 (first bad byte at offset {})",
            e.utf8_error().valid_up_to()
        )
    });
    assert!(!text.trim().is_empty(), "the skill command printed nothing");
    text
}

/// The 1-based numbers of the lines holding `needle`, in any letter case.
pub fn lines_with(text: &str, needle: &str) -> Vec<usize> {
    let needle = needle.to_lowercase();
    text.lines()
        .enumerate()
        .filter(|(_, l)| l.to_lowercase().contains(&needle))
        .map(|(i, _)| i + 1)
        .collect()
}

/// The text of every ATX heading (CommonMark: up to three spaces, 1–6 `#`, a space or
/// tab, the text, an optional closing run of `#`), outside fenced code blocks.
pub fn headings(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut fence: Option<&str> = None;
    for line in text.lines() {
        let indent = line.len() - line.trim_start_matches(' ').len();
        let rest = line.trim_start_matches(' ');
        if indent <= 3 {
            if let Some(open) = ["```", "~~~"].into_iter().find(|f| rest.starts_with(f)) {
                match fence {
                    None => fence = Some(open),
                    Some(f) if f == open => fence = None,
                    Some(_) => {}
                }
                continue;
            }
        }
        if fence.is_some() || indent > 3 {
            continue;
        }
        let after = rest.trim_start_matches('#');
        let level = rest.len() - after.len();
        if !(1..=6).contains(&level) {
            continue;
        }
        if !(after.is_empty() || after.starts_with([' ', '\t'])) {
            continue;
        }
        let mut body = after.trim();
        let closed = body.trim_end_matches('#');
        if closed.is_empty() || closed.ends_with([' ', '\t']) {
            body = closed.trim_end();
        }
        out.push(body.to_string());
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    #[test]
    fn headings_are_atx_lines_outside_fences() {
        let text = "# Top #\n\n## Restored panes are archives\n   ### Three spaces\n    #### Code\n\
                    ```sh\n## Not a heading\n```\n#NoSpace\n####### Seven\n~~~\n# fenced\n~~~\n##\tTab ##\n";
        assert_eq!(
            headings(text),
            ["Top", "Restored panes are archives", "Three spaces", "Tab"]
        );
    }

    #[test]
    fn the_owner_sentinel_is_found_in_any_case() {
        assert_eq!(
            lines_with("a\nVENOMX_TOKEN=@Owner x\n@OWNER", "@owner"),
            [2, 3]
        );
        assert!(lines_with("the owner token", "@owner").is_empty());
    }

    fn markers_of_spec() -> Vec<(String, String)> {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
        let doc = std::fs::read_to_string(root.join("docs/spec/recovery-skill.md")).unwrap();
        doc.lines()
            .filter_map(|l| l.strip_prefix("| `"))
            .map(|l| {
                let cells: Vec<&str> = l.split(" | ").collect();
                (
                    cells[0].trim_end_matches('`').to_string(),
                    cells[1].to_string(),
                )
            })
            .collect()
    }

    /// The feature's table of required points is the spec's marker table.
    #[test]
    fn the_feature_checks_exactly_the_spec_markers() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
        let feature =
            std::fs::read_to_string(root.join("features/recovery/13_credentials.feature")).unwrap();
        let start = feature
            .find("the skill has a heading for each required point:")
            .expect("the skill scenario's step");
        let rows: Vec<(String, String)> = feature[start..]
            .lines()
            .skip(1)
            .take_while(|l| l.trim_start().starts_with('|'))
            .skip(1)
            .map(|l| {
                let cells: Vec<&str> = l
                    .trim()
                    .trim_matches('|')
                    .split('|')
                    .map(str::trim)
                    .collect();
                (cells[0].to_string(), cells[1].to_string())
            })
            .collect();
        let spec = markers_of_spec();
        assert_eq!(spec.len(), 7, "{spec:?}");
        assert_eq!(rows, spec);
    }
}
