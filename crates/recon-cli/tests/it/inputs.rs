//! Input formats end to end: CSV (plain, gzip, zstd), TSV, NDJSON, Arrow IPC
//! file and stream, directories, globs and Hive partitions against Parquet,
//! and every kind of bad input.

use crate::common;

use std::fs::{self, File};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use arrow::array::{
    Array, ArrayRef, BooleanArray, Date32Array, Decimal128Array, Int32Array, RecordBatch,
    StringArray, TimestampMicrosecondArray,
};
use arrow::datatypes::{DataType, TimeUnit};
use common::{read_parquet, recon, write_parquet, Run};
use tempfile::TempDir;

/// One order row: name, qty, amount (cents), ts (µs since epoch), day, flag, region.
#[derive(Clone)]
struct Order {
    name: Option<String>,
    qty: Option<i32>,
    cents: Option<i128>,
    ts: Option<i64>,
    day: Option<i32>,
    flag: Option<bool>,
    region: Option<&'static str>,
}

/// Rows with NULLs, empty strings, commas, quotes and newlines in text,
/// negative decimals and duplicates.
fn orders(n: usize) -> Vec<Order> {
    (0..n)
        .map(|i| Order {
            name: match i % 7 {
                0 => None,
                1 => Some(String::new()),
                2 => Some(format!("cust, \"{i}\"")),
                3 => Some(format!("multi\nline {i}")),
                4 => Some("dup".into()),
                _ => Some(format!("c{i}")),
            },
            qty: (i % 11 != 0).then_some((i % 5) as i32),
            cents: (i % 13 != 0).then_some(i as i128 * 101 - 5000),
            ts: (i % 17 != 0).then_some(1_700_000_000_000_000 + i as i64 * 1_000_123),
            day: (i % 19 != 0).then_some(19_000 + (i % 400) as i32),
            flag: (i % 23 != 0).then_some(i % 2 == 0),
            region: match i % 3 {
                0 => Some("EU"),
                1 => Some("US"),
                _ => None,
            },
        })
        .collect()
}

fn batch(rows: &[Order], with_region: bool) -> RecordBatch {
    let mut cols: Vec<(&str, ArrayRef)> = vec![
        (
            "name",
            Arc::new(StringArray::from_iter(rows.iter().map(|r| r.name.clone()))),
        ),
        (
            "qty",
            Arc::new(Int32Array::from_iter(rows.iter().map(|r| r.qty))),
        ),
        (
            "amount",
            Arc::new(
                Decimal128Array::from_iter(rows.iter().map(|r| r.cents))
                    .with_precision_and_scale(18, 2)
                    .unwrap(),
            ),
        ),
        (
            "ts",
            Arc::new(
                TimestampMicrosecondArray::from_iter(rows.iter().map(|r| r.ts))
                    .with_timezone("UTC"),
            ),
        ),
        (
            "day",
            Arc::new(Date32Array::from_iter(rows.iter().map(|r| r.day))),
        ),
        (
            "flag",
            Arc::new(BooleanArray::from_iter(rows.iter().map(|r| r.flag))),
        ),
    ];
    if with_region {
        cols.push((
            "region",
            Arc::new(StringArray::from_iter(rows.iter().map(|r| r.region))),
        ));
    }
    RecordBatch::try_from_iter(cols).unwrap()
}

fn quote(s: &str) -> String {
    format!("\"{}\"", s.replace('"', "\"\""))
}

fn decimal_text(cents: i128) -> String {
    let sign = if cents < 0 { "-" } else { "" };
    format!("{sign}{}.{:02}", cents.abs() / 100, cents.abs() % 100)
}

fn ts_text(us: i64) -> String {
    let dt = chrono::DateTime::from_timestamp_micros(us).unwrap();
    dt.format("%Y-%m-%d %H:%M:%S%.6f").to_string()
}

fn day_text(d: i32) -> String {
    (chrono::NaiveDate::from_ymd_opt(1970, 1, 1).unwrap() + chrono::Duration::days(d as i64))
        .format("%Y-%m-%d")
        .to_string()
}

/// CSV text of `rows` under recon's default NULL policy: NULL is an empty
/// unquoted field, '' is `""`.
fn csv_text(rows: &[Order], with_region: bool, delim: char) -> String {
    let mut out = String::from(if with_region {
        "name,qty,amount,ts,day,flag,region\n"
    } else {
        "name,qty,amount,ts,day,flag\n"
    })
    .replace(',', &delim.to_string());
    for r in rows {
        let mut f: Vec<String> = vec![
            r.name.as_deref().map(quote).unwrap_or_default(),
            r.qty.map(|v| v.to_string()).unwrap_or_default(),
            r.cents.map(decimal_text).unwrap_or_default(),
            r.ts.map(ts_text).unwrap_or_default(),
            r.day.map(day_text).unwrap_or_default(),
            r.flag.map(|v| v.to_string()).unwrap_or_default(),
        ];
        if with_region {
            f.push(r.region.map(str::to_string).unwrap_or_default());
        }
        out.push_str(&f.join(&delim.to_string()));
        out.push('\n');
    }
    out
}

fn json_text(rows: &[Order]) -> String {
    let mut out = String::new();
    for r in rows {
        let v = serde_json::json!({
            "name": r.name,
            "qty": r.qty,
            "amount": r.cents.map(decimal_text).map(|s| serde_json::Value::Number(s.parse().unwrap())),
            "ts": r.ts.map(ts_text),
            "day": r.day.map(day_text),
            "flag": r.flag,
        });
        out.push_str(&v.to_string());
        out.push('\n');
    }
    out
}

fn gzip(path: &Path, text: &str) {
    let mut e = flate2::write::GzEncoder::new(File::create(path).unwrap(), Default::default());
    e.write_all(text.as_bytes()).unwrap();
    e.finish().unwrap();
}

fn zstd_file(path: &Path, text: &str) {
    fs::write(path, zstd::encode_all(text.as_bytes(), 3).unwrap()).unwrap();
}

/// Writes the rows as a Hive-partitioned directory by region (files hold no region column).
fn hive(dir: &Path, rows: &[Order]) {
    for (value, pick) in [
        ("EU", Some("EU")),
        ("US", Some("US")),
        ("__HIVE_DEFAULT_PARTITION__", None),
    ] {
        let part: Vec<Order> = rows.iter().filter(|r| r.region == pick).cloned().collect();
        let d = dir.join(format!("region={value}"));
        fs::create_dir_all(&d).unwrap();
        write_parquet(&d.join("part-0000.parquet"), &batch(&part, false), 50);
    }
    fs::write(dir.join("_SUCCESS"), "").unwrap();
}

#[test]
fn csv_against_parquet_matches_and_finds_a_changed_decimal() {
    let tmp = TempDir::new().unwrap();
    let rows = orders(500);
    let pq = tmp.path().join("target.parquet");
    write_parquet(&pq, &batch(&rows, false), 64);
    let csv = tmp.path().join("extract.csv");
    fs::write(&csv, csv_text(&rows, false, ',')).unwrap();
    Run::diff(&csv, &pq).exits(0);

    // One changed decimal: drift, and the evidence row is typed like the Parquet side.
    let mut changed = rows.clone();
    changed[10].cents = Some(changed[10].cents.unwrap() + 1);
    fs::write(&csv, csv_text(&changed, false, ',')).unwrap();
    let out = tmp.path().join("out");
    let run = Run::diff(&csv, &pq).output_dir(&out).exits(1);
    run.stdout_has("columns_differing       amount;");
    let r = run.report();
    assert_eq!(r["source_only_rows"], 1);
    assert_eq!(r["target_only_rows"], 1);
    assert_eq!(r["inputs"]["source"]["format"], "csv");
    let ev = read_parquet(&out.join("source_only.parquet"));
    let b = &ev[0];
    assert_eq!(b.num_rows(), 1);
    assert_eq!(
        b.schema().field_with_name("amount").unwrap().data_type(),
        &DataType::Decimal128(18, 2)
    );
    assert_eq!(
        b.schema().field_with_name("ts").unwrap().data_type(),
        &DataType::Timestamp(TimeUnit::Microsecond, Some("UTC".into()))
    );
    let amount = b.column_by_name("amount").unwrap();
    let amount = amount.as_any().downcast_ref::<Decimal128Array>().unwrap();
    assert_eq!(amount.value(0), changed[10].cents.unwrap());
    let tgt = read_parquet(&out.join("target_only.parquet"));
    let amount = tgt[0].column_by_name("amount").unwrap();
    let amount = amount.as_any().downcast_ref::<Decimal128Array>().unwrap();
    assert_eq!(amount.value(0), rows[10].cents.unwrap());
}

