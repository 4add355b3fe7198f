//! Lakehouse tables: Delta versions read through delta-kernel-rs against
//! the rows their writer says each version holds (testdata/delta, written
//! by scripts/make_lake_fixtures.py with delta-rs; the deletion-vector
//! table is delta-kernel-rs's own test data).
#![cfg(feature = "delta")]

use crate::common;

use std::sync::Arc;

use common::{fixture, read_parquet, recon, Run};
use tempfile::TempDir;

fn delta(table: &str, version: Option<u64>) -> String {
    let path = fixture(&format!("delta/{table}")).display().to_string();
    match version {
        Some(v) => format!("delta:{path}@{v}"),
        None => format!("delta:{path}"),
    }
}

fn expected(name: &str) -> String {
    fixture(&format!("delta/expected/{name}.parquet"))
        .display()
        .to_string()
}

#[test]
fn every_version_holds_exactly_the_rows_its_writer_says() {
    for v in 0..4 {
        Run::diff(delta("orders", Some(v)), expected(&format!("orders_v{v}"))).exits(0);
    }
    // Versions differ from each other, so each comparison above could fail.
    Run::diff(delta("orders", Some(1)), expected("orders_v2"))
        .exits(1)
        .stdout_has("source_only_row_count   1");
}

#[test]
fn the_table_folder_reads_the_latest_version_not_every_file() {
    let dir = fixture("delta/orders");
    Run::diff(&dir, expected("orders_v3")).exits(0);
    // Every Parquet file in the folder, dead ones included, is the trap:
    // read as a glob it holds rows of older versions.
    let glob = format!("{}/**/*.parquet", dir.display());
    Run::diff(&glob, expected("orders_v3"))
        .arg("--ignore-extra-columns")
        .exits(1);
    // A partition folder inside the table is refused, naming the way to read it.
    Run::diff(dir.join("business_date=2024-01-01"), expected("orders_v3")).fails_with("delta:");
}

#[test]
fn deletion_vectors_remove_their_rows() {
    Run::diff(delta("table-with-dv-small", None), expected("dv_small_v1")).exits(0);
    Run::diff(
        delta("table-with-dv-small", Some(0)),
        expected("dv_small_v0"),
    )
    .exits(0);
    // The data file alone still holds the deleted rows.
    let file = fixture(
        "delta/table-with-dv-small/part-00000-fae5310a-a37d-4e51-827b-c3d5516560ca-c000.snappy.parquet",
    );
    Run::diff(&file, expected("dv_small_v1"))
        .exits(1)
        .stdout_has("source_only_row_count   2");
    // Evidence of a version with deletes comes back from the live file.
    let out = TempDir::new().unwrap();
    Run::diff(
        delta("table-with-dv-small", Some(0)),
        delta("table-with-dv-small", Some(1)),
    )
    .output_dir(out.path())
    .exits(1);
    let rows = read_parquet(&out.path().join("source_only.parquet"));
    let values: Vec<i32> = rows
        .iter()
        .flat_map(|b| {
            b.column(0)
                .as_any()
                .downcast_ref::<arrow::array::Int32Array>()
                .unwrap()
                .values()
                .to_vec()
        })
        .collect();
    let mut values = values;
    values.sort();
    assert_eq!(values, vec![0, 9]);
}

#[test]
fn the_report_and_schema_screen_name_the_format_and_version() {
    let tmp = TempDir::new().unwrap();
    let report = tmp.path().join("r.json");
    let run = Run::diff(delta("orders", Some(2)), expected("orders_v2"))
        .report_file(&report)
        .arg("-q")
        .exits(0);
    let r = run.report();
    assert_eq!(r["inputs"]["source"]["format"], "delta");
    let snap = r["inputs"]["source"]["snapshot"].as_str().unwrap();
    assert!(snap.starts_with("delta version 2: "), "{snap}");
    recon(["schema"])
        .arg(delta("orders", Some(2)))
        .arg(expected("orders_v2"))
        .exits(0)
        .stdout_has("source: delta version 2");
}

