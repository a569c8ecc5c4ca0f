//! Steps of the offline checkers: a workspace archive or an integration template,
//! from the kit's corpus or written by the scenario, and the pinned verdict line.

use crate::agent_restore::checks::corpus_dir;
use crate::agent_restore::offline::{Kind, Offline};
use crate::agent_restore::{pins, World};
use crate::drivers::checker;
use crate::verdict::OrHarness;
use cucumber::gherkin::Step;
use cucumber::{then, when};

#[when(regex = r#"^the archive checker reads the corpus archive "([^"/]+)"$"#)]
async fn archive_checker_reads_corpus(w: &mut World, c: &[String]) {
    w.run(c, None, |s, c| {
        let file = corpus_dir().join("workspace").join(&c[1]);
        s.offline.check(Kind::Archive, &file);
    })
    .await;
}

#[when(regex = r"^the archive checker reads an archive of (\d+) bytes$")]
async fn archive_checker_reads_sized(w: &mut World, c: &[String]) {
    w.run(c, None, |s, c| {
        let n: usize = c[1].parse().or_harness("a byte count");
        // A valid empty archive, padded with JSON whitespace: only its length can fail it.
        let mut bytes = b"{\"schema_version\":1,\"sessions\":[]}".to_vec();
        if n < bytes.len() {
            crate::harness_error!("{n} bytes cannot hold an archive");
        }
        bytes.resize(n, b' ');
        let file = s.offline.write_input("sized.json", &bytes);
        s.offline.check(Kind::Archive, &file);
    })
    .await;
}

#[when(regex = r"^the archive checker reads the archive:$")]
async fn archive_checker_reads_doc(w: &mut World, #[step] step: &Step) {
    w.run(&[], step.docstring.as_deref(), |s, c| {
        let doc = c.doc().or_harness("the step needs a docstring");
        let file = s.offline.write_input("archive.json", doc.as_bytes());
        s.offline.check(Kind::Archive, &file);
    })
    .await;
}

#[when(regex = r#"^the template checker reads the corpus template "([^"/]+)"$"#)]
async fn template_checker_reads_corpus(w: &mut World, c: &[String]) {
    w.run(c, None, |s, c| {
        let file = corpus_dir().join("integrations").join(&c[1]);
        s.offline.check(Kind::Template, &file);
    })
    .await;
}

#[when(
    regex = r#"^the template checker reads the corpus template "([^"/]+)" padded to (\d+) bytes$"#
)]
async fn template_checker_reads_padded(w: &mut World, c: &[String]) {
    w.run(c, None, |s, c| {
        let n: usize = c[2].parse().or_harness("a byte count");
        let mut bytes = std::fs::read(corpus_dir().join("integrations").join(&c[1]))
            .or_harness("reading the corpus template");
        // A trailing comment changes nothing but the length.
        bytes.extend_from_slice(b"\n#");
        if n < bytes.len() {
            crate::harness_error!("{n} bytes cannot hold the template");
        }
        bytes.resize(n, b' ');
        let file = s.offline.write_input(&c[1], &bytes);
        s.offline.check(Kind::Template, &file);
    })
    .await;
}

#[when(regex = r#"^the template checker reads the template "([a-z0-9._-]+\.toml)":$"#)]
async fn template_checker_reads_doc(w: &mut World, c: &[String], #[step] step: &Step) {
    w.run(c, step.docstring.as_deref(), |s, c| {
        let doc = c.doc().or_harness("the step needs a docstring");
        let file = s.offline.write_input(&c[1], doc.as_bytes());
        s.offline.check(Kind::Template, &file);
    })
    .await;
}

#[then(regex = r"^the checker accepts it$")]
async fn checker_accepts(w: &mut World) {
    w.run(&[], None, |s, _| s.offline.assert_accepted()).await;
}

#[then(regex = r#"^the checker refuses it with "([a-z_.]+)" by rule "([a-z0-9_.]+)"$"#)]
async fn checker_refuses(w: &mut World, c: &[String]) {
    w.run(c, None, |s, c| s.offline.assert_refused(&c[1], &c[2]))
        .await;
}

#[then(regex = r#"^the verdict does not contain "([^"]+)"$"#)]
async fn verdict_does_not_contain(w: &mut World, c: &[String]) {
    w.run(c, None, |s, c| {
        let v = s.offline.last();
        assert!(
            !v.raw.contains(&c[1]),
            "the verdict carries content of the input: {}",
            v.raw
        );
    })
    .await;
}

/// The archive's nesting depth: read when it is within the cap, refused
/// (`archive.json`) beyond it. The cap is the profile's `archive_max_depth` pin when
/// declared (judged strictly), else the kit's 128, whose deviations are the pin's.
#[then(regex = r"^the checker judges it by the profile's archive depth cap, nested (\d+) deep$")]
async fn checker_depth_cap(w: &mut World, c: &[String]) {
    w.run(c, None, |s, c| {
        let depth: u64 = c[1].parse().or_harness("a depth");
        let (cap, declared) = pins::archive_depth_cap();
        let within = cap.is_none_or(|cap| depth <= cap);
        let accepted = checker::accepted(s.offline.last(), &Offline::judging());
        if accepted == within {
            if within {
                s.offline.assert_accepted();
            } else {
                s.offline
                    .assert_refused("conflict.archive_corrupt", "archive.json");
            }
            return;
        }
        let cap_words = match cap {
            Some(n) if declared => format!("the profile's cap of {n} levels"),
            Some(n) => format!("the kit's cap of {n} levels"),
            None => "no cap (the profile's)".to_string(),
        };
        let expected = if within {
            format!("an archive nested {depth} deep read as valid under {cap_words}")
        } else {
            format!("an archive nested {depth} deep refused under {cap_words}")
        };
        let observed = checker::said_words(s.offline.last());
        if declared {
            crate::evidence::fail(Some(pins::DEPTH_CLAUSE), expected, observed);
        }
        crate::evidence::pin(pins::DEPTH_CLAUSE, expected, observed);
    })
    .await;
}
