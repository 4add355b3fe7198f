//! The multiset diff (keyless): each table is a multiset of rows and the
//! answer is `EXCEPT ALL` in both directions.
//!
//! [`diff`] is a sequence of stages; those every mode shares are in
//! [`super::stages`], the keyless ones here:
//! 1. **plan**: open both tables (footers only) and plan the compared
//!    columns; any schema problem fails here, before a data page is read;
//! 2. **size**: create the run context (temp dir, memory division);
//! 3. **scan**: one pass (partition every record) or two (fingerprint
//!    buckets, then partition only the differing ones);
//! 4. **reconcile**: match each bucket pair with the EXCEPT ALL matcher;
//! 5. **evidence**: fetch samples and, with an output directory, every
//!    unmatched row; name the drifting columns;
//! 6. **report**: assemble and write the report.

pub(crate) mod matcher;
pub(crate) mod pairing;

use std::collections::HashSet;
use std::path::Path;
use std::sync::atomic::Ordering;
use std::sync::Arc;

use matcher::{EvidenceSlots, MultisetMatcher, Reconciled};

use super::options::{DiffOptions, DiffOutcome};
use super::stages::{self, evidence_ranges};
use crate::config::Passes;
use crate::digest::iblt::peel;
use crate::digest::{BucketDifferences, Difference, Fingerprint};
use crate::engine::memory::Records;
use crate::engine::partition::{
    slices_to_read, DigestSet, FingerprintSink, Fingerprinted, PartitionConfig, PartitionSink,
    SliceFilters,
};
use crate::engine::probe::{DriftProbe, ProbeSink};
use crate::engine::reconcile::{reconcile, DriverConfig};
use crate::engine::record::Keyless;
use crate::engine::scan::{scan, ColumnDigests, ScanConfig, ScanSide};
use crate::engine::spill::SpillIndex;
use crate::engine::{Phase, RunContext};
use crate::error::{ReconError, Result};
use crate::evidence::{fetch_samples, for_both_sides, write_side, EvidencePass, Wants};
use crate::input::{Source, Table, Unit};
use crate::report::*;
use crate::side::Side;

/// Names of the files written into `--output`.
pub(crate) const SOURCE_ONLY_FILE: &str = "source_only.parquet";
pub(crate) const TARGET_ONLY_FILE: &str = "target_only.parquet";
pub(crate) const REPORT_FILE: &str = "report.json";
/// Every file the multiset diff writes into `--output`.
pub(crate) const FILES: [&str; 3] = [SOURCE_ONLY_FILE, TARGET_ONLY_FILE, REPORT_FILE];

