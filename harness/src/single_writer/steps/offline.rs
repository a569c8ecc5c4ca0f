//! Steps of the offline checkers: session keys, resume plans and sidecars from the
//! kit's corpus, and the verdict each checker prints.

use crate::drivers::checker;
use crate::single_writer::checks::corpus_dir;
use crate::single_writer::World;
use crate::verdict::OrHarness;
use cucumber::{then, when};

fn corpus_text(rel: &str) -> String {
    std::fs::read_to_string(corpus_dir().join(rel)).or_harness("reading the corpus case")
}

#[when(
    regex = r#"^the key checker reads the corpus key "([a-z0-9_-]+\.key)" for (an existing|a new) session$"#
)]
async fn key_checker_reads(w: &mut World, c: &[String]) {
    w.run(c, None, |s, c| {
        let key = corpus_text(&format!("keys/{}", &c[1]));
        s.check_key(key.trim_end_matches('\n'), &c[2] == "a new");
    })
    .await;
}

#[then(regex = r#"^the checker accepts it as the physical key "([^"]+)"$"#)]
async fn checker_accepts_as(w: &mut World, c: &[String]) {
    w.run(c, None, |s, c| {
        let said = s.last();
        checker::assert_valid(said);
        assert_eq!(
            said.line["physical_key"].as_str(),
            Some(&c[1]),
            "physical key of {}",
            said.line
        );
    })
    .await;
}

#[then(regex = r"^the checker accepts it$")]
async fn checker_accepts(w: &mut World) {
    w.run(&[], None, |s, _| checker::assert_valid(s.last()))
        .await;
}

#[then(regex = r#"^the checker refuses it with "([a-z_.]+)" by rule "([a-z0-9_.]+)"$"#)]
async fn checker_refuses(w: &mut World, c: &[String]) {
    w.run(c, None, |s, c| {
        checker::assert_refused(s.last(), &c[1], &c[2])
    })
    .await;
}

#[then(regex = r#"^the physical keys of "([^"]+)" and "([^"]+)" differ$"#)]
async fn physical_keys_differ(w: &mut World, c: &[String]) {
    w.run(c, None, |s, c| {
        let mut physical = Vec::new();
        for key in [&c[1], &c[2]] {
            s.check_key(key, false);
            let said = s.last();
            checker::assert_valid(said);
            let p = said.line["physical_key"]
                .as_str()
                .unwrap_or_default()
                .to_string();
            assert!(
                !p.is_empty() && !p.contains('/') && p != "." && p != "..",
                "a physical key is one safe file name: {}",
                said.line
            );
            physical.push(p);
        }
        assert_ne!(physical[0], physical[1], "two keys share one lock");
    })
    .await;
}

#[when(regex = r#"^the resume planner reads the corpus case "(resume/[a-z0-9_-]+\.txt)"$"#)]
async fn planner_reads(w: &mut World, c: &[String]) {
    w.run(c, None, |s, c| {
        let text = corpus_text(&c[1]);
        let words: Vec<&str> = text.split_whitespace().collect();
        let [have, gen, total, ring, master] = words[..] else {
            crate::harness_error!(
                "a resume case is five words: have gen total ring_len master_gen"
            );
        };
        let (have, gen) = (absent_owned(have), absent_owned(gen));
        s.plan(have.as_deref(), gen.as_deref(), [total, ring, master]);
    })
    .await;
}

fn absent_owned(word: &str) -> Option<String> {
    (word != "-").then(|| word.to_string())
}

#[then(regex = r#"^the plan is "(delta|fresh|full|fell_behind)"(?: from (\d+))?$"#)]
async fn plan_is(w: &mut World, c: &[String]) {
    w.run(c, None, |s, c| {
        let said = s.last();
        assert_eq!(said.exit, 0, "exit status of a plan: {}", said.line);
        assert_eq!(
            said.line["plan"].as_str(),
            Some(&c[1]),
            "plan of {}",
            said.line
        );
        match c.get(2) {
            Some(from) => assert_eq!(
                said.line["from"].as_u64(),
                Some(from.as_str().parse().or_harness("a byte offset")),
                "a delta starts at {:?}: {}",
                from.as_str(),
                said.line
            ),
            None => assert!(
                said.line.get("from").is_none(),
                "only a delta has a start: {}",
                said.line
            ),
        }
    })
    .await;
}

#[then(regex = r#"^the planner refuses it with "([a-z_.]+)" by rule "([a-z0-9_.]+)"$"#)]
async fn planner_refuses(w: &mut World, c: &[String]) {
    w.run(c, None, |s, c| {
        let said = s.last();
        assert_eq!(
            said.exit, 2,
            "a malformed counter is a usage error: {}",
            said.line
        );
        let e = &said.line["error"];
        assert_eq!(e["code"].as_str(), Some(&c[1]), "code of {}", said.line);
        assert_eq!(e["rule"].as_str(), Some(&c[2]), "rule of {}", said.line);
    })
    .await;
}

#[when(regex = r#"^the sidecar checker reads the corpus file "(sidecar/[A-Za-z0-9@:._/-]+)"$"#)]
async fn sidecar_checker_reads(w: &mut World, c: &[String]) {
    w.run(c, None, |s, c| {
        if c[1].contains("..") {
            crate::harness_error!("a corpus path may not leave the corpus");
        }
        s.check_sidecar(&corpus_dir().join(&c[1]));
    })
    .await;
}
