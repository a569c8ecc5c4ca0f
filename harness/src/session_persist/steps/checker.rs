//! The offline blob checker on the kit's fixed corpus (`corpus/persist/blobs/`): a
//! refusal is judged only after the checker accepted the row's valid twin, through
//! the shared checker driver (`drivers::checker`), strictly by valid/invalid and with
//! the kit's verdict line, codes and rule ids as pins (`sp-pin-checker-verdict`).

use crate::contract::Contract;
use crate::drivers::checker::{self, Judging, Said};
use crate::session_persist::bench::Persist;
use crate::session_persist::caps::{self, Cap};
use crate::session_persist::World;
use crate::verdict::OrHarness;
use cucumber::{given, then, when};
use std::path::PathBuf;

/// The pin clause of the blob format's framing rules (the kit's reading of ustar).
const FORMAT_PIN: &str = "sp-pin-blob-format";

fn corpus_blob(name: &str) -> PathBuf {
    crate::assets::corpus_dir().join("persist/blobs").join(name)
}

/// The checker's words for a copy of the corpus blob `name` in the sandbox.
fn words_for(s: &mut Persist, name: &str) -> (Vec<String>, String) {
    let file = s.new_blob_path();
    std::fs::copy(corpus_blob(name), &file).or_harness("copying the corpus blob");
    let file = file.to_string_lossy().into_owned();
    let words =
        s.t.blob_check
            .iter()
            .map(|w| w.replace("{file}", &file))
            .collect();
    (words, file)
}

#[given(
    regex = r#"^the control: the blob checker reads the valid corpus blob "([a-z0-9_-]+\.tar)"$"#
)]
async fn control_reads(w: &mut World, c: &[String]) {
    w.run(c, None, |s, c| {
        let (words, _) = words_for(s, &c[1]);
        checker::control(
            &s.ph,
            &words,
            s.sandbox(),
            &Judging::of(Contract::SessionPersist),
            "persist.blob_check",
            &format!("the blob checker read the valid corpus blob {}", &c[1]),
        );
    })
    .await;
}

/// What the checker said of the scenario's blob, kept between its steps.
static NO_SAID: &str = "no blob was read by the checker in this scenario";

#[when(regex = r#"^the blob checker reads the corpus blob "([a-z0-9_-]+\.tar)"$"#)]
async fn reads(w: &mut World, c: &[String]) {
    w.run(c, None, |s, c| {
        let (words, file) = words_for(s, &c[1]);
        s.checked_corpus = Some(c[1].to_string());
        s.over_cap = Cap::of_corpus(&c[1]).map(|cap| (cap, c[1].to_string()));
        let judging = Judging::of(Contract::SessionPersist);
        let said = checker::run_judged(&s.ph, &words, s.sandbox(), &judging);
        if !judging.verdict_only {
            pin_line_shape(&said, &file, &judging);
        }
        s.checked = Some(said);
    })
    .await;
}

/// The kit's verdict line names exactly file, result, rule and reason, and the file
/// it judged.
fn pin_line_shape(said: &Said, file: &str, judging: &Judging) {
    let keys = checker::keys(&said.line);
    if keys != ["file", "reason", "result", "rule"] {
        crate::evidence::pin(
            &judging.pin_clause,
            "a verdict line of exactly file, result, rule and reason",
            format!("members {keys:?}"),
        );
    }
    if said.line["file"].as_str() != Some(file) {
        crate::evidence::pin(
            &judging.pin_clause,
            format!("file {file:?}"),
            format!("file {}", said.line["file"]),
        );
    }
}

/// The first member of a valid corpus blob that the profile's own layouts do not list
/// for the blob's backend and session (its header names them); none: the blob is one
/// of the implementation's own sessions too, and refusing it is judged.
fn unlisted_member(corpus: &str) -> Option<String> {
    use crate::session_persist::{bench::KIT_HEADER_MEMBER, layout, pods};
    let blob = std::fs::read(corpus_blob(corpus)).or_harness("reading the corpus blob");
    let members = pods::members(&blob);
    let header = members.iter().find(|m| m.path == KIT_HEADER_MEMBER)?;
    let h: serde_json::Value = serde_json::from_slice(&header.bytes).ok()?;
    let (backend, id) = (h["backend"].as_str()?, h["session_id"].as_str()?);
    members
        .iter()
        .filter(|m| m.path != KIT_HEADER_MEMBER && !m.is_dir)
        .find(|m| !layout::lists(backend, id, &m.path))
        .map(|m| m.path.clone())
}