#[test]
fn compressed_csv_against_hive_partitioned_lake_gives_the_parquet_verdict() {
    let tmp = TempDir::new().unwrap();
    let rows = orders(900);
    let lake = tmp.path().join("lake/orders");
    hive(&lake, &rows);
    let pq = tmp.path().join("source.parquet");
    write_parquet(&pq, &batch(&rows, true), 100);
    let text = csv_text(&rows, true, ',');
    let gz = tmp.path().join("extract.csv.gz");
    gzip(&gz, &text);
    let zst = tmp.path().join("extract.csv.zst");
    zstd_file(&zst, &text);

    Run::diff(&pq, &lake).exits(0);
    Run::diff(&gz, &lake).exits(0);
    Run::diff(&zst, &lake).exits(0);

    // Drop one US row from the extract: every reader gives the same drift.
    let mut fewer = rows.clone();
    let gone = fewer.iter().position(|r| r.region == Some("US")).unwrap();
    fewer.remove(gone);
    gzip(&gz, &csv_text(&fewer, true, ','));
    let pq2 = tmp.path().join("fewer.parquet");
    write_parquet(&pq2, &batch(&fewer, true), 100);
    let mut reports = Vec::new();
    for src in [&gz, &pq2] {
        let out = tmp.path().join(format!("out-{}", reports.len()));
        let run = Run::diff(src, &lake).output_dir(&out).exits(1);
        let r = run.report();
        reports.push((
            r["source_only_rows"].clone(),
            r["target_only_rows"].clone(),
            r["samples"].clone(),
        ));
        let ev = read_parquet(&out.join("target_only.parquet"));
        let region = ev[0].column_by_name("region").unwrap();
        let region = region.as_any().downcast_ref::<StringArray>().unwrap();
        assert_eq!(region.value(0), "US");
    }
    assert_eq!(reports[0], reports[1]);
    assert_eq!(reports[0].1, 1);
}

#[test]
fn glob_patterns_and_directories_of_csv_files() {
    let tmp = TempDir::new().unwrap();
    let rows = orders(300);
    let pq = tmp.path().join("all.parquet");
    write_parquet(&pq, &batch(&rows, true), 1000);
    let parts = tmp.path().join("parts");
    fs::create_dir(&parts).unwrap();
    for (i, chunk) in rows.chunks(100).enumerate() {
        fs::write(
            parts.join(format!("part-{i}.csv")),
            csv_text(chunk, true, ','),
        )
        .unwrap();
    }
    Run::diff(&parts, &pq).exits(0);
    let pattern = format!("{}/part-*.csv", parts.display());
    Run::diff(&pattern, &pq).exits(0);
    // A glob that leaves a file out is drift, not a match.
    let two = format!("{}/part-[01].csv", parts.display());
    Run::diff(&two, &pq).exits(1);
    let none = format!("{}/nothing-*.csv", parts.display());
    Run::diff(&none, &pq).fails_with("glob pattern matches no files");
}

#[test]
fn arrow_ipc_file_and_stream() {
    let tmp = TempDir::new().unwrap();
    let rows = orders(400);
    let pq = tmp.path().join("t.parquet");
    write_parquet(&pq, &batch(&rows, true), 128);
    let file = tmp.path().join("t.arrow");
    let stream = tmp.path().join("t.arrows");
    {
        let b = batch(&rows, true);
        let mut w =
            arrow::ipc::writer::FileWriter::try_new(File::create(&file).unwrap(), &b.schema())
                .unwrap();
        let mut s =
            arrow::ipc::writer::StreamWriter::try_new(File::create(&stream).unwrap(), &b.schema())
                .unwrap();
        for start in (0..400).step_by(90) {
            let part = b.slice(start, 90.min(400 - start));
            w.write(&part).unwrap();
            s.write(&part).unwrap();
        }
        w.finish().unwrap();
        s.finish().unwrap();
    }
    Run::diff(&file, &pq).exits(0);
    Run::diff(&stream, &pq)
        .arg("--source-format")
        .arg("ipc")
        .exits(0);
    // Change one row in the Parquet side: the IPC side's evidence row is fetched back.
    let mut changed = rows.clone();
    changed[300].qty = Some(99);
    write_parquet(&pq, &batch(&changed, true), 128);
    for src in [&file, &stream] {
        let out = tmp.path().join(format!(
            "out-{}",
            src.extension().unwrap().to_string_lossy()
        ));
        Run::diff(src, &pq)
            .arg("--source-format")
            .arg("ipc")
            .output_dir(&out)
            .exits(1);
        let ev = read_parquet(&out.join("source_only.parquet"));
        let qty = ev[0].column_by_name("qty").unwrap();
        let qty = qty.as_any().downcast_ref::<Int32Array>().unwrap();
        assert_eq!(qty.len(), 1);
        assert_eq!(qty.value(0), rows[300].qty.unwrap());
    }
}

#[test]
fn ndjson_against_parquet() {
    let tmp = TempDir::new().unwrap();
    // More lines than the 1000 recon reads to learn the keys.
    let rows = orders(1200);
    let pq = tmp.path().join("t.parquet");
    write_parquet(&pq, &batch(&rows, false), 64);
    let js = tmp.path().join("t.jsonl");
    fs::write(&js, json_text(&rows)).unwrap();
    Run::diff(&js, &pq).exits(0);
    let mut changed = rows.clone();
    changed[5].flag = changed[5].flag.map(|f| !f);
    fs::write(&js, json_text(&changed)).unwrap();
    let out = tmp.path().join("out");
    Run::diff(&js, &pq)
        .output_dir(&out)
        .exits(1)
        .stdout_has("columns_differing       flag;");
    // An unknown key is an error, never silently dropped.
    let gz = tmp.path().join("bad.ndjson.gz");
    let mut text = json_text(&rows);
    text.push_str("{\"name\":\"x\",\"surprise\":1}\n");
    gzip(&gz, &text);
    Run::diff(&gz, &pq).fails_with("bad.ndjson.gz: line 1201");
}

/// CSV and Parquet holding `values` in one text column `v` (None = NULL).
fn one_column(tmp: &Path, csv: &str, values: &[Option<&str>]) -> (PathBuf, PathBuf) {
    let c = tmp.join("v.csv");
    fs::write(&c, csv).unwrap();
    let p = tmp.join("v.parquet");
    let arr: ArrayRef = Arc::new(StringArray::from(values.to_vec()));
    write_parquet(&p, &RecordBatch::try_from_iter([("v", arr)]).unwrap(), 10);
    (c, p)
}

#[test]
fn csv_null_policy_unquoted_empty_is_null_quoted_empty_is_empty_string() {
    let tmp = TempDir::new().unwrap();
    // Row order: NULL, '', the string NULL, 'x'. A blank line is a NULL in a one-column file.
    let (c, p) = one_column(
        tmp.path(),
        "v\n\n\"\"\n\"NULL\"\nx\n",
        &[None, Some(""), Some("NULL"), Some("x")],
    );
    Run::diff(&c, &p).exits(0);
    // Swapping '' and NULL on one side is drift.
    let (c, p) = one_column(tmp.path(), "v\n\"\"\n\n", &[Some(""), Some("")]);
    Run::diff(&c, &p).exits(1);
    // --null-value makes unquoted NULL a NULL; a quoted "NULL" stays text.
    let (c, p) = one_column(
        tmp.path(),
        "v\nNULL\n\"NULL\"\n\\N\n",
        &[None, Some("NULL"), None],
    );
    Run::diff(&c, &p)
        .args(["--null-value", "NULL", "--null-value", "\\N"])
        .exits(0);
    Run::diff(&c, &p).exits(1);
}

#[test]
fn csv_dialect_options() {
    let tmp = TempDir::new().unwrap();
    let rows = orders(120);
    let pq = tmp.path().join("t.parquet");
    write_parquet(&pq, &batch(&rows, false), 64);
    // Semicolons.
    let semi = tmp.path().join("semi.txt");
    fs::write(&semi, csv_text(&rows, false, ';')).unwrap();
    Run::diff(&semi, &pq)
        .args(["--source-format", "csv", "--delimiter", ";"])
        .exits(0);
    // TSV by extension.
    let tsv = tmp.path().join("t.tsv");
    fs::write(&tsv, csv_text(&rows, false, '\t')).unwrap();
    Run::diff(&tsv, &pq).exits(0);
    // No header: columns are column_1.., paired by position.
    let body: String = csv_text(&rows, false, ',')
        .split_once('\n')
        .unwrap()
        .1
        .to_string();
    let nh = tmp.path().join("nh.csv");
    fs::write(&nh, body).unwrap();
    Run::diff(&nh, &pq)
        .args(["--no-header", "--by-position"])
        .exits(0);
    // Backslash escapes and Latin-1.
    let c = tmp.path().join("l1.csv");
    fs::write(&c, b"v\n\"a\\\"b\"\ncaf\xe9\n").unwrap();
    let p = tmp.path().join("l1.parquet");
    let arr: ArrayRef = Arc::new(StringArray::from(vec!["a\"b", "café"]));
    write_parquet(&p, &RecordBatch::try_from_iter([("v", arr)]).unwrap(), 10);
    Run::diff(&c, &p)
        .args(["--escape", "\\", "--encoding", "latin-1"])
        .exits(0);
    // The same bytes read as UTF-8 are an error naming the line.
    Run::diff(&c, &p)
        .args(["--escape", "\\"])
        .fails_with("l1.csv: line 3, column 'v': invalid UTF-8");
}

