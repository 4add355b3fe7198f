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

pub(crate) mod changed;
pub(crate) mod matcher;
pub(crate) mod numbers;
pub(crate) mod sink;

use std::collections::BTreeMap;
use std::sync::atomic::Ordering;
use std::sync::Arc;

use changed::{changed_stage, ChangedInputs, ChangedResult};
use matcher::{KeyCounts, KeyedFound, KeyedMatcher, KeyedSlots, ENTRY_BYTES};
use sink::{KeyedConfig, KeyedShape, KeyedSink, LocatorSet};

use super::multiset::matcher::Reconciled;
use super::multiset::{reconcile_keyless, sample_reports, KeylessBuckets, REPORT_FILE};
use super::options::{DiffOptions, DiffOutcome};
use super::stages::{self, check_row_counts, evidence_ranges};
use crate::config::{AlignOptions, Passes};
use crate::engine::memory::{Records, MAP_SLOT_BYTES};
use crate::engine::reconcile::{reconcile, DriverConfig};
use crate::engine::scan::{scan, ScanConfig, ScanSide};
use crate::engine::spill::SpillIndex;
use crate::engine::{Phase, RunContext};
use crate::error::{ReconError, Result};
use crate::evidence::{fetch_samples, for_both_sides, write_side, Wants};
use crate::input::{Source, Table};
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
pub(crate) fn shape(
    plan: &ComparePlan,
    align: &AlignOptions,
) -> std::result::Result<KeyedShape, String> {
    let key_names = align.key.clone().unwrap_or_default();
    if key_names.is_empty() {
        return Err("`--key` needs at least one column".into());
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
                "`--key {name}`: not a compared column (compared: {})",
                names.join(", ")
            ));
        };
        if key.contains(&i) {
            return Err(format!("`--key {name}`: named twice"));
        }
        key.push(i);
    }
    let values: Vec<usize> = (0..plan.columns.len())
        .filter(|i| !key.contains(i))
        .collect();
    let mut tolerances = Vec::new();
    for (name, tol) in &align.tolerances {
        let Some(i) = find(name) else {
            return Err(format!("`--tolerance {name}`: not a compared column"));
        };
        if key.contains(&i) {
            return Err(format!(
                "`--tolerance {name}`: a key column is matched exactly, never within a tolerance"
            ));
        }
        let c = &plan.columns[i];
        // The class after conversions: a text column cast to decimals takes
        // a tolerance, a number cast to text does not.
        if !numbers::is_numeric_class(&c.class()) {
            return Err(format!(
                "`--tolerance {name}`: only numbers (integers, decimals, floats) take a tolerance; {name} is {} / {}",
                c.source_field.data_type(),
                c.target_field.data_type()
            ));
        }
        let v = values.iter().position(|&x| x == i).unwrap_or(0);
        if tolerances.iter().any(|(x, _)| *x == v) {
            return Err(format!("`--tolerance {name}`: given twice"));
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
pub fn diff(source: &Source, target: &Source, opts: &DiffOptions) -> Result<DiffOutcome> {
    let mut clock = PhaseClock::start();
    opts.validate()?;
    let run = &opts.run;
    if opts.by.is_some() {
        return Err(ReconError::Usage(
            "`--by` with `--key` is not built yet: use `--by` without `--key`, or diff `--quick` `--by`".into(),
        ));
    }
    let (src, tgt, plan) = stages::plan(
        source,
        target,
        &opts.align,
        &opts.inputs,
        run.temp_dir.as_deref(),
    )?;
    let shape = Arc::new(shape(&plan, &opts.align).map_err(ReconError::Usage)?);
    let created = stages::output_dir(opts.output_dir.as_deref(), opts.force, &FILES)?;
    let layout = shape.layout();
    // Keyed map entries are larger than keyless ones: smaller buckets keep
    // a bucket's map in cache (measured on the 10M pair: reconciliation
    // 1.3 s -> 0.9 s). Spill chunks kept in memory bought no time there
    // (2.8 s with none, 2.7 s with 64 MiB, 2.7 s with 256 MiB), so they get
    // a sixteenth of the limit, not a quarter.
    let records = Records {
        bytes: layout.bytes(),
        bucket_rows: 1 << 17,
        in_memory_percent: 6,
    };
    let ctx = stages::size(
        &src,
        &tgt,
        run,
        opts.batch_size,
        &opts.progress,
        &opts.cancel,
        &records,
    )?;
    let sides = stages::scan_sides(&src, &tgt, &plan);
    let bucket_bits = if opts.single_bucket {
        0
    } else {
        ctx.sizing.bucket_bits
    };
    let buckets = 1usize << bucket_bits;

    // Scan and judge the keys: one pass or two.
    let KeyedRun {
        rows,
        found,
        judged,
        null_keys,
        null_rows,
        passes,
        second_pass,
        mut splits,
    } = run_passes(&ctx, &sides, &shape, opts, bucket_bits)?;
    stages::mark_pass(&sides);
    clock.scanned();
    // Keys whose rows differ are judged in the second pass when there is one.
    let judged_ref = judged.as_ref().unwrap_or(&found);
    let mut counts = found.counts.clone();
    // A slim first pass counts no columns: start from zeros.
    counts.column_mismatches.resize(shape.values.len(), 0);
    counts.tolerance_values.resize(shape.tolerances.len(), 0);
    let mut key_stats = found.stats;
    if let Some(j) = &judged {
        counts.merge_judged(&j.counts);
        for (a, b) in key_stats.iter_mut().zip(&j.stats) {
            a.add(b);
        }
    }
    let (dups, s1) = reconcile_keyless(
        &ctx,
        [&src, &tgt],
        KeylessBuckets {
            index: &found.index,
            key_base: KeyedFound::dup_base(evidence_ranges(&ctx, [&src, &tgt])),
            buckets: 1 << DUP_BUCKET_BITS,
            first_level_bits: DUP_BUCKET_BITS,
        },
        run.sample,
        false,
    )?;
    let (nulls, s2) = reconcile_keyless(
        &ctx,
        [&src, &tgt],
        KeylessBuckets {
            index: &null_keys,
            key_base: 0,
            buckets,
            first_level_bits: bucket_bits,
        },
        run.sample,
        false,
    )?;
    splits += s1 + s2;
    if nulls.rows_seen != null_rows {
        return Err(ReconError::Internal(format!(
            "reconciled {:?} NULL-key rows, expected {:?}",
            nulls.rows_seen, null_rows
        )));
    }
    clock.reconciled();

    // Evidence.
    ctx.progress.set_phase(Phase::Evidence);
    let evidence = keyed_evidence(
        &KeyedResults {
            ctx: &ctx,
            sides: &sides,
            plan: &plan,
            shape: &shape,
            found: &found,
            judged: judged_ref,
            counts: &counts,
            dups: &dups,
            nulls: &nulls,
        },
        opts,
    )?;

    // Report: the EXCEPT ALL totals are the keyed rows' plus the remainders'.
    let mut stats = key_stats;
    for (i, st) in stats.iter_mut().enumerate() {
        st.add(&dups.stats[i]);
        st.add(&nulls.stats[i]);
    }
    let value_names: Vec<String> = shape
        .values
        .iter()
        .map(|&v| plan.columns[v].source_name.clone())
        .collect();
    let counts = &counts;
    let differing: Vec<String> = value_names
        .iter()
        .zip(&counts.column_mismatches)
        .filter(|(_, n)| **n > 0)
        .map(|(c, _)| c.clone())
        .collect();
    let mut report = Report::multiset(ReportParts {
        plan: &plan,
        run: RunFacts {
            tables: [&src, &tgt],
            rows,
            settings: run,
            ctx: &ctx,
            clock: &clock,
            buckets,
            passes,
            fingerprint_buckets_differing: None,
            second_pass,
            bucket_splits: splits,
        },
        stats,
        samples: Samples {
            limit: run.sample,
            source_only: evidence.samples[0].clone(),
            target_only: evidence.samples[1].clone(),
        },
        differing,
        pairs: None,
        by_group: None,
        outputs: None,
    });
    report.keyed = Some(keyed_report(
        &shape,
        &plan,
        counts,
        evidence,
        [&dups, &nulls],
        null_rows,
        opts,
    ));
    report.judge(&opts.thresholds);
    drop(found);
    drop(judged);
    drop(ctx);
    opts.progress.set_phase(Phase::Done);
    stages::write_reports(
        &report,
        REPORT_FILE,
        opts.output_dir.as_deref(),
        opts.report_path.as_deref(),
    )?;
    created.keep();
    Ok(DiffOutcome {
        report,
        quoted: [stages::quoted_columns(&src), stages::quoted_columns(&tgt)],
    })
}

/// What keyed mode found, for its evidence stage.
struct KeyedResults<'a> {
    ctx: &'a RunContext,
    sides: &'a [ScanSide<'a>; 2],
    plan: &'a ComparePlan,
    shape: &'a KeyedShape,
    found: &'a KeyedFound,
    /// The keys judged (by the second pass, when there was one).
    judged: &'a KeyedFound,
    counts: &'a KeyCounts,
    /// The EXCEPT ALL remainders of duplicated and of NULL keys.
    dups: &'a Reconciled,
    nulls: &'a Reconciled,
}

