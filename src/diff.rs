//! `diff`: the whole pipeline, from two paths to a [`Report`].
//!
//! 1. Open both tables (footers only) and plan the compared columns; any
//!    schema problem fails here, before a single data page is read.
//! 2. Scan and partition both tables ([`crate::partition`]).
//! 3. Reconcile each bucket pair ([`crate::reconcile`]).
//! 4. Fetch samples and, with an output directory, every unmatched row
//!    ([`crate::evidence`]); write the report.

use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;
use std::time::Instant;

use crate::error::{ReconError, Result};
use crate::evidence::{fetch_samples, write_atomic, write_side};
use crate::input::Table;
use crate::memory::{self, Sizing};
use crate::partition::{scan, ScanConfig, ScanSide};
use crate::reconcile::{reconcile, ReconcileConfig};
use crate::report::*;
use crate::schema::{plan, ComparePlan};
use crate::spill::SpillBudget;
use crate::tempspace::RunDir;
use crate::Side;

/// Names of the files written into `--output`.
pub const SOURCE_ONLY_FILE: &str = "source_only.parquet";
pub const TARGET_ONLY_FILE: &str = "target_only.parquet";
pub const REPORT_FILE: &str = "report.json";

/// Set by the interrupt handler; workers stop at the next batch.
pub static CANCEL: AtomicBool = AtomicBool::new(false);

/// Options of one diff. Build with [`DiffOptions::default`] and adjust.
#[derive(Debug, Clone)]
pub struct DiffOptions {
    pub threads: usize,
    /// Bytes; `u64::MAX` is unlimited.
    pub memory_limit: u64,
    pub temp_dir: Option<PathBuf>,
    /// Distinct unmatched rows shown per direction.
    pub sample: usize,
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
}

impl Default for DiffOptions {
    fn default() -> Self {
        DiffOptions {
            threads: std::thread::available_parallelism().map_or(1, |n| n.get()),
            memory_limit: memory::default_limit(),
            temp_dir: None,
            sample: 20,
            output_dir: None,
            force: false,
            report_path: None,
            batch_size: 8192,
            single_bucket: false,
        }
    }
}

/// The outcome of [`diff`]: the report plus what the CLI needs to show it.
pub struct DiffOutcome {
    pub report: Report,
    /// Per column of the sample rows: whether it holds text (shown quoted).
    pub quoted: Vec<bool>,
}

/// Opens both tables and checks they can be compared, reading metadata only.
pub fn preflight(source: &Path, target: &Path) -> Result<(Table, Table, ComparePlan)> {
    let src = Table::open(source)?;
    let tgt = Table::open(target)?;
    let plan = plan(&src.schema, source, &tgt.schema, target)?;
    Ok((src, tgt, plan))
}

fn check_output_dir(dir: &Path, force: bool) -> Result<()> {
    if dir.exists() && !dir.is_dir() {
        return Err(ReconError::input(dir, "--output must be a directory"));
    }
    let has_results = [SOURCE_ONLY_FILE, TARGET_ONLY_FILE, REPORT_FILE]
        .iter()
        .any(|f| dir.join(f).exists());
    if has_results && !force {
        return Err(ReconError::OutputExists {
            path: dir.to_path_buf(),
        });
    }
    std::fs::create_dir_all(dir).map_err(|e| ReconError::io(dir, e))
}

fn input_report(t: &Table) -> InputReport {
    InputReport {
        path: t.path.display().to_string(),
        format: "parquet".into(),
        files: t.files.len(),
        rows: t.rows,
    }
}

