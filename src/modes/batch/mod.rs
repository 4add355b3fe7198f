//! Batch runs (`recon batch FILE.toml`): many pairs from one file, one
//! after another, each a run of its own (its own run context and cancel
//! token), with per-pair thresholds. A pair that errors is recorded and the
//! others still run, unless `fail_fast`.

use std::path::Path;
use std::time::Instant;

use crate::config::batch::{BatchFile, BatchMode, PairEntry};
use crate::config::{AlignOptions, InputConfig, RulesFile, Thresholds};
use crate::engine::memory::default_limit;
use crate::error::{ReconError, Result};
use crate::modes::fingerprint::compare::compare;
use crate::modes::fingerprint::{fingerprint_pair, FingerprintOptions};
use crate::modes::multiset::DiffOptions;
use crate::report::batch::PairOutcome;

/// Called with each pair's outcome as it finishes (a progress line).
pub type OnPair = std::sync::Arc<dyn Fn(&PairOutcome) + Send + Sync>;

/// How a batch runs.
#[derive(Clone, Default)]
pub struct BatchOptions {
    /// Run only the pairs whose names match one of these globs (all when empty).
    pub only: Vec<String>,
    /// Stop at the first pair that errors or fails.
    pub fail_fast: bool,
    /// Pairs run at once (at least 1); each gets its memory limit divided
    /// by this.
    pub jobs: usize,
    /// Told about each pair as it finishes.
    pub on_pair: Option<OnPair>,
}

/// The pair's alignment: its own settings, then its rules file, then the
/// defaults (settings given earlier win; lists add up).
fn align_of(p: &PairEntry, defaults: &RulesFile) -> std::result::Result<AlignOptions, String> {
    let mut o = AlignOptions::default();
    p.align.clone().apply_to(&mut o)?;
    if let Some(r) = &p.rules_file {
        RulesFile::load(r)?
            .apply_to(&mut o)
            .map_err(|e| format!("{}: {e}", r.display()))?;
    }
    defaults.clone().apply_to(&mut o)?;
    Ok(o)
}

/// Runs one pair with its memory limit divided by `jobs`; `Err` is the
/// pair's error (recorded, not fatal).
fn run_pair(p: &PairEntry, file: &BatchFile, jobs: usize) -> Result<PairOutcome> {
    let started = Instant::now();
    let d = &file.defaults;
    let usage = |e: String| ReconError::Usage(format!("pair {:?}: {e}", p.name));
    let align = align_of(p, &d.align).map_err(usage)?;
    // A pair's [pair.input] replaces [defaults.input] as a whole.
    let input_cfg = if p.input != InputConfig::default() {
        &p.input
    } else {
        &d.input
    };
    let inputs = input_cfg.build()?;
    let mut run = p
        .run
        .or(&d.run)
        .build(DiffOptions::default().threads, default_limit())?;
    if run.memory_limit != u64::MAX {
        run.memory_limit /= jobs.max(1) as u64;
    }
    let thresholds: Thresholds = p.thresholds.or(d.thresholds);
    match p.mode {
        BatchMode::Diff => {
            let opts = DiffOptions {
                threads: run.threads,
                memory_limit: run.memory_limit,
                temp_dir: run.temp_dir,
                sample: run.sample,
                passes: run.passes,
                align,
                inputs,
                thresholds,
                ..DiffOptions::default()
            };
            let outcome = crate::modes::diff(&p.source, &p.target, &opts)?;
            let r = &outcome.report;
            let verdict = if r.exact_match {
                "pass"
            } else if r.passes() {
                "pass_with_drift"
            } else {
                "fail"
            };
            Ok(PairOutcome {
                name: p.name.clone(),
                mode: "diff",
                verdict,
                seconds: started.elapsed().as_secs_f64(),
                source_rows: Some(r.source_rows),
                target_rows: Some(r.target_rows),
                unmatched: Some(r.unmatched()),
                summary: r.verdict_line(),
                text: r.render_text(&outcome.quoted),
                report: serde_json::to_value(r).ok(),
            })
        }
        BatchMode::Quick => {
            let opts = FingerprintOptions {
                threads: run.threads,
                temp_dir: run.temp_dir,
                align,
                ..FingerprintOptions::default()
            };
            let [s, t] = fingerprint_pair(&p.source, &p.target, &opts, &inputs)?;
            let cmp = compare(&s, &t)?;
            let summary = if cmp.fingerprints_match {
                "MATCH (fingerprints): strong evidence the tables hold the same rows".to_string()
            } else {
                let cols = &cmp.total.columns_differing;
                format!(
                    "DRIFT (fingerprints): {} vs {} rows; columns differing: {}",
                    cmp.total.source_rows.unwrap_or(0),
                    cmp.total.target_rows.unwrap_or(0),
                    if cols.is_empty() {
                        "none".to_string()
                    } else {
                        cols.join(", ")
                    }
                )
            };
            Ok(PairOutcome {
                name: p.name.clone(),
                mode: "quick",
                verdict: if cmp.fingerprints_match {
                    "pass"
                } else {
                    "fail"
                },
                seconds: started.elapsed().as_secs_f64(),
                source_rows: cmp.total.source_rows,
                target_rows: cmp.total.target_rows,
                unmatched: None,
                summary,
                text: cmp.render_text(),
                report: serde_json::to_value(&cmp).ok(),
            })
        }
    }
}

