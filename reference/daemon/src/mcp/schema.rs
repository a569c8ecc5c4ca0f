//! A verb's MCP tool description, from its manifest entry alone: the name is the
//! dotted verb name, the description its summary and its noun's, the input schema its
//! params, the output schema its result shorthand ([`crate::manifest::shape`]).

use crate::manifest::shape::{ObjectShape, Shape};
use crate::manifest::{nouns, Param, ParamKind, Target, Verb, VERBS};
use rmcp::model::{JsonObject, Tool, ToolAnnotations};
use serde_json::{json, Value};

/// The verbs served as tools: every verb but the streaming ones (a tool call is one
/// request and one reply; a stream takes the daemon connection over).
pub fn tool_verbs() -> impl Iterator<Item = &'static Verb> {
    VERBS.iter().filter(|v| !v.streaming())
}

/// The tool of `verb`.
pub fn tool(verb: &'static Verb) -> Tool {
    let mut tool = Tool::new(verb.name, description(verb), input_schema(verb));
    tool.output_schema = Some(output_schema(verb).into());
    tool.annotations = Some(ToolAnnotations::new().read_only(!verb.mutation));
    tool
}

fn description(verb: &Verb) -> String {
    let mut text = format!("{}.", verb.summary);
    let noun = verb.words().next().unwrap_or(verb.name);
    if let Some(about) = nouns::about(noun).filter(|_| noun != verb.name) {
        text.push_str(&format!("\n\nGroup `{noun}`: {about}."));
    }
    let right = verb.right.as_str();
    match verb.target {
        Target::Open => text.push_str("\n\nNeeds no right."),
        Target::Server => text.push_str(&format!("\n\nNeeds `{right}` on `server:root`.")),
        Target::Param(p) => text.push_str(&format!("\n\nNeeds `{right}` on the `{p}`.")),
        Target::Filtered => text.push_str("\n\nLists only what the caller may read."),
    }
    // The handler-specific codes (conflicts, unavailability): what a caller plans for.
    let codes: Vec<String> = verb
        .error_codes()
        .into_iter()
        .filter(|c| {
            !matches!(
                c.class(),
                crate::errors::Class::InvalidParams | crate::errors::Class::Denied
            )
        })
        .map(|c| format!("`{c}`"))
        .collect();
    if !codes.is_empty() {
        text.push_str(&format!(
            "\n\nErrors besides bad params and denials: {}.",
            codes.join(", ")
        ));
    }
    text
}

/// The params as a closed object schema: the daemon refuses an undeclared param
/// (`invalid_params.unknown_param`), so the schema does too.
pub fn input_schema(verb: &Verb) -> JsonObject {
    let properties: JsonObject = verb
        .params
        .iter()
        .map(|p| (p.name.to_string(), param_schema(p)))
        .collect();
    let required: Vec<&str> = verb
        .params
        .iter()
        .filter(|p| p.required)
        .map(|p| p.name)
        .collect();
    let mut schema = object(json!({
        "type": "object",
        "properties": properties,
        "additionalProperties": false,
    }));
    if !required.is_empty() {
        schema.insert("required".into(), json!(required));
    }
    schema
}

/// One param: its wire JSON type. A `Json` param is whatever JSON value the verb
/// reads (an argv array, a resume object, a config value), given as the value itself;
/// the CLI's flag carries that value as JSON text, the wire and MCP carry it parsed.
fn param_schema(param: &Param) -> Value {
    match param.kind {
        ParamKind::String => json!({"type": "string", "description": param.help}),
        ParamKind::Integer => json!({"type": "integer", "description": param.help}),
        ParamKind::Boolean => json!({"type": "boolean", "description": param.help}),
        ParamKind::Json => json!({
            "description": format!("{} (a JSON value, not JSON text)", param.help),
        }),
    }
}

/// The `ok` object's schema from the result shorthand. A shorthand that does not parse
/// (none does today: a test holds every tool's to the grammar) falls back to "an
/// object", which is true of every `ok` and claims nothing more.
pub fn output_schema(verb: &Verb) -> JsonObject {
    match verb.result_shape() {
        Ok(Shape::Object(o)) => object(object_schema(&o)),
        Ok(Shape::OneOf(alternatives)) => object(json!({
            "type": "object",
            "anyOf": alternatives.iter().map(object_schema).collect::<Vec<_>>(),
        })),
        _ => object(json!({"type": "object"})),
    }
}

fn shape_schema(shape: &Shape) -> Value {
    match shape {
        Shape::Any => json!({}),
        Shape::String(None) => json!({"type": "string"}),
        Shape::String(Some(form)) => json!({"type": "string", "description": form}),
        Shape::True => json!({"const": true}),
        Shape::Array(item) => json!({"type": "array", "items": shape_schema(item)}),
        Shape::Object(o) => object_schema(o),
        Shape::OneOf(alternatives) => json!({
            "anyOf": alternatives.iter().map(object_schema).collect::<Vec<_>>(),
        }),
    }
}

