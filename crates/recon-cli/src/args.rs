//! The command line as the user types it: clap's definitions of every
//! subcommand and flag, and their translation into the library's options
//! (what each flag means is the library's; spelling it is this file's).

use std::collections::BTreeMap;
use std::io::IsTerminal;
use std::path::PathBuf;

use clap::{Parser, Subcommand};

use recon::batch::PairSettings;
use recon::config::option_table::help;
use recon::config::{
    parse_choice, AlignOptions, DiffColumns, Format, InputConfig, Int96Unit, RulesFile, RunConfig,
    Thresholds,
};
use recon::fingerprint::FingerprintOptions;
use recon::{DiffOptions, Passes, ReconError};

#[derive(Parser)]
#[command(
    name = "recon",
    version,
    about = "Prove whether two tables hold exactly the same rows (EXCEPT ALL both ways)"
)]
pub(crate) struct Cli {
    #[command(subcommand)]
    pub(crate) command: Command,
    /// Colour the verdict line: auto (on a terminal, unless NO_COLOR is set), always, never.
    #[arg(long, global = true, value_name = "WHEN", default_value = "auto")]
    pub(crate) color: ColorMode,
}

/// When the verdict line is coloured.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum ColorMode {
    /// On a terminal, unless NO_COLOR is set (https://no-color.org).
    Auto,
    /// Always, even into a pipe or with NO_COLOR set (the flag wins, as no-color.org asks).
    Always,
    Never,
}

impl ColorMode {
    pub(crate) fn enabled(self) -> bool {
        match self {
            ColorMode::Always => true,
            ColorMode::Never => false,
            ColorMode::Auto => {
                std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty())
                    && std::io::stdout().is_terminal()
            }
        }
    }
}

#[derive(Subcommand)]
pub(crate) enum Command {
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
    /// Write the rows of a table whose digests a digests file lists (from
    /// `compare-fingerprints --digests`), to diff with the other side's.
    Extract(ExtractArgs),
    /// Run many pairs from a TOML file; exit 0 when every pair passes, 1 when any fails its
    /// thresholds, 2 when any errored.
    Batch(BatchArgs),
}

#[derive(clap::Args)]
pub(crate) struct BatchArgs {
    /// The batch file (see `[[pair]]` in the README).
    pub(crate) file: PathBuf,
    /// Run only pairs whose name matches (a glob; repeatable).
    #[arg(long, value_name = "NAME")]
    pub(crate) only: Vec<String>,
    /// Stop at the first pair that fails or errors (the rest are reported as skipped).
    #[arg(long)]
    pub(crate) fail_fast: bool,
    /// Run N pairs at once; each gets its memory limit divided by N.
    #[arg(long, value_name = "N", default_value_t = 1)]
    pub(crate) jobs: usize,
    /// Write JUnit XML here: one test case per pair.
    #[arg(long, value_name = "FILE")]
    pub(crate) junit: Option<PathBuf>,
    /// Write the batch JSON report here.
    #[arg(long, value_name = "FILE")]
    pub(crate) report: Option<PathBuf>,
    /// Write a self-contained HTML report here.
    #[arg(long, value_name = "FILE")]
    pub(crate) html: Option<PathBuf>,
    /// Print nothing; only the exit code tells.
    #[arg(short, long)]
    pub(crate) quiet: bool,
    /// Progress on stderr: auto (bars per running pair and overall, only on a terminal),
    /// always (also a line per finished pair and every 2 seconds per running pair in a log),
    /// never.
    #[arg(long, value_name = "WHEN", default_value = "auto")]
    pub(crate) progress: ProgressMode,
}

#[derive(clap::Args)]
pub(crate) struct FingerprintArgs {
    /// The table: a file, a directory, or a glob.
    pub(crate) table: PathBuf,
    /// Also fingerprint each group of this column (e.g. business_date).
    #[arg(long, value_name = "COL")]
    pub(crate) by: Option<String>,
    /// Write the fingerprint here (default: stdout).
    #[arg(short, long, value_name = "FILE")]
    pub(crate) output: Option<PathBuf>,
    /// Also write a sketch beside the file (FILE.sketch, needs -o) that names up to N
    /// differing distinct rows when compared with another table's [default N: 2000].
    #[arg(long, value_name = "N", num_args = 0..=1, default_missing_value = "2000")]
    pub(crate) sketch: Option<u64>,
    #[command(flatten)]
    pub(crate) read: OneTableArgs,
}

