//! A scenario's `evidence` on the HTML page: folded under the scenario (`<details>`),
//! the same fields as `report.json`, in words first and raw output after.

use super::evidence_json::EvidenceJson;
use std::fmt::Write as _;

pub fn esc(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

pub const STYLE: &str = "
details.evidence{margin:6px 0 2px;border-left:3px solid #c62828;padding-left:8px}
details.evidence summary{font-weight:600;font-size:12px;color:#7a1c1c}
details.evidence dl{display:grid;grid-template-columns:max-content 1fr;gap:2px 10px;margin:4px 0;font-size:12px}
details.evidence dt{font-weight:600}
details.evidence dd{margin:0}
details.evidence blockquote{margin:2px 0;padding:2px 8px;background:#f4f1ea;font-style:italic}
details.evidence pre{margin:2px 0 6px;padding:4px 6px;background:#f3f4f6;font:11px/1.35 ui-monospace,Menlo,monospace;white-space:pre-wrap;max-height:14em;overflow:auto}
";

/// The folded evidence of one scenario.
pub fn evidence_html(out: &mut String, e: &EvidenceJson) {
    out.push_str("<details class=\"evidence\"><summary>evidence: expected ");
    let _ = write!(
        out,
        "{}; observed {}</summary><dl>",
        esc(&e.expected),
        esc(&e.observed)
    );
    if let Some(step) = &e.step {
        let _ = write!(out, "<dt>step</dt><dd><code>{}</code></dd>", esc(step));
    }
    if let Some(c) = &e.clause {
        let _ = write!(
            out,
            "<dt>clause</dt><dd><code>{}</code> ({}, {} {})<blockquote class=\"quote\">{}</blockquote></dd>",
            esc(&c.id),
            esc(&c.level),
            esc(&c.seed),
            esc(&c.section),
            esc(&c.quote)
        );
    }
    let _ = write!(
        out,
        "<dt>expected</dt><dd class=\"expected\">{}</dd><dt>observed</dt><dd class=\"observed\">{}</dd>",
        esc(&e.expected),
        esc(&e.observed)
    );
    if let Some(c) = e.control.as_ref().map(|c| &c.control) {
        let _ = write!(
            out,
            "<dt>control</dt><dd class=\"control\">{}: {} ({})</dd>",
            esc(&c.what),
            if c.accepted { "accepted" } else { "refused" },
            esc(&c.observed)
        );
    }
    for p in &e.pins {
        let _ = write!(
            out,
            "<dt>pin</dt><dd><code>{}</code>: the kit pins {}, observed {}</dd>",
            esc(&p.clause),
            esc(&p.expected),
            esc(&p.observed)
        );
    }
    for n in &e.notes {
        let _ = write!(out, "<dt>note</dt><dd>{}</dd>", esc(n));
    }
    for f in &e.files {
        let _ = write!(
            out,
            "<dt>file</dt><dd>{} <code>{}</code></dd>",
            esc(f.change),
            esc(&f.path)
        );
    }
    if let Some(r) = &e.reproduce {
        let _ = write!(
            out,
            "<dt>reproduce</dt><dd><code>sh {}/repro.sh</code></dd>",
            esc(r)
        );
    }
    out.push_str("</dl>");
    for c in &e.commands {
        let _ = write!(
            out,
            "<p class=\"command\"><code>{}</code>: {}, {} ms</p>",
            esc(&c.argv.join(" ")),
            esc(&c.exit_words()),
            c.duration_ms
        );
        for (name, text) in [("stdout", &c.stdout_tail), ("stderr", &c.stderr_tail)] {
            if !text.trim().is_empty() {
                let _ = write!(out, "<pre class=\"{name}\">{}</pre>", esc(text));
            }
        }
    }
    for p in &e.processes {
        let _ = write!(
            out,
            "<p class=\"process\"><code>{}</code>: {}</p>",
            esc(&p.argv.join(" ")),
            esc(&p.process_words())
        );
        if !p.stderr_tail.trim().is_empty() {
            let _ = write!(out, "<pre class=\"stderr\">{}</pre>", esc(&p.stderr_tail));
        }
    }
    if !e.frames.is_empty() {
        let _ = write!(
            out,
            "<pre class=\"frames\">{}</pre>",
            esc(&e.frames.join("\n"))
        );
    }
    out.push_str("</details>");
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::evidence::CommandRun;

    /// A broker that still runs is shown as such, with its stderr's end escaped.
    #[test]
    fn a_process_is_shown_with_its_state_and_stderr() {
        let broker = CommandRun {
            argv: vec!["broker".into(), "serve".into()],
            exit_status: None,
            signal: None,
            duration_ms: 5,
            stdout_tail: String::new(),
            stderr_tail: "Traceback <x>\nOSError: [Errno 37]".into(),
            cwd: None,
            env: Vec::new(),
        };
        let e = EvidenceJson {
            step: None,
            clause: None,
            expected: "a refusal".into(),
            observed: "a reset".into(),
            commands: Vec::new(),
            files: Vec::new(),
            processes: vec![broker],
            frames: Vec::new(),
            control: None,
            pins: Vec::new(),
            notes: Vec::new(),
            reproduce: None,
        };
        let mut out = String::new();
        evidence_html(&mut out, &e);
        assert!(
            out.contains("<code>broker serve</code>: still running"),
            "{out}"
        );
        assert!(out.contains("Traceback &lt;x&gt;"), "{out}");
    }
}
