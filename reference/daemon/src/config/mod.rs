//! Config: `$XDG_CONFIG_HOME/venomx/config.zon` (fallback `$HOME/.config/venomx/`),
//! read with the ZON reader and checked against the schema. The daemon holds one
//! effective [`Config`]; `config.reload` replaces it only when the file is valid.

pub mod doc;
pub mod schema;
pub mod watch;
pub mod zon;

pub use schema::{Config, ConfigError};
use std::path::{Path, PathBuf};

/// Why the config file could not be used.
#[derive(Debug)]
pub enum LoadError {
    Io,
    Syntax(zon::ZonError),
    Schema(ConfigError),
}

impl LoadError {
    pub fn to_api(&self) -> crate::errors::ApiError {
        use crate::errors::{ApiError, ErrorCode};
        match self {
            LoadError::Io => ApiError::new(
                ErrorCode::ConfigIo,
                "config file could not be read or written",
            ),
            LoadError::Syntax(e) => {
                ApiError::new(ErrorCode::Param("config"), "config is not valid ZON")
                    .with("param", "config")
                    .with("field", ".")
                    .with("problem", e.problem)
                    .with("line", e.line as u64)
                    .with("column", e.column as u64)
            }
            LoadError::Schema(e) => {
                ApiError::new(ErrorCode::Param("config"), "config fails the schema")
                    .with("param", "config")
                    .with("field", e.field.clone())
                    .with("problem", e.problem)
            }
        }
    }
}

impl std::fmt::Display for LoadError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            LoadError::Io => f.write_str("config file could not be read"),
            LoadError::Syntax(e) => write!(f, "config is not valid ZON: {e}"),
            LoadError::Schema(e) => write!(f, "config fails the schema at {e}"),
        }
    }
}

/// Parses and checks config text.
pub fn check_text(text: &[u8]) -> Result<(zon::Zon, Config), LoadError> {
    let doc = zon::parse(text).map_err(LoadError::Syntax)?;
    let config = Config::from_zon(&doc).map_err(LoadError::Schema)?;
    Ok((doc, config))
}

/// Reads the file; a missing file is the empty document (all defaults). At most one
/// byte past the ZON reader's limit is read, so an oversized file costs no more.
pub fn load(path: &Path) -> Result<(zon::Zon, Config), LoadError> {
    use std::io::Read as _;
    let read = std::fs::File::open(path).and_then(|f| {
        let mut bytes = Vec::new();
        f.take(zon::MAX_INPUT_BYTES as u64 + 1)
            .read_to_end(&mut bytes)
            .map(|_| bytes)
    });
    match read {
        Ok(bytes) => {
            if bytes.len() > zon::MAX_INPUT_BYTES {
                return Err(LoadError::Syntax(zon::ZonError {
                    line: 1,
                    column: 1,
                    problem: "document too large",
                }));
            }
            check_text(&bytes)
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            Ok((zon::Zon::Struct(Vec::new()), Config::default()))
        }
        Err(_) => Err(LoadError::Io),
    }
}

/// [`load`], then the plugin registry beside the file (its problems are listed, never
/// a reason to refuse the config).
pub fn load_with_plugins(path: &Path) -> Result<Config, LoadError> {
    let (_, mut config) = load(path)?;
    if let Some(dir) = crate::agent::registry::plugins_dir(path) {
        config.integrations = std::sync::Arc::new(crate::agent::registry::load(&dir));
    }
    Ok(config)
}

/// Writes the document atomically: a 0600 temporary file in the same directory,
/// fsync, rename over the config, fsync the directory.
pub fn store(path: &Path, doc: &zon::Zon) -> std::io::Result<()> {
    use std::os::unix::fs::DirBuilderExt as _;
    let dir = path
        .parent()
        .ok_or_else(|| std::io::Error::other("no parent"))?;
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(dir)?;
    let tmp = dir.join(format!(".config.zon.tmp-{}", uuid::Uuid::new_v4()));
    crate::paths::write_atomic(path, &tmp, zon::write(doc).as_bytes())
}

/// `$XDG_CONFIG_HOME/venomx/config.zon`, else `$HOME/.config/venomx/config.zon`.
/// A relative `XDG_CONFIG_HOME` is ignored, as the XDG spec asks.
pub fn default_path() -> Option<PathBuf> {
    let base = match std::env::var_os("XDG_CONFIG_HOME").map(PathBuf::from) {
        Some(p) if p.is_absolute() => p,
        _ => PathBuf::from(std::env::var_os("HOME")?).join(".config"),
    };
    Some(base.join("venomx").join("config.zon"))
}
