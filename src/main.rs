//! The `recon` command line: parses arguments, runs the library, prints, and
//! maps the outcome to an exit code (0 match, 1 drift, 2 error).

use std::collections::BTreeMap;
use std::io::{IsTerminal, Write};
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use clap::{Parser, Subcommand};
use indicatif::{MultiProgress, ProgressBar, ProgressDrawTarget, ProgressStyle};

use recon::config::{
    AlignOptions, DiffColumns, Format, InputConfig, InputOptions, Int96Unit, RulesFile, RunConfig,
    Thresholds,
};
use recon::engine::memory::default_limit;
use recon::engine::{Phase, Progress};
use recon::error::panic_message;
use recon::modes::batch::{BatchProgress, PairState};
use recon::modes::fingerprint::compare::compare as compare_fingerprints;
use recon::modes::fingerprint::{
    fingerprint, fingerprint_pair, FingerprintFile, FingerprintOptions,
};
use recon::plan::preflight;
use recon::report::schema::{schema_json, schema_text};
use recon::{diff, DiffOptions, Passes, ReconError};

#[derive(Parser)]
#[command(
    name = "recon",
    version,
    about = "Prove whether two tables hold exactly the same rows (EXCEPT ALL both ways)"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Compare two tables as multisets of rows (or by key with --key); exit 0 on an exact match,
    /// 1 on drift, 2 on error.
    Diff(Box<DiffArgs>),
    /// Show how the columns of two tables pair up and compare, reading metadata only;
    /// exit 0 when compatible, 1 when not, 2 on error.
    Schema(SchemaArgs),
    /// Write a small JSON fingerprint of one table (row count, row multiset digest, per-column
    /// digests, optionally per group), to compare with another machine's.
    Fingerprint(FingerprintArgs),
    /// Compare two fingerprint files; exit 0 when they match, 1 when they differ, 2 on error.
    CompareFingerprints(CompareArgs),
    /// Run many pairs from a TOML file; exit 0 when every pair passes, 1 when any fails its
    /// thresholds, 2 when any errored.
    Batch(BatchArgs),
}

#[derive(clap::Args)]
struct BatchArgs {
    /// The batch file (see `[[pair]]` in the README).
    file: PathBuf,
    /// Run only pairs whose name matches (a glob; repeatable).
    #[arg(long, value_name = "NAME")]
    only: Vec<String>,
    /// Stop at the first pair that fails or errors (the rest are reported as skipped).
    #[arg(long)]
    fail_fast: bool,
    /// Run N pairs at once; each gets its memory limit divided by N.
    #[arg(long, value_name = "N", default_value_t = 1)]
    jobs: usize,
    /// Write JUnit XML here: one test case per pair.
    #[arg(long, value_name = "FILE")]
    junit: Option<PathBuf>,
    /// Write the batch JSON report here.
    #[arg(long, value_name = "FILE")]
    report: Option<PathBuf>,
    /// Write a self-contained HTML report here.
    #[arg(long, value_name = "FILE")]
    html: Option<PathBuf>,
    /// Print nothing; only the exit code tells.
    #[arg(short, long)]
    quiet: bool,
    /// Progress on stderr: auto (bars per running pair and overall, only on a terminal),
    /// always (also a line per finished pair and every 2 seconds per running pair in a log),
    /// never.
    #[arg(long, value_name = "WHEN", default_value = "auto")]
    progress: ProgressMode,
}

#[derive(clap::Args)]
struct FingerprintArgs {
    /// The table: a file, a directory, or a glob.
    table: PathBuf,
    /// Also fingerprint each group of this column (e.g. business_date).
    #[arg(long, value_name = "COL")]
    by: Option<String>,
    /// Write the fingerprint here (default: stdout).
    #[arg(short, long, value_name = "FILE")]
    output: Option<PathBuf>,
    /// Type text columns like this table's columns (a CSV extract like its Parquet twin).
    #[arg(long, value_name = "FILE")]
    schema_like: Option<PathBuf>,
    /// Worker threads [default: all cores].
    #[arg(short = 'j', long, value_name = "N")]
    threads: Option<usize>,
    #[command(flatten)]
    input: InputArgs,
    #[command(flatten)]
    align: AlignArgs,
}

#[derive(clap::Args)]
struct CompareArgs {
    /// The source side's fingerprint file.
    source: PathBuf,
    /// The target side's fingerprint file.
    target: PathBuf,
    /// Print the comparison as JSON.
    #[arg(long)]
    json: bool,
}

#[derive(clap::Args)]
struct SchemaArgs {
    /// Source table: a file, a directory (read recursively; key=value levels are columns), or a glob.
    source: PathBuf,
    /// Target table: a file, a directory, or a glob.
    target: PathBuf,
    #[command(flatten)]
    input: InputArgs,
    #[command(flatten)]
    align: AlignArgs,
    /// Print the plan as JSON.
    #[arg(long)]
    json: bool,
}

