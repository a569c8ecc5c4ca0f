//! Live refusals: a request the broker must refuse runs its valid twin first (the
//! control: the same route without the defect must open), then is judged refused.
//! That it is refused, and that it starts no agent, is strict; how (an HTTP status
//! before the upgrade or a close code after it), which error code and which 45xx
//! close code are the kit's pins, judged strictly against what the profile's
//! `[single_writer.pins]` declares.

use std::time::Duration;

use cucumber::{then, when};

use crate::drivers::broker_ws::Refused;
use crate::drivers::scaled;
use crate::single_writer::live::WAIT_MS;
use crate::single_writer::pins;
use crate::single_writer::World;
use crate::verdict::OrHarness;

/// How long a refused open's effects (an agent it must not start) get to show.
const STABLE_MS: u64 = 400;

#[when(regex = r#"^its valid twin "([^"]+)" with "([^"]*)" opens first$"#)]
async fn valid_twin_opens(w: &mut World, c: &[String]) {
    w.run(c, None, |s, c| {
        let live = s.live();
        live.open("twin", &c[1], &c[2], 0, 0);
        let (accepted, observed) = match (live.viewers.get_mut("twin"), live.refused.get("twin")) {
            (Some(t), _) => {
                t.viewer.pump(scaled(WAIT_MS), |v| {
                    v.close.is_some() || !v.frames("seq").is_empty() || !v.output.is_empty()
                });
                match t.viewer.close {
                    None => (true, "it opened and streams".to_string()),
                    Some(code) => (false, format!("it was closed with code {code}")),
                }
            }
            (None, Some(r)) => (false, format!("it was refused: {r}")),
            (None, None) => crate::harness_error!("the twin neither opened nor was refused"),
        };
        crate::evidence::control(
            "single-writer.broker.open",
            crate::evidence::Control {
                what: format!(
                    "open {:?} with {:?} (the request without its defect)",
                    &c[1], &c[2]
                ),
                accepted,
                observed,
                commands: Vec::new(),
            },
        );
        if let Some(t) = live.viewers.remove("twin") {
            t.viewer.close_now();
        }
        std::thread::sleep(Duration::from_millis(STABLE_MS));
        let mut agents: Vec<i32> = live.sb.agents().iter().map(|a| a.pid).collect();
        agents.sort_unstable();
        live.agents_after_control = Some(agents);
    })
    .await;
}

#[then(regex = r#"^viewer (\w+) is refused with HTTP (\d+) and "([a-z_.]+)"$"#)]
async fn refused_with(w: &mut World, c: &[String]) {
    w.run(c, None, |s, c| {
        crate::evidence::require_accepted_control();
        let live = s.live();
        let refused = live.refused.get(&c[1]).map(|r| match r {
            Refused::Http(status, body) => Ok((*status, body.clone())),
            other => Err(other.to_string()),
        });
        let style = match refused {
            Some(Ok((status, body))) => {
                // A 5xx is the broker failing, not refusing: never a pin.
                crate::evidence::ensure((400..500).contains(&status), None, || {
                    ("a refusal: an HTTP 4xx".into(), format!("HTTP {status}: {body}"))
                });
                if status.to_string() != c[2] {
                    crate::evidence::pin(
                        pins::REFUSAL_STYLE,
                        format!("HTTP {}", &c[2]),
                        format!("HTTP {status}: {body}"),
                    );
                }
                let code = body["error"]["code"].as_str();
                if code != Some(&c[3]) {
                    crate::evidence::pin(
                        pins::ERROR_CODES,
                        format!("error code {:?}", &c[3]),
                        format!("error code {code:?} in {body}"),
                    );
                }
                "http"
            }
            Some(Err(other)) => crate::evidence::fail(
                Some("sw-key-injective"),
                format!("viewer {} refused by the broker", &c[1]),
                format!("the connection failed otherwise: {other}"),
            ),
            None => {
                let t = live.viewer(&c[1]);
                t.viewer.pump(scaled(WAIT_MS), |v| v.close.is_some());
                // Refused is the seed's: a close after the upgrade, with no agent
                // (the next step). Its code (the kit's 4500, a 4000-4999 one, or the
                // implementation's own, e.g. 1008) is the close-code pin.
                let close = t.viewer.close_frame_code();
                crate::evidence::ensure(close.is_some(), Some("sw-key-injective"), || {
                    (
                        format!(
                            "viewer {} refused: an HTTP 4xx before the upgrade or a close frame after it",
                            &c[1]
                        ),
                        format!("it opened; {}", t.viewer.ending()),
                    )
                });
                pins::judge_close("close_refused", &t.viewer);
                "close"
            }
        };
        let own = pins::declared("refusal_style").and_then(|v| v.as_str().map(str::to_string));
        pins::judge(
            "refusal_style",
            "a refusal by",
            pins::kit_str("refusal_style"),
            own.as_deref(),
            style,
        );
    })
    .await;
}

