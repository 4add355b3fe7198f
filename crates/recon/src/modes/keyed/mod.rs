//! The keyed diff (`--key`): rows are matched by business key, and every
//! key lands in exactly one category: matched, value_mismatch,
//! missing_in_target, missing_in_source, duplicate_key (more than once on
//! either side; its rows are diffed as a multiset, never fanned out) or, for
//! rows with a NULL in a key column, null_key (diffed as a multiset too).
//!
//! The stages are the multiset diff's, with keyed records:
//! 1. **plan**: the multiset plan, then the key and tolerance columns
//!    resolved against it (`shape`);
//! 2. **scan**: one pass; each row's key digest, row digest, column words
//!    and carried numbers are partitioned by key digest (`sink`);
//! 3. **reconcile**: each bucket's keys are judged (`matcher`); the rows
//!    of duplicated and NULL keys are then reconciled as multisets;
//! 4. **evidence**: changed keys are fetched back by locator, both sides
//!    together (`changed`); missing rows and the multiset remainders are
//!    written like keyless evidence;
//! 5. **report**: categories, per-column counts, samples.

pub(crate) mod changed;
pub(crate) mod matcher;
pub(crate) mod numbers;
pub(crate) mod sieve;
pub(crate) mod sink;
pub(crate) mod tags;

use std::collections::BTreeMap;
use std::sync::atomic::Ordering;
use std::sync::Arc;

use changed::{changed_stage, ChangedInputs, ChangedResult};
use matcher::{KeyCounts, KeyedFound, KeyedMatcher, KeyedSlots, ENTRY_BYTES};
use sieve::{SieveSink, Sieved};
use sink::{Keep, KeyedConfig, KeyedShape, KeyedSink};
use tags::KeySums;
use tags::TagSet;

use super::multiset::matcher::Reconciled;
use super::multiset::{reconcile_keyless, sample_reports, KeylessBuckets, REPORT_FILE};
use super::options::{DiffOptions, DiffOutcome};
use super::stages::{self, check_row_counts, evidence_ranges};
use crate::config::{AlignOptions, Passes};
use crate::digest::{Fingerprint, FP_BUCKETS};
use crate::engine::memory::{Records, MAP_SLOT_BYTES};
use crate::engine::partition::{slices_to_read, SliceFilters};
use crate::engine::reconcile::{reconcile, DriverConfig};
use crate::engine::scan::{scan, ColumnDigests, ScanConfig, ScanSide};
use crate::engine::spill::SpillIndex;
use crate::engine::{Phase, RunContext};
use crate::error::{ReconError, Result};
use crate::evidence::{fetch_samples, for_both_sides, write_side, Wants};
use crate::input::{Source, Table};
use crate::plan::ComparePlan;
use crate::report::*;
use crate::side::Side;

