//! Fingerprints: the spec's test vectors, stability across everything that
//! is not a value, sensitivity to every kind of drift, groups, refusals.

use crate::common;

use std::path::{Path, PathBuf};
use std::sync::Arc;

use arrow::array::{
    ArrayRef, Date32Array, Decimal128Array, Int32Array, Int64Array, RecordBatch, StringArray,
};
use common::*;
use serde_json::Value;

/// `recon fingerprint` as JSON, without the `table` field (a path).
fn fp(table: &Path, extra: &[&str]) -> Value {
    let out = recon(["fingerprint"]).arg(table).args(extra).exits(0);
    let mut v: Value = serde_json::from_str(&out.stdout).unwrap();
    v.as_object_mut().unwrap().remove("table");
    v
}

fn save(dir: &Path, name: &str, v: &Value) -> PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, serde_json::to_string(v).unwrap()).unwrap();
    p
}

/// `recon compare-fingerprints --json` on two fingerprints.
fn compare(dir: &Path, a: &Value, b: &Value) -> (i32, Value) {
    let (pa, pb) = (save(dir, "a.json", a), save(dir, "b.json", b));
    let out = recon(["compare-fingerprints"])
        .json()
        .arg(&pa)
        .arg(&pb)
        .run();
    (out.code, out.report.unwrap_or(Value::Null))
}

#[test]
fn the_demo_fingerprint_is_the_specs_test_vector() {
    let v = fp(&fixture("demo/source.parquet"), &[]);
    assert_eq!(v["recon_fingerprint_version"], 1);
    assert_eq!(v["encoding_version"], 2);
    assert_eq!(v["columns"][0]["name"], "amount");
    assert_eq!(v["columns"][1]["class"], "String");
    let t = &v["total"];
    assert_eq!(t["rows"], 4);
    assert_eq!(t["row_sum"], "84708a5dfc250ab4c5770b5645e4ec10");
    assert_eq!(t["row_mix"], 2252679656846208895u64);
    assert_eq!(t["columns"][0]["non_null"], 4);
    assert_eq!(t["columns"][0]["sum"], "c10a296d5baccf7d2eb6b42bbaa360b6");
    assert_eq!(t["columns"][1]["non_null"], 3);
    assert_eq!(t["columns"][1]["sum"], "9935345693f3d32e4a10cbfd6b3a13e7");
}

/// Rows of (k, amount cents, note, day).
type Row = (i64, i128, Option<String>, i32);

fn rows(n: i64) -> Vec<Row> {
    (0..n)
        .map(|i| {
            let note = if i % 7 == 0 {
                None
            } else {
                Some(format!("n{}", i % 13))
            };
            (i, (i * 37 % 1000) as i128, note, 19_000 + (i % 5) as i32)
        })
        .collect()
}

/// A batch with k as int64 (or int32), amount as decimal(p, s), columns in
/// the given order.
fn batch(rows: &[Row], narrow: bool, wide_decimal: bool, reversed: bool) -> RecordBatch {
    let k: ArrayRef = if narrow {
        Arc::new(Int32Array::from(
            rows.iter().map(|r| r.0 as i32).collect::<Vec<_>>(),
        ))
    } else {
        Arc::new(Int64Array::from(
            rows.iter().map(|r| r.0).collect::<Vec<_>>(),
        ))
    };
    let amount: ArrayRef = if wide_decimal {
        Arc::new(
            Decimal128Array::from(rows.iter().map(|r| r.1 * 10_000).collect::<Vec<_>>())
                .with_precision_and_scale(38, 6)
                .unwrap(),
        )
    } else {
        Arc::new(
            Decimal128Array::from(rows.iter().map(|r| r.1).collect::<Vec<_>>())
                .with_precision_and_scale(18, 2)
                .unwrap(),
        )
    };
    let note: ArrayRef = Arc::new(StringArray::from(
        rows.iter().map(|r| r.2.clone()).collect::<Vec<_>>(),
    ));
    let day: ArrayRef = Arc::new(Date32Array::from(
        rows.iter().map(|r| r.3).collect::<Vec<_>>(),
    ));
    let mut cols = vec![("k", k), ("amount", amount), ("note", note), ("day", day)];
    if reversed {
        cols.reverse();
    }
    RecordBatch::try_from_iter(cols).unwrap()
}

