//! The keyed diff (`--key`): rows are matched by business key, and every
//! key lands in exactly one category: matched, value_mismatch,
//! missing_in_target, missing_in_source, duplicate_key (more than once on
//! either side; its rows are diffed as a multiset, never fanned out) or, for
//! rows with a NULL in a key column, null_key (diffed as a multiset too).
//!
//! The stages are the multiset diff's, with keyed records:
//! 1. **plan**: the multiset plan, then the key and tolerance columns
//!    resolved against it ([`shape`]);
//! 2. **scan**: one pass; each row's key digest, row digest, column words
//!    and carried numbers are partitioned by key digest ([`sink`]);
//! 3. **reconcile**: each bucket's keys are judged ([`matcher`]); the rows
//!    of duplicated and NULL keys are then reconciled as multisets;
//! 4. **evidence**: changed keys are fetched back by locator, both sides
//!    together ([`changed`]); missing rows and the multiset remainders are
//!    written like keyless evidence;
//! 5. **report**: categories, per-column counts, samples.

pub mod changed;
pub mod matcher;
pub mod numbers;
pub mod sink;

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Instant;

use changed::{changed_stage, ChangedInputs};
use matcher::{KeyedFound, KeyedMatcher, KeyedSlots, ENTRY_BYTES};
use sink::{KeyedConfig, KeyedShape, KeyedSink};

use super::multiset::matcher::Reconciled;
use super::multiset::{
    check_output_dir_for, check_row_counts, input_report, parse_errors_report, plan_stage,
    reconcile_keyless, scan_sides, size_stage_for, write_reports, DiffOptions, DiffOutcome,
    KeylessBuckets, REPORT_FILE,
};
use crate::config::{AlignOptions, RunSettings};
use crate::engine::memory::{self, MAP_SLOT_BYTES};
use crate::engine::reconcile::{reconcile, DriverConfig};
use crate::engine::scan::{scan, ScanConfig, ScanSide};
use crate::engine::{Phase, RunContext};
use crate::error::{ReconError, Result};
use crate::evidence::{fetch_samples, write_side};
use crate::input::Table;
use crate::plan::ComparePlan;
use crate::report::*;
use crate::side::Side;

/// Names of the files keyed mode writes into `--output`.
pub const CHANGED_FILE: &str = "changed.parquet";
pub const MISSING_IN_TARGET_FILE: &str = "missing_in_target.parquet";
pub const MISSING_IN_SOURCE_FILE: &str = "missing_in_source.parquet";
pub const DUPLICATE_SOURCE_FILE: &str = "duplicate_keys_source_only.parquet";
pub const DUPLICATE_TARGET_FILE: &str = "duplicate_keys_target_only.parquet";
pub const NULL_SOURCE_FILE: &str = "null_keys_source_only.parquet";
pub const NULL_TARGET_FILE: &str = "null_keys_target_only.parquet";

const FILES: [&str; 8] = [
    CHANGED_FILE,
    MISSING_IN_TARGET_FILE,
    MISSING_IN_SOURCE_FILE,
    DUPLICATE_SOURCE_FILE,
    DUPLICATE_TARGET_FILE,
    NULL_SOURCE_FILE,
    NULL_TARGET_FILE,
    REPORT_FILE,
];

/// Buckets of the duplicated keys' rows: few (they are usually few rows);
/// a bucket too big for memory is split when reconciled.
const DUP_BUCKET_BITS: u32 = 6;