/// Column alignment, conversions and normalization, shared by `diff` and `schema`.
#[derive(clap::Args)]
struct AlignArgs {
    /// Pair columns by position (SQL set-operation semantics) instead of by name.
    #[arg(long, help_heading = "Alignment")]
    by_position: bool,
    /// Match column names case-insensitively.
    #[arg(long, help_heading = "Alignment")]
    ignore_case_names: bool,
    /// Pair a renamed column: SRC=TGT (repeatable).
    #[arg(long = "map", value_name = "SRC=TGT", help_heading = "Alignment")]
    maps: Vec<String>,
    /// Leave columns out of the comparison (they stay in the evidence rows).
    #[arg(
        long,
        value_name = "COL[,COL]",
        value_delimiter = ',',
        help_heading = "Alignment"
    )]
    exclude: Vec<String>,
    /// Compare only these columns.
    #[arg(
        long,
        value_name = "COL[,COL]",
        value_delimiter = ',',
        help_heading = "Alignment"
    )]
    columns: Option<Vec<String>>,
    /// Ignore columns present on one side only instead of failing.
    #[arg(long, help_heading = "Alignment")]
    ignore_extra_columns: bool,
    /// Read naive timestamps in this zone when compared with zoned ones (e.g. UTC, Europe/Paris,
    /// +02:00); or ABBR=OFFSET to read a zone abbreviation in text values, e.g. EST=-05:00
    /// (repeatable).
    #[arg(long, value_name = "TZ", help_heading = "Types")]
    assume_tz: Vec<String>,
    /// Parse or convert a column into a type: COL=TYPE, e.g. amount=decimal(18,2) (repeatable).
    #[arg(long = "cast", value_name = "COL=TYPE", help_heading = "Types")]
    casts: Vec<String>,
    /// Round floats/decimals to N places, half away from zero: COL=N or *=N (repeatable).
    #[arg(long, value_name = "COL=N", help_heading = "Normalization")]
    round: Vec<String>,
    /// Truncate timestamps: COL=s|ms|us or *=UNIT (repeatable).
    #[arg(long, value_name = "COL=UNIT", help_heading = "Normalization")]
    timestamp_precision: Vec<String>,
    /// Strip leading/trailing whitespace: COL or * (repeatable).
    #[arg(long, value_name = "COL", help_heading = "Normalization")]
    trim: Vec<String>,
    /// Compare strings case-insensitively: COL or * (repeatable).
    #[arg(long, value_name = "COL", help_heading = "Normalization")]
    case_insensitive: Vec<String>,
    /// Treat '' as NULL: COL or * (repeatable).
    #[arg(long, value_name = "COL", help_heading = "Normalization")]
    empty_as_null: Vec<String>,
    /// Read alignment and normalization settings from a TOML file.
    #[arg(long, value_name = "FILE", help_heading = "Normalization")]
    rules: Option<PathBuf>,
}

fn split_pair<'a>(flag: &str, text: &'a str) -> Result<(&'a str, &'a str), ReconError> {
    text.split_once('=')
        .map(|(a, b)| (a.trim(), b.trim()))
        .filter(|(a, b)| !a.is_empty() && !b.is_empty())
        .ok_or_else(|| ReconError::Usage(format!("{flag} {text}: expected NAME=VALUE")))
}

impl AlignArgs {
    /// The flags as a rules file would spell them, so both take one path
    /// into [`AlignOptions`] (flags first: they win where both set a value).
    fn build(&self, keyed: &KeyArgs) -> Result<AlignOptions, ReconError> {
        let pairs = |flag: &str, list: &[String]| -> Result<BTreeMap<String, String>, ReconError> {
            list.iter()
                .map(|p| split_pair(flag, p).map(|(a, b)| (a.to_string(), b.to_string())))
                .collect()
        };
        let mut round = BTreeMap::new();
        for r in &self.round {
            let (c, n) = split_pair("--round", r)?;
            let n: u32 = n.parse().map_err(|_| {
                ReconError::Usage(format!("--round {r}: N must be a whole number of places"))
            })?;
            round.insert(c.to_string(), n);
        }
        let flags = RulesFile {
            by_position: self.by_position,
            ignore_case_names: self.ignore_case_names,
            ignore_extra_columns: self.ignore_extra_columns,
            exclude: self.exclude.clone(),
            columns: self.columns.clone(),
            assume_tz: (!self.assume_tz.is_empty())
                .then(|| recon::config::OneOrMany::Many(self.assume_tz.clone())),
            map: pairs("--map", &self.maps)?,
            cast: pairs("--cast", &self.casts)?,
            round,
            timestamp_precision: pairs("--timestamp-precision", &self.timestamp_precision)?,
            trim: self.trim.clone(),
            case_insensitive: self.case_insensitive.clone(),
            empty_as_null: self.empty_as_null.clone(),
            key: keyed.key.clone(),
            tolerance: pairs("--tolerance", &keyed.tolerance)?,
        };
        let mut o = AlignOptions::default();
        flags
            .apply_to(&mut o)
            .map_err(|e| ReconError::Usage(format!("--{e}")))?;
        if let Some(path) = &self.rules {
            RulesFile::load(path)
                .and_then(|f| {
                    f.apply_to(&mut o)
                        .map_err(|e| format!("{}: {e}", path.display()))
                })
                .map_err(ReconError::Usage)?;
        }
        Ok(o)
    }
}

/// Drift allowed before a diff fails (exit 0 within all of them).
#[derive(clap::Args, Default)]
struct ThresholdArgs {
    /// Pass (exit 0) when at most N rows are unmatched, both ways together.
    #[arg(long, value_name = "N", help_heading = "Thresholds")]
    max_unmatched_rows: Option<u64>,
    /// Pass when unmatched rows / max(source rows, target rows) is at most R.
    #[arg(long, value_name = "R", help_heading = "Thresholds")]
    max_unmatched_ratio: Option<f64>,
    /// With --key: pass when at most N keys changed.
    #[arg(long, value_name = "N", help_heading = "Thresholds")]
    max_changed: Option<u64>,
    /// With --key: pass when at most N keys are missing on either side.
    #[arg(long, value_name = "N", help_heading = "Thresholds")]
    max_missing: Option<u64>,
}

