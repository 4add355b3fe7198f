//! The diff's report in the CLI's shape, from what the engine counted.

use std::time::Duration;

use arrow::array::RecordBatch;

use super::compare::BucketComparison;
use super::plan::DistributedPlan;
use crate::config::Thresholds;
use crate::error::{ReconError, Result};
use crate::evidence::render_column;
use crate::report::{
    DirectionStats, InputReport, Inputs, ParseErrorsReport, PhaseSeconds, Report, SampleReport,
    Samples, SecondPass, Settings,
};
use crate::side::Side;

/// Sample rows of one side's unmatched rows, from a batch holding the
/// table's columns followed by the `source_count` and `target_count`
/// columns (int64).
pub fn samples(batch: &RecordBatch) -> Result<Vec<SampleReport>> {
    let n = batch.num_columns();
    if n < 2 {
        return Err(ReconError::Internal("sample rows without counts".into()));
    }
    let counts = |c: usize| -> Result<Vec<u64>> {
        let a = batch
            .column(c)
            .as_any()
            .downcast_ref::<arrow::array::Int64Array>()
            .ok_or_else(|| ReconError::Internal("sample counts are not int64".into()))?;
        Ok(a.values().iter().map(|&v| v.max(0) as u64).collect())
    };
    let (sc, tc) = (counts(n - 2)?, counts(n - 1)?);
    let names: Vec<String> = batch.schema().fields()[..n - 2]
        .iter()
        .map(|f| f.name().clone())
        .collect();
    let columns = (0..n - 2)
        .map(|c| render_column(batch.column(c)))
        .collect::<Result<Vec<_>>>()?;
    Ok((0..batch.num_rows())
        .map(|r| {
            let values = columns.iter().map(|c| c[r].clone()).collect();
            SampleReport::new(&names, values, sc[r], tc[r])
        })
        .collect())
}

/// What the engine computed besides pass 1, for the report.
pub struct Findings {
    /// Per direction (source only, target only): the unmatched counts.
    pub stats: [DirectionStats; 2],
    /// Per direction, up to `sample_limit` unmatched rows.
    pub samples: [Vec<SampleReport>; 2],
    /// The most unmatched rows shown per direction (`sample=`).
    pub sample_limit: usize,
    /// The engine's parallelism (reported as threads).
    pub threads: usize,
    /// Rows the second pass shuffled (None: no second pass).
    pub rows_shuffled: Option<u64>,
    /// Wall time of the fingerprint pass.
    pub pass1: Duration,
    /// Wall time of everything after it.
    pub rest: Duration,
    /// What read the tables ("spark").
    pub engine: &'static str,
    /// Where the digests were computed ("jvm", "python"), for the report.
    pub digests: Option<&'static str>,
}

/// The report's inputs: the tables as the engine (`engine`) read them.
fn engine_inputs(plan: &DistributedPlan, engine: &str, rows: [u64; 2]) -> Inputs {
    let input = |side: Side| InputReport {
        path: plan.name(side),
        format: engine.to_string(),
        files: 0,
        rows: rows[side.index()],
        dialect: None,
        snapshot: None,
        database: None,
        fetched: None,
    };
    Inputs {
        source: input(Side::Source),
        target: input(Side::Target),
    }
}

/// The diff's report in the CLI's shape.
pub fn report(plan: &DistributedPlan, cmp: &BucketComparison, found: Findings) -> Report {
    let second_pass = found.rows_shuffled.map(|rows| SecondPass {
        strategy: if cmp.undecoded.is_empty() {
            "targeted"
        } else {
            "shuffle"
        },
        units_read: 0,
        units_total: 0,
        rows_read: Some(rows),
        decoded_digests: Some(cmp.decoded.len()),
        spilled_in_pass_1: None,
        undecoded_buckets: None,
        full_because: None,
    });
    let settings = Settings {
        threads: found.threads,
        memory_limit_bytes: None,
        temp_dir: String::new(),
        buckets: 1 << cmp.bits,
        passes: if found.rows_shuffled.is_some() { 2 } else { 1 },
        fingerprint_buckets_differing: Some(cmp.differing.len()),
        second_pass,
        digests: found.digests,
    };
    let [source_only, target_only] = found.samples;
    let samples = Samples {
        limit: found.sample_limit,
        source_only,
        target_only,
    };
    let inputs = engine_inputs(plan, found.engine, cmp.rows);
    let (scan, rest) = (found.pass1.as_secs_f64(), found.rest.as_secs_f64());
    Report {
        elapsed_seconds: scan + rest,
        phase_seconds: PhaseSeconds {
            scan,
            reconcile: rest,
            evidence: 0.0,
        },
        ..Report::keyless(
            &plan.plan,
            found.stats,
            cmp.differing_columns.clone(),
            samples,
            inputs,
            ParseErrorsReport::default(),
            settings,
        )
    }
}

