//! `vxcert init` and `vxcert try` as an implementer meets them: the packer's
//! skeleton, filled with the reference's commands, is tried and every command does
//! what the suite expects; the reference's whole profile tries clean; a profile
//! naming a missing program is told which.

mod common;

use std::process::Command;

fn vxcert(args: &[&str]) -> (i32, String, String) {
    let out = Command::new(common::vxcert())
        .args(args)
        .output()
        .expect("run vxcert");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// Each line after "the reference: K = V" that sets K gets V.
fn fill_with_reference(text: &str) -> String {
    let mut out = Vec::new();
    let mut pending: Option<(String, String)> = None;
    for line in text.lines() {
        if let Some(r) = line.strip_prefix("#   the reference: ") {
            let (k, v) = r.split_once(" = ").expect("key = value");
            pending = Some((k.to_string(), v.to_string()));
            out.push(line.to_string());
            continue;
        }
        match pending.take() {
            Some((k, v)) if line.starts_with(&format!("{k} = ")) => out.push(format!("{k} = {v}")),
            _ => out.push(line.to_string()),
        }
    }
    out.join("\n") + "\n"
}

#[test]
fn an_init_skeleton_filled_with_the_references_commands_tries_clean() {
    common::ensure_reference(&[]);
    let dir = tempfile::tempdir().unwrap();
    let skeleton = dir.path().join("packer.toml");
    let (code, _, err) = vxcert(&[
        "init",
        "--contract",
        "session-persist",
        "--part",
        "packer",
        "--output",
        skeleton.to_str().unwrap(),
    ]);
    assert_eq!(code, 0, "{err}");
    let text = std::fs::read_to_string(&skeleton).unwrap();
    // Unfilled, try names the placeholder program and fails.
    let (code, out, _) = vxcert(&["try", "--profile", skeleton.to_str().unwrap()]);
    assert_eq!(code, 1, "{out}");
    assert!(
        out.contains("PROBLEM: cannot start <your-program>"),
        "{out}"
    );
    // A second init onto the same file is refused, naming it.
    let (code, _, err) = vxcert(&[
        "init",
        "--contract",
        "session-persist",
        "--output",
        skeleton.to_str().unwrap(),
    ]);
    assert_eq!(code, 2);
    assert!(err.contains("the file exists"), "{err}");
    let filled = dir.path().join("filled.toml");
    std::fs::write(&filled, fill_with_reference(&text)).unwrap();
    let bin_dir = common::bin_dir();
    let (code, out, err) = vxcert(&[
        "try",
        "--profile",
        filled.to_str().unwrap(),
        "--bin-dir",
        bin_dir.to_str().unwrap(),
    ]);
    assert_eq!(code, 0, "{out}{err}");
    for key in [
        "[persist] pack",
        "[persist] unpack",
        "[persist] has_session",
    ] {
        assert!(out.contains(&format!("-- {key}")), "{key}: {out}");
    }
    assert!(
        !out.contains("blob_check"),
        "only the packer is claimed: {out}"
    );
    assert!(out.contains("files created: blob.tar"), "{out}");
    assert!(out.contains("ok: printed true"), "{out}");
}

#[test]
fn the_references_profile_tries_clean_and_shows_every_command() {
    common::ensure_reference(&[]);
    let profile =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../profiles/reference.toml");
    let (code, out, err) = vxcert(&["try", "--profile", profile.to_str().unwrap()]);
    assert_eq!(code, 0, "{out}{err}");
    for key in [
        "-- serve",
        "-- version",
        "-- [agent_restore] archive_check",
        "-- [single_writer] key_check",
        "-- [single_writer] resume_plan",
        "-- [single_writer] broker",
        "-- [single_writer] master_create",
        "-- [persist] pack",
        "-- [persist] blob_check",
        "-- [persist] store_adapter",
        "-- [persist] drive",
    ] {
        assert!(out.contains(key), "{key} missing from:\n{out}");
    }
    assert!(!out.contains("PROBLEM"), "{out}");
    assert_eq!(
        out.matches("   $ ").count(),
        out.matches("   ok: ").count() - 1,
        "every command but the untried client shows its argv:\n{out}"
    );
}

#[test]
fn a_missing_program_is_named() {
    let dir = tempfile::tempdir().unwrap();
    let profile = dir.path().join("p.toml");
    let missing = dir.path().join("no-such-packer");
    std::fs::write(
        &profile,
        format!(
            "name = \"x\"\ncontracts = [\"session-persist\"]\n[persist]\nparts = [\"checker\"]\n\
             blob_check = [\"{}\", \"{{file}}\"]\n",
            missing.display()
        ),
    )
    .unwrap();
    let (code, out, _) = vxcert(&["try", "--profile", profile.to_str().unwrap()]);
    assert_eq!(code, 1, "{out}");
    assert!(
        out.contains(&format!(
            "PROBLEM: cannot start {}: No such file or directory",
            missing.display()
        )),
        "{out}"
    );
    let (code, _, err) = vxcert(&[
        "try",
        "--profile",
        profile.to_str().unwrap(),
        "--contract",
        "recovery",
    ]);
    assert_eq!(code, 2);
    assert!(err.contains("--contract recovery: the profile"), "{err}");
}
