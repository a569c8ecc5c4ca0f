//! `vxcert init --contract NAME [--part P]…`: a commented profile skeleton for the
//! parts an implementation claims. The keys it asks for are the ones the contract's
//! own profile check requires (found by asking that check, with the reference's
//! table less one key at a time), each with its meaning and placeholders from
//! `profile --explain` and the reference's value as an example.

use crate::contract::Contract;
use crate::profile::Profile;
use crate::profile_explain::{Key, KEYS, SANDBOX};
use std::path::{Path, PathBuf};

#[derive(clap::Args, Debug)]
pub struct InitArgs {
    /// The contract to claim: recovery, agent-restore, single-writer, session-persist.
    #[arg(long, value_name = "NAME")]
    pub contract: String,
    /// A part of the contract to claim (repeatable; default: every part).
    #[arg(long = "part", value_name = "P")]
    pub parts: Vec<String>,
    /// Write the skeleton here instead of stdout (an existing file is not replaced).
    #[arg(long, value_name = "FILE")]
    pub output: Option<PathBuf>,
}

/// Why no skeleton was written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum InitError {
    UnknownContract(String),
    UnknownPart {
        contract: Contract,
        part: String,
    },
    /// The recovery contract has no parts (its optional features play that role).
    NoParts(String),
    /// The packed reference profile does not satisfy its own contract check (a kit bug).
    Reference(String),
    Exists(PathBuf),
    Write {
        path: PathBuf,
        error: String,
    },
}

impl std::fmt::Display for InitError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            InitError::UnknownContract(n) => write!(
                f,
                "--contract {n:?}: no such contract (known: {})",
                Contract::names().join(", ")
            ),
            InitError::UnknownPart { contract, part } => write!(
                f,
                "--part {part:?}: not a part of the {contract} contract (its parts: {})",
                contract.parts().join(", ")
            ),
            InitError::NoParts(p) => write!(
                f,
                "--part {p:?}: the recovery contract has no parts; leave --part out (its \
                 optional features are claimed with `features = [...]`)"
            ),
            InitError::Reference(e) => write!(f, "the kit's reference profile: {e}"),
            InitError::Exists(p) => write!(
                f,
                "--output {}: the file exists; remove it or name another",
                p.display()
            ),
            InitError::Write { path, error } => {
                write!(f, "--output {}: {error}", path.display())
            }
        }
    }
}

impl std::error::Error for InitError {}

pub fn run(args: &InitArgs) -> i32 {
    let result = Contract::from_name(&args.contract)
        .ok_or_else(|| InitError::UnknownContract(args.contract.clone()))
        .and_then(|c| skeleton(c, &args.parts))
        .and_then(|text| match &args.output {
            None => {
                print!("{text}");
                Ok(())
            }
            Some(path) => write_new(path, &text),
        });
    match result {
        Ok(()) => 0,
        Err(e) => {
            eprintln!("vxcert init: {e}");
            2
        }
    }
}

fn write_new(path: &Path, text: &str) -> Result<(), InitError> {
    use std::io::Write;
    let mut f = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(path)
        .map_err(|e| match e.kind() {
            std::io::ErrorKind::AlreadyExists => InitError::Exists(path.to_path_buf()),
            _ => InitError::Write {
                path: path.to_path_buf(),
                error: e.to_string(),
            },
        })?;
    f.write_all(text.as_bytes()).map_err(|e| InitError::Write {
        path: path.to_path_buf(),
        error: e.to_string(),
    })
}

/// The reference profile packed into vxcert, as a TOML table.
fn reference() -> Result<toml::Table, InitError> {
    let bytes = crate::assets::packed("profiles/reference.toml")
        .ok_or_else(|| InitError::Reference("not packed into vxcert".into()))?;
    toml::from_str(&String::from_utf8_lossy(bytes)).map_err(|e| InitError::Reference(e.to_string()))
}

