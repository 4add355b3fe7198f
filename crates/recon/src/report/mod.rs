//! The JSON report (versioned, for machines) and the text summary (for people).

pub mod batch;
pub mod html;
mod keyed;
pub mod schema;
mod text;

use std::sync::atomic::Ordering;
use std::time::Instant;

use serde::Serialize;

use crate::config::RunSettings;
use crate::engine::RunContext;
use crate::input::Table;
use crate::plan::{ColumnPair, ComparePlan};

pub use keyed::{
    ByGroupReport, ChangedSample, ChangedValue, DupSample, GroupCount, KeyedDetail, KeyedOutputs,
    KeyedReport, PairSample, PairsReport, SideCounts, SideSamples, SideStats,
};
pub use text::{display_value, is_text};

/// Unmatched-row counts for one direction (source-only or target-only).
#[derive(Debug, Default, Clone, Copy, serde::Serialize, PartialEq, Eq)]
pub struct DirectionStats {
    /// Unmatched row occurrences: what `EXCEPT ALL` returns.
    pub rows: u64,
    /// Distinct unmatched row values.
    pub distinct_rows: u64,
    /// Occurrences of values absent from the other side.
    pub absent_rows: u64,
    pub absent_distinct: u64,
    /// Extra copies of values the other side also holds, with fewer copies.
    pub extra_copy_rows: u64,
    pub extra_copy_distinct: u64,
}

impl DirectionStats {
    /// Counts one unmatched row that the other side does not hold at all.
    pub fn add_absent_row(&mut self) {
        self.rows += 1;
        self.distinct_rows += 1;
        self.absent_rows += 1;
        self.absent_distinct += 1;
    }

    pub fn add(&mut self, o: &DirectionStats) {
        self.rows += o.rows;
        self.distinct_rows += o.distinct_rows;
        self.absent_rows += o.absent_rows;
        self.absent_distinct += o.absent_distinct;
        self.extra_copy_rows += o.extra_copy_rows;
        self.extra_copy_distinct += o.extra_copy_distinct;
    }
}

/// Version of the report's JSON layout. Bumped on any incompatible change.
pub const REPORT_VERSION: u32 = 1;

/// Unmatched rows broken down by cause, per direction.
#[derive(Debug, Clone, Serialize)]
pub struct Multiplicity {
    pub source_only: DirectionStats,
    pub target_only: DirectionStats,
}

/// One compared column pair: how it was aligned, typed and normalized.
#[derive(Debug, Clone, Serialize)]
pub struct ColumnReport {
    pub name: String,
    pub target_name: String,
    pub source_type: String,
    pub target_type: String,
    /// How the pair was formed: name, name (case-insensitive), --map, position.
    pub pairing: String,
    /// How values are compared, including any conversion.
    pub rule: String,
    /// Normalization rules applied before hashing.
    pub normalize: Vec<String>,
}

impl ColumnReport {
    pub fn from_pair(c: &ColumnPair) -> ColumnReport {
        ColumnReport {
            name: c.source_name.clone(),
            target_name: c.target_name.clone(),
            source_type: c.source_field.data_type().to_string(),
            target_type: c.target_field.data_type().to_string(),
            pairing: c.pairing.clone(),
            rule: c.rule.clone(),
            normalize: c.normalize.iter().map(|n| n.describe()).collect(),
        }
    }
}

/// A column left out of the comparison.
#[derive(Debug, Clone, Serialize)]
pub struct SkippedReport {
    pub side: String,
    pub name: String,
    pub why: String,
}

/// Which compared columns hold different values between the sides (as
/// multisets of that column's values; see README "Which columns drifted").
#[derive(Debug, Clone, Serialize)]
pub struct ColumnDrift {
    pub differing: Vec<String>,
    pub same: usize,
}

/// One input table.
#[derive(Debug, Clone, Serialize)]
pub struct InputReport {
    pub path: String,
    pub format: String,
    pub files: usize,
    pub rows: u64,
    /// CSV only: the dialect read, and which parts of it were sniffed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub dialect: Option<String>,
    /// Lakehouse tables: the version read ("delta version 3: 2 live files").
    #[serde(skip_serializing_if = "Option::is_none")]
    pub snapshot: Option<String>,
    /// Database tables: the server, the snapshot and the query read.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub database: Option<DatabaseReport>,
    /// Tables in object stores: the bytes fetched, per pass.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fetched: Option<FetchedReport>,
}

