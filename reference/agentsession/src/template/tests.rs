use super::*;

const CLAUDE: &str = r#"
schema_version = 1
id = "claude-code"
display_name = "Claude Code"
kind = "terminal-agent"

[detect]
mode = "opt-in"

[session_identity]
mode = "native-or-phux"
native_env = "PHUX_CLAUDE_SESSION_ID"
restore = "external-cli"
resume_args = ["--resume", "${PHUX_AGENT_SESSION_ID}"]
fresh_args = ["--session-id", "${PHUX_AGENT_SESSION_ID}"]

[launch]
command = ["sh", "${PHUX_PLUGIN_ROOT}/scripts/phux-agent-wrap.sh", "--", "claude"]
required_executables = ["claude"]
working_directory = "workspace"
future_key = 1
"#;

const WRAPPER: &str =
    r#"command = ["sh", "${PHUX_PLUGIN_ROOT}/scripts/phux-agent-wrap.sh", "--", "claude"]"#;

fn verdict(text: &str) -> &'static str {
    parse(text.as_bytes())
        .map(|_| "valid")
        .unwrap_or_else(|e| e.rule.id())
}

#[test]
fn parses_the_peer_template_and_ignores_unmodeled_keys() {
    let t = parse(CLAUDE.as_bytes()).unwrap();
    assert_eq!(t.id, "claude-code");
    assert!(t.restorable() && t.fresh_identity());
    let launch = t.launch.unwrap();
    assert_eq!(launch.command[0], "sh");
    assert_eq!(launch.working_directory, WorkingDirectory::Workspace);
}

#[test]
fn session_identity_is_closed() {
    let text = CLAUDE.replace(
        "restore = \"external-cli\"",
        "restore = \"external-cli\"\nresume_arg = []",
    );
    assert_eq!(verdict(&text), "template.session_unknown_key");
}

#[test]
fn env_namespace() {
    for (env, want) in [
        ("BAD-NAME", "template.native_env"),
        ("BASH_ENV", "template.native_env"),
        ("PHUX_AGENT_ID", "template.native_env"),
        ("PHUX_SESSION_ID", "template.native_env"),
        ("PHUX__SESSION_ID", "template.native_env"),
        (" PHUX_X_SESSION_ID", "template.native_env"),
        ("PHUX_AGENT_SESSION_ID", "valid"),
        ("PHUX_X_SESSION_ID", "valid"),
    ] {
        let text = CLAUDE.replace("PHUX_CLAUDE_SESSION_ID", env);
        assert_eq!(verdict(&text), want, "{env}");
    }
    let long = format!("PHUX_{}_SESSION_ID", "A".repeat(112));
    assert_eq!(long.len(), 128);
    assert_eq!(
        verdict(&CLAUDE.replace("PHUX_CLAUDE_SESSION_ID", &long)),
        "valid"
    );
    let longer = format!("PHUX_{}_SESSION_ID", "A".repeat(113));
    assert_eq!(
        verdict(&CLAUDE.replace("PHUX_CLAUDE_SESSION_ID", &longer)),
        "template.native_env"
    );
}

