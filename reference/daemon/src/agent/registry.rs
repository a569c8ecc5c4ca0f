//! The plugin registry: `<plugins>/<dir>/plugin.toml` (its `id`) and
//! `<dir>/integrations/<id>.toml`, read with vx-agentsession's template reader. A
//! plugin is disabled while `<dir>/disabled` exists. A file that cannot be read or
//! is refused is a problem (its path under the plugins directory, the code and the
//! rule, never content) and contributes nothing: resolving through it then fails
//! closed. Loaded off the reactor (at start, and by `config.reload` on the config
//! worker), then swapped in whole.

use super::limits::{MAX_INTEGRATIONS_PER_PLUGIN, MAX_PLUGINS, MAX_PLUGIN_MANIFEST_BYTES};
use crate::errors::{ApiError, ApiResult, ErrorCode};
use crate::negative::{self, Defect};
use serde_json::{json, Value};
use std::io::Read as _;
use std::path::{Path, PathBuf};
use vx_agentsession::check::FILE_IO_CODE;
use vx_agentsession::rules::TEMPLATE_CODE;
use vx_agentsession::template::Template;

/// One integration of one plugin.
#[derive(Debug, Clone, PartialEq)]
pub struct Entry {
    pub plugin_id: String,
    /// The plugin's directory, substituted for `${PHUX_PLUGIN_ROOT}`.
    pub plugin_root: String,
    pub enabled: bool,
    pub template: Template,
}

/// A file the registry could not use.
#[derive(Debug, Clone, PartialEq)]
pub struct Problem {
    /// Relative to the plugins directory.
    pub file: String,
    pub code: &'static str,
    pub rule: &'static str,
}

#[derive(Debug, Clone, Default, PartialEq)]
pub struct Integrations {
    pub entries: Vec<Entry>,
    pub problems: Vec<Problem>,
}

/// `$XDG_CONFIG_HOME/venomx/plugins`: beside the config file.
pub fn plugins_dir(config_path: &Path) -> Option<PathBuf> {
    config_path.parent().map(|d| d.join("plugins"))
}

fn read_bounded(path: &Path, limit: u64) -> std::io::Result<Vec<u8>> {
    let mut bytes = Vec::new();
    std::fs::File::open(path)?
        .take(limit)
        .read_to_end(&mut bytes)?;
    Ok(bytes)
}

fn sorted_entries(dir: &Path, cap: usize) -> std::io::Result<Vec<PathBuf>> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir)? {
        out.push(entry?.path());
        if out.len() > cap * 4 {
            break;
        }
    }
    out.sort();
    out.truncate(cap);
    Ok(out)
}

fn file_name(path: &Path) -> String {
    path.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default()
}

/// The plugin's id from `plugin.toml` (`id = "…"`, the record's owner-id rules).
fn plugin_id(manifest: &Path) -> Result<String, (&'static str, &'static str)> {
    let bytes = read_bounded(manifest, MAX_PLUGIN_MANIFEST_BYTES + 1)
        .map_err(|_| (FILE_IO_CODE, "file.io"))?;
    if bytes.len() as u64 > MAX_PLUGIN_MANIFEST_BYTES {
        return Err((TEMPLATE_CODE, "plugin.size"));
    }
    let table: toml::Table = std::str::from_utf8(&bytes)
        .ok()
        .and_then(|t| toml::from_str(t).ok())
        .ok_or((TEMPLATE_CODE, "plugin.toml"))?;
    let id = table
        .get("id")
        .and_then(toml::Value::as_str)
        .ok_or((TEMPLATE_CODE, "plugin.id"))?;
    vx_agentsession::record::validate_owner_id(id).map_err(|_| (TEMPLATE_CODE, "plugin.id"))?;
    Ok(id.to_string())
}

