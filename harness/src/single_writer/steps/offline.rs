//! Steps of the offline checkers: session keys, resume plans and sidecars from the
//! kit's corpus, and the verdict each checker prints. Valid or invalid is judged
//! strictly; every refusal first runs its valid twin (the control); the kit's codes,
//! rule ids, line shape, physical-key spelling, length caps and owner-file shape are
//! pins (`crate::single_writer::pins`).

use crate::drivers::checker;
use crate::single_writer::checks::{corpus_dir, judging, Input};
use crate::single_writer::engines;
use crate::single_writer::pins;
use crate::single_writer::World;
use crate::verdict::OrHarness;
use cucumber::{then, when};

fn corpus_text(rel: &str) -> String {
    std::fs::read_to_string(corpus_dir().join(rel)).or_harness("reading the corpus case")
}

/// A key of the kit's corpus or features as the profile's `known_engines` reads it
/// (`engines::Engines::corpus_key`): a stand-in engine of the kind the row is about
/// when the profile judges the kit's engine otherwise, said in the evidence.
fn under_profile_engines(key: &str) -> String {
    let Some(own) = crate::single_writer::templates::templates()
        .engines()
        .corpus_key(key)
    else {
        crate::harness_error!(
            "the profile's [single_writer] known_engines has no engine of the id class {key:?} needs"
        );
    };
    if own != key {
        crate::evidence::note(format!(
            "the key {key:?} is checked as {own:?}: its engine is judged otherwise by the profile's known_engines"
        ));
    }
    own
}

/// The valid twins the refusal rows' controls run.
const VALID_KEY: &str = "keys/claude-uuid.key";
const VALID_NEW_KEY: &str = "keys/opencode-placeholder-new.key";
const VALID_ALIAS: &str = "sidecar/alias-one/aliases.json";
const VALID_OWNER: &str = "sidecar/owner-valid/opencode@ses_Ab1.owner";

#[when(
    regex = r#"^the key checker reads the corpus key "([a-z0-9_-]+\.key)" for (an existing|a new) session$"#
)]
async fn key_checker_reads(w: &mut World, c: &[String]) {
    w.run(c, None, |s, c| {
        let key = corpus_text(&format!("keys/{}", &c[1]));
        let key = under_profile_engines(key.trim_end_matches('\n'));
        let new = &c[2] == "a new";
        s.input = Input::Key(key.clone(), new);
        s.check_key(&key, new);
    })
    .await;
}

/// Runs the valid twin of the scenario's input as its control.
fn control(s: &mut crate::single_writer::checks::Checks) {
    match s.input.clone() {
        Input::Key(_, new) => {
            let twin = corpus_text(if new { VALID_NEW_KEY } else { VALID_KEY });
            s.control_key(&under_profile_engines(twin.trim_end_matches('\n')), new);
        }
        Input::Sidecar(rel) => {
            let twin = if rel.starts_with("sidecar/owner-") {
                VALID_OWNER
            } else {
                VALID_ALIAS
            };
            s.control_sidecar(&corpus_dir().join(twin));
        }
        Input::Plan(words) => {
            let [have, gen, total, ring, master] = repaired(&words);
            let word = |w: &Option<String>| w.clone().unwrap_or_default();
            let (total, ring, master) = (word(&total), word(&ring), word(&master));
            s.control_plan(
                have.as_deref(),
                gen.as_deref(),
                [total.as_str(), ring.as_str(), master.as_str()],
            );
        }
        Input::None => crate::harness_error!("no checker input to twin"),
    }
}

