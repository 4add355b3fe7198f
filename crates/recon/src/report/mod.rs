//! The JSON report (versioned, for machines) and the text summary (for people).

pub(crate) mod batch;
pub(crate) mod html;
mod keyed;
pub(crate) mod schema;
mod text;

use std::sync::atomic::Ordering;
use std::time::Instant;

use serde::Serialize;

use crate::config::RunSettings;
use crate::engine::RunContext;
use crate::input::Table;
use crate::plan::{ColumnPair, ComparePlan};

pub use html::{diff_html, quick_html};
pub use keyed::{
    ByGroupReport, ChangedSample, ChangedValue, DupSample, GroupCount, KeyedDetail, KeyedOutputs,
    KeyedReport, PairSample, PairsReport, SideCounts, SideSamples, SideStats,
};
pub(crate) use text::is_text;

/// Unmatched-row counts for one direction (source-only or target-only).
#[derive(Debug, Default, Clone, Copy, serde::Serialize, PartialEq, Eq)]
pub struct DirectionStats {
    /// Unmatched row occurrences: what `EXCEPT ALL` returns.
    pub rows: u64,
    /// Distinct unmatched row values.
    pub distinct_rows: u64,
    /// Occurrences of values absent from the other side.
    pub absent_rows: u64,
    /// Distinct values among those absent from the other side.
    pub absent_distinct: u64,
    /// Extra copies of values the other side also holds, with fewer copies.
    pub extra_copy_rows: u64,
    /// Distinct values among those with extra copies.
    pub extra_copy_distinct: u64,
}

impl DirectionStats {
    /// Counts one unmatched row that the other side does not hold at all.
    pub(crate) fn add_absent_row(&mut self) {
        self.rows += 1;
        self.distinct_rows += 1;
        self.absent_rows += 1;
        self.absent_distinct += 1;
    }

    /// Adds another count of the same direction (another bucket's, or
    /// another group of rows') to this one, field by field.
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
    /// Source rows the target lacks: `source EXCEPT ALL target`.
    pub source_only: DirectionStats,
    /// Target rows the source lacks: `target EXCEPT ALL source`.
    pub target_only: DirectionStats,
}

/// One compared column pair: how it was aligned, typed and normalized.
#[derive(Debug, Clone, Serialize)]
pub struct ColumnReport {
    /// The source column's name, which the report uses for the pair.
    pub name: String,
    /// The target column's name.
    pub target_name: String,
    /// The source column's Arrow type as Arrow writes it (`Int64`, `Utf8`,
    /// `Decimal128(18, 2)`).
    pub source_type: String,
    /// The target column's Arrow type as Arrow writes it.
    pub target_type: String,
    /// How the pair was formed: name, name (case-insensitive), --map, position.
    pub pairing: String,
    /// How values are compared, including any conversion.
    pub rule: String,
    /// Normalization rules applied before hashing.
    pub normalize: Vec<String>,
}

