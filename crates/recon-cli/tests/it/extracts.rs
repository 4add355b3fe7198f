//! Extracts as legacy databases write them, against their Parquet twins:
//! sniffed dialects, text rules before typing, date patterns, encodings,
//! and the hints that lead from an error to a working command.

use crate::common;

use std::fs;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use arrow::array::{
    ArrayRef, Date32Array, Int64Array, RecordBatch, StringArray, Time64MicrosecondArray,
    TimestampMicrosecondArray,
};
use common::{recon, Run};
use tempfile::TempDir;

fn twin(path: &Path, columns: Vec<(&str, ArrayRef)>) -> PathBuf {
    let batch = RecordBatch::try_from_iter(columns).unwrap();
    common::write_parquet(path, &batch, 100);
    path.to_path_buf()
}

/// (k, n): "a" 1, "b" NULL, "x;y|z" 3, "it's" 4.
fn kv_twin(dir: &Path) -> PathBuf {
    twin(
        &dir.join("twin.parquet"),
        vec![
            (
                "k",
                Arc::new(StringArray::from(vec!["a", "b", "x;y|z", "it's"])) as ArrayRef,
            ),
            (
                "n",
                Arc::new(Int64Array::from(vec![Some(1), None, Some(3), Some(4)])),
            ),
        ],
    )
}

#[test]
fn each_dialect_is_sniffed_and_compares_against_the_twin_with_no_flags() {
    let tmp = TempDir::new().unwrap();
    let pq = kv_twin(tmp.path());
    for (name, text, dialect) in [
        (
            "comma.csv",
            "k,n\na,1\nb,\nx;y|z,3\nit's,4\n",
            "delimiter ',' (sniffed), quote '\"' (sniffed), header (sniffed)",
        ),
        (
            "semicolon.csv",
            "\"k\";\"n\"\n\"a\";\"1\"\n\"b\";\n\"x;y|z\";\"3\"\n\"it's\";\"4\"\n",
            "delimiter ';' (sniffed), quote '\"' (sniffed)",
        ),
        (
            "pipe.csv",
            "k|n\na|1\nb|\n\"x;y|z\"|3\nit's|4\n",
            "delimiter '|' (sniffed)",
        ),
        (
            "tab.csv",
            "k\tn\na\t1\nb\t\nx;y|z\t3\nit's\t4\n",
            "delimiter tab (sniffed)",
        ),
        (
            "single.csv",
            "'k','n'\n'a','1'\n'b',\n'x;y|z','3'\n'it''s','4'\n",
            "quote ''' (sniffed)",
        ),
        (
            "trailing.csv",
            "k|n|\na|1|\nb||\n\"x;y|z\"|3|\nit's|4|\n",
            "trailing delimiter",
        ),
    ] {
        let f = tmp.path().join(name);
        fs::write(&f, text).unwrap();
        let run = Run::diff(&f, &pq)
            .current_dir(tmp.path())
            .report_file("r.json")
            .arg("-q")
            .exits(0);
        let r = run.report();
        let got = r["inputs"]["source"]["dialect"]
            .as_str()
            .unwrap()
            .to_string();
        assert!(got.contains(dialect), "{name}: {got}");
        // The schema screen names the dialect too.
        recon(["schema"])
            .arg(&f)
            .arg(&pq)
            .exits(0)
            .stdout_has(dialect);
    }
    // A change is still found with a sniffed dialect.
    let f = tmp.path().join("drift.csv");
    fs::write(&f, "k;n\na;1\nb;\nx;y|z;3\n").unwrap();
    Run::diff(&f, &pq).exits(2);
    fs::write(&f, "k;n\na;1\nb;\n\"x;y|z\";3\nit's;5\n").unwrap();
    Run::diff(&f, &pq).exits(1);
}