#[test]
fn parse_errors_name_file_line_column_value_or_count_as_drift() {
    let tmp = TempDir::new().unwrap();
    let rows = orders(50);
    let pq = tmp.path().join("t.parquet");
    write_parquet(&pq, &batch(&rows, false), 64);
    let text = csv_text(&rows, false, ',');
    let mut lines: Vec<String> = text.lines().map(str::to_string).collect();
    // Find the physical line of row 5 (row 3 holds a quoted newline, so lines and rows differ).
    let target_row = 5;
    let mut line_no = 0;
    let mut seen_rows = 0;
    for (i, l) in lines.iter().enumerate() {
        if i == 0 {
            continue;
        }
        if !l.starts_with("line ") {
            seen_rows += 1;
        }
        if seen_rows == target_row + 1 {
            line_no = i + 1;
            break;
        }
    }
    let idx = line_no - 1;
    lines[idx] = lines[idx].replacen(&decimal_text(rows[target_row].cents.unwrap()), "12.345", 1);
    let csv = tmp.path().join("bad.csv");
    fs::write(&csv, lines.join("\n") + "\n").unwrap();
    Run::diff(&csv, &pq)
        .fails_with(format!(
            "bad.csv: line {line_no}, column 'amount': cannot parse \"12.345\""
        ))
        .stderr_has("fractional digits");
    let out = tmp.path().join("out");
    let run = Run::diff(&csv, &pq)
        .args(["--max-parse-errors", "3"])
        .output_dir(&out)
        .exits(1);
    run.stdout_has("parse_errors            1");
    let r = run.report();
    assert_eq!(r["parse_errors"]["source"], 1);
    assert_eq!(r["exact_match"], false);
    assert_eq!(r["target_only_rows"], 1);
}

#[test]
fn text_against_text_compares_exact_text_unless_types_are_inferred() {
    let tmp = TempDir::new().unwrap();
    let a = tmp.path().join("a.csv");
    let b = tmp.path().join("b.csv");
    fs::write(
        &a,
        "id,amount,when\n1,1.50,2024-01-01 10:00:00\n2,,2024-01-02\n",
    )
    .unwrap();
    fs::write(
        &b,
        "id,amount,when\n1,1.5,2024-01-01T10:00:00\n2,,2024-01-02 00:00:00\n",
    )
    .unwrap();
    Run::diff(&a, &b).exits(1);
    Run::diff(&a, &b).arg("--infer-types").exits(0);
    recon(["schema"])
        .arg(&a)
        .arg(&b)
        .arg("--infer-types")
        .exits(0)
        .stdout_has("Decimal128(38, 2)");
}

#[test]
fn big_csv_is_cut_into_chunks_and_parsed_on_every_thread() {
    // Quoted newlines land on chunk boundaries somewhere in 8 MiB of CSV.
    let tmp = TempDir::new().unwrap();
    let rows = orders(100_000);
    let pq = tmp.path().join("t.parquet");
    write_parquet(&pq, &batch(&rows, false), 8192);
    let csv = tmp.path().join("big.csv");
    let text = csv_text(&rows, false, ',');
    assert!(text.len() > 4 << 20);
    fs::write(&csv, &text).unwrap();
    let mut reports = Vec::new();
    for threads in ["1", "2", "4"] {
        let out = tmp.path().join(format!("out{threads}"));
        let run = Run::diff(&csv, &pq)
            .args(["-j", threads])
            .output_dir(&out)
            .exits(0);
        let r = run.report();
        assert_eq!(r["source_rows"], 100_000);
        reports.push(r["target_rows"].clone());
    }
    assert!(reports.iter().all(|r| r == &reports[0]));
}

fn bad(source: &Path, target: &Path, expect: &str) {
    let run = Run::diff(source, target).fails_with(expect);
    let err = run.one_line_error();
    assert!(!err.contains("panicked"), "{err}");
}

#[test]
fn bad_inputs_are_one_line_errors_naming_the_file() {
    let tmp = TempDir::new().unwrap();
    let d = tmp.path();
    let rows = orders(200);
    let good = d.join("good.parquet");
    write_parquet(&good, &batch(&rows, false), 50);
    let bytes = fs::read(&good).unwrap();

    let truncated = d.join("truncated.parquet");
    fs::write(&truncated, &bytes[..bytes.len() / 2]).unwrap();
    bad(&truncated, &good, "truncated.parquet");

    let footer = d.join("footer.parquet");
    let mut b = bytes.clone();
    let n = b.len();
    b[n - 12..n - 8].copy_from_slice(&[0xff, 0xff, 0xff, 0x7f]);
    fs::write(&footer, &b).unwrap();
    bad(&footer, &good, "footer.parquet");

    let empty = d.join("empty.parquet");
    fs::write(&empty, b"").unwrap();
    bad(&empty, &good, "empty.parquet: file is empty");
    let empty_csv = d.join("empty.csv");
    fs::write(&empty_csv, b"").unwrap();
    bad(&empty_csv, &good, "empty.csv: file is empty");

    let mixed = d.join("mixed");
    fs::create_dir(&mixed).unwrap();
    write_parquet(&mixed.join("a.parquet"), &batch(&rows, false), 50);
    write_parquet(&mixed.join("b.parquet"), &batch(&rows, true), 50);
    bad(&mixed, &good, "b.parquet: schema differs");

    let ok = d.join("ok.csv");
    fs::write(&ok, "a,b\n1,2\n").unwrap();
    let ragged = d.join("ragged.csv");
    fs::write(&ragged, "a,b\n1,2\n3\n").unwrap();
    bad(
        &ragged,
        &ok,
        "ragged.csv: line 3: expected 2 fields, found 1",
    );

    let quote = d.join("quote.csv");
    fs::write(&quote, "a,b\n1,\"2\n").unwrap();
    bad(&quote, &ok, "quote.csv: line 2");

    let utf = d.join("utf.csv");
    fs::write(&utf, b"a,b\nok,1\nbad\xff,2\n").unwrap();
    bad(&utf, &ok, "utf.csv: line 3, column 'a': invalid UTF-8");

    let unknown = d.join("data.xlsx");
    fs::write(&unknown, b"whatever").unwrap();
    bad(&unknown, &good, "data.xlsx: unknown file extension");

    let empty_dir = d.join("nothing");
    fs::create_dir(&empty_dir).unwrap();
    bad(&empty_dir, &good, "nothing: directory holds no data files");

    let gz = d.join("broken.csv.gz");
    fs::write(&gz, b"\x1f\x8b\x08\x00garbage").unwrap();
    bad(&gz, &good, "broken.csv.gz");

    bad(&d.join("missing.parquet"), &good, "missing.parquet");
}

#[test]
fn permission_denied_is_a_clean_error() {
    use std::os::unix::fs::PermissionsExt;
    let tmp = TempDir::new().unwrap();
    let d = tmp.path();
    fs::set_permissions(d, fs::Permissions::from_mode(0o755)).unwrap();
    let good = d.join("good.parquet");
    write_parquet(&good, &batch(&orders(10), false), 50);
    let secret = d.join("secret.parquet");
    fs::copy(&good, &secret).unwrap();
    fs::set_permissions(&secret, fs::Permissions::from_mode(0o000)).unwrap();
    fs::set_permissions(&good, fs::Permissions::from_mode(0o644)).unwrap();
    // By hand, not with Run: the binary runs under setpriv as another user.
    use std::process::Command;
    let bin = assert_cmd::cargo::cargo_bin("recon");
    // Root reads anything, so drop to nobody when running as root.
    let is_root = unsafe { libc::geteuid() } == 0;
    let mut cmd = if is_root {
        // setpriv is in util-linux, on every Debian: missing, the test
        // fails rather than passing without having run.
        assert!(
            Command::new("setpriv").arg("--help").output().is_ok(),
            "setpriv (util-linux) is needed to drop root's rights for this test"
        );
        // A copy of the binary in the test's own 0755 directory: the
        // target dir may not be reachable as nobody (a private home).
        let reachable = d.join("recon");
        fs::copy(&bin, &reachable).unwrap();
        fs::set_permissions(&reachable, fs::Permissions::from_mode(0o755)).unwrap();
        let mut c = Command::new("setpriv");
        c.args(["--reuid=65534", "--regid=65534", "--clear-groups"])
            .arg(&reachable);
        c
    } else {
        Command::new(&bin)
    };
    let out = cmd
        .arg("diff")
        .arg(&secret)
        .arg(&good)
        .arg("--temp-dir")
        .arg(d)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("secret.parquet") && err.contains("ermission denied"),
        "{err}"
    );
    assert_eq!(err.trim_end().lines().count(), 1, "{err}");
}