/// What the engine counted of a keyed diff outside the rows it kept.
///
/// The engine buckets rows by their key and keeps, for recon's own keyed
/// diff, the rows of the differing buckets and of a few duplicated keys
/// shown as samples. An agreeing bucket holds the same rows on both sides,
/// so each of its keys is either once on each side with equal rows
/// (matched), duplicated with as many equal copies on each side, or NULL;
/// grouping the source by key tells which.
pub struct KeyedRest {
    /// Rows of each side, every bucket (pass 1).
    pub rows: [u64; 2],
    /// Keys more than once on the source, in agreeing buckets, whose rows
    /// were not kept; and their source rows.
    pub duplicate_keys: u64,
    /// The source rows of those keys.
    pub duplicate_rows: u64,
    /// Source rows with a NULL in the key, in agreeing buckets (the target
    /// holds as many, equal).
    pub null_key_rows: u64,
    /// Buckets of pass 1, and how many differed.
    pub buckets: usize,
    /// Buckets whose fingerprints differed.
    pub differing_buckets: usize,
    /// The engine's parallelism (reported as threads).
    pub threads: usize,
    /// Wall time of the fingerprint pass.
    pub pass1: Duration,
    /// Wall time of everything after it.
    pub rest: Duration,
    /// What read the tables ("spark").
    pub engine: &'static str,
    /// Where the digests were computed ("jvm", "python"), for the report.
    pub digests: Option<&'static str>,
}

/// The keyed report of the whole tables: `kept`, recon's keyed diff of the
/// rows the engine kept, completed with the agreeing buckets' keys, then
/// judged against `thresholds` (ratios count every row).
pub fn complete_keyed(
    plan: &DistributedPlan,
    kept: &Report,
    rest: KeyedRest,
    thresholds: &Thresholds,
) -> Result<Report> {
    let changed = |what: String| {
        ReconError::input(
            plan.name(Side::Source),
            format!("the tables changed while recon read them: {what} (read a pinned snapshot, or cache the DataFrames first)"),
        )
    };
    let kept_rows = [kept.source_rows, kept.target_rows];
    let agreeing = [0, 1].map(|i| rest.rows[i].checked_sub(kept_rows[i]));
    let agreeing = match agreeing {
        [Some(s), Some(t)] if s == t => s,
        _ => {
            return Err(changed(format!(
                "{:?} rows in the first pass, {kept_rows:?} kept in differing buckets",
                rest.rows
            )))
        }
    };
    let matched = agreeing
        .checked_sub(rest.duplicate_rows + rest.null_key_rows)
        .ok_or_else(|| {
            changed(format!(
                "{agreeing} rows in agreeing buckets, {} duplicated or NULL keys among them",
                rest.duplicate_rows + rest.null_key_rows
            ))
        })?;
    let mut report = kept.clone();
    let keyed = report
        .keyed
        .as_mut()
        .ok_or_else(|| ReconError::Internal("a keyed report without keys".into()))?;
    keyed.matched_keys += matched;
    keyed.duplicate_keys += rest.duplicate_keys;
    keyed.null_keys += 2 * rest.null_key_rows;
    keyed.keyed.null_key_rows.source += rest.null_key_rows;
    keyed.keyed.null_key_rows.target += rest.null_key_rows;
    report.source_rows = rest.rows[0];
    report.target_rows = rest.rows[1];
    report.inputs = engine_inputs(plan, rest.engine, rest.rows);
    let shuffled = kept_rows[0] + kept_rows[1];
    report.settings = Settings {
        threads: rest.threads,
        buckets: rest.buckets,
        passes: if shuffled > 0 { 2 } else { 1 },
        fingerprint_buckets_differing: Some(rest.differing_buckets),
        second_pass: (shuffled > 0).then_some(SecondPass {
            strategy: "shuffle",
            units_read: 0,
            units_total: 0,
            rows_read: Some(shuffled),
            decoded_digests: None,
            spilled_in_pass_1: None,
            undecoded_buckets: None,
            full_because: None,
        }),
        digests: rest.digests,
        ..report.settings
    };
    let (scan, rest_s) = (rest.pass1.as_secs_f64(), rest.rest.as_secs_f64());
    report.elapsed_seconds = scan + rest_s;
    report.phase_seconds = PhaseSeconds {
        scan,
        reconcile: rest_s,
        evidence: 0.0,
    };
    report.thresholds = None;
    report.judge(thresholds);
    Ok(report)
}