/// Names of the files keyed mode writes into `--output`.
pub(crate) const CHANGED_FILE: &str = "changed.parquet";
pub(crate) const MISSING_IN_TARGET_FILE: &str = "missing_in_target.parquet";
pub(crate) const MISSING_IN_SOURCE_FILE: &str = "missing_in_source.parquet";
pub(crate) const DUPLICATE_SOURCE_FILE: &str = "duplicate_keys_source_only.parquet";
pub(crate) const DUPLICATE_TARGET_FILE: &str = "duplicate_keys_target_only.parquet";
pub(crate) const NULL_SOURCE_FILE: &str = "null_keys_source_only.parquet";
pub(crate) const NULL_TARGET_FILE: &str = "null_keys_target_only.parquet";

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
pub(crate) fn diff(source: &Source, target: &Source, opts: &DiffOptions) -> Result<DiffOutcome> {
    let mut clock = PhaseClock::start();
    opts.validate()?;
    let run = &opts.run;
    if opts.by.is_some() {
        return Err(ReconError::Usage(
            "`--by` with `--key` is not built yet: use `--by` without `--key`, or diff `--quick` `--by`".into(),
        ));
    }
    crate::input::set_open_budget(run.memory_limit);
    let (src, tgt, plan) = stages::plan(
        source,
        target,
        &opts.align,
        &opts.inputs,
        run.temp_dir.as_deref(),
    )?;
    let shape = Arc::new(shape(&plan, &opts.align).map_err(ReconError::Usage)?);
    let created = stages::output_dir(opts.output_dir.as_deref(), opts.force, &FILES)?;
    let records = keyed_records(&shape);
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
        null_keys,
        null_rows,
        passes,
        differing_buckets,
        second_pass,
        mut splits,
    } = run_passes(&ctx, &sides, &shape, opts, bucket_bits)?;
    stages::mark_pass(&sides);
    clock.scanned();
    let mut counts = found.counts.clone();
    // With no bucket reconciled, no worker counted columns: start from zeros.
    counts.column_mismatches.resize(shape.values.len(), 0);
    counts.tolerance_values.resize(shape.tolerances.len(), 0);
    let key_stats = found.stats;
    let (dups, nulls, s) = reconcile_remainders(
        &ctx,
        [&src, &tgt],
        &found,
        (&null_keys, null_rows),
        bucket_bits,
        run.sample,
    )?;
    splits += s;
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
    let counts = &counts;
    let differing = differing_columns(&shape, &plan, counts);
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
            fingerprint_buckets_differing: differing_buckets,
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

/// The size of keyed records, and how the memory limit is shared for them.
fn keyed_records(shape: &KeyedShape) -> Records {
    // Keyed map entries are larger than keyless ones: smaller buckets keep
    // a bucket's map in cache (measured on the 10M pair: reconciliation
    // 1.3 s -> 0.9 s). Spill chunks kept in memory bought no time there
    // (2.8 s with none, 2.7 s with 64 MiB, 2.7 s with 256 MiB), so they get
    // a sixteenth of the limit, not a quarter.
    Records {
        bytes: shape.layout().bytes(),
        bucket_rows: 1 << 17,
        in_memory_percent: 6,
    }
}

/// The value columns (source names) that differ in at least one changed key.
fn differing_columns(shape: &KeyedShape, plan: &ComparePlan, counts: &KeyCounts) -> Vec<String> {
    shape
        .values
        .iter()
        .zip(&counts.column_mismatches)
        .filter(|(_, n)| **n > 0)
        .map(|(&v, _)| plan.columns[v].source_name.clone())
        .collect()
}

/// The rows keyed matching leaves to multisets, each reconciled as EXCEPT
/// ALL among themselves: duplicated keys' rows (by key, in few buckets) and
/// NULL keys' rows (by row digest); and the buckets split doing so.
fn reconcile_remainders(
    ctx: &RunContext,
    tables: [&Table; 2],
    found: &KeyedFound,
    (null_keys, null_rows): (&SpillIndex, [u64; 2]),
    bucket_bits: u32,
    sample: usize,
) -> Result<(Reconciled, Reconciled, u64)> {
    let (dups, s1) = reconcile_keyless(
        ctx,
        tables,
        KeylessBuckets {
            index: &found.index,
            key_base: KeyedFound::dup_base(evidence_ranges(ctx, tables)),
            buckets: 1 << DUP_BUCKET_BITS,
            first_level_bits: DUP_BUCKET_BITS,
        },
        sample,
        false,
    )?;
    let (nulls, s2) = reconcile_keyless(
        ctx,
        tables,
        KeylessBuckets {
            index: null_keys,
            key_base: 0,
            buckets: 1 << bucket_bits,
            first_level_bits: bucket_bits,
        },
        sample,
        false,
    )?;
    if nulls.rows_seen != null_rows {
        return Err(ReconError::Internal(format!(
            "reconciled {:?} NULL-key rows, expected {:?}",
            nulls.rows_seen, null_rows
        )));
    }
    Ok((dups, nulls, s1 + s2))
}