#[test]
fn shipped_extract_against_shipped_lake() {
    let lake = common::fixture("lake/orders");
    Run::diff(common::fixture("demo/extract.csv.gz"), &lake).exits(0);
    Run::diff(common::fixture("demo/extract_drift.csv.gz"), &lake)
        .exits(1)
        .stdout_has("amount=-15.98")
        .stdout_has("amount=-15.89");
}

#[test]
fn ndjson_nested_values_meet_parquet_lists() {
    use arrow::array::{Int64Array, ListBuilder, StringBuilder};
    let tmp = TempDir::new().unwrap();
    let mut tags = ListBuilder::new(StringBuilder::new());
    for row in [vec!["a", "b"], vec![], vec!["c"]] {
        for t in row {
            tags.values().append_value(t);
        }
        tags.append(true);
    }
    tags.append(false);
    let ids: ArrayRef = Arc::new(Int64Array::from(vec![1, 2, 3, 4]));
    let b =
        RecordBatch::try_from_iter([("id", ids), ("tags", Arc::new(tags.finish()) as ArrayRef)])
            .unwrap();
    let pq = tmp.path().join("t.parquet");
    write_parquet(&pq, &b, 10);
    let js = tmp.path().join("t.ndjson");
    let text = "{\"id\":1,\"tags\":[\"a\",\"b\"]}\n{\"id\":2,\"tags\":[]}\n{\"id\":3,\"tags\":[\"c\"]}\n{\"id\":4,\"tags\":null}\n";
    fs::write(&js, text).unwrap();
    Run::diff(&js, &pq).exits(0);
    // List order matters.
    fs::write(&js, text.replace("[\"a\",\"b\"]", "[\"b\",\"a\"]")).unwrap();
    Run::diff(&js, &pq).exits(1);
}

#[test]
fn globs_read_each_file_once_keep_hive_columns_and_skip_markers() {
    let tmp = TempDir::new().unwrap();
    let rows = orders(300);
    let lake = tmp.path().join("lake");
    hive(&lake, &rows);
    // A leftover under a marker directory must not be read.
    let junk = lake.join("region=EU/_temporary");
    fs::create_dir_all(&junk).unwrap();
    write_parquet(&junk.join("part-9.parquet"), &batch(&rows, false), 50);
    let pq = tmp.path().join("all.parquet");
    write_parquet(&pq, &batch(&rows, true), 1000);
    // `**` matches directories and the files in them: still one copy of each row.
    let starstar = format!("{}/**/*", lake.display());
    Run::diff(&starstar, &pq).exits(0);
    // A relative pattern with ./ keeps the partition columns.
    Run::diff("./lake/*/*.parquet", &pq)
        .current_dir(tmp.path())
        .exits(0);
    // Comparing only the partition column still reads every row.
    Run::diff(&lake, &pq).args(["--columns", "region"]).exits(0);
    let out = tmp.path().join("out");
    let fewer: Vec<Order> = rows.iter().skip(1).cloned().collect();
    write_parquet(&pq, &batch(&fewer, true), 1000);
    let run = Run::diff(&lake, &pq)
        .args(["--columns", "region"])
        .output_dir(&out)
        .exits(1);
    assert_eq!(run.report()["source_only_rows"], 1);
}

#[test]
fn excluded_text_columns_stay_text_and_infer_types_ignores_typed_sides() {
    let tmp = TempDir::new().unwrap();
    let p = tmp.path().join("t.parquet");
    let ids: ArrayRef = Arc::new(arrow::array::Int64Array::from(vec![1, 2]));
    let notes: ArrayRef = Arc::new(arrow::array::Int64Array::from(vec![10, 20]));
    write_parquet(
        &p,
        &RecordBatch::try_from_iter([("id", ids), ("note", notes)]).unwrap(),
        10,
    );
    let c = tmp.path().join("s.csv");
    fs::write(&c, "id,note\n1,n/a\n3,n/a\n").unwrap();
    // `note` is excluded, so its text is never parsed as int64: the drift on id is reported.
    let out = tmp.path().join("out");
    Run::diff(&c, &p)
        .args(["--exclude", "note"])
        .output_dir(&out)
        .exits(1);
    let ev = read_parquet(&out.join("source_only.parquet"));
    let note = ev[0].column_by_name("note").unwrap();
    assert_eq!(note.data_type(), &DataType::Utf8);
    // --infer-types with a typed side: the Parquet file is not sampled as CSV.
    Run::diff(&c, &p)
        .args(["--exclude", "note", "--infer-types"])
        .exits(1);
}

#[test]
fn evidence_from_compressed_text_spans_many_ranges() {
    // At 8MiB the evidence ranges are 4096 positions (bytes of text) wide, so
    // the unmatched rows of this file fall into dozens of ranges.
    let tmp = TempDir::new().unwrap();
    let rows = orders(3000);
    let pq = tmp.path().join("t.parquet");
    write_parquet(&pq, &batch(&rows, false), 500);
    let mut changed = rows.clone();
    for r in changed.iter_mut().step_by(10) {
        r.qty = Some(1000 + r.qty.unwrap_or(0));
    }
    let gz = tmp.path().join("s.csv.gz");
    gzip(&gz, &csv_text(&changed, false, ','));
    let out = tmp.path().join("out");
    Run::diff(&gz, &pq)
        .args(["-m", "8MiB", "-j", "2"])
        .output_dir(&out)
        .exits(1);
    let ev = read_parquet(&out.join("source_only.parquet"));
    let qty: Vec<i32> = ev
        .iter()
        .flat_map(|b| {
            let a = b.column_by_name("qty").unwrap();
            let a = a.as_any().downcast_ref::<Int32Array>().unwrap().clone();
            a.iter().map(|v| v.unwrap()).collect::<Vec<_>>()
        })
        .collect();
    assert_eq!(qty.len(), 300);
    assert!(
        qty.iter().all(|&q| q >= 1000),
        "every fetched row is a changed one"
    );
}

#[test]
fn delta_and_iceberg_table_folders_are_refused_not_read_as_plain_files() {
    // A Delta table folder holds the files of older versions too: reading
    // them all would count dead rows.
    let tmp = TempDir::new().unwrap();
    let delta = tmp.path().join("orders");
    let part = delta.join("business_date=2024-01-01");
    fs::create_dir_all(delta.join("_delta_log")).unwrap();
    fs::create_dir_all(&part).unwrap();
    let rows = orders(4);
    write_parquet(&part.join("part-0.parquet"), &batch(&rows, false), 10);
    write_parquet(&part.join("part-1-dead.parquet"), &batch(&rows, false), 10);
    // The root is read through its log (here an empty one: an error naming
    // the table); a folder inside it is refused, naming the `delta:` source.
    Run::diff(&delta, &delta).fails_with("Delta table");
    Run::diff(&part, &part)
        .fails_with("inside a Delta table")
        .stderr_has("older versions")
        .stderr_has(if cfg!(feature = "delta") {
            "delta:"
        } else {
            "without Delta support"
        });
    // Naming the live files explicitly still works.
    let live = part.join("part-0.parquet");
    Run::diff(&live, &live).exits(0);

    // Iceberg: metadata/*.metadata.json beside data/.
    let ice = tmp.path().join("lake");
    fs::create_dir_all(ice.join("metadata")).unwrap();
    fs::create_dir_all(ice.join("data")).unwrap();
    fs::write(ice.join("metadata").join("00001-abc.metadata.json"), "{}").unwrap();
    write_parquet(
        &ice.join("data").join("f.parquet"),
        &batch(&rows, false),
        10,
    );
    // The root is read through its metadata (here not a table's: an error
    // naming it); a folder inside it is refused, naming the `iceberg:` source.
    Run::diff(&ice, &ice).fails_with(if cfg!(feature = "iceberg") {
        "00001-abc.metadata.json: Iceberg metadata: no table location"
    } else {
        "without Iceberg support"
    });
    Run::diff(ice.join("data"), ice.join("data"))
        .fails_with("inside an Iceberg table")
        .stderr_has(if cfg!(feature = "iceberg") {
            "iceberg:"
        } else {
            "without Iceberg support"
        });
}

#[test]
fn a_semicolon_header_read_as_csv_names_the_delimiter_and_the_hint_works() {
    let tmp = TempDir::new().unwrap();
    let (s, t) = (tmp.path().join("extract.csv"), tmp.path().join("twin.csv"));
    fs::write(&s, "id;name\n1;x\n2;y\n").unwrap();
    fs::write(&t, "id;name\n2;y\n1;x\n").unwrap();
    let p = tmp.path().join("twin.parquet");
    let rows = orders(2);
    write_parquet(&p, &batch(&rows, false), 10);
    // Read with a delimiter the user gave wrongly, against a typed table:
    // one message, with the fix.
    Run::diff(&s, &p)
        .args(["--delimiter", ","])
        .fails_with("share no column names")
        .stderr_has("pass --delimiter ';'");
    // Following the hint for two extracts of the same kind works, and so
    // does leaving the delimiter to sniffing.
    for flags in [vec!["--delimiter", ";"], vec![]] {
        Run::diff(&s, &t).args(&flags).exits(0);
    }
}