impl ThresholdArgs {
    fn build(&self) -> Result<Thresholds, ReconError> {
        let t = Thresholds {
            max_unmatched_rows: self.max_unmatched_rows,
            max_unmatched_ratio: self.max_unmatched_ratio,
            max_changed: self.max_changed,
            max_missing: self.max_missing,
        };
        t.validate()
            .map_err(|e| ReconError::Usage(format!("--{}", e.replace('_', "-"))))?;
        Ok(t)
    }
}

/// Keyed mode's flags (`diff` only).
#[derive(clap::Args, Default)]
struct KeyArgs {
    /// Match rows by this business key: missing, extra and changed rows by key, and which
    /// columns changed. Duplicated and NULL keys are diffed as multisets.
    #[arg(
        long,
        value_name = "COL[,COL]",
        value_delimiter = ',',
        help_heading = "Keyed"
    )]
    key: Option<Vec<String>>,
    /// A numeric column matches within this bound: COL=0.01 (absolute) or COL=1e-9r
    /// (relative); a difference equal to the bound matches (repeatable).
    #[arg(long, value_name = "COL=TOL", help_heading = "Keyed")]
    tolerance: Vec<String>,
    /// Which value columns changed.parquet fills: the changed ones, or all.
    #[arg(
        long,
        value_name = "changed|all",
        default_value = "changed",
        help_heading = "Keyed"
    )]
    diff_columns: DiffColumns,
}

/// How inputs are read: formats and the CSV dialect (shared by both sides).
#[derive(clap::Args)]
struct InputArgs {
    /// Source format instead of the file extension.
    #[arg(long, value_name = "FORMAT", help_heading = "Input")]
    source_format: Option<Format>,
    /// Target format instead of the file extension.
    #[arg(long, value_name = "FORMAT", help_heading = "Input")]
    target_format: Option<Format>,
    /// CSV field delimiter (one byte; \t for tab) [default: sniffed among , ; | tab; tab
    /// for .tsv, | for .tbl].
    #[arg(long, value_name = "CHAR", help_heading = "Input")]
    delimiter: Option<String>,
    /// CSV quote character, or 'none' [default: sniffed: '"', '\'' or none].
    #[arg(long, value_name = "CHAR", help_heading = "Input")]
    quote: Option<String>,
    /// CSV escape character inside quotes, e.g. '\\' [default: sniffed: none (quotes are
    /// doubled) or '\\'].
    #[arg(long, value_name = "CHAR", help_heading = "Input")]
    escape: Option<String>,
    /// CSV files have no header line; columns are column_1, column_2, ...
    /// [default: sniffed from the first lines]
    #[arg(long, help_heading = "Input", conflicts_with = "header")]
    no_header: bool,
    /// The first line of CSV files is a header [default: sniffed from the first lines].
    #[arg(long, help_heading = "Input")]
    header: bool,
    /// Unquoted CSV fields equal to STR are NULL, besides the empty field (repeatable).
    #[arg(long = "null-value", value_name = "STR", help_heading = "Input")]
    null_values: Vec<String>,
    /// Text encoding of CSV/NDJSON files: utf-8, latin-1, or a WHATWG label such as
    /// windows-1252, iso-8859-15, utf-16le, shift_jis [default: utf-8; a UTF-16 byte-order
    /// mark is read as UTF-16].
    #[arg(long, value_name = "ENC", help_heading = "Input")]
    encoding: Option<String>,
    /// When both sides are text (CSV/NDJSON), infer column types from the first records
    /// (so 1.50 equals 1.5) instead of comparing exact text.
    #[arg(long, help_heading = "Input")]
    infer_types: bool,
    /// Count up to N text values that fail to parse as drift instead of stopping (exit 2).
    #[arg(long, value_name = "N", default_value_t = 0, help_heading = "Input")]
    max_parse_errors: u64,
    /// Unit Parquet INT96 timestamps are read in: us (every date Spark writes) or ns
    /// (sub-microsecond digits, 1677-2262 only). A value the unit cannot hold is an error.
    #[arg(
        long,
        value_name = "UNIT",
        default_value = "us",
        help_heading = "Input"
    )]
    int96_unit: Int96Unit,
    /// Every CSV line ends with a delimiter (legacy exports, TPC-H .tbl); its empty last field
    /// is not a column [default: detected from the first lines].
    #[arg(long, help_heading = "Input")]
    trailing_delimiter: bool,
    /// A quoted empty CSV field "" is NULL too (exports that quote every field and write
    /// NULL as ""); the same as --null-value '""'.
    #[arg(long, help_heading = "Input")]
    quoted_empty_as_null: bool,
    /// Text dates are written as this strftime pattern: COL=FMT or *=FMT, e.g. '*=%d/%m/%Y'
    /// (repeatable). A value must read back to its own text under the pattern.
    #[arg(long, value_name = "COL=FMT", help_heading = "Input")]
    date_format: Vec<String>,
    /// Text timestamps are written as this strftime pattern: COL=FMT or *=FMT, e.g.
    /// '*=%d/%m/%Y %H:%M:%S' (repeatable).
    #[arg(long, value_name = "COL=FMT", help_heading = "Input")]
    timestamp_format: Vec<String>,
    /// Skip the first N lines of every CSV/TSV file (a title, notes, an export banner)
    /// before the header [default: a clear preamble is sniffed; 0 turns that off].
    #[arg(long, value_name = "N", help_heading = "Input")]
    skip_rows: Option<usize>,
    /// --skip-rows for the source side only.
    #[arg(long, value_name = "N", help_heading = "Input")]
    source_skip_rows: Option<usize>,
    /// --skip-rows for the target side only.
    #[arg(long, value_name = "N", help_heading = "Input")]
    target_skip_rows: Option<usize>,
    /// CSV/TSV lines starting with CHAR are comments, ignored everywhere in the file
    /// (not inside a quoted field), e.g. '#'.
    #[arg(long, value_name = "CHAR", help_heading = "Input")]
    comment: Option<String>,
}

