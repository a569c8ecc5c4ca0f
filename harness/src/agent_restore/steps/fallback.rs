//! The caller's fallback argv for restored panes without a record: the kit's
//! reading, an optional feature (`@optional-fallback-argv`). ADR-0068 §7 says only
//! what archive data never supplies ("an executable path, interpreter source, or
//! arbitrary resume argv"), and its consequences that "schema-1 archives restore
//! with fresh-process behavior"; that the restoring caller supplies the program,
//! and must, is the kit's (docs/spec/workspace-archive.md). The rows that judge the
//! archived command never running stay MUST for every profile.

use crate::agent_restore::World;
use crate::verdict::OrHarness;
use cucumber::then;

/// The optional feature whose rows judge the fallback argv itself.
pub const FEATURE: &str = "fallback-argv";

/// Whether the profile claims [`FEATURE`].
fn claimed() -> bool {
    crate::profile::context()
        .profile
        .features
        .iter()
        .any(|f| f == FEATURE)
}

/// The fallback program's arguments, judged only when the profile claims the
/// feature; otherwise the step does not apply (the MUST steps before it have run).
#[then(
    regex = r#"^where the profile claims fallback-argv, the program of "fallback" got the arguments '(.*)' after its command$"#
)]
async fn fallback_arguments(w: &mut World, c: &[String]) {
    w.run(c, None, |s, c| {
        if !claimed() {
            crate::does_not_apply!(
                "optional feature {FEATURE} not claimed by the profile: how a pane without a \
                 record is started is the implementation's (ADR-0068 names no fallback argv)"
            );
        }
        let l = s.live();
        let want: Vec<String> =
            serde_json::from_str(&l.subst(&c[1])).or_harness("a JSON array of strings");
        assert_eq!(
            super::launch::arguments_after_command(&l.dump("fallback")),
            want
        );
    })
    .await;
}