#[test]
fn a_tbl_extract_with_trailing_delimiters_against_its_parquet_twin_needs_the_one_flag_its_error_names(
) {
    let tmp = TempDir::new().unwrap();
    let tbl = tmp.path().join("orders.tbl");
    fs::write(&tbl, "a|1|\nb|2|\nc||\n").unwrap();
    let pq = tmp.path().join("orders.parquet");
    common::write_parquet(
        &pq,
        &common::kv_batch(&[
            (Some("c"), None),
            (Some("a"), Some(1)),
            (Some("b"), Some(2)),
        ]),
        10,
    );
    // '|'-delimited, no header, the empty last field dropped: two columns
    // that share no name with the Parquet side, and the error says how.
    Run::diff(&tbl, &pq)
        .fails_with("share no column names")
        .stderr_has("--by-position");
    Run::diff(&tbl, &pq).arg("--by-position").exits(0);
    // A changed value is drift.
    fs::write(&tbl, "a|1|\nb|3|\nc||\n").unwrap();
    Run::diff(&tbl, &pq).arg("--by-position").exits(1);
    // A line without the trailing delimiter: not detected (the lines
    // disagree), so the column counts differ; with --trailing-delimiter the
    // error names the line.
    fs::write(&tbl, "a|1|\nb|2\nc||\n").unwrap();
    Run::diff(&tbl, &pq)
        .arg("--by-position")
        .fails_with("same column count");
    Run::diff(&tbl, &pq)
        .args(["--by-position", "--trailing-delimiter"])
        .fails_with("line 2");
}

#[test]
fn a_trailing_delimiter_is_detected_in_csv_but_a_sometimes_null_last_column_is_not_one() {
    let tmp = TempDir::new().unwrap();
    let (a, b) = (tmp.path().join("a.csv"), tmp.path().join("b.csv"));
    // Legacy export: header and every line end with ','.
    fs::write(&a, "id,name,\n1,x,\n2,y,\n").unwrap();
    fs::write(&b, "id,name\n2,y\n1,x\n").unwrap();
    Run::diff(&a, &b).exits(0);
    // A real last column that is sometimes NULL stays a column.
    fs::write(&a, "id,name,note\n1,x,\n2,y,hello\n").unwrap();
    fs::write(&b, "id,name,note\n2,y,hello\n1,x,\n").unwrap();
    Run::diff(&a, &b).exits(0);
    recon(["schema"])
        .arg(&a)
        .arg(&b)
        .exits(0)
        .stdout_has("note");
}

#[test]
fn blank_and_repeated_header_names_pair_by_position_and_are_refused_by_name() {
    let tmp = TempDir::new().unwrap();
    let (a, b) = (tmp.path().join("a.csv"), tmp.path().join("b.csv"));
    fs::write(&a, "id,id,,x\n1,2,3,4\n").unwrap();
    fs::write(&b, "id,id,,x\n1,2,3,4\n").unwrap();
    Run::diff(&a, &b)
        .fails_with("'id_2' has a repeated header name")
        .stderr_has("'column_3' has a blank header name")
        .stderr_has("pass --by-position");
    Run::diff(&a, &b).arg("--by-position").exits(0);
    fs::write(&b, "id,id,,x\n1,2,9,4\n").unwrap();
    Run::diff(&a, &b).arg("--by-position").exits(1);
}

#[test]
fn errors_name_the_fix_for_quotes_and_header_less_files() {
    let tmp = TempDir::new().unwrap();
    // A quote error mentions --quote none, which then reads the file.
    let q = tmp.path().join("q.csv");
    fs::write(&q, "a,b\n1,2\"inch\n").unwrap();
    Run::diff(&q, &q)
        .args(["--quote", "\""])
        .fails_with("pass --quote none");
    // Following the hint works, and sniffing finds it alone.
    for flags in [vec!["--quote", "none"], vec![]] {
        Run::diff(&q, &q).args(&flags).exits(0);
    }
    // A header that looks like data mentions --no-header.
    let data = tmp.path().join("data.csv");
    fs::write(&data, "1,2\n3,4\n").unwrap();
    let named = tmp.path().join("named.csv");
    fs::write(&named, "a,b\n1,2\n3,4\n").unwrap();
    Run::diff(&data, &named)
        .arg("--header")
        .fails_with("pass --no-header");
    // Sniffing reads it as data: the names differ, so pair by position.
    Run::diff(&data, &named).fails_with("--by-position");
    // (--no-header would apply to both sides; sniffing decides per file.)
    Run::diff(&data, &named).arg("--by-position").exits(0);
}

#[test]
fn by_position_applies_after_exclude_so_the_extra_column_hint_leads_somewhere() {
    let tmp = TempDir::new().unwrap();
    let tbl = tmp.path().join("x.tbl");
    // Three columns (the last a load timestamp the target does not have).
    fs::write(&tbl, "a|1|2024-01-01|\nb|2|2024-01-01|\n").unwrap();
    let pq = tmp.path().join("x.parquet");
    common::write_parquet(
        &pq,
        &common::kv_batch(&[(Some("b"), Some(2)), (Some("a"), Some(1))]),
        10,
    );
    Run::diff(&tbl, &pq)
        .arg("--by-position")
        .fails_with("--exclude column_3");
    // Following the hint: exclude the 3rd column, pair the rest by position.
    Run::diff(&tbl, &pq)
        .args(["--by-position", "--exclude", "column_3"])
        .exits(0);
}

#[test]
fn a_fully_quoted_export_with_quoted_empty_nulls_compares_against_its_typed_twin() {
    let tmp = TempDir::new().unwrap();
    let csv = tmp.path().join("export.csv");
    // Every field quoted, NULL written as "" (also in the numeric column).
    fs::write(&csv, "\"k\";\"n\"\n\"a\";\"1\"\n\"b\";\"\"\n").unwrap();
    let pq = tmp.path().join("twin.parquet");
    common::write_parquet(
        &pq,
        &common::kv_batch(&[(Some("b"), None), (Some("a"), Some(1))]),
        10,
    );
    // Without the option "" is the empty string, which is not an integer.
    Run::diff(&csv, &pq)
        .args(["--delimiter", ";"])
        .fails_with("line 3");
    for flag in [vec!["--quoted-empty-as-null"], vec!["--null-value", "\"\""]] {
        Run::diff(&csv, &pq)
            .args(["--delimiter", ";"])
            .args(&flag)
            .exits(0);
    }
    // The NULL policy otherwise holds: "" stays '' without the option.
    let other = tmp.path().join("other.csv");
    fs::write(&other, "\"k\";\"n\"\n\"a\";\"1\"\n\"\";\"2\"\n").unwrap();
    let twin = tmp.path().join("other.parquet");
    common::write_parquet(
        &twin,
        &common::kv_batch(&[(Some(""), Some(2)), (Some("a"), Some(1))]),
        10,
    );
    Run::diff(&other, &twin).args(["--delimiter", ";"]).exits(0);
}

#[test]
fn a_utf16_file_is_read_by_its_byte_order_mark_and_named() {
    let tmp = TempDir::new().unwrap();
    let f = tmp.path().join("export.csv");
    let mut bytes = vec![0xff, 0xfe];
    for c in "a,b\n1,é\n".encode_utf16() {
        bytes.extend_from_slice(&c.to_le_bytes());
    }
    fs::write(&f, bytes).unwrap();
    let twin = tmp.path().join("twin.csv");
    fs::write(&twin, "a,b\n1,é\n").unwrap();
    Run::diff(&f, &twin).exits(0);
    recon(["schema"])
        .arg(&f)
        .arg(&twin)
        .exits(0)
        .stdout_has("encoding UTF-16LE (byte-order mark)");
    // A byte-order mark that contradicts --encoding is named.
    Run::diff(&f, &twin)
        .args(["--encoding", "windows-1252"])
        .fails_with("UTF-16LE byte-order mark");
}

/// A two-column (k, n) CSV and its Parquet twin, in `dir`.
fn kv_pair(dir: &Path) -> (String, PathBuf) {
    let csv = "k,n\na,1\nb,2\nb,2\n".to_string();
    let pq = dir.join("twin.parquet");
    common::write_parquet(
        &pq,
        &common::kv_batch(&[
            (Some("b"), Some(2)),
            (Some("a"), Some(1)),
            (Some("b"), Some(2)),
        ]),
        10,
    );
    (csv, pq)
}