/// Resolves `--key` and `--tolerance` against the plan: the key columns
/// must be compared columns; a tolerance must name a compared non-key
/// column of numbers.
pub fn shape(plan: &ComparePlan, align: &AlignOptions) -> std::result::Result<KeyedShape, String> {
    let key_names = align.key.clone().unwrap_or_default();
    if key_names.is_empty() {
        return Err("--key needs at least one column".into());
    }
    let find = |name: &str| {
        let exact = plan.columns.iter().position(|c| c.source_name == name);
        exact.or_else(|| {
            plan.columns
                .iter()
                .position(|c| c.source_name.eq_ignore_ascii_case(name))
                .filter(|_| align.ignore_case_names)
        })
    };
    let mut key = Vec::new();
    for name in &key_names {
        let Some(i) = find(name) else {
            let names: Vec<&str> = plan
                .columns
                .iter()
                .map(|c| c.source_name.as_str())
                .collect();
            return Err(format!(
                "--key {name}: not a compared column (compared: {})",
                names.join(", ")
            ));
        };
        if key.contains(&i) {
            return Err(format!("--key {name}: named twice"));
        }
        key.push(i);
    }
    let values: Vec<usize> = (0..plan.columns.len())
        .filter(|i| !key.contains(i))
        .collect();
    let mut tolerances = Vec::new();
    for (name, tol) in &align.tolerances {
        let Some(i) = find(name) else {
            return Err(format!("--tolerance {name}: not a compared column"));
        };
        if key.contains(&i) {
            return Err(format!(
                "--tolerance {name}: a key column is matched exactly, never within a tolerance"
            ));
        }
        let c = &plan.columns[i];
        let numeric = |dt: &arrow::datatypes::DataType| numbers::is_numeric(dt);
        if !numeric(c.source_field.data_type()) || !numeric(c.target_field.data_type()) {
            return Err(format!(
                "--tolerance {name}: only numbers (integers, decimals, floats) take a tolerance; {name} is {} / {}",
                c.source_field.data_type(),
                c.target_field.data_type()
            ));
        }
        let v = values.iter().position(|&x| x == i).unwrap_or(0);
        if tolerances.iter().any(|(x, _)| *x == v) {
            return Err(format!("--tolerance {name}: given twice"));
        }
        tolerances.push((v, *tol));
    }
    if tolerances.len() > 64 {
        return Err("at most 64 columns take a tolerance".into());
    }
    Ok(KeyedShape {
        key,
        values,
        tolerances,
    })
}