/// What a table in an object store cost in downloads.
#[derive(Debug, Clone, Serialize)]
pub struct FetchedReport {
    /// Bytes fetched by the first (or only) scan pass, planning included.
    pub pass1_bytes: u64,
    /// Bytes fetched by the second pass, when there was one: a targeted
    /// pass fetches only the pages of the rows it reads again.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pass2_bytes: Option<u64>,
    /// Bytes fetched for evidence rows after the scan.
    pub evidence_bytes: u64,
    pub bytes: u64,
    pub requests: u64,
}

/// How a database table was read.
#[derive(Debug, Clone, Serialize)]
pub struct DatabaseReport {
    pub system: String,
    pub server_version: String,
    /// The exported snapshot all connections shared.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub snapshot: Option<String>,
    pub query: String,
    pub connections: usize,
}

#[derive(Debug, Clone, Serialize)]
pub struct Inputs {
    pub source: InputReport,
    pub target: InputReport,
}

/// A sample row as it appears in the report.
#[derive(Debug, Clone, Serialize)]
pub struct SampleReport {
    pub source_count: u64,
    pub target_count: u64,
    /// Column name → value as text; NULL is JSON null.
    pub row: serde_json::Map<String, serde_json::Value>,
}

#[derive(Debug, Clone, Serialize)]
pub struct Samples {
    /// At most this many distinct rows per direction: those with the smallest digests.
    pub limit: usize,
    pub source_only: Vec<SampleReport>,
    pub target_only: Vec<SampleReport>,
}

/// Run settings.
#[derive(Debug, Clone, Serialize)]
pub struct Settings {
    pub threads: usize,
    /// Bytes; null when unlimited.
    pub memory_limit_bytes: Option<u64>,
    pub temp_dir: String,
    pub buckets: usize,
    /// 2 when buckets were fingerprinted first and only differing ones spilled.
    pub passes: u8,
    /// Of the 16384 fingerprint buckets, how many differed (two passes only).
    pub fingerprint_buckets_differing: Option<usize>,
    /// How the second read went, when one was needed.
    pub second_pass: Option<SecondPass>,
    /// Spark: where the digests were computed, "jvm" (recon's jar, inside
    /// Spark's own code generation) or "python" (`mapInArrow`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub digests: Option<&'static str>,
}

/// The second read of a two-pass run.
#[derive(Debug, Clone, Serialize)]
pub struct SecondPass {
    /// "targeted": only the row groups holding the decoded digests;
    /// "full": every row group, keeping the differing buckets' rows;
    /// "adaptive": the source's row groups and the target's not spilled in
    /// the first pass, keeping every row.
    pub strategy: &'static str,
    pub units_read: usize,
    pub units_total: usize,
    /// Rows the second pass read (targeted keyless runs: only the batches
    /// whose filters may hold a decoded digest).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rows_read: Option<u64>,
    /// Differing digests decoded from the fingerprint pass's sketch
    /// (targeted only; in keyed mode, the key tags read again).
    pub decoded_digests: Option<usize>,
    /// "adaptive": target row groups the first pass spilled once it had
    /// proved that most rows differ (the second pass read the source and
    /// the target's other row groups).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub spilled_in_pass_1: Option<usize>,
    /// "full" keyless runs: fingerprint buckets that still differed once
    /// every digest that could be was decoded (0 when all decoded).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub undecoded_buckets: Option<usize>,
    /// "full": why the second pass could not be targeted.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub full_because: Option<&'static str>,
}

impl SecondPass {
    /// A second pass that read all `units_total` units.
    pub fn full(units_total: usize) -> SecondPass {
        SecondPass {
            strategy: "full",
            units_read: units_total,
            units_total,
            rows_read: None,
            decoded_digests: None,
            spilled_in_pass_1: None,
            undecoded_buckets: None,
            full_because: None,
        }
    }
}

