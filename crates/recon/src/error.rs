//! Typed errors. Every variant that concerns a file names it, so the CLI can
//! print one line that tells the user which file and what went wrong.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::{Path, PathBuf};

/// Result alias used throughout the library.
pub type Result<T, E = ReconError> = std::result::Result<T, E>;

/// What kind of failure an error is, for a front end to act on: the CLI
/// exits 2 on every kind, the Python package raises one exception class
/// per kind. Drift is not an error (it is a successful answer).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum ErrorKind {
    /// A setting is invalid or contradicts another; nothing was read.
    Usage,
    /// The two tables cannot be compared as they stand.
    Schema,
    /// An input is missing, unreadable, or holds a value recon refuses.
    Input,
    /// The machine ran short: a full disk, or an I/O failure on recon's
    /// own temp or output files.
    Resource,
    /// The run was cancelled (an interrupt, or a caller's cancel token).
    Cancelled,
    /// An internal invariant failed: a bug in recon.
    Internal,
}

/// Why a parser or the encoder refused a value: a reason that does not yet
/// name a file (the caller adds that, usually as [`ReconError::Input`]).
#[derive(Debug, Clone, PartialEq, Eq)]
#[doc(hidden)]
pub struct Invalid(pub String);

impl std::fmt::Display for Invalid {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for Invalid {}

/// `Invalid(format!(...))`.
macro_rules! invalid {
    ($($arg:tt)*) => {
        $crate::error::Invalid(format!($($arg)*))
    };
}
pub(crate) use invalid;

impl From<String> for Invalid {
    fn from(s: String) -> Self {
        Invalid(s)
    }
}

impl From<&str> for Invalid {
    fn from(s: &str) -> Self {
        Invalid(s.to_string())
    }
}

impl From<Invalid> for String {
    fn from(e: Invalid) -> Self {
        e.0
    }
}

/// Everything that can stop a reconciliation.
///
/// Messages may name an option the user should set ("pass `trim` with
/// value `year`"). Such a hint is kept as data ([`OptionHint`]), not as a
/// command-line spelling, and each front end renders it its own way with
/// [`ReconError::render`]: the CLI as `--trim year`, the Python package as
/// `trim=["year"]`. `Display` renders hints as command-line flags.
#[derive(Debug)]
#[non_exhaustive]
pub enum ReconError {
    /// An input path does not exist or cannot be listed/opened.
    Input {
        /// The file or directory the error is about.
        path: PathBuf,
        /// What is wrong with it.
        message: String,
    },

    /// A Parquet file could not be decoded (bad footer, truncated, corrupt page).
    Parquet {
        /// The Parquet file.
        path: PathBuf,
        /// The Parquet reader's error.
        source: parquet::errors::ParquetError,
    },

    /// Arrow-level failure while reading or converting data of a file.
    Arrow {
        /// The file being read.
        path: PathBuf,
        /// Arrow's error.
        source: arrow::error::ArrowError,
    },

    /// The two tables cannot be compared; each reason is listed.
    Schema {
        /// The source table, as given (its path or spec, or the name of
        /// Arrow data).
        source_path: PathBuf,
        /// The target table, as given.
        target_path: PathBuf,
        /// Why the pair cannot be compared, one reason per entry.
        reasons: Vec<String>,
    },

    /// I/O on recon's own temp or output files.
    Io {
        /// The file or directory the I/O was on.
        path: PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },

    /// A disk ran out of space: the temp directory while spilling, or an output.
    DiskFull {
        /// Where the disk filled: the temp directory when spilling, else the
        /// file or directory the failed I/O was on.
        path: PathBuf,
        /// Bytes spilled so far; 0 when the error is not from spilling.
        written: u64,
        /// Estimated bytes of temp space the run needs, when known.
        needed: Option<u64>,
        /// Whether the disk filled while spilling (the message then suggests
        /// `--temp-dir`).
        spilling: bool,
    },

    /// A user setting is invalid.
    Usage(String),

    /// The output directory already holds results.
    OutputExists {
        /// The output directory.
        path: PathBuf,
    },

    /// The run was interrupted (SIGINT/SIGTERM, or a cancel token).
    Interrupted,