#[test]
fn an_ambiguous_sample_is_refused_naming_the_candidates_and_the_named_flag_works() {
    let tmp = TempDir::new().unwrap();
    let f = tmp.path().join("amounts.csv");
    // No header, decimal commas: ';' and ',' both read two columns on every line.
    fs::write(&f, "1;1,5\n2;2,25\n").unwrap();
    let pq = twin(
        &tmp.path().join("t.parquet"),
        vec![
            ("id", Arc::new(Int64Array::from(vec![1, 2])) as ArrayRef),
            ("amount", Arc::new(StringArray::from(vec!["1,5", "2,25"]))),
        ],
    );
    Run::diff(&f, &pq)
        .fails_with("amounts.csv")
        .stderr_has("';' (2 columns)")
        .stderr_has("',' (2 columns)")
        .stderr_has("pass --delimiter");
    Run::diff(&f, &pq)
        .args(["--delimiter", ";", "--by-position"])
        .exits(0);
}

#[test]
fn a_wrong_sniff_never_makes_a_match_the_right_dialect_would_not() {
    let tmp = TempDir::new().unwrap();
    // A file whose first 256 KiB quote nothing, then a value in needless
    // quotes: quoting reads x, no quoting reads "x". The sample cannot say
    // which, so recon refuses rather than pick the one that matches.
    let mut text = String::from("k,n\n");
    let mut keys = Vec::new();
    for i in 0..20_000 {
        text.push_str(&format!("key{i},{i}\n"));
        keys.push(format!("key{i}"));
    }
    text.push_str("\"x\",20000\n");
    keys.push("x".into());
    let f = tmp.path().join("late.csv");
    fs::write(&f, &text).unwrap();
    let n: Vec<i64> = (0..=20_000).collect();
    let pq = twin(
        &tmp.path().join("t.parquet"),
        vec![
            ("k", Arc::new(StringArray::from(keys)) as ArrayRef),
            ("n", Arc::new(Int64Array::from(n))),
        ],
    );
    Run::diff(&f, &pq)
        .fails_with("line 20002")
        .stderr_has("--quote none");
    // Each answer the user can give is then exact: no quoting sees drift,
    // quoting sees a match.
    Run::diff(&f, &pq).args(["--quote", "none"]).exits(1);
    Run::diff(&f, &pq).args(["--quote", "\""]).exits(0);
    // Quoting a value that needs it (a delimiter inside) is no ambiguity.
    let g = tmp.path().join("needed.csv");
    fs::write(&g, text.replace("\"x\",20000", "\"x,y\",20000")).unwrap();
    Run::diff(&g, &pq).exits(1);

    // A sample that fits one delimiter, and a later line that does not:
    // the line is named, nothing is compared.
    let mut text = String::from("a;b\n");
    for i in 0..20_000 {
        text.push_str(&format!("{i};{i}\n"));
    }
    text.push_str("1,2\n");
    let h = tmp.path().join("later.csv");
    fs::write(&h, &text).unwrap();
    Run::diff(&h, &h).fails_with("line 20002: expected 2 fields, found 1");

    // By position, a header guessed without evidence would drop a row
    // unseen: refused, and either answer then works exactly.
    let a = tmp.path().join("a.csv");
    let b = tmp.path().join("b.csv");
    fs::write(&a, "x,y\nc,d\n").unwrap();
    fs::write(&b, "x,z\nc,d\n").unwrap();
    Run::diff(&a, &b)
        .arg("--by-position")
        .fails_with("pass --header or --no-header");
    Run::diff(&a, &b)
        .args(["--by-position", "--header"])
        .exits(0);
    Run::diff(&a, &b)
        .args(["--by-position", "--no-header"])
        .exits(1);
}

