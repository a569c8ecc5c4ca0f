//! `report.html` is one self-contained page a person opens in a browser: every row of
//! every contract run, failing rows open with their scenarios' step transcripts, no
//! script and nothing fetched. Rendered in headless Chromium (Debian's `chromium`,
//! which `.ci/run` installs; `VXCERT_REQUIRE_CHROMIUM=1` makes its absence a failure).

mod common;

use std::path::Path;
use std::process::Command;

fn chromium() -> Option<&'static str> {
    let found = ["chromium", "chromium-browser"].into_iter().find(|c| {
        Command::new(c)
            .arg("--version")
            .output()
            .is_ok_and(|o| o.status.success())
    });
    if found.is_none() && std::env::var("VXCERT_REQUIRE_CHROMIUM").is_ok_and(|v| v == "1") {
        panic!("chromium is required here (apt-get install chromium)");
    }
    found
}

/// Headless Chromium with the flags this machine's closed network needs.
fn headless(browser: &str, profile: &Path) -> Command {
    let mut cmd = Command::new(browser);
    cmd.args([
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--window-size=1280,1000",
    ])
    .arg(format!("--user-data-dir={}", profile.display()));
    cmd
}

#[test]
fn the_html_report_shows_every_row_and_the_failing_steps() {
    common::ensure_reference(&[]);
    // The session-persist suite with a HasSession that always says true: some rows
    // fail, so the page has failing scenarios to show.
    let reference = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../profiles/reference.toml"),
    )
    .unwrap();
    let line = reference
        .lines()
        .find(|l| l.starts_with("has_session = "))
        .expect("the reference's has_session line");
    let lying = reference.replace(line, "has_session = [\"/bin/echo\", \"true\"]");
    let dir = tempfile::tempdir().unwrap();
    let profile = dir.path().join("lying.toml");
    std::fs::write(&profile, lying).unwrap();
    let report = dir.path().join("report");
    let out = Command::new(common::vxcert())
        .args([
            "run",
            "--quiet",
            "--contract",
            "session-persist",
            "--profile",
        ])
        .arg(&profile)
        .arg("--report")
        .arg(&report)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1), "some rows must fail");
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(report.join("report.json")).unwrap())
            .unwrap();
    let page = std::fs::read_to_string(report.join("report.html")).unwrap();

    // Self-contained: no script, no external resource.
    for banned in ["<script", "<link", "src=", "href=\"http", "@import", "url("] {
        assert!(!page.contains(banned), "the page carries {banned:?}");
    }
    let rows = json["rows"].as_array().unwrap();
    assert!(rows.len() >= 2);
    for row in rows {
        let name = row["row"].as_str().unwrap();
        assert!(
            page.contains(&format!("<summary>{name}</summary>")),
            "row {name}"
        );
    }
    assert_eq!(page.matches("<tr class=\"row\">").count(), rows.len());
    // A failing row is open, its failing scenario shows the step that failed.
    assert!(page.contains("<details open>"));
    assert!(page.contains("<li class=\"failed\">"));
    assert!(!page.contains("(no step transcript in the run)"));

    // Every scenario that is not pass carries its evidence, with the fields the
    // issue names, and the page shows it folded under the scenario.
    let failing: Vec<&serde_json::Value> = json["scenarios"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|s| s["verdict"] == "fail")
        .collect();
    assert!(!failing.is_empty());
    for s in &failing {
        let e = &s["evidence"];
        assert!(
            e["step"].as_str().is_some_and(|t| t.starts_with("Then ")
                || t.starts_with("And ")
                || t.starts_with("When ")
                || t.starts_with("Given ")),
            "{e}"
        );
        for k in ["id", "level", "seed", "section", "quote"] {
            assert!(
                e["clause"][k].as_str().is_some_and(|v| !v.is_empty()),
                "clause.{k}: {e}"
            );
        }
        assert!(e["clause"]["seed"]
            .as_str()
            .unwrap()
            .starts_with("shared/seeds/004_"));
        assert!(e["expected"].as_str().is_some_and(|v| !v.is_empty()), "{e}");
        assert!(e["observed"].as_str().is_some_and(|v| !v.is_empty()), "{e}");
        assert!(e["files"].is_array() && e["frames"].is_array(), "{e}");
        let commands = e["commands"].as_array().unwrap();
        assert!(
            !commands.is_empty(),
            "the failing step ran the implementation: {e}"
        );
        for c in commands {
            assert!(c["argv"].as_array().is_some_and(|a| !a.is_empty()));
            assert!(
                c["duration_ms"].is_u64()
                    && c["stdout_tail"].is_string()
                    && c["stderr_tail"].is_string()
            );
            assert!(c.get("exit_status").is_some());
        }
        let repro = report
            .join(e["reproduce"].as_str().expect("a reproduction"))
            .join("repro.sh");
        assert!(repro.is_file(), "{repro:?}");
    }
    // The lying HasSession is what the failing commands show.
    assert!(failing.iter().any(|s| s["evidence"]["commands"]
        .as_array()
        .unwrap()
        .iter()
        .any(|c| c["argv"][0] == "/bin/echo" && c["stdout_tail"] == "true\n")));
    let with_evidence = json["scenarios"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|s| s.get("evidence").is_some())
        .count();
    assert_eq!(
        page.matches("<details class=\"evidence\">").count(),
        with_evidence
    );
    assert!(page.contains("<blockquote class=\"quote\">"));
    let junit = std::fs::read_to_string(report.join("report.xml")).unwrap();
    assert!(
        junit.contains("<failure message=\"expected "),
        "JUnit's failure message is the one-line expected/observed"
    );

    let Some(browser) = chromium() else {
        eprintln!("chromium not installed: the page was checked, not rendered");
        return;
    };
    let url = format!("file://{}", report.join("report.html").display());
    let dom = headless(browser, &dir.path().join("chromium-dom"))
        .arg("--dump-dom")
        .arg(&url)
        .output()
        .unwrap();
    assert!(
        dom.status.success(),
        "{}",
        String::from_utf8_lossy(&dom.stderr)
    );
    let dom = String::from_utf8_lossy(&dom.stdout);
    assert_eq!(
        dom.matches("class=\"row\"").count(),
        rows.len(),
        "rows in the DOM"
    );
    for row in rows {
        assert!(dom.contains(row["row"].as_str().unwrap()));
    }
    assert_eq!(
        dom.matches("class=\"evidence\"").count(),
        with_evidence,
        "the evidence in the DOM"
    );
    assert!(dom.contains("class=\"observed\""));
    let shot = dir.path().join("report.png");
    let rendered = headless(browser, &dir.path().join("chromium-shot"))
        .arg(format!("--screenshot={}", shot.display()))
        .arg(&url)
        .output()
        .unwrap();
    assert!(rendered.status.success());
    let stderr = String::from_utf8_lossy(&rendered.stderr);
    assert!(
        !stderr.contains("Uncaught") && !stderr.contains("ERR_FILE_NOT_FOUND"),
        "{stderr}"
    );
    let png = std::fs::read(&shot).unwrap();
    assert_eq!(&png[..8], b"\x89PNG\r\n\x1a\n");
    assert!(png.len() > 10_000, "a rendered page, not a blank one");
}
