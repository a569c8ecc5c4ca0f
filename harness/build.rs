//! Packs what `vxcert run` reads besides the implementation into the binary: the
//! suites and their clause registries (`features/`), the corpus the suites feed
//! (`corpus/{broker,integrations,persist,workspace}`), the session layouts
//! (`persist/layouts.toml`) and the reference's profile. `src/assets.rs` materializes
//! them once per content hash; a copied or installed `vxcert` needs no checkout.

use sha2::{Digest, Sha256};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

/// Directories packed whole, relative to the repository root.
const DIRS: [&str; 5] = [
    "features",
    "corpus/broker",
    "corpus/integrations",
    "corpus/persist",
    "corpus/workspace",
];
/// Single files packed.
const FILES: [&str; 2] = ["profiles/reference.toml", "persist/layouts.toml"];

fn walk(root: &Path, rel: &str, out: &mut Vec<String>) {
    let dir = root.join(rel);
    let mut entries: Vec<_> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("cannot list {}: {e}", dir.display()))
        .map(|e| e.expect("a directory entry"))
        .collect();
    entries.sort_by_key(|e| e.file_name());
    for e in entries {
        let name = e.file_name().to_string_lossy().into_owned();
        if name.starts_with('.') || name == "__pycache__" {
            continue;
        }
        let child = format!("{rel}/{name}");
        let t = e.file_type().expect("a file type");
        if t.is_dir() {
            walk(root, &child, out);
        } else if t.is_file() {
            out.push(child);
        }
    }
}

fn main() {
    let manifest = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").expect("manifest dir"));
    let root = manifest
        .parent()
        .expect("the repository root")
        .to_path_buf();
    let mut files = Vec::new();
    for d in DIRS {
        println!("cargo:rerun-if-changed={}", root.join(d).display());
        walk(&root, d, &mut files);
    }
    for f in FILES {
        println!("cargo:rerun-if-changed={}", root.join(f).display());
        files.push(f.to_string());
    }
    files.sort();
    let mut hash = Sha256::new();
    let mut table =
        String::from("/// Every packed file: its path under the kit's root, its bytes.\n");
    table += "pub static FILES: &[(&str, &[u8])] = &[\n";
    for f in &files {
        let path = root.join(f);
        let bytes = std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        hash.update((f.len() as u64).to_le_bytes());
        hash.update(f.as_bytes());
        hash.update((bytes.len() as u64).to_le_bytes());
        hash.update(&bytes);
        writeln!(table, "    ({f:?}, include_bytes!({:?})),", path.display()).unwrap();
    }
    table += "];\n";
    let digest = hash.finalize();
    let hex: String = digest[..12].iter().map(|b| format!("{b:02x}")).collect();
    writeln!(
        table,
        "/// The packed files' content hash (the cache directory's name).\npub const HASH: &str = {hex:?};"
    )
    .unwrap();
    let out = PathBuf::from(std::env::var("OUT_DIR").expect("OUT_DIR")).join("assets.rs");
    std::fs::write(out, table).expect("writing assets.rs");
}
