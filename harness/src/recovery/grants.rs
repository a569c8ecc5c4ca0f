//! How a grant is spelled on the wire. The RFC names the rights (read, write, spawn,
//! admin) and resources (`server:root`, a session, a pane) but takes a grant's own
//! spelling from RFC-0005, which we do not have; the rows write the kit's
//! `right@kind:id` and the profile's `[recovery] grant` says the implementation's.

use serde_json::{Map, Value};

/// The placeholders of a grant template and a sample of each, for [`check`].
const SAMPLE: [(&str, &str); 4] = [
    ("{right}", "read"),
    ("{kind}", "session"),
    ("{id}", "s1"),
    ("{resource}", "session:s1"),
];

/// A grant template must name the right and the resource and, filled in, be JSON.
pub fn check(template: &str) -> Result<(), String> {
    if !template.contains("{right}") {
        return Err(format!("{template:?} has no {{right}}"));
    }
    if !(template.contains("{resource}") || template.contains("{id}")) {
        return Err(format!("{template:?} has neither {{resource}} nor {{id}}"));
    }
    let filled = fill(template, SAMPLE.map(|(_, v)| v));
    serde_json::from_str::<Value>(&filled)
        .map(|_| ())
        .map_err(|_| format!("{template:?} is not JSON once filled"))
}

/// `{right}`, `{kind}`, `{id}`, `{resource}` replaced by JSON-escaped text (without
/// quotes: the template quotes them).
fn fill(template: &str, [right, kind, id, resource]: [&str; 4]) -> String {
    let esc = |s: &str| {
        let q = Value::String(s.to_string()).to_string();
        q[1..q.len() - 1].to_string()
    };
    template
        .replace("{right}", &esc(right))
        .replace("{kind}", &esc(kind))
        .replace("{id}", &esc(id))
        .replace("{resource}", &esc(resource))
}

/// Rewrites the kit's grants in `params["grants"]` into `template`'s spelling; a
/// string that is not one of the kit's grants (a row's deliberately bad one) stays.
pub fn spell_with(template: &str, params: &mut Map<String, Value>) {
    let Some(Value::Array(grants)) = params.get_mut("grants") else {
        return;
    };
    for g in grants.iter_mut() {
        let Some((right, resource)) = g.as_str().and_then(|s| s.split_once('@')) else {
            continue;
        };
        let Some((kind, id)) = resource.split_once(':') else {
            continue;
        };
        let known = ["read", "write", "spawn", "admin"].contains(&right)
            && ["server", "session", "window", "pane"].contains(&kind)
            && !id.is_empty();
        if known {
            let text = fill(template, [right, kind, id, resource]);
            if let Ok(v) = serde_json::from_str(&text) {
                *g = v;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_kits_grants_take_the_profiles_spelling_and_others_stay() {
        let mut p =
            json!({"pane": "p1", "grants": ["write@pane:p1", "read@server:root", "bogus", 7]})
                .as_object()
                .unwrap()
                .clone();
        spell_with(
            r#"{"right":"{right}","on":{"kind":"{kind}","id":"{id}"}}"#,
            &mut p,
        );
        assert_eq!(
            p["grants"],
            json!([
                {"right": "write", "on": {"kind": "pane", "id": "p1"}},
                {"right": "read", "on": {"kind": "server", "id": "root"}},
                "bogus",
                7
            ])
        );
        let mut q = json!({"grants": ["read@session:s\"1"]})
            .as_object()
            .unwrap()
            .clone();
        spell_with("\"{resource}/{right}\"", &mut q);
        assert_eq!(q["grants"], json!(["session:s\"1/read"]));
    }

    #[test]
    fn a_template_without_a_right_or_a_resource_or_not_json_is_refused() {
        assert!(check("\"{right}@{kind}:{id}\"").is_ok());
        assert!(check("\"{kind}:{id}\"").unwrap_err().contains("{right}"));
        assert!(check("\"{right}\"").unwrap_err().contains("{resource}"));
        assert!(check("{right}@{resource}")
            .unwrap_err()
            .contains("not JSON"));
    }
}