#[then(regex = r"^the refused open started no agent$")]
async fn refused_started_none(w: &mut World) {
    w.run(&[], None, |s, _| {
        let live = s.live();
        let before = live
            .agents_after_control
            .clone()
            .or_harness("no valid twin opened before the refusal");
        crate::evidence::settle(
            "\"the refused open started no agent\"",
            crate::drivers::scaled(STABLE_MS),
        );
        let mut now: Vec<i32> = live.sb.agents().iter().map(|a| a.pid).collect();
        now.sort_unstable();
        // The row's own clause: an agent started for a refused request breaks the
        // refusal the row claims, not the one-writer rule (no second writer exists).
        crate::evidence::ensure(now == before, None, || {
            (
                format!("the agents of the twin alone: {before:?}"),
                format!("agents {now:?}"),
            )
        });
    })
    .await;
}

/// A close the seed leaves open: its code is the kit's pin (`close_launch_failed`
/// for a launch refused before anything was spawned, `close_spawn_failed` for a
/// spawn that failed, `close_refused`, `close_exited`); that the viewer is closed at
/// all is strict.
#[when(
    regex = r"^viewer (\w+) is closed as (a failed launch|a failed spawn|refused|the agent exited) \((\d+)\)$"
)]
#[then(
    regex = r"^viewer (\w+) is closed as (a failed launch|a failed spawn|refused|the agent exited) \((\d+)\)$"
)]
async fn closed_as(w: &mut World, c: &[String]) {
    w.run(c, None, |s, c| {
        let (key, clause) = match &c[2] {
            "a failed launch" => ("close_launch_failed", "sw-launch-fail-frees"),
            "a failed spawn" => ("close_spawn_failed", "sw-launch-fail-frees"),
            "refused" => ("close_refused", "sw-not-socket"),
            _ => ("close_exited", "sw-agent-exit"),
        };
        if c[3] != pins::kit_int(key).to_string() {
            crate::harness_error!(
                "the step names close {} but the kit's {key} is {}",
                &c[3],
                pins::kit_int(key)
            );
        }
        let live = s.live();
        // A broker may check the cwd or the program before the upgrade and answer
        // with an HTTP 4xx: the launch failed all the same (the lock and socket steps
        // that follow judge the rest); how it is refused is the refusal-style pin.
        if key != "close_exited" {
            if let Some(Refused::Http(status, body)) = live.refused.get(&c[1]) {
                let (status, body) = (*status, body.clone());
                crate::evidence::ensure((400..500).contains(&status), Some(clause), || {
                    (
                        "a refusal: an HTTP 4xx".into(),
                        format!("HTTP {status}: {body}"),
                    )
                });
                // The kit's own engine `ghost` refused before the upgrade may be an
                // engine the implementation does not know, not a spawn that failed:
                // the row would pass having launched nothing.
                let missing = live.t.engines().missing;
                crate::evidence::ensure(
                    key != "close_spawn_failed"
                        || missing != crate::single_writer::engines::KIT_MISSING,
                    Some(clause),
                    || {
                        (
                            format!("a launch of the engine {missing:?}, whose program is missing"),
                            format!(
                                "HTTP {status} before the upgrade: {body}; a broker that does not know the kit's {missing:?} names an engine it knows in [single_writer] missing_program_engine"
                            ),
                        )
                    },
                );
                let own =
                    pins::declared("refusal_style").and_then(|v| v.as_str().map(str::to_string));
                if own.as_deref() != Some("http") {
                    crate::evidence::pin(
                        pins::REFUSAL_STYLE,
                        format!("a close {} after the upgrade", &c[3]),
                        format!("HTTP {status} before it: {body}"),
                    );
                }
                return;
            }
        }
        let t = live.viewer(&c[1]);
        t.viewer.pump(scaled(WAIT_MS), |v| v.close.is_some());
        crate::evidence::ensure(t.viewer.close.is_some(), Some(clause), || {
            (
                format!("viewer {} closed", &c[1]),
                "it is still open".into(),
            )
        });
        if key == "close_exited" {
            // Not a refusal: the seed's viewer of an exited agent "gets EOF", so an
            // end without a close frame is a choice the pin names, not a failure.
            pins::judge_int(key, "close code", t.viewer.close.map(i64::from));
        } else {
            pins::judge_close(key, &t.viewer);
        }
    })
    .await;
}