    /// An internal invariant failed. Reaching this is a bug in recon.
    Internal(String),
}

impl ReconError {
    /// The kind of failure.
    pub fn kind(&self) -> ErrorKind {
        match self {
            ReconError::Usage(_) | ReconError::OutputExists { .. } => ErrorKind::Usage,
            ReconError::Schema { .. } => ErrorKind::Schema,
            ReconError::Input { .. } | ReconError::Parquet { .. } | ReconError::Arrow { .. } => {
                ErrorKind::Input
            }
            ReconError::Io { .. } | ReconError::DiskFull { .. } => ErrorKind::Resource,
            ReconError::Interrupted => ErrorKind::Cancelled,
            ReconError::Internal(_) => ErrorKind::Internal,
        }
    }

    /// The file the error is about, when it concerns one.
    pub fn path(&self) -> Option<&Path> {
        match self {
            ReconError::Input { path, .. }
            | ReconError::Parquet { path, .. }
            | ReconError::Arrow { path, .. }
            | ReconError::Io { path, .. }
            | ReconError::DiskFull { path, .. }
            | ReconError::OutputExists { path } => Some(path),
            ReconError::Schema { source_path, .. } => Some(source_path),
            ReconError::Usage(_) | ReconError::Interrupted | ReconError::Internal(_) => None,
        }
    }

    /// The options the message suggests setting, in order.
    pub fn hints(&self) -> Vec<OptionHint> {
        hint::parts(&self.raw())
            .into_iter()
            .filter_map(|p| match p {
                hint::Part::Option(h) => Some(h),
                hint::Part::Text(_) => None,
            })
            .collect()
    }

    /// The message with each option hint spelled by `style`, e.g.
    /// [`OptionHint::as_flag`] for a command line.
    ///
    /// ```
    /// use recon::config::RunConfig;
    /// use recon::{ErrorKind, OptionHint};
    ///
    /// // Threads of 0 are refused, naming the option to fix.
    /// let e = RunConfig { threads: Some(0), ..Default::default() }
    ///     .build(4, 1 << 30)
    ///     .unwrap_err();
    /// assert_eq!(e.kind(), ErrorKind::Usage);
    /// assert_eq!(e.to_string(), "--threads must be at least 1");
    /// assert_eq!(e.hints(), [OptionHint { name: "threads".into(), value: None }]);
    /// // A Python front end names its keyword instead.
    /// let python = e.render(&|h: &OptionHint| format!("{}=", h.name));
    /// assert_eq!(python, "threads= must be at least 1");
    /// ```
    pub fn render(&self, style: &dyn Fn(&OptionHint) -> String) -> String {
        hint::render(&self.raw(), style)
    }

    /// The message with hints in backquotes (see [`hint`]).
    fn raw(&self) -> String {
        match self {
            ReconError::Input { path, message } => format!("{}: {message}", path.display()),
            ReconError::Parquet { path, source } => {
                format!("{}: not a readable Parquet file: {source}", path.display())
            }
            ReconError::Arrow { path, source } => format!("{}: {source}", path.display()),
            ReconError::Schema {
                source_path,
                target_path,
                reasons,
            } => format!(
                "{} vs {}: schemas are incompatible (run `recon schema` for the full picture): {}",
                source_path.display(),
                target_path.display(),
                reasons.join("; ")
            ),
            ReconError::Io { path, source } => format!("{}: {source}", path.display()),
            ReconError::DiskFull {
                path,
                written,
                needed,
                spilling,
            } => format!(
                "{}: no space left on device ({written} bytes written so far{}); free space there{}",
                path.display(),
                needed_text(*needed),
                if *spilling {
                    format!(" or point {} at a larger disk", hint::switch("temp_dir"))
                } else {
                    String::new()
                }
            ),
            ReconError::Usage(m) => m.clone(),
            ReconError::OutputExists { path } => format!(
                "{}: output directory already holds recon results; pass {} to overwrite",
                path.display(),
                hint::switch("force")
            ),
            ReconError::Interrupted => "interrupted".into(),
            ReconError::Internal(m) => format!("internal error: {m}"),
        }
    }
}

impl std::fmt::Display for ReconError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.render(&OptionHint::as_flag))
    }
}