/// The legacy export of the issue: ';'-delimited, every field quoted, ""
/// for NULL, dd/mm/yyyy dates, padded numbers, zone abbreviations and HH:MM
/// times, against its Parquet twin.
fn legacy(dir: &Path, amount_b: &str) -> (PathBuf, PathBuf) {
    let csv = dir.join("export.csv");
    fs::write(
        &csv,
        format!(
            "\"k\";\"n\";\"d\";\"ts\";\"t\"\n\
             \"a\";\" 1992\";\"05/06/2019\";\"05/06/2019 10:00 EST\";\"10:30\"\n\
             \"b\";\"\";\"\";\"\";\"\"\n\
             \"c\";\"{amount_b}\";\"31/12/2020\";\"31/12/2020 23:59 EST\";\"23:59\"\n"
        ),
    )
    .unwrap();
    let day = |y, m, d| {
        (chrono::NaiveDate::from_ymd_opt(y, m, d).unwrap()
            - chrono::NaiveDate::from_ymd_opt(1970, 1, 1).unwrap())
        .num_days() as i32
    };
    let instant = |s: &str| {
        chrono::DateTime::parse_from_rfc3339(s)
            .unwrap()
            .timestamp_micros()
    };
    let pq = twin(
        &dir.join("twin.parquet"),
        vec![
            (
                "k",
                Arc::new(StringArray::from(vec!["a", "b", "c"])) as ArrayRef,
            ),
            (
                "n",
                Arc::new(Int64Array::from(vec![Some(1992), None, Some(7)])),
            ),
            (
                "d",
                Arc::new(Date32Array::from(vec![
                    Some(day(2019, 6, 5)),
                    None,
                    Some(day(2020, 12, 31)),
                ])),
            ),
            (
                "ts",
                Arc::new(
                    TimestampMicrosecondArray::from(vec![
                        Some(instant("2019-06-05T15:00:00Z")),
                        None,
                        Some(instant("2021-01-01T04:59:00Z")),
                    ])
                    .with_timezone("UTC"),
                ),
            ),
            (
                "t",
                Arc::new(Time64MicrosecondArray::from(vec![
                    Some(37_800_000_000),
                    None,
                    Some(86_340_000_000),
                ])),
            ),
        ],
    );
    (csv, pq)
}

#[test]
fn a_fully_quoted_legacy_export_compares_with_the_flags_each_error_names() {
    let tmp = TempDir::new().unwrap();
    let (csv, pq) = legacy(tmp.path(), "7 ");
    // Each run fails on the next thing the file needs, and names the flag;
    // adding it moves on, until the comparison runs.
    let steps: [(&[&str], &str); 4] = [
        (&[], "pass --trim n"),
        (&["--trim", "n"], "pass --quoted-empty-as-null"),
        (&["--quoted-empty-as-null"], "--date-format d=FMT"),
        (
            &["--date-format", "*=%d/%m/%Y"],
            "--timestamp-format ts=FMT",
        ),
    ];
    let mut flags: Vec<&str> = Vec::new();
    for (add, hint) in steps {
        flags.extend_from_slice(add);
        Run::diff(&csv, &pq).args(&flags).fails_with(hint);
    }
    flags.extend_from_slice(&["--timestamp-format", "ts=%d/%m/%Y %H:%M"]);
    // An abbreviation is read only as mapped.
    Run::diff(&csv, &pq).args(&flags).fails_with("EST");
    flags.extend_from_slice(&["--assume-tz", "EST=-05:00"]);
    Run::diff(&csv, &pq).args(&flags).exits(0);
    // The same flags find a changed value.
    let (csv, pq) = legacy(tmp.path(), "8");
    Run::diff(&csv, &pq).args(&flags).exits(1);
}