/// How `fingerprint` and `extract` read their one table: the same options,
/// so an extract reads the table as its fingerprint did.
#[derive(clap::Args)]
pub(crate) struct OneTableArgs {
    /// Type text columns like this table's columns (a CSV extract like its Parquet twin).
    #[arg(long, value_name = "FILE")]
    pub(crate) schema_like: Option<PathBuf>,
    #[arg(help = help("threads"), short = 'j', long, value_name = "N")]
    pub(crate) threads: Option<usize>,
    #[command(flatten)]
    pub(crate) input: InputArgs,
    #[command(flatten)]
    pub(crate) align: AlignArgs,
}

impl OneTableArgs {
    /// The fingerprint options of command `what` (grouped by `by`).
    pub(crate) fn options(
        self,
        what: &str,
        by: Option<String>,
    ) -> Result<FingerprintOptions, ReconError> {
        if let Some(flag) = self.input.target_flags().first() {
            return Err(ReconError::Usage(format!(
                "{flag}: recon {what} reads one table; give its options without target- \
                 (--source-format, --source-query, --skip-rows)"
            )));
        }
        let diff = settings(
            &self.align,
            &KeyArgs::default(),
            &self.input,
            RunConfig::default(),
            &ThresholdArgs::default(),
        )?;
        let [input, _] = diff.inputs;
        let mut opts = fingerprint_options(self.threads, diff.align, by)?;
        opts.inputs = input;
        opts.schema_like = self.schema_like;
        Ok(opts)
    }
}

#[derive(clap::Args)]
pub(crate) struct ExtractArgs {
    /// The table: a file, a directory, or a glob.
    pub(crate) table: PathBuf,
    /// The digests file `compare-fingerprints --digests` wrote.
    #[arg(long, value_name = "FILE")]
    pub(crate) digests: PathBuf,
    /// This table's fingerprint file (it must still match the table).
    #[arg(long, value_name = "FILE")]
    pub(crate) like: PathBuf,
    /// Write the rows here (Parquet, the table's own columns).
    #[arg(short, long, value_name = "FILE")]
    pub(crate) output: PathBuf,
    #[command(flatten)]
    pub(crate) read: OneTableArgs,
}

#[derive(clap::Args)]
pub(crate) struct CompareArgs {
    /// The source side's fingerprint file.
    pub(crate) source: PathBuf,
    /// The target side's fingerprint file.
    pub(crate) target: PathBuf,
    /// Print the comparison as JSON.
    #[arg(long)]
    pub(crate) json: bool,
    /// Write the differing rows' digests here, decoded from the files' sketches
    /// (both made with `fingerprint --sketch`), for `recon extract`.
    #[arg(long, value_name = "FILE")]
    pub(crate) digests: Option<PathBuf>,
}

#[derive(clap::Args)]
pub(crate) struct SchemaArgs {
    /// Source table: a file, a directory (read recursively; key=value levels are columns), or a glob.
    pub(crate) source: PathBuf,
    /// Target table: a file, a directory, or a glob.
    pub(crate) target: PathBuf,
    #[command(flatten)]
    pub(crate) input: InputArgs,
    #[command(flatten)]
    pub(crate) align: AlignArgs,
    /// Print the plan as JSON.
    #[arg(long)]
    pub(crate) json: bool,
}