/// `COL=FMT` flags by column; the pattern may itself hold `=`.
fn column_patterns(flag: &str, list: &[String]) -> Result<BTreeMap<String, String>, ReconError> {
    list.iter()
        .map(|p| {
            p.split_once('=')
                .filter(|(c, f)| !c.trim().is_empty() && !f.is_empty())
                .map(|(c, f)| (c.trim().to_string(), f.to_string()))
                .ok_or_else(|| ReconError::Usage(format!("{flag} {p}: expected COL=FMT or *=FMT")))
        })
        .collect()
}

impl InputArgs {
    fn build(&self) -> Result<[InputOptions; 2], ReconError> {
        InputConfig {
            source_format: self.source_format,
            target_format: self.target_format,
            delimiter: self.delimiter.clone(),
            quote: self.quote.clone(),
            escape: self.escape.clone(),
            no_header: self.no_header,
            header: self.header,
            null_values: self.null_values.clone(),
            encoding: self.encoding.clone(),
            infer_types: self.infer_types,
            max_parse_errors: self.max_parse_errors,
            int96_unit: Some(self.int96_unit),
            trailing_delimiter: self.trailing_delimiter,
            quoted_empty_as_null: self.quoted_empty_as_null,
            date_format: column_patterns("--date-format", &self.date_format)?,
            timestamp_format: column_patterns("--timestamp-format", &self.timestamp_format)?,
            skip_rows: self.skip_rows,
            source_skip_rows: self.source_skip_rows,
            target_skip_rows: self.target_skip_rows,
            comment: self.comment.clone(),
        }
        .build()
    }
}

#[derive(clap::Args)]
struct DiffArgs {
    /// Source table: a file, a directory (read recursively; key=value levels are columns), or a glob.
    source: PathBuf,
    /// Target table: a file, a directory, or a glob.
    target: PathBuf,
    /// Write source_only.parquet, target_only.parquet and report.json here (with --key:
    /// changed.parquet, missing_in_target.parquet, missing_in_source.parquet, ...).
    #[arg(short, long, value_name = "DIR")]
    output: Option<PathBuf>,
    /// Overwrite results already present in --output.
    #[arg(long)]
    force: bool,
    /// Write the JSON report to FILE.
    #[arg(long, value_name = "FILE")]
    report: Option<PathBuf>,
    /// Write a self-contained HTML report to FILE.
    #[arg(long, value_name = "FILE")]
    html: Option<PathBuf>,
    /// Distinct unmatched rows to show per direction.
    #[arg(long, value_name = "N", default_value_t = 20)]
    sample: usize,
    /// Worker threads [default: all cores].
    #[arg(short = 'j', long, value_name = "N")]
    threads: Option<usize>,
    /// Peak memory budget, e.g. 256MiB, 4GiB, or 'unlimited' [default: half of RAM].
    #[arg(short = 'm', long, value_name = "SIZE")]
    memory_limit: Option<String>,
    /// Directory for spill files and for the copy of a piped input (`-`, a FIFO)
    /// [default: the system temp dir].
    #[arg(long, value_name = "DIR")]
    temp_dir: Option<PathBuf>,
    /// Print the JSON report to stdout instead of the text summary.
    #[arg(long)]
    json: bool,
    /// Print nothing; only the exit code tells.
    #[arg(short, long)]
    quiet: bool,
    /// Progress on stderr: auto (only on a terminal), always, never.
    #[arg(long, value_name = "WHEN", default_value = "auto")]
    progress: ProgressMode,
    /// Read the inputs once (spill every row) or twice (fingerprint buckets first, then spill
    /// only the buckets that differ); auto is 2 unless a side is CSV/NDJSON.
    #[arg(long, value_name = "auto|1|2", default_value = "auto")]
    passes: Passes,
    /// Compare fingerprints only (one pass per side, no spill): counts, differing columns
    /// and, with --by, differing groups. Strong evidence, not an exact proof.
    #[arg(long)]
    quick: bool,
    /// Break the unmatched rows (with --quick: the fingerprints) down by this column,
    /// e.g. business_date.
    #[arg(long, value_name = "COL")]
    by: Option<String>,
    /// Test hook: route every row into one bucket so bucket splitting is exercised.
    #[arg(long, hide = true)]
    debug_single_bucket: bool,
    #[command(flatten)]
    keyed: KeyArgs,
    #[command(flatten)]
    thresholds: ThresholdArgs,
    #[command(flatten)]
    input: InputArgs,
    #[command(flatten)]
    align: AlignArgs,
}

fn build_options(a: &DiffArgs) -> Result<DiffOptions, ReconError> {
    let run = RunConfig {
        threads: a.threads,
        memory_limit: a.memory_limit.clone(),
        temp_dir: a.temp_dir.clone(),
        passes: Some(a.passes),
        sample: Some(a.sample),
    }
    .build(DiffOptions::default().threads, default_limit())?;
    Ok(DiffOptions {
        threads: run.threads,
        memory_limit: run.memory_limit,
        temp_dir: run.temp_dir,
        sample: run.sample,
        passes: run.passes,
        output_dir: a.output.clone(),
        force: a.force,
        report_path: a.report.clone(),
        single_bucket: a.debug_single_bucket,
        align: a.align.build(&a.keyed)?,
        inputs: a.input.build()?,
        diff_columns: a.keyed.diff_columns,
        by: a.by.clone(),
        thresholds: a.thresholds.build()?,
        ..DiffOptions::default()
    })
}