/// Makes a FIFO at `path` and writes `data` into it from a thread (which
/// waits for a reader; a test that fails first leaves it blocked until exit).
fn fifo_with(path: &Path, data: Vec<u8>) -> std::thread::JoinHandle<()> {
    let status = std::process::Command::new("mkfifo")
        .arg(path)
        .status()
        .unwrap();
    assert!(status.success());
    let path = path.to_path_buf();
    std::thread::spawn(move || {
        let mut w = fs::OpenOptions::new().write(true).open(&path).unwrap();
        w.write_all(&data).unwrap();
    })
}

#[test]
fn stdin_is_spooled_and_its_evidence_read_back() {
    let tmp = TempDir::new().unwrap();
    let (csv, pq) = kv_pair(tmp.path());
    Run::diff("-", &pq)
        .args(["--source-format", "csv"])
        .stdin(csv.clone())
        .exits(0);
    // A changed row: the evidence is fetched back from the spooled copy
    // by byte offset, typed like the Parquet side.
    let out = tmp.path().join("out");
    let run = Run::diff("-", &pq)
        .args(["--source-format", "csv"])
        .output_dir(&out)
        .stdin(csv.replace("a,1", "a,7"))
        .exits(1);
    run.stdout_has("k=\"a\"  n=7");
    let rows = read_parquet(&out.join("source_only.parquet"));
    assert_eq!(rows[0].num_rows(), 1);
    let n = rows[0].column_by_name("n").unwrap();
    assert_eq!(n.data_type(), &DataType::Int64);
    // The report names the input as given.
    assert_eq!(run.report()["inputs"]["source"]["path"], "-");
    // Either side may be `-`; gzip and zstd streams are told by their bytes.
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    gz.write_all(csv.as_bytes()).unwrap();
    Run::diff(&pq, "-")
        .args(["--target-format", "csv"])
        .stdin(gz.finish().unwrap())
        .exits(0);
    Run::diff("-", &pq)
        .args(["--source-format", "csv"])
        .stdin(zstd::encode_all(csv.as_bytes(), 1).unwrap())
        .exits(0);
    // Parquet needs seeking, so it is spooled too; its magic bytes name it.
    Run::diff("-", &pq).stdin(fs::read(&pq).unwrap()).exits(0);
}

#[test]
fn stdin_without_a_format_or_twice_is_a_one_line_error() {
    let tmp = TempDir::new().unwrap();
    let (csv, pq) = kv_pair(tmp.path());
    Run::diff("-", &pq)
        .stdin(csv.clone())
        .fails_with("-: stdin has no file name to tell its format: pass --source-format csv")
        .one_line_error();
    Run::diff("-", "-")
        .args(["--source-format", "csv"])
        .stdin(csv.clone())
        .fails_with("both '-'")
        .one_line_error();
    // Compressed Parquet is not read (nothing compresses Parquet files whole).
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    gz.write_all(&fs::read(&pq).unwrap()).unwrap();
    Run::diff("-", &pq)
        .args(["--source-format", "parquet"])
        .stdin(gz.finish().unwrap())
        .fails_with("-: is a gzip stream of parquet")
        .one_line_error();
    // The spool goes to --temp-dir.
    Run::diff("-", &pq)
        .args(["--source-format", "csv", "--temp-dir"])
        .arg(tmp.path().join("nowhere"))
        .stdin(csv)
        .fails_with("nowhere: temp directory does not exist")
        .one_line_error();
}

#[test]
fn a_fifo_is_spooled_and_read_like_its_file() {
    let tmp = TempDir::new().unwrap();
    let (csv, pq) = kv_pair(tmp.path());
    // A FIFO without an extension (what <(zcat x.csv.gz) gives) needs the format.
    let fifo = tmp.path().join("extract");
    let writer = fifo_with(&fifo, csv.replace("b,2\n", "b,3\n").into_bytes());
    Run::diff(&fifo, &pq)
        .args(["--source-format", "csv"])
        .exits(1)
        .stdout_has("k=\"b\"  n=3");
    writer.join().unwrap();
    // A FIFO's own extension names its format, .tbl dialect included.
    let tbl = tmp.path().join("extract.tbl");
    let writer = fifo_with(&tbl, b"a|1|\nb|2|\nb|2|\n".to_vec());
    Run::diff(&tbl, &pq).arg("--by-position").exits(0);
    writer.join().unwrap();
    // Without a format or a telling name: one line saying which flag to pass.
    let bare = tmp.path().join("bare");
    let writer = fifo_with(&bare, csv.into_bytes());
    Run::diff(&pq, &bare)
        .fails_with("is a pipe whose name tells no format: pass --target-format csv");
    writer.join().unwrap();
}

#[test]
fn csv_preamble_title_lines_are_detected() {
    let fx = |n: &str| common::fixture(&format!("csv_preamble/{n}"));
    let (banner, orders) = (fx("orders_banner.csv"), fx("orders.csv"));
    Run::diff(&banner, &orders).exits(0);
    Run::diff(&orders, &banner).exits(0);
    recon(["schema"])
        .arg(&banner)
        .arg(&orders)
        .exits(0)
        .stdout_has(
            "source (csv): delimiter ',' (sniffed), quote '\"' (sniffed), header (sniffed), skipped 4 preamble lines (sniffed)\n",
        )
        .stdout_has(
            "target (csv): delimiter ',' (sniffed), quote '\"' (sniffed), header (sniffed)\n",
        );
    // DuckDB's files with notes before the header, against what they hold.
    let tmp = TempDir::new().unwrap();
    let twin = tmp.path().join("twin.csv");
    fs::write(&twin, "number,text,date\n345.0,TEST3,2000-12-13\n").unwrap();
    Run::diff(fx("duckdb_skip_row.csv"), &twin).exits(0);
    fs::write(&twin, "number,text,date\n345.0,TEST4,2000-12-13\n").unwrap();
    Run::diff(fx("duckdb_multiple_skip_row.csv"), &twin).exits(0);
    // Detection is per side: a Parquet twin, and --skip-rows 0 turns it off.
    let out = tmp.path().join("out");
    Run::diff(&banner, &orders)
        .args(["--skip-rows", "0"])
        .fails_with("share no column names");
    let run = Run::diff(&banner, &orders).output_dir(&out).exits(0);
    let r = run.report();
    assert!(
        r["inputs"]["source"]["dialect"]
            .as_str()
            .unwrap()
            .ends_with("skipped 4 preamble lines (sniffed)"),
        "{}",
        r["inputs"]["source"]
    );
}

#[test]
fn skip_rows_skips_a_banner() {
    let fx = |n: &str| common::fixture(&format!("csv_preamble/{n}"));
    let (titled, plain) = (fx("customers_title.csv"), fx("customers.csv"));
    // Only the titled side has the banner: one side's option.
    Run::diff(&titled, &plain)
        .args(["--source-skip-rows", "1"])
        .exits(0);
    Run::diff(&plain, &titled)
        .args(["--skip-rows", "1", "--source-skip-rows", "0"])
        .exits(0);
    // Both sides with a banner: the option for both; the schema screen says so.
    Run::diff(&titled, &titled)
        .args(["--skip-rows", "1"])
        .exits(0);
    recon(["schema"])
        .arg(&titled)
        .arg(&plain)
        .args(["--source-skip-rows", "1"])
        .exits(0)
        .stdout_has("header (sniffed), skipped 1 line\n");
    // Skipping past the end is an error naming the option, not an empty table.
    let a = Run::diff(&titled, &plain)
        .args(["--source-skip-rows", "9"])
        .exits(2);
    let e = a.one_line_error();
    assert!(
        e.contains("customers_title.csv: nothing follows the 9 lines skipped at the top (--skip-rows 9): no header line"),
        "{e}"
    );
    let tmp = TempDir::new().unwrap();
    // Without a header the first line after the skipped ones is a row; TSV
    // takes the option too.
    let (a, b) = (tmp.path().join("a.tsv"), tmp.path().join("b.tsv"));
    fs::write(&a, "Export\t2024\n\n1\tx\n2\ty\n").unwrap();
    fs::write(&b, "2\ty\n1\tx\n").unwrap();
    Run::diff(&a, &b)
        .args(["--source-skip-rows", "2", "--no-header"])
        .exits(0);
    fs::write(&b, "2\ty\n1\tz\n").unwrap();
    Run::diff(&a, &b)
        .args(["--source-skip-rows", "2", "--no-header"])
        .exits(1);
    // Line numbers in messages count the skipped lines.
    let bad = tmp.path().join("bad.csv");
    fs::write(&bad, "Title\nname,city\nAnn,Paris\nBob\n").unwrap();
    let a = Run::diff(&bad, &plain)
        .args(["--source-skip-rows", "1"])
        .exits(2);
    let e = a.one_line_error();
    assert!(
        e.contains("bad.csv: line 4: expected 2 fields, found 1"),
        "{e}"
    );
}

