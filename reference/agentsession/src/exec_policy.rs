//! Which programs may receive a native identity (ADR-0068 point 2: "templates that
//! position identity as executable or evaluator source are rejected; a fixed
//! plugin-owned interpreter script remains valid").
//!
//! A list of names cannot be complete; it is the kit's fail-closed floor. Names are
//! compared on the basename, ASCII-lowercased, without `.exe` and without a trailing
//! version (`python3.12` is `python`, `bash5` is `bash`), so versioned and
//! Windows spellings cannot slip past it.

use crate::limits::PLUGIN_ROOT_PLACEHOLDER;

/// Shells: valid only with `argv[1]` a fixed plugin-owned script.
pub const SHELLS: &[&str] = &[
    "sh",
    "bash",
    "dash",
    "zsh",
    "ksh",
    "mksh",
    "pdksh",
    "oksh",
    "loksh",
    "yash",
    "ash",
    "hush",
    "fish",
    "csh",
    "tcsh",
    "rc",
    "es",
    "nu",
    "elvish",
    "xonsh",
    "pwsh",
    "powershell",
    "cmd",
];

/// Interpreters and program runners: an argument of theirs can be code or the
/// program to run, so they never launch a natively restorable template.
pub const RUNNERS: &[&str] = &[
    // Interpreters (the peer's list, then the kit's additions).
    "python",
    "node",
    "deno",
    "bun",
    "ruby",
    "perl",
    "lua",
    "php",
    "osascript",
    "env",
    "busybox",
    "pypy",
    "nodejs",
    "jruby",
    "luajit",
    "toybox",
    "tclsh",
    "wish",
    "expect",
    "awk",
    "gawk",
    "mawk",
    "nawk",
    "julia",
    "rscript",
    "java",
    "jshell",
    "groovy",
    "scala",
    "kotlin",
    "dotnet",
    "swift",
    "guile",
    "racket",
    "sbcl",
    "clisp",
    "ocaml",
    "erl",
    "elixir",
    "iex",
    "emacs",
    "vim",
    "nvim",
    "ex",
    "sed",
    "jq",
    "make",
    "m4",
    // Programs that run their arguments as a program.
    "exec",
    "command",
    "builtin",
    "nice",
    "nohup",
    "timeout",
    "stdbuf",
    "setsid",
    "sudo",
    "doas",
    "su",
    "runuser",
    "chroot",
    "time",
    "xargs",
    "strace",
    "ltrace",
    "gdb",
    "watch",
    "flock",
    "ionice",
    "taskset",
    "chrt",
    "unshare",
    "nsenter",
    "script",
    "sg",
    "newgrp",
    "npx",
    "bunx",
    "pnpx",
    "uvx",
    "pipx",
    "systemd-run",
    "firejail",
    "bwrap",
    "proot",
];

/// What a launch program is, for the identity rules.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ProgramClass {
    Shell,
    Runner,
    Other,
}

/// The basename as the lists compare it.
pub fn normalized_program(program: &str) -> String {
    let base = program.rsplit(['/', '\\']).next().unwrap_or(program);
    let mut name = base.to_ascii_lowercase();
    if let Some(stem) = name.strip_suffix(".exe") {
        name.truncate(stem.len());
    }
    let kept = name
        .trim_end_matches(|c: char| c.is_ascii_digit() || c == '.')
        .len();
    // A name that is all digits and dots keeps itself (it is no list entry anyway).
    if kept > 0 {
        name.truncate(kept);
    }
    name
}

pub fn classify(program: &str) -> ProgramClass {
    let name = normalized_program(program);
    if SHELLS.contains(&name.as_str()) {
        ProgramClass::Shell
    } else if RUNNERS.contains(&name.as_str()) {
        ProgramClass::Runner
    } else {
        ProgramClass::Other
    }
}

/// `${PHUX_PLUGIN_ROOT}/<relative>` where the relative path has only plain
/// segments: no empty, `.` or `..` segment, no backslash, no `$`, no leading `-`.
pub fn is_fixed_plugin_script(arg: &str) -> bool {
    let Some(relative) = arg
        .strip_prefix(PLUGIN_ROOT_PLACEHOLDER)
        .and_then(|rest| rest.strip_prefix('/'))
    else {
        return false;
    };
    !relative.is_empty()
        && !relative.starts_with('-')
        && !relative.contains(['\\', '$'])
        && relative
            .split('/')
            .all(|seg| !seg.is_empty() && seg != "." && seg != "..")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn classifies_versioned_and_pathed_names() {
        assert_eq!(classify("/usr/bin/python3.12"), ProgramClass::Runner);
        assert_eq!(classify("NODE.EXE"), ProgramClass::Runner);
        assert_eq!(classify("/usr/bin/env"), ProgramClass::Runner);
        assert_eq!(classify("bash5"), ProgramClass::Shell);
        assert_eq!(classify("C:\\Windows\\cmd.exe"), ProgramClass::Shell);
        assert_eq!(classify("claude"), ProgramClass::Other);
        assert_eq!(
            classify("${PHUX_PLUGIN_ROOT}/scripts/agent.sh"),
            ProgramClass::Other
        );
        assert_eq!(classify("2to3"), ProgramClass::Other);
    }

    #[test]
    fn fixed_scripts() {
        assert!(is_fixed_plugin_script("${PHUX_PLUGIN_ROOT}/w.sh"));
        assert!(is_fixed_plugin_script(
            "${PHUX_PLUGIN_ROOT}/trusted/wrapper.sh"
        ));
        for bad in [
            "${PHUX_PLUGIN_ROOT}",
            "${PHUX_PLUGIN_ROOT}/",
            "${PHUX_PLUGIN_ROOT}//etc/x",
            "${PHUX_PLUGIN_ROOT}/../x",
            "${PHUX_PLUGIN_ROOT}/a/./x",
            "${PHUX_PLUGIN_ROOT}/-c",
            "${PHUX_PLUGIN_ROOT}/${PHUX_AGENT_SESSION_ID}",
            "${PHUX_PLUGIN_ROOT}x/w.sh",
            "-xc",
            "/plugin/w.sh",
        ] {
            assert!(!is_fixed_plugin_script(bad), "{bad}");
        }
    }
}
