//! Batch runs (`recon batch FILE.toml`): many pairs from one file, one
//! after another, each a run of its own (its own run context and cancel
//! token), with per-pair thresholds. A pair that errors is recorded and the
//! others still run, unless `fail_fast`. Like a single run, a batch never
//! prints: it updates a [`BatchProgress`] that a caller may poll.

use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::Instant;

use crate::config::batch::{BatchFile, BatchMode, PairEntry, PairSettings};
use crate::config::{AlignOptions, Passes, RulesFile, Thresholds};
use crate::engine::Progress;
use crate::error::{ReconError, Result};
use crate::modes::fingerprint::compare::compare;
use crate::modes::fingerprint::{fingerprint_pair, refuse_keyed, FingerprintOptions};
use crate::modes::options::DiffOptions;
use crate::report::batch::PairOutcome;
use crate::report::Verdict;

/// Where one pair of a batch is.
#[derive(Debug, Clone)]
pub enum PairState {
    /// Not started yet.
    Waiting,
    /// Running since `started`; `progress` is its run's live counters (phase,
    /// rows, buckets), the ones a single `recon diff` shows.
    Running {
        /// The pair's run counters.
        progress: Arc<Progress>,
        /// When the pair started.
        started: Instant,
    },
    /// Ended with this verdict (`pass`, `pass_with_drift`, `fail`, `error`
    /// or `skipped`).
    Finished {
        /// The pair's verdict.
        verdict: Verdict,
        /// The pair's wall time.
        seconds: f64,
    },
}

/// A batch's live state, for a progress display: the batch updates it as
/// pairs start and finish, a caller polls [`BatchProgress::snapshot`].
#[derive(Debug, Default)]
pub struct BatchProgress {
    pairs: Mutex<Vec<(String, PairState)>>,
}

impl BatchProgress {
    /// Every selected pair, in file order, with its state (empty until the
    /// batch file is loaded).
    pub fn snapshot(&self) -> Vec<(String, PairState)> {
        self.pairs.lock().map(|p| p.clone()).unwrap_or_default()
    }

    fn start(&self, names: Vec<String>) {
        if let Ok(mut p) = self.pairs.lock() {
            *p = names.into_iter().map(|n| (n, PairState::Waiting)).collect();
        }
    }

    fn set(&self, i: usize, state: PairState) {
        if let Ok(mut p) = self.pairs.lock() {
            if let Some(slot) = p.get_mut(i) {
                slot.1 = state;
            }
        }
    }
}

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
    /// Updated as pairs start and finish.
    pub progress: Arc<BatchProgress>,
}

/// The pair's options by the library's one path from layered settings
/// ([`DiffOptions::from_layers`]): its own tables, then its rules file, then
/// `[defaults]`. `read_rules`: load the pair's rules file too (at run time;
/// validation leaves it out, since a missing file is the pair's error).
fn options_of(p: &PairEntry, file: &BatchFile, read_rules: bool) -> Result<DiffOptions> {
    let own = PairSettings {
        run: p.run.clone(),
        thresholds: p.thresholds,
        align: p.align.clone(),
        input: p.input.clone(),
    };
    let rules = match p.rules_file.as_ref().filter(|_| read_rules) {
        Some(r) => Some((r.as_path(), RulesFile::load(r)?)),
        None => None,
    };
    DiffOptions::from_layers(&own, rules, &file.defaults)
}