fn write_csv(path: &Path, rows: &[Row]) {
    let mut s = String::from("k,amount,note,day\n");
    for r in rows {
        let day = chrono::NaiveDate::from_ymd_opt(1970, 1, 1).unwrap()
            + chrono::Duration::days(r.3 as i64);
        s.push_str(&format!(
            "{},{}.{:02},{},{}\n",
            r.0,
            r.1 / 100,
            r.1 % 100,
            r.2.clone().unwrap_or_default(),
            day
        ));
    }
    std::fs::write(path, s).unwrap();
}

#[test]
fn fingerprints_do_not_depend_on_anything_but_the_values() {
    let dir = tempfile::tempdir().unwrap();
    let base = rows(3000);
    let plain = dir.path().join("plain.parquet");
    write_parquet(&plain, &batch(&base, false, false, false), 1000);
    let want = fp(&plain, &["--by", "day"]);
    assert_eq!(want["groups"].as_array().unwrap().len(), 5);
    // Shuffled rows, other row groups, int32 keys, decimal(38,6), other
    // column order.
    let mut shuffled = base.clone();
    shuffled.reverse();
    shuffled.swap(5, 2000);
    let other = dir.path().join("other.parquet");
    write_parquet(&other, &batch(&shuffled, true, true, true), 333);
    assert_eq!(fp(&other, &["--by", "day"]), want);
    // Grouped by a decimal column stored at two scales: the groups' text
    // differs ("0.37" vs "0.370000"), their value digests do not.
    let (narrow_by, wide_by) = (
        fp(&plain, &["--by", "amount"]),
        fp(&other, &["--by", "amount"]),
    );
    assert_ne!(narrow_by, wide_by);
    let (code, c) = compare(dir.path(), &narrow_by, &wide_by);
    assert_eq!(code, 0, "{c}");
    // Another compression and dictionary setting.
    let zstd = dir.path().join("zstd.parquet");
    let props = parquet::file::properties::WriterProperties::builder()
        .set_compression(parquet::basic::Compression::ZSTD(Default::default()))
        .set_dictionary_enabled(false)
        .set_max_row_group_row_count(Some(512))
        .build();
    let b = batch(&base, false, false, false);
    let mut w = parquet::arrow::ArrowWriter::try_new(
        std::fs::File::create(&zstd).unwrap(),
        b.schema(),
        Some(props),
    )
    .unwrap();
    w.write(&b).unwrap();
    w.close().unwrap();
    assert_eq!(fp(&zstd, &["--by", "day"]), want);
    // Split into two files of a directory, read on one and on three threads.
    let split = dir.path().join("split");
    std::fs::create_dir(&split).unwrap();
    write_parquet(
        &split.join("a.parquet"),
        &batch(&base[..1234], false, false, false),
        100,
    );
    write_parquet(
        &split.join("b.parquet"),
        &batch(&base[1234..], false, false, false),
        7000,
    );
    assert_eq!(fp(&split, &["--by", "day", "-j", "1"]), want);
    assert_eq!(fp(&split, &["--by", "day", "-j", "3"]), want);
    // A CSV extract typed like its Parquet twin (NULL notes are empty fields).
    let csv = dir.path().join("extract.csv");
    write_csv(&csv, &base);
    let like = plain.to_str().unwrap();
    assert_eq!(fp(&csv, &["--by", "day", "--schema-like", like]), want);
    // Untyped, the extract is refused when compared, naming the fix.
    let untyped = fp(&csv, &["--by", "day"]);
    let (code, _) = compare(dir.path(), &untyped, &want);
    assert_eq!(code, 2);
}