#[test]
fn placeholder_once_and_standalone() {
    let resume = r#"resume_args = ["--resume", "${PHUX_AGENT_SESSION_ID}"]"#;
    for (args, want) in [
        (r#"["--resume"]"#, "template.placeholder"),
        (
            r#"["${PHUX_AGENT_SESSION_ID}", "${PHUX_AGENT_SESSION_ID}"]"#,
            "template.placeholder",
        ),
        (
            r#"["--resume=${PHUX_AGENT_SESSION_ID}"]"#,
            "template.placeholder",
        ),
        (
            r#"["--resume", "${PHUX_AGENT_SESSION_ID}", "x${PHUX_AGENT_SESSION_ID}"]"#,
            "template.placeholder",
        ),
        ("[]", "template.args_count"),
        (r#"["", "${PHUX_AGENT_SESSION_ID}"]"#, "template.args_bytes"),
        (r#"["--resume", 7]"#, "template.type"),
    ] {
        let text = CLAUDE.replace(resume, &format!("resume_args = {args}"));
        assert_eq!(verdict(&text), want, "{args}");
    }
    let seventeen = format!("[{}\"${{PHUX_AGENT_SESSION_ID}}\"]", "\"a\", ".repeat(16));
    let text = CLAUDE.replace(resume, &format!("resume_args = {seventeen}"));
    assert_eq!(verdict(&text), "template.args_count");
}

#[test]
fn resume_and_fresh_policy() {
    let phux_mode = CLAUDE.replace("mode = \"native-or-phux\"", "mode = \"phux\"");
    assert_eq!(verdict(&phux_mode), "template.resume_policy");
    let no_resume = CLAUDE.replace(
        r#"resume_args = ["--resume", "${PHUX_AGENT_SESSION_ID}"]"#,
        "",
    );
    assert_eq!(verdict(&no_resume), "template.fresh_without_resume");
    let legacy = no_resume.replace(
        r#"fresh_args = ["--session-id", "${PHUX_AGENT_SESSION_ID}"]"#,
        "",
    );
    let t = parse(legacy.as_bytes()).unwrap();
    assert!(!t.restorable());
    assert_eq!(
        verdict(&CLAUDE.replace("\"external-cli\"", "\"cli\"")),
        "template.restore"
    );
    assert_eq!(
        verdict(&CLAUDE.replace("mode = \"native-or-phux\"", "")),
        "template.session_missing"
    );
}

#[test]
fn no_evaluator_positions() {
    for (command, want) in [
        (r#"["sh", "-xc"]"#, "template.shell"),
        (r#"["/usr/bin/env", "sh", "-c"]"#, "template.interpreter"),
        (
            r#"["python3", "${PHUX_PLUGIN_ROOT}/x.py"]"#,
            "template.interpreter",
        ),
        (r#"["node"]"#, "template.interpreter"),
        (r#"["bash"]"#, "template.shell"),
        (r#"["nice", "claude"]"#, "template.interpreter"),
        (r#"["bash", "${PHUX_PLUGIN_ROOT}/w.sh"]"#, "valid"),
        (
            r#"["/bin/bash", "${PHUX_PLUGIN_ROOT}/trusted/wrapper.sh"]"#,
            "valid",
        ),
        (r#"["${PHUX_PLUGIN_ROOT}/scripts/agent.sh"]"#, "valid"),
        (
            r#"["bash", "${PHUX_PLUGIN_ROOT}/../w.sh"]"#,
            "template.shell",
        ),
        (
            r#"["claude", "${PHUX_AGENT_SESSION_ID}"]"#,
            "template.command_placeholder",
        ),
        (r#"[]"#, "template.command"),
        (r#"["  ", "x"]"#, "template.command"),
    ] {
        let text = CLAUDE.replace(WRAPPER, &format!("command = {command}"));
        assert_eq!(verdict(&text), want, "{command}");
    }
    // Not restorable: the program is not judged.
    let plain = CLAUDE
        .replace(
            r#"resume_args = ["--resume", "${PHUX_AGENT_SESSION_ID}"]"#,
            "",
        )
        .replace(
            r#"fresh_args = ["--session-id", "${PHUX_AGENT_SESSION_ID}"]"#,
            "",
        )
        .replace(WRAPPER, r#"command = ["sh", "-c", "true"]"#);
    assert_eq!(verdict(&plain), "valid");
}

#[test]
fn ids_types_and_toml() {
    assert_eq!(verdict("display_name = \"x\"\n"), "template.id");
    assert_eq!(verdict("id = \" padded\"\n"), "template.id");
    assert_eq!(
        verdict(&format!("id = \"{}\"\n", "i".repeat(121))),
        "template.id"
    );
    assert_eq!(verdict("id = 3\n"), "template.type");
    assert_eq!(verdict("id = \"a\"\nid = \"b\"\n"), "template.toml");
    assert_eq!(verdict("id = \"a\"\nlaunch = \"x\"\n"), "template.type");
    assert_eq!(verdict("id = \"detect-only\"\n"), "valid");
    let req = CLAUDE.replace(
        r#"required_executables = ["claude"]"#,
        r#"required_executables = ["bin/claude"]"#,
    );
    assert_eq!(verdict(&req), "template.required_executables");
    let wd = CLAUDE.replace("\"workspace\"", "\"home\"");
    assert_eq!(verdict(&wd), "template.working_directory");
    let mut big = CLAUDE.to_string();
    big.push_str(&format!("# {}\n", "x".repeat(MAX_TEMPLATE_BYTES)));
    assert_eq!(verdict(&big), "template.size");
    assert_eq!(
        parse(b"id = \"\xff\"").unwrap_err().rule,
        TemplateRule::Toml
    );
}
