//! Iceberg tables read as of a snapshot, against the rows their writer
//! says each snapshot holds (testdata/iceberg, written by
//! scripts/make_iceberg_fixtures.py with pyiceberg and a SQLite catalog;
//! `flink_eqdel` is Apache Impala's Flink-written test table). The fixtures'
//! metadata records where they were written (/tmp/recon-iceberg-gen/...),
//! so every test here also reads a table copied away from its location.
#![cfg(feature = "iceberg")]

use crate::common;

use common::{fixture, read_parquet, recon, Run};
use serde_json::Value;
use tempfile::TempDir;

fn fixtures() -> Value {
    serde_json::from_str(&std::fs::read_to_string(fixture("iceberg/fixtures.json")).unwrap())
        .unwrap()
}

/// The table's snapshots in order: (id, expected rows file).
fn snapshots(table: &str) -> Vec<(i64, String)> {
    fixtures()[table]["snapshots"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| {
            let expected = fixture(&format!(
                "iceberg/expected/{}",
                s["expected"].as_str().unwrap()
            ));
            (
                s["snapshot_id"].as_i64().unwrap(),
                expected.display().to_string(),
            )
        })
        .collect()
}

fn iceberg(table: &str, snapshot: Option<i64>) -> String {
    let path = fixture(&format!("iceberg/{table}")).display().to_string();
    match snapshot {
        Some(s) => format!("iceberg:{path}@{s}"),
        None => format!("iceberg:{path}"),
    }
}

#[test]
fn every_snapshot_holds_exactly_the_rows_its_writer_says() {
    // orders: appends, a copy-on-write delete (its old file stays on disk),
    // then a rename (status -> state) and an added column before an append.
    // orders_posdel: position deletes, one of them one copy of a duplicate.
    // orders_promoted: int -> long, decimal(9,2) -> (12,2) and float ->
    // double after the first file, which keeps the narrow types.
    for table in [
        "orders",
        "orders_posdel",
        "orders_like_delta_v3",
        "orders_promoted",
    ] {
        let snaps = snapshots(table);
        for (id, expected) in &snaps {
            Run::diff(iceberg(table, Some(*id)), expected).exits(0);
        }
        // Snapshots differ from each other, so each comparison above could fail.
        let (first, _) = snaps[0];
        let (_, last) = &snaps[snaps.len() - 1];
        Run::diff(iceberg(table, Some(first)), last)
            .arg("--ignore-extra-columns")
            .exits(1);
    }
}

#[test]
fn position_deletes_remove_exactly_their_rows() {
    let snaps = snapshots("orders_posdel");
    let (after_delete, expected) = &snaps[2];
    Run::diff(iceberg("orders_posdel", Some(*after_delete)), expected).exits(0);
    // Ignoring the deletes (every data file, as a glob; the delete file
    // lies beside them) counts the deleted rows: order 2 and one of the
    // copies of order 4.
    let glob = format!(
        "{}/data/00000-*.parquet",
        fixture("iceberg/orders_posdel").display()
    );
    Run::diff(&glob, &snaps[3].1)
        .exits(1)
        .stdout_has("source_only_row_count   2")
        .stdout_has("target_only_row_count   0");
    let out = TempDir::new().unwrap();
    Run::diff(
        iceberg("orders_posdel", Some(snaps[1].0)),
        iceberg("orders_posdel", Some(*after_delete)),
    )
    .output_dir(out.path())
    .exits(1)
    .stdout_has("source_only_row_count   2")
    .stdout_has("target_only_row_count   0");
    // The evidence comes back from the live data file.
    let ids = evidence_ids(&out.path().join("source_only.parquet"), "order_id");
    assert_eq!(ids, vec![2, 4]);
}