#[test]
fn every_kind_of_drift_shows() {
    let dir = tempfile::tempdir().unwrap();
    let base = rows(500);
    let path = dir.path().join("t.parquet");
    let fingerprint = |r: &[Row]| {
        write_parquet(&path, &batch(r, false, false, false), 128);
        fp(&path, &["--by", "day"])
    };
    let want = fingerprint(&base);
    let differing = |r: &[Row]| {
        let (code, c) = compare(dir.path(), &want, &fingerprint(r));
        assert_eq!(code, 1, "{c}");
        c
    };
    // One changed value.
    let mut one = base.clone();
    one[10].1 += 1;
    let c = differing(&one);
    assert_eq!(
        c["total"]["columns_differing"],
        serde_json::json!(["amount"])
    );
    // A NULL turned into ''.
    let mut empty = base.clone();
    empty[7].2 = Some(String::new());
    let c = differing(&empty);
    assert_eq!(c["total"]["columns_differing"], serde_json::json!(["note"]));
    // One duplicate copy moved: row 1 loses its copy, row 2 gains one.
    let mut dups = base.clone();
    dups.push(base[1].clone());
    let mut moved = base.clone();
    moved.push(base[2].clone());
    let (code, c) = compare(dir.path(), &fingerprint(&dups), &fingerprint(&moved));
    assert_eq!(code, 1);
    assert_eq!(c["total"]["source_rows"], c["total"]["target_rows"]);
    assert_eq!(c["total"]["rows_match"], false);
    // Two values swapped between rows: every column keeps its values, the
    // rows do not.
    let mut swapped = base.clone();
    let (a, b) = (swapped[3].1, swapped[4].1);
    swapped[3].1 = b;
    swapped[4].1 = a;
    let c = differing(&swapped);
    assert_eq!(c["total"]["columns_differing"], serde_json::json!([]));
    assert_eq!(c["total"]["rows_match"], false);
    // A row moved from one business date to another: two groups differ.
    let mut day = base.clone();
    day[0].3 += 1;
    let c = differing(&day);
    let groups = c["groups_differing"].as_array().unwrap();
    assert_eq!(groups.len(), 2);
    assert!(groups.iter().all(|g| g["columns_differing"]
        .as_array()
        .unwrap()
        .iter()
        .any(|x| x == "day")));
}

#[test]
fn a_group_on_one_side_only_and_the_text_summary() {
    let dir = tempfile::tempdir().unwrap();
    let base = rows(100);
    let (s, t) = (dir.path().join("s.parquet"), dir.path().join("t.parquet"));
    write_parquet(&s, &batch(&base, false, false, false), 100);
    let fewer: Vec<Row> = base.iter().filter(|r| r.3 != 19_004).cloned().collect();
    write_parquet(&t, &batch(&fewer, false, false, false), 100);
    let a = save(dir.path(), "s.json", &fp(&s, &["--by", "day"]));
    let b = save(dir.path(), "t.json", &fp(&t, &["--by", "day"]));
    recon(["compare-fingerprints"])
        .arg(&a)
        .arg(&b)
        .exits(1)
        .stdout_has("groups_differing        1 of 5 (day)")
        .stdout_has("day=2022-01-12: only in source (20 rows)");
    // diff --quick gives the same verdict in one pass per side.
    Run::diff(&s, &t)
        .args(["--quick", "--by", "day"])
        .exits(1)
        .stdout_has("only in source (20 rows)");
    Run::diff(&s, &s)
        .arg("--quick")
        .exits(0)
        .stdout_has("fingerprints_match      true");
}

#[test]
fn fingerprints_made_differently_are_refused_with_the_reason() {
    let dir = tempfile::tempdir().unwrap();
    let t = dir.path().join("t.parquet");
    write_parquet(&t, &batch(&rows(50), false, false, false), 100);
    let plain = fp(&t, &[]);
    let trimmed = fp(&t, &["--trim", "note"]);
    let by = fp(&t, &["--by", "day"]);
    for (other, msg) in [
        (&trimmed, "normalized differently"),
        (&by, "grouped by nothing and by day"),
    ] {
        let (a, b) = (
            save(dir.path(), "a.json", &plain),
            save(dir.path(), "b.json", other),
        );
        recon(["compare-fingerprints"])
            .arg(&a)
            .arg(&b)
            .fails_with(msg);
    }
    let mut old = plain.clone();
    old["encoding_version"] = 1.into();
    let (a, b) = (
        save(dir.path(), "a.json", &plain),
        save(dir.path(), "b.json", &old),
    );
    recon(["compare-fingerprints"])
        .arg(&a)
        .arg(&b)
        .fails_with("encoding version 1");
}