#[test]
fn skip_rows_and_comment_are_refused_where_no_side_is_csv() {
    let pq = common::fixture("demo/source.parquet");
    let csv = common::fixture("csv_preamble/orders.csv");
    for (flags, msg) in [
        (
            &["--skip-rows", "1"][..],
            "--skip-rows applies to CSV/TSV files only, and ",
        ),
        (
            &["--comment", "#"][..],
            "--comment applies to CSV/TSV files only",
        ),
    ] {
        let a = Run::diff(&pq, &pq).args(flags).exits(2);
        let e = a.one_line_error();
        assert!(
            e.contains(msg) && e.contains("source.parquet is parquet"),
            "{e}"
        );
    }
    // One side's option on a Parquet side is refused even when the other is CSV.
    let a = Run::diff(&pq, &csv)
        .args(["--source-skip-rows", "2"])
        .exits(2);
    let e = a.one_line_error();
    assert!(
        e.contains("--source-skip-rows applies to CSV/TSV files only"),
        "{e}"
    );
    // An option for both sides applies to the CSV one.
    let a = Run::diff(&pq, &csv)
        .args(["--skip-rows", "0", "--comment", "#"])
        .exits(2);
    let e = a.one_line_error();
    assert!(!e.contains("CSV/TSV files only"), "{e}");
    // NDJSON is no CSV.
    let tmp = TempDir::new().unwrap();
    let j = tmp.path().join("a.jsonl");
    fs::write(&j, "{\"k\":1}\n").unwrap();
    let a = Run::diff(&j, &j).args(["--comment", "#"]).exits(2);
    let e = a.one_line_error();
    assert!(e.contains("a.jsonl is ndjson"), "{e}");
}

#[test]
fn comment_lines_are_ignored_everywhere() {
    let fx = |n: &str| common::fixture(&format!("csv_preamble/{n}"));
    let (commented, orders) = (fx("orders_comments.csv"), fx("orders.csv"));
    // A comment line inside a quoted field ("two\n#lines") stays data: the
    // twin holds the same value.
    Run::diff(&commented, &orders)
        .args(["--comment", "#"])
        .exits(0);
    recon(["schema"])
        .arg(&commented)
        .arg(&orders)
        .args(["--comment", "#"])
        .exits(0)
        .stdout_has("header (sniffed), comment '#'\n");
    // Without it, the error names it.
    let a = Run::diff(&commented, &orders).exits(2);
    let e = a.one_line_error();
    assert!(
        e.contains("orders_comments.csv") && e.contains("pass --comment '#'"),
        "{e}"
    );
    // DuckDB's comments file: comments before the header, between rows, and last without a newline.
    let tmp = TempDir::new().unwrap();
    let twin = tmp.path().join("twin.csv");
    fs::write(&twin, "a;b\n6;7\n1;3\n").unwrap();
    Run::diff(fx("duckdb_comments.csv"), &twin)
        .args(["--comment", "#"])
        .exits(0);
    let a = Run::diff(fx("duckdb_comments.csv"), &twin).exits(2);
    let e = a.one_line_error();
    assert!(e.contains("pass --comment '#'"), "{e}");
    // Gzip goes through the same reader.
    let gz = tmp.path().join("c.csv.gz");
    gzip(&gz, &fs::read_to_string(&commented).unwrap());
    Run::diff(&gz, &orders).args(["--comment", "#"]).exits(0);
}

#[test]
fn unclear_preamble_names_skip_rows_in_the_error() {
    let fx = |n: &str| common::fixture(&format!("csv_preamble/{n}"));
    let a = Run::diff(fx("customers_title.csv"), fx("customers.csv")).exits(2);
    let e = a.one_line_error();
    assert!(
        e.contains("customers_title.csv: the first line looks like a preamble (a title, notes or comments) before the header: if so, pass --skip-rows 1; these tables share no column names"),
        "{e}"
    );
    // Pairing by position cannot tell a title from a header either.
    let a = Run::diff(fx("customers_title.csv"), fx("customers.csv"))
        .arg("--by-position")
        .exits(2);
    let e = a.one_line_error();
    assert!(
        e.contains("pass --header or --no-header; or the first line looks like a preamble (a title, notes or comments) before the header: if so, pass --skip-rows 1"),
        "{e}"
    );
    // A title line with a delimiter: the header reads as two columns.
    let tmp = TempDir::new().unwrap();
    let t = tmp.path().join("t.csv");
    fs::write(
        &t,
        "Customers, all regions\nname,city,country\nAnn,Paris,FR\nBob,Rome,IT\n",
    )
    .unwrap();
    let a = Run::diff(&t, fx("customers.csv")).exits(2);
    let e = a.one_line_error();
    assert!(
        e.contains("t.csv: the first line looks like a preamble (a title, notes or comments) before the header: if so, pass --skip-rows 1; these tables share no column names (source: 'Customers', ' all regions';"),
        "{e}"
    );
    // Where the columns pair anyway, the field count error about the first
    // lines says the same.
    let a = Run::diff(&t, fx("customers.csv"))
        .args(["--no-header", "--by-position"])
        .exits(2);
    let e = a.one_line_error();
    assert!(
        e.contains(
            "t.csv: line 2: expected 2 fields, found 3; the first line looks like a preamble"
        ),
        "{e}"
    );
    // Further down, a short row is only a short row.
    fs::write(&t, "name,city\nAnn,Paris\nBob,Rome\nCid\n").unwrap();
    let a = Run::diff(&t, fx("customers.csv")).exits(2);
    let e = a.one_line_error();
    assert!(
        e.contains("t.csv: line 4: expected 2 fields, found 1") && !e.contains("preamble"),
        "{e}"
    );
}

/// A drifting pair: `orders_banner.csv` with Bob's amount changed, against
/// the clean orders.
fn banner_drift(dir: &Path) -> (PathBuf, PathBuf) {
    let fx = |n: &str| common::fixture(&format!("csv_preamble/{n}"));
    let text = fs::read_to_string(fx("orders_banner.csv"))
        .unwrap()
        .replace("2,Bob,7.25,", "2,Bob,7.52,");
    let banner = dir.join("banner.csv");
    fs::write(&banner, &text).unwrap();
    gzip(&dir.join("banner.csv.gz"), &text);
    (banner, fx("orders.csv"))
}

#[test]
fn evidence_rows_of_a_file_with_a_preamble_are_the_changed_rows() {
    let tmp = TempDir::new().unwrap();
    let (banner, orders) = banner_drift(tmp.path());
    for (i, src) in [banner.clone(), tmp.path().join("banner.csv.gz")]
        .iter()
        .enumerate()
    {
        let out = tmp.path().join(format!("out{i}"));
        let run = Run::diff(src, &orders).output_dir(&out).exits(1);
        let r = run.report();
        assert_eq!(r["source_only_rows"], 1);
        assert_eq!(r["target_only_rows"], 1);
        for (file, amount) in [
            ("source_only.parquet", "7.52"),
            ("target_only.parquet", "7.25"),
        ] {
            let ev = read_parquet(&out.join(file));
            assert_eq!(ev.iter().map(|b| b.num_rows()).sum::<usize>(), 1, "{file}");
            let b = &ev[0];
            let text = |c: &str| {
                let col = b.column_by_name(c).unwrap();
                arrow::util::display::array_value_to_string(col, 0).unwrap()
            };
            assert_eq!(
                (
                    text("order_id"),
                    text("customer"),
                    text("amount"),
                    text("note")
                ),
                (
                    "2".into(),
                    "Bob".into(),
                    amount.into(),
                    "two\n#lines".into()
                ),
                "{file}"
            );
        }
        // The report's samples hold the same rows.
        let samples = r.to_string();
        assert!(
            samples.contains("7.52") && samples.contains("Bob"),
            "{samples}"
        );
    }
}

#[test]
fn comment_lines_in_later_chunks_are_skipped() {
    // Over 2 MiB, so the reader cuts it into several chunks. Every other
    // row is a quoted note of 30 lines (each starting with '#': data)
    // right after a comment line with a quote where a field would open: a
    // cutter that took that quote for one would cut inside the notes.
    let tmp = TempDir::new().unwrap();
    let (commented, plain) = (tmp.path().join("c.csv"), tmp.path().join("p.csv"));
    let mut c = String::from("# export\nid,name,note\n");
    let mut p = String::from("id,name,note\n");
    let lines: Vec<String> = (0..30).map(|k| format!("#l{k}, \"\"q\"\"")).collect();
    for i in 0..30_000 {
        let note = if i % 2 == 0 {
            format!("\"{}\"", lines.join("\n"))
        } else {
            format!("n{i}")
        };
        if i % 2 == 0 {
            c.push_str("#,\"open quote after a delimiter\n");
        }
        let row = format!("{i},name {i},{note}\n");
        c.push_str(&row);
        p.push_str(&row);
        if i % 11 == 3 {
            c.push_str(&format!("# comment {i}, \"unclosed\n"));
        }
    }
    assert!(c.len() > 3 << 20, "{}", c.len());
    fs::write(&commented, &c).unwrap();
    fs::write(&plain, &p).unwrap();
    for threads in ["1", "2"] {
        Run::diff(&commented, &plain)
            .args(["--comment", "#", "-j", threads])
            .exits(0);
    }
    // One changed row deep in the file comes back as itself.
    fs::write(&plain, p.replace("\n25555,name 25555,", "\n25555,name X,")).unwrap();
    let out = tmp.path().join("out");
    Run::diff(&commented, &plain)
        .args(["--comment", "#"])
        .output_dir(&out)
        .exits(1);
    let ev = read_parquet(&out.join("source_only.parquet"));
    let b = &ev[0];
    let name = b.column_by_name("name").unwrap();
    assert_eq!(
        arrow::util::display::array_value_to_string(name, 0).unwrap(),
        "name 25555"
    );
}