/// What keyed mode found, for its evidence stage.
struct KeyedResults<'a> {
    ctx: &'a RunContext,
    sides: &'a [ScanSide<'a>; 2],
    plan: &'a ComparePlan,
    shape: &'a KeyedShape,
    found: &'a KeyedFound,
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
            found: r.found,
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
    /// Every key's category; changed and missing keys and duplicated keys'
    /// rows in its index.
    found: KeyedFound,
    null_keys: SpillIndex,
    null_rows: [u64; 2],
    passes: u8,
    /// Fingerprint buckets that differed in pass 1 of two.
    differing_buckets: Option<usize>,
    second_pass: Option<SecondPass>,
    splits: u64,
}

/// Wanted tags up to which the second pass reads only the batches whose
/// filters may hold them (each is looked up in every batch's filter); past
/// it, whole buckets are read.
const TAGS_MOST: usize = 1 << 14;

/// Reads the tables once or twice and judges every key.
///
/// One pass partitions full records (key digest, row digest, column words,
/// carried numbers) for every row. Two passes (the default for Parquet and
/// IPC) first sum each key bucket ([`sieve`]), so a matching pair spills
/// nothing but the source's 8-byte key words. The second pass partitions
/// full records only for the keys that differ and the duplicated ones,
/// reading only the batches that may hold them; when a bucket holds more
/// than one differing key (or there are too many), it reads everything and
/// partitions whole buckets. With values refused under --max-parse-errors,
/// the second pass is the one-pass diff. All give the same answer; the
/// report says which ran.
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
    let units_total: usize = tables.iter().map(|t| t.scan_units().len()).sum();
    let stage = KeyedPasses {
        ctx,
        sides,
        shape,
        bucket_bits,
        sample: opts.run.sample,
    };
    if !two_pass {
        return stage.judge_all(1, 1);
    }
    ctx.progress.start_pass(1, 2, Phase::Fingerprint);
    let source_rows = tables[0].rows.unwrap_or(0);
    let total_rows = source_rows + tables[1].rows.unwrap_or(0);
    // Pass 1 spills the source's key digests, 16 bytes a row.
    ctx.budget.set_expected(
        source_rows
            .saturating_mul(16)
            .saturating_sub(ctx.sizing.in_memory_spill as u64),
    );
    let (sieved, rows) = sieve_pass(ctx, sides, shape, bucket_bits, total_rows)?;
    check_row_counts(tables[0], tables[1], rows)?;
    // Values refused under --max-parse-errors were counted in pass 1; a
    // second pass over some rows would count theirs again.
    if tables
        .iter()
        .any(|t| t.parse_errors.count.load(Ordering::Relaxed) > 0)
    {
        drop(sieved);
        for t in tables {
            t.parse_errors.reset();
        }
        stages::mark_pass(sides);
        let mut run = stage.judge_all(2, 2)?;
        if run.rows != rows {
            return Err(stages::inputs_changed(
                tables[0],
                format!(
                    "{rows:?} rows in the first pass, {:?} in the second",
                    run.rows
                ),
            ));
        }
        run.second_pass = Some(SecondPass::full(units_total));
        return Ok(run);
    }
    let Sieved {
        fingerprints,
        filters,
        sums,
        words,
        null_keys,
        keyed_rows,
        null_rows,
    } = sieved;
    let differ: Vec<bool> = (0..FP_BUCKETS)
        .map(|b| fingerprints[0][b] != fingerprints[1][b])
        .collect();
    let differing = differ.iter().filter(|d| **d).count();
    // Duplicated keys, by key digest; outside the keys read again, each has
    // as many copies on both sides, all agreeing.
    let repeated = sieve::repeated_keys(&words, 1 << bucket_bits, ctx.threads)?;
    drop(words);
    let sample = opts.run.sample;
    // The duplicated keys shown as samples are read again for their rows:
    // the smallest key digests, as the matcher picks among keys whose
    // copies agree.
    let shown = &repeated[..repeated.len().min(sample)];
    let (mut found, splits, second_pass, written, read_again) =
        if differing == 0 && shown.is_empty() {
            let empty = SpillIndex::merge(Vec::new(), 2 << bucket_bits)?;
            let (found, splits) = reconcile_keys(ctx, tables, shape, &empty, bucket_bits, sample)?;
            (found, splits, None, [0, 0], Keep::Tags(Arc::default()))
        } else {
            let again = stage.read_again(differ, shown, &sums, filters, &fingerprints, rows)?;
            let (found, splits, second_pass, written, kept) = again;
            (found, splits, Some(second_pass), written, kept)
        };
    // The duplicated keys not read again (their copies agree, as many on
    // each side), and their source rows.
    let agreeing = |was_read: &dyn Fn(u64) -> bool| -> (u64, u64) {
        let rest = repeated.iter().filter(|(k, _)| !was_read(tags::tag_of(*k)));
        rest.fold((0, 0), |(keys, rows), (_, n)| (keys + 1, rows + n))
    };
    let (agreeing_keys, agreeing_rows) = match read_again {
        Keep::All => (0, 0),
        Keep::Tags(tags) => agreeing(&|t| tags.contains(&t)),
        Keep::Buckets(marked) => agreeing(&|t| marked[tags::bucket_of_tag(t)]),
    };
    found.counts.duplicate_keys += agreeing_keys;
    // Every other source row not read again is a key seen once on each side
    // with equal rows.
    let matched = keyed_rows[0]
        .checked_sub(written[0] + agreeing_rows)
        .ok_or_else(|| {
            stages::inputs_changed(
                tables[0],
                format!("{keyed_rows:?} keyed rows in the first pass, {written:?} read again"),
            )
        })?;
    found.counts.matched += matched;
    Ok(KeyedRun {
        rows,
        found,
        null_keys,
        null_rows,
        passes: if second_pass.is_some() { 2 } else { 1 },
        differing_buckets: Some(differing),
        second_pass,
        splits,
    })
}