/// Column alignment, conversions and normalization, shared by `diff` and `schema`.
#[derive(clap::Args)]
pub(crate) struct AlignArgs {
    #[arg(help = help("by_position"), long, help_heading = "Alignment")]
    pub(crate) by_position: bool,
    #[arg(help = help("ignore_case_names"), long, help_heading = "Alignment")]
    pub(crate) ignore_case_names: bool,
    #[arg(help = help("map"), long = "map", value_name = "SRC=TGT", help_heading = "Alignment")]
    pub(crate) maps: Vec<String>,
    #[arg(
        help = help("exclude"),
        long,
        value_name = "COL[,COL]",
        value_delimiter = ',',
        help_heading = "Alignment"
    )]
    pub(crate) exclude: Vec<String>,
    #[arg(
        help = help("columns"),
        long,
        value_name = "COL[,COL]",
        value_delimiter = ',',
        help_heading = "Alignment"
    )]
    pub(crate) columns: Option<Vec<String>>,
    #[arg(help = help("ignore_extra_columns"), long, help_heading = "Alignment")]
    pub(crate) ignore_extra_columns: bool,
    #[arg(help = help("assume_tz"), long, value_name = "TZ", help_heading = "Types")]
    pub(crate) assume_tz: Vec<String>,
    #[arg(help = help("cast"), long = "cast", value_name = "COL=TYPE", help_heading = "Types")]
    pub(crate) casts: Vec<String>,
    #[arg(help = help("round"), long, value_name = "COL=N", help_heading = "Normalization")]
    pub(crate) round: Vec<String>,
    #[arg(help = help("timestamp_precision"), long, value_name = "COL=UNIT", help_heading = "Normalization")]
    pub(crate) timestamp_precision: Vec<String>,
    #[arg(help = help("trim"), long, value_name = "COL", help_heading = "Normalization")]
    pub(crate) trim: Vec<String>,
    #[arg(help = help("case_insensitive"), long, value_name = "COL", help_heading = "Normalization")]
    pub(crate) case_insensitive: Vec<String>,
    #[arg(help = help("empty_as_null"), long, value_name = "COL", help_heading = "Normalization")]
    pub(crate) empty_as_null: Vec<String>,
    #[arg(help = help("rules"), long, value_name = "FILE", help_heading = "Normalization")]
    pub(crate) rules: Option<PathBuf>,
}

pub(crate) fn split_pair<'a>(flag: &str, text: &'a str) -> Result<(&'a str, &'a str), ReconError> {
    text.split_once('=')
        .map(|(a, b)| (a.trim(), b.trim()))
        .filter(|(a, b)| !a.is_empty() && !b.is_empty())
        .ok_or_else(|| ReconError::Usage(format!("{flag} {text}: expected NAME=VALUE")))
}

impl AlignArgs {
    /// The flags as a rules file would spell them, with keyed mode's: the
    /// `align` layer of [`settings`], which a `--rules` file then fills.
    fn as_rules(&self, keyed: &KeyArgs) -> Result<RulesFile, ReconError> {
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
        Ok(RulesFile {
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
            // Input settings: InputArgs takes the flags.
            ..RulesFile::default()
        })
    }
}

/// The options the flags give, by the library's one path from layered
/// settings ([`DiffOptions::from_settings`]: the flags, then the `--rules`
/// file), as Python, Spark and batch files take it.
pub(crate) fn settings(
    align: &AlignArgs,
    keyed: &KeyArgs,
    input: &InputArgs,
    run: RunConfig,
    thresholds: &ThresholdArgs,
) -> Result<DiffOptions, ReconError> {
    let settings = PairSettings {
        run,
        thresholds: Thresholds {
            max_unmatched_rows: thresholds.max_unmatched_rows,
            max_unmatched_ratio: thresholds.max_unmatched_ratio,
            max_changed: thresholds.max_changed,
            max_missing: thresholds.max_missing,
        },
        align: align.as_rules(keyed)?,
        input: input.config()?,
    };
    DiffOptions::from_settings(&settings, align.rules.as_deref())
}

/// Drift allowed before a diff fails (exit 0 within all of them).
#[derive(clap::Args, Default)]
pub(crate) struct ThresholdArgs {
    #[arg(help = help("max_unmatched_rows"), long, value_name = "N", help_heading = "Thresholds")]
    pub(crate) max_unmatched_rows: Option<u64>,
    #[arg(help = help("max_unmatched_ratio"), long, value_name = "R", help_heading = "Thresholds")]
    pub(crate) max_unmatched_ratio: Option<f64>,
    #[arg(help = help("max_changed"), long, value_name = "N", help_heading = "Thresholds")]
    pub(crate) max_changed: Option<u64>,
    #[arg(help = help("max_missing"), long, value_name = "N", help_heading = "Thresholds")]
    pub(crate) max_missing: Option<u64>,
}

/// Keyed mode's flags (`diff` only).
#[derive(clap::Args, Default)]
pub(crate) struct KeyArgs {
    #[arg(
        help = help("key"),
        long,
        value_name = "COL[,COL]",
        value_delimiter = ',',
        help_heading = "Keyed"
    )]
    pub(crate) key: Option<Vec<String>>,
    #[arg(help = help("tolerance"), long, value_name = "COL=TOL", help_heading = "Keyed")]
    pub(crate) tolerance: Vec<String>,
    #[arg(help = help("diff_columns"), long, value_name = "changed|all", help_heading = "Keyed", value_parser = parse_choice::<DiffColumns>)]
    pub(crate) diff_columns: Option<DiffColumns>,
}

