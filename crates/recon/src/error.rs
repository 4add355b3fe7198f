//! Typed errors. Every variant that concerns a file names it, so the CLI can
//! print one line that tells the user which file and what went wrong.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::{Path, PathBuf};

/// Result alias used throughout the library.
pub type Result<T, E = ReconError> = std::result::Result<T, E>;

/// Everything that can stop a reconciliation. The CLI maps every variant to
/// exit code 2; drift is not an error (it is a successful answer).
#[derive(Debug, thiserror::Error)]
pub enum ReconError {
    /// An input path does not exist or cannot be listed/opened.
    #[error("{path}: {message}")]
    Input { path: PathBuf, message: String },

    /// A Parquet file could not be decoded (bad footer, truncated, corrupt page).
    #[error("{path}: not a readable Parquet file: {source}")]
    Parquet {
        path: PathBuf,
        #[source]
        source: parquet::errors::ParquetError,
    },

    /// Arrow-level failure while reading or converting data of a file.
    #[error("{path}: {source}")]
    Arrow {
        path: PathBuf,
        #[source]
        source: arrow::error::ArrowError,
    },

    /// The two tables cannot be compared; each reason is listed.
    #[error("{} vs {}: schemas are incompatible (run `recon schema` for the full picture): {}", .source_path.display(), .target_path.display(), .reasons.join("; "))]
    Schema {
        source_path: PathBuf,
        target_path: PathBuf,
        reasons: Vec<String>,
    },

    /// A column type recon has no canonical encoding for.
    #[error("column '{column}' in {path}: type {data_type} is not supported")]
    UnsupportedType {
        path: PathBuf,
        column: String,
        data_type: String,
    },

    /// I/O on recon's own temp or output files.
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },

    /// A disk ran out of space: the temp directory while spilling, or an output.
    #[error("{path}: no space left on device ({written} bytes written so far{}); free space there{}", needed_text(*.needed), if *.spilling { " or point --temp-dir at a larger disk" } else { "" })]
    DiskFull {
        path: PathBuf,
        written: u64,
        /// Estimated bytes of temp space the run needs, when known.
        needed: Option<u64>,
        spilling: bool,
    },

    /// A user setting is invalid.
    #[error("{0}")]
    Usage(String),

    /// The output directory already holds results.
    #[error("{path}: output directory already holds recon results; pass --force to overwrite")]
    OutputExists { path: PathBuf },

    /// The run was interrupted (SIGINT/SIGTERM).
    #[error("interrupted")]
    Interrupted,

    /// An internal invariant failed. Reaching this is a bug in recon.
    #[error("internal error: {0}")]
    Internal(String),
}

impl ReconError {
    pub(crate) fn io(path: impl AsRef<Path>, source: std::io::Error) -> Self {
        // ENOSPC deserves its own message: the fix is a different disk, not a retry.
        if source.raw_os_error() == Some(libc::ENOSPC) {
            return ReconError::DiskFull {
                path: path.as_ref().to_path_buf(),
                written: 0,
                needed: None,
                spilling: false,
            };
        }
        ReconError::Io {
            path: path.as_ref().to_path_buf(),
            source,
        }
    }

    pub(crate) fn input(path: impl AsRef<Path>, message: impl Into<String>) -> Self {
        ReconError::Input {
            path: path.as_ref().to_path_buf(),
            message: message.into(),
        }
    }

    pub(crate) fn parquet(path: impl AsRef<Path>, source: parquet::errors::ParquetError) -> Self {
        ReconError::Parquet {
            path: path.as_ref().to_path_buf(),
            source,
        }
    }

    pub(crate) fn arrow(path: impl AsRef<Path>, source: arrow::error::ArrowError) -> Self {
        ReconError::Arrow {
            path: path.as_ref().to_path_buf(),
            source,
        }
    }
}

fn needed_text(needed: Option<u64>) -> String {
    match needed {
        Some(n) => format!(
            "; this run needs about {} of temp space",
            crate::size::format_size(n)
        ),
        None => String::new(),
    }
}

/// A message made safe to print as one line: newlines, tabs and other
/// control characters that came from data (header names, values, paths)
/// are escaped, so an error is always one line naming the file.
pub fn one_line(message: &str) -> String {
    let mut out = String::with_capacity(message.len());
    for c in message.chars() {
        match c {
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if c.is_control() => out.push_str(&format!("\\u{{{:x}}}", c as u32)),
            c => out.push(c),
        }
    }
    out
}

/// A value from data, for a message: its first 80 characters ("…" marks a
/// cut), quoted and escaped so a trailing space or a newline shows.
pub fn quoted_value(value: &str) -> String {
    let mut v: String = value.chars().take(80).collect();
    if v.len() < value.len() {
        v.push('…');
    }
    format!("{v:?}")
}

impl ReconError {
    /// The error as one printable line (see [`one_line`]).
    pub fn one_line(&self) -> String {
        one_line(&self.to_string())
    }
}

/// Turns a panic raised while decoding a file into an error that names it:
/// a corrupt file must never crash recon.
pub fn guard<T>(path: &Path, f: impl FnOnce() -> Result<T>) -> Result<T> {
    match catch_unwind(AssertUnwindSafe(f)) {
        Ok(r) => r,
        Err(payload) => Err(ReconError::input(
            path,
            format!(
                "corrupt or unreadable data: {}",
                panic_message(payload.as_ref())
            ),
        )),
    }
}

/// The message carried by a caught panic's payload.
pub fn panic_message(payload: &(dyn std::any::Any + Send)) -> String {
    payload
        .downcast_ref::<String>()
        .cloned()
        .or_else(|| payload.downcast_ref::<&str>().map(|s| s.to_string()))
        .unwrap_or_else(|| "unknown failure".into())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_from_data_stay_on_one_line() {
        let e = ReconError::input("a\nb.csv", "column 'x\ry': value \"1\t2\u{7}\"");
        let line = e.one_line();
        assert!(!line.contains('\n') && !line.contains('\r') && !line.contains('\t'));
        assert_eq!(line, "a\\nb.csv: column 'x\\ry': value \"1\\t2\\u{7}\"");
    }
}