#[test]
fn date_patterns_read_back_exactly_or_are_refused() {
    let tmp = TempDir::new().unwrap();
    let day = |y, m, d| {
        (chrono::NaiveDate::from_ymd_opt(y, m, d).unwrap()
            - chrono::NaiveDate::from_ymd_opt(1970, 1, 1).unwrap())
        .num_days() as i32
    };
    let pq = twin(
        &tmp.path().join("t.parquet"),
        vec![
            ("id", Arc::new(Int64Array::from(vec![1, 2])) as ArrayRef),
            (
                "d",
                Arc::new(Date32Array::from(vec![day(2019, 6, 5), day(2005, 10, 3)])),
            ),
        ],
    );
    let f = tmp.path().join("d.csv");
    fs::write(&f, "id,d\n1,5/6/2019\n2,3/10/2005\n").unwrap();
    // %d writes 05, so 5 does not read back: refused, with the way out.
    Run::diff(&f, &pq)
        .args(["--date-format", "d=%d/%m/%Y"])
        .fails_with("writes this value as \"05/06/2019\"");
    Run::diff(&f, &pq)
        .args(["--date-format", "d=%-d/%-m/%Y"])
        .exits(0);
    // A pattern must be used: on a number column it is an error, not a no-op.
    Run::diff(&f, &pq)
        .args(["--date-format", "id=%Y"])
        .fails_with("not as a date");
    Run::diff(&f, &pq)
        .args(["--date-format", "d=%Q"])
        .fails_with("not a valid strftime pattern");
    // Text against text: a pattern makes both sides dates, so formats may differ in padding.
    let g = tmp.path().join("g.csv");
    fs::write(&g, "id,d\n2,3/10/2005\n1,5/6/2019\n").unwrap();
    Run::diff(&f, &g)
        .args(["--date-format", "d=%-d/%-m/%Y"])
        .exits(0);
}

#[test]
fn windows_1252_utf_16_and_shift_jis_extracts() {
    let tmp = TempDir::new().unwrap();
    let pq = twin(
        &tmp.path().join("t.parquet"),
        vec![
            (
                "name",
                Arc::new(StringArray::from(vec!["Café", "€uro", "表示"])) as ArrayRef,
            ),
            ("n", Arc::new(Int64Array::from(vec![1, 2, 3]))),
        ],
    );
    let text = "name;n\nCafé;1\n€uro;2\n表示;3\n";
    // windows-1252 cannot write 表示: that file holds the first two rows only.
    let cp = tmp.path().join("cp1252.csv");
    let (bytes, _, unmappable) = encoding_rs::WINDOWS_1252.encode("name;n\nCafé;1\n€uro;2\n");
    assert!(!unmappable);
    fs::write(&cp, &bytes).unwrap();
    Run::diff(&cp, &pq)
        .fails_with("invalid UTF-8")
        .stderr_has("--encoding");
    Run::diff(&cp, &pq)
        .args(["--encoding", "windows-1252"])
        .exits(1)
        .stdout_has("target_only_row_count   1");
    // Shift_JIS: trail bytes can be '|' or '\', so the file is decoded before it is split.
    // (ソ is 83 5C and 表 is 95 5C in Shift_JIS: '\' as a trail byte.)
    let sj = tmp.path().join("sjis.csv");
    let (bytes, _, unmappable) = encoding_rs::SHIFT_JIS.encode("name|n\n表示|1\n\"ソ|\"|2\n");
    assert!(!unmappable);
    fs::write(&sj, &bytes).unwrap();
    let jp = twin(
        &tmp.path().join("jp.parquet"),
        vec![
            (
                "name",
                Arc::new(StringArray::from(vec!["ソ|", "表示"])) as ArrayRef,
            ),
            ("n", Arc::new(Int64Array::from(vec![2, 1]))),
        ],
    );
    Run::diff(&sj, &jp)
        .args(["--encoding", "shift_jis"])
        .exits(0);
    // UTF-16 with a byte-order mark needs no flag.
    let u16 = tmp.path().join("utf16.csv");
    let mut b = vec![0xfe, 0xff];
    for c in text.encode_utf16() {
        b.extend_from_slice(&c.to_be_bytes());
    }
    fs::write(&u16, &b).unwrap();
    Run::diff(&u16, &pq).exits(0);
    // Malformed bytes are refused, never replaced.
    let bad = tmp.path().join("bad16.csv");
    let mut b2 = b.clone();
    let n = b2.len();
    b2[n - 4..n - 2].copy_from_slice(&[0xd8, 0x00]); // a lone surrogate
    fs::write(&bad, &b2).unwrap();
    Run::diff(&bad, &pq).fails_with("not valid UTF-16BE");
}