#[test]
fn a_full_diff_breaks_unmatched_rows_down_by_group() {
    let dir = tempfile::tempdir().unwrap();
    let base = rows(200);
    let (s, t) = (dir.path().join("s.parquet"), dir.path().join("t.parquet"));
    write_parquet(&s, &batch(&base, false, false, false), 64);
    let mut drift = base.clone();
    drift[0].1 += 1; // day 19000
    drift[6].1 += 1; // day 19001
    drift[11].2 = Some("changed".into()); // day 19001
    write_parquet(&t, &batch(&drift, false, false, false), 64);
    let out = Run::diff(&s, &t).json().args(["--by", "day"]).exits(1);
    let r = out.report();
    let groups = &r["by_group"]["groups"];
    assert_eq!(
        groups,
        &serde_json::json!([
            {"value": "2022-01-08", "source_only": 1, "target_only": 1},
            {"value": "2022-01-09", "source_only": 2, "target_only": 2}
        ])
    );
    // The drifting columns come from the same 128-bit column digests a
    // fingerprint holds.
    assert_eq!(
        r["column_drift"]["differing"],
        serde_json::json!(["amount", "note"])
    );
    Run::diff(&s, &t)
        .args(["--by", "day", "--key", "k"])
        .fails_with("--by with --key is not built yet");
}

/// `recon diff --quick` used to drop options silently: with
/// `--max-unmatched-rows 5` it still exited 1, wrote no `--report` or
/// `--html`, and took `--key` and `--tolerance` without applying them.
/// Every option now applies or is refused with a one-line error saying why.
#[test]
fn quick_refuses_every_option_it_cannot_apply() {
    let (s, t) = (
        fixture("demo/source.parquet"),
        fixture("demo/target.parquet"),
    );
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let out = out.to_str().unwrap();
    let rules = dir.path().join("keyed.toml");
    std::fs::write(&rules, "key = [\"id\"]\n").unwrap();
    for (args, flag) in [
        (vec!["--max-unmatched-rows", "5"], "--max-unmatched-rows 5"),
        (
            vec!["--max-unmatched-ratio", "0.1"],
            "--max-unmatched-ratio 0.1",
        ),
        (vec!["--max-changed", "1"], "--max-changed 1"),
        (vec!["--key", "id"], "--key"),
        (vec!["--tolerance", "amount=0.01"], "--tolerance"),
        (vec!["--diff-columns", "all"], "--diff-columns"),
        (vec!["--output", out], "--output"),
        (vec!["--sample", "3"], "--sample"),
        (vec!["--passes", "1"], "--passes"),
        (vec!["--memory-limit", "1GiB"], "--memory-limit"),
        (vec!["--rules", rules.to_str().unwrap()], "a key"),
    ] {
        let o = Run::diff(&s, &t).arg("--quick").args(&args).run();
        let err = &o.stderr;
        assert_eq!(o.code, 2, "{args:?}: {err}");
        assert_eq!(err.trim_end().lines().count(), 1, "{args:?}: {err}");
        assert!(err.contains(flag), "{args:?}: {err}");
        assert!(
            err.contains("--quick") || err.contains("fingerprints"),
            "{err}"
        );
    }
    assert!(!Path::new(out).exists());
}