impl std::error::Error for ReconError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            ReconError::Parquet { source, .. } => Some(source),
            ReconError::Arrow { source, .. } => Some(source),
            ReconError::Io { source, .. } => Some(source),
            _ => None,
        }
    }
}

pub use hint::OptionHint;

/// Option hints inside messages.
///
/// Library messages name an option in backquotes, spelled as a flag with
/// its value, if any: ``pass `--skip-rows 3` ``. `parts` reads each such
/// span back as an [`OptionHint`] (`skip_rows`, value `3`), and `render`
/// spells hints for a front end: [`OptionHint::as_flag`] gives the flag
/// back without the quotes, a Python front end gives `skip_rows=3`. Other
/// backquoted text (`` `recon schema` ``) is left as it is.
pub(crate) mod hint {
    use std::fmt::Display;

    /// An option a message suggests setting: its name as the library and
    /// files spell it (`skip_rows`, `no_header`) and, if any, its value.
    #[derive(Debug, Clone, PartialEq, Eq)]
    pub struct OptionHint {
        /// The option's name as the library and files spell it
        /// (`skip_rows`).
        pub name: String,
        /// The value to set, or None for a switch or an option named alone.
        pub value: Option<String>,
    }

    impl OptionHint {
        /// The command line's spelling: `--skip-rows 1`, `--comment '#'`
        /// (a value the shell would split or expand is quoted).
        pub fn as_flag(&self) -> String {
            let flag = format!("--{}", self.name.replace('_', "-"));
            match &self.value {
                None => flag,
                Some(v) => format!("{flag} {}", shell_word(v)),
            }
        }
    }

    /// `v` as one shell word: bare unless the shell would split it or
    /// read it as syntax (`;`, `#`, a space), then single-quoted. Parentheses
    /// and `*` stay bare, as recon's messages have always shown them
    /// (`--cast d=timestamp(us)`).
    fn shell_word(v: &str) -> String {
        let plain = !v.is_empty()
            && !v.chars().any(|c| {
                c.is_whitespace()
                    || c.is_control()
                    || matches!(
                        c,
                        ';' | '|'
                            | '&'
                            | '#'
                            | '\''
                            | '"'
                            | '<'
                            | '>'
                            | '`'
                            | '$'
                            | '\\'
                            | '!'
                            | '~'
                    )
            });
        if plain {
            v.to_string()
        } else {
            format!("'{}'", v.replace('\'', r"'\''"))
        }
    }

    /// A shell word read back: `'#'` is `#`.
    fn unquote(v: &str) -> String {
        match v.strip_prefix('\'').and_then(|v| v.strip_suffix('\'')) {
            Some(inner) if !inner.is_empty() => inner.replace(r"'\''", "'"),
            _ => v.to_string(),
        }
    }

    /// An option with a value, for a message: `option("skip_rows", 3)`.
    pub(crate) fn option(name: &str, value: impl Display) -> String {
        let hint = OptionHint {
            name: name.to_string(),
            value: Some(value.to_string()),
        };
        format!("`{}`", hint.as_flag())
    }

    /// An option without a value (a switch, or an option named alone).
    pub(crate) fn switch(name: &str) -> String {
        format!("`--{}`", name.replace('_', "-"))
    }

    /// A piece of a message.
    #[derive(Debug, Clone, PartialEq, Eq)]
    pub(crate) enum Part {
        /// Text as it stands, other backquoted spans included.
        Text(String),
        /// An option hint, read from a backquoted `--name [value]` span.
        Option(OptionHint),
    }

    /// The hint a backquoted span holds, if it is one: `--name` or
    /// `--name value`.
    fn hint_of(span: &str) -> Option<OptionHint> {
        let flag = span.strip_prefix("--")?;
        let (name, value) = match flag.split_once(' ') {
            Some((n, v)) => (n, Some(unquote(v))),
            None => (flag, None),
        };
        let plain = name.starts_with(|c: char| c.is_ascii_lowercase())
            && name
                .chars()
                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-');
        plain.then(|| OptionHint {
            name: name.replace('-', "_"),
            value,
        })
    }