#[test]
fn the_table_folder_reads_the_current_snapshot_and_names_its_metadata() {
    // orders has metadata/version-hint.text; orders_posdel has none, so the
    // highest-numbered metadata file is current.
    for table in ["orders", "orders_posdel"] {
        let snaps = snapshots(table);
        let (_, current) = &snaps[snaps.len() - 1];
        Run::diff(fixture(&format!("iceberg/{table}")), current).exits(0);
        Run::diff(iceberg(table, None), current).exits(0);
    }
    // A folder inside the table is refused, naming the way to read it.
    Run::diff(fixture("iceberg/orders/data"), &snapshots("orders")[3].1)
        .fails_with("inside an Iceberg table")
        .stderr_has("iceberg:");
    // A metadata file pins its own current snapshot.
    let f = &fixtures()["orders"];
    let meta = f["snapshots"][1]["metadata_file"].as_str().unwrap();
    Run::diff(
        format!(
            "iceberg:{}",
            fixture(&format!("iceberg/orders/metadata/{meta}")).display()
        ),
        &snapshots("orders")[1].1,
    )
    .exits(0);
}

#[test]
fn a_table_with_no_snapshot_holds_no_rows() {
    // The create commit's metadata: a schema, no snapshot.
    let f = &fixtures()["orders"];
    let create = f["metadata_files"][0]["file"].as_str().unwrap();
    assert!(f["metadata_files"][0]["current_snapshot_id"].is_null());
    let source = format!(
        "iceberg:{}",
        fixture(&format!("iceberg/orders/metadata/{create}")).display()
    );
    Run::diff(&source, &snapshots("orders")[0].1)
        .exits(1)
        .stdout_has("source_row_count        0")
        .stdout_has("target_only_row_count   6");
}

#[test]
fn the_report_and_schema_screen_name_the_format_snapshot_and_metadata() {
    let tmp = TempDir::new().unwrap();
    let report = tmp.path().join("r.json");
    let snaps = snapshots("orders_posdel");
    let (id, expected) = &snaps[2];
    let run = Run::diff(iceberg("orders_posdel", Some(*id)), expected)
        .report_file(&report)
        .arg("-q")
        .exits(0);
    let r = run.report();
    assert_eq!(r["inputs"]["source"]["format"], "iceberg");
    let snap = r["inputs"]["source"]["snapshot"].as_str().unwrap();
    assert!(
        snap.starts_with(&format!("iceberg snapshot {id} (from metadata/")),
        "{snap}"
    );
    assert!(snap.contains("with deleted rows"), "{snap}");
    recon(["schema"])
        .arg(iceberg("orders_posdel", Some(*id)))
        .arg(expected)
        .exits(0)
        .stdout_has(format!("source: iceberg snapshot {id}"));
}

#[test]
fn equality_deletes_remove_exactly_their_rows() {
    // orders_eqdel (pyiceberg): an equality delete on order_id after two
    // appends, then an append written after it, which it must not touch
    // (sequence numbers). flink_eqdel (Apache Impala's, written by Flink):
    // upserts, each a data file plus an equality delete on id. Expected
    // rows: scripts/make_iceberg_fixtures.py's own anti-join.
    for table in ["orders_eqdel", "flink_eqdel"] {
        for (id, expected) in snapshots(table) {
            Run::diff(iceberg(table, Some(id)), &expected).exits(0);
        }
    }
    // Ignoring the delete would read the rows before it: drift, the three
    // copies of the deleted order on the snapshot-before side only.
    let snaps = snapshots("orders_eqdel");
    let out = Run::diff(iceberg("orders_eqdel", Some(snaps[2].0)), &snaps[1].1)
        .json()
        .exits(1);
    assert_eq!(out.report()["source_only_rows"], 0, "{}", out.report());
    assert_eq!(out.report()["target_only_rows"], 3, "{}", out.report());
    assert_eq!(
        out.report()["samples"]["target_only"][0]["row"]["order_id"],
        "4",
        "{}",
        out.report()
    );
}