#[test]
fn quick_writes_its_report_and_html_and_gates_on_a_zero_threshold() {
    let dir = tempfile::tempdir().unwrap();
    let (report, html) = (dir.path().join("r.json"), dir.path().join("r.html"));
    let (s, t) = (
        fixture("demo/source.parquet"),
        fixture("demo/target.parquet"),
    );
    let run = Run::diff(&s, &t)
        .args(["--quick", "--max-unmatched-rows", "0", "--passes", "auto"])
        .report_file(&report)
        .arg("--html")
        .arg(&html)
        .args(["--progress", "always", "-q"])
        .exits(1);
    assert_eq!(run.stdout, "");
    let r = run.report();
    assert_eq!(r["fingerprints_match"], false);
    assert!(!r["total"]["columns_differing"]
        .as_array()
        .unwrap()
        .is_empty());
    let page = std::fs::read_to_string(&html).unwrap();
    assert!(page.contains("DRIFT (fingerprints)"), "{page}");
    assert!(page.contains("<h3>Fingerprints</h3>"));
    // The same table: a match, exit 0, under a threshold of 0.
    let run = Run::diff(&s, &s)
        .args(["--quick", "--max-unmatched-ratio", "0"])
        .report_file(&report)
        .exits(0);
    let r = run.report();
    assert_eq!(r["fingerprints_match"], true);
}

#[test]
fn quick_batch_pairs_refuse_thresholds_fingerprints_cannot_decide() {
    let dir = tempfile::tempdir().unwrap();
    let d = |p: &str| fixture(p).display().to_string();
    let file = dir.path().join("b.toml");
    std::fs::write(
        &file,
        format!(
            "[defaults.thresholds]\nmax_unmatched_rows = 5\n[[pair]]\nname = \"q\"\nsource = \"{}\"\ntarget = \"{}\"\nmode = \"quick\"\n",
            d("demo/source.parquet"),
            d("demo/target.parquet")
        ),
    )
    .unwrap();
    let o = recon(["batch"]).arg(&file).run();
    let err = &o.stderr;
    assert_eq!(o.code, 2, "{err}");
    assert!(
        err.contains("pair \"q\"") && err.contains("max_unmatched_rows = 5"),
        "{err}"
    );
}

#[test]
fn target_side_flags_are_refused_not_dropped() {
    // fingerprint reads one table: a --target-* flag would be silently
    // ignored, so it is an error naming the flag.
    let s = fixture("demo/source.parquet");
    for flag in [
        ["--target-format", "csv"],
        ["--target-skip-rows", "2"],
        ["--target-query", "select 1"],
    ] {
        recon(["fingerprint"])
            .arg(&s)
            .args(flag)
            .fails_with(format!("{}: recon fingerprint reads one table", flag[0]));
    }
    // The source-side and unsided forms still apply.
    recon(["fingerprint"])
        .arg(&s)
        .args(["--source-format", "parquet"])
        .exits(0);
}

/// Sorted (key, value) rows of a Parquet file of `kv_batch` rows.
fn kv_rows(path: &Path) -> Vec<(Option<String>, Option<i64>)> {
    use arrow::array::{Array, AsArray};
    let mut out = Vec::new();
    for b in read_parquet(path) {
        let k = arrow::compute::cast(b.column(0), &arrow::datatypes::DataType::Utf8).unwrap();
        let n: &Int64Array = b.column(1).as_primitive();
        for i in 0..b.num_rows() {
            let key = (!k.is_null(i)).then(|| k.as_string::<i32>().value(i).to_string());
            out.push((key, (!n.is_null(i)).then(|| n.value(i))));
        }
    }
    out.sort();
    out
}

