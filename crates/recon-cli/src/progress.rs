//! Progress on stderr, drawn from the library's live counters: a bar per
//! run (or per running batch pair) on a terminal, plain lines in a log.
//! The library never prints; this file is the only one that draws.

use std::collections::BTreeMap;
use std::io::IsTerminal;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use indicatif::{MultiProgress, ProgressBar, ProgressDrawTarget, ProgressStyle};

use recon::batch::{BatchProgress, PairState};
use recon::{Phase, Progress, Verdict};

use crate::args::ProgressMode;

/// What the run is doing, in words, and its position and length.
pub(crate) fn progress_state(progress: &Progress) -> (String, u64, u64) {
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
pub(crate) fn progress_line(progress: &Progress) -> String {
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
pub(crate) fn phase_style(label_width: usize) -> ProgressStyle {
    ProgressStyle::with_template(&format!(
        "{{spinner}} {{msg:<{label_width}}} [{{bar:24}}] {{percent:>3}}% {{human_pos}}/{{human_len}} {{prefix}} ETA {{eta}}  {{elapsed_precise}}"
    ))
    .unwrap_or_else(|_| ProgressStyle::default_bar())
    .progress_chars("=> ")
}

/// A bar that follows one run's counters: the phase, rows (or buckets) per
/// second and ETA, restarted when the phase changes. `recon diff` draws one;
/// `recon batch` one per running pair.
pub(crate) struct PhaseBar {
    pub(crate) bar: ProgressBar,
    pub(crate) label: String,
    pub(crate) shown: String,
    /// When this bar first saw the phase, and the count then: the rate is
    /// measured from there (a batch's bar may appear mid-phase).
    pub(crate) phase_start: std::time::Instant,
    pub(crate) phase_start_pos: u64,
}

impl PhaseBar {
    /// `label` goes before the phase ("orders_keyed: "), or is empty.
    pub(crate) fn new(bar: ProgressBar, label: String, label_width: usize) -> PhaseBar {
        bar.set_style(phase_style(label_width));
        PhaseBar {
            bar,
            label,
            shown: String::new(),
            phase_start: std::time::Instant::now(),
            phase_start_pos: 0,
        }
    }

    pub(crate) fn update(&mut self, progress: &Progress) {
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
pub(crate) enum Shown {
    Nothing,
    /// Plain lines (a log): a line every 2 seconds.
    Lines,
    Bars,
}

/// Whether stderr can show bars: a terminal that moves its cursor. Where
/// `TERM` is unset or `dumb` indicatif draws nothing, so that is a log.
pub(crate) fn bars_drawable() -> bool {
    std::io::stderr().is_terminal() && std::env::var("TERM").is_ok_and(|t| t != "dumb")
}

pub(crate) fn shown_for(mode: ProgressMode, quiet: bool) -> Shown {
    match (mode, bars_drawable()) {
        _ if quiet => Shown::Nothing,
        (ProgressMode::Never, _) | (ProgressMode::Auto, false) => Shown::Nothing,
        (ProgressMode::Always, false) => Shown::Lines,
        _ => Shown::Bars,
    }
}

pub(crate) const LOG_EVERY: std::time::Duration = std::time::Duration::from_secs(2);
pub(crate) const REDRAW_EVERY: std::time::Duration = std::time::Duration::from_millis(100);

/// Runs `work` while its progress is drawn as `shown` says, and ends the
/// drawing when it returns.
pub(crate) fn drawing<T>(shown: Shown, progress: Arc<Progress>, work: impl FnOnce() -> T) -> T {
    let done = Arc::new(AtomicBool::new(false));
    let bar = show_progress(shown, progress, done.clone());
    let out = work();
    done.store(true, Ordering::Relaxed);
    if let Some(handle) = bar {
        let _ = handle.join();
    }
    out
}

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
pub(crate) fn batch_counts(pairs: &[(String, PairState)]) -> String {
    let count = |v: Verdict| {
        pairs
            .iter()
            .filter(|(_, s)| matches!(s, PairState::Finished { verdict, .. } if *verdict == v))
            .count()
    };
    let mut words = format!(
        "{} pass, {} pass_with_drift, {} fail, {} error",
        count(Verdict::Pass),
        count(Verdict::PassWithDrift),
        count(Verdict::Fail),
        count(Verdict::Error)
    );
    let skipped = count(Verdict::Skipped);
    if skipped > 0 {
        words.push_str(&format!(", {skipped} skipped"));
    }
    words
}

/// Which pairs have been announced as finished, and how many.
#[derive(Default)]
pub(crate) struct Announced {
    pub(crate) seen: Vec<bool>,
    pub(crate) count: usize,
}

impl Announced {
    /// The pairs that finished since the last call, with their result line
    /// (`recon: [3] orders_keyed: pass_with_drift (0.01 s)`), numbered in
    /// the order they finished. Skipped pairs are left to the summary table.
    pub(crate) fn newly_finished(&mut self, pairs: &[(String, PairState)]) -> Vec<(usize, String)> {
        self.seen.resize(pairs.len(), false);
        let mut out = Vec::new();
        for (i, (name, state)) in pairs.iter().enumerate() {
            if let PairState::Finished { verdict, seconds } = state {
                if !self.seen[i] {
                    self.seen[i] = true;
                    if *verdict != Verdict::Skipped {
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
pub(crate) trait BatchDisplay: Send {
    fn draw(&mut self, pairs: &[(String, PairState)]);
    /// The batch is over: `pairs` holds every result.
    fn finish(&mut self, pairs: &[(String, PairState)]);
}

/// In a log: the result lines, and every 2 seconds a line per running pair.
pub(crate) struct BatchLines {
    pub(crate) announced: Announced,
    pub(crate) last: std::time::Instant,
}

impl BatchLines {
    pub(crate) fn results(&mut self, pairs: &[(String, PairState)]) {
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
pub(crate) struct BatchBars {
    pub(crate) multi: MultiProgress,
    pub(crate) overall: ProgressBar,
    /// The overall bar joins the display once it has its words.
    pub(crate) overall_shown: bool,
    pub(crate) bars: BTreeMap<usize, PhaseBar>,
    pub(crate) announced: Announced,
}

impl BatchBars {
    pub(crate) fn new() -> BatchBars {
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
pub(crate) fn show_batch_progress(
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