#[test]
fn bad_delta_sources_are_one_line_errors() {
    Run::diff(delta("orders", Some(99)), expected("orders_v3")).fails_with("orders");
    Run::diff(
        format!("delta:{}@latest", fixture("delta/orders").display()),
        expected("orders_v3"),
    )
    .fails_with("nor an RFC 3339 timestamp");
    Run::diff(
        format!("delta:{}", fixture("lake/orders").display()),
        expected("orders_v3"),
    )
    .fails_with("no _delta_log");
}

#[test]
fn column_mapping_with_partitions_and_deletion_vectors() {
    // delta-kernel-rs's golden table `dv-with-columnmapping` (Apache-2.0):
    // physical column names (`col-…`, also in the partition folders), 15
    // versions, deletion vectors; `expected/` holds its rows.
    let root = fixture("delta/dv-with-columnmapping");
    Run::diff(
        format!("delta:{}", root.join("delta").display()),
        root.join("expected"),
    )
    .exits(0)
    .stdout_has("source_row_count        35");
    recon(["schema"])
        .arg(format!("delta:{}", root.join("delta").display()))
        .arg(root.join("expected"))
        .exits(0)
        .stdout_has("delta version 15")
        .stdout_has("with deleted rows")
        .stdout_lacks("col-");
}

#[test]
fn files_written_before_a_column_was_added_read_it_as_null() {
    // orders_evolved v1 appended with a new column (delta-rs schema_mode
    // "merge"); v0's file does not hold it.
    for v in 0..2 {
        Run::diff(
            delta("orders_evolved", Some(v)),
            expected(&format!("orders_evolved_v{v}")),
        )
        .exits(0);
    }
    // The NULLs are real values: the old rows do not match a channel.
    Run::diff(
        delta("orders_evolved", Some(1)),
        expected("orders_evolved_v0"),
    )
    .arg("--ignore-extra-columns")
    .exits(1)
    .stdout_has("source_only_row_count   2");
}

#[test]
fn a_timestamp_pins_the_latest_version_committed_by_then() {
    // Without in-commit timestamps a commit's time is its log file's
    // modification time (the Delta spec), so the copy gets known times:
    // version v committed at 2024-01-0{v+1}T00:00:00Z.
    let tmp = TempDir::new().unwrap();
    let table = tmp.path().join("orders");
    common::copy_dir(&fixture("delta/orders"), &table);
    for v in 0..4u64 {
        let commit = table.join(format!("_delta_log/{v:020}.json"));
        let at = std::time::UNIX_EPOCH + std::time::Duration::from_secs(1_704_067_200 + v * 86_400);
        std::fs::File::options()
            .write(true)
            .open(&commit)
            .unwrap()
            .set_modified(at)
            .unwrap();
    }
    let source = |at: &str| format!("delta:{}@{at}", table.display());
    Run::diff(source("2024-01-02T12:00:00Z"), expected("orders_v1")).exits(0);
    Run::diff(source("2024-01-03T00:00:00Z"), expected("orders_v2")).exits(0);
    // The same instant in another zone.
    Run::diff(source("2024-01-03T01:00:00+01:00"), expected("orders_v2")).exits(0);
    Run::diff(source("2030-01-01T00:00:00Z"), expected("orders_v3")).exits(0);
    let tmp_report = tmp.path().join("r.json");
    let run = Run::diff(source("2024-01-02T12:00:00Z"), expected("orders_v1"))
        .arg("-q")
        .report_file(&tmp_report)
        .exits(0);
    let r = run.report();
    let snap = r["inputs"]["source"]["snapshot"].as_str().unwrap();
    assert!(
        snap.starts_with("delta version 1 (committed at 2024-01-02T00:00:00.000Z)"),
        "{snap}"
    );
    // Before the first commit, and a time without its zone: one-line errors.
    Run::diff(source("2023-12-31T00:00:00Z"), expected("orders_v0"))
        .fails_with("no version as of that time");
    Run::diff(source("2024-01-02T12:00:00"), expected("orders_v1")).fails_with("time zone");
}

