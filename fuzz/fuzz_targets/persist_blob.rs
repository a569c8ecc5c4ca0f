//! The packed session blob reader (docs/spec/persist-blob.md) on arbitrary bytes.
//!
//! Never panics; an accepted blob re-packs to canonical bytes that read back to the
//! same session and re-pack to the same bytes; and unpacking it creates nothing
//! outside the root: the root's parent holds only the root, and the root holds only
//! directories and regular files with one link.
#![no_main]

use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use libfuzzer_sys::fuzz_target;
use vx_persist::blob::{read, write, ReadOptions, SessionFile};
use vx_persist::{Layouts, SessionPacker};

fn base() -> &'static Path {
    static BASE: OnceLock<PathBuf> = OnceLock::new();
    BASE.get_or_init(|| {
        let dir = std::env::temp_dir().join(format!("vx-fuzz-persist-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        dir
    })
}

fn sorted(mut files: Vec<SessionFile>) -> Vec<SessionFile> {
    files.sort();
    files
}

/// Everything under `dir` is a directory or a regular file with one link.
fn only_plain_entries(dir: &Path) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let entry = entry.unwrap();
        let meta = std::fs::symlink_metadata(entry.path()).unwrap();
        if meta.is_dir() {
            only_plain_entries(&entry.path());
        } else {
            assert!(meta.is_file() && meta.nlink() == 1, "unpack made something odd");
        }
    }
}

fuzz_target!(|data: &[u8]| {
    vx_fuzz::verdict::expect(data, vx_fuzz::verdict::blob);
    let layouts = Layouts::builtin();
    let opts = ReadOptions::new(layouts);
    let Ok(blob) = read(data, &opts) else { return };
    let canonical = write(&blob.header, &blob.files(), &opts).expect("an accepted blob re-packs");
    let again = read(&canonical, &opts).expect("canonical bytes read back");
    assert_eq!(again.header, blob.header);
    assert_eq!(again.files(), sorted(blob.files()));
    assert_eq!(write(&again.header, &again.files(), &opts).unwrap(), canonical, "canonical is a fixed point");

    let base = base();
    let root = base.join("root");
    let packer = SessionPacker::new(layouts, &blob.header.backend, &root).unwrap();
    packer.unpack(&blob.header.session_id, data).expect("an accepted blob unpacks");
    let names: Vec<_> = std::fs::read_dir(base).unwrap().map(|e| e.unwrap().file_name()).collect();
    assert_eq!(names, ["root"], "nothing outside the root");
    only_plain_entries(&root);
    assert!(packer.has_session(&blob.header.session_id));
    std::fs::remove_dir_all(&root).unwrap();
});
