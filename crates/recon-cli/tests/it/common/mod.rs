//! Helpers shared by the integration tests: running the `recon` binary
//! ([`Run`]), writing small Parquet tables and reading outputs back.
#![allow(dead_code)]

use std::ffi::{OsStr, OsString};
use std::fs::File;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use arrow::array::{ArrayRef, Int64Array, RecordBatch, StringArray};
use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
use parquet::arrow::ArrowWriter;
use parquet::file::properties::WriterProperties;
use serde_json::Value;

/// The repository's root (the workspace's), where testdata/ lives.
pub fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// Path of a committed fixture.
pub fn fixture(rel: &str) -> PathBuf {
    repo_root().join("testdata").join(rel)
}

/// Writes `batch` to `path` with `rows_per_group` rows per row group.
pub fn write_parquet(path: &Path, batch: &RecordBatch, rows_per_group: usize) {
    let props = WriterProperties::builder()
        .set_max_row_group_row_count(Some(rows_per_group.max(1)))
        .build();
    let mut w =
        ArrowWriter::try_new(File::create(path).unwrap(), batch.schema(), Some(props)).unwrap();
    w.write(batch).unwrap();
    w.close().unwrap();
}

/// A two-column (k: Utf8, n: Int64) table.
pub fn kv_batch(rows: &[(Option<&str>, Option<i64>)]) -> RecordBatch {
    let k: ArrayRef = Arc::new(StringArray::from(
        rows.iter().map(|r| r.0).collect::<Vec<_>>(),
    ));
    let n: ArrayRef = Arc::new(Int64Array::from(
        rows.iter().map(|r| r.1).collect::<Vec<_>>(),
    ));
    RecordBatch::try_from_iter([("k", k), ("n", n)]).unwrap()
}

/// Reads every batch of a Parquet file.
pub fn read_parquet(path: &Path) -> Vec<RecordBatch> {
    let f = File::open(path).unwrap();
    ParquetRecordBatchReaderBuilder::try_new(f)
        .unwrap()
        .build()
        .unwrap()
        .map(|b| b.unwrap())
        .collect()
}

/// Total rows of a Parquet file.
pub fn parquet_rows(path: &Path) -> usize {
    read_parquet(path).iter().map(|b| b.num_rows()).sum()
}

/// Copies a directory tree (a lakehouse fixture, to tamper with).
pub fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        let dest = to.join(e.file_name());
        if e.file_type().unwrap().is_dir() {
            copy_dir(&e.path(), &dest);
        } else {
            std::fs::copy(e.path(), &dest).unwrap();
        }
    }
}

/// Reads a JSON file (a report recon wrote).
pub fn read_json(path: &Path) -> Value {
    let text = std::fs::read_to_string(path)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{} is no JSON: {e}", path.display()))
}

/// `recon ARGS...`, to add flags to and run (see [`Run`]): any subcommand (`schema`,
/// `batch`, `fingerprint`, `compare-fingerprints`, `diff --quick`), or
/// global flags before the subcommand.
pub fn recon<I, S>(args: I) -> Run
where
    I: IntoIterator<Item = S>,
    S: AsRef<OsStr>,
{
    Run {
        args: Vec::new(),
        envs: Vec::new(),
        dir: None,
        stdin: None,
        json: false,
        report_file: None,
    }
    .args(args)
}

/// One run of the `recon` binary: built like a command line, run once,
/// and judged by what a user sees: the exit code (0 match, 1 drift, 2
/// could not compare), stdout, the one-line error, and the JSON report.
///
/// The tests assert on the product's outputs, not on how a process is
/// driven, so a test reads as the command a user would type and the
/// answer they would get:
///
/// ```ignore
/// Run::diff(&extract, &lake).json().exits(1).report()["source_only_rows"];
/// Run::diff(&bad, &good).fails_with("bad.csv: line 3");
/// recon(["schema"]).arg(&a).arg(&b).exits(0).stdout_has("Decimal128(38, 2)");
/// ```
///
/// Runs that need the process itself (a signal mid-run, two runs at once,
/// another user, a terminal) build their own `std::process::Command`.
#[must_use = "a Run does nothing until .run(), .exits() or .fails_with()"]
pub struct Run {
    args: Vec<OsString>,
    /// `None` removes the variable.
    envs: Vec<(OsString, Option<OsString>)>,
    dir: Option<PathBuf>,
    stdin: Option<Vec<u8>>,
    /// `--json` was asked for: the report is stdout.
    json: bool,
    /// Where the run writes its report (`--report FILE`, `--output DIR`).
    report_file: Option<PathBuf>,
}

impl Run {
    /// `recon diff SOURCE TARGET`; flags added after the two tables, as a
    /// user types them.
    pub fn diff(source: impl AsRef<OsStr>, target: impl AsRef<OsStr>) -> Run {
        recon(["diff"]).arg(source).arg(target)
    }

    pub fn arg(mut self, arg: impl AsRef<OsStr>) -> Self {
        self.args.push(arg.as_ref().to_owned());
        self
    }

