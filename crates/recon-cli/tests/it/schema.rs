//! Schema preflight, alignment, type compatibility by value, conversions and
//! normalization rules, through the binary on tables generated per test.

use crate::common;

use std::path::{Path, PathBuf};
use std::sync::Arc;

use arrow::array::*;
use arrow::buffer::OffsetBuffer;
use arrow::datatypes::*;
use common::{fixture, recon, write_parquet, Run};

/// Writes a table of named columns to DIR/NAME.parquet.
fn table(dir: &Path, name: &str, cols: Vec<(&str, ArrayRef)>) -> PathBuf {
    let batch =
        RecordBatch::try_from_iter(cols.into_iter().map(|(n, a)| (n.to_string(), a))).unwrap();
    let p = dir.join(format!("{name}.parquet"));
    write_parquet(&p, &batch, 2);
    p
}

fn diff_code(s: &Path, t: &Path, extra: &[&str]) -> i32 {
    let out = Run::diff(s, t).args(extra).arg("-q").run();
    if out.code == 2 {
        eprintln!("{}", out.stderr);
    }
    out.code
}

/// Asserts that `a` and `b` (same values, different physical types) match,
/// and that changing one value of `b` (to `b_changed`) is found.
fn check_pair(name: &str, a: ArrayRef, b: ArrayRef, b_changed: ArrayRef) {
    let tmp = tempfile::tempdir().unwrap();
    let s = table(tmp.path(), "s", vec![("c", a)]);
    let t = table(tmp.path(), "t", vec![("c", b)]);
    let t2 = table(tmp.path(), "t2", vec![("c", b_changed)]);
    assert_eq!(diff_code(&s, &t, &[]), 0, "{name}: same values must match");
    assert_eq!(
        diff_code(&s, &t2, &[]),
        1,
        "{name}: a changed value must be found"
    );
}

fn arc<A: Array + 'static>(a: A) -> ArrayRef {
    Arc::new(a)
}

#[test]
fn integers_of_every_width_and_signedness() {
    check_pair(
        "int8/uint64",
        arc(Int8Array::from(vec![Some(1), None, Some(100)])),
        arc(UInt64Array::from(vec![Some(100), Some(1), None])),
        arc(UInt64Array::from(vec![Some(101), Some(1), None])),
    );
    check_pair(
        "int16/int64",
        arc(Int16Array::from(vec![-5, 7])),
        arc(Int64Array::from(vec![7, -5])),
        arc(Int64Array::from(vec![7, -6])),
    );
    check_pair(
        "uint32/int32",
        arc(UInt32Array::from(vec![5, 7])),
        arc(Int32Array::from(vec![7, 5])),
        arc(Int32Array::from(vec![7, 4])),
    );
}

fn dec128(v: Vec<Option<i128>>, p: u8, s: i8) -> ArrayRef {
    arc(Decimal128Array::from(v)
        .with_precision_and_scale(p, s)
        .unwrap())
}

#[test]
fn decimals_of_any_precision_and_scale() {
    check_pair(
        "decimal(10,2)/decimal(38,6)",
        dec128(vec![Some(150), None, Some(-1)], 10, 2),
        dec128(vec![Some(-10_000), Some(1_500_000), None], 38, 6),
        dec128(vec![Some(-10_000), Some(1_500_001), None], 38, 6),
    );
    check_pair(
        "decimal128/decimal256",
        dec128(vec![Some(150), Some(0)], 10, 2),
        arc(
            Decimal256Array::from(vec![i256::from_i128(0), i256::from_i128(15)])
                .with_precision_and_scale(50, 1)
                .unwrap(),
        ),
        arc(
            Decimal256Array::from(vec![i256::from_i128(0), i256::from_i128(16)])
                .with_precision_and_scale(50, 1)
                .unwrap(),
        ),
    );
}

#[test]
fn float32_against_float64_by_the_float64_value() {
    check_pair(
        "float32/float64",
        arc(Float32Array::from(vec![
            Some(1.5),
            Some(f32::NAN),
            Some(-0.0),
            None,
        ])),
        arc(Float64Array::from(vec![
            None,
            Some(0.0),
            Some(f64::NAN),
            Some(1.5),
        ])),
        arc(Float64Array::from(vec![
            None,
            Some(0.0),
            Some(f64::NAN),
            Some(1.25),
        ])),
    );
}

