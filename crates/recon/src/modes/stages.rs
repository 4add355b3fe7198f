//! The stages every mode runs, in order: plan both tables, size the run,
//! describe each side's scan, check what was read, and write the report.
//! The multiset diff, keyed diff and fingerprints each call these; what is
//! particular to a mode (its records, matcher and evidence) lives in it.

use std::path::{Path, PathBuf};
use std::sync::atomic::Ordering;
use std::sync::Arc;

use crate::config::{AlignOptions, InputOptions, RunSettings};
use crate::engine::memory::{Records, Sizing};
use crate::engine::scan::ScanSide;
use crate::engine::tempspace;
use crate::engine::{CancelToken, Progress, RunContext};
use crate::error::{ReconError, Result};
use crate::evidence::write_atomic;
use crate::input::{Source, Table};
use crate::plan::{preflight_in, ComparePlan};
use crate::report::{is_text, Report};
use crate::side::Side;

/// Opens both tables and plans the comparison (metadata only),
/// refusing a plan with problems before any data is read.
///
/// `-` and pipes are spooled under `temp_dir` (the system temp dir if None).
pub(crate) fn plan(
    source: &Source,
    target: &Source,
    align: &AlignOptions,
    inputs: &[InputOptions; 2],
    temp_dir: Option<&Path>,
) -> Result<(Table, Table, ComparePlan)> {
    let base = temp_dir.map_or_else(std::env::temp_dir, Path::to_path_buf);
    let (src, tgt, plan) = preflight_in(source, target, align, inputs, &base)?;
    if !plan.is_compatible() {
        return Err(ReconError::Schema {
            source_path: source.name().to_path_buf(),
            target_path: target.name().to_path_buf(),
            reasons: plan.problems.clone(),
        });
    }
    Ok((src, tgt, plan))
}

/// A scan pass ends: what each side fetched from object stores so far is
/// that pass's and the ones before it (the report's `fetched`).
pub(crate) fn mark_pass(sides: &[ScanSide<'_>; 2]) {
    for s in sides {
        s.table.mark_pass();
    }
}

/// Bits per row of the batch filters that a targeted second pass needs:
/// as many as fit a quarter of the memory limit (the share spill chunks
/// get, unused in the fingerprint pass), up to 20; none below 6 (too many
/// false positives to save a read). Each decoded digest is looked up in
/// every batch's filter, so the false-positive rate decides how many
/// batches are read for nothing: about 0.42% per digest at 12 bits, 0.09%
/// at 16, 0.026% at 20.
pub(crate) fn filter_bits(ctx: &RunContext, rows: u64) -> u32 {
    filter_bits_within(ctx.sizing.in_memory_spill as u64, rows)
}

/// [`filter_bits`] for filters of at most `budget` bytes in all.
pub(crate) fn filter_bits_within(budget: u64, rows: u64) -> u32 {
    let budget_bits = budget.saturating_mul(8);
    let per_row = budget_bits / rows.max(1);
    if per_row >= 6 {
        per_row.min(20) as u32
    } else {
        0
    }
}

/// The run context, with the memory limit divided for the rows the tables
/// hold (from metadata, or estimated from their size) and the mode's
/// `records`.
pub(crate) fn size(
    src: &Table,
    tgt: &Table,
    run: &RunSettings,
    batch_size: usize,
    progress: &Arc<Progress>,
    cancel: &CancelToken,
    records: &Records,
) -> Result<RunContext> {
    let base = run.temp_dir.clone().unwrap_or_else(std::env::temp_dir);
    let guess = estimated_rows(src).saturating_add(estimated_rows(tgt));
    progress.rows_total.store(guess, Ordering::Relaxed);
    let sizing = Sizing::plan_for(run.memory_limit, run.threads, guess, records);
    crate::input::store::set_prefetch_budget(run.memory_limit, run.threads);
    let ctx = RunContext::new(
        &base,
        run.threads,
        batch_size,
        sizing,
        progress.clone(),
        cancel.clone(),
    )?;
    // Every row spills one record, less what stays in memory.
    let volume = guess.saturating_mul(records.bytes as u64);
    ctx.budget
        .set_expected(volume.saturating_sub(ctx.sizing.in_memory_spill as u64));
    Ok(ctx)
}

/// What each side's scan reads: the compared columns and their preparation.
pub(crate) fn scan_sides<'a>(
    src: &'a Table,
    tgt: &'a Table,
    plan: &ComparePlan,
) -> [ScanSide<'a>; 2] {
    [
        ScanSide {
            table: src,
            columns: plan.indices(Side::Source),
            prep: plan.preps(Side::Source),
            only_units: None,
            only_rows: None,
            skip: false,
        },
        ScanSide {
            table: tgt,
            columns: plan.indices(Side::Target),
            prep: plan.preps(Side::Target),
            only_units: None,
            only_rows: None,
            skip: false,
        },
    ]
}