/// What the keyed passes share: the run, the sides, the key's shape, the
/// spill's bucket bits and the sample size.
struct KeyedPasses<'a, 'b> {
    ctx: &'a RunContext,
    sides: &'a [ScanSide<'b>; 2],
    shape: &'a Arc<KeyedShape>,
    bucket_bits: u32,
    sample: usize,
}

impl KeyedPasses<'_, '_> {
    fn tables(&self) -> [&Table; 2] {
        [self.sides[0].table, self.sides[1].table]
    }

    /// Partitions every keyed record and judges them all (pass `pass` of
    /// `passes`).
    fn judge_all(&self, pass: u8, passes: u8) -> Result<KeyedRun> {
        let (ctx, tables) = (self.ctx, self.tables());
        ctx.progress.start_pass(pass, passes, Phase::Partition);
        let keep = Keep::All;
        let (parts, rows) = partition(ctx, self.sides, self.shape, self.bucket_bits, keep)?;
        check_row_counts(tables[0], tables[1], rows)?;
        let (found, splits) = reconcile_keys(
            ctx,
            tables,
            self.shape,
            &parts.keyed,
            self.bucket_bits,
            self.sample,
        )?;
        check_seen(&found, parts.written)?;
        Ok(KeyedRun {
            rows,
            found,
            null_keys: parts.null_keys,
            null_rows: parts.null_rows,
            passes,
            differing_buckets: None,
            second_pass: None,
            splits,
        })
    }