/// Whether `name` is selected by `--only` patterns.
fn selected(name: &str, only: &[String]) -> Result<bool> {
    if only.is_empty() {
        return Ok(true);
    }
    for pat in only {
        let p =
            glob::Pattern::new(pat).map_err(|e| ReconError::Usage(format!("--only {pat}: {e}")))?;
        if p.matches(name) {
            return Ok(true);
        }
    }
    Ok(false)
}

fn mode_name(p: &PairEntry) -> &'static str {
    match p.mode {
        BatchMode::Diff => "diff",
        BatchMode::Quick => "quick",
    }
}

fn skipped(p: &PairEntry) -> PairOutcome {
    PairOutcome {
        name: p.name.clone(),
        mode: mode_name(p),
        verdict: "skipped",
        seconds: 0.0,
        source_rows: None,
        target_rows: None,
        unmatched: None,
        summary: "not run: --fail-fast stopped the batch".into(),
        text: String::new(),
        report: None,
    }
}

/// Runs one pair, turning its error into an outcome; true: stop the batch.
fn outcome_of(p: &PairEntry, file: &BatchFile, opts: &BatchOptions) -> (PairOutcome, bool) {
    let started = Instant::now();
    match run_pair(p, file, opts.jobs) {
        Ok(o) => {
            let stop = opts.fail_fast && o.verdict == "fail";
            (o, stop)
        }
        Err(e) => {
            let stop = opts.fail_fast || matches!(e, ReconError::Interrupted);
            (
                PairOutcome {
                    name: p.name.clone(),
                    mode: mode_name(p),
                    verdict: "error",
                    seconds: started.elapsed().as_secs_f64(),
                    source_rows: None,
                    target_rows: None,
                    unmatched: None,
                    summary: format!("ERROR: {}", e.one_line()),
                    text: String::new(),
                    report: None,
                },
                stop,
            )
        }
    }
}

/// Runs the pairs of `path`, `opts.jobs` at a time, in file order (results
/// are reported in file order whatever finishes first).
pub fn run_batch(path: &Path, opts: &BatchOptions) -> Result<Vec<PairOutcome>> {
    use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
    use std::sync::Mutex;
    let file = BatchFile::load(path).map_err(ReconError::Usage)?;
    let mut picked = Vec::new();
    for p in &file.pairs {
        if selected(&p.name, &opts.only)? {
            picked.push(p);
        }
    }
    if picked.is_empty() {
        return Err(ReconError::Usage(format!(
            "{}: --only selects none of its pairs",
            path.display()
        )));
    }
    let next = AtomicUsize::new(0);
    let stop = AtomicBool::new(false);
    let results: Mutex<Vec<Option<PairOutcome>>> = Mutex::new(vec![None; picked.len()]);
    std::thread::scope(|s| {
        for _ in 0..opts.jobs.clamp(1, picked.len()) {
            s.spawn(|| loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                let Some(p) = picked.get(i) else {
                    break;
                };
                let outcome = if stop.load(Ordering::Relaxed) {
                    skipped(p)
                } else {
                    let (o, halt) = outcome_of(p, &file, opts);
                    if halt {
                        stop.store(true, Ordering::Relaxed);
                    }
                    if let Some(tell) = &opts.on_pair {
                        tell(&o);
                    }
                    o
                };
                if let Ok(mut r) = results.lock() {
                    r[i] = Some(outcome);
                }
            });
        }
    });
    let results = results
        .into_inner()
        .map_err(|_| ReconError::Internal("a batch worker panicked".into()))?;
    Ok(results
        .into_iter()
        .zip(&picked)
        .map(|(o, p)| o.unwrap_or_else(|| skipped(p)))
        .collect())
}