/// Rows read must be the rows the metadata promised (less rows whose values
/// a conversion refused under --max-parse-errors: read, but not compared).
pub(crate) fn check_row_counts(src: &Table, tgt: &Table, rows: [u64; 2]) -> Result<()> {
    for (t, read) in [(src, rows[0]), (tgt, rows[1])] {
        if let Some(meta_rows) = t.rows {
            let refused = t.parse_errors.count.load(Ordering::Relaxed);
            if read + refused != meta_rows {
                return Err(ReconError::input(
                    &t.path,
                    format!("read {read} rows but the metadata says {meta_rows}"),
                ));
            }
        }
    }
    Ok(())
}

/// A second read of the inputs disagreed with the first. Named after the
/// source: the run cannot tell which side changed.
pub(crate) fn inputs_changed(source: &Table, what: impl std::fmt::Display) -> ReconError {
    ReconError::input(
        &source.path,
        format!("the inputs changed while recon read them: {what}"),
    )
}

/// Evidence locator ranges: each side's dense positions (rows, or bytes of
/// text) cut every `1 << range_bits`.
pub(crate) fn evidence_ranges(ctx: &RunContext, tables: [&Table; 2]) -> usize {
    let extent = tables[0]
        .total_extent()
        .max(tables[1].total_extent())
        .max(1);
    ((extent - 1) >> ctx.sizing.range_bits) as usize + 1
}

/// Whether each column of a table holds text (shown quoted).
pub(crate) fn quoted_columns(t: &Table) -> Vec<bool> {
    t.schema
        .fields()
        .iter()
        .map(|f| is_text(f.data_type()))
        .collect()
}

/// Writes the JSON report into the output directory and to
/// `report_path`, each atomically.
pub(crate) fn write_reports(
    report: &Report,
    report_file: &str,
    output_dir: Option<&Path>,
    report_path: Option<&Path>,
) -> Result<()> {
    let json = report.to_json();
    if let Some(dir) = output_dir {
        write_atomic(&dir.join(report_file), json.as_bytes())?;
    }
    if let Some(p) = report_path {
        write_atomic(p, json.as_bytes())?;
    }
    Ok(())
}

/// Rows of a table for sizing: from metadata, else guessed from its size
/// (sizing and progress only; a wrong guess costs speed, never correctness).
pub(crate) fn estimated_rows(t: &Table) -> u64 {
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

/// An output directory this run created: removed again (only if still empty)
/// when the run fails or is interrupted, so a failed run leaves nothing behind.
pub(crate) struct CreatedDir {
    path: Option<PathBuf>,
}

impl CreatedDir {
    /// The run succeeded: the directory stays.
    pub(crate) fn keep(mut self) {
        if let Some(p) = self.path.take() {
            tempspace::unregister_empty_dir(&p);
        }
    }
}

impl Drop for CreatedDir {
    fn drop(&mut self) {
        if let Some(p) = self.path.take() {
            tempspace::unregister_empty_dir(&p);
            let _ = std::fs::remove_dir(&p);
        }
    }
}

/// Refuses an output directory holding any of a mode's result `files`
/// (unless `force`), and creates it if missing. No directory asked for
/// gives a [`CreatedDir`] that keeps nothing.
pub(crate) fn output_dir(dir: Option<&Path>, force: bool, files: &[&str]) -> Result<CreatedDir> {
    let Some(dir) = dir else {
        return Ok(CreatedDir { path: None });
    };
    if dir.exists() && !dir.is_dir() {
        return Err(ReconError::input(dir, "`--output` must be a directory"));
    }
    let has_results = files.iter().any(|f| dir.join(f).exists());
    if has_results && !force {
        return Err(ReconError::OutputExists {
            path: dir.to_path_buf(),
        });
    }
    if dir.is_dir() {
        return Ok(CreatedDir { path: None });
    }
    std::fs::create_dir_all(dir).map_err(|e| ReconError::io(dir, e))?;
    tempspace::register_empty_dir(dir);
    Ok(CreatedDir {
        path: Some(dir.to_path_buf()),
    })
}
