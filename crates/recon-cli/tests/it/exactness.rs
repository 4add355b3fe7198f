//! Regression tests for paths that once turned drift into a match or misread
//! a file without a word: INT96 timestamps that wrapped, casts that
//! truncated, CSV files with CR-only line ends read as empty, blank lines
//! before a header, and multi-line messages. Each test is named after the
//! defect it pins.

use crate::common;

use std::fs;
use std::path::Path;
use std::sync::Arc;

use arrow::array::{
    ArrayRef, Date32Array, Decimal128Array, Float64Array, Int64Array, RecordBatch, StringArray,
    TimestampMicrosecondArray,
};
use common::{fixture, recon, write_parquet, Outcome, Run};
use tempfile::TempDir;

fn int96(name: &str) -> String {
    fixture(&format!("int96/{name}")).display().to_string()
}

fn one_column(path: &Path, name: &str, array: ArrayRef) {
    let batch = RecordBatch::try_from_iter([(name, array)]).unwrap();
    write_parquet(path, &batch, 1000);
}

/// One line on stderr, naming what it must name.
fn assert_one_line(run: &Outcome, needles: &[&str]) {
    let text = run.one_line_error();
    for n in needles {
        assert!(text.contains(n), "missing {n:?} in {text}");
    }
}

#[test]
fn int96_timestamps_outside_the_nanosecond_range_no_longer_wrap() {
    // Spark's placeholders (0001-01-01, 9999-12-31), both edges of the
    // 64-bit nanosecond range and year 290000 (which Spark itself writes with
    // wrapping arithmetic) read exactly: they match the same values stored
    // as modern microsecond timestamps.
    Run::diff(int96("spark_int96.parquet"), int96("micros.parquet"))
        .exits(0)
        .stdout_has("exact_match             true");
    // One value a second later is drift, shown with its real date.
    Run::diff(
        int96("spark_int96.parquet"),
        int96("micros_changed.parquet"),
    )
    .exits(1)
    .stdout_has("ts=9999-12-31T00:00:00\n");
}

#[test]
fn int96_wrapped_values_are_not_a_false_match_against_a_nanosecond_target() {
    // The target holds what a wrapping INT96 reader produced: before the fix
    // the two sides "matched". Six values lie outside the nanosecond range.
    let out = Run::diff(int96("spark_int96.parquet"), int96("wrapped_ns.parquet"))
        .json()
        .exits(1);
    let report = out.report();
    assert_eq!(report["source_only_rows"], 6);
    assert_eq!(report["target_only_rows"], 6);
}

#[test]
fn int96_sub_microsecond_digits_are_refused_unless_read_in_nanoseconds() {
    let out = Run::diff(int96("impala_ns_int96.parquet"), int96("nanos.parquet")).exits(2);
    assert_one_line(
        &out,
        &[
            "impala_ns_int96.parquet",
            "row 0",
            "column 'ts'",
            "2024-01-01T20:34:56.123456789",
            "--int96-unit ns",
        ],
    );
    Run::diff(int96("impala_ns_int96.parquet"), int96("nanos.parquet"))
        .args(["--int96-unit", "ns"])
        .exits(0);
}

#[test]
fn int96_in_nanoseconds_refuses_dates_the_unit_cannot_hold() {
    let out = Run::diff(int96("spark_int96.parquet"), int96("micros.parquet"))
        .args(["--int96-unit", "ns"])
        .exits(2);
    assert_one_line(
        &out,
        &[
            "spark_int96.parquet",
            "row 0",
            "column 'ts'",
            "0001-01-01T00:00:00",
            "out of range",
        ],
    );
}

/// A DATE column and a TIMESTAMP column holding the same days, except one
/// value with a time of day (01:30).
fn date_vs_timestamp(dir: &Path) -> (String, String) {
    let (s, t) = (dir.join("dates.parquet"), dir.join("stamps.parquet"));
    one_column(
        &s,
        "l_shipdate",
        Arc::new(Date32Array::from(vec![Some(0), Some(1), None])),
    );
    let day = 86_400_000_000i64;
    one_column(
        &t,
        "l_shipdate",
        Arc::new(TimestampMicrosecondArray::from(vec![
            Some(0),
            Some(day + 5_400_000_000),
            None,
        ])),
    );
    (s.display().to_string(), t.display().to_string())
}

