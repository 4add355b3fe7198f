//! `recon batch FILE.toml`: many pairs from one file, with shared defaults.
//!
//! The file reuses the option shapes of the command line and `--rules`
//! files ([`RulesFile`], [`InputConfig`], [`RunConfig`], [`Thresholds`]), so
//! each setting is parsed and validated in one place:
//!
//! ```toml
//! [defaults.run]
//! threads = 2
//! memory_limit = "1GiB"
//! [defaults.thresholds]
//! max_unmatched_rows = 0
//!
//! [[pair]]
//! name = "orders"
//! source = "old/orders.parquet"     # relative to this file
//! target = "new/orders/"
//! mode = "diff"                     # or "quick"
//! rules_file = "orders.toml"        # a --rules file
//! [pair.align]                      # the same keys as a --rules file
//! key = ["order_id", "line_no"]
//! [pair.thresholds]
//! max_changed = 5
//! ```

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::{InputConfig, RulesFile, RunConfig, Thresholds};

/// How a pair is compared.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum BatchMode {
    /// The exact diff (keyed when the pair names a key).
    #[default]
    Diff,
    /// Fingerprints only (`recon diff --quick`).
    Quick,
}

impl BatchMode {
    /// The name batch files and reports use.
    pub fn as_str(self) -> &'static str {
        match self {
            BatchMode::Diff => "diff",
            BatchMode::Quick => "quick",
        }
    }
}

/// Settings a pair may give and `[defaults]` may give for every pair.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PairSettings {
    /// Threads, memory limit, temp directory, passes and sample size
    /// (`[defaults.run]`); a pair's own `run` keys override them key by key.
    #[serde(default)]
    pub run: RunConfig,
    /// Drift allowed before a pair fails (`[defaults.thresholds]`); a
    /// pair's own `thresholds` keys override them key by key.
    #[serde(default)]
    pub thresholds: Thresholds,
    /// The keys of a `--rules` file (`[defaults.align]`), applied after the
    /// pair's own and its `rules_file`'s: lists add up, and where two set
    /// one value the pair's settings win.
    #[serde(default)]
    pub align: RulesFile,
    /// How inputs are read (`[defaults.input]`), for a pair that gives no
    /// `[pair.input]`.
    #[serde(default)]
    pub input: InputConfig,
}

/// One `[[pair]]`.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct PairEntry {
    /// The pair's name, unique in the file; `--only` selects pairs by it.
    pub name: String,
    /// The source table: a file, a folder, a glob, `delta:PATH` or
    /// `iceberg:PATH`; a relative path is taken from the batch file's
    /// directory.
    pub source: PathBuf,
    /// The target table, as `source`.
    pub target: PathBuf,
    /// How the pair is compared. Default: `diff`.
    #[serde(default)]
    pub mode: BatchMode,
    /// A `--rules` file, relative to the batch file.
    pub rules_file: Option<PathBuf>,
    /// Run settings (`[pair.run]`), overriding `[defaults.run]` key by key.
    #[serde(default)]
    pub run: RunConfig,
    /// Thresholds (`[pair.thresholds]`), overriding `[defaults.thresholds]`
    /// key by key.
    #[serde(default)]
    pub thresholds: Thresholds,
    /// The keys of a `--rules` file (`[pair.align]`); where this, the
    /// `rules_file` and `[defaults.align]` set one value, this wins.
    #[serde(default)]
    pub align: RulesFile,
    /// How inputs are read (`[pair.input]`); when given, it replaces
    /// `[defaults.input]` as a whole.
    #[serde(default)]
    pub input: InputConfig,
}

/// A batch file.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct BatchFile {
    /// The `[defaults]` settings every pair starts from.
    #[serde(default)]
    pub defaults: PairSettings,
    /// The `[[pair]]` entries, in file order.
    #[serde(rename = "pair", default)]
    pub pairs: Vec<PairEntry>,
}

impl BatchFile {
    /// Reads and checks a batch file: TOML errors name the line and the
    /// key; every pair needs a unique name; relative paths are taken from
    /// the file's directory. Inputs are not opened here (see `run_pair`).
    pub(crate) fn load(path: &Path) -> crate::error::Result<BatchFile> {
        BatchFile::read(path).map_err(crate::error::ReconError::Usage)
    }