/// Whether a profile claiming `parts` and `features` of `c` with this table passes
/// the contract's own check.
fn accepted(c: Contract, parts: &[String], features: &[String], table: &toml::Table) -> bool {
    let mut t = table.clone();
    t.insert("parts".into(), strings(parts));
    let mut p = toml::Table::new();
    p.insert("name".into(), "init-probe".into());
    p.insert("contracts".into(), strings(&[c.name().to_string()]));
    p.insert("features".into(), strings(features));
    p.insert(c.profile_table().into(), toml::Value::Table(t));
    let Ok(text) = toml::to_string(&p) else {
        return false;
    };
    Profile::parse(&text, Path::new("init-probe"))
        .and_then(|profile| match c {
            Contract::Recovery => Ok(()),
            Contract::AgentRestore => crate::agent_restore::check_profile(&profile),
            Contract::SingleWriter => crate::single_writer::check_profile(&profile),
            Contract::SessionPersist => crate::session_persist::check_profile(&profile),
        })
        .is_ok()
}

fn strings(v: &[String]) -> toml::Value {
    toml::Value::Array(v.iter().cloned().map(toml::Value::String).collect())
}

/// The keys of `table` without which the check refuses the profile.
fn required(
    c: Contract,
    parts: &[String],
    features: &[String],
    table: &toml::Table,
) -> Vec<String> {
    let mut keys: Vec<String> = table
        .keys()
        .filter(|k| {
            let mut less = table.clone();
            less.remove(*k);
            !accepted(c, parts, features, &less)
        })
        .cloned()
        .collect();
    // In `profile --explain`'s order (the contract's own), not the table's.
    keys.sort_by_key(|k| {
        KEYS.iter()
            .position(|x| x.table == c.profile_table() && x.key == k)
            .unwrap_or(usize::MAX)
    });
    keys
}

/// One key's lines: its meaning, placeholders, the reference's value, and either the
/// key to fill in or (`optional`) the key commented out.
fn key_lines(table: &str, key: &str, reference: Option<&toml::Value>, live: bool) -> String {
    let explained: Option<&Key> = KEYS.iter().find(|k| k.table == table && k.key == key);
    let mut out = String::new();
    if let Some(k) = explained {
        out += &format!("# {}\n", k.meaning);
        if !k.extra.is_empty() {
            out += &format!("#   its own placeholders: {}\n", k.extra.join(" "));
        }
    }
    if let Some(v) = reference {
        out += &format!("#   the reference: {key} = {v}\n");
    }
    let blank = match reference {
        Some(toml::Value::Array(words)) if words.iter().all(toml::Value::is_str) => {
            let mut w = vec![toml::Value::String("<your-program>".into())];
            if let Some(k) = explained {
                w.extend(k.extra.iter().map(|p| toml::Value::String((*p).into())));
            }
            toml::Value::Array(w)
        }
        Some(toml::Value::Boolean(_)) => toml::Value::Boolean(false),
        _ => toml::Value::String("<fill in>".into()),
    };
    match (live, reference) {
        (true, _) => out += &format!("{key} = {blank}\n"),
        // Optional: the reference's value, commented out, is the example.
        (false, Some(v)) => {
            let end = out.rfind("#   the reference: ").unwrap_or(out.len());
            out.truncate(end);
            out += &format!("# {key} = {v}\n");
        }
        (false, None) => out += &format!("# {key} = {blank}\n"),
    }
    out
}

