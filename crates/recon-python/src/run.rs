//! Runs the engine off the interpreter: on its own thread with the GIL
//! released, so other Python threads go on, while this thread wakes every
//! tenth of a second to report progress and to notice Ctrl-C.
//!
//! On KeyboardInterrupt the run's cancel token is set, and the call waits
//! for the engine to stop and remove its temp directory before the
//! exception propagates: nothing is left behind.

use std::sync::Arc;
use std::time::Duration;

use pyo3::prelude::*;
use pyo3::types::PyDict;

use recon::error::panic_message;
use recon::{CancelToken, Phase, Progress, ReconError};

/// How often the waiting thread looks at signals and progress.
const TICK: Duration = Duration::from_millis(100);

fn phase_name(p: Phase) -> &'static str {
    match p {
        Phase::Preflight => "preflight",
        Phase::Fingerprint => "fingerprint",
        Phase::Partition => "partition",
        Phase::Reconcile => "reconcile",
        Phase::Evidence => "evidence",
        Phase::Done => "done",
    }
}

/// The counters as a dict for a Python progress callback.
fn snapshot<'py>(py: Python<'py>, p: &Progress) -> PyResult<Bound<'py, PyDict>> {
    use std::sync::atomic::Ordering::Relaxed;
    let d = PyDict::new(py);
    let (pass, passes) = p.pass();
    d.set_item("phase", phase_name(p.phase()))?;
    d.set_item("pass", pass)?;
    d.set_item("passes", passes)?;
    d.set_item("rows_scanned", p.rows_scanned.load(Relaxed))?;
    d.set_item("rows_total", p.rows_total.load(Relaxed))?;
    d.set_item("buckets_done", p.buckets_done.load(Relaxed))?;
    d.set_item("buckets_total", p.buckets_total.load(Relaxed))?;
    Ok(d)
}

/// Runs `work` on a thread of its own and waits for it with the GIL
/// released, calling `callback(progress_dict)` every tick.
pub(crate) fn run<T: Send + 'static>(
    py: Python<'_>,
    cancel: CancelToken,
    progress: Arc<Progress>,
    callback: Option<Bound<'_, PyAny>>,
    work: impl FnOnce() -> recon::Result<T> + Send + 'static,
) -> PyResult<T> {
    let (tx, rx) = crossbeam_channel::bounded(1);
    let handle = std::thread::Builder::new()
        .name("recon-run".into())
        .spawn(move || {
            let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(work))
                .unwrap_or_else(|p| Err(ReconError::Internal(panic_message(p.as_ref()))));
            let _ = tx.send(result);
        })
        .map_err(|e| {
            crate::errors::to_py(py, ReconError::Internal(format!("starting the run: {e}")))
        })?;
    let finish = |py: Python<'_>| {
        // Wait for the engine to stop (it checks the token between batches)
        // and drop its run directory.
        let _ = py.detach(|| rx.recv());
    };
    loop {
        match py.detach(|| rx.recv_timeout(TICK)) {
            Ok(result) => {
                let _ = handle.join();
                return result.map_err(|e| crate::errors::to_py(py, e));
            }
            Err(crossbeam_channel::RecvTimeoutError::Timeout) => {}
            Err(crossbeam_channel::RecvTimeoutError::Disconnected) => {
                let _ = handle.join();
                return Err(crate::errors::to_py(
                    py,
                    ReconError::Internal("the run ended without a result".into()),
                ));
            }
        }
        let interrupted = py.check_signals().and_then(|()| match &callback {
            Some(cb) => cb.call1((snapshot(py, &progress)?,)).map(drop),
            None => Ok(()),
        });
        if let Err(e) = interrupted {
            cancel.cancel();
            finish(py);
            let _ = handle.join();
            return Err(e);
        }
    }
}