    /// A message's text and option hints, in order.
    pub(crate) fn parts(message: &str) -> Vec<Part> {
        let mut out = Vec::new();
        let mut rest = message;
        while let Some(i) = rest.find("`--") {
            let after = &rest[i + 1..];
            let Some(j) = after.find('`') else { break };
            match hint_of(&after[..j]) {
                Some(h) => {
                    push_text(&mut out, &rest[..i]);
                    out.push(Part::Option(h));
                }
                None => push_text(&mut out, &rest[..i + 1 + j + 1]),
            }
            rest = &after[j + 1..];
        }
        push_text(&mut out, rest);
        out
    }

    fn push_text(out: &mut Vec<Part>, text: &str) {
        if text.is_empty() {
            return;
        }
        if let Some(Part::Text(t)) = out.last_mut() {
            t.push_str(text);
        } else {
            out.push(Part::Text(text.to_string()));
        }
    }

    /// `message` with each hint spelled by `style`.
    pub(crate) fn render(message: &str, style: &dyn Fn(&OptionHint) -> String) -> String {
        parts(message)
            .into_iter()
            .map(|p| match p {
                Part::Text(t) => t,
                Part::Option(h) => style(&h),
            })
            .collect()
    }

    /// `message` with hints spelled as command-line flags.
    pub(crate) fn as_flags(message: &str) -> String {
        render(message, &OptionHint::as_flag)
    }
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
pub(crate) fn quoted_value(value: &str) -> String {
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
pub(crate) fn guard<T>(path: &Path, f: impl FnOnce() -> Result<T>) -> Result<T> {
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
    fn hints_are_data_and_each_front_end_spells_them() {
        let e = ReconError::input(
            "t.csv",
            format!(
                "a preamble: pass {} {}, or {}",
                hint::option("skip_rows", 3),
                hint::option("comment", "#"),
                hint::switch("no_header")
            ),
        );
        assert_eq!(
            e.to_string(),
            "t.csv: a preamble: pass --skip-rows 3 --comment '#', or --no-header"
        );
        assert_eq!(
            e.hints(),
            [
                OptionHint {
                    name: "skip_rows".into(),
                    value: Some("3".into())
                },
                OptionHint {
                    name: "comment".into(),
                    value: Some("#".into())
                },
                OptionHint {
                    name: "no_header".into(),
                    value: None
                },
            ]
        );
        let python = e.render(&|h: &OptionHint| match &h.value {
            Some(v) => format!("{}={v:?}", h.name),
            None => format!("{}=True", h.name),
        });
        assert_eq!(
            python,
            "t.csv: a preamble: pass skip_rows=\"3\" comment=\"#\", or no_header=True"
        );
        assert_eq!(e.kind(), ErrorKind::Input);
        assert_eq!(e.path(), Some(Path::new("t.csv")));
    }

    #[test]
    fn a_flag_value_the_shell_would_split_is_quoted() {
        let f = |v: &str| {
            OptionHint {
                name: "delimiter".into(),
                value: Some(v.into()),
            }
            .as_flag()
        };
        assert_eq!(f(";"), "--delimiter ';'");
        assert_eq!(
            f("amount=DECIMAL(10,2)"),
            "--delimiter amount=DECIMAL(10,2)"
        );
        assert_eq!(f("a b"), "--delimiter 'a b'");
        assert_eq!(f("it's"), "--delimiter 'it'\\''s'");
        assert_eq!(f("EST=-05:00"), "--delimiter EST=-05:00");
    }

    #[test]
    fn other_backquoted_text_stays() {
        let m = format!("run `recon schema`; {} `--Bad` `--x", hint::switch("force"));
        assert_eq!(
            hint::as_flags(&m),
            "run `recon schema`; --force `--Bad` `--x"
        );
        assert_eq!(
            hint::parts("pass `--comment '#'`")[1],
            hint::Part::Option(OptionHint {
                name: "comment".into(),
                value: Some("#".into()),
            })
        );
    }

    #[test]
    fn messages_from_data_stay_on_one_line() {
        let e = ReconError::input("a\nb.csv", "column 'x\ry': value \"1\t2\u{7}\"");
        let line = e.one_line();
        assert!(!line.contains('\n') && !line.contains('\r') && !line.contains('\t'));
        assert_eq!(line, "a\\nb.csv: column 'x\\ry': value \"1\\t2\\u{7}\"");
    }
}