/// `recon diff` of `dir` (a directory of differently typed files) against `want`.
fn typed_files(dir: &Path, files: &[(&str, ArrayRef)]) {
    fs::create_dir_all(dir).unwrap();
    for (name, column) in files {
        let batch = RecordBatch::try_from_iter([("v", column.clone())]).unwrap();
        if name.ends_with(".arrow") {
            let mut w = arrow::ipc::writer::FileWriter::try_new(
                File::create(dir.join(name)).unwrap(),
                &batch.schema(),
            )
            .unwrap();
            w.write(&batch).unwrap();
            w.finish().unwrap();
        } else {
            write_parquet(&dir.join(name), &batch, 2);
        }
    }
}

fn decimals(values: &[i128], precision: u8) -> ArrayRef {
    Arc::new(
        Decimal128Array::from(values.to_vec())
            .with_precision_and_scale(precision, 2)
            .unwrap(),
    )
}

#[test]
fn directory_of_decimal_precisions_reads_as_the_wider_type() {
    let tmp = TempDir::new().unwrap();
    let dir = tmp.path().join("amounts");
    typed_files(
        &dir,
        &[
            ("a.parquet", decimals(&[100, 250, -1], 18)),
            ("b.parquet", decimals(&[9_999_999_999_999_999_999], 19)),
            ("c.parquet", decimals(&[7, 8], 18)),
        ],
    );
    let want = tmp.path().join("want.parquet");
    let all = decimals(&[100, 250, -1, 9_999_999_999_999_999_999, 7, 8], 19);
    write_parquet(
        &want,
        &RecordBatch::try_from_iter([("v", all)]).unwrap(),
        100,
    );
    Run::diff(&dir, &want).exits(0);
    recon(["schema"])
        .arg(&dir)
        .arg(&want)
        .exits(0)
        .stdout_has("Decimal128(19, 2)");
    // A changed value in a narrower file is found, and its evidence is
    // fetched through the same conversion.
    let changed = tmp.path().join("changed.parquet");
    let all = decimals(&[100, 250, -2, 9_999_999_999_999_999_999, 7, 8], 19);
    write_parquet(
        &changed,
        &RecordBatch::try_from_iter([("v", all)]).unwrap(),
        100,
    );
    let out = tmp.path().join("out");
    Run::diff(&dir, &changed).output_dir(&out).exits(1);
    let rows = read_parquet(&out.join("source_only.parquet"));
    let v = rows[0]
        .column_by_name("v")
        .unwrap()
        .as_any()
        .downcast_ref::<Decimal128Array>()
        .unwrap();
    assert_eq!((v.value(0), v.precision()), (-1, 19));
}

#[test]
fn directory_of_layouts_and_widths_reads_as_one_type() {
    use arrow::array::{
        Float32Array, Float64Array, Int64Array, LargeStringArray, StringViewArray, UInt32Array,
    };
    let tmp = TempDir::new().unwrap();
    // Strings in three layouts, Parquet and Arrow IPC alike.
    let s = |v: &[&str]| -> ArrayRef { Arc::new(StringArray::from(v.to_vec())) };
    let want = tmp.path().join("strings.parquet");
    write_parquet(
        &want,
        &RecordBatch::try_from_iter([("v", s(&["a", "b", "c", "d"]))]).unwrap(),
        10,
    );
    for ext in ["parquet", "arrow"] {
        let dir = tmp.path().join(format!("strings_{ext}"));
        typed_files(
            &dir,
            &[
                (&format!("1.{ext}"), s(&["a"])),
                (
                    &format!("2.{ext}"),
                    Arc::new(LargeStringArray::from(vec!["b", "c"])),
                ),
                (
                    &format!("3.{ext}"),
                    Arc::new(StringViewArray::from(vec!["d"])),
                ),
            ],
        );
        Run::diff(&dir, &want).exits(0);
    }
    // u32, i32 and i64 files: every value fits i64.
    let dir = tmp.path().join("ints");
    typed_files(
        &dir,
        &[
            ("1.arrow", Arc::new(UInt32Array::from(vec![u32::MAX]))),
            ("2.arrow", Arc::new(Int32Array::from(vec![-5]))),
            ("3.arrow", Arc::new(Int64Array::from(vec![1i64 << 40]))),
        ],
    );
    let want = tmp.path().join("ints.parquet");
    let all: ArrayRef = Arc::new(Int64Array::from(vec![u32::MAX as i64, -5, 1 << 40]));
    write_parquet(
        &want,
        &RecordBatch::try_from_iter([("v", all)]).unwrap(),
        10,
    );
    Run::diff(&dir, &want).exits(0);
    // float32 into float64: exact.
    let dir = tmp.path().join("floats");
    typed_files(
        &dir,
        &[
            ("1.parquet", Arc::new(Float32Array::from(vec![0.1f32]))),
            ("2.parquet", Arc::new(Float64Array::from(vec![0.1f64]))),
        ],
    );
    let want = tmp.path().join("floats.parquet");
    let all: ArrayRef = Arc::new(Float64Array::from(vec![0.1f32 as f64, 0.1]));
    write_parquet(
        &want,
        &RecordBatch::try_from_iter([("v", all)]).unwrap(),
        10,
    );
    Run::diff(&dir, &want).exits(0);
}

#[test]
fn lossy_type_difference_is_refused_naming_both_files() {
    use arrow::array::{Float64Array, Int64Array, UInt64Array};
    let tmp = TempDir::new().unwrap();
    let want = tmp.path().join("want.parquet");
    write_parquet(&want, &common::kv_batch(&[(Some("a"), Some(1))]), 10);
    for (case, second) in [
        ("float", Arc::new(Float64Array::from(vec![0.5])) as ArrayRef),
        (
            "unsigned",
            Arc::new(UInt64Array::from(vec![u64::MAX])) as ArrayRef,
        ),
        ("scale", {
            Arc::new(
                Decimal128Array::from(vec![1])
                    .with_precision_and_scale(10, 3)
                    .unwrap(),
            ) as ArrayRef
        }),
    ] {
        let dir = tmp.path().join(case);
        let first: ArrayRef = if case == "scale" {
            decimals(&[1], 10)
        } else {
            Arc::new(Int64Array::from(vec![1]))
        };
        typed_files(
            &dir,
            &[("a.parquet", first.clone()), ("b.parquet", second.clone())],
        );
        Run::diff(&dir, &want)
            .fails_with("a.parquet")
            .stderr_has("b.parquet")
            .stderr_has(first.data_type().to_string())
            .stderr_has(second.data_type().to_string())
            .one_line_error();
    }
}

/// `skip_rows` and `comment` in a `--rules` file (and a batch pair's
/// `rules_file`), as the flags give them; a flag wins over the file.
#[test]
fn skip_rows_and_comment_from_a_rules_file() {
    let fx = |n: &str| common::fixture(&format!("csv_preamble/{n}"));
    let (titled, plain) = (fx("customers_title.csv"), fx("customers.csv"));
    let tmp = TempDir::new().unwrap();
    let rules = tmp.path().join("legacy.toml");
    fs::write(&rules, "source_skip_rows = 1\ncomment = \"#\"\n").unwrap();
    Run::diff(&titled, &plain)
        .arg("--rules")
        .arg(&rules)
        .exits(0);
    // The flag wins: skipping nothing leaves the title as the header.
    Run::diff(&titled, &plain)
        .arg("--rules")
        .arg(&rules)
        .args(["--source-skip-rows", "0"])
        .exits(2);
    // A batch pair's rules file.
    let batch = tmp.path().join("b.toml");
    fs::write(
        &batch,
        format!(
            "[[pair]]\nname = \"titled\"\nsource = \"{}\"\ntarget = \"{}\"\nrules_file = \"legacy.toml\"\n",
            titled.display(),
            plain.display()
        ),
    )
    .unwrap();
    recon(["batch"])
        .arg(&batch)
        .exits(0)
        .stdout_has("titled  pass");
}