/// Compares `source` and `target` by the key in `opts.align.key`.
pub fn diff(source: &Path, target: &Path, opts: &DiffOptions) -> Result<DiffOutcome> {
    let started = Instant::now();
    RunSettings {
        threads: opts.threads,
        memory_limit: opts.memory_limit,
        temp_dir: opts.temp_dir.clone(),
        passes: opts.passes,
        sample: opts.sample,
    }
    .validate()?;
    let (src, tgt, plan) = plan_stage(source, target, &opts.align, &opts.inputs)?;
    let shape = Arc::new(shape(&plan, &opts.align).map_err(ReconError::Usage)?);
    let created = match &opts.output_dir {
        Some(dir) => Some(check_output_dir_for(dir, opts.force, &FILES)?),
        None => None,
    };
    let layout = shape.layout();
    let ctx = size_stage_for(&src, &tgt, opts, layout.bytes())?;
    let sides = scan_sides(&src, &tgt, &plan);
    let bucket_bits = if opts.single_bucket {
        0
    } else {
        ctx.sizing.bucket_bits
    };
    let buckets = 1usize << bucket_bits;

    // Scan: one pass, every row partitioned by its key digest.
    ctx.progress.start_pass(1, 1, Phase::Partition);
    let cfg = ScanConfig {
        threads: ctx.threads,
        batch_size: ctx.batch_size,
        per_column: true,
        cancel: &ctx.cancel,
        progress: &ctx.progress,
    };
    let kc = KeyedConfig {
        shape: shape.clone(),
        bucket_bits,
        chunk_bytes: ctx.sizing.chunk_bytes,
        dir: ctx.dir().to_path_buf(),
        budget: ctx.budget.clone(),
    };
    let scanned = scan(&sides, &cfg, || KeyedSink::new(kc.clone()))?;
    let rows = scanned.rows;
    let parts = KeyedSink::merge(scanned.sinks, bucket_bits)?;
    check_row_counts(&src, &tgt, rows)?;
    let scan_seconds = started.elapsed().as_secs_f64();

    // Reconcile: keys, then the multiset remainders.
    ctx.progress
        .buckets_total
        .store(buckets as u64, Ordering::Relaxed);
    ctx.progress.set_phase(Phase::Reconcile);
    let (found, mut splits) = reconcile_keys(
        &ctx,
        [&src, &tgt],
        &shape,
        &parts.keyed,
        bucket_bits,
        opts.sample,
    )?;
    if found.rows_seen != parts.written {
        return Err(ReconError::Internal(format!(
            "reconciled {:?} keyed rows, expected {:?}",
            found.rows_seen, parts.written
        )));
    }
    let (dups, s1) = reconcile_keyless(
        &ctx,
        [&src, &tgt],
        KeylessBuckets {
            index: &found.index,
            key_base: KeyedFound::dup_base(ranges_of(&ctx, [&src, &tgt])),
            buckets: 1 << DUP_BUCKET_BITS,
            first_level_bits: DUP_BUCKET_BITS,
        },
        0,
        false,
    )?;
    let (nulls, s2) = reconcile_keyless(
        &ctx,
        [&src, &tgt],
        KeylessBuckets {
            index: &parts.null_keys,
            key_base: 0,
            buckets,
            first_level_bits: bucket_bits,
        },
        opts.sample,
        false,
    )?;
    splits += s1 + s2;
    if nulls.rows_seen != parts.null_rows {
        return Err(ReconError::Internal(format!(
            "reconciled {:?} NULL-key rows, expected {:?}",
            nulls.rows_seen, parts.null_rows
        )));
    }
    let reconcile_seconds = started.elapsed().as_secs_f64() - scan_seconds;

    // Evidence.
    ctx.progress.set_phase(Phase::Evidence);
    let ranges = ranges_of(&ctx, [&src, &tgt]);
    let dest = |name: &str| opts.output_dir.as_ref().map(|d| d.join(name));
    let changed = changed_stage(
        &ChangedInputs {
            sides: &sides,
            plan: &plan,
            shape: &shape,
            found: &found,
            ranges,
            sample: opts.sample,
            diff_columns: opts.diff_columns,
            chunk_pairs: chunk_pairs(opts.memory_limit, &src, &tgt),
        },
        dest(CHANGED_FILE).as_deref(),
    )?;
    let missing = |side: Side, name: &str| -> Result<()> {
        let s = &sides[side.index()];
        write_side(
            s.table,
            side,
            &found.index,
            ranges,
            found.counts.missing[side.index()],
            dest(name).as_deref(),
            s,
        )
        .map(|_| ())
    };
    missing(Side::Source, MISSING_IN_TARGET_FILE)?;
    missing(Side::Target, MISSING_IN_SOURCE_FILE)?;
    let remainder = |r: &Reconciled, side: Side, name: &str| -> Result<()> {
        let s = &sides[side.index()];
        if r.stats[side.index()].rows == 0 && opts.output_dir.is_none() {
            return Ok(());
        }
        write_side(
            s.table,
            side,
            &r.evidence,
            r.ranges,
            r.stats[side.index()].rows,
            dest(name).as_deref(),
            s,
        )
        .map(|_| ())
    };
    remainder(&dups, Side::Source, DUPLICATE_SOURCE_FILE)?;
    remainder(&dups, Side::Target, DUPLICATE_TARGET_FILE)?;
    remainder(&nulls, Side::Source, NULL_SOURCE_FILE)?;
    remainder(&nulls, Side::Target, NULL_TARGET_FILE)?;
    let samples = missing_samples(&sides, &found, opts.sample)?;
    let dup_samples = dup_samples(&sides, &plan, &shape, &found)?;
    let evidence_seconds = started.elapsed().as_secs_f64() - scan_seconds - reconcile_seconds;

    // Report: the EXCEPT ALL totals are the keyed rows' plus the remainders'.
    let mut stats = found.stats;
    for (i, st) in stats.iter_mut().enumerate() {
        st.add(&dups.stats[i]);
        st.add(&nulls.stats[i]);
    }
    let value_names: Vec<String> = shape
        .values
        .iter()
        .map(|&v| plan.columns[v].source_name.clone())
        .collect();
    let counts = &found.counts;
    let differing: Vec<String> = value_names
        .iter()
        .zip(&counts.column_mismatches)
        .filter(|(_, n)| **n > 0)
        .map(|(c, _)| c.clone())
        .collect();
    let mut report = Report::multiset(ReportParts {
        plan: &plan,
        inputs: [input_report(&src, rows[0]), input_report(&tgt, rows[1])],
        rows,
        stats,
        samples: Samples {
            limit: opts.sample,
            source_only: samples[0].clone(),
            target_only: samples[1].clone(),
        },
        differing,
        parse_errors: parse_errors_report(&src, &tgt),
        outputs: None,
        settings: Settings {
            threads: opts.threads,
            memory_limit_bytes: (opts.memory_limit != u64::MAX).then_some(opts.memory_limit),
            temp_dir: ctx.temp_base.display().to_string(),
            buckets,
            passes: 1,
            fingerprint_buckets_differing: None,
            second_pass: None,
        },
        elapsed_seconds: started.elapsed().as_secs_f64(),
        phase_seconds: PhaseSeconds {
            scan: scan_seconds,
            reconcile: reconcile_seconds,
            evidence: evidence_seconds,
        },
        spilled_bytes: ctx.budget.spilled_bytes(),
        bucket_splits: splits,
        peak_rss_bytes: memory::peak_rss_bytes(),
    });
    let name_of = |v: usize| value_names[v].clone();
    let side_stats = |r: &Reconciled| SideStats {
        source_only: r.stats[0],
        target_only: r.stats[1],
    };
    let path_of = |name: &str| dest(name).unwrap_or_default().display().to_string();
    report.keyed = Some(KeyedReport {
        key: shape
            .key
            .iter()
            .map(|&k| plan.columns[k].source_name.clone())
            .collect(),
        matched_keys: counts.matched,
        value_mismatch: counts.value_mismatch,
        missing_in_target: counts.missing[0],
        missing_in_source: counts.missing[1],
        duplicate_keys: counts.duplicate_keys,
        null_keys: parts.null_rows[0] + parts.null_rows[1],
        column_mismatches: value_names
            .iter()
            .cloned()
            .zip(counts.column_mismatches.iter().copied())
            .collect(),
        tolerance_matches: counts.tolerance_values.iter().sum(),
        keyed: KeyedDetail {
            tolerances: shape
                .tolerances
                .iter()
                .map(|(v, t)| (name_of(*v), t.describe()))
                .collect(),
            tolerance_matches_by_column: shape
                .tolerances
                .iter()
                .zip(&counts.tolerance_values)
                .map(|((v, _), n)| (name_of(*v), *n))
                .collect(),
            keys_matched_within_tolerance: counts.tolerance_keys,
            max_abs_diff: changed
                .max_diff
                .iter()
                .enumerate()
                .filter_map(|(v, m)| m.map(|m| (name_of(v), m.render())))
                .collect::<BTreeMap<_, _>>(),
            null_key_rows: SideCounts {
                source: parts.null_rows[0],
                target: parts.null_rows[1],
            },
            duplicate_key_rows: side_stats(&dups),
            null_key_unmatched: side_stats(&nulls),
            unattributed_changes: counts.unattributed,
            diff_columns: match opts.diff_columns {
                crate::config::DiffColumns::Changed => "changed".into(),
                crate::config::DiffColumns::All => "all".into(),
            },
            changed_samples: changed.samples,
            duplicate_key_samples: dup_samples,
            outputs: opts.output_dir.as_ref().map(|_| KeyedOutputs {
                changed: path_of(CHANGED_FILE),
                missing_in_target: path_of(MISSING_IN_TARGET_FILE),
                missing_in_source: path_of(MISSING_IN_SOURCE_FILE),
                duplicate_keys_source_only: path_of(DUPLICATE_SOURCE_FILE),
                duplicate_keys_target_only: path_of(DUPLICATE_TARGET_FILE),
                null_keys_source_only: path_of(NULL_SOURCE_FILE),
                null_keys_target_only: path_of(NULL_TARGET_FILE),
                changed_written: changed.written.unwrap_or(0),
            }),
        },
    });
    drop(found);
    drop(ctx);
    opts.progress.set_phase(Phase::Done);
    write_reports(
        &report,
        opts.output_dir.as_deref(),
        opts.report_path.as_deref(),
    )?;
    if let Some(c) = created {
        c.keep();
    }
    let quoted = |t: &Table| {
        t.schema
            .fields()
            .iter()
            .map(|f| is_text(f.data_type()))
            .collect()
    };
    Ok(DiffOutcome {
        report,
        quoted: [quoted(&src), quoted(&tgt)],
    })
}

