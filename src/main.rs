//! The `recon` command line: parses arguments, runs the library, prints, and
//! maps the outcome to an exit code (0 match, 1 drift, 2 error).

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};

use recon::error::panic_message;
use recon::memory::{self, parse_size};
use recon::{diff, DiffOptions, ReconError};

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
    /// Compare two tables as multisets of rows; exit 0 on an exact match, 1 on drift, 2 on error.
    Diff(DiffArgs),
}

#[derive(clap::Args)]
struct DiffArgs {
    /// Source table: a Parquet file or a directory of Parquet files.
    source: PathBuf,
    /// Target table: a Parquet file or a directory of Parquet files.
    target: PathBuf,
    /// Write source_only.parquet, target_only.parquet and report.json here.
    #[arg(short, long, value_name = "DIR")]
    output: Option<PathBuf>,
    /// Overwrite results already present in --output.
    #[arg(long)]
    force: bool,
    /// Write the JSON report to FILE.
    #[arg(long, value_name = "FILE")]
    report: Option<PathBuf>,
    /// Distinct unmatched rows to show per direction.
    #[arg(long, value_name = "N", default_value_t = 20)]
    sample: usize,
    /// Worker threads [default: all cores].
    #[arg(short = 'j', long, value_name = "N")]
    threads: Option<usize>,
    /// Peak memory budget, e.g. 256MiB, 4GiB, or 'unlimited' [default: half of RAM].
    #[arg(short = 'm', long, value_name = "SIZE")]
    memory_limit: Option<String>,
    /// Directory for spill files [default: the system temp dir].
    #[arg(long, value_name = "DIR")]
    temp_dir: Option<PathBuf>,
    /// Print the JSON report to stdout instead of the text summary.
    #[arg(long)]
    json: bool,
    /// Print nothing; only the exit code tells.
    #[arg(short, long)]
    quiet: bool,
    /// Test hook: route every row into one bucket so bucket splitting is exercised.
    #[arg(long, hide = true)]
    debug_single_bucket: bool,
}

fn build_options(a: &DiffArgs) -> Result<DiffOptions, ReconError> {
    let mut o = DiffOptions::default();
    if let Some(t) = a.threads {
        o.threads = t;
    }
    if let Some(m) = &a.memory_limit {
        o.memory_limit = parse_size(m)?;
        if o.memory_limit < 8 * memory::MIB {
            return Err(ReconError::Usage(
                "--memory-limit must be at least 8MiB".into(),
            ));
        }
    }
    o.temp_dir = a.temp_dir.clone();
    o.sample = a.sample;
    o.output_dir = a.output.clone();
    o.force = a.force;
    o.report_path = a.report.clone();
    o.single_bucket = a.debug_single_bucket;
    Ok(o)
}

fn run_diff(a: DiffArgs) -> Result<bool, ReconError> {
    let opts = build_options(&a)?;
    let outcome = diff(&a.source, &a.target, &opts)?;
    let report = &outcome.report;
    if !a.quiet {
        let text = if a.json {
            report.to_json()
        } else {
            outcome.report.render_text(&outcome.quoted)
        };
        let mut stdout = std::io::stdout().lock();
        // A closed pipe (recon diff ... | head) is not an error worth reporting.
        let _ = stdout.write_all(text.as_bytes());
    }
    Ok(report.exact_match)
}

fn main() -> ExitCode {
    // Panics inside decoders are caught where they happen and reported as one
    // line naming the file, so the default hook's multi-line message is muted;
    // a panic that escapes anyway (a bug) is reported below.
    std::panic::set_hook(Box::new(|_| {}));
    let _ = ctrlc::set_handler(|| {
        recon::diff::CANCEL.store(true, std::sync::atomic::Ordering::SeqCst);
        recon::tempspace::cleanup_registered();
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
        Command::Diff(a) => run_diff(a),
    })
    .unwrap_or_else(|payload| Err(ReconError::Internal(panic_message(payload.as_ref()))));
    match result {
        Ok(true) => ExitCode::from(0),
        Ok(false) => ExitCode::from(1),
        Err(e) => {
            eprintln!("recon: {e}");
            ExitCode::from(2)
        }
    }
}