/// What keyed mode's evidence stage fetched and wrote.
struct KeyedEvidence {
    changed: ChangedResult,
    /// Rows of keys missing on one side, per side.
    samples: [Vec<SampleReport>; 2],
    dup_samples: Vec<DupSample>,
    dup_rows: SideSamples,
    null_rows: SideSamples,
}

/// The evidence stage: changed keys side by side, then the rows of missing
/// keys and of the duplicated- and NULL-key remainders, written to their
/// files (with an output directory) and sampled.
fn keyed_evidence(r: &KeyedResults<'_>, opts: &DiffOptions) -> Result<KeyedEvidence> {
    let ranges = evidence_ranges(r.ctx, [r.sides[0].table, r.sides[1].table]);
    let dest = |name: &str| opts.output_dir.as_ref().map(|d| d.join(name));
    let changed = changed_stage(
        &ChangedInputs {
            sides: r.sides,
            plan: r.plan,
            shape: r.shape,
            found: r.judged,
            ranges,
            sample: opts.run.sample,
            diff_columns: opts.diff_columns,
            chunk_pairs: chunk_pairs(opts.run.memory_limit, r.sides[0].table, r.sides[1].table),
        },
        dest(CHANGED_FILE).as_deref(),
    )?;
    let missing = |side: Side, name: &str| -> Result<()> {
        let s = &r.sides[side.index()];
        write_side(
            s.table,
            side,
            &r.found.index,
            ranges,
            r.counts.missing[side.index()],
            dest(name).as_deref(),
            s,
            &Wants::default(),
        )
        .map(|_| ())
    };
    let parallel = opts.run.threads > 1;
    for_both_sides(parallel, |side| match side {
        Side::Source => missing(side, MISSING_IN_TARGET_FILE),
        Side::Target => missing(side, MISSING_IN_SOURCE_FILE),
    })?;
    let remainder = |rec: &Reconciled, side: Side, name: &str| -> Result<()> {
        let s = &r.sides[side.index()];
        if rec.stats[side.index()].rows == 0 && opts.output_dir.is_none() {
            return Ok(());
        }
        write_side(
            s.table,
            side,
            &rec.evidence,
            rec.ranges,
            rec.stats[side.index()].rows,
            dest(name).as_deref(),
            s,
            &Wants::default(),
        )
        .map(|_| ())
    };
    for (rec, names) in [
        (r.dups, [DUPLICATE_SOURCE_FILE, DUPLICATE_TARGET_FILE]),
        (r.nulls, [NULL_SOURCE_FILE, NULL_TARGET_FILE]),
    ] {
        for_both_sides(parallel, |side| remainder(rec, side, names[side.index()]))?;
    }
    let samples = missing_samples(r.sides, r.found, opts.run.sample)?;
    let dup_samples = dup_samples(r.sides, r.plan, r.shape, r.found)?;
    let side_samples = |rec: &Reconciled| -> Result<SideSamples> {
        let [source_only, target_only] = sample_reports(r.sides, &rec.samples)?;
        Ok(SideSamples {
            source_only,
            target_only,
        })
    };
    Ok(KeyedEvidence {
        changed,
        samples,
        dup_samples,
        dup_rows: side_samples(r.dups)?,
        null_rows: side_samples(r.nulls)?,
    })
}

