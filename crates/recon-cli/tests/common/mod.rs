//! Helpers shared by the integration tests: writing small Parquet tables and
//! reading outputs back.
#![allow(dead_code)]

use std::fs::File;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use arrow::array::{ArrayRef, Int64Array, RecordBatch, StringArray};
use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
use parquet::arrow::ArrowWriter;
use parquet::file::properties::WriterProperties;

/// The repository's root (the workspace's), where testdata/ lives.
pub fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// Path of a committed fixture.
pub fn fixture(rel: &str) -> PathBuf {
    repo_root().join("testdata").join(rel)
}

/// Writes `batch` to `path` with `rows_per_group` rows per row group.
pub fn write_parquet(path: &Path, batch: &RecordBatch, rows_per_group: usize) {
    let props = WriterProperties::builder()
        .set_max_row_group_row_count(Some(rows_per_group.max(1)))
        .build();
    let mut w =
        ArrowWriter::try_new(File::create(path).unwrap(), batch.schema(), Some(props)).unwrap();
    w.write(batch).unwrap();
    w.close().unwrap();
}

/// A two-column (k: Utf8, n: Int64) table.
pub fn kv_batch(rows: &[(Option<&str>, Option<i64>)]) -> RecordBatch {
    let k: ArrayRef = Arc::new(StringArray::from(
        rows.iter().map(|r| r.0).collect::<Vec<_>>(),
    ));
    let n: ArrayRef = Arc::new(Int64Array::from(
        rows.iter().map(|r| r.1).collect::<Vec<_>>(),
    ));
    RecordBatch::try_from_iter([("k", k), ("n", n)]).unwrap()
}

/// Reads every batch of a Parquet file.
pub fn read_parquet(path: &Path) -> Vec<RecordBatch> {
    let f = File::open(path).unwrap();
    ParquetRecordBatchReaderBuilder::try_new(f)
        .unwrap()
        .build()
        .unwrap()
        .map(|b| b.unwrap())
        .collect()
}

/// Total rows of a Parquet file.
pub fn parquet_rows(path: &Path) -> usize {
    read_parquet(path).iter().map(|b| b.num_rows()).sum()
}

/// `recon diff SOURCE TARGET FLAGS...`, run, for its assertions.
pub fn diff(
    source: impl AsRef<std::ffi::OsStr>,
    target: impl AsRef<std::ffi::OsStr>,
    flags: &[&str],
) -> assert_cmd::assert::Assert {
    assert_cmd::Command::cargo_bin("recon")
        .unwrap()
        .arg("diff")
        .arg(source)
        .arg(target)
        .args(flags)
        .assert()
}

/// Copies a directory tree (a lakehouse fixture, to tamper with).
pub fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        let dest = to.join(e.file_name());
        if e.file_type().unwrap().is_dir() {
            copy_dir(&e.path(), &dest);
        } else {
            std::fs::copy(e.path(), &dest).unwrap();
        }
    }
}