#[test]
fn timestamps_of_any_unit_and_zone_as_instants() {
    check_pair(
        "timestamp s/ns",
        arc(TimestampSecondArray::from(vec![1, 2])),
        arc(TimestampNanosecondArray::from(vec![
            2_000_000_000,
            1_000_000_000,
        ])),
        arc(TimestampNanosecondArray::from(vec![
            2_000_000_001,
            1_000_000_000,
        ])),
    );
    check_pair(
        "zoned UTC/+02:00",
        arc(TimestampMillisecondArray::from(vec![1000]).with_timezone("UTC")),
        arc(TimestampMicrosecondArray::from(vec![1_000_000]).with_timezone("+02:00")),
        arc(TimestampMicrosecondArray::from(vec![1_000_001]).with_timezone("+02:00")),
    );
}

#[test]
fn dates_strings_binaries_and_booleans() {
    check_pair(
        "date32/date64",
        arc(Date32Array::from(vec![1, 19000])),
        arc(Date64Array::from(vec![19000 * 86_400_000, 86_400_000])),
        arc(Date64Array::from(vec![19001 * 86_400_000, 86_400_000])),
    );
    let dict: DictionaryArray<Int32Type> = vec![Some("b"), None, Some("a")].into_iter().collect();
    check_pair(
        "utf8/dictionary",
        arc(StringArray::from(vec![Some("a"), Some("b"), None])),
        arc(dict),
        arc(LargeStringArray::from(vec![Some("a"), Some("B"), None])),
    );
    check_pair(
        "utf8view/largeutf8",
        arc(StringViewArray::from(vec![
            "a string longer than twelve",
            "x",
        ])),
        arc(LargeStringArray::from(vec![
            "x",
            "a string longer than twelve",
        ])),
        arc(LargeStringArray::from(vec![
            "x",
            "a string longer than twelve!",
        ])),
    );
    check_pair(
        "binary/largebinary",
        arc(BinaryArray::from(vec![&b"\x00"[..], b"ab"])),
        arc(LargeBinaryArray::from(vec![&b"ab"[..], b"\x00"])),
        arc(LargeBinaryArray::from(vec![&b"ab"[..], b"\x01"])),
    );
    check_pair(
        "bool",
        arc(BooleanArray::from(vec![Some(true), None])),
        arc(BooleanArray::from(vec![None, Some(true)])),
        arc(BooleanArray::from(vec![None, Some(false)])),
    );
}

#[test]
fn lists_large_lists_and_fixed_size_lists() {
    let list = ListArray::from_iter_primitive::<Int32Type, _, _>(vec![
        Some(vec![Some(1), Some(2)]),
        Some(vec![Some(3), None]),
    ]);
    let large = LargeListArray::from_iter_primitive::<Int64Type, _, _>(vec![
        Some(vec![Some(3), None]),
        Some(vec![Some(1), Some(2)]),
    ]);
    let fixed = FixedSizeListArray::from_iter_primitive::<Int32Type, _, _>(
        vec![Some(vec![Some(3), None]), Some(vec![Some(2), Some(1)])],
        2,
    );
    check_pair(
        "list/largelist/fixedsizelist",
        arc(list),
        arc(large),
        arc(fixed),
    );
}

fn kv_struct(a: Vec<i32>, b: Vec<&str>, b_first: bool) -> ArrayRef {
    let fa = (
        Arc::new(Field::new("a", DataType::Int32, true)),
        arc(Int32Array::from(a)),
    );
    let fb = (
        Arc::new(Field::new("b", DataType::Utf8, true)),
        arc(StringArray::from(b)),
    );
    arc(StructArray::from(if b_first {
        vec![fb, fa]
    } else {
        vec![fa, fb]
    }))
}

#[test]
fn structs_compare_field_by_field_by_name() {
    check_pair(
        "struct field order",
        kv_struct(vec![1, 2], vec!["x", "y"], false),
        kv_struct(vec![2, 1], vec!["y", "x"], true),
        kv_struct(vec![2, 1], vec!["y", "z"], true),
    );
}

fn map(keys: Vec<&str>, values: Vec<i64>, offsets: Vec<i32>) -> ArrayRef {
    let entries = StructArray::from(vec![
        (
            Arc::new(Field::new("keys", DataType::Utf8, false)),
            arc(StringArray::from(keys)),
        ),
        (
            Arc::new(Field::new("values", DataType::Int64, true)),
            arc(Int64Array::from(values)),
        ),
    ]);
    let field = Arc::new(Field::new("entries", entries.data_type().clone(), false));
    arc(MapArray::new(
        field,
        OffsetBuffer::new(offsets.into()),
        entries,
        None,
        false,
    ))
}

