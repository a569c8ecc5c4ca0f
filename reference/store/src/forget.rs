//! `recovery.forget` (RFC §2, §6): explicit deletion of one safely owned regular final
//! file, without parsing it (corrupt, incompatible, expired and future-dated files
//! included), then a directory fsync. Unsafe objects are refused, never removed.

use vx_format::ids::is_checkpoint_id;

use crate::error::{Result, StoreError};
use crate::io::{retry_eintr, Step};
use crate::names::final_name;
use crate::safe_fs::{Fingerprint, Opened};
use crate::store::Store;

impl Store {
    pub fn forget(&mut self, id: &str) -> Result<()> {
        // A malformed id never becomes a path.
        if !is_checkpoint_id(id) {
            return Err(StoreError::invalid_id());
        }
        let name = final_name(id);
        let file = match self.dir.open_file(&name, self.uid)? {
            Opened::Missing => return Err(StoreError::not_found()),
            Opened::Unsafe(reason) => {
                return Err(StoreError::io(format!("unsafe checkpoint file: {reason}")))
            }
            Opened::File(file) => file,
        };
        // unlink works on the name, not the handle: make sure the name still refers
        // to the object that was checked.
        let checked = file.fingerprint();
        match self.dir.stat_entry(&name)? {
            None => return Err(StoreError::not_found()),
            Some(st) if same_object(&Fingerprint::of(&st), &checked) => {}
            Some(_) => {
                return Err(StoreError::io(
                    "checkpoint file changed while being forgotten",
                ))
            }
        }
        drop(file);
        let dir = self.dir.fd();
        match retry_eintr(|| self.io.unlink(dir, &name)) {
            Ok(()) => {}
            Err(nix::errno::Errno::ENOENT) => return Err(StoreError::not_found()),
            Err(e) => return Err(StoreError::os(Step::Unlink.describe(), e)),
        }
        self.cache.remove(id);
        self.unconfirmed.remove(id);
        self.sync_dir()
    }
}

pub(crate) fn same_object(a: &Fingerprint, b: &Fingerprint) -> bool {
    a.dev == b.dev && a.ino == b.ino
}