#[test]
fn empty_part_files_in_a_directory_hold_no_rows() {
    let tmp = TempDir::new().unwrap();
    let dir = tmp.path().join("export");
    fs::create_dir(&dir).unwrap();
    fs::write(dir.join("part-0.csv"), "k,n\na,1\nb,\n").unwrap();
    fs::write(dir.join("part-1.csv"), "").unwrap();
    fs::write(dir.join("part-2.csv"), "k,n\n\"x;y|z\",3\nit's,4\n").unwrap();
    let pq = kv_twin(tmp.path());
    Run::diff(&dir, &pq).exits(0);
}

#[test]
fn a_tpch_lineitem_tbl_against_its_parquet_twin_needs_only_the_flag_its_error_names() {
    use arrow::array::Decimal128Array;
    let tmp = TempDir::new().unwrap();
    let n = 3000usize;
    let day0 = 8035; // 1992-01-01
    let mut tbl = String::new();
    let (mut ok, mut part, mut qty, mut price, mut disc) = (vec![], vec![], vec![], vec![], vec![]);
    let (mut flag, mut ship, mut mode, mut comment) = (vec![], vec![], vec![], vec![]);
    for i in 0..n {
        let (o, p) = (i as i64 / 4 + 1, (i as i64 * 7919) % 200_000 + 1);
        let q = (i % 50 + 1) as i128 * 100;
        let e = (i as i128 * 7_777) % 10_000_000 + 90_000;
        let d = (i % 11) as i128;
        let f = ["A", "N", "R"][i % 3];
        let s = day0 + (i as i32 * 37) % 2500;
        let m = ["AIR", "MAIL", "SHIP", "TRUCK", "REG AIR"][i % 5];
        let c = format!("carefully final deposits; {i} sleep, quickly");
        let date =
            chrono::NaiveDate::from_ymd_opt(1970, 1, 1).unwrap() + chrono::Duration::days(s as i64);
        tbl.push_str(&format!(
            "{o}|{p}|{}.{:02}|{}.{:02}|0.{:02}|{f}|{date}|{m}|{c}|\n",
            q / 100,
            q % 100,
            e / 100,
            e % 100,
            d
        ));
        ok.push(o);
        part.push(p);
        qty.push(q);
        price.push(e);
        disc.push(d);
        flag.push(f);
        ship.push(s);
        mode.push(m);
        comment.push(c);
    }
    let dec = |v: Vec<i128>| -> ArrayRef {
        Arc::new(
            Decimal128Array::from(v)
                .with_precision_and_scale(15, 2)
                .unwrap(),
        )
    };
    let pq = twin(
        &tmp.path().join("lineitem.parquet"),
        vec![
            ("l_orderkey", Arc::new(Int64Array::from(ok)) as ArrayRef),
            ("l_partkey", Arc::new(Int64Array::from(part))),
            ("l_quantity", dec(qty)),
            ("l_extendedprice", dec(price)),
            ("l_discount", dec(disc)),
            ("l_returnflag", Arc::new(StringArray::from(flag))),
            ("l_shipdate", Arc::new(Date32Array::from(ship))),
            ("l_shipmode", Arc::new(StringArray::from(mode))),
            ("l_comment", Arc::new(StringArray::from(comment))),
        ],
    );
    let t = tmp.path().join("lineitem.tbl");
    fs::write(&t, &tbl).unwrap();
    // No flags: one short message naming the one flag.
    Run::diff(&t, &pq)
        .fails_with("share no column names")
        .stderr_has("--by-position");
    Run::diff(&t, &pq).arg("--by-position").exits(0);
    // A changed price is found, by position too.
    fs::write(&t, tbl.replacen("|900.00|", "|900.01|", 1)).unwrap();
    Run::diff(&t, &pq).arg("--by-position").exits(1);
}