/// When progress is drawn on stderr.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum ProgressMode {
    /// Only when stderr is a terminal, so logs and pipes stay clean.
    Auto,
    /// Always: a bar on a terminal, else a plain line every 2 seconds.
    Always,
    Never,
}

/// What the run is doing, in words, and its position and length.
fn progress_state(progress: &Progress) -> (String, u64, u64) {
    let (pass, passes) = progress.pass();
    let read = |what: &str| {
        if passes > 1 {
            format!("pass {pass} of {passes}: {what}")
        } else {
            what.to_string()
        }
    };
    let rows = || {
        (
            progress.rows_scanned.load(Ordering::Relaxed),
            progress.rows_total.load(Ordering::Relaxed),
        )
    };
    let (msg, (pos, len)) = match progress.phase() {
        Phase::Fingerprint => (read("fingerprinting"), rows()),
        Phase::Partition if passes > 1 && pass > 1 => {
            (read("partitioning differing buckets"), rows())
        }
        Phase::Partition => (read("partitioning"), rows()),
        Phase::Reconcile => (
            "reconciling buckets".to_string(),
            (
                progress.buckets_done.load(Ordering::Relaxed),
                progress.buckets_total.load(Ordering::Relaxed),
            ),
        ),
        Phase::Evidence => ("fetching evidence".to_string(), (0, 0)),
        Phase::Preflight | Phase::Done => ("preflight".to_string(), (0, 0)),
    };
    (msg, pos, len)
}

/// The run's state in words for a log line: "pass 1 of 2: fingerprinting
/// 40% (400 of 1000)".
fn progress_line(progress: &Progress) -> String {
    let (msg, pos, len) = progress_state(progress);
    if len > 0 {
        format!(
            "{msg} {:.0}% ({pos} of {len})",
            100.0 * pos as f64 / len as f64
        )
    } else {
        msg
    }
}

/// The bar style of one run: `label_width` is the room for the phase (and,
/// in a batch, the pair's name before it).
fn phase_style(label_width: usize) -> ProgressStyle {
    ProgressStyle::with_template(&format!(
        "{{spinner}} {{msg:<{label_width}}} [{{bar:24}}] {{percent:>3}}% {{human_pos}}/{{human_len}} {{prefix}} ETA {{eta}}  {{elapsed_precise}}"
    ))
    .unwrap_or_else(|_| ProgressStyle::default_bar())
    .progress_chars("=> ")
}

/// A bar that follows one run's counters: the phase, rows (or buckets) per
/// second and ETA, restarted when the phase changes. `recon diff` draws one;
/// `recon batch` one per running pair.
struct PhaseBar {
    bar: ProgressBar,
    label: String,
    shown: String,
    /// When this bar first saw the phase, and the count then: the rate is
    /// measured from there (a batch's bar may appear mid-phase).
    phase_start: std::time::Instant,
    phase_start_pos: u64,
}

impl PhaseBar {
    /// `label` goes before the phase ("orders_keyed: "), or is empty.
    fn new(bar: ProgressBar, label: String, label_width: usize) -> PhaseBar {
        bar.set_style(phase_style(label_width));
        PhaseBar {
            bar,
            label,
            shown: String::new(),
            phase_start: std::time::Instant::now(),
            phase_start_pos: 0,
        }
    }

    fn update(&mut self, progress: &Progress) {
        let (msg, pos, len) = progress_state(progress);
        if msg != self.shown {
            // A new phase starts its rate and ETA afresh.
            self.bar.reset();
            self.shown = msg.clone();
            self.phase_start = std::time::Instant::now();
            self.phase_start_pos = pos;
        }
        let secs = self.phase_start.elapsed().as_secs_f64().max(1e-3);
        let unit = if self.shown.starts_with("reconciling") {
            "buckets"
        } else {
            "rows"
        };
        let rate = pos.saturating_sub(self.phase_start_pos) as f64 / secs;
        self.bar.set_prefix(if rate >= 1e6 {
            format!("{:.2} M {unit}/s", rate / 1e6)
        } else if rate >= 1e3 {
            format!("{:.1} k {unit}/s", rate / 1e3)
        } else {
            format!("{rate:.0} {unit}/s")
        });
        self.bar.set_message(format!("{}{msg}", self.label));
        self.bar.set_length(len.max(1));
        self.bar.set_position(pos);
    }
}

/// How progress is shown, once `--progress` meets the terminal.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Shown {
    Nothing,
    /// Plain lines (a log): a line every 2 seconds.
    Lines,
    Bars,
}

/// Whether stderr can show bars: a terminal that moves its cursor. Where
/// `TERM` is unset or `dumb` indicatif draws nothing, so that is a log.
fn bars_drawable() -> bool {
    std::io::stderr().is_terminal() && std::env::var("TERM").is_ok_and(|t| t != "dumb")
}

fn shown_for(mode: ProgressMode, quiet: bool) -> Shown {
    match (mode, bars_drawable()) {
        _ if quiet => Shown::Nothing,
        (ProgressMode::Never, _) | (ProgressMode::Auto, false) => Shown::Nothing,
        (ProgressMode::Always, false) => Shown::Lines,
        _ => Shown::Bars,
    }
}

