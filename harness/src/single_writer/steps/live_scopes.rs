//! `@optional-scopes` (seed: "Per-session systemd scopes"): each LAUNCH runs in its own
//! transient user scope through `systemd-run`, for which the suite gives a stand-in
//! that logs its arguments; only launches are scoped, properties are strictly
//! `Key=Value`, and a wrapper that cannot work never refuses a session.

use cucumber::{given, then};

use crate::single_writer::World;

/// The stand-in's calls: the probe (`… -- true`) and the launches (everything else).
fn wrapper_calls(w: &mut crate::single_writer::Checks) -> (Vec<String>, Vec<String>) {
    let log = w.live().sb.scope_wrapper_log();
    let text = std::fs::read_to_string(log).unwrap_or_default();
    text.lines()
        .map(String::from)
        .partition(|l| l.ends_with(" -- true"))
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
            first.ends_with(" -- true"),
            "the first call is no probe: {first:?}"
        );
        assert!(
            first.contains("--user") && first.contains("--scope"),
            "{first:?}"
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
            for flag in ["--user", "--scope", "--collect", "--unit"] {
                assert!(words.contains(&flag), "{flag} missing: {l}");
            }
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
            .filter_map(|l| {
                let words: Vec<&str> = l.split_whitespace().collect();
                let at = words.iter().position(|w| *w == "--unit")?;
                words.get(at + 1).copied()
            })
            .collect();
        assert_eq!(units.len(), 2, "{launches:?}");
        assert_ne!(units[0], units[1], "kill → relaunch reuses a unit name");
    })
    .await;
}
