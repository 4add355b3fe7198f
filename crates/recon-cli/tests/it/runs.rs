//! Runs are independent: two diffs in one process, each with its own cancel
//! token, progress and temp directory; cancelling one leaves the other to
//! finish with the right answer.

use crate::common;

use std::sync::atomic::Ordering;
use std::sync::Arc;

use arrow::array::{ArrayRef, Int64Array, RecordBatch, StringArray};
use common::write_parquet;
use recon::config::RunSettings;
use recon::{diff, DiffOptions, Passes, ReconError};
use recon::{CancelToken, Progress};

fn table(path: &std::path::Path, rows: i64, changed: i64) {
    let ids: ArrayRef = Arc::new(Int64Array::from_iter_values(0..rows));
    let names: ArrayRef = Arc::new(StringArray::from_iter_values((0..rows).map(|i| {
        if i < changed {
            format!("changed {i}")
        } else {
            format!("name {}", i % 977)
        }
    })));
    let batch = RecordBatch::try_from_iter([("id", ids), ("name", names)]).unwrap();
    write_parquet(path, &batch, 50_000);
}

#[test]
fn two_diffs_in_one_process_and_one_is_cancelled() {
    let dir = tempfile::tempdir().unwrap();
    let temp = tempfile::tempdir().unwrap();
    let p = |n: &str| dir.path().join(n);
    table(&p("a_s.parquet"), 2_000_000, 0);
    table(&p("a_t.parquet"), 2_000_000, 3);
    table(&p("b_s.parquet"), 200_000, 0);
    table(&p("b_t.parquet"), 200_000, 5);
    let opts = |progress: Arc<Progress>, cancel: CancelToken| DiffOptions {
        run: RunSettings {
            threads: 2,
            memory_limit: 64 << 20,
            passes: Passes::One,
            temp_dir: Some(temp.path().to_path_buf()),
            ..RunSettings::default()
        },
        batch_size: 1024,
        progress,
        cancel,
        ..DiffOptions::default()
    };
    let (a_progress, a_cancel) = (Arc::new(Progress::default()), CancelToken::new());
    let a_opts = opts(a_progress.clone(), a_cancel.clone());
    let b_opts = opts(Arc::new(Progress::default()), CancelToken::new());
    let (a, b) = std::thread::scope(|s| {
        let a = s.spawn(|| diff(p("a_s.parquet"), p("a_t.parquet"), &a_opts));
        let b = s.spawn(|| diff(p("b_s.parquet"), p("b_t.parquet"), &b_opts));
        // Cancel run A once it is scanning, while B runs beside it.
        while a_progress.rows_scanned.load(Ordering::Relaxed) == 0 && !a.is_finished() {
            std::thread::yield_now();
        }
        a_cancel.cancel();
        (a.join().unwrap(), b.join().unwrap())
    });
    assert!(
        matches!(a, Err(ReconError::Interrupted)),
        "run A was not interrupted: {:?}",
        a.map(|o| o.report.exact_match)
    );
    let b = b.expect("run B finishes").report;
    assert_eq!((b.source_only_rows, b.target_only_rows), (5, 5));
    // Neither run left temp files behind.
    assert_eq!(std::fs::read_dir(temp.path()).unwrap().count(), 0);
}