/// Keyed mode's section of the report: its categories, per-column counts,
/// tolerances and samples.
fn keyed_report(
    shape: &KeyedShape,
    plan: &ComparePlan,
    counts: &KeyCounts,
    evidence: KeyedEvidence,
    [dups, nulls]: [&Reconciled; 2],
    null_rows: [u64; 2],
    opts: &DiffOptions,
) -> KeyedReport {
    let value_names: Vec<String> = shape
        .values
        .iter()
        .map(|&v| plan.columns[v].source_name.clone())
        .collect();
    let dest = |name: &str| opts.output_dir.as_ref().map(|d| d.join(name));
    let name_of = |v: usize| value_names[v].clone();
    let side_stats = |r: &Reconciled| SideStats {
        source_only: r.stats[0],
        target_only: r.stats[1],
    };
    let path_of = |name: &str| dest(name).unwrap_or_default().display().to_string();
    KeyedReport {
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
        null_keys: null_rows[0] + null_rows[1],
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
            max_abs_diff: evidence
                .changed
                .max_diff
                .iter()
                .enumerate()
                .filter_map(|(v, m)| m.map(|m| (name_of(v), m.render())))
                .collect::<BTreeMap<_, _>>(),
            null_key_rows: SideCounts {
                source: null_rows[0],
                target: null_rows[1],
            },
            duplicate_key_rows: side_stats(dups),
            null_key_unmatched: side_stats(nulls),
            unattributed_changes: counts.unattributed,
            diff_columns: match opts.diff_columns {
                crate::config::DiffColumns::Changed => "changed".into(),
                crate::config::DiffColumns::All => "all".into(),
            },
            changed_samples: evidence.changed.samples,
            duplicate_key_samples: evidence.dup_samples,
            duplicate_key_row_samples: evidence.dup_rows,
            null_key_row_samples: evidence.null_rows,
            outputs: opts.output_dir.as_ref().map(|_| KeyedOutputs {
                changed: path_of(CHANGED_FILE),
                missing_in_target: path_of(MISSING_IN_TARGET_FILE),
                missing_in_source: path_of(MISSING_IN_SOURCE_FILE),
                duplicate_keys_source_only: path_of(DUPLICATE_SOURCE_FILE),
                duplicate_keys_target_only: path_of(DUPLICATE_TARGET_FILE),
                null_keys_source_only: path_of(NULL_SOURCE_FILE),
                null_keys_target_only: path_of(NULL_TARGET_FILE),
                changed_written: evidence.changed.written.unwrap_or(0),
            }),
        },
    }
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

