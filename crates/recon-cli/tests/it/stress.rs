//! Spill stress: pairs built to break partitioning give the same answer at
//! every memory limit and thread count, within the memory limit.
//! The long variants (10M rows) are `#[ignore]`d: `cargo test --release --test stress -- --ignored`.

use crate::common;

use std::path::Path;
use std::sync::Arc;

use arrow::array::{ArrayRef, Int64Array, RecordBatch, StringArray};
use common::write_parquet;
use recon::config::RunSettings;
use recon::{diff, DiffOptions, Passes};

fn write(path: &Path, ids: impl Iterator<Item = i64>, tag: &str) {
    let ids: Vec<i64> = ids.collect();
    let tags: ArrayRef = Arc::new(StringArray::from(vec![tag; ids.len()]));
    let ids: ArrayRef = Arc::new(Int64Array::from(ids));
    let batch = RecordBatch::try_from_iter([("id", ids), ("tag", tags)]).unwrap();
    write_parquet(path, &batch, 50_000);
}

/// (name, source, target) pairs of `n` rows, with the expected (source_only, target_only).
fn pairs(
    dir: &Path,
    n: i64,
) -> Vec<(
    &'static str,
    std::path::PathBuf,
    std::path::PathBuf,
    (u64, u64),
)> {
    let p = |name: &str| dir.join(name);
    write(&p("ident_s"), std::iter::repeat_n(7, n as usize), "x");
    write(&p("ident_t"), std::iter::repeat_n(7, n as usize - 1), "x");
    write(&p("diff_s"), 0..n, "s");
    write(&p("diff_t"), 0..n, "t");
    write(&p("empty"), std::iter::empty(), "x");
    write(&p("some"), 0..n, "x");
    vec![
        ("identical rows", p("ident_s"), p("ident_t"), (1, 0)),
        (
            "every row different",
            p("diff_s"),
            p("diff_t"),
            (n as u64, n as u64),
        ),
        ("one side empty", p("some"), p("empty"), (n as u64, 0)),
        ("same table", p("some"), p("some"), (0, 0)),
    ]
}

fn run_matrix(n: i64, limits: &[u64]) {
    let tmp = tempfile::tempdir().unwrap();
    for (name, s, t, expected) in pairs(tmp.path(), n) {
        for &limit in limits {
            for threads in [1, 2, 4] {
                for (single_bucket, passes) in [
                    (false, Passes::One),
                    (true, Passes::One),
                    (false, Passes::Two),
                    (true, Passes::Two),
                ] {
                    let opts = DiffOptions {
                        run: RunSettings {
                            threads,
                            memory_limit: limit,
                            temp_dir: Some(tmp.path().to_path_buf()),
                            passes,
                            ..RunSettings::default()
                        },
                        single_bucket,
                        output_dir: Some(tmp.path().join("out")),
                        force: true,
                        ..DiffOptions::default()
                    };
                    let r = diff(&s, &t, &opts).unwrap().report;
                    let got = (r.source_only_rows, r.target_only_rows);
                    assert_eq!(
                        got, expected,
                        "{name}, limit {limit}, {threads} threads, single bucket {single_bucket}, {passes:?}"
                    );
                    let written = r
                        .outputs
                        .as_ref()
                        .map(|o| (o.source_only_written, o.target_only_written));
                    assert_eq!(written, Some(expected), "{name}: evidence rows");
                }
            }
        }
    }
}

#[test]
fn partition_breakers_at_every_limit_and_thread_count() {
    run_matrix(100_000, &[16 << 20, 64 << 20, u64::MAX]);
}

#[test]
#[ignore = "long: 10M rows per side; run with --release -- --ignored"]
fn partition_breakers_at_10m_rows() {
    run_matrix(10_000_000, &[16 << 20, 64 << 20, 1 << 30, u64::MAX]);
}