/// Output files written, if any.
#[derive(Debug, Clone, Serialize)]
pub struct Outputs {
    pub dir: String,
    pub source_only: String,
    pub target_only: String,
    pub source_only_written: u64,
    pub target_only_written: u64,
}

/// Wall time of each pipeline phase. Scan includes preflight and partitioning.
#[derive(Debug, Clone, Serialize)]
pub struct PhaseSeconds {
    pub scan: f64,
    pub reconcile: f64,
    pub evidence: f64,
}

/// The full result of a diff.
#[derive(Debug, Clone, Serialize)]
pub struct Report {
    pub recon_report_version: u32,
    pub exact_match: bool,
    pub source_rows: u64,
    pub target_rows: u64,
    pub source_only_rows: u64,
    pub target_only_rows: u64,
    pub multiplicity: Multiplicity,
    pub columns: Vec<ColumnReport>,
    pub not_compared: Vec<SkippedReport>,
    pub column_drift: ColumnDrift,
    /// Keyless mode: unmatched rows paired as changed rows (a reading aid;
    /// the counts above are EXCEPT ALL's).
    pub pairs: Option<PairsReport>,
    /// `--by COL`: the unmatched rows per value of COL.
    pub by_group: Option<ByGroupReport>,
    /// Text values that could not be parsed into their column's type and
    /// were counted as drift (`--max-parse-errors`); their rows were not compared.
    pub parse_errors: ParseErrorsReport,
    pub inputs: Inputs,
    pub samples: Samples,
    pub encoding_version: u32,
    pub outputs: Option<Outputs>,
    pub settings: Settings,
    pub elapsed_seconds: f64,
    pub phase_seconds: PhaseSeconds,
    pub spilled_bytes: u64,
    pub bucket_splits: u64,
    pub peak_rss_bytes: u64,
    /// Keyed mode's categories (`--key`), at the top level of the JSON.
    #[serde(flatten)]
    pub keyed: Option<KeyedReport>,
    /// The thresholds in force and what they decided.
    pub thresholds: Option<ThresholdReport>,
}

/// How a diff, or a pair of a batch, ended; written in reports as its
/// snake_case name (`pass_with_drift`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    /// An exact match.
    Pass,
    /// Drift within every threshold given.
    PassWithDrift,
    /// Drift beyond a threshold, or without thresholds.
    Fail,
    /// A batch pair that could not be compared.
    Error,
    /// A batch pair not run after `--fail-fast` stopped the batch.
    Skipped,
}

impl Verdict {
    /// The name reports and the summary table use.
    pub fn as_str(self) -> &'static str {
        match self {
            Verdict::Pass => "pass",
            Verdict::PassWithDrift => "pass_with_drift",
            Verdict::Fail => "fail",
            Verdict::Error => "error",
            Verdict::Skipped => "skipped",
        }
    }
}

impl std::fmt::Display for Verdict {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.pad(self.as_str())
    }
}

/// The thresholds in force and what they decided.
#[derive(Debug, Clone, Serialize)]
pub struct ThresholdReport {
    pub limits: crate::config::Thresholds,
    /// `pass` (exact match), `pass_with_drift` (drift within every
    /// threshold) or `fail`.
    pub verdict: Verdict,
    /// The first threshold exceeded, e.g. "max_unmatched_rows 10 < 16".
    pub decided_by: Option<String>,
}

impl Report {
    /// Unmatched occurrences both ways, plus values that failed to parse.
    pub fn unmatched(&self) -> u64 {
        self.source_only_rows
            + self.target_only_rows
            + self.parse_errors.source
            + self.parse_errors.target
    }