/// Compares `source` and `target` as multisets of rows.
pub fn diff(source: &Path, target: &Path, opts: &DiffOptions) -> Result<DiffOutcome> {
    let started = Instant::now();
    if opts.threads == 0 {
        return Err(ReconError::Usage("--threads must be at least 1".into()));
    }
    let (src, tgt, plan) = preflight(source, target)?;
    if let Some(dir) = &opts.output_dir {
        check_output_dir(dir, opts.force)?;
    }
    let base = opts.temp_dir.clone().unwrap_or_else(std::env::temp_dir);
    let run_dir = RunDir::create(&base)?;

    let sizing = Sizing::plan(opts.memory_limit, opts.threads, src.rows + tgt.rows);
    let budget = SpillBudget::new(sizing.in_memory_spill);
    let sides = [
        ScanSide {
            table: &src,
            columns: plan.columns.iter().map(|c| c.source_index).collect(),
        },
        ScanSide {
            table: &tgt,
            columns: plan.columns.iter().map(|c| c.target_index).collect(),
        },
    ];
    let first_level_bits = if opts.single_bucket {
        0
    } else {
        sizing.bucket_bits
    };
    let parts = scan(
        &sides,
        &ScanConfig {
            threads: opts.threads,
            bucket_bits: first_level_bits,
            chunk_bytes: sizing.chunk_bytes,
            batch_size: opts.batch_size,
            dir: run_dir.path(),
            budget: budget.clone(),
            cancel: &CANCEL,
            single_bucket: opts.single_bucket,
        },
    )?;
    for (side, t) in [(Side::Source, &src), (Side::Target, &tgt)] {
        if parts.rows[side.index()] != t.rows {
            return Err(ReconError::input(
                &t.path,
                format!(
                    "read {} rows but the metadata says {}",
                    parts.rows[side.index()],
                    t.rows
                ),
            ));
        }
    }

    let scan_seconds = started.elapsed().as_secs_f64();
    let max_rows = src.rows.max(tgt.rows).max(1);
    let ranges = ((max_rows - 1) >> sizing.range_bits) as usize + 1;
    let found = reconcile(
        &parts.index,
        parts.buckets,
        &ReconcileConfig {
            threads: opts.threads,
            map_max_entries: sizing.map_max_entries,
            chunk_bytes: sizing.chunk_bytes,
            range_bits: sizing.range_bits,
            ranges,
            sample: opts.sample,
            first_level_bits,
            dir: run_dir.path(),
            budget: budget.clone(),
            cancel: &CANCEL,
        },
    )?;
    drop(parts);
    if found.rows_seen != [src.rows, tgt.rows] {
        return Err(ReconError::Internal(format!(
            "reconciled {:?} rows, expected [{}, {}]",
            found.rows_seen, src.rows, tgt.rows
        )));
    }

    let reconcile_seconds = started.elapsed().as_secs_f64() - scan_seconds;
    let names: Vec<String> = src
        .schema
        .fields()
        .iter()
        .map(|f| f.name().clone())
        .collect();
    let sample_rows = |t: &Table, side: Side| -> Result<Vec<SampleReport>> {
        let t_names: Vec<String> = t.schema.fields().iter().map(|f| f.name().clone()).collect();
        Ok(fetch_samples(t, &found.samples[side.index()])?
            .into_iter()
            .map(|row| SampleReport::new(&names, reorder(row, &t_names, &names)))
            .collect())
    };
    let samples = Samples {
        limit: opts.sample,
        source_only: sample_rows(&src, Side::Source)?,
        target_only: sample_rows(&tgt, Side::Target)?,
    };

    let outputs = match &opts.output_dir {
        None => None,
        Some(dir) => {
            let s = dir.join(SOURCE_ONLY_FILE);
            let t = dir.join(TARGET_ONLY_FILE);
            let sw = write_side(&src, Side::Source, &found, &s)?;
            let tw = write_side(&tgt, Side::Target, &found, &t)?;
            Some(Outputs {
                dir: dir.display().to_string(),
                source_only: s.display().to_string(),
                target_only: t.display().to_string(),
                source_only_written: sw,
                target_only_written: tw,
            })
        }
    };

    let evidence_seconds = started.elapsed().as_secs_f64() - scan_seconds - reconcile_seconds;
    let [so, to] = found.stats;
    let report = Report {
        recon_report_version: REPORT_VERSION,
        exact_match: so.rows == 0 && to.rows == 0,
        source_rows: src.rows,
        target_rows: tgt.rows,
        source_only_rows: so.rows,
        target_only_rows: to.rows,
        multiplicity: Multiplicity {
            source_only: so,
            target_only: to,
        },
        columns: plan
            .columns
            .iter()
            .map(|c| ColumnReport {
                name: c.name.clone(),
                source_type: c.source_type.to_string(),
                target_type: c.target_type.to_string(),
            })
            .collect(),
        inputs: Inputs {
            source: input_report(&src),
            target: input_report(&tgt),
        },
        samples,
        encoding_version: crate::encode::ENCODING_VERSION,
        outputs,
        settings: Settings {
            threads: opts.threads,
            memory_limit_bytes: (opts.memory_limit != u64::MAX).then_some(opts.memory_limit),
            temp_dir: base.display().to_string(),
            buckets: parts_buckets(first_level_bits),
        },
        elapsed_seconds: started.elapsed().as_secs_f64(),
        phase_seconds: PhaseSeconds {
            scan: scan_seconds,
            reconcile: reconcile_seconds,
            evidence: evidence_seconds,
        },
        spilled_bytes: budget.spilled_bytes(),
        bucket_splits: found.splits,
        peak_rss_bytes: memory::peak_rss_bytes(),
    };
    drop(found);
    drop(run_dir);

    let json = report.to_json();
    if let Some(dir) = &opts.output_dir {
        write_atomic(&dir.join(REPORT_FILE), json.as_bytes())?;
    }
    if let Some(p) = &opts.report_path {
        write_atomic(p, json.as_bytes())?;
    }
    let quoted = src
        .schema
        .fields()
        .iter()
        .map(|f| crate::evidence::is_text(f.data_type()))
        .collect();
    Ok(DiffOutcome { report, quoted })
}

fn parts_buckets(bits: u32) -> usize {
    1 << bits
}

/// Puts a target row's values in source column order, so samples of both
/// directions read alike.
fn reorder(
    row: crate::evidence::SampleRow,
    from: &[String],
    to: &[String],
) -> crate::evidence::SampleRow {
    if from == to {
        return row;
    }
    let values = to
        .iter()
        .map(|n| {
            from.iter()
                .position(|f| f == n)
                .and_then(|i| row.values[i].clone())
        })
        .collect();
    crate::evidence::SampleRow { values, ..row }
}
