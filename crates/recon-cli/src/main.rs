//! The `recon` command line: parses arguments, runs the library, prints, and
//! maps the outcome to an exit code (0 match, 1 drift, 2 error, 130
//! interrupted). Flags live in `args`, progress drawing in `progress`.

mod args;
mod progress;

use std::io::Write;
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use clap::Parser;

use recon::batch::BatchProgress;
use recon::config::RunConfig;
use recon::error::panic_message;
use recon::fingerprint::{
    compare as compare_fingerprints, extract, fingerprint, fingerprint_pair, DigestsFile,
    FingerprintFile,
};
use recon::{diff, write_atomic, OptionHint, ReconError};

use args::{
    build_options, fingerprint_options, quick_refusal, settings, BatchArgs, Cli, ColorMode,
    Command, CompareArgs, DiffArgs, ExtractArgs, FingerprintArgs, KeyArgs, SchemaArgs,
    ThresholdArgs,
};
use progress::{drawing, show_batch_progress, shown_for};

fn run_quick(a: &DiffArgs) -> Result<bool, ReconError> {
    let diff = settings(
        &a.align,
        &KeyArgs::default(),
        &a.input,
        RunConfig::default(),
        &a.thresholds,
    )?;
    if let Some(why) = quick_refusal(a, &diff.thresholds) {
        return Err(ReconError::Usage(why));
    }
    let mut opts = fingerprint_options(a.threads, diff.align, a.by.clone())?;
    // A piped input is copied here, as the exact diff would copy it.
    opts.temp_dir = a.temp_dir.clone();
    let inputs = diff.inputs;
    let [s, t] = drawing(
        shown_for(a.progress, a.quiet),
        opts.progress.clone(),
        || fingerprint_pair(&a.source, &a.target, &opts, &inputs),
    )?;
    let cmp = compare_fingerprints(&s, &t)?;
    if let Some(path) = &a.report {
        write_atomic(path, cmp.to_json().as_bytes())?;
    }
    if let Some(path) = &a.html {
        let value = serde_json::to_value(&cmp)
            .map_err(|e| ReconError::Internal(format!("comparison JSON: {e}")))?;
        let page = recon::report::quick_html(&value, &cmp.verdict_line())?;
        write_atomic(path, page.as_bytes())?;
    }
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
    if a.sketch.is_some() && a.output.is_none() {
        return Err(ReconError::Usage(
            "--sketch writes a file beside the fingerprint: give -o FILE".into(),
        ));
    }
    let mut opts = a.read.options("fingerprint", a.by)?;
    opts.sketch = a.sketch;
    let mut fp = fingerprint(&a.table, &opts)?;
    match &a.output {
        Some(path) => fp.write(path)?,
        None => {
            let _ = std::io::stdout().lock().write_all(fp.to_json().as_bytes());
        }
    }
    Ok(true)
}

fn run_extract(a: ExtractArgs) -> Result<(), ReconError> {
    let opts = a.read.options("extract", None)?;
    let digests = DigestsFile::load(&a.digests)?;
    let like = FingerprintFile::load(&a.like)?;
    let done = extract(&a.table, &digests, &like, &opts, &a.output)?;
    eprintln!(
        "wrote {} rows ({} of the {} listed digests) of the {} to {}",
        done.rows,
        done.digests,
        digests.differences.len(),
        done.side.name(),
        a.output.display()
    );
    Ok(())
}

fn run_compare(a: CompareArgs) -> Result<bool, ReconError> {
    let s = FingerprintFile::load(&a.source)?;
    let t = FingerprintFile::load(&a.target)?;
    let cmp = compare_fingerprints(&s, &t)?;
    if let Some(path) = &a.digests {
        let file = cmp.digests_file(&s, &t)?;
        write_atomic(path, file.to_json().as_bytes())?;
    }
    let text = if a.json {
        cmp.to_json()
    } else {
        cmp.render_text()
    };
    let _ = std::io::stdout().lock().write_all(text.as_bytes());
    Ok(cmp.fingerprints_match)
}