impl ColumnReport {
    /// The report of one column pair of a plan.
    pub(crate) fn from_pair(c: &ColumnPair) -> ColumnReport {
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
    /// The table the column is in: `source` or `target`.
    pub side: String,
    /// The column's name in that table.
    pub name: String,
    /// Why it was left out: `excluded (--exclude)`, `not in --columns`,
    /// `only in this side (--ignore-extra-columns)`, ...
    pub why: String,
}

/// Which compared columns hold different values between the sides (as
/// multisets of that column's values; see README "Which columns drifted").
#[derive(Debug, Clone, Serialize)]
pub struct ColumnDrift {
    /// Compared columns (source names) whose values differ between the
    /// sides; in keyed mode, those that differ in at least one changed key.
    pub differing: Vec<String>,
    /// How many compared columns do not differ.
    pub same: usize,
}

/// One input table.
#[derive(Debug, Clone, Serialize)]
pub struct InputReport {
    /// The table as it was named: a path, a glob, a `delta:` or `iceberg:`
    /// spec, a URL.
    pub path: String,
    /// `parquet`, `arrow-ipc`, `csv`, `tsv`, `ndjson`, `delta`, `iceberg` or
    /// `postgres`; `arrow stream` or `arrow (in memory)` for Arrow data a
    /// library caller gave; the engine's name (`spark`) in a distributed run.
    pub format: String,
    /// Files the table was read from (a database table: the files its rows
    /// were copied to); 0 in a distributed run.
    pub files: usize,
    /// Rows compared; rows whose values were refused under
    /// `--max-parse-errors` are not counted.
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
    /// Bytes fetched in all: every pass and the evidence.
    pub bytes: u64,
    /// Range requests made to the store, in all.
    pub requests: u64,
}

/// How a database table was read.
#[derive(Debug, Clone, Serialize)]
pub struct DatabaseReport {
    /// The database system: `postgres`.
    pub system: String,
    /// The server's version as it reports it (`15.14 (Debian 15.14-0+deb12u1)`).
    pub server_version: String,
    /// The exported snapshot all connections shared.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub snapshot: Option<String>,
    /// The SELECT each connection's COPY ran (before its range of pages).
    pub query: String,
    /// Connections that read (several only for a plain table on PostgreSQL
    /// 14 or later, each reading a range of its pages).
    pub connections: usize,
}

/// The two input tables, as read.
#[derive(Debug, Clone, Serialize)]
pub struct Inputs {
    /// The source table.
    pub source: InputReport,
    /// The target table.
    pub target: InputReport,
}

/// A sample row as it appears in the report.
#[derive(Debug, Clone, Serialize)]
pub struct SampleReport {
    /// Copies of this row in the source (rows equal to it as compared),
    /// matched or not.
    pub source_count: u64,
    /// Copies of this row in the target, matched or not.
    pub target_count: u64,
    /// Column name → value as text; NULL is JSON null.
    pub row: serde_json::Map<String, serde_json::Value>,
}

/// Sample unmatched rows, per direction.
#[derive(Debug, Clone, Serialize)]
pub struct Samples {
    /// At most this many distinct rows per direction: those with the smallest digests.
    pub limit: usize,
    /// Source-only rows (keyed mode: rows of keys missing in the target).
    pub source_only: Vec<SampleReport>,
    /// Target-only rows (keyed mode: rows of keys missing in the source).
    pub target_only: Vec<SampleReport>,
}

/// Run settings.
#[derive(Debug, Clone, Serialize)]
pub struct Settings {
    /// Worker threads (in a distributed run, the engine's parallelism).
    pub threads: usize,
    /// Bytes; null when unlimited.
    pub memory_limit_bytes: Option<u64>,
    /// The directory the run's own temp directory (spill files, spooled
    /// inputs) was made in; empty in a distributed run.
    pub temp_dir: String,
    /// First-level partitions of the records (in a distributed run, the
    /// fingerprint buckets).
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
    /// the first pass, keeping every row;
    /// "shuffle" (a distributed run): the rows the engine shuffled to diff.
    pub strategy: &'static str,
    /// Scan units read (Parquet row groups, IPC record batches or streams,
    /// whole text files), both tables together; 0 in a distributed run.
    pub units_read: usize,
    /// Scan units of both tables together; 0 in a distributed run.
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
    pub(crate) fn full(units_total: usize) -> SecondPass {
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
    /// The output directory, as given (`--output`).
    pub dir: String,
    /// Path of `source_only.parquet`.
    pub source_only: String,
    /// Path of `target_only.parquet`.
    pub target_only: String,
    /// Rows written to `source_only.parquet`: every source-only occurrence.
    pub source_only_written: u64,
    /// Rows written to `target_only.parquet`: every target-only occurrence.
    pub target_only_written: u64,
}

/// Wall time of each pipeline phase. Scan includes preflight and partitioning.
#[derive(Debug, Clone, Serialize)]
pub struct PhaseSeconds {
    /// Seconds reading the tables, every pass, from the start of the run.
    pub scan: f64,
    /// Seconds matching the buckets' records.
    pub reconcile: f64,
    /// Seconds fetching unmatched rows and writing evidence, until the
    /// report is assembled.
    pub evidence: f64,
}

/// The full result of a diff.
#[derive(Debug, Clone, Serialize)]
pub struct Report {
    /// Version of the JSON layout: [`REPORT_VERSION`].
    pub recon_report_version: u32,
    /// True when neither direction has an unmatched row and no value
    /// failed to parse.
    pub exact_match: bool,
    /// Source rows compared (rows whose values were refused under
    /// `--max-parse-errors` are not counted).
    pub source_rows: u64,
    /// Target rows compared, counted as `source_rows` is.
    pub target_rows: u64,
    /// Source rows the target lacks, counting every duplicate: what
    /// `source EXCEPT ALL target` returns.
    pub source_only_rows: u64,
    /// Target rows the source lacks, counting every duplicate: what
    /// `target EXCEPT ALL source` returns.
    pub target_only_rows: u64,
    /// The unmatched rows by cause: values the other side lacks, or extra
    /// copies.
    pub multiplicity: Multiplicity,
    /// The compared column pairs.
    pub columns: Vec<ColumnReport>,
    /// Columns left out of the comparison, and why.
    pub not_compared: Vec<SkippedReport>,
    /// Which compared columns differ between the sides.
    pub column_drift: ColumnDrift,
    /// Keyless mode: unmatched rows paired as changed rows (a reading aid;
    /// the counts above are EXCEPT ALL's).
    pub pairs: Option<PairsReport>,
    /// `--by COL`: the unmatched rows per value of COL.
    pub by_group: Option<ByGroupReport>,
    /// Text values that could not be parsed into their column's type and
    /// were counted as drift (`--max-parse-errors`); their rows were not compared.
    pub parse_errors: ParseErrorsReport,
    /// The two tables, as read.
    pub inputs: Inputs,
    /// Sample unmatched rows, per direction.
    pub samples: Samples,
    /// Version of the canonical row encoding the digests are of
    /// ([`crate::ENCODING_VERSION`]).
    pub encoding_version: u32,
    /// Keyless mode with `--output`: the evidence files written (keyed
    /// mode lists its files under `keyed`).
    pub outputs: Option<Outputs>,
    /// How the run was set up and how it read the tables.
    pub settings: Settings,
    /// Wall time of the whole run, in seconds.
    pub elapsed_seconds: f64,
    /// Wall time per phase.
    pub phase_seconds: PhaseSeconds,
    /// Bytes written to spill files (0 in a distributed run).
    pub spilled_bytes: u64,
    /// Buckets split because their multiplicity map would not fit in its
    /// share of the memory limit.
    pub bucket_splits: u64,
    /// The process's peak resident memory, in bytes (`VmHWM`, or
    /// `getrusage` where that is missing; 0 in a distributed run).
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
    /// The thresholds given; those not given are null.
    pub limits: crate::config::Thresholds,
    /// `pass` (exact match), `pass_with_drift` (drift within every
    /// threshold) or `fail`.
    pub verdict: Verdict,
    /// The first threshold exceeded, e.g. `max_unmatched_rows = 1 (found 2)`,
    /// or the drift that `max_changed` and `max_missing` do not count;
    /// null when nothing was exceeded.
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
    pub(crate) fn verdict_kind(&self) -> Verdict {
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
    /// Source values that failed to parse or convert.
    pub source: u64,
    /// Target values that failed to parse or convert.
    pub target: u64,
    /// The first messages, up to 20 per side in file order (the source's
    /// first), each with its file, line, column and value.
    pub examples: Vec<String>,
}

impl SkippedReport {
    /// The columns a plan leaves out of the comparison, and why.
    pub(crate) fn of_plan(plan: &ComparePlan) -> Vec<SkippedReport> {
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
    pub(crate) fn new(
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
pub(crate) struct ReportParts<'a> {
    /// The comparison plan: the compared column pairs and those left out.
    pub plan: &'a ComparePlan,
    /// What the report says about the run itself.
    pub run: RunFacts<'a>,
    /// Unmatched-row counts: source-only, then target-only.
    pub stats: [DirectionStats; 2],
    /// Sample unmatched rows, per direction.
    pub samples: Samples,
    /// Compared columns (source names) whose values differ between the sides.
    pub differing: Vec<String>,
    /// Keyless mode: unmatched rows paired as changed rows.
    pub pairs: Option<PairsReport>,
    /// `--by COL`: the unmatched rows per value of COL.
    pub by_group: Option<ByGroupReport>,
    /// The evidence files written, with an output directory.
    pub outputs: Option<Outputs>,
}

/// What every diff's report says about the run itself, whatever the mode:
/// the inputs, the settings, the timings and the resources used. The report
/// reads them from the run's tables, settings and context.
pub(crate) struct RunFacts<'a> {
    /// The source and target tables.
    pub tables: [&'a Table; 2],
    /// Rows compared per side.
    pub rows: [u64; 2],
    /// The run settings: threads, memory limit.
    pub settings: &'a RunSettings,
    /// The run's context: its temp directory and spill budget.
    pub ctx: &'a RunContext,
    /// The run's phase clock, read when the report is built.
    pub clock: &'a PhaseClock,
    /// First-level buckets of the partition.
    pub buckets: usize,
    /// Reads of the inputs: 1 or 2.
    pub passes: u8,
    /// Of the fingerprint buckets, how many differed (two passes only).
    pub fingerprint_buckets_differing: Option<usize>,
    /// How the second read went, when one was needed.
    pub second_pass: Option<SecondPass>,
    /// Buckets split because their multiplicity map would not fit.
    pub bucket_splits: u64,
}

/// Times a run's phases: scan (with planning), reconcile, then evidence
/// until the report is assembled.
pub(crate) struct PhaseClock {
    started: Instant,
    scanned: f64,
    reconciled: f64,
}

impl PhaseClock {
    /// Starts the clock: the run, and its scan phase, begin now.
    pub(crate) fn start() -> PhaseClock {
        PhaseClock {
            started: Instant::now(),
            scanned: 0.0,
            reconciled: 0.0,
        }
    }

    /// The scan phase ends now.
    pub(crate) fn scanned(&mut self) {
        self.scanned = self.started.elapsed().as_secs_f64();
    }

    /// The reconcile phase ends now.
    pub(crate) fn reconciled(&mut self) {
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
    pub(crate) fn of(t: &Table, rows: u64) -> InputReport {
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
    pub(crate) fn of(src: &Table, tgt: &Table) -> ParseErrorsReport {
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
    pub(crate) fn multiset(p: ReportParts<'_>) -> Report {
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
    pub(crate) fn keyless(
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