/// A one-version Delta table in `dir` whose log declares `schema` (a Delta
/// schema's JSON fields) and lists the Parquet files `files` (already in `dir`).
fn delta_by_hand(dir: &std::path::Path, fields: &str, files: &[&str]) {
    let log = dir.join("_delta_log");
    std::fs::create_dir_all(&log).unwrap();
    let schema = format!(r#"{{"type":"struct","fields":[{fields}]}}"#).replace('"', "\\\"");
    let mut commit = String::new();
    commit.push_str(r#"{"protocol":{"minReaderVersion":1,"minWriterVersion":2}}"#);
    commit.push('\n');
    commit.push_str(&format!(
        r#"{{"metaData":{{"id":"t","format":{{"provider":"parquet","options":{{}}}},"schemaString":"{schema}","partitionColumns":[],"configuration":{{}},"createdTime":0}}}}"#
    ));
    commit.push('\n');
    for f in files {
        let size = std::fs::metadata(dir.join(f)).unwrap().len();
        commit.push_str(&format!(
            r#"{{"add":{{"path":"{f}","partitionValues":{{}},"size":{size},"modificationTime":0,"dataChange":true}}}}"#
        ));
        commit.push('\n');
    }
    std::fs::write(log.join("00000000000000000000.json"), commit).unwrap();
}

fn one_column(name: &str, array: arrow::array::ArrayRef) -> arrow::array::RecordBatch {
    arrow::array::RecordBatch::try_from_iter([(name, array)]).unwrap()
}

#[test]
fn delta_timestamp_columns_are_utc_instants() {
    // http_requests (delta-rs) stores its `timestamp` columns as INT64
    // without isAdjustedToUTC; table_with_edge_timestamps (Databricks)
    // as INT96, up to 9999-12-31. Both are Delta `timestamp`: instants.
    for v in 0..2 {
        Run::diff(
            delta("http_requests", Some(v)),
            expected(&format!("http_requests_v{v}")),
        )
        .exits(0);
    }
    Run::diff(
        delta("table_with_edge_timestamps", Some(0)),
        expected("table_with_edge_timestamps_v0"),
    )
    .exits(0);
    recon(["schema"])
        .arg(delta("table_with_edge_timestamps", Some(0)))
        .arg(expected("table_with_edge_timestamps_v0"))
        .exits(0)
        .stdout_has("UTC");
    // The same instants without a zone are wall-clock times: refused by type,
    // so the zone is real and not a label recon ignores.
    let tmp = TempDir::new().unwrap();
    let naive = tmp.path().join("naive.parquet");
    let micros: arrow::array::ArrayRef =
        Arc::new(arrow::array::TimestampMicrosecondArray::from(vec![
            253_402_214_400_000_000i64,
            253_402_128_000_000_000,
        ]));
    common::write_parquet(&naive, &one_column("BIG_DATE", micros), 10);
    Run::diff(delta("table_with_edge_timestamps", Some(0)), &naive)
        .args(["--columns", "BIG_DATE"])
        .exits(2);
}

#[test]
fn delta_nanosecond_timestamps_convert_only_when_exact() {
    use arrow::array::{ArrayRef, TimestampMicrosecondArray, TimestampNanosecondArray};
    let tmp = TempDir::new().unwrap();
    let table = tmp.path().join("t");
    std::fs::create_dir_all(&table).unwrap();
    let ns = |v: Vec<i64>| -> ArrayRef { Arc::new(TimestampNanosecondArray::from(v)) };
    common::write_parquet(
        &table.join("a.parquet"),
        &one_column("ts", ns(vec![1_000, 2_000_000])),
        10,
    );
    delta_by_hand(
        &table,
        r#"{"name":"ts","type":"timestamp","nullable":true,"metadata":{}}"#,
        &["a.parquet"],
    );
    let want = tmp.path().join("want.parquet");
    let us: ArrayRef =
        Arc::new(TimestampMicrosecondArray::from(vec![1, 2_000]).with_timezone("UTC"));
    common::write_parquet(&want, &one_column("ts", us), 10);
    Run::diff(format!("delta:{}", table.display()), &want).exits(0);
    // A value with digits below the microsecond is refused, never truncated.
    common::write_parquet(
        &table.join("a.parquet"),
        &one_column("ts", ns(vec![1_000, 2_000_001])),
        10,
    );
    delta_by_hand(
        &table,
        r#"{"name":"ts","type":"timestamp","nullable":true,"metadata":{}}"#,
        &["a.parquet"],
    );
    Run::diff(format!("delta:{}", table.display()), &want)
        .fails_with("a.parquet")
        .stderr_has("column ts")
        .stderr_has("1970-01-01T00:00:00.002000001Z")
        .stderr_has("digits below");
}

#[test]
fn delta_file_type_that_does_not_convert_is_refused() {
    let tmp = TempDir::new().unwrap();
    let table = tmp.path().join("t");
    std::fs::create_dir_all(&table).unwrap();
    let big: arrow::array::ArrayRef = Arc::new(arrow::array::Int64Array::from(vec![1i64 << 40]));
    common::write_parquet(&table.join("a.parquet"), &one_column("n", big), 10);
    delta_by_hand(
        &table,
        r#"{"name":"n","type":"integer","nullable":true,"metadata":{}}"#,
        &["a.parquet"],
    );
    Run::diff(
        format!("delta:{}", table.display()),
        expected("dv_small_v0"),
    )
    .fails_with("a.parquet")
    .stderr_has("holds column n as Int64")
    .stderr_has("declares it Int32");
}

#[test]
fn delta_string_layouts_differ_between_files() {
    // delta-rs's table_failed_last_checkpoint_update: `id` is a Delta
    // `string` stored as Utf8 in some files and LargeUtf8 in others.
    for v in 0..4 {
        Run::diff(
            delta("table_failed_last_checkpoint_update", Some(v)),
            expected(&format!("table_failed_last_checkpoint_update_v{v}")),
        )
        .exits(0);
    }
    // Evidence comes back from both kinds of file.
    let out = TempDir::new().unwrap();
    Run::diff(
        delta("table_failed_last_checkpoint_update", Some(3)),
        expected("table_failed_last_checkpoint_update_v0"),
    )
    .output_dir(out.path())
    .exits(1);
    assert!(common::parquet_rows(&out.path().join("source_only.parquet")) > 0);
}

#[test]
fn delta_errors_are_one_line_without_backtrace() {
    // A schema type the kernel does not support: its error carries a
    // backtrace when one is captured (RUST_BACKTRACE set), which recon
    // printed after the message (escaped onto the same line).
    let tmp = TempDir::new().unwrap();
    let log = tmp.path().join("_delta_log");
    std::fs::create_dir_all(&log).unwrap();
    std::fs::write(
        log.join("00000000000000000000.json"),
        concat!(
            r#"{"protocol":{"minReaderVersion":1,"minWriterVersion":2}}"#,
            "\n",
            r#"{"metaData":{"id":"t","format":{"provider":"parquet","options":{}},"schemaString":"{\"type\":\"struct\",\"fields\":[{\"name\":\"n\",\"type\":\"geography(OGC:CRS84)\",\"nullable\":true,\"metadata\":{}}]}","partitionColumns":[],"configuration":{},"createdTime":0}}"#,
            "\n"
        ),
    )
    .unwrap();
    let run = Run::diff(
        format!("delta:{}", tmp.path().display()),
        expected("dv_small_v0"),
    )
    .env("RUST_BACKTRACE", "1")
    .env("RUST_LIB_BACKTRACE", "1")
    .exits(2);
    let stderr = run.one_line_error();
    assert!(
        stderr.contains(
            "Delta table: Schema error: Unsupported Delta table type: 'geography(OGC:CRS84)'"
        ),
        "{stderr}"
    );
    // The table's temp folder may end in "0", which would read as frame 0.
    let message = stderr.replace(&tmp.path().display().to_string(), "TABLE");
    for trace in ["0: ", "\\n", "with_backtrace", ".rs:"] {
        assert!(!message.contains(trace), "{trace} in {stderr}");
    }
}