/// A resume case with every malformed counter made well-formed (0) and the ring cut
/// to the total: the same case without its defect.
fn repaired(words: &[Option<String>; 5]) -> [Option<String>; 5] {
    let ok = |w: &str| {
        (w == "0" || (!w.starts_with('0') && w.bytes().all(|b| b.is_ascii_digit())))
            && w.parse::<u64>().is_ok_and(|n| n <= 9_007_199_254_740_991)
    };
    let mut out = words
        .clone()
        .map(|w| w.map(|w| if ok(&w) { w } else { "0".into() }));
    let num = |w: &Option<String>| w.as_deref().and_then(|w| w.parse::<u64>().ok());
    if let (Some(total), Some(ring)) = (num(&out[2]), num(&out[3])) {
        if ring > total {
            out[3] = Some(total.to_string());
        }
    }
    out
}

#[then(regex = r#"^the checker accepts it as the physical key "([^"]+)"$"#)]
async fn checker_accepts_as(w: &mut World, c: &[String]) {
    w.run(c, None, |s, c| {
        let said = s.last().clone();
        crate::evidence::ensure(
            checker::accepted(&said, &judging()),
            Some(accept_clause(&s.input)),
            || {
                (
                    "the checker to accept the key (exit 0)".into(),
                    checker::said_words(&said),
                )
            },
        );
        let Input::Key(key, _) = &s.input else {
            crate::harness_error!("no key was checked");
        };
        let got = said.line["physical_key"].as_str().unwrap_or("none");
        let own = pins::declared("physical_key").map(|_| pins::physical_of(key));
        // The feature's cell is the kit's spelling of the corpus key; a key run
        // under a stand-in engine is spelled with that engine.
        let kit = match (c[1].split_once('@'), key.split_once(':')) {
            (Some((_, id)), Some((engine, _))) => format!("{engine}@{id}"),
            _ => c[1].to_string(),
        };
        pins::judge("physical_key", "physical key", &kit, own.as_deref(), got);
    })
    .await;
}

/// The clause a checker's accept tests, by what it read: a key's identity, a
/// sidecar's format, a resume plan's delta rule.
fn accept_clause(input: &Input) -> &'static str {
    match input {
        Input::Key(..) => "sw-key-identity",
        Input::Sidecar(_) => "sw-durable-formats",
        Input::Plan(_) => "sw-delta",
        Input::None => crate::harness_error!("the checker read nothing"),
    }
}

#[then(regex = r"^the checker accepts it$")]
async fn checker_accepts(w: &mut World) {
    w.run(&[], None, |s, _| {
        let clause = accept_clause(&s.input);
        let said = s.last();
        crate::evidence::ensure(checker::accepted(said, &judging()), Some(clause), || {
            (
                "the checker to accept the input (exit 0)".into(),
                checker::said_words(said),
            )
        });
        if !judging().verdict_only && !said.line["rule"].is_null() {
            crate::evidence::pin(
                &judging().pin_clause,
                "no rule on a valid input",
                said.line.to_string(),
            );
        }
    })
    .await;
}

#[then(regex = r#"^the checker refuses it with "([a-z_.]+)" by rule "([a-z0-9_.]+)"$"#)]
async fn checker_refuses(w: &mut World, c: &[String]) {
    w.run(c, None, |s, c| {
        control(s);
        let (code, rule) = refusal_under_caps(&s.input, (&c[1], &c[2]));
        checker::assert_refused_judged(s.last(), code, rule, &judging());
    })
    .await;
}

