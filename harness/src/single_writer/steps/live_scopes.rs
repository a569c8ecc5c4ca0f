//! `@optional-scopes` (seed: "Per-session systemd scopes"): each LAUNCH runs in its own
//! transient user scope through `systemd-run`, for which the suite gives a stand-in
//! that logs its arguments; only launches are scoped, properties are strictly
//! `Key=Value`, and a wrapper that cannot work never refuses a session.

use cucumber::{given, then};

use crate::single_writer::World;

/// The stand-in's calls: the probes and the launches. The seed's launch runs a
/// master (`… -- dtach -c <sock> … <agent argv…>`); its probe's words are the
/// implementation's (the reference's `… -- true`), so any call that runs no command
/// of two words or more is a probe.
fn wrapper_calls(w: &mut crate::single_writer::Checks) -> (Vec<String>, Vec<String>) {
    let log = w.live().sb.scope_wrapper_log();
    let text = std::fs::read_to_string(log).unwrap_or_default();
    text.lines().map(String::from).partition(|l| is_probe(l))
}

fn is_probe(call: &str) -> bool {
    call.split_once(" -- ")
        .is_none_or(|(_, payload)| payload.split_whitespace().count() < 2)
}

/// The unit name of a logged call, `--unit NAME` or `--unit=NAME`.
fn unit_name(options: &str) -> Option<&str> {
    let words: Vec<&str> = options.split_whitespace().collect();
    words
        .iter()
        .enumerate()
        .find_map(|(at, w)| match w.strip_prefix("--unit") {
            Some("") => words.get(at + 1).copied(),
            Some(rest) => rest.strip_prefix('='),
            None => None,
        })
}

#[given(
    regex = r#"^a broker runs launches through a (working|failing|spawn-failing) scope wrapper with properties "([^"]*)"$"#
)]
async fn scoped_broker(w: &mut World, c: &[String]) {
    w.run(c, None, |s, c| s.live().start_scoped_broker(&c[1], &c[2]))
        .await;
}

#[then(regex = r"^the scope wrapper ran (no|one|two) launch(?:es)?$")]
async fn launches_counted(w: &mut World, c: &[String]) {
    w.run(c, None, |s, c| {
        let want = ["no", "one", "two"]
            .iter()
            .position(|n| *n == &c[1])
            .unwrap_or(0);
        let (_, launches) = wrapper_calls(s);
        assert_eq!(
            launches.len(),
            want,
            "launches through the wrapper: {launches:?}"
        );
    })
    .await;
}

#[then(regex = r"^the scope wrapper was probed before the first launch$")]
async fn probed_first(w: &mut World, c: &[String]) {
    w.run(c, None, |s, _| {
        let log = s.live().sb.scope_wrapper_log();
        let text = std::fs::read_to_string(log).unwrap_or_default();
        let first = text.lines().next().unwrap_or_default().to_string();
        assert!(
            !first.is_empty() && is_probe(&first),
            "the first call is no probe: {first:?}"
        );
        // The seed's probe is of `systemd-run --user`; its other words are the
        // implementation's.
        assert!(
            first.split_whitespace().any(|w| w == "--user"),
            "the probe is not of the user manager: {first:?}"
        );
    })
    .await;
}

// The seed's argv: `systemd-run --user --scope --collect --quiet --unit <name>
// -p K=V … -- <master argv>`: a user scope, collected when empty, named per launch.
#[then(
    regex = r#"^every launch ran as a collected user scope with "([^"]+)" and never "([^"]+)"$"#
)]
async fn launch_shape(w: &mut World, c: &[String]) {
    w.run(c, None, |s, c| {
        let (_, launches) = wrapper_calls(s);
        assert!(!launches.is_empty(), "no launch went through the wrapper");
        for l in &launches {
            let (opts, _) = l.split_once(" -- ").unwrap_or((l.as_str(), ""));
            let words: Vec<&str> = opts.split_whitespace().collect();
            for flag in ["--user", "--scope", "--collect"] {
                assert!(words.contains(&flag), "{flag} missing: {l}");
            }
            assert!(unit_name(opts).is_some(), "--unit missing: {l}");
            assert!(opts.contains(&c[1]), "property {:?} missing: {l}", &c[1]);
            assert!(
                !opts.contains(&c[2]),
                "a token that is no Key=Value passed: {l}"
            );
        }
    })
    .await;
}

#[then(regex = r"^the two launches' unit names differ$")]
async fn units_differ(w: &mut World, c: &[String]) {
    w.run(c, None, |s, _| {
        let (_, launches) = wrapper_calls(s);
        let units: Vec<&str> = launches
            .iter()
            .filter_map(|l| unit_name(l.split_once(" -- ").map_or(l.as_str(), |(o, _)| o)))
            .collect();
        assert_eq!(units.len(), 2, "{launches:?}");
        assert_ne!(units[0], units[1], "kill → relaunch reuses a unit name");
    })
    .await;
}