/// How inputs are read: formats and the CSV dialect (shared by both sides).
#[derive(clap::Args)]
pub(crate) struct InputArgs {
    #[arg(help = help("source_format"), long, value_name = "FORMAT", help_heading = "Input", value_parser = parse_choice::<Format>)]
    pub(crate) source_format: Option<Format>,
    #[arg(help = help("target_format"), long, value_name = "FORMAT", help_heading = "Input", value_parser = parse_choice::<Format>)]
    pub(crate) target_format: Option<Format>,
    #[arg(help = help("source_query"), long, value_name = "SQL", help_heading = "Database")]
    pub(crate) source_query: Option<String>,
    #[arg(help = help("target_query"), long, value_name = "SQL", help_heading = "Database")]
    pub(crate) target_query: Option<String>,
    #[arg(help = help("connections"), long, value_name = "N", help_heading = "Database")]
    pub(crate) connections: Option<usize>,
    #[arg(help = help("storage_options"), long, value_name = "KEY=VALUE", help_heading = "Object store")]
    pub(crate) storage_option: Vec<String>,
    #[arg(help = help("delimiter"), long, value_name = "CHAR", help_heading = "Input")]
    pub(crate) delimiter: Option<String>,
    #[arg(help = help("quote"), long, value_name = "CHAR", help_heading = "Input")]
    pub(crate) quote: Option<String>,
    #[arg(help = help("escape"), long, value_name = "CHAR", help_heading = "Input")]
    pub(crate) escape: Option<String>,
    /// CSV files have no header line; columns are column_1, column_2, ...
    /// [default: sniffed from the first lines]
    #[arg(long, help_heading = "Input", conflicts_with = "header")]
    pub(crate) no_header: bool,
    #[arg(help = help("header"), long, help_heading = "Input")]
    pub(crate) header: bool,
    #[arg(help = help("null_values"), long = "null-value", value_name = "STR", help_heading = "Input")]
    pub(crate) null_values: Vec<String>,
    #[arg(help = help("encoding"), long, value_name = "ENC", help_heading = "Input")]
    pub(crate) encoding: Option<String>,
    #[arg(help = help("infer_types"), long, help_heading = "Input")]
    pub(crate) infer_types: bool,
    #[arg(help = help("max_parse_errors"), long, value_name = "N", default_value_t = 0, help_heading = "Input")]
    pub(crate) max_parse_errors: u64,
    #[arg(
        help = help("int96_unit"),
        long,
        value_name = "UNIT",
        default_value = "us",
        help_heading = "Input",
        value_parser = parse_choice::<Int96Unit>
    )]
    pub(crate) int96_unit: Int96Unit,
    #[arg(help = help("trailing_delimiter"), long, help_heading = "Input")]
    pub(crate) trailing_delimiter: bool,
    #[arg(help = help("quoted_empty_as_null"), long, help_heading = "Input")]
    pub(crate) quoted_empty_as_null: bool,
    #[arg(help = help("date_format"), long, value_name = "COL=FMT", help_heading = "Input")]
    pub(crate) date_format: Vec<String>,
    #[arg(help = help("timestamp_format"), long, value_name = "COL=FMT", help_heading = "Input")]
    pub(crate) timestamp_format: Vec<String>,
    #[arg(help = help("skip_rows"), long, value_name = "N", help_heading = "Input")]
    pub(crate) skip_rows: Option<usize>,
    #[arg(help = help("source_skip_rows"), long, value_name = "N", help_heading = "Input")]
    pub(crate) source_skip_rows: Option<usize>,
    #[arg(help = help("target_skip_rows"), long, value_name = "N", help_heading = "Input")]
    pub(crate) target_skip_rows: Option<usize>,
    #[arg(help = help("comment"), long, value_name = "CHAR", help_heading = "Input")]
    pub(crate) comment: Option<String>,
}

/// `--storage-option KEY=VALUE` flags; a value may itself hold `=`.
fn storage_options(list: &[String]) -> Result<BTreeMap<String, String>, ReconError> {
    list.iter()
        .map(|p| {
            p.split_once('=')
                .filter(|(k, _)| !k.trim().is_empty())
                .map(|(k, v)| (k.trim().to_ascii_lowercase(), v.to_string()))
                .ok_or_else(|| {
                    // The value may be a secret: the message names the key only.
                    let key = p.split('=').next().unwrap_or("");
                    ReconError::Usage(format!("--storage-option {key}: expected KEY=VALUE"))
                })
        })
        .collect()
}