/// The refusal a key's row expects under the profile's caps, where the kit's rule
/// is its cap's: a key over the kit's 96 bytes but within the profile's
/// `key_max_bytes` is refused for what else is wrong with it (no separator); a key
/// whose engine is refused by the kit's cap alone (a well-formed name over 32 bytes)
/// is, under a larger `engine_max_bytes` or "none", an engine the implementation
/// does not know (none of `known_engines` is that name), so it is still refused, as
/// unknown.
fn refusal_under_caps<'a>(input: &Input, kit: (&'a str, &'a str)) -> (&'a str, &'a str) {
    let Input::Key(key, _) = input else {
        return kit;
    };
    let len = key.len() as i64;
    let over_kit_only = len > pins::kit_int("key_max_bytes")
        && pins::cap("key_max_bytes").is_none_or(|cap| len <= cap);
    let Some((engine, _)) = key.split_once(':') else {
        if over_kit_only {
            crate::evidence::note(format!(
                "the key {len} bytes long is within the profile's key_max_bytes: it is refused for its missing separator"
            ));
            return ("invalid_params.key", "key.no_separator");
        }
        return kit;
    };
    let len = engine.len() as i64;
    let kit_cap = pins::kit_int("engine_max_bytes");
    let within_own = pins::cap("engine_max_bytes").is_none_or(|cap| len <= cap);
    let known = crate::single_writer::templates::templates()
        .known_engines
        .contains_key(engine);
    if len > kit_cap && within_own && !known && engines::is_engine_name(engine) {
        crate::evidence::note(format!(
            "the engine {len} bytes long is within the profile's engine_max_bytes: it is refused as unknown"
        ));
        return ("not_found.engine", "key.engine_unknown");
    }
    kit
}

/// A key over the kit's caps (96-byte key, 64-byte ses_ tail): a refusal the kit
/// pins, or, under caps the profile declares, judged strictly by them.
#[then(
    regex = r#"^the checker refuses it as over the kit's length caps with "([a-z_.]+)" by rule "([a-z0-9_.]+)"$"#
)]
async fn checker_refuses_over_caps(w: &mut World, c: &[String]) {
    w.run(c, None, |s, c| {
        let Input::Key(key, _) = s.input.clone() else {
            crate::harness_error!("no key was checked");
        };
        let tail = key.split_once(":ses_").map_or(0, |(_, t)| t.len() as i64);
        let caps = [
            ("key_max_bytes", key.len() as i64),
            ("ses_id_max_bytes", tail),
        ];
        // A cap the profile declares "none" is never exceeded: the row then checks
        // only that the long but valid key is accepted.
        let over: Vec<(&str, i64, i64, bool)> = caps
            .iter()
            .filter_map(|(k, len)| {
                let cap = pins::cap(k)?;
                (*len > cap).then(|| (*k, *len, cap, pins::declared(k).is_some()))
            })
            .collect();
        let said = s.last().clone();
        let accepted = checker::accepted(&said, &judging());
        if over.is_empty() {
            // Within every cap the profile declares: a key like any other.
            crate::evidence::ensure(accepted, Some(pins::LENGTH_CAPS), || {
                (
                    format!("the checker to accept {key:?}, within the caps the profile declares"),
                    checker::said_words(&said),
                )
            });
            return;
        }
        control(s);
        crate::evidence::require_accepted_control();
        if accepted {
            let words = over
                .iter()
                .map(|(k, len, cap, _)| format!("{len} bytes over {k} = {cap}"))
                .collect::<Vec<_>>()
                .join(", ");
            if over.iter().any(|(_, _, _, declared)| *declared) {
                crate::evidence::fail(
                    Some(pins::LENGTH_CAPS),
                    format!("a refusal: {words}, a cap the profile declares"),
                    checker::said_words(&said),
                );
            }
            crate::evidence::pin(
                pins::LENGTH_CAPS,
                format!("a refusal: {words} (the kit's caps)"),
                checker::said_words(&said),
            );
            return;
        }
        checker::assert_refused_judged(&said, &c[1], &c[2], &judging());
    })
    .await;
}