fn load_template(path: &Path) -> Result<Template, (&'static str, &'static str)> {
    let limit = vx_agentsession::check::TEMPLATE_READ_LIMIT;
    let bytes = read_bounded(path, limit).map_err(|_| (FILE_IO_CODE, "file.io"))?;
    let template = vx_agentsession::template::parse(&bytes).map_err(|e| (e.code(), e.rule.id()))?;
    // The file is named by the id it declares: a renamed file is not the integration.
    if path.file_stem().map(|s| s.to_string_lossy()) != Some(template.id.as_str().into()) {
        return Err((TEMPLATE_CODE, "registry.file_name"));
    }
    Ok(template)
}

/// Reads every plugin under `dir`; a missing directory is no plugins.
pub fn load(dir: &Path) -> Integrations {
    let mut out = Integrations::default();
    let plugins = match sorted_entries(dir, MAX_PLUGINS) {
        Ok(p) => p,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return out,
        Err(_) => {
            out.problems.push(Problem {
                file: ".".into(),
                code: FILE_IO_CODE,
                rule: "file.io",
            });
            return out;
        }
    };
    for root in plugins.into_iter().filter(|p| p.is_dir()) {
        let name = file_name(&root);
        let id = match plugin_id(&root.join("plugin.toml")) {
            Ok(id) => id,
            Err((code, rule)) => {
                out.problems.push(Problem {
                    file: format!("{name}/plugin.toml"),
                    code,
                    rule,
                });
                continue;
            }
        };
        let enabled = !root.join("disabled").exists();
        let files = match sorted_entries(&root.join("integrations"), MAX_INTEGRATIONS_PER_PLUGIN) {
            Ok(f) => f,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Vec::new(),
            Err(_) => {
                out.problems.push(Problem {
                    file: format!("{name}/integrations"),
                    code: FILE_IO_CODE,
                    rule: "file.io",
                });
                continue;
            }
        };
        for file in files
            .into_iter()
            .filter(|f| f.extension().is_some_and(|e| e == "toml"))
        {
            match load_template(&file) {
                Ok(template) => out.entries.push(Entry {
                    plugin_id: id.clone(),
                    plugin_root: root.to_string_lossy().into_owned(),
                    enabled,
                    template,
                }),
                Err((code, rule)) => out.problems.push(Problem {
                    file: format!("{name}/integrations/{}", file_name(&file)),
                    code,
                    rule,
                }),
            }
        }
    }
    out
}

impl Integrations {
    /// `integration.list`'s result.
    pub fn to_json(&self) -> Value {
        let integrations: Vec<Value> = self
            .entries
            .iter()
            .map(|e| {
                json!({
                    "plugin_id": e.plugin_id,
                    "integration_id": e.template.id,
                    "enabled": e.enabled,
                    "restorable": e.template.restorable(),
                    "fresh_identity": e.template.fresh_identity(),
                    // Where a launching client finds a caller-supplied id (§3).
                    "native_env": e.template.session_identity.as_ref().map(|i| &i.native_env),
                })
            })
            .collect();
        let problems: Vec<Value> = self
            .problems
            .iter()
            .map(|p| json!({"file": p.file, "code": p.code, "rule": p.rule}))
            .collect();
        json!({"integrations": integrations, "problems": problems})
    }

    /// The one enabled owner of `integration`, in the order: missing,
    /// only disabled, more than one enabled owner, not the expected owner.
    pub fn resolve(&self, integration: &str, expect_plugin_id: Option<&str>) -> ApiResult<&Entry> {
        let mut owners = self
            .entries
            .iter()
            .filter(|e| e.template.id == integration)
            .peekable();
        if owners.peek().is_none() {
            return Err(ApiError::code(ErrorCode::IntegrationNotFound));
        }
        // The negative controls' owner mistakes (crate::negative), never by default.
        if let Some(defective) = self.defective_resolve(integration, expect_plugin_id) {
            return defective;
        }
        let enabled: Vec<&Entry> = owners.filter(|e| e.enabled).collect();
        let entry = match enabled.as_slice() {
            [] => return Err(ApiError::code(ErrorCode::IntegrationDisabled)),
            [one] => *one,
            _ => return Err(ApiError::code(ErrorCode::IntegrationAmbiguous)),
        };
        if expect_plugin_id.is_some_and(|p| p != entry.plugin_id) {
            return Err(ApiError::code(ErrorCode::IntegrationOwner));
        }
        Ok(entry)
    }