/// Locator ranges of the evidence, as the multiset diff cuts them.
fn ranges_of(ctx: &RunContext, tables: [&Table; 2]) -> usize {
    let extent = tables[0]
        .total_extent()
        .max(tables[1].total_extent())
        .max(1);
    ((extent - 1) >> ctx.sizing.range_bits) as usize + 1
}

/// Changed keys fetched side by side at once: both sides' rows of a chunk
/// stay in memory, so a chunk gets a quarter of the limit at an estimated
/// row size (from the files' bytes per row, at least 256 bytes).
fn chunk_pairs(limit: u64, src: &Table, tgt: &Table) -> usize {
    let per_row = |t: &Table| {
        let rows = t.rows.unwrap_or(1).max(1);
        (t.bytes_on_disk.saturating_mul(4) / rows).max(256)
    };
    let pair = per_row(src) + per_row(tgt);
    (limit.min(1 << 40) / 4 / pair).clamp(1024, 1 << 20) as usize
}

fn reconcile_keys(
    ctx: &RunContext,
    tables: [&Table; 2],
    shape: &Arc<KeyedShape>,
    index: &crate::engine::spill::SpillIndex,
    bucket_bits: u32,
    sample: usize,
) -> Result<(KeyedFound, u64)> {
    let range_bits = ctx.sizing.range_bits;
    let ranges = ranges_of(ctx, tables);
    let slots = Arc::new(KeyedSlots {
        shape: shape.clone(),
        bases: [tables[0].bases(), tables[1].bases()],
        range_bits,
        ranges,
        chunk_bytes: ctx.sizing.chunk_bytes,
        dir: ctx.dir().to_path_buf(),
        budget: ctx.budget.clone(),
        sample,
        dup_bucket_bits: DUP_BUCKET_BITS,
    });
    // A keyed map entry costs more than a keyless one: fewer fit the share.
    let max_entries = (ctx.sizing.map_max_entries as u64 * MAP_SLOT_BYTES / ENTRY_BYTES as u64)
        .max(1024) as usize;
    let driven = reconcile(
        index,
        1 << bucket_bits,
        &DriverConfig {
            threads: ctx.threads,
            layout: shape.layout(),
            max_entries,
            chunk_bytes: ctx.sizing.chunk_bytes,
            first_level_bits: bucket_bits,
            key_base: 0,
            dir: ctx.dir(),
            budget: ctx.budget.clone(),
            cancel: &ctx.cancel,
            progress: &ctx.progress,
        },
        || Ok(KeyedMatcher::new(slots.clone())),
    )?;
    let found = KeyedMatcher::merge(driven.matchers, sample)?;
    Ok((found, driven.splits))
}