    /// Judges the report against `limits` (drift within all of them passes).
    pub fn judge(&mut self, limits: &crate::config::Thresholds) {
        if limits.is_empty() {
            return;
        }
        let unmatched = self.unmatched();
        let rows = self.source_rows.max(self.target_rows);
        let mut exceeded: Option<String> = None;
        let mut check = |name: &str, limit: Option<String>, value: String, over: bool| {
            if over && exceeded.is_none() {
                exceeded = Some(format!(
                    "{name} = {} (found {value})",
                    limit.unwrap_or_default()
                ));
            }
        };
        if let Some(m) = limits.max_unmatched_rows {
            check(
                "max_unmatched_rows",
                Some(m.to_string()),
                unmatched.to_string(),
                unmatched > m,
            );
        }
        if let Some(r) = limits.max_unmatched_ratio {
            let ratio = if rows == 0 {
                if unmatched == 0 {
                    0.0
                } else {
                    f64::INFINITY
                }
            } else {
                unmatched as f64 / rows as f64
            };
            check(
                "max_unmatched_ratio",
                Some(r.to_string()),
                format!("{ratio}"),
                ratio > r,
            );
        }
        let keyed = self.keyed.as_ref();
        if let Some(m) = limits.max_changed {
            // Without a key there are no changed keys to count: every
            // unmatched row counts against the limit.
            let changed = keyed.map_or(unmatched, |k| k.value_mismatch);
            check(
                "max_changed",
                Some(m.to_string()),
                changed.to_string(),
                changed > m,
            );
        }
        if let Some(m) = limits.max_missing {
            let missing = keyed.map_or(unmatched, |k| k.missing_in_target + k.missing_in_source);
            check(
                "max_missing",
                Some(m.to_string()),
                missing.to_string(),
                missing > m,
            );
        }
        // With only the keyed limits given, drift they do not count
        // (duplicated or NULL keys' rows, values that failed to parse) must
        // not pass unseen.
        if let Some(k) = keyed
            .filter(|_| limits.max_unmatched_rows.is_none() && limits.max_unmatched_ratio.is_none())
        {
            let d = &k.keyed;
            let other = d.duplicate_key_rows.source_only.rows
                + d.duplicate_key_rows.target_only.rows
                + d.null_key_unmatched.source_only.rows
                + d.null_key_unmatched.target_only.rows
                + self.parse_errors.source
                + self.parse_errors.target;
            if other > 0 && exceeded.is_none() {
                exceeded = Some(format!(
                    "{other} rows of duplicated or NULL keys or unparsed values, which max_changed and max_missing do not count (set max_unmatched_rows to allow them)"
                ));
            }
        }
        let verdict = if self.exact_match {
            Verdict::Pass
        } else if exceeded.is_some() {
            Verdict::Fail
        } else {
            Verdict::PassWithDrift
        };
        self.thresholds = Some(ThresholdReport {
            limits: *limits,
            verdict,
            decided_by: exceeded,
        });
    }

    /// Whether the run passes: an exact match, or drift within thresholds.
    pub fn passes(&self) -> bool {
        self.exact_match
            || self
                .thresholds
                .as_ref()
                .is_some_and(|t| t.verdict != Verdict::Fail)
    }

    /// The verdict as batch reports and the HTML page name it: `pass`,
    /// `pass_with_drift` or `fail`.
    pub fn verdict_kind(&self) -> Verdict {
        if self.exact_match {
            Verdict::Pass
        } else if self.passes() {
            Verdict::PassWithDrift
        } else {
            Verdict::Fail
        }
    }

    /// The verdict in words, for the first line of a summary.
    pub fn verdict_line(&self) -> String {
        let copies = self.multiplicity.source_only.extra_copy_rows
            + self.multiplicity.target_only.extra_copy_rows;
        let drift = format!(
            "{} source-only and {} target-only rows{}",
            self.source_only_rows,
            self.target_only_rows,
            match copies {
                0 => String::new(),
                1 => " (1 of them an extra copy)".into(),
                n => format!(" ({n} of them extra copies)"),
            }
        );
        match (&self.thresholds, self.exact_match) {
            (_, true) => "MATCH: the tables hold the same rows".into(),
            (Some(t), false) if t.verdict == Verdict::PassWithDrift => {
                format!("PASS WITH DRIFT: {drift}, within the thresholds")
            }
            (Some(t), false) => format!(
                "DRIFT: {drift}; over {}",
                t.decided_by.clone().unwrap_or_default()
            ),
            (None, false) => format!("DRIFT: {drift}"),
        }
    }
}

/// Values that failed to parse, per side, with the first messages.
#[derive(Debug, Clone, Serialize, Default)]
pub struct ParseErrorsReport {
    pub source: u64,
    pub target: u64,
    pub examples: Vec<String>,
}