const LOG_EVERY: std::time::Duration = std::time::Duration::from_secs(2);
const REDRAW_EVERY: std::time::Duration = std::time::Duration::from_millis(100);

/// Draws progress on stderr from the library's counters until `done`: a bar
/// with the phase, rate and ETA on a terminal; with `always` and no
/// terminal, a plain line every 2 seconds.
fn show_progress(
    shown: Shown,
    progress: Arc<Progress>,
    done: Arc<AtomicBool>,
) -> Option<std::thread::JoinHandle<()>> {
    match shown {
        Shown::Nothing => None,
        Shown::Lines => Some(std::thread::spawn(move || {
            let started = std::time::Instant::now();
            let mut last = started;
            while !done.load(Ordering::Relaxed) {
                std::thread::sleep(REDRAW_EVERY);
                if last.elapsed() < LOG_EVERY {
                    continue;
                }
                last = std::time::Instant::now();
                let secs = started.elapsed().as_secs_f64();
                eprintln!("recon: {secs:.0}s {}", progress_line(&progress));
            }
        })),
        Shown::Bars => Some(std::thread::spawn(move || {
            // Drawn only once it has its words.
            let mut bar = PhaseBar::new(ProgressBar::hidden(), String::new(), 36);
            bar.update(&progress);
            bar.bar.set_draw_target(ProgressDrawTarget::stderr());
            while !done.load(Ordering::Relaxed) {
                bar.update(&progress);
                std::thread::sleep(REDRAW_EVERY);
            }
            bar.bar.finish_and_clear();
        })),
    }
}

/// The overall bar's words: "3 pass, 1 pass_with_drift, 1 fail, 0 error".
fn batch_counts(pairs: &[(String, PairState)]) -> String {
    let count = |v: &str| {
        pairs
            .iter()
            .filter(|(_, s)| matches!(s, PairState::Finished { verdict, .. } if *verdict == v))
            .count()
    };
    let mut words = format!(
        "{} pass, {} pass_with_drift, {} fail, {} error",
        count("pass"),
        count("pass_with_drift"),
        count("fail"),
        count("error")
    );
    let skipped = count("skipped");
    if skipped > 0 {
        words.push_str(&format!(", {skipped} skipped"));
    }
    words
}

/// Which pairs have been announced as finished, and how many.
#[derive(Default)]
struct Announced {
    seen: Vec<bool>,
    count: usize,
}

impl Announced {
    /// The pairs that finished since the last call, with their result line
    /// (`recon: [3] orders_keyed: pass_with_drift (0.01 s)`), numbered in
    /// the order they finished. Skipped pairs are left to the summary table.
    fn newly_finished(&mut self, pairs: &[(String, PairState)]) -> Vec<(usize, String)> {
        self.seen.resize(pairs.len(), false);
        let mut out = Vec::new();
        for (i, (name, state)) in pairs.iter().enumerate() {
            if let PairState::Finished { verdict, seconds } = state {
                if !self.seen[i] {
                    self.seen[i] = true;
                    if *verdict != "skipped" {
                        self.count += 1;
                        let n = self.count;
                        out.push((
                            i,
                            format!("recon: [{n}] {name}: {verdict} ({seconds:.2} s)"),
                        ));
                    }
                }
            }
        }
        out
    }
}

/// A way of showing a batch's progress, fed a snapshot ten times a second.
trait BatchDisplay: Send {
    fn draw(&mut self, pairs: &[(String, PairState)]);
    /// The batch is over: `pairs` holds every result.
    fn finish(&mut self, pairs: &[(String, PairState)]);
}

/// In a log: the result lines, and every 2 seconds a line per running pair.
struct BatchLines {
    announced: Announced,
    last: std::time::Instant,
}

impl BatchLines {
    fn results(&mut self, pairs: &[(String, PairState)]) {
        for (_, line) in self.announced.newly_finished(pairs) {
            eprintln!("{line}");
        }
    }
}

impl BatchDisplay for BatchLines {
    fn draw(&mut self, pairs: &[(String, PairState)]) {
        self.results(pairs);
        if self.last.elapsed() < LOG_EVERY {
            return;
        }
        self.last = std::time::Instant::now();
        for (name, state) in pairs {
            if let PairState::Running { progress, started } = state {
                let secs = started.elapsed().as_secs_f64();
                eprintln!("recon: {secs:.0}s {name}: {}", progress_line(progress));
            }
        }
    }

    fn finish(&mut self, pairs: &[(String, PairState)]) {
        self.results(pairs);
    }
}

/// On a terminal: a bar per running pair above the overall bar; a finished
/// pair's bar gives way to its result line, printed above the bars.
struct BatchBars {
    multi: MultiProgress,
    overall: ProgressBar,
    /// The overall bar joins the display once it has its words.
    overall_shown: bool,
    bars: BTreeMap<usize, PhaseBar>,
    announced: Announced,
}

impl BatchBars {
    fn new() -> BatchBars {
        let overall = ProgressBar::hidden();
        overall.set_style(
            ProgressStyle::with_template(
                "{spinner} {pos}/{len} pairs [{bar:24}] {msg}  {elapsed_precise}",
            )
            .unwrap_or_else(|_| ProgressStyle::default_bar())
            .progress_chars("=> "),
        );
        BatchBars {
            multi: MultiProgress::with_draw_target(ProgressDrawTarget::stderr()),
            overall,
            overall_shown: false,
            bars: BTreeMap::new(),
            announced: Announced::default(),
        }
    }
}

