//! `diff`: the whole pipeline, from two paths to a [`Report`].
//!
//! 1. Open both tables (footers only) and plan the compared columns; any
//!    schema problem fails here, before a single data page is read.
//! 2. Scan and partition both tables ([`crate::partition`]).
//! 3. Reconcile each bucket pair ([`crate::reconcile`]).
//! 4. Fetch samples and, with an output directory, every unmatched row
//!    ([`crate::evidence`]); write the report.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Instant;

use crate::align::{self, AlignOptions, ComparePlan};
use crate::error::{ReconError, Result};
use crate::evidence::{fetch_samples, write_atomic, write_side};
use crate::input::{typing, InputOptions, Table};
use crate::memory::{self, Sizing};
use crate::normalize::Prep;
use crate::partition::{scan, ScanConfig, ScanMode, ScanSide};
use crate::reconcile::{reconcile, ReconcileConfig};
use crate::report::*;
use crate::spill::SpillBudget;
use crate::tempspace::RunDir;
use crate::Side;

/// Names of the files written into `--output`.
pub const SOURCE_ONLY_FILE: &str = "source_only.parquet";
pub const TARGET_ONLY_FILE: &str = "target_only.parquet";
pub const REPORT_FILE: &str = "report.json";

/// Live counters a caller can poll to show progress. The library only
/// updates them (one atomic add per batch or bucket); it never prints.
#[derive(Debug, Default)]
pub struct Progress {
    /// 0 preflight, 1 scanning, 2 reconciling, 3 fetching evidence, 4 done.
    pub phase: std::sync::atomic::AtomicU8,
    pub rows_total: std::sync::atomic::AtomicU64,
    pub rows_scanned: std::sync::atomic::AtomicU64,
    pub buckets_total: std::sync::atomic::AtomicU64,
    pub buckets_done: std::sync::atomic::AtomicU64,
}

impl Progress {
    pub const PREFLIGHT: u8 = 0;
    pub const SCAN: u8 = 1;
    pub const RECONCILE: u8 = 2;
    pub const EVIDENCE: u8 = 3;
    pub const DONE: u8 = 4;

    fn set_phase(&self, phase: u8) {
        self.phase
            .store(phase, std::sync::atomic::Ordering::Relaxed);
    }
}

/// Set by the interrupt handler; workers stop at the next batch.
pub static CANCEL: AtomicBool = AtomicBool::new(false);

/// How many times the inputs are read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Passes {
    /// Two passes unless a side is text (CSV, NDJSON).
    #[default]
    Auto,
    /// Read once and spill every row's record.
    One,
    /// Fingerprint buckets first; read again spilling only differing buckets.
    Two,
}

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
    /// One pass (spill every row) or two (fingerprint first, spill only
    /// differing buckets).
    pub passes: Passes,
    /// Column alignment, conversions and normalization rules.
    pub align: AlignOptions,
    /// How to read each side (format, CSV dialect, NULL strings, encoding).
    pub inputs: [InputOptions; 2],
    /// Counters updated as the run progresses, for a progress display.
    pub progress: Arc<Progress>,
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
            passes: Passes::Auto,
            align: AlignOptions::default(),
            inputs: Default::default(),
            progress: Arc::new(Progress::default()),
        }
    }
}

/// The outcome of [`diff`]: the report plus what the CLI needs to show it.
pub struct DiffOutcome {
    pub report: Report,
    /// Per side, per column of the sample rows: whether it holds text (shown quoted).
    pub quoted: [Vec<bool>; 2],
}

/// Opens both tables and plans the comparison, reading metadata only. The
/// plan may hold problems; [`diff`] refuses to run then, `recon schema` shows them.
///
/// Text columns (CSV, NDJSON, Hive partition values) take the types of the
/// columns they pair with on a typed side before the plan is made.
pub fn preflight(
    source: &Path,
    target: &Path,
    align_opts: &AlignOptions,
    inputs: &[InputOptions; 2],
) -> Result<(Table, Table, ComparePlan)> {
    let mut src = Table::open(source, &inputs[0])?;
    let mut tgt = Table::open(target, &inputs[1])?;
    typing::resolve(
        &mut src,
        &mut tgt,
        align_opts,
        inputs[0].infer_types || inputs[1].infer_types,
    )?;
    let plan = align::plan(&src.schema, &tgt.schema, align_opts);
    Ok((src, tgt, plan))
}