#[then(regex = r#"^the physical keys of "([^"]+)" and "([^"]+)" differ$"#)]
async fn physical_keys_differ(w: &mut World, c: &[String]) {
    w.run(c, None, |s, c| {
        let mut physical = Vec::new();
        let keys = [under_profile_engines(&c[1]), under_profile_engines(&c[2])];
        if keys[0].split_once(':').map(|k| k.0) == keys[1].split_once(':').map(|k| k.0) {
            crate::harness_error!(
                "{:?} and {:?} run under one engine: the row needs two engines of one id class in the profile's known_engines",
                &c[1],
                &c[2]
            );
        }
        for key in &keys {
            s.check_key(key, false);
            let said = s.last();
            crate::evidence::ensure(
                checker::accepted(said, &judging()),
                Some("sw-key-injective"),
                || {
                    (
                        format!("the checker to accept {key:?}"),
                        checker::said_words(said),
                    )
                },
            );
            let Some(p) = said.line["physical_key"].as_str() else {
                crate::harness_error!(
                    "the key checker printed no physical_key for {key:?}: the suite cannot compare physical keys"
                );
            };
            crate::evidence::ensure(
                !p.is_empty() && !p.contains('/') && p != "." && p != "..",
                Some("sw-key-injective"),
                || ("a physical key that is one safe file name".into(), p.into()),
            );
            physical.push(p.to_string());
        }
        crate::evidence::ensure(
            physical[0] != physical[1],
            Some("sw-key-injective"),
            || {
                (
                    "two physical keys, one lock each".into(),
                    format!("both {:?}", physical[0]),
                )
            },
        );
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
        s.input = Input::Plan([
            have.clone(),
            gen.clone(),
            Some(total.into()),
            Some(ring.into()),
            Some(master.into()),
        ]);
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

/// A malformed counter is refused (exit non-zero, no plan: strict); exit 2 and the
/// kit's code and rule are pins.
#[then(regex = r#"^the planner refuses it with "([a-z_.]+)" by rule "([a-z0-9_.]+)"$"#)]
async fn planner_refuses(w: &mut World, c: &[String]) {
    w.run(c, None, |s, c| {
        control(s);
        crate::evidence::require_accepted_control();
        let said = s.last();
        crate::evidence::ensure(
            said.exit != 0 && said.line.get("plan").is_none(),
            Some("sw-delta"),
            || {
                (
                    "the planner to refuse the malformed counter (exit non-zero, no plan)".into(),
                    checker::said_words(said),
                )
            },
        );
        let j = judging();
        if j.verdict_only {
            return;
        }
        let e = &said.line["error"];
        for (what, got, want) in [
            ("exit", Some(said.exit.to_string()), "2".to_string()),
            (
                "error.code",
                e["code"].as_str().map(str::to_string),
                c[1].to_string(),
            ),
            (
                "error.rule",
                e["rule"].as_str().map(str::to_string),
                c[2].to_string(),
            ),
        ] {
            if got.as_deref() != Some(want.as_str()) {
                crate::evidence::pin(
                    &j.pin_clause,
                    format!("{what} {want}"),
                    format!("{what} {got:?}"),
                );
            }
        }
    })
    .await;
}

#[when(regex = r#"^the sidecar checker reads the corpus file "(sidecar/[A-Za-z0-9@:._/-]+)"$"#)]
async fn sidecar_checker_reads(w: &mut World, c: &[String]) {
    w.run(c, None, |s, c| {
        if c[1].contains("..") {
            crate::harness_error!("a corpus path may not leave the corpus");
        }
        s.input = Input::Sidecar(c[1].to_string());
        s.check_sidecar(&corpus_dir().join(&c[1]));
    })
    .await;
}

/// The corpus file with one member more, generated in the scenario's sandbox under
/// the same file name.
#[when(
    regex = r#"^the sidecar checker reads the corpus file "(sidecar/[A-Za-z0-9@:._/-]+)" with the extra member "([a-z_]+)"$"#
)]
async fn sidecar_checker_reads_extra(w: &mut World, c: &[String]) {
    w.run(c, None, |s, c| {
        if c[1].contains("..") {
            crate::harness_error!("a corpus path may not leave the corpus");
        }
        let text = corpus_text(&c[1]);
        let body = text
            .strip_prefix('{')
            .or_harness("the corpus file is an object");
        let name = std::path::Path::new(&c[1])
            .file_name()
            .or_harness("a file name");
        let file = s.write_input(
            &format!("extra/{}", name.to_string_lossy()),
            format!("{{\"{}\":\"default\",{body}", &c[2]).as_bytes(),
        );
        s.input = Input::Sidecar(c[1].to_string());
        s.check_sidecar(&file);
    })
    .await;
}

/// An owner file with a member beyond the kit's five: refused by the kit's closed
/// shape (a pin), or judged by the shape the profile declares (`owner_shape`).
#[then(regex = r"^the checker reads it by the owner file's shape$")]
async fn checker_reads_by_owner_shape(w: &mut World) {
    w.run(&[], None, |s, _| {
        let said = s.last().clone();
        let accepted = checker::accepted(&said, &judging());
        let declared = pins::declared("owner_shape").and_then(|v| v.as_str().map(str::to_string));
        if declared.as_deref() == Some("open") {
            crate::evidence::ensure(accepted, Some(pins::OWNER_SHAPE), || {
                (
                    "the checker to accept the extra member (the profile's owner_shape \"open\")"
                        .into(),
                    checker::said_words(&said),
                )
            });
            return;
        }
        control(s);
        crate::evidence::require_accepted_control();
        match (accepted, declared) {
            (true, Some(_)) => crate::evidence::fail(
                Some(pins::OWNER_SHAPE),
                "a refusal of the extra member (the profile's owner_shape \"closed\")",
                checker::said_words(&said),
            ),
            (true, None) => crate::evidence::pin(
                pins::OWNER_SHAPE,
                "a refusal of the extra member (the kit's closed owner file)",
                checker::said_words(&said),
            ),
            (false, _) => checker::assert_refused_judged(
                &said,
                "conflict.sidecar_corrupt",
                "schema.unknown_field",
                &judging(),
            ),
        }
    })
    .await;
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The input a checker row's `When` step reads, by the step's words.
    fn input_of(step: &str) -> Option<Input> {
        if step.contains("the key checker reads") {
            Some(Input::Key(String::new(), false))
        } else if step.contains("the sidecar checker reads") {
            Some(Input::Sidecar(String::new()))
        } else if step.contains("the resume planner reads") {
            Some(Input::Plan(Default::default()))
        } else {
            None
        }
    }

    /// An accept's evidence names a clause the row carries as a tag (the row's own
    /// sentence), never another row's: every scenario of the suite with an accept
    /// step is tagged with the clause `accept_clause` names for what it read.
    #[test]
    fn an_accept_names_a_clause_of_its_row() {
        let dir =
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../features/single-writer");
        let mut checked = 0;
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.extension().is_none_or(|e| e != "feature") {
                continue;
            }
            let text = std::fs::read_to_string(&path).unwrap();
            let (mut feature, mut pending, mut scenario) = (vec![], vec![], vec![]);
            let mut input = None;
            for line in text.lines().map(str::trim) {
                if line.starts_with('@') {
                    pending.extend(line.split_whitespace().map(|t| t[1..].to_string()));
                } else if line.starts_with("Feature:") {
                    feature = std::mem::take(&mut pending);
                } else if line.starts_with("Scenario") {
                    scenario = std::mem::take(&mut pending);
                    input = None;
                } else if line.starts_with("Examples:") {
                    pending.clear();
                } else if let Some(i) = input_of(line) {
                    input = Some(i);
                } else if line.starts_with("Then the checker accepts it") {
                    let i = input.as_ref().unwrap_or_else(|| {
                        panic!("{path:?}: an accept with no checker input: {line}")
                    });
                    let clause = accept_clause(i);
                    assert!(
                        feature.iter().chain(&scenario).any(|t| t == clause),
                        "{path:?}: {line:?} names {clause}, which the row is not tagged with"
                    );
                    checked += 1;
                }
            }
        }
        // The key and sidecar rows both accept something.
        assert!(checked >= 2, "{checked}");
    }
}