#[test]
fn two_machines_name_the_differing_rows_and_the_extracts_diff_like_the_tables() {
    let tmp = tempfile::tempdir().unwrap();
    // Two "machines": each folder holds one table and what is made there.
    let (here, there) = (tmp.path().join("here"), tmp.path().join("there"));
    std::fs::create_dir_all(&here).unwrap();
    std::fs::create_dir_all(&there).unwrap();
    let base: Vec<(Option<String>, Option<i64>)> = (0..50_000i64)
        .map(|i| {
            (
                (i % 17 != 0).then(|| format!("k{}", i % 9_000)),
                Some(i % 20_000),
            )
        })
        .collect();
    let mut drifted = base.clone();
    for r in drifted.iter_mut().step_by(997).take(40) {
        r.1 = r.1.map(|v| v + 1); // changed rows
    }
    drifted.truncate(49_990); // lost rows (some duplicated elsewhere)
    drifted.extend(std::iter::repeat_n(base[3].clone(), 20)); // a job run 21 times
    drifted.push((None, None)); // a row of NULLs
    let write = |p: &Path, r: &[(Option<String>, Option<i64>)]| {
        let refs: Vec<(Option<&str>, Option<i64>)> =
            r.iter().map(|(k, n)| (k.as_deref(), *n)).collect();
        write_parquet(p, &kv_batch(&refs), 7_000);
    };
    let (s, t) = (here.join("orders.parquet"), there.join("orders.parquet"));
    write(&s, &base);
    write(&t, &drifted);
    let (fs, ft) = (here.join("orders.fp.json"), there.join("orders.fp.json"));
    recon(["fingerprint", "--sketch", "500", "-o"])
        .arg(&fs)
        .arg(&s)
        .exits(0);
    recon(["fingerprint", "--sketch", "200", "-o"])
        .arg(&ft)
        .arg(&t)
        .exits(0);
    assert!(here.join("orders.fp.sketch").is_file());
    let sketch_ref = read_json(&fs)["sketch"].clone();
    assert_eq!(sketch_ref["file"], "orders.fp.sketch", "{sketch_ref}");
    assert_eq!(sketch_ref["sha256"].as_str().unwrap().len(), 64);
    // The files travel: compare them side by side (a sketch sized for 200
    // and one for 500 share their smaller levels).
    let meet = tmp.path().join("meet");
    std::fs::create_dir_all(&meet).unwrap();
    for (from, name) in [(&here, "a"), (&there, "b")] {
        for ext in ["json", "sketch"] {
            std::fs::copy(
                from.join(format!("orders.fp.{ext}")),
                meet.join(format!("{name}.fp.{ext}")),
            )
            .unwrap();
        }
    }
    let (fa, fb) = (meet.join("a.fp.json"), meet.join("b.fp.json"));
    let digests = meet.join("digests.json");
    let out = recon(["compare-fingerprints", "--digests"])
        .arg(&digests)
        .json()
        .arg(&fa)
        .arg(&fb)
        .run();
    assert_eq!(out.code, 1, "{}", out.stderr);
    let sk = &out.report()["sketch"];
    assert_eq!(sk["decoded"], true, "{sk}");
    // The direct diff, for the answer the extracts must give.
    let direct = tmp.path().join("direct");
    let d = Run::diff(&s, &t).json().output_dir(&direct).run();
    assert_eq!(d.code, 1);
    let d = d.report().clone();
    assert_eq!(
        sk["source_only_copies"], d["source_only_rows"],
        "{sk} vs the diff's {}",
        d["source_only_rows"]
    );
    assert_eq!(sk["target_only_copies"], d["target_only_rows"]);
    // Each machine extracts its rows with the digests file.
    let (xs, xt) = (here.join("x.parquet"), there.join("x.parquet"));
    recon(["extract", "--digests"])
        .arg(&digests)
        .arg("--like")
        .arg(&fs)
        .arg("-o")
        .arg(&xs)
        .arg(&s)
        .exits(0)
        .stderr_has("of the source");
    recon(["extract", "--digests"])
        .arg(&digests)
        .arg("--like")
        .arg(&ft)
        .arg("-o")
        .arg(&xt)
        .arg(&t)
        .exits(0)
        .stderr_has("of the target");
    assert!(parquet_rows(&xs) < 200 && parquet_rows(&xt) < 200);
    let small = tmp.path().join("small");
    let x = Run::diff(&xs, &xt).json().output_dir(&small).run();
    assert_eq!(x.code, 1);
    let x = x.report().clone();
    for k in [
        "source_only_rows",
        "target_only_rows",
        "source_only_extra_copy_rows",
        "target_only_extra_copy_rows",
    ] {
        assert_eq!(x[k], d[k], "{k}");
    }
    for f in ["source_only.parquet", "target_only.parquet"] {
        assert_eq!(kv_rows(&small.join(f)), kv_rows(&direct.join(f)), "{f}");
    }
    // The other table's fingerprint, or a table changed since, is refused.
    recon(["extract", "--digests"])
        .arg(&digests)
        .arg("--like")
        .arg(&ft)
        .arg("-o")
        .arg(tmp.path().join("no.parquet"))
        .arg(&s)
        .fails_with("changed since its fingerprint");
    assert!(!tmp.path().join("no.parquet").exists());
}