#[then(regex = r"^the blob checker says it is valid$")]
async fn says_valid(w: &mut World) {
    w.run(&[], None, |s, _| {
        let said = s.checked.as_ref().or_harness(NO_SAID);
        let judging = Judging::of(Contract::SessionPersist);
        if !checker::accepted(said, &judging) {
            // The corpus is written in the kit's layouts and header member; a checker
            // of the implementation's own may refuse it by right (ADR-089 leaves both
            // to the implementer).
            let header = &s.t.header_member;
            if let Some(path) = crate::session_persist::layout::own_layouts() {
                let corpus = s.checked_corpus.clone().or_harness("no corpus blob was read");
                if let Some(member) = unlisted_member(&corpus) {
                    crate::does_not_apply!(
                        "the corpus blob's member {member:?} is not a session file of the implementation's own layouts ({path}): {}",
                        checker::said_words(said)
                    );
                }
            }
            if header != crate::session_persist::bench::KIT_HEADER_MEMBER {
                crate::does_not_apply!(
                    "the corpus blob's header member is the kit's {:?}, and the implementation's is {header:?}: {}",
                    crate::session_persist::bench::KIT_HEADER_MEMBER,
                    checker::said_words(said)
                );
            }
        }
        crate::evidence::ensure(checker::accepted(said, &judging), None, || {
            (
                "the checker to accept the blob (exit 0)".into(),
                checker::said_words(said),
            )
        });
        if !judging.verdict_only && !said.line["rule"].is_null() {
            crate::evidence::pin(
                &judging.pin_clause,
                "rule null for a valid blob",
                format!("rule {}", said.line["rule"]),
            );
        }
    })
    .await;
}

#[then(regex = r#"^the blob checker refuses it with "([a-z._]+)" by rule "([a-z._]+)"$"#)]
async fn refuses(w: &mut World, c: &[String]) {
    w.run(c, None, |s, c| {
        let said = s.checked.as_ref().or_harness(NO_SAID);
        let judging = Judging::of(Contract::SessionPersist);
        within_declared_cap(s, checker::accepted(said, &judging));
        checker::assert_refused_judged(said, &c[1], &c[2], &judging);
    })
    .await;
}

/// A corpus blob over a kit cap is fixed: when the profile declares a larger cap
/// (`[persist.pins]`, sp-pin-caps) the blob is within it, and a checker that accepts
/// it is right; the row then tested nothing, so it says so instead of judging.
fn within_declared_cap(s: &Persist, accepted: bool) {
    let Some((cap, file)) = &s.over_cap else {
        return;
    };
    let k = cap.key();
    match caps::declared(*cap) {
        Some(n) if accepted && n > k.kit => crate::inconclusive!(
            "the corpus blob {file} is over the kit's {} = {} but within the profile's \
             [persist.pins] {} = {n}: the fixed corpus does not test the checker's own cap",
            k.key,
            k.kit,
            k.key
        ),
        _ => {}
    }
}

/// A framing rule the seed does not state: accepting the blob deviates from the
/// kit's reading of the format (a pin), it breaks no MUST.
#[then(
    regex = r#"^the blob checker refuses it as the kit reads the format, with "([a-z._]+)" by rule "([a-z._]+)"$"#
)]
async fn refuses_as_pinned(w: &mut World, c: &[String]) {
    w.run(c, None, |s, c| {
        crate::evidence::require_accepted_control();
        let said = s.checked.as_ref().or_harness(NO_SAID);
        let judging = Judging::of(Contract::SessionPersist);
        if checker::accepted(said, &judging) || said.exit == 0 {
            crate::evidence::pin(
                FORMAT_PIN,
                "the blob refused (the kit's framing rules)",
                checker::said_words(said),
            );
            return;
        }
        checker::assert_refused_judged(said, &c[1], &c[2], &judging);
    })
    .await;
}