    fn read(path: &Path) -> Result<BatchFile, String> {
        let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
        let mut file: BatchFile =
            toml::from_str(&text).map_err(|e| super::toml_error::describe(path, &text, &e))?;
        if file.pairs.is_empty() {
            return Err(format!("{}: no [[pair]] to run", path.display()));
        }
        file.defaults
            .thresholds
            .validate()
            .map_err(|e| format!("{}: [defaults.thresholds] {e}", path.display()))?;
        for p in &file.pairs {
            p.thresholds
                .validate()
                .map_err(|e| format!("{}: pair {:?}: {e}", path.display(), p.name))?;
        }
        let base = path.parent().unwrap_or(Path::new("."));
        let mut names = std::collections::HashSet::new();
        for p in &mut file.pairs {
            if !names.insert(p.name.clone()) {
                return Err(format!(
                    "{}: pair name {:?} is used twice",
                    path.display(),
                    p.name
                ));
            }
            // Inputs are looked for when their pair runs: a missing or
            // unreadable file is that pair's error (a red test case in
            // JUnit), not the batch's, so the other pairs still run.
            for f in [&mut p.source, &mut p.target] {
                *f = relative_to(base, f);
            }
            if let Some(r) = &mut p.rules_file {
                if r.is_relative() {
                    *r = base.join(&*r);
                }
            }
        }
        Ok(file)
    }
}

/// A source as the batch file names it, taken from `base` when relative:
/// `delta:` and `iceberg:` keep their prefix, with the path after it joined.
fn relative_to(base: &Path, source: &Path) -> PathBuf {
    let text = source.to_string_lossy();
    for prefix in ["delta:", "iceberg:"] {
        if let Some(rest) = text.strip_prefix(prefix) {
            let rest = Path::new(rest);
            return if rest.is_relative() {
                PathBuf::from(format!("{prefix}{}", base.join(rest).display()))
            } else {
                source.to_path_buf()
            };
        }
    }
    if source.is_relative() {
        base.join(source)
    } else {
        source.to_path_buf()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `delta:` and `iceberg:` sources were joined onto the batch file's
    /// folder whole ("dir/delta:orders"), so a batch could not name them.
    #[test]
    fn lakehouse_sources_keep_their_prefix_when_made_relative() {
        let base = Path::new("/jobs");
        for (given, want) in [
            ("delta:lake/orders@3", "delta:/jobs/lake/orders@3"),
            ("iceberg:/abs/t", "iceberg:/abs/t"),
            ("x.parquet", "/jobs/x.parquet"),
            ("/abs/x.parquet", "/abs/x.parquet"),
        ] {
            assert_eq!(relative_to(base, Path::new(given)), PathBuf::from(want));
        }
    }

    /// The error of loading `text` as a batch file (parse errors come
    /// before any input is looked for).
    fn batch_error(text: &str) -> String {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("nightly.toml");
        std::fs::write(&path, text).unwrap();
        let e = BatchFile::load(&path).err().unwrap().to_string();
        assert!(!e.contains('\n'), "{e}");
        e.replace(&format!("{}", path.display()), "nightly.toml")
    }

    const PAIR: &str = "[[pair]]\nname = \"a\"\nsource = \"s.csv\"\ntarget = \"t.csv\"\n";

    #[test]
    fn a_batch_file_error_names_the_line_and_the_key() {
        let unknown = batch_error(&format!("{PAIR}[pair.thresholds]\nmax_chaged = 5\n"));
        assert_eq!(
            unknown,
            "nightly.toml: line 6: unknown key 'max_chaged' in [pair.thresholds]: did you mean 'max_changed'? (expected one of: max_unmatched_rows, max_unmatched_ratio, max_changed, max_missing)"
        );
        assert_eq!(
            batch_error(&format!("[defaults.run]\nthreads = \"two\"\n{PAIR}")),
            "nightly.toml: line 2, key 'defaults.run.threads': invalid type: string \"two\", expected usize"
        );
        assert_eq!(
            batch_error(&format!("{PAIR}mode = \"quik\"\n")),
            "nightly.toml: line 5, key 'pair.mode': unknown value 'quik': did you mean 'quick'? (expected one of: diff, quick)"
        );
        assert_eq!(
            batch_error("[[pair]]\nsource = \"s.csv\"\ntarget = \"t.csv\"\n"),
            "nightly.toml: line 1, in [[pair]]: missing key 'name'"
        );
        let syntax = batch_error(&format!("{PAIR}[pair.align\nkey = [\"id\"]\n"));
        assert!(
            syntax.starts_with("nightly.toml: line 5, column "),
            "{syntax}"
        );
    }
}