/// Compares `source` and `target` as multisets of rows.
pub fn diff(source: &Source, target: &Source, opts: &DiffOptions) -> Result<DiffOutcome> {
    let mut clock = PhaseClock::start();
    opts.validate()?;
    let run = &opts.run;
    crate::input::set_open_budget(run.memory_limit);
    let (src, tgt, plan) = stages::plan(
        source,
        target,
        &opts.align,
        &opts.inputs,
        run.temp_dir.as_deref(),
    )?;
    let created = stages::output_dir(opts.output_dir.as_deref(), opts.force, &FILES)?;
    let records = Records::keyless(Keyless::LAYOUT.bytes());
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
    let first_level_bits = if opts.single_bucket {
        0
    } else {
        ctx.sizing.bucket_bits
    };
    let scanned = scan_stage(&ctx, &sides, run.passes, first_level_bits)?;
    stages::check_row_counts(&src, &tgt, scanned.rows)?;
    stages::mark_pass(&sides);
    clock.scanned();

    let (found, bucket_splits) =
        reconcile_stage(&ctx, [&src, &tgt], &scanned, run.sample, first_level_bits)?;
    clock.reconciled();
    let ScanResult {
        rows,
        passes,
        differing_buckets,
        second_pass,
        ..
    } = scanned;

    ctx.progress.set_phase(Phase::Evidence);
    let evidence = evidence_stage(&sides, &found, opts)?;

    let mut report = Report::multiset(ReportParts {
        plan: &plan,
        run: RunFacts {
            tables: [&src, &tgt],
            rows,
            settings: run,
            ctx: &ctx,
            clock: &clock,
            buckets: 1 << first_level_bits,
            passes,
            fingerprint_buckets_differing: differing_buckets,
            second_pass,
            bucket_splits,
        },
        stats: found.stats,
        samples: Samples {
            limit: run.sample,
            source_only: evidence.samples[0].clone(),
            target_only: evidence.samples[1].clone(),
        },
        differing: evidence.differing,
        pairs: evidence.pairs,
        by_group: evidence.by_group,
        outputs: evidence.outputs,
    });
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

/// What the scan stage produced.
pub(crate) struct ScanResult {
    /// Records under key `side * buckets + bucket`.
    pub index: SpillIndex,
    pub buckets: usize,
    /// Rows compared per side.
    pub rows: [u64; 2],
    /// Reads of the inputs: 1 or 2.
    pub passes: u8,
    /// With two passes: how many fingerprint buckets differed.
    pub differing_buckets: Option<usize>,
    /// With two passes and differing buckets: how the second read went.
    pub second_pass: Option<SecondPass>,
    /// Records the index holds per side.
    pub partitioned: [u64; 2],
    /// With a targeted second pass: the decoded differences (digest,
    /// source − target), which reconciliation must reproduce.
    pub decoded: Option<Vec<Difference>>,
}

/// What pass 1 of two produced.
struct FirstPass {
    rows: [u64; 2],
    fingerprinted: Fingerprinted,
    /// When the probe proved heavy drift: the target's rows read after that.
    probed: Option<Probed>,
}

/// The target units pass 1 spilled after the probe switched.
struct Probed {
    sinks: Vec<PartitionSink>,
    spilled: HashSet<(usize, usize)>,
}

/// The probe runs when both tables are read whole, the source's row count
/// is known (it sizes the sample), and both are all row groups: the source's
/// are counted to know when its sample is complete, and a target unit it
/// spills must be one the second pass can leave out.
fn probe_applies(sides: &[ScanSide<'_>; 2]) -> bool {
    sides.iter().all(|s| {
        !s.skip
            && s.only_units.is_none()
            && s.only_rows.is_none()
            && (s.table.scan_units().iter()).all(|u| matches!(u, Unit::Block { .. }))
    }) && sides[0].table.rows.is_some()
}

/// A table's (file, block) units.
fn block_keys(table: &Table) -> impl Iterator<Item = (usize, usize)> {
    table.scan_units().into_iter().filter_map(|u| match u {
        Unit::Block { file, block, .. } => Some((file, block)),
        _ => None,
    })
}

/// Pass 1 with the drift probe ([`crate::engine::probe`]): one scan, the
/// source's units first, sampling its digests; once the source's last unit
/// ended, target rows are checked against the sample, and whole target
/// units are spilled once most sampled rows proved unmatched.
fn probing_pass(
    sides: &[ScanSide<'_>; 2],
    cfg: &ScanConfig<'_>,
    filter_bits: u32,
    spill: PartitionConfig,
) -> Result<FirstPass> {
    let probe = Arc::new(DriftProbe::new(
        sides[0].table.rows.unwrap_or(0),
        sides[0].table.scan_units().len(),
    ));
    let scanned = scan(sides, cfg, || {
        ProbeSink::new(filter_bits, probe.clone(), spill.clone())
    })?;
    let mut spilled = HashSet::new();
    let (mut fingerprints, mut sinks) = (Vec::new(), Vec::new());
    for sink in scanned.sinks {
        spilled.extend(sink.spilled);
        fingerprints.push(sink.fingerprint);
        sinks.push(sink.spill);
    }
    Ok(FirstPass {
        rows: scanned.rows,
        fingerprinted: FingerprintSink::merge(fingerprints),
        // Switched too late to spill anything: the usual second pass.
        probed: (probe.switched() && !spilled.is_empty()).then_some(Probed { sinks, spilled }),
    })
}

/// Stage 3: reads the tables once (partitioning every record) or twice.
///
/// Two passes: the first fingerprints every bucket and fills a Bloom filter
/// per row group, without spilling. When the tables match, that is all.
/// Otherwise each differing bucket is decoded from its two fingerprints into
/// the one digest whose count differs (the usual case for rare drift: two
/// differing digests seldom share one of 16384 buckets); if every bucket
/// decodes, the second pass reads only the row groups whose filters may hold
/// those digests, and partitions only their rows. If any bucket holds more
/// than one difference, or the filters did not fit, the second pass reads
/// everything and partitions the differing buckets' rows, as before. Both
/// give the same answer; the report says which ran.
pub(crate) fn scan_stage(
    ctx: &RunContext,
    sides: &[ScanSide<'_>; 2],
    passes: Passes,
    bucket_bits: u32,
) -> Result<ScanResult> {
    let two_pass = match passes {
        Passes::One => false,
        Passes::Two => true,
        // Re-reading Parquet/IPC costs about what spilling every record
        // costs, so when drift is rare two passes win; parsing text twice
        // costs far more than spilling its records once.
        Passes::Auto => !sides[0].table.format.is_text() && !sides[1].table.format.is_text(),
    };
    let stage = ScanPasses {
        ctx,
        sides,
        cfg: ScanConfig {
            threads: ctx.threads,
            batch_size: ctx.batch_size,
            per_column: ColumnDigests::None,
            cancel: &ctx.cancel,
            progress: &ctx.progress,
        },
        bucket_bits,
    };
    if !two_pass {
        ctx.progress.start_pass(1, 1, Phase::Partition);
        let (index, rows, written) = stage.partition(sides, None, None)?;
        return Ok(ScanResult {
            passes: 1,
            differing_buckets: None,
            second_pass: None,
            partitioned: written,
            decoded: None,
            ..stage.result(index, rows)
        });
    }
    ctx.progress.start_pass(1, 2, Phase::Fingerprint);
    let total_rows = sides[0].table.rows.unwrap_or(0) + sides[1].table.rows.unwrap_or(0);
    let bits = stages::filter_bits(ctx, total_rows);
    let first = if probe_applies(sides) {
        probing_pass(sides, &stage.cfg, bits, stage.spill_config(None, None))?
    } else {
        let first = scan(sides, &stage.cfg, || {
            FingerprintSink::new(bits).with_sketch()
        })?;
        FirstPass {
            rows: first.rows,
            fingerprinted: FingerprintSink::merge(first.sinks),
            probed: None,
        }
    };
    let [a, b] = &first.fingerprinted.fingerprints;
    let differ: Vec<bool> = a.iter().zip(b).map(|(x, y)| x != y).collect();
    let differing = differ.iter().filter(|d| **d).count();
    if differing == 0 {
        let index = SpillIndex::merge(Vec::new(), 2 * stage.buckets())?;
        return Ok(stage.result_of_two(index, first.rows, 0));
    }
    // Values refused under --max-parse-errors were counted in pass 1; a
    // second pass over part of a table would count those it reads again,
    // so then only the full pass runs.
    let refusals = sides
        .iter()
        .any(|s| s.table.parse_errors.count.load(Ordering::Relaxed) > 0);
    let FirstPass {
        rows,
        fingerprinted,
        probed,
    } = first;
    if let (Some(probed), false) = (probed, refusals) {
        drop(fingerprinted.filters);
        return stage.adaptive(probed, rows, differing);
    }
    let Fingerprinted {
        fingerprints: [a, b],
        sketch,
        filters,
    } = fingerprinted;
    // Peel the differing digests, with their copy counts, out of the
    // buckets' fingerprints and the sketch's sub-tables beside them.
    let mut by_bucket = BucketDifferences::new(&a, &b);
    let peeled = match sketch {
        Some(mut sketch) => peel(&mut [&mut by_bucket, &mut sketch]),
        None => peel(&mut [&mut by_bucket]),
    };
    let (decoded_digests, undecoded_buckets) = (peeled.differences.len(), by_bucket.differing());
    let decoded = peeled.complete.then_some(peeled.differences);
    let why_full = if refusals {
        "values were refused under --max-parse-errors, and a targeted pass would count them again"
    } else if decoded.is_none() {
        "the differing digests did not all decode: more than the sketch holds"
    } else if bits == 0 {
        "the row-group filters did not fit in the memory limit"
    } else {
        "no row-group filters were kept: an input has no row groups (text, an IPC stream), or the drift probe found most rows differ"
    };
    let why_full = match (decoded, filters, refusals) {
        (Some(diffs), Some(filters), false) => {
            match stage.targeted(diffs, filters, rows, differing)? {
                Ok(result) => return Ok(result),
                Err(why) => why,
            }
        }
        _ => why_full,
    };
    let in_differing = |fps: &[Fingerprint]| -> u64 {
        fps.iter()
            .zip(&differ)
            .filter(|(_, d)| **d)
            .map(|(f, _)| f.count)
            .sum()
    };
    let seen = [in_differing(&a), in_differing(&b)];
    let mut result = stage.full(differ, seen, rows, differing)?;
    if let Some(second) = result.second_pass.as_mut() {
        second.decoded_digests = Some(decoded_digests);
        second.undecoded_buckets = Some(undecoded_buckets);
        second.full_because = Some(why_full);
    }
    Ok(result)
}

/// What the scan stage's passes share: the run, the sides, the scan's
/// settings and the spill's bucket bits.
struct ScanPasses<'a, 'b> {
    ctx: &'a RunContext,
    sides: &'a [ScanSide<'b>; 2],
    cfg: ScanConfig<'a>,
    bucket_bits: u32,
}

impl ScanPasses<'_, '_> {
    fn buckets(&self) -> usize {
        1 << self.bucket_bits
    }

    /// The sides' row groups (all of them when a pass reads them whole).
    fn units_total(&self) -> usize {
        self.sides.iter().map(|s| s.table.scan_units().len()).sum()
    }

    /// A result's common fields: the index and the rows compared.
    fn result(&self, index: SpillIndex, rows: [u64; 2]) -> ScanResult {
        ScanResult {
            index,
            buckets: self.buckets(),
            rows,
            passes: 2,
            differing_buckets: None,
            second_pass: None,
            partitioned: [0, 0],
            decoded: None,
        }
    }

    /// A two-pass result with its index, before its second pass is known.
    fn result_of_two(&self, index: SpillIndex, rows: [u64; 2], differing: usize) -> ScanResult {
        ScanResult {
            differing_buckets: Some(differing),
            ..self.result(index, rows)
        }
    }

    fn spill_config(
        &self,
        filter: Option<Arc<Vec<bool>>>,
        digests: Option<Arc<DigestSet>>,
    ) -> PartitionConfig {
        PartitionConfig {
            bucket_bits: self.bucket_bits,
            chunk_bytes: self.ctx.sizing.chunk_bytes,
            dir: self.ctx.dir().to_path_buf(),
            budget: self.ctx.budget.clone(),
            filter,
            digests,
        }
    }

    /// Reads `sides`, partitioning the records `filter` (differing buckets)
    /// or `digests` keep, or every record: the index, the rows read and the
    /// records written per side.
    fn partition(
        &self,
        sides: &[ScanSide<'_>; 2],
        filter: Option<Arc<Vec<bool>>>,
        digests: Option<Arc<DigestSet>>,
    ) -> Result<(SpillIndex, [u64; 2], [u64; 2])> {
        let pc = self.spill_config(filter, digests);
        let scanned = scan(sides, &self.cfg, || PartitionSink::new(pc.clone()))?;
        let (index, written) = PartitionSink::merge(scanned.sinks, self.bucket_bits)?;
        Ok((index, scanned.rows, written))
    }

    /// Pass 1 proved heavy drift and spilled the target's rows after that:
    /// read the source again, and the target's units read before the
    /// switch, partitioning every record.
    fn adaptive(&self, probed: Probed, rows: [u64; 2], differing: usize) -> Result<ScanResult> {
        let sides = self.sides;
        let spilled_rows: u64 = probed.sinks.iter().map(|s| s.written[1]).sum();
        let rest: HashSet<(usize, usize)> = block_keys(sides[1].table)
            .filter(|k| !probed.spilled.contains(k))
            .collect();
        let units_read = sides[0].table.scan_units().len() + rest.len();
        let second = [sides[0].clone(), sides[1].only(rest)];
        let to_spill = (rows[0] + rows[1])
            .saturating_sub(spilled_rows)
            .saturating_mul(Keyless::LAYOUT.bytes() as u64);
        let ctx = self.ctx;
        ctx.budget
            .set_expected(to_spill.saturating_sub(ctx.sizing.in_memory_spill as u64));
        stages::mark_pass(sides);
        ctx.progress.start_pass(2, 2, Phase::Partition);
        let pc = self.spill_config(None, None);
        let scanned = scan(&second, &self.cfg, || PartitionSink::new(pc.clone()))?;
        let read_again = scanned.rows;
        let mut sinks = probed.sinks;
        sinks.extend(scanned.sinks);
        let (index, written) = PartitionSink::merge(sinks, self.bucket_bits)?;
        if read_again[0] != rows[0] || read_again[1] + spilled_rows != rows[1] || written != rows {
            return Err(stages::inputs_changed(
                sides[0].table,
                format!("{rows:?} rows in the first pass, {written:?} in the second"),
            ));
        }
        Ok(ScanResult {
            second_pass: Some(SecondPass {
                strategy: "adaptive",
                units_read,
                units_total: self.units_total(),
                rows_read: Some(read_again[0] + read_again[1]),
                decoded_digests: None,
                spilled_in_pass_1: Some(probed.spilled.len()),
                undecoded_buckets: None,
                full_because: None,
            }),
            partitioned: written,
            ..self.result_of_two(index, rows, differing)
        })
    }

    /// Every differing digest decoded: reads again only the batches whose
    /// filters may hold one, partitioning only their rows. `Ok(Err(why))`
    /// when that would read more than a full pass costs.
    fn targeted(
        &self,
        diffs: Vec<Difference>,
        filters: SliceFilters,
        rows: [u64; 2],
        differing: usize,
    ) -> Result<std::result::Result<ScanResult, &'static str>> {
        let wanted: DigestSet = diffs.iter().map(|d| d.0).collect();
        let (only, rows_read) =
            slices_to_read(&filters, |f| wanted.iter().any(|d| f.may_contain(*d)));
        // Their memory is free for the second pass's records.
        drop(filters);
        // Reading selected batches costs about 2.5 times a row of a full
        // read (measured on the 50M pair: 47M rows selected took longer
        // than reading all 100M), so past a quarter of the rows the full
        // pass is faster.
        if rows_read > (rows[0] + rows[1]) / TARGETED_MAX_SHARE {
            return Ok(Err("the batches that may hold the decoded digests are more than a quarter of the rows: reading everything is faster"));
        }
        let units_read = only[0].len() + only[1].len();
        let [only_s, only_t] = only;
        let sides = self.sides;
        let targeted = [sides[0].only_slices(only_s), sides[1].only_slices(only_t)];
        stages::mark_pass(sides);
        self.ctx.progress.start_pass(2, 2, Phase::Partition);
        let (index, _, written) = self.partition(&targeted, None, Some(Arc::new(wanted)))?;
        Ok(Ok(ScanResult {
            second_pass: Some(SecondPass {
                strategy: "targeted",
                units_read,
                units_total: self.units_total(),
                rows_read: Some(rows_read),
                decoded_digests: Some(diffs.len()),
                spilled_in_pass_1: None,
                undecoded_buckets: None,
                full_because: None,
            }),
            partitioned: written,
            decoded: Some(diffs),
            ..self.result_of_two(index, rows, differing)
        }))
    }

    /// Reads everything again and partitions the differing buckets'
    /// records (`seen` per side, counted in pass 1).
    fn full(
        &self,
        differ: Vec<bool>,
        seen: [u64; 2],
        rows: [u64; 2],
        differing: usize,
    ) -> Result<ScanResult> {
        let (ctx, sides) = (self.ctx, self.sides);
        for s in sides {
            s.table.parse_errors.reset();
        }
        // Only the differing buckets' records spill in the second pass.
        let spill = (seen[0] + seen[1]).saturating_mul(Keyless::LAYOUT.bytes() as u64);
        ctx.budget
            .set_expected(spill.saturating_sub(ctx.sizing.in_memory_spill as u64));
        stages::mark_pass(sides);
        ctx.progress.start_pass(2, 2, Phase::Partition);
        let (index, second_rows, written) = self.partition(sides, Some(Arc::new(differ)), None)?;
        if second_rows != rows {
            return Err(stages::inputs_changed(
                sides[0].table,
                format!("{rows:?} rows in the first pass, {second_rows:?} in the second"),
            ));
        }
        if written != seen {
            return Err(stages::inputs_changed(
                sides[0].table,
                "the second pass found other rows in the differing buckets",
            ));
        }
        Ok(ScanResult {
            second_pass: Some(SecondPass::full(self.units_total())),
            partitioned: written,
            ..self.result_of_two(index, rows, differing)
        })
    }
}

/// A targeted second pass runs only while it reads at most `1 /
/// TARGETED_MAX_SHARE` of the rows.
const TARGETED_MAX_SHARE: u64 = 4;

/// The sampled unmatched rows of each side, fetched and rendered, with
/// their copies on each side.
pub(crate) fn sample_reports(
    sides: &[ScanSide<'_>; 2],
    picked: &[Vec<matcher::SampleRef>; 2],
) -> Result<[Vec<SampleReport>; 2]> {
    let mut out: [Vec<SampleReport>; 2] = Default::default();
    for side in Side::BOTH {
        let t = sides[side.index()].table;
        let names: Vec<String> = t.schema.fields().iter().map(|f| f.name().clone()).collect();
        let picked = &picked[side.index()];
        let locators: Vec<u64> = picked.iter().map(|s| s.locator).collect();
        out[side.index()] = fetch_samples(t, &locators)?
            .into_iter()
            .zip(picked)
            .map(|(values, s)| SampleReport::new(&names, values, s.source_count, s.target_count))
            .collect();
    }
    Ok(out)
}

/// Keyless records to reconcile: bucket `b` of a side is index key
/// `key_base + side * buckets + b`.
pub(crate) struct KeylessBuckets<'a> {
    pub index: &'a SpillIndex,
    pub key_base: u32,
    pub buckets: usize,
    /// Key bits the buckets already fixed.
    pub first_level_bits: u32,
}

/// Matches keyless (row digest, locator) records with the EXCEPT ALL
/// matcher: the multiset diff itself, and keyed mode's rows of duplicated
/// and NULL keys.
pub(crate) fn reconcile_keyless(
    ctx: &RunContext,
    tables: [&Table; 2],
    records: KeylessBuckets<'_>,
    sample: usize,
    record_differences: bool,
) -> Result<(Reconciled, u64)> {
    // Evidence ranges follow each side's dense positions (rows, or bytes of text).
    let range_bits = ctx.sizing.range_bits;
    let ranges = evidence_ranges(ctx, tables);
    let slots = Arc::new(EvidenceSlots {
        bases: [tables[0].bases(), tables[1].bases()],
        range_bits,
        ranges,
        chunk_bytes: ctx.sizing.chunk_bytes,
        dir: ctx.dir().to_path_buf(),
        budget: ctx.budget.clone(),
        sample,
        record_differences,
    });
    let driven = reconcile(
        records.index,
        records.buckets,
        &DriverConfig {
            threads: ctx.threads,
            layout: Keyless::LAYOUT,
            max_entries: ctx.sizing.map_max_entries,
            chunk_bytes: ctx.sizing.chunk_bytes,
            first_level_bits: records.first_level_bits,
            key_base: records.key_base,
            dir: ctx.dir(),
            budget: ctx.budget.clone(),
            cancel: &ctx.cancel,
            progress: &ctx.progress,
        },
        || Ok(MultisetMatcher::new(slots.clone())),
    )?;
    let found = MultisetMatcher::merge(driven.matchers, sample, ranges)?;
    Ok((found, driven.splits))
}

/// Stage 4: matches every bucket pair with the EXCEPT ALL matcher. Returns
/// what it found and how many buckets had to be split.
pub(crate) fn reconcile_stage(
    ctx: &RunContext,
    tables: [&Table; 2],
    scanned: &ScanResult,
    sample: usize,
    first_level_bits: u32,
) -> Result<(Reconciled, u64)> {
    ctx.progress
        .buckets_total
        .store(scanned.buckets as u64, Ordering::Relaxed);
    ctx.progress.set_phase(Phase::Reconcile);
    let (found, splits) = reconcile_keyless(
        ctx,
        tables,
        KeylessBuckets {
            index: &scanned.index,
            key_base: 0,
            buckets: scanned.buckets,
            first_level_bits,
        },
        sample,
        scanned.decoded.is_some(),
    )?;
    // A targeted second pass recounted the decoded digests from the rows
    // of every row group that may hold them: each must differ by exactly
    // what its bucket's fingerprints said. A bucket whose difference was not
    // really one digest decodes to a digest no row has (or, with the nonlinear
    // mix, fails to decode at all), which this refuses rather than answer.
    if let Some(decoded) = &scanned.decoded {
        let mut want = decoded.clone();
        want.sort_unstable();
        if found.differences != want {
            return Err(ReconError::Internal(format!(
                "the targeted second pass found {} differing digests where the fingerprints decoded {}; rerun with `--passes 1`",
                found.differences.len(),
                want.len()
            )));
        }
    }
    if found.rows_seen != scanned.partitioned {
        return Err(ReconError::Internal(format!(
            "reconciled {:?} rows, expected {:?}",
            found.rows_seen, scanned.partitioned
        )));
    }
    Ok((found, splits))
}

/// What the evidence stage produced.
pub(crate) struct EvidenceResult {
    pub samples: [Vec<SampleReport>; 2],
    /// Compared columns (source names) whose values differ between the sides.
    pub differing: Vec<String>,
    pub pairs: Option<PairsReport>,
    pub by_group: Option<ByGroupReport>,
    pub outputs: Option<Outputs>,
}

/// Stage 5: fetches the sample rows, and makes one pass over each side's
/// unmatched rows that writes the evidence files (if asked) and sums
/// per-column value digests, which name the drifting columns.
pub(crate) fn evidence_stage(
    sides: &[ScanSide<'_>; 2],
    found: &Reconciled,
    opts: &DiffOptions,
) -> Result<EvidenceResult> {
    let samples = sample_reports(sides, &found.samples)?;
    let dest = |name: &str| opts.output_dir.as_ref().map(|d| d.join(name));
    let (s_dest, t_dest) = (dest(SOURCE_ONLY_FILE), dest(TARGET_ONLY_FILE));
    let wants = Wants {
        collect: pairing::PAIR_MOST,
        by: by_position(&sides[0], opts.by.as_deref())?,
    };
    let pass = |side: Side, dest: Option<&Path>| -> Result<EvidencePass> {
        let s = &sides[side.index()];
        write_side(
            s.table,
            side,
            &found.evidence,
            found.ranges,
            found.stats[side.index()].rows,
            dest,
            s,
            &wants,
        )
    };
    let [s_ev, t_ev] = for_both_sides(opts.run.threads > 1, |side| match side {
        Side::Source => pass(side, s_dest.as_deref()),
        Side::Target => pass(side, t_dest.as_deref()),
    })?;
    let pairs = pairs_report(sides, &s_ev, &t_ev, opts.run.sample)?;
    let outputs = opts.output_dir.as_ref().map(|dir| Outputs {
        dir: dir.display().to_string(),
        source_only: s_dest.unwrap_or_default().display().to_string(),
        target_only: t_dest.unwrap_or_default().display().to_string(),
        source_only_written: s_ev.rows,
        target_only_written: t_ev.rows,
    });
    let names = sides[0].prep.iter().map(|p| p.column.clone());
    let differing: Vec<String> = names
        .zip(s_ev.column_digests.iter().zip(&t_ev.column_digests))
        .filter(|(_, (a, b))| a != b)
        .map(|(c, _)| c)
        .collect();
    let by_group = match (wants.by, &opts.by) {
        (Some(_), Some(column)) => {
            let mut groups: std::collections::BTreeMap<Option<String>, [u64; 2]> =
                Default::default();
            for (i, ev) in [&s_ev, &t_ev].into_iter().enumerate() {
                for (value, n) in &ev.by_group {
                    groups.entry(value.clone()).or_default()[i] += n;
                }
            }
            Some(ByGroupReport {
                column: column.clone(),
                groups: groups
                    .into_iter()
                    .map(|(value, [s, t])| GroupCount {
                        value,
                        source_only: s,
                        target_only: t,
                    })
                    .collect(),
            })
        }
        _ => None,
    };
    Ok(EvidenceResult {
        samples,
        differing,
        pairs,
        by_group,
        outputs,
    })
}

/// The position among the compared columns of the `--by` column.
fn by_position(side: &ScanSide<'_>, by: Option<&str>) -> Result<Option<usize>> {
    let Some(name) = by else {
        return Ok(None);
    };
    side.prep
        .iter()
        .position(|p| p.column == name)
        .map(Some)
        .ok_or_else(|| ReconError::Usage(format!("`--by {name}`: not a compared column")))
}

/// Pairs the unmatched rows that differ in one or two columns, and fetches
/// the first `sample` pairs' values for display.
fn pairs_report(
    sides: &[ScanSide<'_>; 2],
    s_ev: &EvidencePass,
    t_ev: &EvidencePass,
    sample: usize,
) -> Result<Option<PairsReport>> {
    let names: Vec<String> = sides[0].prep.iter().map(|p| p.column.clone()).collect();
    let (Some(s_rows), Some(t_rows)) = (&s_ev.distinct, &t_ev.distinct) else {
        return Ok(Some(pairing::skipped()));
    };
    if s_rows.is_empty() || t_rows.is_empty() {
        return Ok(None);
    }
    let found = pairing::pair(s_rows, t_rows, names.len());
    let rows = [s_rows.as_slice(), t_rows.as_slice()];
    let columns = [sides[0].columns.as_slice(), sides[1].columns.as_slice()];
    pairing::report(&names, rows, &found, sample, columns, |side, shown| {
        let locators: Vec<u64> = shown
            .iter()
            .map(|&i| rows[side.index()][i].locator)
            .collect();
        fetch_samples(sides[side.index()].table, &locators)
    })
    .map(Some)
}