/// What the keyed scan and key judging produced.
struct KeyedRun {
    rows: [u64; 2],
    /// Every key's category; missing rows and duplicated keys' rows in its
    /// index. Without a second pass it also judged the keys whose rows
    /// differ (their changed-key records are in its index).
    found: KeyedFound,
    /// With a second pass: the judged keys whose rows differ.
    judged: Option<KeyedFound>,
    null_keys: SpillIndex,
    null_rows: [u64; 2],
    passes: u8,
    second_pass: Option<SecondPass>,
    splits: u64,
}

/// Reads the tables once or twice and judges every key.
///
/// One pass partitions full records (key digest, row digest, column words,
/// carried numbers) for every row. Two passes (the default for Parquet and
/// IPC) partition slim records (key digest, row digest, locator) first:
/// that settles every key but the ones whose two rows differ, whose
/// locators it collects; the second pass reads only the row groups holding
/// those rows and partitions full records for them alone, so a matching
/// pair never spills column words. When there are more differing keys than
/// memory holds locators for, or values were refused under
/// --max-parse-errors, the second pass reads everything with full records,
/// as one pass would. All three give the same answer.
fn run_passes(
    ctx: &RunContext,
    sides: &[ScanSide<'_>; 2],
    shape: &Arc<KeyedShape>,
    opts: &DiffOptions,
    bucket_bits: u32,
) -> Result<KeyedRun> {
    let tables = [sides[0].table, sides[1].table];
    let two_pass = match opts.run.passes {
        Passes::One => false,
        Passes::Two => true,
        // Parsing text twice costs more than spilling its records once.
        Passes::Auto => !tables[0].format.is_text() && !tables[1].format.is_text(),
    };
    let judge_all = |pass: u8, passes: u8| -> Result<KeyedRun> {
        ctx.progress.start_pass(pass, passes, Phase::Partition);
        let (parts, rows) = partition(ctx, sides, shape, bucket_bits, None)?;
        check_row_counts(tables[0], tables[1], rows)?;
        let (found, splits) = reconcile_keys(
            ctx,
            tables,
            shape,
            &parts.keyed,
            bucket_bits,
            opts.run.sample,
            None,
        )?;
        check_seen(&found, parts.written)?;
        Ok(KeyedRun {
            rows,
            found,
            judged: None,
            null_keys: parts.null_keys,
            null_rows: parts.null_rows,
            passes,
            second_pass: None,
            splits,
        })
    };
    if !two_pass || shape.values.is_empty() {
        return judge_all(1, 1);
    }
    let slim = Arc::new(KeyedShape {
        key: shape.key.clone(),
        values: Vec::new(),
        tolerances: Vec::new(),
    });
    ctx.progress.start_pass(1, 2, Phase::Partition);
    let (parts, rows) = partition(ctx, sides, &slim, bucket_bits, None)?;
    check_row_counts(tables[0], tables[1], rows)?;
    // Two locators and a key digest per differing key, in the share that
    // spill chunks get in memory.
    let most = (ctx.sizing.in_memory_spill / 32 / ctx.threads.max(1)).max(1024);
    let (found, splits) = reconcile_keys(
        ctx,
        tables,
        &slim,
        &parts.keyed,
        bucket_bits,
        opts.run.sample,
        Some(most),
    )?;
    check_seen(&found, parts.written)?;
    let units_total: usize = tables.iter().map(|t| t.block_units().len()).sum();
    if found.candidates.is_empty() {
        return Ok(KeyedRun {
            rows,
            found,
            judged: None,
            null_keys: parts.null_keys,
            null_rows: parts.null_rows,
            passes: 1,
            second_pass: None,
            splits,
        });
    }
    let refusals = tables
        .iter()
        .any(|t| t.parse_errors.count.load(Ordering::Relaxed) > 0);
    if found.overflowed || refusals {
        drop(found);
        drop(parts);
        for t in tables {
            t.parse_errors.reset();
        }
        let mut run = judge_all(2, 2)?;
        if run.rows != rows {
            return Err(stages::inputs_changed(
                tables[0],
                format!(
                    "{rows:?} rows in the first pass, {:?} in the second",
                    run.rows
                ),
            ));
        }
        run.second_pass = Some(SecondPass {
            strategy: "full",
            units_read: units_total,
            units_total,
            rows_read: None,
            decoded_digests: None,
            spilled_in_pass_1: None,
        });
        run.splits += splits;
        return Ok(run);
    }
    // The targeted second pass: only the differing keys' rows.
    let n = found.candidates.len() as u64;
    stages::mark_pass(sides);
    ctx.progress.start_pass(2, 2, Phase::Partition);
    let (second, units_read) = targeted_pass(ctx, sides, shape, &found.candidates, bucket_bits)?;
    if second.written != [n, n] {
        return Err(stages::inputs_changed(
            tables[0],
            format!(
                "the second pass found {:?} of the {n} differing keys' rows",
                second.written
            ),
        ));
    }
    let (judged, s2) = reconcile_keys(
        ctx,
        tables,
        shape,
        &second.keyed,
        bucket_bits,
        opts.run.sample,
        None,
    )?;
    check_seen(&judged, second.written)?;
    let c = &judged.counts;
    if c.missing != [0, 0] || c.duplicate_keys != 0 || c.matched + c.value_mismatch != n {
        return Err(ReconError::Internal(format!(
            "the targeted second pass judged {} of {n} differing keys; rerun with `--passes 1`",
            c.matched + c.value_mismatch
        )));
    }
    Ok(KeyedRun {
        rows,
        found,
        judged: Some(judged),
        null_keys: parts.null_keys,
        null_rows: parts.null_rows,
        passes: 2,
        second_pass: Some(SecondPass {
            strategy: "targeted",
            units_read,
            units_total,
            rows_read: None,
            decoded_digests: None,
            spilled_in_pass_1: None,
        }),
        splits: splits + s2,
    })
}

/// Scans both sides into keyed records of `shape` (only the rows of `only`
/// when given), returning the partitions and the rows read per side.
fn partition(
    ctx: &RunContext,
    sides: &[ScanSide<'_>; 2],
    shape: &Arc<KeyedShape>,
    bucket_bits: u32,
    only: Option<Arc<[LocatorSet; 2]>>,
) -> Result<(sink::KeyedPartitions, [u64; 2])> {
    // The sink reads the value digests of the key columns and of the value
    // columns its records carry words for.
    let columns = sides[0].columns.len();
    let mut keep = vec![false; columns];
    for &c in shape.key.iter().chain(&shape.values) {
        keep[c] = true;
    }
    let cfg = ScanConfig {
        threads: ctx.threads,
        batch_size: ctx.batch_size,
        per_column: Some(keep.into()),
        cancel: &ctx.cancel,
        progress: &ctx.progress,
    };
    let kc = KeyedConfig {
        shape: shape.clone(),
        bucket_bits,
        chunk_bytes: ctx.sizing.chunk_bytes,
        dir: ctx.dir().to_path_buf(),
        budget: ctx.budget.clone(),
        only,
    };
    let scanned = scan(sides, &cfg, || KeyedSink::new(kc.clone()))?;
    let rows = scanned.rows;
    Ok((KeyedSink::merge(scanned.sinks, bucket_bits)?, rows))
}

/// The targeted second pass: full records for the differing keys' rows
/// (`candidates`: key digest, source locator, target locator) alone.
/// Returns them and how many units (row groups, files) were read.
fn targeted_pass(
    ctx: &RunContext,
    sides: &[ScanSide<'_>; 2],
    shape: &Arc<KeyedShape>,
    candidates: &[(u128, u64, u64)],
    bucket_bits: u32,
) -> Result<(sink::KeyedPartitions, usize)> {
    let mut sets: [LocatorSet; 2] = Default::default();
    for &(_, s, t) in candidates {
        sets[0].insert(s);
        sets[1].insert(t);
    }
    // Few rows: fetch just them (a row selection reads only their pages).
    // Many: scan the row groups that hold them, on every thread.
    let tables = [sides[0].table, sides[1].table];
    let n = candidates.len() as u64;
    let read = if n <= FETCH_MOST {
        let sorted = sets.map(|set| {
            let mut v: Vec<u64> = set.into_iter().collect();
            v.sort_unstable();
            v
        });
        let units_read =
            units_with(tables[0], &sorted[0]).len() + units_with(tables[1], &sorted[1]).len();
        (
            fetch_pass(ctx, sides, shape, &sorted, bucket_bits)?,
            units_read,
        )
    } else {
        let sorted = [&sets[0], &sets[1]].map(|set| {
            let mut v: Vec<u64> = set.iter().copied().collect();
            v.sort_unstable();
            v
        });
        let [u0, u1] = [
            units_with(tables[0], &sorted[0]),
            units_with(tables[1], &sorted[1]),
        ];
        let units_read = u0.len() + u1.len();
        let targeted = [sides[0].only(u0), sides[1].only(u1)];
        (
            partition(ctx, &targeted, shape, bucket_bits, Some(Arc::new(sets)))?.0,
            units_read,
        )
    };
    Ok(read)
}

/// Differing keys up to which the second pass fetches their rows by
/// locator (one thread, only their pages) rather than scanning the row
/// groups that hold them (every thread, whole row groups).
const FETCH_MOST: u64 = 200_000;

/// The second pass by fetch: reads the rows at `locators` (per side,
/// sorted), digests them as the scan would, and partitions their full
/// keyed records.
fn fetch_pass(
    ctx: &RunContext,
    sides: &[ScanSide<'_>; 2],
    shape: &Arc<KeyedShape>,
    locators: &[Vec<u64>; 2],
    bucket_bits: u32,
) -> Result<sink::KeyedPartitions> {
    use crate::digest::RowEncoder;
    use crate::engine::scan::{Batch, RowSink};
    use crate::input::{Fetcher, Locators};
    let mut sink = KeyedSink::new(KeyedConfig {
        shape: shape.clone(),
        bucket_bits,
        chunk_bytes: ctx.sizing.chunk_bytes,
        dir: ctx.dir().to_path_buf(),
        budget: ctx.budget.clone(),
        only: None,
    });
    let mut encoder = RowEncoder::new();
    let (mut digests, mut per_column) = (Vec::new(), Vec::new());
    for side in Side::BOTH {
        let s = &sides[side.index()];
        let locs = &locators[side.index()];
        let mut next = 0usize;
        s.table.fetch(&mut Fetcher::default(), locs, |batch| {
            if ctx.cancel.is_cancelled() {
                return Err(ReconError::Interrupted);
            }
            let n = batch.num_rows();
            let prepared = s.prepare_fetched(&batch)?;
            digests.clear();
            for c in per_column.iter_mut() {
                Vec::clear(c);
            }
            encoder
                .digests_with_columns(&prepared, &mut digests, Some(&mut per_column))
                .map_err(|m| ReconError::input(&s.table.path, m))?;
            let here = locs
                .get(next..next + n)
                .ok_or_else(|| ReconError::Internal("fetched more rows than asked for".into()))?;
            sink.rows(
                side,
                &Batch {
                    digests: &digests,
                    columns: &per_column,
                    arrays: &prepared,
                    locators: Locators::List(here),
                },
            )?;
            next += n;
            Ok(())
        })?;
    }
    sink.finish()?;
    KeyedSink::merge(vec![sink], bucket_bits)
}

fn check_seen(found: &KeyedFound, written: [u64; 2]) -> Result<()> {
    if found.rows_seen != written {
        return Err(ReconError::Internal(format!(
            "reconciled {:?} keyed rows, expected {:?}",
            found.rows_seen, written
        )));
    }
    Ok(())
}

/// The (file, block) units of `table` that hold any of `sorted` locators.
fn units_with(table: &Table, sorted: &[u64]) -> std::collections::HashSet<(usize, usize)> {
    let mut out = std::collections::HashSet::new();
    for u in table.block_units() {
        if let crate::input::Unit::Block {
            file,
            block,
            first,
            rows,
        } = u
        {
            let lo = crate::input::pack(file, first);
            let hi = crate::input::pack(file, first + rows);
            let at = sorted.partition_point(|&l| l < lo);
            if sorted.get(at).is_some_and(|&l| l < hi) {
                out.insert((file, block));
            }
        }
    }
    out
}

fn reconcile_keys(
    ctx: &RunContext,
    tables: [&Table; 2],
    shape: &Arc<KeyedShape>,
    index: &SpillIndex,
    bucket_bits: u32,
    sample: usize,
    collect: Option<usize>,
) -> Result<(KeyedFound, u64)> {
    ctx.progress
        .buckets_total
        .store(1 << bucket_bits, Ordering::Relaxed);
    ctx.progress.buckets_done.store(0, Ordering::Relaxed);
    ctx.progress.set_phase(Phase::Reconcile);
    let range_bits = ctx.sizing.range_bits;
    let ranges = evidence_ranges(ctx, tables);
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
        collect,
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