    /// [`Integrations::resolve`] with a negative control's owner mistake (disabled
    /// owners kept, the first of several taken, the expected owner ignored); `None`
    /// when no such defect is active. Kept apart so the resolution above stays the
    /// text the mutant battery edits.
    fn defective_resolve(
        &self,
        integration: &str,
        expect_plugin_id: Option<&str>,
    ) -> Option<ApiResult<&Entry>> {
        let (any_owner, first_owner, ignore_owner) = (
            negative::active(Defect::LaunchDisabledOwnerUsed),
            negative::active(Defect::LaunchAmbiguousTakesFirst),
            negative::active(Defect::LaunchExpectedOwnerIgnored),
        );
        if !(any_owner || first_owner || ignore_owner) {
            return None;
        }
        let owners: Vec<&Entry> = self
            .entries
            .iter()
            .filter(|e| e.template.id == integration && (e.enabled || any_owner))
            .collect();
        let entry = match owners.as_slice() {
            [] if self.entries.iter().any(|e| e.template.id == integration) => {
                return Some(Err(ApiError::code(ErrorCode::IntegrationDisabled)))
            }
            [] => return Some(Err(ApiError::code(ErrorCode::IntegrationNotFound))),
            [one] => *one,
            [first, ..] if first_owner => *first,
            _ => return Some(Err(ApiError::code(ErrorCode::IntegrationAmbiguous))),
        };
        if expect_plugin_id.is_some_and(|p| p != entry.plugin_id) && !ignore_owner {
            return Some(Err(ApiError::code(ErrorCode::IntegrationOwner)));
        }
        Some(Ok(entry))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const TEMPLATE: &str = "id = \"stub\"\n[launch]\ncommand = [\"vxstub\", \"sleep\"]\n";

    fn plugin(dir: &Path, name: &str, id: &str, disabled: bool) {
        let root = dir.join(name);
        std::fs::create_dir_all(root.join("integrations")).unwrap();
        std::fs::write(root.join("plugin.toml"), format!("id = \"{id}\"\n")).unwrap();
        std::fs::write(root.join("integrations/stub.toml"), TEMPLATE).unwrap();
        if disabled {
            std::fs::write(root.join("disabled"), "").unwrap();
        }
    }

    #[test]
    fn resolution_fails_closed_in_order() {
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(
            load(dir.path()).resolve("stub", None).unwrap_err().code,
            ErrorCode::IntegrationNotFound
        );
        plugin(dir.path(), "a", "alpha", true);
        let r = load(dir.path());
        assert_eq!(
            r.resolve("stub", None).unwrap_err().code,
            ErrorCode::IntegrationDisabled
        );
        plugin(dir.path(), "b", "beta", false);
        let r = load(dir.path());
        assert_eq!(r.resolve("stub", None).unwrap().plugin_id, "beta");
        assert_eq!(
            r.resolve("stub", Some("alpha")).unwrap_err().code,
            ErrorCode::IntegrationOwner
        );
        plugin(dir.path(), "c", "beta", false);
        assert_eq!(
            load(dir.path()).resolve("stub", None).unwrap_err().code,
            ErrorCode::IntegrationAmbiguous
        );
    }

    #[test]
    fn a_refused_or_renamed_file_is_a_problem_without_content() {
        let dir = tempfile::tempdir().unwrap();
        plugin(dir.path(), "a", "alpha", false);
        let ints = dir.path().join("a/integrations");
        std::fs::rename(ints.join("stub.toml"), ints.join("other.toml")).unwrap();
        std::fs::write(
            ints.join("bad.toml"),
            "id = \"bad\"\n[session_identity]\nx = 1\n",
        )
        .unwrap();
        let r = load(dir.path());
        assert!(r.entries.is_empty());
        let rules: Vec<&str> = r.problems.iter().map(|p| p.rule).collect();
        assert!(rules.contains(&"registry.file_name"), "{rules:?}");
        assert_eq!(r.problems.len(), 2);
    }
}