impl SkippedReport {
    /// The columns a plan leaves out of the comparison, and why.
    pub fn of_plan(plan: &ComparePlan) -> Vec<SkippedReport> {
        plan.skipped
            .iter()
            .map(|k| SkippedReport {
                side: k.side.to_string(),
                name: k.field.name().clone(),
                why: k.why.clone(),
            })
            .collect()
    }
}

impl SampleReport {
    /// A sample row from its column names, values as text (None is NULL)
    /// and its counts on each side.
    pub fn new(
        columns: &[String],
        values: Vec<Option<String>>,
        source_count: u64,
        target_count: u64,
    ) -> SampleReport {
        let row = columns
            .iter()
            .cloned()
            .zip(values.into_iter().map(|v| match v {
                None => serde_json::Value::Null,
                Some(s) => serde_json::Value::String(s),
            }))
            .collect();
        SampleReport {
            source_count,
            target_count,
            row,
        }
    }
}

impl Report {
    /// Pretty JSON with a trailing newline.
    pub fn to_json(&self) -> String {
        let mut s = serde_json::to_string_pretty(self).unwrap_or_else(|_| "{}".into());
        s.push('\n');
        s
    }
}

/// The results of a multiset diff's stages, from which its report is built.
pub struct ReportParts<'a> {
    pub plan: &'a ComparePlan,
    pub run: RunFacts<'a>,
    pub stats: [DirectionStats; 2],
    pub samples: Samples,
    /// Compared columns (source names) whose values differ between the sides.
    pub differing: Vec<String>,
    pub pairs: Option<PairsReport>,
    pub by_group: Option<ByGroupReport>,
    pub outputs: Option<Outputs>,
}

/// What every diff's report says about the run itself, whatever the mode:
/// the inputs, the settings, the timings and the resources used. The report
/// reads them from the run's tables, settings and context.
pub struct RunFacts<'a> {
    pub tables: [&'a Table; 2],
    /// Rows compared per side.
    pub rows: [u64; 2],
    pub settings: &'a RunSettings,
    pub ctx: &'a RunContext,
    pub clock: &'a PhaseClock,
    /// First-level buckets of the partition.
    pub buckets: usize,
    /// Reads of the inputs: 1 or 2.
    pub passes: u8,
    pub fingerprint_buckets_differing: Option<usize>,
    pub second_pass: Option<SecondPass>,
    pub bucket_splits: u64,
}

/// Times a run's phases: scan (with planning), reconcile, then evidence
/// until the report is assembled.
pub struct PhaseClock {
    started: Instant,
    scanned: f64,
    reconciled: f64,
}

impl PhaseClock {
    pub fn start() -> PhaseClock {
        PhaseClock {
            started: Instant::now(),
            scanned: 0.0,
            reconciled: 0.0,
        }
    }

    /// The scan phase ends now.
    pub fn scanned(&mut self) {
        self.scanned = self.started.elapsed().as_secs_f64();
    }

    /// The reconcile phase ends now.
    pub fn reconciled(&mut self) {
        self.reconciled = self.started.elapsed().as_secs_f64();
    }

    /// Seconds since the start, and per phase (evidence runs until now).
    fn seconds(&self) -> (f64, PhaseSeconds) {
        let now = self.started.elapsed().as_secs_f64();
        let reconciled = self.reconciled.max(self.scanned);
        let phases = PhaseSeconds {
            scan: self.scanned,
            reconcile: reconciled - self.scanned,
            evidence: now - reconciled,
        };
        (now, phases)
    }
}

impl InputReport {
    /// One side's input, with the rows compared.
    pub fn of(t: &Table, rows: u64) -> InputReport {
        InputReport {
            path: t.path.display().to_string(),
            format: t.format_name().into(),
            files: t.files.len(),
            rows,
            dialect: t.dialect.clone(),
            snapshot: t.snapshot.as_ref().map(|s| s.describe()),
            database: t.database.as_ref().map(|d| DatabaseReport {
                system: d.system.into(),
                server_version: d.server_version.clone(),
                snapshot: d.snapshot.clone(),
                query: d.query.clone(),
                connections: d.connections,
            }),
            fetched: t.fetched().map(|(bytes, requests)| {
                let marks = t.pass_marks.lock().unwrap_or_else(|e| e.into_inner());
                let last = marks.last().copied().unwrap_or(bytes);
                FetchedReport {
                    pass1_bytes: marks.first().copied().unwrap_or(bytes),
                    pass2_bytes: marks.get(1).map(|m| m - marks[0]),
                    evidence_bytes: bytes - last,
                    bytes,
                    requests,
                }
            }),
        }
    }
}

