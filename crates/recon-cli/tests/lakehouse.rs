//! Lakehouse tables: Delta versions read through delta-kernel-rs against
//! the rows their writer says each version holds (testdata/delta, written
//! by scripts/make_lake_fixtures.py with delta-rs; the deletion-vector
//! table is delta-kernel-rs's own test data).
#![cfg(feature = "delta")]

mod common;

use assert_cmd::Command;
use common::{fixture, read_parquet};
use predicates::prelude::*;
use tempfile::TempDir;

fn recon() -> Command {
    Command::cargo_bin("recon").unwrap()
}

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
        common::diff(
            delta("orders", Some(v)),
            expected(&format!("orders_v{v}")),
            &[],
        )
        .code(0);
    }
    // Versions differ from each other, so each comparison above could fail.
    common::diff(delta("orders", Some(1)), expected("orders_v2"), &[])
        .code(1)
        .stdout(predicate::str::contains("source_only_row_count   1"));
}

#[test]
fn the_table_folder_reads_the_latest_version_not_every_file() {
    let dir = fixture("delta/orders");
    common::diff(&dir, expected("orders_v3"), &[]).code(0);
    // Every Parquet file in the folder, dead ones included, is the trap:
    // read as a glob it holds rows of older versions.
    let glob = format!("{}/**/*.parquet", dir.display());
    common::diff(&glob, expected("orders_v3"), &["--ignore-extra-columns"]).code(1);
    // A partition folder inside the table is refused, naming the way to read it.
    common::diff(
        dir.join("business_date=2024-01-01"),
        expected("orders_v3"),
        &[],
    )
    .code(2)
    .stderr(predicate::str::contains("delta:"));
}

#[test]
fn deletion_vectors_remove_their_rows() {
    common::diff(
        delta("table-with-dv-small", None),
        expected("dv_small_v1"),
        &[],
    )
    .code(0);
    common::diff(
        delta("table-with-dv-small", Some(0)),
        expected("dv_small_v0"),
        &[],
    )
    .code(0);
    // The data file alone still holds the deleted rows.
    let file = fixture(
        "delta/table-with-dv-small/part-00000-fae5310a-a37d-4e51-827b-c3d5516560ca-c000.snappy.parquet",
    );
    common::diff(&file, expected("dv_small_v1"), &[])
        .code(1)
        .stdout(predicate::str::contains("source_only_row_count   2"));
    // Evidence of a version with deletes comes back from the live file.
    let out = TempDir::new().unwrap();
    recon()
        .arg("diff")
        .arg(delta("table-with-dv-small", Some(0)))
        .arg(delta("table-with-dv-small", Some(1)))
        .arg("-o")
        .arg(out.path())
        .assert()
        .code(1);
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
    recon()
        .arg("diff")
        .arg(delta("orders", Some(2)))
        .arg(expected("orders_v2"))
        .arg("--report")
        .arg(&report)
        .arg("-q")
        .assert()
        .code(0);
    let r: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&report).unwrap()).unwrap();
    assert_eq!(r["inputs"]["source"]["format"], "delta");
    let snap = r["inputs"]["source"]["snapshot"].as_str().unwrap();
    assert!(snap.starts_with("delta version 2: "), "{snap}");
    recon()
        .arg("schema")
        .arg(delta("orders", Some(2)))
        .arg(expected("orders_v2"))
        .assert()
        .code(0)
        .stdout(predicate::str::contains("source: delta version 2"));
}

#[test]
fn bad_delta_sources_are_one_line_errors() {
    common::diff(delta("orders", Some(99)), expected("orders_v3"), &[])
        .code(2)
        .stderr(predicate::str::contains("orders"));
    common::diff(
        format!("delta:{}@latest", fixture("delta/orders").display()),
        expected("orders_v3"),
        &[],
    )
    .code(2)
    .stderr(predicate::str::contains("nor an RFC 3339 timestamp"));
    common::diff(
        format!("delta:{}", fixture("lake/orders").display()),
        expected("orders_v3"),
        &[],
    )
    .code(2)
    .stderr(predicate::str::contains("no _delta_log"));
}

#[test]
fn column_mapping_with_partitions_and_deletion_vectors() {
    // delta-kernel-rs's golden table `dv-with-columnmapping` (Apache-2.0):
    // physical column names (`col-…`, also in the partition folders), 15
    // versions, deletion vectors; `expected/` holds its rows.
    let root = fixture("delta/dv-with-columnmapping");
    common::diff(
        format!("delta:{}", root.join("delta").display()),
        root.join("expected"),
        &[],
    )
    .code(0)
    .stdout(predicate::str::contains("source_row_count        35"));
    recon()
        .arg("schema")
        .arg(format!("delta:{}", root.join("delta").display()))
        .arg(root.join("expected"))
        .assert()
        .code(0)
        .stdout(predicate::str::contains("delta version 15"))
        .stdout(predicate::str::contains("with deleted rows"))
        .stdout(predicate::str::contains("col-").not());
}

#[test]
fn files_written_before_a_column_was_added_read_it_as_null() {
    // orders_evolved v1 appended with a new column (delta-rs schema_mode
    // "merge"); v0's file does not hold it.
    for v in 0..2 {
        common::diff(
            delta("orders_evolved", Some(v)),
            expected(&format!("orders_evolved_v{v}")),
            &[],
        )
        .code(0);
    }
    // The NULLs are real values: the old rows do not match a channel.
    common::diff(
        delta("orders_evolved", Some(1)),
        expected("orders_evolved_v0"),
        &["--ignore-extra-columns"],
    )
    .code(1)
    .stdout(predicate::str::contains("source_only_row_count   2"));
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
    common::diff(source("2024-01-02T12:00:00Z"), expected("orders_v1"), &[]).code(0);
    common::diff(source("2024-01-03T00:00:00Z"), expected("orders_v2"), &[]).code(0);
    // The same instant in another zone.
    common::diff(
        source("2024-01-03T01:00:00+01:00"),
        expected("orders_v2"),
        &[],
    )
    .code(0);
    common::diff(source("2030-01-01T00:00:00Z"), expected("orders_v3"), &[]).code(0);
    let tmp_report = tmp.path().join("r.json");
    common::diff(
        source("2024-01-02T12:00:00Z"),
        expected("orders_v1"),
        &["-q", "--report", tmp_report.to_str().unwrap()],
    )
    .code(0);
    let r: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&tmp_report).unwrap()).unwrap();
    let snap = r["inputs"]["source"]["snapshot"].as_str().unwrap();
    assert!(
        snap.starts_with("delta version 1 (committed at 2024-01-02T00:00:00.000Z)"),
        "{snap}"
    );
    // Before the first commit, and a time without its zone: one-line errors.
    common::diff(source("2023-12-31T00:00:00Z"), expected("orders_v0"), &[])
        .code(2)
        .stderr(predicate::str::contains("no version as of that time"));
    common::diff(source("2024-01-02T12:00:00"), expected("orders_v1"), &[])
        .code(2)
        .stderr(predicate::str::contains("time zone"));
}
