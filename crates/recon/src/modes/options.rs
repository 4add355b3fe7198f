//! What a diff takes and what it gives back.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::config::batch::PairSettings;
use crate::config::{
    default_limit, default_threads, AlignOptions, DiffColumns, InputConfig, InputOptions,
    RulesFile, RunSettings, Thresholds,
};
use crate::engine::{CancelToken, Progress};
use crate::error::{ReconError, Result};
use crate::report::Report;

/// Options of one diff. Build with [`DiffOptions::default`] and adjust.
#[derive(Debug, Clone)]
pub struct DiffOptions {
    /// Threads, memory limit, temp directory, passes and sample size.
    pub run: RunSettings,
    /// Directory for source_only.parquet, target_only.parquet and report.json.
    pub output_dir: Option<PathBuf>,
    /// Overwrite results already in `output_dir`.
    pub force: bool,
    /// Write the JSON report here too.
    pub report_path: Option<PathBuf>,
    /// Rows per decoded batch.
    pub batch_size: usize,
    /// Test hook: put every row in one first-level bucket so splitting runs.
    pub single_bucket: bool,
    /// Column alignment, conversions and normalization rules.
    pub align: AlignOptions,
    /// How to read each side (format, CSV dialect, NULL strings, encoding).
    pub inputs: [InputOptions; 2],
    /// Counters updated as the run progresses, for a progress display.
    pub progress: Arc<Progress>,
    /// Cancels this run (the interrupt handler cancels every run).
    pub cancel: CancelToken,
    /// Keyed mode: which value columns changed.parquet fills.
    pub diff_columns: DiffColumns,
    /// Break the unmatched rows down by this compared column (keyless).
    pub by: Option<String>,
    /// Drift allowed before the run fails.
    pub thresholds: Thresholds,
}

impl Default for DiffOptions {
    fn default() -> Self {
        DiffOptions {
            run: RunSettings::default(),
            output_dir: None,
            force: false,
            report_path: None,
            batch_size: 8192,
            single_bucket: false,
            align: AlignOptions::default(),
            inputs: Default::default(),
            progress: Arc::new(Progress::default()),
            cancel: CancelToken::new(),
            diff_columns: DiffColumns::Changed,
            by: None,
            thresholds: Default::default(),
        }
    }
}

/// The outcome of `diff`: the report plus what the CLI needs to show it.
pub struct DiffOutcome {
    /// The diff's report (verdict, counts, samples, settings).
    pub report: Report,
    /// Per side, per column of the sample rows: whether it holds text (shown quoted).
    pub quoted: [Vec<bool>; 2],
}

impl DiffOptions {
    /// Checks the run settings a library caller may have set directly.
    pub fn validate(&self) -> Result<()> {
        self.run.validate()
    }

    /// The options that `settings` give, spelled as a batch pair's tables
    /// spell them (`run`, `thresholds`, `align` with a rules file's keys,
    /// `input`), then a rules file's: how every front end builds a diff (the
    /// command line's flags, the Python keywords, Spark's), with every value
    /// checked in one place.
    pub fn from_settings(settings: &PairSettings, rules: Option<&Path>) -> Result<DiffOptions> {
        let rules = match rules {
            Some(path) => Some((path, RulesFile::load(path)?)),
            None => None,
        };
        DiffOptions::from_settings_and_rules(settings, rules)
    }

    /// [`DiffOptions::from_settings`] with the rules file already read
    /// (`path` names it in messages): an engine that plans on many
    /// machines ships the file's text, not its path.
    pub fn from_settings_and_rules(
        settings: &PairSettings,
        rules: Option<(&Path, RulesFile)>,
    ) -> Result<DiffOptions> {
        DiffOptions::from_layers(settings, rules, &PairSettings::default())
    }

    /// The one path from layered settings to options: a front end's own
    /// settings (flags, keywords, a batch pair's tables), then a rules
    /// file's keys, then defaults (a batch file's `[defaults]`). Where two
    /// layers set one value the earlier wins: `run` and `thresholds` key by
    /// key, `align` value by value with lists adding up. The input table is
    /// taken whole, `own`'s when it sets anything, else the defaults'; the
    /// `align` layers' `skip_rows` and `comment` fill what it leaves unset.
    pub(crate) fn from_layers(
        own: &PairSettings,
        rules: Option<(&Path, RulesFile)>,
        defaults: &PairSettings,
    ) -> Result<DiffOptions> {
        let mut input = if own.input != InputConfig::default() {
            own.input.clone()
        } else {
            defaults.input.clone()
        };
        let mut align = AlignOptions::default();
        own.align.fill_input(&mut input);
        own.align.clone().apply_to(&mut align)?;
        if let Some((path, file)) = rules {
            file.fill_input(&mut input);
            file.apply_to(&mut align)
                .map_err(|e| ReconError::Usage(format!("{}: {e}", path.display())))?;
        }
        defaults.align.fill_input(&mut input);
        defaults.align.clone().apply_to(&mut align)?;
        let thresholds = own.thresholds.or(defaults.thresholds);
        thresholds.validate()?;
        Ok(DiffOptions {
            run: own
                .run
                .or(&defaults.run)
                .build(default_threads(), default_limit())?,
            align,
            inputs: input.build()?,
            thresholds,
            ..DiffOptions::default()
        })
    }
}