/// Runs one pair with its memory limit divided by `jobs`, updating
/// `progress`; `Err` is the pair's error (recorded, not fatal).
fn run_pair(
    p: &PairEntry,
    file: &BatchFile,
    jobs: usize,
    progress: Arc<Progress>,
) -> Result<PairOutcome> {
    let started = Instant::now();
    // A bad value names the pair; a missing or unreadable input is the
    // error as it is.
    let named = |e: ReconError| match e {
        ReconError::Usage(m) => ReconError::Usage(format!("pair {:?}: {m}", p.name)),
        other => other,
    };
    let opts = options_of(p, file, true).map_err(named)?;
    let mut run = opts.run.clone();
    if run.memory_limit != u64::MAX {
        run.memory_limit /= jobs.max(1) as u64;
    }
    match p.mode {
        BatchMode::Diff => {
            let opts = DiffOptions {
                run,
                progress,
                ..opts
            };
            let outcome = crate::modes::diff::diff(&p.source, &p.target, &opts)?;
            let text = outcome.report.render_text(&outcome.quoted);
            Ok(PairOutcome::of_diff(
                &p.name,
                &outcome.report,
                text,
                started.elapsed().as_secs_f64(),
            ))
        }
        BatchMode::Quick => {
            let fp = FingerprintOptions {
                threads: run.threads,
                temp_dir: run.temp_dir,
                align: opts.align,
                progress,
                ..FingerprintOptions::default()
            };
            let [s, t] = fingerprint_pair(&p.source, &p.target, &fp, &opts.inputs)?;
            let cmp = compare(&s, &t)?;
            Ok(PairOutcome {
                name: p.name.clone(),
                mode: BatchMode::Quick,
                verdict: if cmp.fingerprints_match {
                    Verdict::Pass
                } else {
                    Verdict::Fail
                },
                seconds: started.elapsed().as_secs_f64(),
                source_rows: cmp.total.source_rows,
                target_rows: cmp.total.target_rows,
                unmatched: None,
                summary: cmp.verdict_line(),
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
        let p = glob::Pattern::new(pat)
            .map_err(|e| ReconError::Usage(format!("`--only {pat}`: {e}")))?;
        if p.matches(name) {
            return Ok(true);
        }
    }
    Ok(false)
}

fn skipped(p: &PairEntry) -> PairOutcome {
    PairOutcome {
        name: p.name.clone(),
        mode: p.mode,
        verdict: Verdict::Skipped,
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
fn outcome_of(
    p: &PairEntry,
    file: &BatchFile,
    opts: &BatchOptions,
    progress: Arc<Progress>,
) -> (PairOutcome, bool) {
    let started = Instant::now();
    match run_pair(p, file, opts.jobs, progress) {
        Ok(o) => {
            let stop = opts.fail_fast && o.verdict == Verdict::Fail;
            (o, stop)
        }
        Err(e) => {
            let stop = opts.fail_fast || matches!(e, ReconError::Interrupted);
            (
                PairOutcome {
                    name: p.name.clone(),
                    mode: p.mode,
                    verdict: Verdict::Error,
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

/// Checks every pair's settings before any pair runs: a bad value stops the
/// batch (the batch file is wrong), while a missing or unreadable input is
/// left to its pair's run (the data is wrong, and the other pairs still run).
fn validate_pairs(path: &Path, file: &BatchFile) -> Result<()> {
    let d = &file.defaults;
    for p in &file.pairs {
        let bad =
            |m: String| ReconError::Usage(format!("{}: pair {:?}: {}", path.display(), p.name, m));
        // The rules file is data read when the pair runs; the batch file's
        // own tables are checked here.
        let opts = options_of(p, file, false).map_err(|e| bad(e.one_line()))?;
        if p.mode == BatchMode::Quick {
            quick_refusal(p, &opts.align, d.thresholds).map_err(bad)?;
        }
    }
    Ok(())
}

/// What a quick pair sets that a fingerprint comparison cannot apply (see
/// `Thresholds::undecidable_by_fingerprints`). `[defaults.run]` settings
/// that only an exact diff uses (memory_limit, passes, sample) are meant
/// for the diff pairs and pass by a quick pair; the pair's own are refused.
fn quick_refusal(
    p: &PairEntry,
    align: &AlignOptions,
    defaults: Thresholds,
) -> std::result::Result<(), String> {
    let refused = |what: &str, why: &str| {
        Err(format!(
            "mode \"quick\" cannot apply {what}: {why}; use mode \"diff\" (it reads a matching pair once, as quick does)"
        ))
    };
    if let Some((name, value)) = p.thresholds.or(defaults).undecidable_by_fingerprints() {
        return refused(
            &format!("{name} = {value}"),
            "fingerprints show whether the tables differ, not by how many rows (only a limit of 0 applies)",
        );
    }
    // The library's own check, run here too so the batch stops before any pair.
    refuse_keyed(align).map_err(|e| format!("mode \"quick\": {e}"))?;
    let run = &p.run;
    if run.memory_limit.is_some()
        || run.sample.is_some()
        || run.passes.is_some_and(|x| x != Passes::Auto)
    {
        return refused(
            "[pair.run] memory_limit, sample or passes",
            "a fingerprint comparison finds no rows and keeps only fingerprints in memory",
        );
    }
    Ok(())
}

/// Runs the pairs of `path`, `opts.jobs` at a time, in file order (results
/// are reported in file order whatever finishes first).
pub fn run_batch(path: &Path, opts: &BatchOptions) -> Result<Vec<PairOutcome>> {
    use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
    let file = BatchFile::load(path)?;
    validate_pairs(path, &file)?;
    let mut picked = Vec::new();
    for p in &file.pairs {
        if selected(&p.name, &opts.only)? {
            picked.push(p);
        }
    }
    if picked.is_empty() {
        return Err(ReconError::Usage(format!(
            "{}: `--only` selects none of its pairs",
            path.display()
        )));
    }
    opts.progress
        .start(picked.iter().map(|p| p.name.clone()).collect());
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
                    let progress = Arc::new(Progress::default());
                    opts.progress.set(
                        i,
                        PairState::Running {
                            progress: progress.clone(),
                            started: Instant::now(),
                        },
                    );
                    let (o, halt) = outcome_of(p, &file, opts, progress);
                    if halt {
                        stop.store(true, Ordering::Relaxed);
                    }
                    o
                };
                opts.progress.set(
                    i,
                    PairState::Finished {
                        verdict: outcome.verdict,
                        seconds: outcome.seconds,
                    },
                );
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::Phase;
    use std::sync::atomic::Ordering;

    /// A batch file over the shipped fixtures: a drifting diff, a quick
    /// pair and a pair that errors.
    fn batch(dir: &Path) -> std::path::PathBuf {
        let data = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../testdata");
        let d = |p: &str| data.join(p).display().to_string();
        let text = format!(
            "[[pair]]\nname = \"demo\"\nsource = \"{}\"\ntarget = \"{}\"\n\
             [[pair]]\nname = \"lake\"\nsource = \"{}\"\ntarget = \"{}\"\nmode = \"quick\"\n\
             [[pair]]\nname = \"broken\"\nsource = \"{b}\"\ntarget = \"{b}\"\n",
            d("demo/source.parquet"),
            d("demo/target.parquet"),
            d("demo/extract.csv.gz"),
            d("lake/orders"),
            b = d("bad/garbage.parquet"),
        );
        let path = dir.join("b.toml");
        std::fs::write(&path, text).unwrap();
        path
    }

    #[test]
    fn every_pair_ends_finished_with_its_verdict() {
        let dir = tempfile::tempdir().unwrap();
        let progress = Arc::new(BatchProgress::default());
        let opts = BatchOptions {
            jobs: 2,
            progress: progress.clone(),
            ..BatchOptions::default()
        };
        let outcomes = run_batch(&batch(dir.path()), &opts).unwrap();
        let states: Vec<(String, Verdict)> = progress
            .snapshot()
            .into_iter()
            .map(|(name, state)| match state {
                PairState::Finished { verdict, .. } => (name, verdict),
                other => panic!("{name} did not finish: {other:?}"),
            })
            .collect();
        let verdicts: Vec<(String, Verdict)> = outcomes
            .iter()
            .map(|o| (o.name.clone(), o.verdict))
            .collect();
        assert_eq!(states, verdicts);
        assert_eq!(
            verdicts.iter().map(|v| v.1).collect::<Vec<_>>(),
            [Verdict::Fail, Verdict::Pass, Verdict::Error]
        );
    }

    #[test]
    fn a_pair_reports_its_phases_and_rows_like_a_single_run() {
        let dir = tempfile::tempdir().unwrap();
        let file = BatchFile::load(&batch(dir.path())).unwrap();
        // A drifting diff of 4 + 4 Parquet rows: two passes, the second
        // partitioning the differing buckets.
        let diff = Arc::new(Progress::default());
        run_pair(&file.pairs[0], &file, 1, diff.clone()).unwrap();
        assert_eq!(diff.phase(), Phase::Done);
        assert_eq!(diff.pass(), (2, 2));
        assert!(diff.rows_total.load(Ordering::Relaxed) >= 8);
        // A quick pair: one fingerprinting read of 120 + 120 rows.
        let quick = Arc::new(Progress::default());
        run_pair(&file.pairs[1], &file, 1, quick.clone()).unwrap();
        assert_eq!(quick.phase(), Phase::Done);
        assert_eq!(quick.pass(), (1, 1));
        assert_eq!(quick.rows_scanned.load(Ordering::Relaxed), 240);
        assert!(quick.rows_total.load(Ordering::Relaxed) > 0);
    }
}
