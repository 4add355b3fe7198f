//! The per-run temp directory, and cleanup that survives interrupts and kills.
//!
//! Each run spills under `<base>/recon-<pid>-<random>/`, marked by a
//! `.recon-run` file. Normal exits remove it through `TempDir`'s drop; a
//! SIGINT/SIGTERM handler calls [`cleanup_registered`]; and a run killed with
//! SIGKILL leaves a directory whose PID is dead, which the next run removes
//! ([`remove_stale_runs`]). Partial output files are registered the same way.

use std::path::{Path, PathBuf};
use std::sync::Mutex;

use crate::error::{ReconError, Result};

const PREFIX: &str = "recon-";
const MARKER: &str = ".recon-run";

static REGISTERED: Mutex<Vec<PathBuf>> = Mutex::new(Vec::new());
static EMPTY_DIRS: Mutex<Vec<PathBuf>> = Mutex::new(Vec::new());

/// Remembers a directory the run created, to remove on interrupt if it is
/// still empty (never its contents: it may be a user's output directory).
pub(crate) fn register_empty_dir(path: &Path) {
    if let Ok(mut r) = EMPTY_DIRS.lock() {
        r.push(path.to_path_buf());
    }
}

/// Forgets a directory registered with [`register_empty_dir`].
pub(crate) fn unregister_empty_dir(path: &Path) {
    if let Ok(mut r) = EMPTY_DIRS.lock() {
        r.retain(|p| p != path);
    }
}

/// Remembers a path to delete if the process is interrupted.
pub(crate) fn register(path: &Path) {
    if let Ok(mut r) = REGISTERED.lock() {
        r.push(path.to_path_buf());
    }
}

/// Forgets a path registered with [`register`] (it was renamed or removed).
pub(crate) fn unregister(path: &Path) {
    if let Ok(mut r) = REGISTERED.lock() {
        r.retain(|p| p != path);
    }
}

/// Deletes every registered path. Called from the interrupt handler, which then exits.
pub fn cleanup_registered() {
    let paths = match REGISTERED.lock() {
        Ok(mut r) => std::mem::take(&mut *r),
        Err(_) => return,
    };
    for p in paths {
        if p.is_dir() {
            let _ = std::fs::remove_dir_all(&p);
        } else {
            let _ = std::fs::remove_file(&p);
        }
    }
    // After the partial files above are gone; remove_dir fails on a non-empty one.
    if let Ok(mut dirs) = EMPTY_DIRS.lock() {
        for d in std::mem::take(&mut *dirs) {
            let _ = std::fs::remove_dir(&d);
        }
    }
}

/// A per-run spill directory, removed on drop.
pub(crate) struct RunDir {
    dir: tempfile::TempDir,
}

impl RunDir {
    /// Creates the run directory under `base` after removing stale ones left by dead runs.
    pub(crate) fn create(base: &Path) -> Result<RunDir> {
        if !base.is_dir() {
            return Err(ReconError::input(base, "temp directory does not exist"));
        }
        remove_stale_runs(base);
        let dir = tempfile::Builder::new()
            .prefix(&format!("{PREFIX}{}-", std::process::id()))
            .tempdir_in(base)
            .map_err(|e| ReconError::io(base, e))?;
        register(dir.path());
        std::fs::write(dir.path().join(MARKER), b"").map_err(|e| ReconError::io(dir.path(), e))?;
        Ok(RunDir { dir })
    }

    pub(crate) fn path(&self) -> &Path {
        self.dir.path()
    }
}

impl Drop for RunDir {
    fn drop(&mut self) {
        unregister(self.dir.path());
    }
}

/// Whether a process with this PID exists. A PID of 0 or above i32::MAX is
/// never a real process: kill() would read 0 as "my process group" and a
/// wrapped negative value as "every process", so those count as dead
/// without asking.
fn pid_alive(pid: u32) -> bool {
    let Ok(pid) = libc::pid_t::try_from(pid) else {
        return false;
    };
    if pid <= 0 {
        return false;
    }
    // SAFETY: kill with signal 0 sends nothing; it only checks that the
    // (positive, so single-process) PID exists and may be signalled. It
    // takes no pointers.
    let rc = unsafe { libc::kill(pid, 0) };
    // EPERM: it exists but belongs to someone else, so it is alive.
    rc == 0 || std::io::Error::last_os_error().raw_os_error() == Some(libc::EPERM)
}

/// Removes `recon-<pid>-*` run directories under `base` whose process is gone.
/// Only directories carrying recon's marker file are touched.
pub(crate) fn remove_stale_runs(base: &Path) -> usize {
    let Ok(entries) = std::fs::read_dir(base) else {
        return 0;
    };
    let mut removed = 0;
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(name) = name.to_str() else { continue };
        let Some(rest) = name.strip_prefix(PREFIX) else {
            continue;
        };
        let Some(pid) = rest.split('-').next().and_then(|p| p.parse::<u32>().ok()) else {
            continue;
        };
        let path = entry.path();
        if pid == std::process::id() || pid_alive(pid) || !path.join(MARKER).exists() {
            continue;
        }
        if std::fs::remove_dir_all(&path).is_ok() {
            removed += 1;
        }
    }
    removed
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pids_that_name_no_single_process_are_dead() {
        assert!(!pid_alive(0));
        assert!(!pid_alive(u32::MAX));
        assert!(!pid_alive(i32::MAX as u32 + 1));
        assert!(pid_alive(std::process::id()));
    }

    #[test]
    fn stale_directories_of_impossible_pids_are_removed_only_with_the_marker() {
        let base = tempfile::tempdir().unwrap();
        let marked = base.path().join("recon-0-abc");
        let unmarked = base.path().join("recon-4294967295-def");
        std::fs::create_dir(&marked).unwrap();
        std::fs::write(marked.join(MARKER), b"").unwrap();
        std::fs::create_dir(&unmarked).unwrap();
        assert_eq!(remove_stale_runs(base.path()), 1);
        assert!(!marked.exists());
        assert!(unmarked.exists());
    }
}
