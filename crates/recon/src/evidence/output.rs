//! Outputs that appear whole or not at all: written under a temporary
//! name, synced, and renamed into place; removed on drop or interrupt.

use std::fs::File;
use std::path::{Path, PathBuf};

use crate::engine::tempspace;
use crate::error::{ReconError, Result};

/// A file written under a temporary name and renamed into place on commit, so
/// readers never see it half-written. Dropped uncommitted, it is removed.
///
/// An existing destination that is not a regular file (`/dev/null`,
/// `/dev/stdout` on a pipe or terminal, a FIFO, a character device) is
/// written in place instead: a rename would replace the device or FIFO with
/// a regular file (run as root, that broke `/dev/null` for the whole
/// machine) and a FIFO's reader would get nothing. A symlink to a regular
/// file keeps its link: the file it points at is the one replaced.
pub(crate) struct AtomicFile {
    /// The temporary file, or None when writing in place.
    tmp: Option<PathBuf>,
    dest: PathBuf,
    committed: bool,
}

impl AtomicFile {
    /// Opens the file to write `dest` through (see the type's comment).
    pub(crate) fn create(dest: &Path) -> Result<(AtomicFile, File)> {
        match std::fs::metadata(dest) {
            Ok(meta) if !meta.is_file() && !meta.is_dir() => {
                let file = std::fs::OpenOptions::new()
                    .write(true)
                    .open(dest)
                    .map_err(|e| ReconError::io(dest, e))?;
                return Ok((
                    AtomicFile {
                        tmp: None,
                        dest: dest.to_path_buf(),
                        committed: false,
                    },
                    file,
                ));
            }
            _ => {}
        }
        // Through a symlink (`/dev/stdout` redirected to a file, a link to
        // a shared report), the real file is replaced, not the link.
        let real = std::fs::canonicalize(dest).unwrap_or_else(|_| dest.to_path_buf());
        let name = real
            .file_name()
            .and_then(|n| n.to_str())
            .unwrap_or("output");
        let tmp = real.with_file_name(format!(".{name}.recon-tmp-{}", std::process::id()));
        let file = File::create(&tmp).map_err(|e| ReconError::io(&tmp, e))?;
        tempspace::register(&tmp);
        Ok((
            AtomicFile {
                tmp: Some(tmp),
                dest: real,
                committed: false,
            },
            file,
        ))
    }

    /// Whether this writes the destination in place (not a regular file):
    /// there is nothing to sync or rename.
    pub(crate) fn in_place(&self) -> bool {
        self.tmp.is_none()
    }

    /// Renames the finished file into place (nothing to do in place).
    pub(crate) fn commit(mut self) -> Result<()> {
        if let Some(tmp) = &self.tmp {
            std::fs::rename(tmp, &self.dest).map_err(|e| ReconError::io(&self.dest, e))?;
            tempspace::unregister(tmp);
        }
        self.committed = true;
        Ok(())
    }
}

impl Drop for AtomicFile {
    fn drop(&mut self) {
        if let (false, Some(tmp)) = (self.committed, &self.tmp) {
            let _ = std::fs::remove_file(tmp);
            tempspace::unregister(tmp);
        }
    }
}

/// Writes `bytes` to `dest` whole or not at all: into a temporary file
/// beside it, renamed over `dest` when complete (a device or FIFO, such as
/// `/dev/stdout`, is written in place).
pub fn write_atomic(dest: &Path, bytes: &[u8]) -> Result<()> {
    use std::io::Write;
    let (af, mut file) = AtomicFile::create(dest)?;
    file.write_all(bytes)
        .and_then(|_| {
            if af.in_place() {
                Ok(())
            } else {
                file.sync_all()
            }
        })
        .map_err(|e| ReconError::io(dest, e))?;
    af.commit()
}
