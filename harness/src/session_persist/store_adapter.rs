//! The store adapter driver: the implementation's store behind JSON lines
//! (docs/spec/persist-store-adapter.md), so the kit runs the store conformance
//! checks itself. Blobs travel as files; a reply is `{"ok":true}` or
//! `{"ok":false,"code":…}`.

use crate::drivers::lines::LinesChild;
use crate::drivers::sandbox::Placeholders;
use serde_json::{json, Value};
use std::path::Path;

/// The environment variables naming the twins and their credentials, passed through.
pub const TWIN_ENV_PREFIX: &str = "VXPERSIST_S3_";

/// How long one request may take (scaled): a twin's first write can take seconds.
const REPLY_MS: u64 = 15_000;

/// The environment variable holding a twin's endpoint (URL with the bucket as path).
pub fn twin_env(twin: &str) -> String {
    format!("{TWIN_ENV_PREFIX}{}", twin.to_ascii_uppercase())
}

/// A running adapter.
pub struct StoreAdapter {
    lines: LinesChild,
    /// Whether the store is an S3 twin (an `unavailable.*` reply is then the twin's
    /// absence, a harness error, never a verdict).
    pub twin: Option<String>,
    /// The next `unavailable.*` reply is the lost reply a scenario arranged.
    pub expect_lost_reply: bool,
}

/// One reply: `None` for ok, the code otherwise.
pub type Reply = Option<String>;

impl StoreAdapter {
    /// Starts `template` over the store spec `store`.
    pub fn start(
        ph: &Placeholders,
        template: &[String],
        store: &str,
        twin: Option<String>,
        cwd: &Path,
    ) -> StoreAdapter {
        let words: Vec<String> = template
            .iter()
            .map(|w| w.replace("{store}", store))
            .collect();
        let env: Vec<(String, String)> = std::env::vars()
            .filter(|(k, _)| k.starts_with(TWIN_ENV_PREFIX))
            .collect();
        StoreAdapter {
            lines: LinesChild::start("store adapter", ph, &words, &env, cwd),
            twin,
            expect_lost_reply: false,
        }
    }

    /// Sends one request and waits for its reply.
    pub fn request(&mut self, req: Value) -> Reply {
        let v = self.lines.request(&req, REPLY_MS);
        let code = match (v["ok"].as_bool(), v["code"].as_str()) {
            (Some(true), None) => None,
            (Some(false), Some(code)) => Some(code.to_string()),
            _ => panic!("a reply is {{\"ok\":true}} or {{\"ok\":false,\"code\":…}}: {v}"),
        };
        if let (Some(twin), Some(code)) = (&self.twin, &code) {
            if code.starts_with("unavailable.") && !std::mem::take(&mut self.expect_lost_reply) {
                crate::harness_error!(
                    "the {twin} twin did not serve the request ({code}): is it running?"
                );
            }
        }
        code
    }

    pub fn put(&mut self, run: &str, r: &str, file: &Path) -> Reply {
        self.request(json!({"op":"put","run":run,"ref":r,"file":file}))
    }

    pub fn get(&mut self, run: &str, r: &str, file: &Path) -> Reply {
        self.request(json!({"op":"get","run":run,"ref":r,"file":file}))
    }

    pub fn delete(&mut self, run: &str, r: &str) -> Reply {
        self.request(json!({"op":"delete","run":run,"ref":r}))
    }

    pub fn delete_run(&mut self, run: &str) -> Reply {
        self.request(json!({"op":"delete_run","run":run}))
    }
}

/// The twin's endpoint, when its environment variable is set.
pub fn twin_endpoint(twin: &str) -> Option<String> {
    std::env::var(twin_env(twin)).ok().filter(|v| !v.is_empty())
}

/// Why a twin's rows cannot run here, when they cannot: the profile does not name
/// it, or its endpoint is not set and CI does not require it
/// (`VXPERSIST_REQUIRE_TWINS=1` turns an unset endpoint into a harness error).
pub fn twin_unavailable(twin: &str, profile_twins: &[String]) -> Option<String> {
    if !profile_twins.iter().any(|t| t == twin) {
        return Some(format!(
            "the profile names no {twin} twin ([persist].s3_twins)"
        ));
    }
    let required = std::env::var("VXPERSIST_REQUIRE_TWINS").is_ok_and(|v| v == "1");
    (twin_endpoint(twin).is_none() && !required).then(|| {
        format!(
            "the {twin} twin's endpoint is not set (${}; .ci/s3-twins.sh start)",
            twin_env(twin)
        )
    })
}