fn preps(plan: &ComparePlan, side: Side) -> Vec<Prep> {
    plan.columns
        .iter()
        .map(|c| {
            let (column, convert) = match side {
                Side::Source => (&c.source_name, &c.source_convert),
                Side::Target => (&c.target_name, &c.target_convert),
            };
            Prep::new(column.clone(), convert.clone(), c.normalize.clone())
        })
        .collect()
}

/// An output directory this run created: removed again (only if still empty)
/// when the run fails or is interrupted, so a failed run leaves nothing behind.
struct CreatedDir {
    path: Option<PathBuf>,
}

impl CreatedDir {
    fn keep(mut self) {
        if let Some(p) = self.path.take() {
            crate::tempspace::unregister_empty_dir(&p);
        }
    }
}

impl Drop for CreatedDir {
    fn drop(&mut self) {
        if let Some(p) = self.path.take() {
            crate::tempspace::unregister_empty_dir(&p);
            let _ = std::fs::remove_dir(&p);
        }
    }
}

fn check_output_dir(dir: &Path, force: bool) -> Result<CreatedDir> {
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
    if dir.is_dir() {
        return Ok(CreatedDir { path: None });
    }
    std::fs::create_dir_all(dir).map_err(|e| ReconError::io(dir, e))?;
    crate::tempspace::register_empty_dir(dir);
    Ok(CreatedDir {
        path: Some(dir.to_path_buf()),
    })
}

fn input_report(t: &Table, rows: u64) -> InputReport {
    InputReport {
        path: t.path.display().to_string(),
        format: t.format.name().into(),
        files: t.files.len(),
        rows,
    }
}

/// Rows of a table for sizing: from metadata, else guessed from its size
/// (sizing only; a wrong guess costs speed, never correctness).
fn estimated_rows(t: &Table) -> u64 {
    t.rows.unwrap_or_else(|| {
        let compressed = t
            .files
            .iter()
            .any(|f| f.compression != crate::input::Compression::None);
        let bytes = if compressed {
            t.bytes_on_disk.saturating_mul(5)
        } else {
            t.bytes_on_disk
        };
        bytes / 48 + 1
    })
}