/// The commented skeleton of a profile claiming `parts` (all when empty) of `c`.
pub fn skeleton(c: Contract, parts: &[String]) -> Result<String, InitError> {
    if c == Contract::Recovery {
        if let Some(p) = parts.first() {
            return Err(InitError::NoParts(p.clone()));
        }
    }
    for p in parts {
        if !c.parts().contains(&p.as_str()) {
            return Err(InitError::UnknownPart {
                contract: c,
                part: p.clone(),
            });
        }
    }
    let parts: Vec<String> = if parts.is_empty() {
        c.parts().iter().map(|p| p.to_string()).collect()
    } else {
        parts.to_vec()
    };
    let reference = reference()?;
    let ref_features: Vec<String> = reference
        .get("features")
        .and_then(toml::Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(|v| v.as_str().map(String::from))
                .collect()
        })
        .unwrap_or_default();
    // The skill feature goes with a top-level command (recovery's), not a table key.
    let ref_features: Vec<String> = ref_features
        .into_iter()
        .filter(|f| f != crate::profile::SKILL_FEATURE)
        .collect();
    let mut out = format!(
        "# A vxcert profile for the {c} contract ({}){}.\n\
         # Written by `vxcert init`: replace every \"<your-program>\" and \"<fill in>\"; each\n\
         # \"the reference:\" line shows the kit's own implementation's value. Then\n\
         # `vxcert try --profile THIS-FILE` runs each command once and shows what it did,\n\
         # and `vxcert run --profile THIS-FILE --report DIR` certifies.\n\
         # `vxcert profile --explain` lists every key.\n\
         # Every command template may use {SANDBOX}\n\
         # ({{bin_dir}} is the run's --bin-dir), and the placeholders named at each key.\n\n\
         name = \"<your implementation>\"\n\
         implementation = \"<free text: name and version>\"\n\
         contracts = [\"{c}\"]\n",
        c.source(),
        if c.parts().is_empty() {
            String::new()
        } else {
            format!(", parts: {}", parts.join(", "))
        }
    );
    if c == Contract::Recovery {
        for key in ["serve", "cli"] {
            out += &format!("\n{}", key_lines("", key, reference.get(key), true));
        }
        out += "\n# Optional (uncomment what you implement; features go in `features = [...]`):\n";
        out += &format!("# features = {}\n", strings(&ref_features));
        for key in ["serve_on_demand", "skill", "version", "fault_preload"] {
            out += &format!("\n{}", key_lines("", key, reference.get(key), false));
        }
        return Ok(out);
    }
    let tname = c.profile_table();
    let table = reference
        .get(tname)
        .and_then(toml::Value::as_table)
        .cloned()
        .ok_or_else(|| InitError::Reference(format!("no [{tname}] table")))?;
    if !accepted(c, &parts, &ref_features, &table) {
        return Err(InitError::Reference(format!(
            "its [{tname}] table does not pass the {c} check"
        )));
    }
    // A part whose keys all belong to an optional feature means nothing without it:
    // that feature is claimed.
    let mut features: Vec<String> = Vec::new();
    for p in &parts {
        let one = [p.clone()];
        if required(c, &one, &[], &table).is_empty() {
            for f in &ref_features {
                if !required(c, &one, std::slice::from_ref(f), &table).is_empty()
                    && !features.contains(f)
                {
                    features.push(f.clone());
                }
            }
        }
    }
    let live = required(c, &parts, &features, &table);
    let mut by_feature: Vec<(String, Vec<String>)> = Vec::new();
    for f in ref_features.iter().filter(|f| !features.contains(f)) {
        let mut with = features.clone();
        with.push(f.clone());
        let extra: Vec<String> = required(c, &parts, &with, &table)
            .into_iter()
            .filter(|k| !live.contains(k))
            .collect();
        if !extra.is_empty() {
            by_feature.push((f.clone(), extra));
        }
    }
    if !features.is_empty() {
        out += &format!(
            "# The optional features whose rows these parts are:\nfeatures = {}\n",
            strings(&features)
        );
    }
    out += &format!("\n[{tname}]\nparts = {}\n", strings(&parts));
    for key in &live {
        out += &format!("\n{}", key_lines(tname, key, table.get(key), true));
    }
    for (f, keys) in &by_feature {
        out += &format!("\n# Optional feature {f}: add \"{f}\" to `features` and give:\n");
        for key in keys {
            out += &format!("{}\n", key_lines(tname, key, table.get(key), false));
        }
    }
    let shown: Vec<&String> = live
        .iter()
        .chain(by_feature.iter().flat_map(|(_, k)| k))
        .collect();
    let rest: Vec<&Key> = KEYS
        .iter()
        .filter(|k| k.table == tname && !shown.iter().any(|s| *s == k.key))
        .collect();
    if !rest.is_empty() {
        out += "\n# Optional, or read by parts not claimed here (defaults shown where the\n# reference sets them):\n";
        for k in rest {
            let example = table.get(k.key).cloned().or_else(|| kit_default(c, k.key));
            out += &format!("{}\n", key_lines(tname, k.key, example.as_ref(), false));
        }
    }
    if c == Contract::SingleWriter {
        out += &single_writer_pins();
    }
    if c == Contract::SessionPersist {
        out += &persist_pins();
    }
    Ok(out)
}

