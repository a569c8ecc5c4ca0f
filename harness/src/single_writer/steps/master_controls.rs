//! Steps: the controls of the master-mode refusals (docs/harness.md "Controls"). A
//! create-only master that fails loud on a taken path, or an attach-only master that
//! fails loud with nothing to reach, proves something only if the same command is
//! accepted where it should be: the create-only master serves on a free path, the
//! attach-only master attaches to a master that serves (it keeps running, or leaves
//! with 0). A master that cannot run at all (it needs a terminal, say) fails loud
//! everywhere; its refusals are then `inconclusive`, never `pass`.

use std::os::unix::net::UnixStream;
use std::path::Path;
use std::time::{Duration, Instant};

use cucumber::given;

use crate::drivers::scaled;
use crate::evidence::{self, Control};
use crate::single_writer::live::{Live, WAIT_MS};
use crate::single_writer::World;
use crate::verdict::OrHarness;

/// The kind of input the controls count toward the run's liveness.
const KIND: &str = "single-writer.master";
/// How long the attach-only twin must not fail loud.
const ATTACHED_MS: u64 = 1_000;

/// The profile's master command `template` on `path`.
fn on(template: &[String], path: &Path) -> Vec<String> {
    template
        .iter()
        .map(|w| w.replace("{socket}", &path.to_string_lossy()))
        .collect()
}

/// Whether the running master command serves on `path` within the wait (a
/// daemonizing command may leave with 0 first); what was seen, in words.
fn serves(live: &mut Live, path: &Path) -> (bool, String) {
    let until = Instant::now() + scaled(WAIT_MS);
    loop {
        if UnixStream::connect(path).is_ok() {
            return (true, format!("it serves on {}", path.display()));
        }
        let running = live.running.as_mut().or_harness("no master command ran");
        if let Ok(Some(status)) = running.0.try_wait() {
            if !status.success() {
                return (false, format!("it exited ({status}) before it served"));
            }
        }
        if Instant::now() >= until {
            return (false, format!("nothing accepted on {}", path.display()));
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[given(
    regex = r"^the profile's (create-only|attach-only) master is accepted on a free path of its own \(the refusal's control\)$"
)]
async fn master_control(w: &mut World, c: &[String]) {
    w.run(c, None, |s, c| {
        let live = s.live();
        let dir = live.sb.root.join("modes-control");
        std::fs::create_dir_all(&dir).or_harness("mkdir of the control's directory");
        let path = dir.join("m.sock");
        let tty = live.t.master_tty;
        let create = on(&live.t.master_create, &path);
        live.start_command(&create, "the control's create-only master", tty);
        let (served, seen) = serves(live, &path);
        let (what, accepted, observed) = if &c[1] == "create-only" {
            (
                "the create-only master on a free path of its own must serve there",
                served,
                seen,
            )
        } else if !served {
            (
                "the attach-only master must attach to a create-only master that serves",
                false,
                format!("the create-only master it would attach to: {seen}"),
            )
        } else {
            let creator = live.running.take();
            let attach = on(&live.t.master_attach, &path);
            live.start_command(&attach, "the control's attach-only master", tty);
            std::thread::sleep(scaled(ATTACHED_MS));
            let running = live.running.as_mut().or_harness("no master command ran");
            let (accepted, observed) = match running.0.try_wait() {
                Ok(None) => (true, "it stayed attached".to_string()),
                Ok(Some(st)) if st.success() => (true, format!("it left with {st}")),
                Ok(Some(st)) => (false, format!("it failed ({st}) with a master to reach")),
                Err(e) => (false, format!("it could not be waited for: {e}")),
            };
            drop(creator);
            (
                "the attach-only master must attach to a create-only master that serves",
                accepted,
                observed,
            )
        };
        live.running = None;
        let _ = std::fs::remove_file(&path);
        evidence::control(
            KIND,
            Control {
                what: what.to_string(),
                accepted,
                observed,
                commands: Vec::new(),
            },
        );
    })
    .await;
}