/// `COL=FMT` flags by column; the pattern may itself hold `=`.
pub(crate) fn column_patterns(
    flag: &str,
    list: &[String],
) -> Result<BTreeMap<String, String>, ReconError> {
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
    /// The target-side flags given, for a command that reads one table
    /// (`recon fingerprint`), which refuses them rather than drop them.
    pub(crate) fn target_flags(&self) -> Vec<&'static str> {
        let given = [
            ("--target-format", self.target_format.is_some()),
            ("--target-query", self.target_query.is_some()),
            ("--target-skip-rows", self.target_skip_rows.is_some()),
        ];
        given.iter().filter(|g| g.1).map(|g| g.0).collect()
    }

    /// The flags as a batch file's `[pair.input]` spells them: the `input`
    /// layer of [`settings`].
    fn config(&self) -> Result<InputConfig, ReconError> {
        Ok(InputConfig {
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
            source_query: self.source_query.clone(),
            target_query: self.target_query.clone(),
            connections: self.connections,
            storage_options: storage_options(&self.storage_option)?,
        })
    }
}

#[derive(clap::Args)]
pub(crate) struct DiffArgs {
    /// Source table: a file, a directory (read recursively; key=value levels are columns), or a glob.
    pub(crate) source: PathBuf,
    /// Target table: a file, a directory, or a glob.
    pub(crate) target: PathBuf,
    #[arg(help = help("output"), short, long, value_name = "DIR")]
    pub(crate) output: Option<PathBuf>,
    #[arg(help = help("force"), long)]
    pub(crate) force: bool,
    /// Write the JSON report to FILE.
    #[arg(long, value_name = "FILE")]
    pub(crate) report: Option<PathBuf>,
    /// Write a self-contained HTML report to FILE.
    #[arg(long, value_name = "FILE")]
    pub(crate) html: Option<PathBuf>,
    #[arg(help = help("sample"), long, value_name = "N")]
    pub(crate) sample: Option<usize>,
    #[arg(help = help("threads"), short = 'j', long, value_name = "N")]
    pub(crate) threads: Option<usize>,
    #[arg(help = help("memory_limit"), short = 'm', long, value_name = "SIZE")]
    pub(crate) memory_limit: Option<String>,
    #[arg(help = help("temp_dir"), long, value_name = "DIR")]
    pub(crate) temp_dir: Option<PathBuf>,
    /// Print the JSON report to stdout instead of the text summary.
    #[arg(long)]
    pub(crate) json: bool,
    /// Print nothing; only the exit code tells.
    #[arg(short, long)]
    pub(crate) quiet: bool,
    /// Progress on stderr: auto (only on a terminal), always, never.
    #[arg(long, value_name = "WHEN", default_value = "auto")]
    pub(crate) progress: ProgressMode,
    #[arg(help = help("passes"), long, value_name = "auto|1|2", value_parser = parse_choice::<Passes>)]
    pub(crate) passes: Option<Passes>,
    /// Compare fingerprints only (one pass per side, no spill): counts, differing columns
    /// and, with --by, differing groups. Strong evidence, not an exact proof.
    #[arg(long)]
    pub(crate) quick: bool,
    #[arg(help = help("by"), long, value_name = "COL")]
    pub(crate) by: Option<String>,
    /// Test hook: route every row into one bucket so bucket splitting is exercised.
    #[arg(long, hide = true)]
    pub(crate) debug_single_bucket: bool,
    #[command(flatten)]
    pub(crate) keyed: KeyArgs,
    #[command(flatten)]
    pub(crate) thresholds: ThresholdArgs,
    #[command(flatten)]
    pub(crate) input: InputArgs,
    #[command(flatten)]
    pub(crate) align: AlignArgs,
}

pub(crate) fn build_options(a: &DiffArgs) -> Result<DiffOptions, ReconError> {
    let run = RunConfig {
        threads: a.threads,
        memory_limit: a.memory_limit.clone(),
        temp_dir: a.temp_dir.clone(),
        passes: a.passes,
        sample: a.sample,
    };
    Ok(DiffOptions {
        output_dir: a.output.clone(),
        force: a.force,
        report_path: a.report.clone(),
        single_bucket: a.debug_single_bucket,
        diff_columns: a.keyed.diff_columns.unwrap_or_default(),
        by: a.by.clone(),
        ..settings(&a.align, &a.keyed, &a.input, run, &a.thresholds)?
    })
}