#[test]
fn maps_compare_as_unordered_sets_of_entries() {
    check_pair(
        "map entry order",
        map(vec!["a", "b", "c"], vec![1, 2, 3], vec![0, 2, 3]),
        map(vec!["c", "b", "a"], vec![3, 2, 1], vec![0, 1, 3]),
        map(vec!["c", "b", "a"], vec![3, 2, 9], vec![0, 1, 3]),
    );
}

fn assert_incompatible(a: ArrayRef, b: ArrayRef, needle: &str) {
    let tmp = tempfile::tempdir().unwrap();
    let s = table(tmp.path(), "s", vec![("col_a", a)]);
    let t = table(tmp.path(), "t", vec![("col_a", b)]);
    let out = Run::diff(&s, &t).exits(2);
    let err = out.one_line_error();
    assert!(
        err.contains("col_a") && err.contains(needle),
        "{err} lacks {needle}"
    );
    recon(["schema"])
        .arg(&s)
        .arg(&t)
        .exits(1)
        .stdout_has(needle);
}

#[test]
fn incompatible_pairs_are_refused_before_scanning() {
    assert_incompatible(
        arc(StringArray::from(vec!["1"])),
        arc(Int64Array::from(vec![1])),
        "--cast col_a=TYPE",
    );
    assert_incompatible(
        arc(Date32Array::from(vec![1])),
        arc(TimestampSecondArray::from(vec![86_400])),
        "Date32 in source but Timestamp",
    );
    assert_incompatible(
        arc(TimestampSecondArray::from(vec![1])),
        arc(TimestampSecondArray::from(vec![1]).with_timezone("UTC")),
        "--assume-tz",
    );
    assert_incompatible(
        arc(BooleanArray::from(vec![true])),
        arc(Int8Array::from(vec![1])),
        "Boolean in source but Int8",
    );
}

#[test]
fn cast_parses_the_text_side_and_names_a_bad_row() {
    let tmp = tempfile::tempdir().unwrap();
    let s = table(
        tmp.path(),
        "s",
        vec![("amount", arc(StringArray::from(vec!["1.50", "2.00", "3"])))],
    );
    let t = table(
        tmp.path(),
        "t",
        vec![(
            "amount",
            dec128(vec![Some(300), Some(150), Some(200)], 18, 2),
        )],
    );
    assert_eq!(diff_code(&s, &t, &["--cast", "amount=decimal(18,2)"]), 0);
    let bad = table(
        tmp.path(),
        "bad",
        vec![(
            "amount",
            arc(StringArray::from(vec!["1.50", "2.00", "n/a"])),
        )],
    );
    Run::diff(&bad, &t)
        .args(["--cast", "amount=decimal(18,2)"])
        .fails_with("row 2")
        .stderr_has("\"n/a\"")
        .stderr_has("bad.parquet");
}

#[test]
fn assume_tz_reads_the_naive_side_in_a_zone() {
    let tmp = tempfile::tempdir().unwrap();
    // 01:00 wall clock in +01:00 is 00:00 UTC.
    let s = table(
        tmp.path(),
        "s",
        vec![("ts", arc(TimestampSecondArray::from(vec![3600])))],
    );
    let t = table(
        tmp.path(),
        "t",
        vec![(
            "ts",
            arc(TimestampSecondArray::from(vec![0]).with_timezone("UTC")),
        )],
    );
    assert_eq!(diff_code(&s, &t, &["--assume-tz", "+01:00"]), 0);
    assert_eq!(diff_code(&s, &t, &["--assume-tz", "UTC"]), 1);
    assert_eq!(
        diff_code(&s, &t, &["--assume-tz", "Europe/Paris"]),
        0,
        "Paris is +01:00 in January 1970"
    );
}