fn run_batch_cmd(a: BatchArgs) -> Result<u8, ReconError> {
    use recon::batch::{exit_code, junit, summary_table, BatchReport, BATCH_REPORT_VERSION};
    let batch = Arc::new(BatchProgress::default());
    let done = Arc::new(AtomicBool::new(false));
    let drawer = show_batch_progress(shown_for(a.progress, a.quiet), batch.clone(), done.clone());
    let result = recon::batch::run_batch(
        &a.file,
        &recon::batch::BatchOptions {
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
        let xml = junit(&outcomes)?;
        write_atomic(path, xml.as_bytes())?;
    }
    if let Some(path) = &a.report {
        let json = serde_json::to_string_pretty(&BatchReport {
            recon_batch_version: BATCH_REPORT_VERSION,
            pairs: &outcomes,
        })
        .map_err(|e| ReconError::Internal(format!("batch JSON: {e}")))?;
        write_atomic(path, format!("{json}\n").as_bytes())?;
    }
    if let Some(path) = &a.html {
        let page = recon::batch::batch_html(&outcomes)?;
        write_atomic(path, page.as_bytes())?;
    }
    if !a.quiet {
        let _ = std::io::stdout()
            .lock()
            .write_all(summary_table(&outcomes).as_bytes());
    }
    Ok(exit_code(&outcomes))
}

fn run_diff(a: DiffArgs, color: ColorMode) -> Result<bool, ReconError> {
    if a.quick {
        return run_quick(&a);
    }
    let opts = build_options(&a)?;
    let outcome = drawing(
        shown_for(a.progress, a.quiet),
        opts.progress.clone(),
        || diff(&a.source, &a.target, &opts),
    )?;
    let report = &outcome.report;
    if let Some(path) = &a.html {
        let page = recon::report::diff_html(report)?;
        write_atomic(path, page.as_bytes())?;
    }
    if !a.quiet {
        let text = if a.json {
            report.to_json()
        } else {
            colour_verdict(outcome.report.render_text(&outcome.quoted), report, color)
        };
        let mut stdout = std::io::stdout().lock();
        // A closed pipe (recon diff ... | head) is not an error worth reporting.
        let _ = stdout.write_all(text.as_bytes());
    }
    Ok(report.passes())
}

/// Colours the verdict line (green match, yellow pass with drift, red
/// drift) when `color` says so.
fn colour_verdict(text: String, report: &recon::Report, color: ColorMode) -> String {
    if !color.enabled() {
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
    let diff = settings(
        &a.align,
        &KeyArgs::default(),
        &a.input,
        RunConfig::default(),
        &ThresholdArgs::default(),
    )?;
    let screen = recon::schema(&a.source, &a.target, &diff.align, &diff.inputs)?;
    let text = if a.json { &screen.json } else { &screen.text };
    let _ = std::io::stdout().lock().write_all(text.as_bytes());
    Ok(screen.compatible)
}

fn main() -> ExitCode {
    // Panics inside decoders are caught where they happen and reported as one
    // line naming the file, so the default hook's multi-line message is muted;
    // a panic that escapes anyway (a bug) is reported below.
    std::panic::set_hook(Box::new(|_| {}));
    let _ = ctrlc::set_handler(|| {
        recon::cancel_all();
        recon::cleanup_registered();
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
    let color = cli.color;
    let result = std::panic::catch_unwind(|| match cli.command {
        Command::Diff(a) => run_diff(*a, color).map(|ok| if ok { 0 } else { 1 }),
        Command::Schema(a) => run_schema(a).map(|ok| if ok { 0 } else { 1 }),
        Command::Fingerprint(a) => run_fingerprint(a).map(|ok| if ok { 0 } else { 1 }),
        Command::CompareFingerprints(a) => run_compare(a).map(|ok| if ok { 0 } else { 1 }),
        Command::Extract(a) => run_extract(a).map(|_| 0),
        Command::Batch(a) => run_batch_cmd(a),
    })
    .unwrap_or_else(|payload| Err(ReconError::Internal(panic_message(payload.as_ref()))));
    match result {
        Ok(code) => ExitCode::from(code),
        Err(e) => {
            // Option hints are spelled as this program's flags.
            let message = e.render(&OptionHint::as_flag);
            eprintln!("recon: {}", recon::error::one_line(&message));
            ExitCode::from(2)
        }
    }
}
