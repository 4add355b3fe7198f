//! What one run owns: its cancel token, its progress counters, its temp
//! directory, its spill budget and how its memory limit is divided. Nothing
//! here is process-wide, so several runs can share a process (a batch, or a
//! library caller) and be cancelled one at a time; the interrupt handler
//! cancels every run in flight with [`cancel_all`].

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicU8, Ordering};
use std::sync::{Arc, Mutex, Weak};

use super::memory::Sizing;
use super::spill::SpillBudget;
use super::tempspace::RunDir;
use crate::error::Result;

/// Tokens of the runs in flight, for [`cancel_all`].
static LIVE: Mutex<Vec<Weak<AtomicBool>>> = Mutex::new(Vec::new());

/// A run's cancel flag: cheap to clone and to check once per batch.
#[derive(Debug, Clone)]
pub struct CancelToken(Arc<AtomicBool>);

impl Default for CancelToken {
    fn default() -> Self {
        Self::new()
    }
}

impl CancelToken {
    /// A fresh token, registered so [`cancel_all`] reaches it.
    pub fn new() -> CancelToken {
        let flag = Arc::new(AtomicBool::new(false));
        if let Ok(mut live) = LIVE.lock() {
            live.retain(|w| w.strong_count() > 0);
            live.push(Arc::downgrade(&flag));
        }
        CancelToken(flag)
    }

    /// Asks the run to stop; workers notice at their next batch or bucket.
    pub fn cancel(&self) {
        self.0.store(true, Ordering::SeqCst);
    }

    /// Whether the run was asked to stop.
    pub fn is_cancelled(&self) -> bool {
        self.0.load(Ordering::Relaxed)
    }
}

/// Cancels every run in flight in this process (the SIGINT/SIGTERM handler).
pub fn cancel_all() {
    if let Ok(live) = LIVE.lock() {
        for flag in live.iter().filter_map(Weak::upgrade) {
            flag.store(true, Ordering::SeqCst);
        }
    }
}

/// What a run is doing, for a progress display.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
pub enum Phase {
    /// Reading metadata and planning.
    Preflight = 0,
    /// Reading the tables and fingerprinting buckets (nothing spills).
    Fingerprint = 1,
    /// Reading the tables and partitioning records into buckets.
    Partition = 2,
    /// Matching each bucket pair.
    Reconcile = 3,
    /// Fetching the unmatched rows back.
    Evidence = 4,
    /// The run is over.
    Done = 5,
}

impl Phase {
    fn from_u8(v: u8) -> Phase {
        match v {
            1 => Phase::Fingerprint,
            2 => Phase::Partition,
            3 => Phase::Reconcile,
            4 => Phase::Evidence,
            5 => Phase::Done,
            _ => Phase::Preflight,
        }
    }
}

/// Live counters a caller can poll to show progress. The library only
/// updates them (one atomic add per batch or bucket); it never prints.
#[derive(Debug, Default)]
pub struct Progress {
    phase: AtomicU8,
    /// The read of the inputs under way (1 or 2) and how many there will be.
    pass: AtomicU8,
    passes: AtomicU8,
    /// Rows expected per read (from metadata, or estimated from file sizes).
    pub rows_total: AtomicU64,
    /// Rows read so far in this read.
    pub rows_scanned: AtomicU64,
    /// Bucket pairs to reconcile.
    pub buckets_total: AtomicU64,
    /// Bucket pairs reconciled so far.
    pub buckets_done: AtomicU64,
}

impl Progress {
    /// The phase the run is in.
    pub fn phase(&self) -> Phase {
        Phase::from_u8(self.phase.load(Ordering::Relaxed))
    }

    /// Moves the run to `phase` (the library does; front ends read).
    pub(crate) fn set_phase(&self, phase: Phase) {
        self.phase.store(phase as u8, Ordering::Relaxed);
    }

    /// (this read, of how many): "pass 2 of 2".
    pub fn pass(&self) -> (u8, u8) {
        (
            self.pass.load(Ordering::Relaxed),
            self.passes.load(Ordering::Relaxed),
        )
    }

    /// Starts read `pass` of `passes`: the row counter restarts.
    pub(crate) fn start_pass(&self, pass: u8, passes: u8, phase: Phase) {
        self.pass.store(pass, Ordering::Relaxed);
        self.passes.store(passes, Ordering::Relaxed);
        self.rows_scanned.store(0, Ordering::Relaxed);
        self.set_phase(phase);
    }
}

/// One run's resources.
pub(crate) struct RunContext {
    pub cancel: CancelToken,
    pub progress: Arc<Progress>,
    pub threads: usize,
    /// Rows per decoded batch.
    pub batch_size: usize,
    pub sizing: Sizing,
    pub budget: Arc<SpillBudget>,
    /// The directory the temp directory was made under.
    pub temp_base: PathBuf,
    dir: RunDir,
}

impl RunContext {
    /// Creates the run's temp directory under `temp_base`, for a run of
    /// `threads` workers whose memory limit is divided as `sizing` says.
    pub(crate) fn new(
        temp_base: &Path,
        threads: usize,
        batch_size: usize,
        sizing: Sizing,
        progress: Arc<Progress>,
        cancel: CancelToken,
    ) -> Result<RunContext> {
        super::memory::tune_malloc(sizing.malloc_top_pad);
        let dir = RunDir::create(temp_base)?;
        let budget = SpillBudget::new(sizing.in_memory_spill);
        Ok(RunContext {
            cancel,
            progress,
            threads: threads.max(1),
            batch_size,
            sizing,
            budget,
            temp_base: temp_base.to_path_buf(),
            dir,
        })
    }

    /// The run's own temp directory (spill files).
    pub(crate) fn dir(&self) -> &Path {
        self.dir.path()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cancelling_one_run_leaves_the_other_alone() {
        // (cancel_all is exercised by the CLI's SIGINT test: calling it here
        // would cancel the runs of tests running beside this one.)
        let (a, b) = (CancelToken::new(), CancelToken::new());
        a.cancel();
        assert!(a.is_cancelled());
        assert!(!b.is_cancelled());
        // A clone shares the flag.
        let c = CancelToken::new();
        let d = c.clone();
        d.cancel();
        assert!(c.is_cancelled());
    }

    #[test]
    fn a_new_pass_restarts_the_row_count() {
        let p = Progress::default();
        assert_eq!(p.phase(), Phase::Preflight);
        p.start_pass(1, 2, Phase::Fingerprint);
        p.rows_scanned.fetch_add(10, Ordering::Relaxed);
        p.start_pass(2, 2, Phase::Partition);
        assert_eq!(p.pass(), (2, 2));
        assert_eq!(p.phase(), Phase::Partition);
        assert_eq!(p.rows_scanned.load(Ordering::Relaxed), 0);
    }
}