/// Compares `source` and `target` as multisets of rows.
pub fn diff(source: &Path, target: &Path, opts: &DiffOptions) -> Result<DiffOutcome> {
    let started = Instant::now();
    // A library caller may run again after an interrupted run.
    CANCEL.store(false, Ordering::Relaxed);
    if opts.threads == 0 {
        return Err(ReconError::Usage("--threads must be at least 1".into()));
    }
    let (src, tgt, plan) = preflight(source, target, &opts.align, &opts.inputs)?;
    if !plan.is_compatible() {
        return Err(ReconError::Schema {
            source_path: source.to_path_buf(),
            target_path: target.to_path_buf(),
            reasons: plan.problems.clone(),
        });
    }
    let created = match &opts.output_dir {
        Some(dir) => check_output_dir(dir, opts.force)?,
        None => CreatedDir { path: None },
    };
    let base = opts.temp_dir.clone().unwrap_or_else(std::env::temp_dir);
    let run_dir = RunDir::create(&base)?;

    let progress = &opts.progress;
    let guess = estimated_rows(&src).saturating_add(estimated_rows(&tgt));
    progress.rows_total.store(guess, Ordering::Relaxed);
    progress.set_phase(Progress::SCAN);
    let sizing = Sizing::plan(opts.memory_limit, opts.threads, guess);
    let budget = SpillBudget::new(sizing.in_memory_spill);
    // Every row spills one record, less what stays in memory.
    let records = guess.saturating_mul(crate::partition::RECORD_BYTES as u64);
    budget.set_expected(records.saturating_sub(sizing.in_memory_spill as u64));
    let sides = [
        ScanSide {
            table: &src,
            columns: plan.columns.iter().map(|c| c.source_index).collect(),
            prep: preps(&plan, Side::Source),
        },
        ScanSide {
            table: &tgt,
            columns: plan.columns.iter().map(|c| c.target_index).collect(),
            prep: preps(&plan, Side::Target),
        },
    ];
    let first_level_bits = if opts.single_bucket {
        0
    } else {
        sizing.bucket_bits
    };
    let config = |mode: ScanMode| ScanConfig {
        mode,
        threads: opts.threads,
        bucket_bits: first_level_bits,
        chunk_bytes: sizing.chunk_bytes,
        batch_size: opts.batch_size,
        dir: run_dir.path(),
        budget: budget.clone(),
        cancel: &CANCEL,
        progress,
    };
    // Two passes: fingerprint every bucket of both sides without spilling,
    // then read again spilling only the buckets whose fingerprints differ.
    // When the tables match, each is read once and nothing spills.
    let two_pass = match opts.passes {
        Passes::One => false,
        Passes::Two => true,
        // Re-reading Parquet/IPC costs about what spilling every record
        // costs, so when drift is rare two passes win; parsing text twice
        // costs far more than spilling its records once.
        Passes::Auto => !src.format.is_text() && !tgt.format.is_text(),
    };
    let mut differing_buckets = None;
    let mut expected_seen = None;
    let parts = if two_pass {
        let first = scan(&sides, &config(ScanMode::Fingerprint))?;
        let [a, b] = &first.fingerprints;
        let differ: Vec<bool> = a.iter().zip(b).map(|(x, y)| x != y).collect();
        let seen = [
            a.iter()
                .zip(&differ)
                .filter(|(_, d)| **d)
                .map(|(f, _)| f.count)
                .sum::<u64>(),
            b.iter()
                .zip(&differ)
                .filter(|(_, d)| **d)
                .map(|(f, _)| f.count)
                .sum::<u64>(),
        ];
        differing_buckets = Some(differ.iter().filter(|d| **d).count());
        expected_seen = Some(seen);
        if differing_buckets == Some(0) {
            first
        } else {
            // Only the differing buckets' records spill in the second pass.
            let spill = (seen[0] + seen[1]).saturating_mul(crate::partition::RECORD_BYTES as u64);
            budget.set_expected(spill.saturating_sub(sizing.in_memory_spill as u64));
            src.parse_errors.reset();
            tgt.parse_errors.reset();
            progress.rows_scanned.store(0, Ordering::Relaxed);
            let second = scan(
                &sides,
                &config(ScanMode::Partition {
                    filter: Some(Arc::new(differ)),
                }),
            )?;
            if second.rows != first.rows {
                return Err(ReconError::Input {
                    path: source.to_path_buf(),
                    message: format!(
                        "the inputs changed while recon read them: {:?} rows in the first pass, {:?} in the second",
                        first.rows, second.rows
                    ),
                });
            }
            second
        }
    } else {
        scan(&sides, &config(ScanMode::Partition { filter: None }))?
    };
    for (side, t) in [(Side::Source, &src), (Side::Target, &tgt)] {
        if let Some(meta_rows) = t.rows {
            // Rows whose values a conversion refused (counted under
            // --max-parse-errors) were read but left out of the comparison.
            let refused = t.parse_errors.count.load(Ordering::Relaxed);
            if parts.rows[side.index()] + refused != meta_rows {
                return Err(ReconError::input(
                    &t.path,
                    format!(
                        "read {} rows but the metadata says {meta_rows}",
                        parts.rows[side.index()]
                    ),
                ));
            }
        }
    }
    // Rows compared (text rows whose values failed to parse are counted apart).
    let [src_rows, tgt_rows] = parts.rows;

    let scan_seconds = started.elapsed().as_secs_f64();
    // Evidence ranges follow each side's dense positions (rows, or bytes of text).
    let extent = src.total_extent().max(tgt.total_extent()).max(1);
    let ranges = ((extent - 1) >> sizing.range_bits) as usize + 1;
    progress
        .buckets_total
        .store(parts.buckets as u64, Ordering::Relaxed);
    progress.set_phase(Progress::RECONCILE);
    let found = reconcile(
        &parts.index,
        parts.buckets,
        &ReconcileConfig {
            threads: opts.threads,
            map_max_entries: sizing.map_max_entries,
            chunk_bytes: sizing.chunk_bytes,
            range_bits: sizing.range_bits,
            ranges,
            bases: [src.bases(), tgt.bases()],
            sample: opts.sample,
            first_level_bits,
            dir: run_dir.path(),
            budget: budget.clone(),
            cancel: &CANCEL,
            progress,
        },
    )?;
    drop(parts);
    progress.set_phase(Progress::EVIDENCE);
    let expected_seen = expected_seen.unwrap_or([src_rows, tgt_rows]);
    if found.rows_seen != expected_seen {
        return Err(ReconError::Internal(format!(
            "reconciled {:?} rows, expected {expected_seen:?}",
            found.rows_seen
        )));
    }

    let reconcile_seconds = started.elapsed().as_secs_f64() - scan_seconds;
    let sample_rows = |t: &Table, side: Side| -> Result<Vec<SampleReport>> {
        let names: Vec<String> = t.schema.fields().iter().map(|f| f.name().clone()).collect();
        Ok(fetch_samples(t, &found.samples[side.index()])?
            .into_iter()
            .map(|row| SampleReport::new(&names, row))
            .collect())
    };
    let samples = Samples {
        limit: opts.sample,
        source_only: sample_rows(&src, Side::Source)?,
        target_only: sample_rows(&tgt, Side::Target)?,
    };

    // One pass over each side's unmatched rows writes the evidence (if asked)
    // and sums per-column value digests, which name the drifting columns.
    let dest = |name: &str| opts.output_dir.as_ref().map(|d| d.join(name));
    let (s_dest, t_dest) = (dest(SOURCE_ONLY_FILE), dest(TARGET_ONLY_FILE));
    let s_ev = write_side(&src, Side::Source, &found, s_dest.as_deref(), &sides[0])?;
    let t_ev = write_side(&tgt, Side::Target, &found, t_dest.as_deref(), &sides[1])?;
    let outputs = opts.output_dir.as_ref().map(|dir| Outputs {
        dir: dir.display().to_string(),
        source_only: s_dest.unwrap_or_default().display().to_string(),
        target_only: t_dest.unwrap_or_default().display().to_string(),
        source_only_written: s_ev.rows,
        target_only_written: t_ev.rows,
    });
    let differing: Vec<String> = plan
        .columns
        .iter()
        .zip(s_ev.column_sums.iter().zip(&t_ev.column_sums))
        .filter(|(_, (a, b))| a != b)
        .map(|(c, _)| c.source_name.clone())
        .collect();

    let evidence_seconds = started.elapsed().as_secs_f64() - scan_seconds - reconcile_seconds;
    let [so, to] = found.stats;
    let parse_errors = ParseErrorsReport {
        source: src.parse_errors.count.load(Ordering::Relaxed),
        target: tgt.parse_errors.count.load(Ordering::Relaxed),
        examples: src
            .parse_errors
            .examples()
            .into_iter()
            .chain(tgt.parse_errors.examples())
            .collect(),
    };
    let report = Report {
        recon_report_version: REPORT_VERSION,
        // A value that could not be read is drift, never a silent match.
        exact_match: so.rows == 0 && to.rows == 0 && parse_errors.source + parse_errors.target == 0,
        source_rows: src_rows,
        target_rows: tgt_rows,
        source_only_rows: so.rows,
        target_only_rows: to.rows,
        multiplicity: Multiplicity {
            source_only: so,
            target_only: to,
        },
        columns: plan.columns.iter().map(ColumnReport::from_pair).collect(),
        not_compared: plan
            .skipped
            .iter()
            .map(|k| SkippedReport {
                side: k.side.to_string(),
                name: k.field.name().clone(),
                why: k.why.clone(),
            })
            .collect(),
        column_drift: ColumnDrift {
            same: plan.columns.len() - differing.len(),
            differing,
        },
        inputs: Inputs {
            source: input_report(&src, src_rows),
            target: input_report(&tgt, tgt_rows),
        },
        samples,
        encoding_version: crate::encode::ENCODING_VERSION,
        outputs,
        settings: Settings {
            threads: opts.threads,
            memory_limit_bytes: (opts.memory_limit != u64::MAX).then_some(opts.memory_limit),
            temp_dir: base.display().to_string(),
            buckets: 1 << first_level_bits,
            passes: if two_pass { 2 } else { 1 },
            fingerprint_buckets_differing: differing_buckets,
        },
        elapsed_seconds: started.elapsed().as_secs_f64(),
        phase_seconds: PhaseSeconds {
            scan: scan_seconds,
            reconcile: reconcile_seconds,
            evidence: evidence_seconds,
        },
        parse_errors,
        spilled_bytes: budget.spilled_bytes(),
        bucket_splits: found.splits,
        peak_rss_bytes: memory::peak_rss_bytes(),
    };
    drop(found);
    drop(run_dir);

    progress.set_phase(Progress::DONE);
    let json = report.to_json();
    if let Some(dir) = &opts.output_dir {
        write_atomic(&dir.join(REPORT_FILE), json.as_bytes())?;
    }
    if let Some(p) = &opts.report_path {
        write_atomic(p, json.as_bytes())?;
    }
    created.keep();
    let quoted = |t: &Table| {
        t.schema
            .fields()
            .iter()
            .map(|f| crate::evidence::is_text(f.data_type()))
            .collect()
    };
    Ok(DiffOutcome {
        report,
        quoted: [quoted(&src), quoted(&tgt)],
    })
}