#[test]
fn equality_deletes_beyond_the_memory_budget_spill_and_remove_the_same_rows() {
    // orders_eqdel with its delete file (order_id = 4) grown to 200,001
    // rows (3.2 MB of keys): under -m 8MiB the keys get 2 MiB, so they are
    // spilled to partitions; with the default limit they are held. Both
    // read every snapshot as its writer says. (That the small limit takes
    // the spilled path is the unit test
    // `a_delete_file_beyond_the_budget_is_spilled_and_removes_the_same_rows`.)
    let tmp = TempDir::new().unwrap();
    let table = tmp.path().join("orders_eqdel");
    common::copy_dir(&fixture("iceberg/orders_eqdel"), &table);
    let delete = std::fs::read_dir(table.join("data"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.to_string_lossy().ends_with("-eq-deletes.parquet"))
        .unwrap();
    let field = arrow::datatypes::Field::new("order_id", arrow::datatypes::DataType::Int64, true)
        .with_metadata(std::collections::HashMap::from([(
            "PARQUET:field_id".to_string(),
            "1".to_string(),
        )]));
    let ids = std::iter::once(4).chain(1_000_000..1_200_000);
    let batch = arrow::array::RecordBatch::try_new(
        std::sync::Arc::new(arrow::datatypes::Schema::new(vec![field])),
        vec![std::sync::Arc::new(
            arrow::array::Int64Array::from_iter_values(ids),
        )],
    )
    .unwrap();
    common::write_parquet(&delete, &batch, 1 << 20);
    let source = |id: i64| format!("iceberg:{}@{id}", table.display());
    for (id, expected) in snapshots("orders_eqdel") {
        Run::diff(source(id), &expected).exits(0);
        Run::diff(source(id), &expected)
            .args(["-m", "8MiB"])
            .exits(0);
    }
}

/// A row of DuckDB's `equality_deletes` tables: (id, name, days since 1970
/// of `bir`).
type IdNameBir = (i32, &'static str, i32);

/// A Parquet file of such rows.
fn id_name_bir(path: &std::path::Path, rows: &[IdNameBir]) {
    use arrow::array::{Date32Array, Int32Array, StringArray};
    let batch = arrow::array::RecordBatch::try_from_iter([
        (
            "id",
            std::sync::Arc::new(Int32Array::from_iter_values(rows.iter().map(|r| r.0))) as _,
        ),
        (
            "name",
            std::sync::Arc::new(StringArray::from_iter_values(rows.iter().map(|r| r.1))) as _,
        ),
        (
            "bir",
            std::sync::Arc::new(Date32Array::from_iter_values(rows.iter().map(|r| r.2))) as _,
        ),
    ])
    .unwrap();
    common::write_parquet(path, &batch, 10);
}

#[test]
fn equality_deletes_apply_by_sequence_number_partition_and_columns() {
    // DuckDB's equality_deletes tables (Spark-written; rows per snapshot
    // as its test/sql/local/equality_deletes.test lists them). Deletes on
    // `name`, on `id`, on both; then an append the earlier deletes must
    // not touch; then a delete of it. The partitioned table (by name)
    // writes each delete in its partition.
    const JAN: i32 = 20088; // 2025-01-01 is 20089 days after 1970-01-01
    let row = |id: i32, name: &'static str| (id, name, JAN + id);
    let all = [row(1, "a"), row(2, "b"), row(3, "c"), row(4, "d")];
    // (snapshot id, rows), in sequence-number order.
    let unpartitioned: Vec<(&str, Vec<IdNameBir>)> = vec![
        ("853766660775201079", all.to_vec()),
        // Its manifest list is not in duckdb-iceberg's checkout: refused.
        ("7342794868382145167", vec![]),
        ("1584331123492059582", vec![row(3, "c"), row(4, "d")]),
        ("842401149381792626", vec![row(4, "d")]),
        (
            "3340507003387467420",
            vec![row(4, "d"), row(5, "e"), row(6, "f")],
        ),
        ("1916084761853986166", vec![row(4, "d"), row(5, "e")]),
    ];
    let partitioned: Vec<(&str, Vec<IdNameBir>)> = vec![
        ("6447922032991303611", all.to_vec()),
        (
            "4416477559988274704",
            vec![row(1, "a"), row(3, "c"), row(4, "d")],
        ),
        ("6022113614852838397", vec![row(1, "a"), row(4, "d")]),
        (
            "883882341917253211",
            vec![row(1, "a"), row(4, "d"), row(5, "e"), row(6, "f")],
        ),
        (
            "3138177759849079112",
            vec![row(1, "a"), row(4, "d"), row(5, "e")],
        ),
    ];
    let tmp = TempDir::new().unwrap();
    for (table, snapshots) in [
        ("equality_deletes", unpartitioned),
        ("equality_deletes_partitioned", partitioned),
    ] {
        for (id, rows) in &snapshots {
            let expected = tmp.path().join(format!("{table}_{id}.parquet"));
            id_name_bir(&expected, rows);
            let run = Run::diff(format!("iceberg:{}@{id}", peer(table)), &expected);
            if rows.is_empty() {
                run.fails_with("snap-7342794868382145167-1-");
            } else {
                run.exits(0);
            }
        }
    }
    // The delete of part 0 leaves part 1's rows of the same key: deletes
    // written in a partition apply to that partition only.
    let cross = tmp.path().join("cross.parquet");
    let batch = arrow::array::RecordBatch::try_from_iter([
        (
            "part",
            std::sync::Arc::new(arrow::array::Int64Array::from(vec![0, 1, 1])) as _,
        ),
        (
            "key",
            std::sync::Arc::new(arrow::array::Int64Array::from(vec![999, 100, 888])) as _,
        ),
        (
            "val",
            std::sync::Arc::new(arrow::array::StringArray::from(vec![
                "p0-k999", "p1-k100", "p1-k888",
            ])) as _,
        ),
    ])
    .unwrap();
    common::write_parquet(&cross, &batch, 10);
    Run::diff(
        format!(
            "iceberg:{}/metadata/vfinal.metadata.json",
            peer("equality_delete_cross_partition")
        ),
        &cross,
    )
    .exits(0);
}

/// Integer column `column` of evidence rows, sorted, whatever its width.
fn evidence_ids(file: &std::path::Path, column: &str) -> Vec<i64> {
    let mut ids: Vec<i64> = read_parquet(file)
        .iter()
        .flat_map(|b| {
            let id = arrow::compute::cast(
                b.column_by_name(column).unwrap(),
                &arrow::datatypes::DataType::Int64,
            )
            .unwrap();
            id.as_any()
                .downcast_ref::<arrow::array::Int64Array>()
                .unwrap()
                .values()
                .to_vec()
        })
        .collect();
    ids.sort();
    ids
}

#[test]
fn orc_data_files_are_read_by_field_id_not_refused() {
    // Apache Impala's tables, written by Hive with Iceberg's ORC writer:
    // flat columns, and lists, maps and structs nested three deep (the
    // latter's expected rows are Apache ORC's C++ reader's). recon refused
    // both before ("recon reads Iceberg tables whose data files are Parquet").
    for table in ["impala_orc", "impala_orc_complex"] {
        for (id, expected) in snapshots(table) {
            Run::diff(iceberg(table, Some(id)), &expected).exits(0);
        }
    }
    // Without rows 4 and 7 (whose NULL maps inside a struct pyiceberg reads
    // as empty maps), the expected rows are short of exactly those two.
    let tmp = TempDir::new().unwrap();
    let out = TempDir::new().unwrap();
    let fewer = tmp.path().join("fewer.parquet");
    {
        let rows = read_parquet(std::path::Path::new(&snapshots("impala_orc_complex")[0].1));
        let file = std::fs::File::create(&fewer).unwrap();
        let mut w = parquet::arrow::ArrowWriter::try_new(file, rows[0].schema(), None).unwrap();
        for b in &rows {
            let ids = arrow::compute::cast(
                b.column_by_name("id").unwrap(),
                &arrow::datatypes::DataType::Int64,
            )
            .unwrap();
            let ids = ids
                .as_any()
                .downcast_ref::<arrow::array::Int64Array>()
                .unwrap();
            let keep: arrow::array::BooleanArray = ids
                .iter()
                .map(|i| Some(!matches!(i, Some(4 | 7))))
                .collect();
            w.write(&arrow::compute::filter_record_batch(b, &keep).unwrap())
                .unwrap();
        }
        w.close().unwrap();
    }
    Run::diff(iceberg("impala_orc_complex", None), &fewer)
        .output_dir(out.path())
        .exits(1)
        .stdout_has("source_only_row_count   2")
        .stdout_has("target_only_row_count   0");
    // The evidence rows come back from the ORC files by position.
    assert_eq!(
        evidence_ids(&out.path().join("source_only.parquet"), "id"),
        vec![4, 7]
    );
}

#[test]
fn orc_position_deletes_remove_exactly_their_rows() {
    // Impala's partitioned ORC table with ORC position delete files (their
    // file_path rewritten to the paths the manifests give; see
    // testdata/README.md): the second snapshot deletes the odd ids.
    let snaps = snapshots("impala_orc_posdel");
    for (id, expected) in &snaps {
        Run::diff(iceberg("impala_orc_posdel", Some(*id)), expected).exits(0);
    }
    let out = TempDir::new().unwrap();
    Run::diff(
        iceberg("impala_orc_posdel", Some(snaps[0].0)),
        iceberg("impala_orc_posdel", Some(snaps[1].0)),
    )
    .output_dir(out.path())
    .exits(1)
    .stdout_has("source_only_row_count   10")
    .stdout_has("target_only_row_count   0");
    assert_eq!(
        evidence_ids(&out.path().join("source_only.parquet"), "id"),
        (1..20).step_by(2).collect::<Vec<i64>>()
    );
}

#[test]
fn a_data_file_that_is_not_the_one_the_manifest_lists_is_refused() {
    // Replace the position-deleted file of a copy with another data file:
    // the deletes' positions would name other rows.
    let tmp = TempDir::new().unwrap();
    let table = tmp.path().join("orders_posdel");
    common::copy_dir(&fixture("iceberg/orders_posdel"), &table);
    let mut data: Vec<_> = std::fs::read_dir(table.join("data"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| !p.to_string_lossy().contains("deletes"))
        .collect();
    data.sort();
    let sizes: Vec<usize> = data.iter().map(|p| common::parquet_rows(p)).collect();
    let (big, small) = (
        sizes
            .iter()
            .position(|&n| n == *sizes.iter().max().unwrap())
            .unwrap(),
        sizes
            .iter()
            .position(|&n| n == *sizes.iter().min().unwrap())
            .unwrap(),
    );
    std::fs::copy(&data[small], &data[big]).unwrap();
    Run::diff(
        format!("iceberg:{}", table.display()),
        &snapshots("orders_posdel")[3].1,
    )
    .fails_with("manifest says");
}

#[test]
fn bad_iceberg_sources_are_one_line_errors() {
    let expected = &snapshots("orders")[0].1;
    for (source, says) in [
        (
            iceberg("orders", Some(5)),
            "snapshot 5 is not in this metadata",
        ),
        (
            format!("iceberg:{}@main", fixture("iceberg/orders").display()),
            "must be a whole number",
        ),
        (
            format!("iceberg:{}", fixture("delta/orders").display()),
            "no metadata/ folder",
        ),
    ] {
        let out = Run::diff(&source, expected).exits(2);
        let err = out.one_line_error();
        assert!(err.contains(says), "{source}: {err}");
    }
}

#[cfg(feature = "delta")]
#[test]
fn a_delta_version_against_an_iceberg_snapshot_of_the_same_rows() {
    let delta = format!("delta:{}@3", fixture("delta/orders").display());
    Run::diff(&delta, iceberg("orders_like_delta_v3", None)).exits(0);
    // One planted change: amount of order 11, 2.00 -> 2.01.
    let out = TempDir::new().unwrap();
    Run::diff(&delta, iceberg("orders_like_delta_v3_changed", None))
        .output_dir(out.path())
        .exits(1)
        .stdout_has("source_only_row_count   1")
        .stdout_has("target_only_row_count   1")
        .stdout_has("amount 2.00 -> 2.01");
    for (file, side) in [
        ("source_only.parquet", "2.00"),
        ("target_only.parquet", "2.01"),
    ] {
        let rows = read_parquet(&out.path().join(file));
        assert_eq!(rows.iter().map(|b| b.num_rows()).sum::<usize>(), 1);
        let amount = rows[0].column_by_name("amount").unwrap();
        let shown = arrow::util::display::array_value_to_string(amount, 0).unwrap();
        assert_eq!(shown, side);
    }
}

/// A peer table's snapshots: (id, expected rows file, None where the
/// referee refuses the snapshot).
type PeerSnapshots = Vec<(String, Option<String>)>;

/// The peers' tables (testdata/iceberg/peers, copied by
/// scripts/copy_peer_iceberg_tables.py) and their snapshots.
fn peers() -> Vec<(String, PeerSnapshots)> {
    let path = fixture("iceberg/peers/peers.json");
    let all: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    all.as_object()
        .unwrap()
        .iter()
        .map(|(name, t)| {
            let snaps = t["snapshots"]
                .as_array()
                .unwrap()
                .iter()
                .map(|s| {
                    let expected = s["expected"].as_str().map(|e| {
                        fixture(&format!("iceberg/expected/{e}"))
                            .display()
                            .to_string()
                    });
                    (s["snapshot_id"].as_str().unwrap().to_string(), expected)
                })
                .collect();
            (name.clone(), snaps)
        })
        .collect()
}

fn peer(name: &str) -> String {
    fixture(&format!("iceberg/peers/duckdb/{name}"))
        .display()
        .to_string()
}

#[test]
fn identity_partition_values_missing_from_data_files_come_from_the_manifest() {
    // DuckDB's partition_* tables: Spark and pyiceberg wrote the data files
    // without the partition column (write.parquet.write-partition-values
    // false); its value is only in each manifest entry's partition tuple.
    // Every type: int, long, boolean, binary, fixed, float, double, the four
    // decimal widths up to decimal(38,…), time, timestamp, timestamptz.
    let mut seen = 0;
    for (name, snaps) in peers() {
        if !name.starts_with("partition_") {
            continue;
        }
        for (id, expected) in snaps {
            let expected = expected.unwrap_or_else(|| panic!("{name}@{id}: no expected rows"));
            Run::diff(format!("iceberg:{}@{id}", peer(&name)), &expected).exits(0);
            seen += 1;
        }
    }
    assert_eq!(seen, 14);
    // Read as NULL, the partition value would match a table that differs
    // only there: 42 -> 43 is drift, one row each way.
    let tmp = TempDir::new().unwrap();
    let other = tmp.path().join("other.parquet");
    let batch = arrow::array::RecordBatch::try_from_iter([
        (
            "partition_col",
            std::sync::Arc::new(arrow::array::Int32Array::from(vec![1337, 43])) as _,
        ),
        (
            "user_id",
            std::sync::Arc::new(arrow::array::Int64Array::from(vec![67890, 12345])) as _,
        ),
        (
            "event_type",
            std::sync::Arc::new(arrow::array::StringArray::from(vec!["purchase", "click"])) as _,
        ),
    ])
    .unwrap();
    common::write_parquet(&other, &batch, 10);
    let out = Run::diff(format!("iceberg:{}", peer("partition_integer")), &other)
        .json()
        .exits(1);
    assert_eq!(out.report()["source_only_rows"], 1, "{}", out.report());
    assert_eq!(out.report()["target_only_rows"], 1, "{}", out.report());
}

#[test]
fn a_required_column_missing_from_a_file_is_refused_not_read_as_null() {
    // partition_time declares partition_col required and its files lack
    // it. Without the identity transform that supplies it, reading NULL
    // would invent rows: refused, naming the column.
    let tmp = TempDir::new().unwrap();
    let table = tmp.path().join("partition_time");
    common::copy_dir(&fixture("iceberg/peers/duckdb/partition_time"), &table);
    let meta = table.join("metadata/00001-44546aa6-1ee5-48c5-9e3b-bc6c0bc0a60c.metadata.json");
    let text = std::fs::read_to_string(&meta).unwrap();
    let voided = text.replace(r#""transform":"identity""#, r#""transform":"void""#);
    assert_ne!(voided, text);
    std::fs::write(&meta, &voided).unwrap();
    let expected = fixture("iceberg/expected/peer_partition_time_0.parquet");
    Run::diff(format!("iceberg:{}", meta.display()), &expected)
        .fails_with("lacks required column partition_col (field id 1)");
    // Optional, the same column reads as NULL, as the spec says.
    let optional = voided.replacen(
        r#""name":"partition_col","type":"time","required":true"#,
        r#""name":"partition_col","type":"time","required":false"#,
        1,
    );
    assert_ne!(optional, voided);
    std::fs::write(&meta, optional).unwrap();
    let out = Run::diff(format!("iceberg:{}", meta.display()), &expected)
        .json()
        .exits(1);
    assert_eq!(out.report()["source_only_rows"], 2, "{}", out.report());
}

#[test]
fn snapshot_ids_above_the_signed_64_bit_range_are_read_not_taken_as_no_snapshot() {
    // duckdb-iceberg's equality_delete_extra_column: current-snapshot-id
    // 9876543210123456789 > 2^63. Read as "no snapshot" it held 0 rows and
    // matched an empty table. Now its snapshot is found and read.
    let meta = format!(
        "{}/metadata/vfinal.metadata.json",
        peer("equality_delete_extra_column")
    );
    let snaps = &peers()
        .into_iter()
        .find(|(n, _)| n == "equality_delete_extra_column")
        .unwrap()
        .1;
    let (first, expected) = (&snaps[0].0, snaps[0].1.as_ref().unwrap());
    let tmp = TempDir::new().unwrap();
    let empty = tmp.path().join("empty.parquet");
    let batch = arrow::array::RecordBatch::try_from_iter([
        (
            "id",
            std::sync::Arc::new(arrow::array::Int64Array::from(Vec::<i64>::new())) as _,
        ),
        (
            "val",
            std::sync::Arc::new(arrow::array::StringArray::from(Vec::<&str>::new())) as _,
        ),
    ])
    .unwrap();
    common::write_parquet(&empty, &batch, 10);
    // Its equality delete (on id, the delete file holding an extra
    // column) leaves ids 1 and 3, as DuckDB's
    // test/sql/local/equality_delete_extra_column.test lists them.
    let current = tmp.path().join("current.parquet");
    let batch = arrow::array::RecordBatch::try_from_iter([
        (
            "id",
            std::sync::Arc::new(arrow::array::Int64Array::from(vec![1, 3])) as _,
        ),
        (
            "val",
            std::sync::Arc::new(arrow::array::StringArray::from(vec!["a", "c"])) as _,
        ),
    ])
    .unwrap();
    common::write_parquet(&current, &batch, 10);
    for source in [
        format!("iceberg:{meta}"),
        format!("iceberg:{meta}@9876543210123456789"),
    ] {
        Run::diff(&source, &current).exits(0);
        Run::diff(&source, &empty).exits(1);
    }
    // The earlier snapshot (a signed id) reads its three rows.
    Run::diff(format!("iceberg:{meta}@{first}"), expected).exits(0);
    // An id past 2^64 - 1 is refused as such, not as "not a number".
    Run::diff(format!("iceberg:{meta}@18446744073709551616"), expected)
        .fails_with("from -2^63 to 2^64-1");
}

#[test]
fn dot_slash_locations_read_like_plain_relative_ones() {
    // partition_integer's metadata records `data/persistent/...` locations,
    // and so do its manifests. A writer that records `./data/persistent/...`
    // in the metadata (and the plain form in the Avro files) names the same
    // files: the two spellings resolve alike.
    let tmp = TempDir::new().unwrap();
    let table = tmp.path().join("t");
    common::copy_dir(&fixture("iceberg/peers/duckdb/partition_integer"), &table);
    let meta = table.join("metadata/v2.metadata.json");
    let text = std::fs::read_to_string(&meta).unwrap();
    let dotted = text.replace("\"data/persistent/", "\"./data/persistent/");
    assert_ne!(dotted, text);
    std::fs::write(&meta, dotted).unwrap();
    let expected = fixture("iceberg/expected/peer_partition_integer_0.parquet");
    Run::diff(format!("iceberg:{}", meta.display()), &expected).exits(0);
}

#[test]
fn a_version_hint_holding_a_stem_or_nothing_is_read_as_java_reads_it() {
    // partition_integer's folder holds v1 (no snapshot) and v2 (two rows).
    let tmp = TempDir::new().unwrap();
    let table = tmp.path().join("t");
    common::copy_dir(&fixture("iceberg/peers/duckdb/partition_integer"), &table);
    let hint = table.join("metadata/version-hint.text");
    let expected = fixture("iceberg/expected/peer_partition_integer_0.parquet");
    let source = format!("iceberg:{}", table.display());
    // A stem names its metadata file: v1, no rows.
    std::fs::write(&hint, "v1\n").unwrap();
    Run::diff(&source, &expected)
        .json()
        .exits(1)
        .stdout_has("v1.metadata.json");
    // Empty, or naming nothing here: the highest version, as Java lists it.
    for text in ["", "\n", "00007-gone"] {
        std::fs::write(&hint, text).unwrap();
        Run::diff(&source, &expected)
            .json()
            .exits(0)
            .stdout_has("v2.metadata.json");
    }
}

#[test]
fn initial_defaults_fill_columns_added_after_a_file_was_written() {
    // duckdb-iceberg's add_columns_with_defaults: 14 columns of every
    // primitive type added with an initial-default after the first file;
    // that file's row reads the defaults (was refused). Every snapshot
    // equals pyiceberg's reading of it.
    let (_, snaps) = peers()
        .into_iter()
        .find(|(n, _)| n == "add_columns_with_defaults")
        .unwrap();
    let meta = format!(
        "{}/metadata/00003-3f1801a5-7dfb-4072-b14a-39cd12f9279b.metadata.json",
        peer("add_columns_with_defaults")
    );
    assert_eq!(snaps.len(), 2);
    for (id, expected) in &snaps {
        Run::diff(format!("iceberg:{meta}@{id}"), expected.as_ref().unwrap()).exits(0);
    }
    // A default that differs is drift: the old file's two rows differ.
    let tmp = TempDir::new().unwrap();
    let table = tmp.path().join("t");
    common::copy_dir(
        &fixture("iceberg/peers/duckdb/add_columns_with_defaults"),
        &table,
    );
    let m = table.join("metadata/00003-3f1801a5-7dfb-4072-b14a-39cd12f9279b.metadata.json");
    let text = std::fs::read_to_string(&m).unwrap();
    let changed = text.replacen(
        r#""initial-default": "HELLO""#,
        r#""initial-default": "HELLo""#,
        1,
    );
    assert_ne!(changed, text);
    std::fs::write(&m, changed).unwrap();
    let out = Run::diff(
        format!("iceberg:{}", m.display()),
        snaps[1].1.as_ref().unwrap(),
    )
    .json()
    .exits(1);
    assert_eq!(out.report()["source_only_rows"], 2, "{}", out.report());
}

#[test]
fn large_strings_inside_maps_read_as_the_strings_the_table_declares() {
    // duckdb-iceberg's map_stats: map<string,string> whose files hold
    // large_string keys and values (pyarrow's choice); it was refused as
    // "not a widening". Each snapshot equals pyiceberg's rows.
    let (_, snaps) = peers().into_iter().find(|(n, _)| n == "map_stats").unwrap();
    let meta = format!(
        "{}/metadata/00002-0e059d4b-e5e8-41af-a763-76cbf3a3d0bc.metadata.json",
        peer("map_stats")
    );
    assert_eq!(snaps.len(), 2);
    for (id, expected) in &snaps {
        Run::diff(format!("iceberg:{meta}@{id}"), expected.as_ref().unwrap()).exits(0);
    }
    // The second snapshot holds a row the first does not: drift.
    Run::diff(
        format!("iceberg:{meta}@{}", snaps[0].0),
        snaps[1].1.as_ref().unwrap(),
    )
    .exits(1);
}
