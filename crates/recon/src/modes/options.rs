//! What a diff takes and what it gives back.

use std::path::PathBuf;
use std::sync::Arc;

use crate::config::{AlignOptions, DiffColumns, InputOptions, RunSettings, Thresholds};
use crate::engine::{CancelToken, Progress};
use crate::error::Result;
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

/// The outcome of [`diff`]: the report plus what the CLI needs to show it.
pub struct DiffOutcome {
    pub report: Report,
    /// Per side, per column of the sample rows: whether it holds text (shown quoted).
    pub quoted: [Vec<bool>; 2],
}

impl DiffOptions {
    /// Checks the run settings a library caller may have set directly.
    pub fn validate(&self) -> Result<()> {
        self.run.validate()
    }
}