    /// Pass 2 of two: the keys of the differing buckets (`differ`) and the
    /// duplicated keys `shown` as samples, read again and judged. Targeted
    /// when each differing bucket decodes to one key tag and they are few,
    /// else the whole buckets. What was found, the splits, the pass's
    /// report, the records written per side and what the pass kept.
    fn read_again(
        &self,
        differ: Vec<bool>,
        shown: &[(u128, u64)],
        sums: &[Vec<KeySums>; 2],
        filters: Option<SliceFilters>,
        fingerprints: &[Vec<Fingerprint>; 2],
        rows: [u64; 2],
    ) -> Result<(KeyedFound, u64, SecondPass, [u64; 2], Keep)> {
        let (ctx, sides, shape, bucket_bits) = (self.ctx, self.sides, self.shape, self.bucket_bits);
        let tables = self.tables();
        let units_total: usize = tables.iter().map(|t| t.scan_units().len()).sum();
        // The tag of the one differing key of each differing bucket.
        let decoded: Option<Vec<u64>> = (0..FP_BUCKETS)
            .filter(|&b| differ[b])
            .map(|b| tags::decode(b, &sums[0][b], &sums[1][b]))
            .collect();
        stages::mark_pass(sides);
        ctx.progress.start_pass(2, 2, Phase::Partition);
        let shown_tags = shown.iter().map(|(k, _)| tags::tag_of(*k));
        let targeted = match decoded {
            Some(tags) if tags.len() + shown.len() <= TAGS_MOST => {
                let tags: TagSet = tags.into_iter().chain(shown_tags.clone()).collect();
                targeted_pass(ctx, sides, shape, bucket_bits, tags, filters, fingerprints)?
            }
            _ => None,
        };
        let (parts, second_pass, kept) = match targeted {
            Some((parts, second, tags)) => (parts, second, Keep::Tags(tags)),
            None => {
                let mut marked = differ;
                for t in shown_tags {
                    marked[tags::bucket_of_tag(t)] = true;
                }
                let marked = Arc::new(marked);
                let parts = whole_buckets_pass(
                    ctx,
                    sides,
                    shape,
                    bucket_bits,
                    marked.clone(),
                    fingerprints,
                    rows,
                )?;
                let second = SecondPass::full(units_total);
                (parts, second, Keep::Buckets(marked))
            }
        };
        let (found, splits) =
            reconcile_keys(ctx, tables, shape, &parts.keyed, bucket_bits, self.sample)?;
        check_seen(&found, parts.written)?;
        Ok((found, splits, second_pass, parts.written, kept))
    }
}