#[test]
fn alignment_options() {
    let tmp = tempfile::tempdir().unwrap();
    let ints = |v: Vec<i64>| arc(Int64Array::from(v));
    let s = table(
        tmp.path(),
        "s",
        vec![
            ("id", ints(vec![1, 2])),
            ("amount", ints(vec![10, 20])),
            ("load_ts", ints(vec![5, 6])),
        ],
    );
    let renamed = table(
        tmp.path(),
        "renamed",
        vec![
            ("ID", ints(vec![2, 1])),
            ("amt", ints(vec![20, 10])),
            ("load_ts", ints(vec![7, 8])),
        ],
    );
    // By name, the renamed columns do not pair: exit 2 naming them.
    assert_eq!(diff_code(&s, &renamed, &[]), 2);
    assert_eq!(
        diff_code(
            &s,
            &renamed,
            &[
                "--ignore-case-names",
                "--map",
                "amount=amt",
                "--exclude",
                "load_ts"
            ]
        ),
        0
    );
    // load_ts differs; it is compared unless excluded.
    assert_eq!(
        diff_code(
            &s,
            &renamed,
            &["--ignore-case-names", "--map", "amount=amt"]
        ),
        1
    );
    assert_eq!(
        diff_code(
            &s,
            &renamed,
            &[
                "--ignore-case-names",
                "--columns",
                "id",
                "--ignore-extra-columns"
            ]
        ),
        0
    );
    // By position: same count needed, names ignored.
    let pos = table(
        tmp.path(),
        "pos",
        vec![
            ("x", ints(vec![2, 1])),
            ("y", ints(vec![20, 10])),
            ("z", ints(vec![6, 5])),
        ],
    );
    assert_eq!(diff_code(&s, &pos, &["--by-position"]), 0);
    let short = table(tmp.path(), "short", vec![("x", ints(vec![2, 1]))]);
    Run::diff(&s, &short)
        .arg("--by-position")
        .fails_with("same column count");
    // An extra column is an error unless excluded or ignored.
    let extra = table(
        tmp.path(),
        "extra",
        vec![
            ("id", ints(vec![1, 2])),
            ("amount", ints(vec![10, 20])),
            ("load_ts", ints(vec![5, 6])),
            ("new_col", ints(vec![0, 0])),
        ],
    );
    assert_eq!(diff_code(&s, &extra, &[]), 2);
    assert_eq!(diff_code(&s, &extra, &["--ignore-extra-columns"]), 0);
    assert_eq!(diff_code(&s, &extra, &["--exclude", "new_col"]), 0);
}

#[test]
fn excluded_columns_stay_in_the_evidence() {
    let tmp = tempfile::tempdir().unwrap();
    let s = table(
        tmp.path(),
        "s",
        vec![
            ("k", arc(StringArray::from(vec!["a", "b"]))),
            ("ts", arc(Int64Array::from(vec![1, 2]))),
        ],
    );
    let t = table(
        tmp.path(),
        "t",
        vec![
            ("k", arc(StringArray::from(vec!["a", "c"]))),
            ("ts", arc(Int64Array::from(vec![9, 9]))),
        ],
    );
    let out = tmp.path().join("out");
    Run::diff(&s, &t)
        .args(["--exclude", "ts", "-q"])
        .output_dir(&out)
        .exits(1);
    let rows = common::read_parquet(&out.join("source_only.parquet"));
    assert_eq!(rows[0].num_columns(), 2, "excluded column kept in evidence");
    assert_eq!(rows[0].num_rows(), 1);
}

#[test]
fn normalization_rules() {
    let tmp = tempfile::tempdir().unwrap();
    let strs = |v: Vec<Option<&str>>| arc(StringArray::from(v));
    let s = table(
        tmp.path(),
        "s",
        vec![
            ("name", strs(vec![Some("Alice  "), Some("BOB"), Some("")])),
            ("amount", arc(Float64Array::from(vec![1.004, 2.0, 3.0]))),
            (
                "ts",
                arc(TimestampMicrosecondArray::from(vec![1_000_999, 0, 5])),
            ),
        ],
    );
    let t = table(
        tmp.path(),
        "t",
        vec![
            ("name", strs(vec![Some("alice"), Some("bob"), None])),
            ("amount", arc(Float64Array::from(vec![1.0, 2.0, 3.0]))),
            (
                "ts",
                arc(TimestampMicrosecondArray::from(vec![1_000_000, 0, 0])),
            ),
        ],
    );
    assert_eq!(diff_code(&s, &t, &[]), 1);
    let all = [
        "--trim",
        "name",
        "--case-insensitive",
        "name",
        "--empty-as-null",
        "*",
        "--round",
        "amount=2",
        "--timestamp-precision",
        "ts=ms",
    ];
    assert_eq!(diff_code(&s, &t, &all), 0);
    // Each rule is needed: drop any one and drift comes back.
    for skip in [0, 2, 4, 6, 8] {
        let mut args: Vec<&str> = all.to_vec();
        args.drain(skip..skip + 2);
        assert_eq!(diff_code(&s, &t, &args), 1, "without {}", all[skip]);
    }
    // The same rules from a TOML file, and the report names them.
    let rules = tmp.path().join("orders.toml");
    std::fs::write(
        &rules,
        "trim = [\"name\"]\ncase_insensitive = [\"name\"]\nempty_as_null = [\"*\"]\n[round]\namount = 2\n[timestamp_precision]\nts = \"ms\"\n",
    )
    .unwrap();
    let out = Run::diff(&s, &t).arg("--rules").arg(&rules).json().exits(0);
    let r = out.report();
    let norm = r["columns"][1]["normalize"][0].as_str().unwrap();
    assert!(norm.contains("round to 2 places"), "{norm}");
    // A rule on a column it cannot apply to is an error.
    recon(["schema"])
        .arg(&s)
        .arg(&t)
        .args(["--round", "name=2"])
        .exits(1);
    // A bad rules file is a one-line error naming it.
    std::fs::write(&rules, "bogus_key = 1\n").unwrap();
    Run::diff(&s, &t)
        .arg("--rules")
        .arg(&rules)
        .fails_with("orders.toml");
}