/// The manifest calls the shorthand the closed shape of the result: an object takes
/// its listed fields only, unless it says `…`.
fn object_schema(o: &ObjectShape) -> Value {
    let properties: JsonObject = o
        .fields
        .iter()
        .map(|f| (f.name.to_string(), shape_schema(&f.shape)))
        .collect();
    let required: Vec<&str> = o
        .fields
        .iter()
        .filter(|f| !f.optional)
        .map(|f| f.name)
        .collect();
    let mut schema = object(json!({
        "type": "object",
        "properties": properties,
        "additionalProperties": o.open,
    }));
    if !required.is_empty() {
        schema.insert("required".into(), json!(required));
    }
    Value::Object(schema)
}

fn object(value: Value) -> JsonObject {
    match value {
        Value::Object(map) => map,
        _ => JsonObject::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::manifest::find;

    fn verb(name: &str) -> &'static Verb {
        find(name).expect(name)
    }

    #[test]
    fn tools_are_the_answered_verbs_with_valid_names() {
        let names: Vec<&str> = tool_verbs().map(|v| v.name).collect();
        assert!(names.contains(&"session.list") && names.contains(&"recovery.list"));
        for streaming in VERBS.iter().filter(|v| v.streaming()) {
            assert!(!names.contains(&streaming.name), "{}", streaming.name);
        }
        assert_eq!(
            names.len(),
            VERBS.len() - VERBS.iter().filter(|v| v.streaming()).count()
        );
        for name in names {
            assert!(
                (1..=128).contains(&name.len())
                    && name
                        .bytes()
                        .all(|b| b.is_ascii_alphanumeric() || b"_.-".contains(&b)),
                "{name} is not an MCP tool name"
            );
        }
    }

    #[test]
    fn input_schema_has_each_param_typed_required_and_nothing_else() {
        let s = Value::Object(input_schema(verb("window.create")));
        assert_eq!(s["type"], "object");
        assert_eq!(s["additionalProperties"], false);
        assert_eq!(s["required"], json!(["session", "name"]));
        assert_eq!(s["properties"]["session"]["type"], "string");
        assert_eq!(s["properties"]["cols"]["type"], "integer");
        assert_eq!(
            s["properties"].as_object().unwrap().len(),
            verb("window.create").params.len()
        );
        let s = Value::Object(input_schema(verb("session.create")));
        assert_eq!(s["properties"]["unique"]["type"], "boolean");
        // A JSON param takes any JSON value: no type restriction.
        let s = Value::Object(input_schema(verb("pane.create")));
        assert!(s["properties"]["argv"].get("type").is_none());
        assert!(s["properties"]["argv"]["description"].is_string());
        // No params: an empty closed object, no empty `required`.
        let s = Value::Object(input_schema(verb("session.list")));
        assert_eq!(s["properties"], json!({}));
        assert!(s.get("required").is_none());
    }

    #[test]
    fn output_schema_follows_the_shorthand() {
        let s = Value::Object(output_schema(verb("session.list")));
        assert_eq!(s["type"], "object");
        assert_eq!(s["required"], json!(["sessions"]));
        let session = &s["properties"]["sessions"]["items"];
        assert_eq!(session["additionalProperties"], false);
        assert_eq!(session["required"], json!(["session", "name", "windows"]));
        let window = &session["properties"]["windows"]["items"];
        assert_eq!(window["properties"]["revision"], json!({}));
        let s = Value::Object(output_schema(verb("pane.capture")));
        assert_eq!(
            s["properties"]["screen"],
            json!({"type": "array", "items": {"type": "string"}})
        );
        let required = s["required"].as_array().unwrap();
        assert!(required.contains(&json!("exited")) && !required.contains(&json!("exit_code")));
        assert!(s["properties"]["exit_code"].is_object());
        let s = Value::Object(output_schema(verb("config.check")));
        assert_eq!(s["properties"]["valid"], json!({"const": true}));
        let s = Value::Object(output_schema(verb("config.get")));
        assert_eq!(s["type"], "object");
        assert_eq!(s["anyOf"].as_array().unwrap().len(), 2);
        let s = Value::Object(output_schema(verb("doctor")));
        assert_eq!(
            s["properties"]["checks"]["items"]["additionalProperties"],
            true
        );
        let s = Value::Object(output_schema(verb("grant.revoke")));
        assert_eq!(
            s,
            json!({"type": "object", "properties": {}, "additionalProperties": false})
        );
    }

    #[test]
    fn no_tool_falls_back_to_a_bare_object() {
        for v in tool_verbs() {
            let s = output_schema(v);
            assert!(
                s.contains_key("properties") || s.contains_key("anyOf"),
                "{}: the result shorthand gave no schema",
                v.name
            );
        }
    }

    #[test]
    fn descriptions_name_the_group_and_the_grant() {
        let t = tool(verb("session.list"));
        let d = t.description.as_deref().unwrap();
        assert!(d.starts_with(verb("session.list").summary), "{d}");
        assert!(d.contains(nouns::about("session").unwrap()), "{d}");
        let t = tool(verb("pane.kill"));
        assert!(t
            .description
            .as_deref()
            .unwrap()
            .contains("`write` on the `pane`"));
        assert_eq!(t.annotations.unwrap().read_only_hint, Some(false));
        let restore = tool(verb("recovery.restore"));
        assert!(restore
            .description
            .as_deref()
            .unwrap()
            .contains("`conflict.not_empty`"));
        assert_eq!(
            tool(verb("doctor")).annotations.unwrap().read_only_hint,
            Some(true)
        );
    }
}