    pub fn args<I, S>(mut self, args: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: AsRef<OsStr>,
    {
        self.args
            .extend(args.into_iter().map(|a| a.as_ref().to_owned()));
        self
    }

    /// `--json`: the report printed on stdout becomes [`Outcome::report`].
    pub fn json(self) -> Self {
        Self { json: true, ..self }.arg("--json")
    }

    /// `--output DIR`: the evidence directory; its `report.json` becomes
    /// [`Outcome::report`].
    pub fn output_dir(mut self, dir: impl AsRef<Path>) -> Self {
        self.report_file = Some(dir.as_ref().join("report.json"));
        self.arg("--output").arg(dir.as_ref())
    }

    /// `--report FILE`: the file becomes [`Outcome::report`] (a relative
    /// path is read from the run's [`current_dir`](Self::current_dir), as
    /// recon writes it).
    pub fn report_file(mut self, file: impl AsRef<Path>) -> Self {
        self.report_file = Some(file.as_ref().to_path_buf());
        self.arg("--report").arg(file.as_ref())
    }

    pub fn env(mut self, key: impl AsRef<OsStr>, value: impl AsRef<OsStr>) -> Self {
        let value = Some(value.as_ref().to_owned());
        self.envs.push((key.as_ref().to_owned(), value));
        self
    }

    pub fn env_remove(mut self, key: impl AsRef<OsStr>) -> Self {
        self.envs.push((key.as_ref().to_owned(), None));
        self
    }

    pub fn current_dir(mut self, dir: impl AsRef<Path>) -> Self {
        self.dir = Some(dir.as_ref().to_path_buf());
        self
    }

    /// Bytes for recon to read on stdin (a `-` side). Without it stdin is
    /// empty, never the test harness's own.
    pub fn stdin(mut self, bytes: impl Into<Vec<u8>>) -> Self {
        self.stdin = Some(bytes.into());
        self
    }

    /// Runs it, asserting nothing.
    pub fn run(self) -> Outcome {
        let mut cmd = assert_cmd::Command::cargo_bin("recon").unwrap();
        cmd.args(&self.args);
        for (key, value) in &self.envs {
            match value {
                Some(v) => cmd.env(key, v),
                None => cmd.env_remove(key),
            };
        }
        if let Some(dir) = &self.dir {
            cmd.current_dir(dir);
        }
        if let Some(bytes) = self.stdin {
            cmd.write_stdin(bytes);
        }
        let out = cmd.output().unwrap();
        let command = std::iter::once("recon".into())
            .chain(self.args.iter().map(|a| a.to_string_lossy()))
            .collect::<Vec<_>>()
            .join(" ");
        // A signal's death has no exit code; -1 fails every exits().
        let code = out.status.code().unwrap_or(-1);
        let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
        let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
        let report = if self.json {
            serde_json::from_str(&stdout).ok()
        } else {
            // Read whatever the run left there, whatever its exit code: a
            // batch writes its report when a pair errs (exit 2) too.
            let file = match (&self.dir, &self.report_file) {
                (Some(dir), Some(f)) => Some(dir.join(f)),
                (None, f) => f.clone(),
                (_, None) => None,
            };
            let text = file.and_then(|f| std::fs::read_to_string(f).ok());
            text.and_then(|t| serde_json::from_str(&t).ok())
        };
        // Exit 2 is recon's "could not compare", always one line on stderr.
        let error = (code == 2).then(|| stderr.trim_end().to_string());
        Outcome {
            command,
            code,
            stdout,
            stderr,
            report,
            error,
        }
    }

    /// Runs it and asserts the exit code: 0 match, 1 drift (or a
    /// threshold broken), 2 could not compare.
    pub fn exits(self, code: i32) -> Outcome {
        let o = self.run();
        if o.code != code {
            panic!("{}\nexited {}, not {code}", o.describe(), o.code);
        }
        o
    }

    /// Runs it and asserts that it could not compare (exit 2) with an
    /// error holding `needle`.
    pub fn fails_with(self, needle: impl AsRef<str>) -> Outcome {
        let o = self.exits(2);
        o.stderr_has(needle);
        o
    }
}

/// What a [`Run`] gave.
pub struct Outcome {
    /// The command line, for failure messages.
    pub command: String,
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
    /// The JSON report: stdout under [`Run::json`], else the file named by
    /// [`Run::output_dir`] or [`Run::report_file`], if the run wrote it.
    pub report: Option<Value>,
    /// On exit 2, stderr without its final newline: the error.
    pub error: Option<String>,
}

impl Outcome {
    fn describe(&self) -> String {
        format!(
            "`{}`\n--- stdout\n{}\n--- stderr\n{}",
            self.command, self.stdout, self.stderr
        )
    }

    pub fn stdout_has(&self, needle: impl AsRef<str>) -> &Self {
        let needle = needle.as_ref();
        assert!(
            self.stdout.contains(needle),
            "{}\nstdout lacks {needle:?}",
            self.describe()
        );
        self
    }

    pub fn stdout_lacks(&self, needle: impl AsRef<str>) -> &Self {
        let needle = needle.as_ref();
        assert!(
            !self.stdout.contains(needle),
            "{}\nstdout holds {needle:?}",
            self.describe()
        );
        self
    }

    pub fn stderr_has(&self, needle: impl AsRef<str>) -> &Self {
        let needle = needle.as_ref();
        assert!(
            self.stderr.contains(needle),
            "{}\nstderr lacks {needle:?}",
            self.describe()
        );
        self
    }

    /// The error, asserted to be one line: recon's promise for every
    /// failure, so a log or a build server shows all of it.
    pub fn one_line_error(&self) -> &str {
        let error = self
            .error
            .as_deref()
            .unwrap_or_else(|| panic!("{}\nno error: exit {}", self.describe(), self.code));
        assert_eq!(error.lines().count(), 1, "not one line: {error}");
        error
    }

    /// The JSON report (see [`Outcome::report`](field@Outcome::report)),
    /// which the test expects to exist.
    pub fn report(&self) -> &Value {
        self.report
            .as_ref()
            .unwrap_or_else(|| panic!("{}\nno JSON report (exit {})", self.describe(), self.code))
    }
}