#[test]
fn report_names_the_drifting_columns() {
    let tmp = tempfile::tempdir().unwrap();
    let ints = |v: Vec<i64>| arc(Int64Array::from(v));
    let s = table(
        tmp.path(),
        "s",
        vec![
            ("id", ints(vec![1, 2, 3])),
            ("amount", ints(vec![10, 20, 30])),
            ("qty", ints(vec![1, 1, 2])),
        ],
    );
    let t = table(
        tmp.path(),
        "t",
        vec![
            ("id", ints(vec![1, 2, 3])),
            ("amount", ints(vec![10, 21, 30])),
            ("qty", ints(vec![1, 1, 2])),
        ],
    );
    Run::diff(&s, &t)
        .exits(1)
        .stdout_has("columns_differing       amount; the other 2 columns hold the same values");
    // Values swapped between rows: every column holds the same values.
    let swapped = table(
        tmp.path(),
        "sw",
        vec![
            ("id", ints(vec![1, 2, 3])),
            ("amount", ints(vec![20, 10, 30])),
            ("qty", ints(vec![1, 1, 2])),
        ],
    );
    Run::diff(&s, &swapped)
        .exits(1)
        .stdout_has("none: every column holds the same values");
}

#[test]
fn schema_reads_no_data_pages() {
    // Zero every byte between the magic and the footer: the metadata survives,
    // the data does not. `schema` must still answer; `diff` must fail cleanly.
    let tmp = tempfile::tempdir().unwrap();
    let n = 200_000;
    let s = table(
        tmp.path(),
        "s",
        vec![("id", arc(Int64Array::from((0..n).collect::<Vec<i64>>())))],
    );
    let mut bytes = std::fs::read(&s).unwrap();
    let len = bytes.len();
    let footer = u32::from_le_bytes(bytes[len - 8..len - 4].try_into().unwrap()) as usize;
    for b in &mut bytes[4..len - 8 - footer] {
        *b = 0;
    }
    let gutted = tmp.path().join("gutted.parquet");
    std::fs::write(&gutted, &bytes).unwrap();
    recon(["schema"])
        .arg(&gutted)
        .arg(&s)
        .exits(0)
        .stdout_has("compatible");
    let out = tmp.path().join("out");
    Run::diff(&gutted, &s)
        .output_dir(&out)
        .fails_with("gutted.parquet");
    assert!(
        !out.exists(),
        "a failed run left the output directory it created"
    );
}

#[test]
fn spark_and_warehouse_extracts_reconcile_with_a_rules_file() {
    let fx = |p: &str| fixture("migration").join(p);
    recon(["schema"])
        .arg(fx("spark.parquet"))
        .arg(fx("warehouse.parquet"))
        .exits(1)
        .stdout_has("--ignore-case-names");
    Run::diff(fx("spark.parquet"), fx("warehouse.parquet"))
        .arg("--rules")
        .arg(fx("orders.toml"))
        .exits(0);
    // Without trimming the CHAR padding, the customer column drifts.
    Run::diff(fx("spark.parquet"), fx("warehouse.parquet"))
        .args(["--ignore-case-names", "--exclude", "load_ts"])
        .exits(1)
        .stdout_has("columns_differing       customer; the other 3 columns hold the same values");
}