/// The packer's caps, commented out at the kit's values: the seed asks for caps and
/// leaves their values to the implementer, who declares its own.
fn persist_pins() -> String {
    use crate::session_persist::caps;
    let mut out = format!(
        "\n# The packer's caps: the seed asks for them but not their values; the kit's are\n\
         # shown (absent: the kit's, and a refusal at other sizes is non-strict); declare\n\
         # your own to be judged by them ({}):\n# [persist.pins]\n",
        caps::CLAUSE
    );
    for k in &caps::KEYS {
        out += &format!("# {}\n# {} = {}\n", caps::explain(k), k.key, k.kit);
    }
    out
}

/// The kit's value of an optional key whose default is the kit's choice rather than
/// the reference's (the reference's profile leaves it out), shown as the example.
fn kit_default(c: Contract, key: &str) -> Option<toml::Value> {
    if c != Contract::SingleWriter {
        return None;
    }
    use crate::single_writer::engines;
    match key {
        "known_engines" => Some(toml::Value::Table(
            engines::kit_known()
                .into_iter()
                .map(|(e, class)| (e, toml::Value::String(class)))
                .collect(),
        )),
        "missing_program_engine" => Some(toml::Value::String(engines::kit_missing())),
        _ => None,
    }
}

/// The single-writer pins, commented out at the kit's values: where the seed leaves
/// a choice open, the implementation declares its own.
fn single_writer_pins() -> String {
    let mut out = String::from(
        "# Where the seed leaves a choice open the kit pins one (absent: the kit's value,\n\
         # and a difference is reported non-strict); declare your own to be judged by it:\n\
         # [single_writer.pins]\n",
    );
    for p in crate::single_writer::pins::KEYS {
        out += &format!("# {} ({})\n# {} = {}\n", p.meaning, p.clause, p.key, p.kit);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The packer's skeleton asks for exactly the packer's keys, shows the
    /// reference's values, and once filled with them loads and passes the check.
    #[test]
    fn a_packer_skeleton_filled_with_the_references_commands_loads() {
        let text = skeleton(Contract::SessionPersist, &["packer".into()]).unwrap();
        let live: Vec<&str> = text
            .lines()
            .filter(|l| !l.starts_with('#') && l.contains(" = "))
            .map(|l| l.split(" = ").next().unwrap())
            .collect();
        assert_eq!(
            live,
            [
                "name",
                "implementation",
                "contracts",
                "parts",
                "pack",
                "unpack",
                "has_session"
            ]
        );
        assert!(text.contains("#   the reference: pack = [\"{bin_dir}/vxpersist\", \"pack\""));
        assert!(text.contains(
            "pack = [\"<your-program>\", \"{backend}\", \"{root}\", \"{id}\", \"{file}\"]"
        ));
        let unfilled = Profile::parse(&text, Path::new("skeleton")).unwrap();
        assert!(crate::session_persist::check_profile(&unfilled).is_ok());
        let filled = fill_with_reference(&text);
        assert!(
            !filled
                .lines()
                .any(|l| !l.starts_with('#') && l.contains("<your-program>")),
            "{filled}"
        );
        let p = Profile::parse(&filled, Path::new("filled")).unwrap();
        assert_eq!(p.claimed_parts(Contract::SessionPersist), ["packer"]);
        assert!(crate::session_persist::check_profile(&p).is_ok());
    }

    /// A single-writer skeleton shows the engine keys at the kit's defaults and every
    /// pin at the kit's value, commented out (close_spawn_failed and the caps' "none"
    /// among them), and still loads.
    /// The packer's skeleton shows the caps pins, commented out at the kit's values,
    /// and uncommented they load.
    #[test]
    fn a_packer_skeleton_shows_the_caps_pins() {
        let text = skeleton(Contract::SessionPersist, &["packer".into()]).unwrap();
        for k in &crate::session_persist::caps::KEYS {
            assert!(
                text.contains(&format!("# {} = {}\n", k.key, k.kit)),
                "{}",
                k.key
            );
        }
        let pins: String = crate::session_persist::caps::KEYS
            .iter()
            .map(|k| format!("{} = {}\n", k.key, k.kit))
            .collect();
        let p = crate::profile::Profile::parse(
            &format!(
                "name = \"x\"\ncontracts = [\"session-persist\"]\n[persist]\nparts = [\"packer\"]\n\
                 pack = [\"p\"]\n[persist.pins]\n{pins}"
            ),
            std::path::Path::new("p.toml"),
        )
        .unwrap();
        crate::session_persist::caps::check(&p).unwrap();
    }

    #[test]
    fn a_single_writer_skeleton_shows_the_engine_keys_and_the_pins() {
        let text = skeleton(Contract::SingleWriter, &[]).unwrap();
        for line in [
            "# known_engines = { claude = \"uuid\", gemini = \"uuid\", opencode = \"ses\" }",
            "# missing_program_engine = \"ghost\"",
            "# [single_writer.pins]",
            "# close_spawn_failed = 4502",
            "# key_max_bytes = 96",
        ] {
            assert!(text.lines().any(|l| l == line), "{line:?} in:\n{text}");
        }
        assert!(text.contains("or \"none\""), "{text}");
        Profile::parse(&text, Path::new("skeleton")).unwrap();
    }

    /// Each line after "the reference: K = V" that sets K gets V.
    pub fn fill_with_reference(text: &str) -> String {
        let mut out = Vec::new();
        let mut pending: Option<(String, String)> = None;
        for line in text.lines() {
            if let Some(r) = line.strip_prefix("#   the reference: ") {
                let (k, v) = r.split_once(" = ").unwrap();
                pending = Some((k.to_string(), v.to_string()));
                out.push(line.to_string());
                continue;
            }
            match pending.take() {
                Some((k, v)) if line.starts_with(&format!("{k} = ")) => {
                    out.push(format!("{k} = {v}"))
                }
                _ => out.push(line.to_string()),
            }
        }
        out.join("\n") + "\n"
    }

    /// Every contract and every single part has a skeleton that parses and whose
    /// filled form passes the contract's check; a part of the server kind claims
    /// the feature its rows are.
    #[test]
    fn every_part_of_every_contract_has_a_skeleton() {
        for c in Contract::ALL {
            let mut each: Vec<Vec<String>> =
                c.parts().iter().map(|p| vec![p.to_string()]).collect();
            each.push(Vec::new());
            for parts in each {
                let text = skeleton(c, &parts).unwrap();
                let filled = fill_with_reference(&text);
                let p = Profile::parse(&filled, Path::new("filled"))
                    .unwrap_or_else(|e| panic!("{c} {parts:?}: {e}\n{filled}"));
                let checked = match c {
                    Contract::Recovery => Ok(()),
                    Contract::AgentRestore => crate::agent_restore::check_profile(&p),
                    Contract::SingleWriter => crate::single_writer::check_profile(&p),
                    Contract::SessionPersist => crate::session_persist::check_profile(&p),
                };
                assert!(checked.is_ok(), "{c} {parts:?}: {checked:?}\n{filled}");
                if !parts.is_empty() {
                    assert_eq!(p.claimed_parts(c), parts, "{c}");
                }
            }
        }
        let server = skeleton(Contract::AgentRestore, &["server".into()]).unwrap();
        assert!(server.contains("features = [\"agent-server\"]"), "{server}");
        assert!(
            server.contains("\nworkspace_save = [\"<your-program>\", \"{file}\"]"),
            "{server}"
        );
    }

    #[test]
    fn refusals_name_the_input_and_the_fix() {
        let e = skeleton(Contract::SessionPersist, &["broker".into()]).unwrap_err();
        assert_eq!(
            e.to_string(),
            "--part \"broker\": not a part of the session-persist contract (its parts: packer, checker, store, runtime)"
        );
        let e = skeleton(Contract::Recovery, &["x".into()]).unwrap_err();
        assert!(e.to_string().contains("leave --part out"), "{e}");
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("p.toml");
        std::fs::write(&f, "").unwrap();
        assert_eq!(write_new(&f, "x"), Err(InitError::Exists(f.clone())));
    }
}