impl BatchDisplay for BatchBars {
    fn draw(&mut self, pairs: &[(String, PairState)]) {
        let finished = pairs
            .iter()
            .filter(|(_, s)| matches!(s, PairState::Finished { .. }))
            .count();
        self.overall.set_message(batch_counts(pairs));
        self.overall.set_length(pairs.len() as u64);
        self.overall.set_position(finished as u64);
        if !self.overall_shown {
            self.overall = self.multi.add(self.overall.clone());
            self.overall_shown = true;
        }
        self.overall.tick();
        for (i, line) in self.announced.newly_finished(pairs) {
            if let Some(bar) = self.bars.remove(&i) {
                bar.bar.finish_and_clear();
                self.multi.remove(&bar.bar);
            }
            let _ = self.multi.println(line);
        }
        let width = pairs
            .iter()
            .map(|(n, _)| n.len())
            .max()
            .unwrap_or(0)
            .min(40);
        for (i, (name, state)) in pairs.iter().enumerate() {
            // A pair that finished lost its bar above; one skipped never had one.
            let PairState::Running { progress, .. } = state else {
                continue;
            };
            let (multi, overall) = (&self.multi, &self.overall);
            self.bars
                .entry(i)
                .or_insert_with(|| {
                    // Drawn only once it has its words.
                    let mut bar = PhaseBar::new(
                        ProgressBar::hidden(),
                        format!("{name:<width$}  "),
                        width + 38,
                    );
                    bar.update(progress);
                    bar.bar = multi.insert_before(overall, bar.bar.clone());
                    bar
                })
                .update(progress);
        }
    }

    fn finish(&mut self, pairs: &[(String, PairState)]) {
        self.draw(pairs);
        for bar in self.bars.values() {
            bar.bar.finish_and_clear();
        }
        self.overall.finish_and_clear();
    }
}

/// Draws a batch's progress on stderr from its counters until `done`: bars
/// on a terminal, plain lines in a log with `always`.
fn show_batch_progress(
    shown: Shown,
    batch: Arc<BatchProgress>,
    done: Arc<AtomicBool>,
) -> Option<std::thread::JoinHandle<()>> {
    let mut display: Box<dyn BatchDisplay> = match shown {
        Shown::Nothing => return None,
        Shown::Lines => Box::new(BatchLines {
            announced: Announced::default(),
            last: std::time::Instant::now(),
        }),
        Shown::Bars => Box::new(BatchBars::new()),
    };
    Some(std::thread::spawn(move || loop {
        // Read `done` first: the snapshot after it holds every result.
        let ending = done.load(Ordering::Relaxed);
        let pairs = batch.snapshot();
        // Empty while the batch file loads (or when it failed to).
        if !pairs.is_empty() {
            if ending {
                display.finish(&pairs);
            } else {
                display.draw(&pairs);
            }
        }
        if ending {
            break;
        }
        std::thread::sleep(REDRAW_EVERY);
    }))
}

fn fingerprint_options(
    threads: Option<usize>,
    align: AlignOptions,
    by: Option<String>,
) -> Result<FingerprintOptions, ReconError> {
    let d = FingerprintOptions::default();
    let threads = threads.unwrap_or(d.threads);
    if threads == 0 {
        return Err(ReconError::Usage("--threads must be at least 1".into()));
    }
    Ok(FingerprintOptions {
        threads,
        align,
        by,
        ..d
    })
}

fn run_quick(a: &DiffArgs) -> Result<bool, ReconError> {
    let mut opts =
        fingerprint_options(a.threads, a.align.build(&KeyArgs::default())?, a.by.clone())?;
    // A piped input is copied here, as the exact diff would copy it.
    opts.temp_dir = a.temp_dir.clone();
    let [s, t] = fingerprint_pair(&a.source, &a.target, &opts, &a.input.build()?)?;
    let cmp = compare_fingerprints(&s, &t)?;
    if !a.quiet {
        let text = if a.json {
            cmp.to_json()
        } else {
            cmp.render_text()
        };
        let _ = std::io::stdout().lock().write_all(text.as_bytes());
    }
    Ok(cmp.fingerprints_match)
}

fn run_fingerprint(a: FingerprintArgs) -> Result<bool, ReconError> {
    let mut opts = fingerprint_options(a.threads, a.align.build(&KeyArgs::default())?, a.by)?;
    let [input, _] = a.input.build()?;
    opts.inputs = input;
    opts.schema_like = a.schema_like;
    let fp = fingerprint(&a.table, &opts)?;
    let json = fp.to_json();
    match &a.output {
        Some(path) => recon::evidence::write_atomic(path, json.as_bytes())?,
        None => {
            let _ = std::io::stdout().lock().write_all(json.as_bytes());
        }
    }
    Ok(true)
}

fn run_compare(a: CompareArgs) -> Result<bool, ReconError> {
    let s = FingerprintFile::load(&a.source)?;
    let t = FingerprintFile::load(&a.target)?;
    let cmp = compare_fingerprints(&s, &t)?;
    let text = if a.json {
        cmp.to_json()
    } else {
        cmp.render_text()
    };
    let _ = std::io::stdout().lock().write_all(text.as_bytes());
    Ok(cmp.fingerprints_match)
}