#[test]
fn a_sketch_too_small_says_so_and_estimates_the_differences() {
    let tmp = tempfile::tempdir().unwrap();
    // Fingerprints (default sketch: 2,000 rows) of 20,000 rows and of the
    // same with every `every`-th value changed.
    let pair = |every: i64| -> (PathBuf, PathBuf, PathBuf) {
        let rows = |shift: i64| -> Vec<(Option<String>, Option<i64>)> {
            (0..20_000i64)
                .map(|i| {
                    (
                        Some(format!("k{i}")),
                        Some(i + shift * i64::from(i % every == 0)),
                    )
                })
                .collect()
        };
        let dir = tmp.path().join(every.to_string());
        std::fs::create_dir_all(&dir).unwrap();
        let (s, fa, fb) = (
            dir.join("s.parquet"),
            dir.join("a.json"),
            dir.join("b.json"),
        );
        for (r, table, fp) in [(rows(0), &s, &fa), (rows(1), &dir.join("t.parquet"), &fb)] {
            let refs: Vec<(Option<&str>, Option<i64>)> =
                r.iter().map(|(k, n)| (k.as_deref(), *n)).collect();
            write_parquet(table, &kv_batch(&refs), 5_000);
            recon(["fingerprint", "--sketch", "-o"])
                .arg(fp)
                .arg(table)
                .exits(0);
        }
        (s, fa, fb)
    };
    // 1,539 rows changed: 3,078 differing digests, a few more than the
    // sketch holds; its empty cells estimate how many.
    let (_, fa, fb) = pair(13);
    let out = recon(["compare-fingerprints"]).arg(&fa).arg(&fb).exits(1);
    out.stdout_has("too small to name the differing rows: about");
    let out = recon(["compare-fingerprints"])
        .json()
        .arg(&fa)
        .arg(&fb)
        .run();
    let sk = &out.report()["sketch"];
    assert_eq!(sk["decoded"], false);
    assert_eq!(sk["sized_for"], 2000);
    assert_eq!(sk["estimate_is_lower_bound"], false);
    let estimate = sk["estimate"].as_u64().unwrap();
    assert!((2_500..4_000).contains(&estimate), "{sk}");
    let digests = tmp.path().join("d.json");
    recon(["compare-fingerprints", "--digests"])
        .arg(&digests)
        .arg(&fa)
        .arg(&fb)
        .fails_with("too small");
    assert!(!digests.exists());
    // 10,000 rows changed fill every cell: only a lower bound is known.
    let (s, fa, fb) = pair(2);
    let out = recon(["compare-fingerprints"])
        .json()
        .arg(&fa)
        .arg(&fb)
        .run();
    let sk = &out.report()["sketch"];
    assert_eq!(sk["estimate_is_lower_bound"], true, "{sk}");
    assert!(sk["estimate"].as_u64().unwrap() > 5_000, "{sk}");
    // Without -o there is nowhere to put the sketch.
    recon(["fingerprint", "--sketch", "10"])
        .arg(&s)
        .fails_with("give -o FILE");
    // A sketch that is not the one referenced is refused.
    let dir = fa.parent().unwrap();
    std::fs::copy(dir.join("b.sketch"), dir.join("a.sketch")).unwrap();
    recon(["compare-fingerprints"])
        .arg(&fa)
        .arg(&fb)
        .fails_with("SHA-256");
}
