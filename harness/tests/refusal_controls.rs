//! Every recovery scenario that judges a request refused for its principal
//! (`denied.*`) or its parameters (`invalid_params.*`, and the secret-exclusion rows'
//! `denied` / `invalid` prefixes) runs the refusal's control after it (docs/harness.md
//! "Controls"): a refusal proves nothing until the same request without the defect
//! was served. Refused file states have their own twins (`recovery::twins`).

use std::path::Path;

/// The codes a refusal step expects in one scenario block: literal ones, and for a
/// `<column>` placeholder, that column's values in the block's Examples tables.
fn refusal_codes(block: &str) -> Vec<String> {
    let mut codes = Vec::new();
    let mut columns = Vec::new();
    for line in block.lines().map(str::trim) {
        let Some(rest) = line
            .split_once("the call fails with a code starting \"")
            .or_else(|| line.split_once("the call fails with \""))
            .map(|(_, r)| r)
        else {
            continue;
        };
        for quoted in rest.split('"').step_by(2) {
            match quoted.strip_prefix('<').and_then(|q| q.strip_suffix('>')) {
                Some(col) => columns.push(col.to_string()),
                None if !quoted.trim().is_empty() && !quoted.contains(' ') => {
                    codes.push(quoted.to_string())
                }
                None => {}
            }
        }
    }
    let mut header: Option<Vec<String>> = None;
    for line in block.lines().map(str::trim) {
        if !line.starts_with('|') {
            header = None;
            continue;
        }
        let cells: Vec<String> = line
            .trim_matches('|')
            .split('|')
            .map(|c| c.trim().to_string())
            .collect();
        match &header {
            None => header = Some(cells),
            Some(h) => {
                for col in &columns {
                    if let Some(i) = h.iter().position(|c| c == col) {
                        codes.push(cells[i].clone());
                    }
                }
            }
        }
    }
    codes
}

fn needs_control(code: &str) -> bool {
    ["denied", "invalid"].iter().any(|p| code.starts_with(p))
}

/// The scenario blocks of one feature file (each from its `Scenario` line to the next).
fn scenarios(text: &str) -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = Vec::new();
    for line in text.lines() {
        let t = line.trim();
        if t.starts_with("Scenario") {
            out.push((t.to_string(), String::new()));
        } else if t.starts_with("Rule:") || t.starts_with('@') {
            continue;
        } else if let Some((_, body)) = out.last_mut() {
            body.push_str(line);
            body.push('\n');
        }
    }
    out
}

#[test]
fn every_refused_request_has_its_control() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../features/recovery");
    let mut missing = Vec::new();
    let mut judged = 0;
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "feature"))
        .collect();
    files.sort();
    for file in files {
        let text = std::fs::read_to_string(&file).unwrap();
        for (name, body) in scenarios(&text) {
            if !refusal_codes(&body).iter().any(|c| needs_control(c)) {
                continue;
            }
            judged += 1;
            if !body.contains("the refusal's control, ") {
                missing.push(format!("{}: {name}", file.display()));
            }
        }
    }
    assert!(
        missing.is_empty(),
        "refusals without a control:\n{}",
        missing.join("\n")
    );
    // The rows this test guards: if the parser stopped finding them, it would pass
    // for the wrong reason.
    assert!(judged >= 15, "only {judged} refusal scenarios were found");
}

#[test]
fn the_parser_sees_literal_and_tabled_codes() {
    let block = "    Then the call fails with \"<code>\"\n    Examples:\n      | code | x |\n      | denied.spawn | 1 |\n      | unavailable.spawn | 2 |\n";
    assert_eq!(refusal_codes(block), ["denied.spawn", "unavailable.spawn"]);
    let block = "    Then the call fails with a code starting \"denied.\"\n";
    assert_eq!(refusal_codes(block), ["denied."]);
    let block = "    Then the call fails with \"a\" or \"invalid_params.x\"\n";
    assert_eq!(refusal_codes(block), ["a", "invalid_params.x"]);
}