fn run_batch_cmd(a: BatchArgs) -> Result<u8, ReconError> {
    use recon::report::batch::{
        exit_code, junit, summary_table, BatchReport, BATCH_REPORT_VERSION,
    };
    let batch = Arc::new(BatchProgress::default());
    let done = Arc::new(AtomicBool::new(false));
    let drawer = show_batch_progress(shown_for(a.progress, a.quiet), batch.clone(), done.clone());
    let result = recon::modes::batch::run_batch(
        &a.file,
        &recon::modes::batch::BatchOptions {
            only: a.only.clone(),
            fail_fast: a.fail_fast,
            jobs: a.jobs,
            progress: batch,
        },
    );
    done.store(true, Ordering::Relaxed);
    if let Some(handle) = drawer {
        let _ = handle.join();
    }
    let outcomes = result?;
    if let Some(path) = &a.junit {
        let xml = junit(&outcomes).map_err(|e| ReconError::Internal(format!("JUnit XML: {e}")))?;
        recon::evidence::write_atomic(path, xml.as_bytes())?;
    }
    if let Some(path) = &a.report {
        let json = serde_json::to_string_pretty(&BatchReport {
            recon_batch_version: BATCH_REPORT_VERSION,
            pairs: &outcomes,
        })
        .map_err(|e| ReconError::Internal(format!("batch JSON: {e}")))?;
        recon::evidence::write_atomic(path, format!("{json}\n").as_bytes())?;
    }
    if let Some(path) = &a.html {
        let page = recon::report::html::batch_html(&outcomes).map_err(ReconError::Internal)?;
        recon::evidence::write_atomic(path, page.as_bytes())?;
    }
    if !a.quiet {
        let _ = std::io::stdout()
            .lock()
            .write_all(summary_table(&outcomes).as_bytes());
    }
    Ok(exit_code(&outcomes))
}

fn run_diff(a: DiffArgs) -> Result<bool, ReconError> {
    if a.quick {
        return run_quick(&a);
    }
    let opts = build_options(&a)?;
    let done = Arc::new(AtomicBool::new(false));
    let bar = show_progress(
        shown_for(a.progress, a.quiet),
        opts.progress.clone(),
        done.clone(),
    );
    let result = diff(&a.source, &a.target, &opts);
    done.store(true, Ordering::Relaxed);
    if let Some(handle) = bar {
        let _ = handle.join();
    }
    let outcome = result?;
    let report = &outcome.report;
    if let Some(path) = &a.html {
        let page = recon::report::html::diff_html(report).map_err(ReconError::Internal)?;
        recon::evidence::write_atomic(path, page.as_bytes())?;
    }
    if !a.quiet {
        let text = if a.json {
            report.to_json()
        } else {
            colour_verdict(outcome.report.render_text(&outcome.quoted), report)
        };
        let mut stdout = std::io::stdout().lock();
        // A closed pipe (recon diff ... | head) is not an error worth reporting.
        let _ = stdout.write_all(text.as_bytes());
    }
    Ok(report.passes())
}

/// Colours the verdict line on a terminal (green match, yellow pass with
/// drift, red drift), unless NO_COLOR is set (https://no-color.org).
fn colour_verdict(text: String, report: &recon::Report) -> String {
    let no_colour = std::env::var_os("NO_COLOR").is_some_and(|v| !v.is_empty());
    if no_colour || !std::io::stdout().is_terminal() {
        return text;
    }
    let code = if report.exact_match {
        "32"
    } else if report.passes() {
        "33"
    } else {
        "31"
    };
    match text.split_once('\n') {
        Some((first, rest)) => format!("\x1b[1;{code}m{first}\x1b[0m\n{rest}"),
        None => text,
    }
}

fn run_schema(a: SchemaArgs) -> Result<bool, ReconError> {
    let opts = a.align.build(&KeyArgs::default())?;
    let inputs = a.input.build()?;
    let (src, tgt, plan) = preflight(&a.source, &a.target, &opts, &inputs)?;
    let text = if a.json {
        schema_json(&plan)
    } else {
        schema_text(&plan, [&src, &tgt])
    };
    let _ = std::io::stdout().lock().write_all(text.as_bytes());
    Ok(plan.is_compatible())
}

fn main() -> ExitCode {
    // Panics inside decoders are caught where they happen and reported as one
    // line naming the file, so the default hook's multi-line message is muted;
    // a panic that escapes anyway (a bug) is reported below.
    std::panic::set_hook(Box::new(|_| {}));
    let _ = ctrlc::set_handler(|| {
        recon::engine::cancel_all();
        recon::engine::tempspace::cleanup_registered();
        eprintln!("recon: interrupted; temp files removed");
        std::process::exit(130);
    });
    let cli = match Cli::try_parse() {
        Ok(c) => c,
        Err(e) => {
            let code = if e.use_stderr() { 2 } else { 0 };
            let _ = e.print();
            return ExitCode::from(code);
        }
    };
    let result = std::panic::catch_unwind(|| match cli.command {
        Command::Diff(a) => run_diff(*a).map(|ok| if ok { 0 } else { 1 }),
        Command::Schema(a) => run_schema(a).map(|ok| if ok { 0 } else { 1 }),
        Command::Fingerprint(a) => run_fingerprint(a).map(|ok| if ok { 0 } else { 1 }),
        Command::CompareFingerprints(a) => run_compare(a).map(|ok| if ok { 0 } else { 1 }),
        Command::Batch(a) => run_batch_cmd(a),
    })
    .unwrap_or_else(|payload| Err(ReconError::Internal(panic_message(payload.as_ref()))));
    match result {
        Ok(code) => ExitCode::from(code),
        Err(e) => {
            eprintln!("recon: {}", e.one_line());
            ExitCode::from(2)
        }
    }
}