#[test]
fn cast_timestamp_to_date_no_longer_truncates_a_time_of_day() {
    let dir = TempDir::new().unwrap();
    let (s, t) = date_vs_timestamp(dir.path());
    // Casting the timestamp down would cut 01:30 off and report a match.
    let out = Run::diff(&s, &t)
        .args(["--cast", "l_shipdate=date"])
        .exits(2);
    assert_one_line(
        &out,
        &[
            "stamps.parquet",
            "row 1",
            "column 'l_shipdate'",
            "1970-01-02T01:30:00",
        ],
    );
    // The lossless direction shows the drift.
    Run::diff(&s, &t)
        .args(["--cast", "l_shipdate=timestamp(us)"])
        .exits(1);
    // With --max-parse-errors the refused value is counted as drift.
    let out = Run::diff(&s, &t)
        .args(["--cast", "l_shipdate=date", "--max-parse-errors", "1"])
        .json()
        .exits(1);
    let report = out.report();
    assert_eq!(report["parse_errors"]["target"], 1, "{report}");
    assert_eq!(report["exact_match"], false);
}

#[test]
fn incompatibility_hint_names_the_lossless_direction() {
    let dir = TempDir::new().unwrap();
    let (s, t) = date_vs_timestamp(dir.path());
    let out = Run::diff(&s, &t).exits(2);
    assert_one_line(
        &out,
        &[
            "cast the source's Date32 up with --cast l_shipdate=timestamp(us)",
            "would need every time of day to be midnight",
        ],
    );
}

#[test]
fn cast_float_to_integer_no_longer_truncates() {
    let dir = TempDir::new().unwrap();
    let (s, t) = (dir.path().join("f.parquet"), dir.path().join("i.parquet"));
    one_column(&s, "amt", Arc::new(Float64Array::from(vec![1.9, 2.0])));
    one_column(&t, "amt", Arc::new(Int64Array::from(vec![1, 2])));
    let out = Run::diff(&s, &t).args(["--cast", "amt=int64"]).exits(2);
    assert_one_line(&out, &["f.parquet", "row 0", "\"1.9\"", "Int64"]);
    // Whole floats convert exactly.
    one_column(&s, "amt", Arc::new(Float64Array::from(vec![1.0, 2.0])));
    Run::diff(&s, &t).args(["--cast", "amt=int64"]).exits(0);
}

#[test]
fn cast_decimal_to_a_smaller_scale_no_longer_rounds() {
    let dir = TempDir::new().unwrap();
    let (s, t) = (
        dir.path().join("wide.parquet"),
        dir.path().join("narrow.parquet"),
    );
    let wide = Decimal128Array::from(vec![1_234_567i128, 1_500_000])
        .with_precision_and_scale(38, 6)
        .unwrap();
    let narrow = Decimal128Array::from(vec![123i128, 150])
        .with_precision_and_scale(18, 2)
        .unwrap();
    one_column(&s, "amount", Arc::new(wide));
    one_column(&t, "amount", Arc::new(narrow));
    // By value the two differ (1.234567 vs 1.23): plain comparison says so.
    Run::diff(&s, &t).exits(1);
    // Casting both to decimal(18,2) would round 1.234567 to 1.23: refused.
    let out = Run::diff(&s, &t)
        .args(["--cast", "amount=decimal(18,2)"])
        .exits(2);
    assert_one_line(&out, &["wide.parquet", "row 0", "1.234567"]);
    // Rounding stays available by name.
    Run::diff(&s, &t).args(["--round", "amount=2"]).exits(0);
}

