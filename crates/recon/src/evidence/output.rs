//! Outputs that appear whole or not at all: written under a temporary
//! name, synced, and renamed into place; removed on drop or interrupt.

use std::fs::File;
use std::path::{Path, PathBuf};

use crate::engine::tempspace;
use crate::error::{ReconError, Result};

/// A file written under a temporary name and renamed into place on commit, so
/// readers never see it half-written. Dropped uncommitted, it is removed.
pub struct AtomicFile {
    tmp: PathBuf,
    dest: PathBuf,
    committed: bool,
}

impl AtomicFile {
    pub fn create(dest: &Path) -> Result<(AtomicFile, File)> {
        let name = dest
            .file_name()
            .and_then(|n| n.to_str())
            .unwrap_or("output");
        let tmp = dest.with_file_name(format!(".{name}.recon-tmp-{}", std::process::id()));
        let file = File::create(&tmp).map_err(|e| ReconError::io(&tmp, e))?;
        tempspace::register(&tmp);
        Ok((
            AtomicFile {
                tmp,
                dest: dest.to_path_buf(),
                committed: false,
            },
            file,
        ))
    }

    pub fn commit(mut self) -> Result<()> {
        std::fs::rename(&self.tmp, &self.dest).map_err(|e| ReconError::io(&self.dest, e))?;
        tempspace::unregister(&self.tmp);
        self.committed = true;
        Ok(())
    }
}

impl Drop for AtomicFile {
    fn drop(&mut self) {
        if !self.committed {
            let _ = std::fs::remove_file(&self.tmp);
            tempspace::unregister(&self.tmp);
        }
    }
}

/// Writes `bytes` to `dest` atomically.
pub fn write_atomic(dest: &Path, bytes: &[u8]) -> Result<()> {
    use std::io::Write;
    let (af, mut file) = AtomicFile::create(dest)?;
    file.write_all(bytes)
        .and_then(|_| file.sync_all())
        .map_err(|e| ReconError::io(dest, e))?;
    af.commit()
}