/// Pass 1 of two: the sieve sums of both sides ([`sieve`]).
fn sieve_pass(
    ctx: &RunContext,
    sides: &[ScanSide<'_>; 2],
    shape: &Arc<KeyedShape>,
    bucket_bits: u32,
    total_rows: u64,
) -> Result<(Sieved, [u64; 2])> {
    let cfg = scan_config(ctx, sides, shape, false);
    let kc = keyed_config(ctx, shape, bucket_bits, Keep::All);
    // The filters take what keyless mode gives them, a quarter of the
    // limit, out of the maps' share: no map is built during the scans.
    let maps_share = ctx.sizing.map_max_entries as u64 * MAP_SLOT_BYTES * ctx.threads as u64;
    let bits = stages::filter_bits_within(maps_share / 2, total_rows);
    let scanned = scan(sides, &cfg, || SieveSink::new(kc.clone(), bits))?;
    Ok((SieveSink::merge(scanned.sinks, bucket_bits)?, scanned.rows))
}

/// The targeted second pass: full records for the rows of the keys in
/// `tags`, from only the batches whose filters may hold them. `None` when
/// those rows do not account for pass 1's differences (a bucket decoded to
/// a wrong tag).
fn targeted_pass(
    ctx: &RunContext,
    sides: &[ScanSide<'_>; 2],
    shape: &Arc<KeyedShape>,
    bucket_bits: u32,
    tags: TagSet,
    filters: Option<SliceFilters>,
    fingerprints: &[Vec<Fingerprint>; 2],
) -> Result<Option<(sink::KeyedPartitions, SecondPass, Arc<TagSet>)>> {
    let units_total: usize = sides.iter().map(|s| s.table.scan_units().len()).sum();
    let probes: Vec<u128> = tags.iter().map(|&t| tags::tag_probe(t)).collect();
    let (read, units_read, rows_read) = match filters {
        Some(filters) => {
            let (only, rows_read) =
                slices_to_read(&filters, |f| probes.iter().any(|&p| f.may_contain(p)));
            let units = only[0].len() + only[1].len();
            let [s, t] = only;
            (
                [sides[0].only_slices(s), sides[1].only_slices(t)],
                units,
                Some(rows_read),
            )
        }
        None => (sides.clone(), units_total, None),
    };
    let wanted = tags.len();
    let tags = Arc::new(tags);
    let (parts, _) = partition(ctx, &read, shape, bucket_bits, Keep::Tags(tags.clone()))?;
    if !sieve::accounts_for(fingerprints, &parts.spilled) {
        return Ok(None);
    }
    Ok(Some((
        parts,
        SecondPass {
            strategy: "targeted",
            units_read,
            units_total,
            rows_read,
            decoded_digests: Some(wanted),
            spilled_in_pass_1: None,
            undecoded_buckets: None,
            full_because: None,
        },
        tags,
    )))
}

/// The second pass over whole buckets: reads everything, and partitions
/// full records for the rows of the `marked` fingerprint buckets.
fn whole_buckets_pass(
    ctx: &RunContext,
    sides: &[ScanSide<'_>; 2],
    shape: &Arc<KeyedShape>,
    bucket_bits: u32,
    marked: Arc<Vec<bool>>,
    fingerprints: &[Vec<Fingerprint>; 2],
    rows: [u64; 2],
) -> Result<sink::KeyedPartitions> {
    let table = sides[0].table;
    let seen = [0, 1].map(|s| {
        (0..FP_BUCKETS)
            .filter(|&b| marked[b])
            .map(|b| fingerprints[s][b].count)
            .sum::<u64>()
    });
    let (parts, second_rows) = partition(ctx, sides, shape, bucket_bits, Keep::Buckets(marked))?;
    if second_rows != rows {
        return Err(stages::inputs_changed(
            table,
            format!("{rows:?} rows in the first pass, {second_rows:?} in the second"),
        ));
    }
    if parts.written != seen || !sieve::accounts_for(fingerprints, &parts.spilled) {
        return Err(stages::inputs_changed(
            table,
            "the second pass found other rows in the differing buckets",
        ));
    }
    Ok(parts)
}

/// The scan settings of a keyed pass: per-column digests of the key
/// columns, and of the value columns when the records carry their words
/// (the sieve needs only the key's: without the others' lists per batch,
/// the 10M drifting pair took 0.92× the time).
fn scan_config<'c>(
    ctx: &'c RunContext,
    sides: &[ScanSide<'_>; 2],
    shape: &KeyedShape,
    values: bool,
) -> ScanConfig<'c> {
    let mut keep = vec![false; sides[0].columns.len()];
    let values = if values { &shape.values[..] } else { &[] };
    for &c in shape.key.iter().chain(values) {
        keep[c] = true;
    }
    ScanConfig {
        threads: ctx.threads,
        batch_size: ctx.batch_size,
        per_column: ColumnDigests::Lists(keep.into()),
        cancel: &ctx.cancel,
        progress: &ctx.progress,
    }
}

fn keyed_config(
    ctx: &RunContext,
    shape: &Arc<KeyedShape>,
    bucket_bits: u32,
    keep: Keep,
) -> KeyedConfig {
    KeyedConfig {
        shape: shape.clone(),
        bucket_bits,
        chunk_bytes: ctx.sizing.chunk_bytes,
        dir: ctx.dir().to_path_buf(),
        budget: ctx.budget.clone(),
        keep,
    }
}

/// Scans both sides into keyed records of `shape` (the rows `keep` keeps),
/// returning the partitions and the rows read per side.
fn partition(
    ctx: &RunContext,
    sides: &[ScanSide<'_>; 2],
    shape: &Arc<KeyedShape>,
    bucket_bits: u32,
    keep: Keep,
) -> Result<(sink::KeyedPartitions, [u64; 2])> {
    let cfg = scan_config(ctx, sides, shape, true);
    let kc = keyed_config(ctx, shape, bucket_bits, keep);
    let scanned = scan(sides, &cfg, || KeyedSink::new(kc.clone()))?;
    let rows = scanned.rows;
    Ok((KeyedSink::merge(scanned.sinks, bucket_bits)?, rows))
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

fn reconcile_keys(
    ctx: &RunContext,
    tables: [&Table; 2],
    shape: &Arc<KeyedShape>,
    index: &SpillIndex,
    bucket_bits: u32,
    sample: usize,
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