/// When progress is drawn on stderr.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum ProgressMode {
    /// Only when stderr is a terminal, so logs and pipes stay clean.
    Auto,
    /// Always: a bar on a terminal, else a plain line every 2 seconds.
    Always,
    Never,
}

pub(crate) fn fingerprint_options(
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

/// The first `diff` option that `--quick` cannot apply, with why: every
/// option either applies or is refused, never silently dropped.
pub(crate) fn quick_refusal(a: &DiffArgs, thresholds: &Thresholds) -> Option<String> {
    let no_rows = "--quick finds which columns and groups differ, not rows";
    let given = [
        (a.output.is_some(), "--output", no_rows),
        (a.force, "--force", no_rows),
        (a.sample.is_some(), "--sample", no_rows),
        (
            a.keyed.key.is_some(),
            "--key",
            "fingerprints compare whole rows; keyed comparisons need the exact diff",
        ),
        (
            !a.keyed.tolerance.is_empty(),
            "--tolerance",
            "fingerprints compare exact values; tolerances need the exact diff",
        ),
        (
            a.keyed.diff_columns.is_some(),
            "--diff-columns",
            "it shapes keyed mode's changed.parquet",
        ),
        (
            a.passes.is_some_and(|p| p != Passes::Auto),
            "--passes",
            "--quick always reads each side once",
        ),
        (
            a.memory_limit.is_some(),
            "--memory-limit",
            "--quick keeps only fingerprints in memory and enforces no limit",
        ),
        (
            a.debug_single_bucket,
            "--debug-single-bucket",
            "--quick has no buckets",
        ),
    ];
    if let Some((_, flag, why)) = given.iter().find(|g| g.0) {
        return Some(format!("{flag} does not apply with --quick: {why}"));
    }
    thresholds.undecidable_by_fingerprints().map(|(name, value)| {
        format!(
            "--{} {value} does not apply with --quick: fingerprints show whether the tables differ, not by how many rows; drop --quick (the exact diff reads a matching pair once, as --quick does)",
            name.replace('_', "-")
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;
    use recon::config::option_table::{Group, Shape, OPTIONS};

    /// `recon diff`'s flags that are not options of a diff in the table
    /// (what the CLI prints or writes, and how), and why.
    const CLI_ONLY: &[&str] = &[
        "report",              // the JSON report's file (Python: Diff.to_json)
        "html",                // the HTML report's file (Python: Diff.to_html)
        "json",                // the report on stdout (Python: Diff.report)
        "quiet",               // nothing printed
        "progress",            // bars on stderr (Python: progress=, its own shape)
        "quick",               // fingerprints (Python: recon.fingerprint)
        "no-header",           // header=False's flag
        "debug-single-bucket", // a test hook
        "help",
    ];

    fn diff_command() -> clap::Command {
        Cli::command()
            .find_subcommand("diff")
            .expect("recon diff")
            .clone()
    }

    #[test]
    fn every_diff_flag_is_in_the_option_table() {
        for arg in diff_command().get_arguments() {
            let Some(flag) = arg.get_long() else { continue };
            if CLI_ONLY.contains(&flag) {
                continue;
            }
            let spec = OPTIONS.iter().find(|o| o.flag == flag);
            let spec = spec.unwrap_or_else(|| panic!("--{flag} is not in the option table"));
            // The help is the table's (derived, never a copy).
            let help = arg.get_help().map(|h| h.to_string());
            assert_eq!(help.as_deref(), Some(spec.help), "--{flag}");
            // The value's shape is the table's.
            let shape = match arg.get_action() {
                clap::ArgAction::SetTrue => Shape::Switch,
                clap::ArgAction::Append => Shape::List,
                _ if arg.get_value_delimiter().is_some() => Shape::List,
                _ => Shape::Value,
            };
            let expected = match spec.shape {
                // A dict is a repeatable COL=VALUE flag.
                Shape::Dict => Shape::List,
                s => s,
            };
            assert_eq!(shape, expected, "--{flag}");
        }
    }

    #[test]
    fn every_option_in_the_table_is_a_diff_flag() {
        let command = diff_command();
        for o in OPTIONS {
            let found = command
                .get_arguments()
                .any(|a| a.get_long() == Some(o.flag));
            assert!(found, "{} ({:?}) has no flag --{}", o.name, o.group, o.flag);
        }
        assert!(OPTIONS.iter().any(|o| o.group == Group::Call));
    }
}
