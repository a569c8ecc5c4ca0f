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