/// Full rows of the sampled missing keys, per side.
fn missing_samples(
    sides: &[ScanSide<'_>; 2],
    found: &KeyedFound,
    sample: usize,
) -> Result<[Vec<SampleReport>; 2]> {
    let mut out: [Vec<SampleReport>; 2] = Default::default();
    if sample == 0 {
        return Ok(out);
    }
    for side in Side::BOTH {
        let t = sides[side.index()].table;
        let names: Vec<String> = t.schema.fields().iter().map(|f| f.name().clone()).collect();
        let locs = &found.missing_samples[side.index()];
        let counts = match side {
            Side::Source => (1, 0),
            Side::Target => (0, 1),
        };
        out[side.index()] = fetch_samples(t, locs)?
            .into_iter()
            .map(|values| SampleReport::new(&names, values, counts.0, counts.1))
            .collect();
    }
    Ok(out)
}

/// Key values and counts of the sampled duplicated keys.
fn dup_samples(
    sides: &[ScanSide<'_>; 2],
    plan: &ComparePlan,
    shape: &KeyedShape,
    found: &KeyedFound,
) -> Result<Vec<DupSample>> {
    let mut out = Vec::with_capacity(found.dup_samples.len());
    for d in &found.dup_samples {
        let side = Side::BOTH[d.side];
        let t = sides[side.index()].table;
        let row = fetch_samples(t, &[d.locator])?
            .into_iter()
            .next()
            .unwrap_or_default();
        let key = shape
            .key
            .iter()
            .map(|&k| {
                let c = &plan.columns[k];
                let idx = match side {
                    Side::Source => c.source_index,
                    Side::Target => c.target_index,
                };
                let v = row
                    .get(idx)
                    .cloned()
                    .flatten()
                    .map_or(serde_json::Value::Null, serde_json::Value::String);
                (c.source_name.clone(), v)
            })
            .collect();
        out.push(DupSample {
            key,
            source_count: d.source_count,
            target_count: d.target_count,
        });
    }
    Ok(out)
}
