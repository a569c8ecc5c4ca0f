//! Steps: the controls of refused requests (docs/harness.md "Controls"). A request
//! refused for its principal (`denied.*`) or its parameters (`invalid_params.*`, a
//! missing program) proves something only if the implementation serves the same
//! request once the one defect is gone. The control repeats the request the last
//! refusal step judged with that difference, after the refusal's own checks (it may change the
//! state those checks observe), and a refused control makes the row `inconclusive`.
//! `harness/tests/refusal_controls.rs` requires one in every such scenario.

use super::prelude::*;
use crate::evidence::{self, Control};
use crate::recovery::twins::{Request, REQUEST_KIND};

#[then(
    regex = r#"^the refusal's control, (the same call by the owner|the same call with (\{.*\})|the CLI '([^']*)'), (succeeds|is not denied|fails with "([a-z_.]+)")$"#
)]
async fn refusal_control(w: &mut World, c: &[String]) {
    w.run(c, None, |w, c| {
        let refused = w
            .refused
            .clone()
            .or_harness("a refusal's control repeats the refused request, and no step judged one");
        let with_params = c.get(2).map(|x| x.as_str()).unwrap_or("");
        let with_words = c.get(3).map(|x| x.as_str()).unwrap_or("");
        let twin = match (&refused, &c[1], with_params, with_words) {
            (Request::Wire { verb, params, .. }, "the same call by the owner", ..) => {
                Request::Wire {
                    token: Some(w.owner_token()),
                    verb: verb.clone(),
                    params: params.clone(),
                }
            }
            (Request::Cli { words, .. }, "the same call by the owner", ..) => Request::Cli {
                token: Some("@owner".to_string()),
                words: words.clone(),
            },
            (Request::Wire { token, verb, .. }, _, params, "") if !params.is_empty() => {
                Request::Wire {
                    token: token.clone(),
                    verb: verb.clone(),
                    params: parse_params(Some(params)),
                }
            }
            (Request::Cli { token, .. }, _, "", words) if !words.is_empty() => Request::Cli {
                token: token.clone(),
                words: words.split_whitespace().map(String::from).collect(),
            },
            (r, ..) => crate::harness_error!(
                "the control {:?} cannot repeat {r:?}: a wire call's control changes its \
                 parameters, a CLI call's its words",
                &c[1]
            ),
        };
        let reply = match &twin {
            Request::Wire {
                token,
                verb,
                params,
            } => w.wire(token.as_deref(), verb, params.clone()),
            Request::Cli { token, words } => w.cli(token.as_deref(), words),
        };
        let want = c.get(5).map(|x| x.as_str().to_string());
        let code = |e: &Value| e.get("code").and_then(Value::as_str).map(str::to_string);
        let accepted = match (&reply.result, &want) {
            (Ok(_), None) => true,
            (Err(e), Some(w)) => code(e).as_deref() == Some(w.as_str()),
            // Past authorization: whatever the call then meets, the principal was
            // the only reason for the refusal.
            (Err(e), None) if &c[4] == "is not denied" => {
                !code(e).is_some_and(|k| k.starts_with("denied."))
            }
            _ => false,
        };
        let observed = match &reply.result {
            Ok(_) => "it succeeded".to_string(),
            Err(e) => format!(
                "it failed with {}",
                code(e).unwrap_or_else(|| "an error without a code".into())
            ),
        };
        let control = Control {
            what: format!("{}: expected it {}", &c[1], &c[4]),
            accepted,
            observed: observed.clone(),
            commands: evidence::commands_of_step(),
        };
        evidence::control(REQUEST_KIND, control);
        if !accepted {
            crate::inconclusive!(
                "the valid twin of the refused request was refused too, so the refusal \
                 proves nothing: {}: expected it {}; {observed}",
                &c[1],
                &c[4]
            );
        }
        w.last = Some(reply);
    })
    .await;
}
