//! Before any scenario: everything the run needs exists. Each missing piece is one
//! line naming the path and what to do; the run then stops with exit 2.

use super::clauses::{self, Clause};
use super::error_codes;
use crate::contract::Contract;
use crate::drivers::sandbox::PLACEHOLDERS;
use crate::profile::Profile;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

pub struct Inputs<'a> {
    pub profile: &'a Profile,
    pub bin_dir: &'a Path,
    pub suite_root: &'a Path,
    pub contracts: &'a [Contract],
}

/// What preflight found, kept for the whole run.
pub struct Checked {
    pub registries: Vec<(Contract, Vec<Clause>)>,
    pub faketime: Option<String>,
    pub root: bool,
}

/// The build command that puts the kit's reference and injector next to vxcert.
const BUILD_REFERENCE: &str = "cargo build --workspace";

pub fn check(i: &Inputs<'_>) -> Result<Checked, String> {
    let mut problems = Vec::new();
    let mut registries = Vec::new();
    for &c in i.contracts {
        let dir = i.suite_root.join(c.suite_dir());
        if !dir.is_dir() {
            problems.push(format!(
                "the {c} suite directory {} does not exist (pass --features DIR)",
                dir.display()
            ));
            continue;
        }
        match clauses::load(&clauses::registry_path(&dir), c) {
            Ok(reg) => {
                match clauses::check(&reg, &dir, c).and_then(|()| clauses::check_parts(&dir, c)) {
                    Ok(()) => registries.push((c, reg)),
                    Err(p) => problems.push(format!(
                        "the {c} clause registry is out of step with its features:\n  {}",
                        p.join("\n  ")
                    )),
                }
            }
            Err(e) => problems.push(e),
        }
        let errors = error_codes::table_path(&dir);
        if errors.exists() {
            match error_codes::load(&errors).map(|t| error_codes::check(&t, &dir)) {
                Ok(Ok(())) => {}
                Ok(Err(p)) => problems.push(format!(
                    "the {c} suite does not produce every error of its RFC:\n  {}",
                    p.join("\n  ")
                )),
                Err(e) => problems.push(e),
            }
        }
    }
    // Every program a chosen contract's templates name; one line per missing
    // program, naming every profile key that uses it.
    let mut wanted: Vec<(String, String)> = Vec::new();
    let p = i.profile;
    if i.contracts.contains(&Contract::Recovery) {
        for (what, template) in [
            ("serve", &p.serve),
            ("serve_on_demand", &p.serve_on_demand),
            ("cli", &p.cli),
            ("skill", &p.skill),
            ("version", &p.version),
        ] {
            if let Some(program) = template.first() {
                wanted.push((what.to_string(), program.clone()));
            }
        }
        match p.fault_preload.as_deref() {
            Some(fault) => {
                if let Some(path) = concrete(fault, i.bin_dir) {
                    if !path.is_file() {
                        problems.push(format!(
                            "fault_preload: {} does not exist{}",
                            path.display(),
                            fix_hint(fault)
                        ));
                    }
                }
            }
            None => {
                if let Err(e) = crate::assets::fault_preload() {
                    problems.push(format!("fault_preload (the copy inside vxcert): {e}"));
                }
            }
        }
    }
    for &c in i.contracts {
        let table = match c {
            Contract::Recovery => continue,
            Contract::AgentRestore => crate::agent_restore::check_profile(p),
            Contract::SingleWriter => crate::single_writer::check_profile(p),
            Contract::SessionPersist => crate::session_persist::check_profile(p),
        };
        match table {
            Ok(()) => wanted.extend(p.table_programs(c)),
            Err(e) => problems.push(e),
        }
    }
    let mut programs: Vec<(String, Vec<String>)> = Vec::new();
    for (what, program) in wanted {
        match programs.iter_mut().find(|(prog, _)| *prog == program) {
            Some((_, keys)) => keys.push(what),
            None => programs.push((program, vec![what])),
        }
    }
    // The missing programs first: a missing reference is the first line.
    let mut missing: Vec<String> = programs
        .iter()
        .filter_map(|(program, keys)| executable_problem(&keys.join(", "), program, i.bin_dir))
        .collect();
    missing.append(&mut problems);
    problems = missing;
    if problems.is_empty() {
        Ok(Checked {
            registries,
            faketime: crate::drivers::clock::faketime_preload(
                i.profile.faketime_preload.as_deref(),
            ),
            root: nix::unistd::geteuid().is_root(),
        })
    } else {
        Err(problems.join("\nvxcert run: "))
    }
}

/// The path a template word names, when only `{bin_dir}` (or nothing) is in it:
/// words with per-scenario placeholders cannot be checked before a scenario.
fn concrete(word: &str, bin_dir: &Path) -> Option<PathBuf> {
    let expanded = word.replace("{bin_dir}", &bin_dir.to_string_lossy());
    (!PLACEHOLDERS.iter().any(|p| expanded.contains(p))).then(|| PathBuf::from(expanded))
}

fn fix_hint(template: &str) -> String {
    if template.contains("{bin_dir}") {
        format!(" (the kit's own programs: run `{BUILD_REFERENCE}` first, or pass --bin-dir)")
    } else {
        String::new()
    }
}

/// Why `program` (a profile command's first word) cannot be run, if it cannot.
fn executable_problem(what: &str, program: &str, bin_dir: &Path) -> Option<String> {
    let path = concrete(program, bin_dir)?;
    let found = if path.components().count() > 1 {
        Some(path.clone())
    } else {
        std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default())
            .map(|d| d.join(&path))
            .find(|p| p.is_file())
    };
    let problem = match found {
        None => "does not exist",
        Some(p) => match std::fs::metadata(&p) {
            Err(_) => "does not exist",
            Ok(m) if !m.is_file() => "is not a file",
            Ok(m) if m.permissions().mode() & 0o111 == 0 => "is not executable",
            Ok(_) => return None,
        },
    };
    Some(format!(
        "{what}: {} {problem}{}",
        path.display(),
        fix_hint(program)
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_missing_program_names_its_path_and_the_fix() {
        let dir = tempfile::tempdir().unwrap();
        let p = executable_problem("serve", "{bin_dir}/vxref", dir.path()).unwrap();
        assert!(
            p.contains(&dir.path().join("vxref").display().to_string()),
            "{p}"
        );
        assert!(p.contains("cargo build --workspace"), "{p}");
        let plain = dir.path().join("prog");
        std::fs::write(&plain, "").unwrap();
        let p = executable_problem("cli", plain.to_str().unwrap(), dir.path()).unwrap();
        assert!(p.ends_with("is not executable"), "{p}");
        std::fs::set_permissions(&plain, std::fs::Permissions::from_mode(0o755)).unwrap();
        assert_eq!(
            executable_problem("cli", plain.to_str().unwrap(), dir.path()),
            None
        );
        assert_eq!(executable_problem("cli", "sh", dir.path()), None);
        assert_eq!(executable_problem("cli", "{socket}", dir.path()), None);
    }
}