impl ParseErrorsReport {
    /// The values of both tables that failed to parse.
    pub fn of(src: &Table, tgt: &Table) -> ParseErrorsReport {
        ParseErrorsReport {
            source: src.parse_errors.count.load(Ordering::Relaxed),
            target: tgt.parse_errors.count.load(Ordering::Relaxed),
            examples: src
                .parse_errors
                .examples()
                .into_iter()
                .chain(tgt.parse_errors.examples())
                .collect(),
        }
    }
}

impl Report {
    /// The report of a multiset diff.
    pub fn multiset(p: ReportParts<'_>) -> Report {
        let run = p.run;
        let [src, tgt] = run.tables;
        let (source, target) = (
            InputReport::of(src, run.rows[0]),
            InputReport::of(tgt, run.rows[1]),
        );
        let pe = ParseErrorsReport::of(src, tgt);
        let limit = run.settings.memory_limit;
        let settings = Settings {
            threads: run.settings.threads,
            memory_limit_bytes: (limit != u64::MAX).then_some(limit),
            temp_dir: run.ctx.temp_base.display().to_string(),
            buckets: run.buckets,
            passes: run.passes,
            fingerprint_buckets_differing: run.fingerprint_buckets_differing,
            second_pass: run.second_pass,
            digests: None,
        };
        let (elapsed_seconds, phase_seconds) = run.clock.seconds();
        Report {
            pairs: p.pairs,
            by_group: p.by_group,
            outputs: p.outputs,
            elapsed_seconds,
            phase_seconds,
            spilled_bytes: run.ctx.budget.spilled_bytes(),
            bucket_splits: run.bucket_splits,
            peak_rss_bytes: crate::engine::memory::peak_rss_bytes(),
            ..Report::keyless(
                p.plan,
                p.stats,
                p.differing,
                p.samples,
                Inputs { source, target },
                pe,
                settings,
            )
        }
    }

    /// What every keyless report says, whoever ran the diff (this
    /// library's engine, or a distributed engine through
    /// `distributed`): the verdict and counts from each direction's
    /// stats, the plan's columns, the drifting columns. The inputs' `rows`
    /// are the rows compared. Timings and resources are zero, and the
    /// breakdowns and outputs absent, until the caller sets them.
    pub fn keyless(
        plan: &ComparePlan,
        stats: [DirectionStats; 2],
        differing: Vec<String>,
        samples: Samples,
        inputs: Inputs,
        parse_errors: ParseErrorsReport,
        settings: Settings,
    ) -> Report {
        let [so, to] = stats;
        Report {
            recon_report_version: REPORT_VERSION,
            // A value that could not be read is drift, never a silent match.
            exact_match: so.rows == 0
                && to.rows == 0
                && parse_errors.source + parse_errors.target == 0,
            source_rows: inputs.source.rows,
            target_rows: inputs.target.rows,
            source_only_rows: so.rows,
            target_only_rows: to.rows,
            multiplicity: Multiplicity {
                source_only: so,
                target_only: to,
            },
            columns: plan.columns.iter().map(ColumnReport::from_pair).collect(),
            not_compared: SkippedReport::of_plan(plan),
            column_drift: ColumnDrift {
                same: plan.columns.len() - differing.len(),
                differing,
            },
            pairs: None,
            by_group: None,
            parse_errors,
            inputs,
            samples,
            encoding_version: crate::digest::ENCODING_VERSION,
            outputs: None,
            settings,
            elapsed_seconds: 0.0,
            phase_seconds: PhaseSeconds {
                scan: 0.0,
                reconcile: 0.0,
                evidence: 0.0,
            },
            spilled_bytes: 0,
            bucket_splits: 0,
            peak_rss_bytes: 0,
            keyed: None,
            thresholds: None,
        }
    }
}