#[test]
fn cast_star_converts_every_pair_it_makes_comparable() {
    let dir = TempDir::new().unwrap();
    let (s, t) = (dir.path().join("s.parquet"), dir.path().join("t.parquet"));
    let dates = || -> ArrayRef { Arc::new(Date32Array::from(vec![0, 1])) };
    let stamps =
        || -> ArrayRef { Arc::new(TimestampMicrosecondArray::from(vec![0, 86_400_000_000])) };
    let name = || -> ArrayRef { Arc::new(StringArray::from(vec!["a", "b"])) };
    let sb = RecordBatch::try_from_iter([
        ("ship", dates()),
        ("commit", dates()),
        ("receipt", dates()),
        ("name", name()),
    ])
    .unwrap();
    let tb = RecordBatch::try_from_iter([
        ("ship", stamps()),
        ("commit", stamps()),
        ("receipt", stamps()),
        ("name", name()),
    ])
    .unwrap();
    write_parquet(&s, &sb, 10);
    write_parquet(&t, &tb, 10);
    Run::diff(&s, &t)
        .args(["--cast", "*=timestamp(us)"])
        .exits(0);
    // The string column is left alone (it was comparable already).
    let run = recon(["schema"])
        .arg(&s)
        .arg(&t)
        .args(["--cast", "*=timestamp(us)"])
        .exits(0);
    assert_eq!(
        run.stdout.matches("source cast to Timestamp(µs)").count(),
        3
    );
}

#[test]
fn assume_tz_refuses_a_local_time_that_does_not_exist() {
    let dir = TempDir::new().unwrap();
    let (s, t) = (
        dir.path().join("naive.parquet"),
        dir.path().join("utc.parquet"),
    );
    // 2024-03-31 02:30 does not exist in Paris (clocks jump from 02:00 to 03:00).
    let naive = 1_711_852_200_000_000i64;
    one_column(
        &s,
        "ts",
        Arc::new(TimestampMicrosecondArray::from(vec![naive])),
    );
    one_column(
        &t,
        "ts",
        Arc::new(TimestampMicrosecondArray::from(vec![naive]).with_timezone("UTC")),
    );
    let out = Run::diff(&s, &t)
        .args(["--assume-tz", "Europe/Paris"])
        .exits(2);
    assert_one_line(&out, &["naive.parquet", "row 0", "column 'ts'"]);
}

#[test]
fn csv_with_cr_only_line_ends_is_refused_not_read_as_an_empty_table() {
    let dir = TempDir::new().unwrap();
    let (s, t) = (dir.path().join("a.csv"), dir.path().join("b.csv"));
    fs::write(&s, "one\rtwo\rthree\r").unwrap();
    fs::write(&t, "one\rtwo\rfour\r").unwrap();
    let out = Run::diff(&s, &t).exits(2);
    assert_one_line(&out, &["a.csv", "bare CR"]);
    // CRLF files are read as before.
    fs::write(&s, "one\r\ntwo\r\n").unwrap();
    fs::write(&t, "one\r\ntwo\r\n").unwrap();
    Run::diff(&s, &t).exits(0);
}

#[test]
fn blank_lines_before_the_header_no_longer_make_a_column_named_empty() {
    let dir = TempDir::new().unwrap();
    let (s, t) = (dir.path().join("a.csv"), dir.path().join("b.csv"));
    fs::write(&s, "\n  \r\nid,name\n1,x\n2,y\n").unwrap();
    fs::write(&t, "id,name\n2,y\n1,x\n").unwrap();
    Run::diff(&s, &t)
        .exits(0)
        .stdout_has("source_row_count        2");
    // Line numbers in errors still count the skipped lines.
    fs::write(&s, "\n\nid,name\n1,x\n2\n").unwrap();
    let out = Run::diff(&s, &t).exits(2);
    assert_one_line(&out, &["a.csv", "line 5"]);
}

#[test]
fn messages_escape_newlines_and_tabs_from_data() {
    let dir = TempDir::new().unwrap();
    let (s, t) = (dir.path().join("a.csv"), dir.path().join("b.csv"));
    fs::write(&s, "\"multi\nline\",\"tab\tbed\"\n1,2\n").unwrap();
    fs::write(&t, "other,cols\n1,2\n").unwrap();
    let out = Run::diff(&s, &t).exits(2);
    assert_one_line(&out, &["multi\\nline", "tab\\tbed"]);
}
