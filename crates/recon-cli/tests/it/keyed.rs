//! Keyed mode (`--key`): every category on the committed fixture through the
//! CLI, the edge cases the issue names, the spill path under a tiny memory
//! limit, and a property test against a naive in-memory keyed diff.

use crate::common;

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;

use arrow::array::{Array, ArrayRef, AsArray, Int64Array, RecordBatch, StringArray};
use common::*;
use proptest::prelude::*;
use recon::config::{AlignOptions, RunSettings};
use recon::{diff, DiffOptions, Passes};
use serde_json::Value;

fn keyed_json(source: &Path, target: &Path, extra: &[&str]) -> (i32, Value) {
    let run = Run::diff(source, target).json().args(extra).run();
    (run.code, run.report().clone())
}

fn orders() -> (std::path::PathBuf, std::path::PathBuf) {
    (
        fixture("keyed/orders_source.parquet"),
        fixture("keyed/orders_target.parquet"),
    )
}

fn categories(r: &Value) -> [u64; 6] {
    [
        "matched_keys",
        "value_mismatch",
        "missing_in_target",
        "missing_in_source",
        "duplicate_keys",
        "null_keys",
    ]
    .map(|k| r[k].as_u64().unwrap_or_else(|| panic!("{k} missing: {r}")))
}

#[test]
fn every_category_on_the_orders_fixture_in_one_and_two_passes() {
    let (s, t) = orders();
    for passes in ["1", "2"] {
        let (code, r) = keyed_json(&s, &t, &["--key", "order_id,line_no", "--passes", passes]);
        assert_eq!(code, 1);
        // (1,1) matched; (1,2), (2,1), (2,2) changed; 3 missing in target;
        // 4 missing in source; 5 and 6 duplicated; (7,NULL) x2 and
        // (NULL,1) have NULL keys.
        assert_eq!(categories(&r), [1, 3, 1, 1, 2, 3], "passes {passes}");
        assert_eq!(r["column_mismatches"]["amount"], 3);
        assert_eq!(r["column_mismatches"]["status"], 1);
        assert_eq!(r["column_mismatches"]["price"], 0);
        // Order 5 lost a copy, order 6 gained one: the duplicate-key drift
        // a join on the key misses.
        let d = &r["keyed"]["duplicate_key_rows"];
        assert_eq!(d["source_only"]["rows"], 1);
        assert_eq!(d["target_only"]["rows"], 1);
        let n = &r["keyed"]["null_key_unmatched"];
        assert_eq!(n["source_only"]["rows"], 0);
        assert_eq!(n["target_only"]["rows"], 1);
        assert_eq!(r["keyed"]["max_abs_diff"]["amount"], "1");
        // Row-level totals are EXCEPT ALL's, as keyless mode counts them.
        assert_eq!(r["source_only_rows"], 5);
        assert_eq!(r["target_only_rows"], 6);
        let (_, keyless) = keyed_json(&s, &t, &[]);
        assert_eq!(keyless["source_only_rows"], 5);
        assert_eq!(keyless["target_only_rows"], 6);
    }
}

#[test]
fn a_difference_equal_to_the_tolerance_matches_and_is_counted() {
    let (s, t) = orders();
    let (_, r) = keyed_json(
        &s,
        &t,
        &["--key", "order_id,line_no", "--tolerance", "amount=0.01"],
    );
    // (2,2): 40.00 vs 40.010 is exactly one cent apart.
    assert_eq!(categories(&r)[..2], [2, 2]);
    assert_eq!(r["tolerance_matches"], 1);
    assert_eq!(r["keyed"]["keys_matched_within_tolerance"], 1);
    assert_eq!(r["keyed"]["tolerance_matches_by_column"]["amount"], 1);
    // One cent less is not enough.
    let (_, tight) = keyed_json(
        &s,
        &t,
        &["--key", "order_id,line_no", "--tolerance", "amount=0.009"],
    );
    assert_eq!(categories(&tight)[..2], [1, 3]);
    assert_eq!(tight["tolerance_matches"], 0);
    // Relative: 40.01 / 40.00 is within 0.025% but not 0.02%.
    let (_, rel) = keyed_json(
        &s,
        &t,
        &[
            "--key",
            "order_id,line_no",
            "--tolerance",
            "amount=0.00025r",
        ],
    );
    assert_eq!(rel["tolerance_matches"], 1);
    let (_, rel2) = keyed_json(
        &s,
        &t,
        &["--key", "order_id,line_no", "--tolerance", "amount=0.0002r"],
    );
    assert_eq!(rel2["tolerance_matches"], 0);
}

#[test]
fn the_text_summary_shows_categories_columns_and_changed_values_side_by_side() {
    let (s, t) = orders();
    Run::diff(&s, &t)
        .args(["--key", "order_id,line_no"])
        .exits(1)
        .stdout_has("value_mismatch          3")
        .stdout_has("missing_in_target       1")
        .stdout_has("duplicate_keys          2")
        .stdout_has("order_id=2 line_no=1")
        .stdout_has("amount  30.00 -> 31.000")
        .stdout_has("status  \"PAID\" -> \"SHIPPED\"")
        .stdout_has("source x2   target x3   order_id=6 line_no=1");
}

#[test]
fn output_files_hold_changed_keys_side_by_side_and_complete_rows() {
    let (s, t) = orders();
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let run = Run::diff(&s, &t)
        .args(["--key", "order_id,line_no", "-q"])
        .output_dir(&out)
        .exits(1);
    let changed = read_parquet(&out.join("changed.parquet"));
    let batch = arrow::compute::concat_batches(&changed[0].schema(), &changed).unwrap();
    let names: Vec<String> = batch
        .schema()
        .fields()
        .iter()
        .map(|f| f.name().clone())
        .collect();
    assert_eq!(
        names,
        [
            "order_id",
            "line_no",
            "changed_columns",
            "source_amount",
            "target_amount",
            "source_price",
            "target_price",
            "source_status",
            "target_status"
        ]
    );
    assert_eq!(batch.num_rows(), 3);
    // Only the changed columns are filled by default.
    let status = batch.column(7).as_string::<i32>();
    assert_eq!(status.iter().flatten().collect::<Vec<_>>(), ["PAID"]);
    assert_eq!(batch.column(5).null_count(), 3);
    assert_eq!(parquet_rows(&out.join("missing_in_target.parquet")), 1);
    assert_eq!(parquet_rows(&out.join("missing_in_source.parquet")), 1);
    assert_eq!(
        parquet_rows(&out.join("duplicate_keys_source_only.parquet")),
        1
    );
    assert_eq!(
        parquet_rows(&out.join("duplicate_keys_target_only.parquet")),
        1
    );
    assert_eq!(parquet_rows(&out.join("null_keys_target_only.parquet")), 1);
    assert_eq!(run.report()["keyed"]["outputs"]["changed_written"], 3);
    // --diff-columns all fills every value column.
    let all = dir.path().join("all");
    Run::diff(&s, &t)
        .args(["--key", "order_id,line_no", "-q", "--diff-columns", "all"])
        .output_dir(&all)
        .exits(1);
    let changed = read_parquet(&all.join("changed.parquet"));
    assert_eq!(changed[0].column(5).null_count(), 0);
}

#[test]
fn bad_keys_and_tolerances_are_one_line_errors() {
    let (s, t) = orders();
    for (args, msg) in [
        (vec!["--key", "nope"], "--key nope: not a compared column"),
        (
            vec!["--key", "order_id", "--tolerance", "status=0.1"],
            "only numbers",
        ),
        (
            vec!["--key", "order_id", "--tolerance", "order_id=1"],
            "a key column is matched exactly",
        ),
        (
            vec!["--key", "order_id", "--tolerance", "amount=-1"],
            "invalid tolerance",
        ),
    ] {
        Run::diff(&s, &t)
            .args(&args)
            .fails_with(msg)
            .one_line_error();
    }
}

/// A table of (a: Utf8, b: Utf8, v: Int64).
fn abv(rows: &[(Option<&str>, Option<&str>, Option<i64>)]) -> RecordBatch {
    let a: ArrayRef = Arc::new(StringArray::from(
        rows.iter().map(|r| r.0).collect::<Vec<_>>(),
    ));
    let b: ArrayRef = Arc::new(StringArray::from(
        rows.iter().map(|r| r.1).collect::<Vec<_>>(),
    ));
    let v: ArrayRef = Arc::new(Int64Array::from(
        rows.iter().map(|r| r.2).collect::<Vec<_>>(),
    ));
    RecordBatch::try_from_iter([("a", a), ("b", b), ("v", v)]).unwrap()
}

#[test]
fn composite_keys_whose_concatenations_collide_stay_apart() {
    let dir = tempfile::tempdir().unwrap();
    let (s, t) = (dir.path().join("s.parquet"), dir.path().join("t.parquet"));
    write_parquet(&s, &abv(&[(Some("ab"), Some("c"), Some(1))]), 10);
    write_parquet(&t, &abv(&[(Some("a"), Some("bc"), Some(1))]), 10);
    let (_, r) = keyed_json(&s, &t, &["--key", "a,b"]);
    assert_eq!(categories(&r), [0, 0, 1, 1, 0, 0]);
    // And a NULL in one key column is a NULL key, never the string "NULL".
    write_parquet(&s, &abv(&[(Some("x"), None, Some(1))]), 10);
    write_parquet(&t, &abv(&[(Some("x"), Some("NULL"), Some(1))]), 10);
    let (_, r) = keyed_json(&s, &t, &["--key", "a,b"]);
    assert_eq!(categories(&r), [0, 0, 0, 1, 0, 1]);
}

/// (key, value, text) rows with planted drift, many row groups.
fn drifting(n: i64, target: bool) -> RecordBatch {
    let mut k = Vec::new();
    let mut v = Vec::new();
    let mut s = Vec::new();
    for i in 0..n {
        if target && i % 97 == 5 {
            continue; // missing in target
        }
        k.push(Some(i));
        v.push(Some(if target && i % 89 == 3 { i + 1 } else { i }));
        s.push(Some(if target && i % 83 == 2 {
            "changed"
        } else {
            "same"
        }));
        if i % 101 == 7 && (target == (i % 2 == 0)) {
            k.push(Some(i));
            v.push(Some(i));
            s.push(Some("same"));
        }
    }
    if target {
        k.push(Some(n + 1));
        v.push(Some(0));
        s.push(Some("new"));
        k.push(None);
        v.push(Some(0));
        s.push(Some("null key"));
    }
    let k: ArrayRef = Arc::new(Int64Array::from(k));
    let v: ArrayRef = Arc::new(Int64Array::from(v));
    let s: ArrayRef = Arc::new(StringArray::from(s));
    RecordBatch::try_from_iter([("k", k), ("v", v), ("s", s)]).unwrap()
}

#[test]
fn the_spill_path_under_a_tiny_memory_limit_gives_the_same_answer() {
    let dir = tempfile::tempdir().unwrap();
    let (s, t) = (dir.path().join("s.parquet"), dir.path().join("t.parquet"));
    write_parquet(&s, &drifting(30_000, false), 1000);
    write_parquet(&t, &drifting(30_000, true), 700);
    let (_, first) = keyed_json(&s, &t, &["--key", "k"]);
    let want = categories(&first);
    assert!(want[1] > 0 && want[2] > 0 && want[3] > 0 && want[4] > 0 && want[5] == 1);
    for threads in ["1", "4"] {
        for passes in ["1", "2"] {
            let (_, r) = keyed_json(
                &s,
                &t,
                &[
                    "--key",
                    "k",
                    "-m",
                    "8MiB",
                    "-j",
                    threads,
                    "--passes",
                    passes,
                    "--debug-single-bucket",
                ],
            );
            assert_eq!(categories(&r), want, "threads {threads} passes {passes}");
            assert_eq!(r["column_mismatches"], first["column_mismatches"]);
            assert_eq!(r["source_only_rows"], first["source_only_rows"]);
            // One pass spills every row, past what a worker's map holds
            // under 8 MiB; two passes spill only the differing keys' rows.
            if passes == "1" {
                assert!(
                    r["bucket_splits"].as_u64().unwrap() > 0,
                    "{threads}/{passes}"
                );
            }
        }
    }
}

/// `n` keys (`k`, `v`, `s`); every `dup`th key has two agreeing copies on
/// both sides; the target changes `v` of every `change`th key, loses key 11
/// and has a third copy of key `dup` (a duplicated key whose counts differ).
fn sieved(n: i64, change: i64, dup: i64, target: bool) -> RecordBatch {
    let (mut k, mut v, mut s) = (Vec::new(), Vec::new(), Vec::new());
    for i in 0..n {
        let copies = match i {
            11 if target => 0,
            _ if i == dup && target => 3,
            _ if i % dup == 0 => 2,
            _ => 1,
        };
        for _ in 0..copies {
            k.push(i);
            v.push(if target && i % change == 7 % change {
                i + 1
            } else {
                i
            });
            s.push(format!("row {i}"));
        }
    }
    let k: ArrayRef = Arc::new(Int64Array::from(k));
    let v: ArrayRef = Arc::new(Int64Array::from(v));
    let s: ArrayRef = Arc::new(StringArray::from(s));
    RecordBatch::try_from_iter([("k", k), ("v", v), ("s", s)]).unwrap()
}

/// The parts of a keyed report that must not depend on how it was read.
fn keyed_answer(r: &Value) -> Value {
    let mut a = serde_json::Map::new();
    for k in [
        "matched_keys",
        "value_mismatch",
        "missing_in_target",
        "missing_in_source",
        "duplicate_keys",
        "null_keys",
        "column_mismatches",
        "source_only_rows",
        "target_only_rows",
    ] {
        a.insert(k.into(), r[k].clone());
    }
    for k in [
        "duplicate_key_samples",
        "duplicate_key_rows",
        "changed_samples",
    ] {
        a.insert(k.into(), r["keyed"][k].clone());
    }
    Value::Object(a)
}

#[test]
fn the_sieve_reads_back_only_what_differs_and_answers_as_one_pass_does() {
    let dir = tempfile::tempdir().unwrap();
    // Light drift: 4 changed keys, 1 missing, 1 extra copy, 500 agreeing
    // duplicated keys; 160 row groups a side. Heavy drift: a third of the keys
    // changed, so buckets hold several differing keys.
    for (name, change, strategy) in [("light", 12_000, "targeted"), ("heavy", 3, "full")] {
        let (s, t) = (
            dir.path().join(format!("{name}_s.parquet")),
            dir.path().join(format!("{name}_t.parquet")),
        );
        write_parquet(&s, &sieved(40_000, change, 80, false), 250);
        write_parquet(&t, &sieved(40_000, change, 80, true), 250);
        let (_, one) = keyed_json(&s, &t, &["--key", "k", "--passes", "1"]);
        for extra in [&[][..], &["-j", "1"], &["-j", "3", "-m", "16MiB"]] {
            let args = [&["--key", "k"][..], extra].concat();
            let (_, two) = keyed_json(&s, &t, &args);
            assert_eq!(keyed_answer(&two), keyed_answer(&one), "{name} {extra:?}");
            let second = &two["settings"]["second_pass"];
            assert_eq!(second["strategy"], strategy, "{name} {extra:?}: {second}");
            if strategy == "targeted" {
                // The row groups of the changed, missing and extra-copy
                // keys and of the 20 sampled duplicated keys: about 50 of
                // 320, not all 80 000 rows.
                let read = second["rows_read"].as_u64().unwrap();
                assert!(read < 24_000, "{name} {extra:?}: read {read} rows again");
            }
        }
        let c = categories(&one);
        assert_eq!(c[4], 500, "{name}: duplicated keys");
        if name == "light" {
            assert_eq!(c[1..4], [4, 1, 0], "{name}");
        }
    }
    // Tables that agree, duplicates and all: no second pass without samples
    // to show.
    let s = dir.path().join("light_s.parquet");
    let (_, same) = keyed_json(&s, &s, &["--key", "k", "--sample", "0"]);
    assert_eq!(categories(&same), [39_500, 0, 0, 0, 500, 0]);
    assert_eq!(same["settings"]["passes"], 1);
    assert!(same["settings"]["second_pass"].is_null());
}

#[test]
fn refused_values_make_the_second_pass_the_one_pass_diff() {
    use arrow::array::{Date32Array, TimestampMicrosecondArray};
    let dir = tempfile::tempdir().unwrap();
    let (s, t) = (dir.path().join("s.parquet"), dir.path().join("t.parquet"));
    let keys: ArrayRef = Arc::new(Int64Array::from((0..3000).collect::<Vec<i64>>()));
    let days: ArrayRef = Arc::new(Date32Array::from((0..3000).collect::<Vec<i32>>()));
    let day = 86_400_000_000i64;
    // Key 5's timestamp has a time of day: casting it to a date is refused.
    let stamps: ArrayRef = Arc::new(TimestampMicrosecondArray::from(
        (0..3000i64)
            .map(|i| i * day + if i == 5 { 5_400_000_000 } else { 0 })
            .collect::<Vec<_>>(),
    ));
    let batch = |d: ArrayRef| RecordBatch::try_from_iter([("k", keys.clone()), ("d", d)]).unwrap();
    write_parquet(&s, &batch(days), 500);
    write_parquet(&t, &batch(stamps), 500);
    let args = ["--key", "k", "--cast", "d=date", "--max-parse-errors", "1"];
    let (_, one) = keyed_json(&s, &t, &[&args[..], &["--passes", "1"]].concat());
    let (_, two) = keyed_json(&s, &t, &args);
    assert_eq!(keyed_answer(&two), keyed_answer(&one));
    assert_eq!(two["parse_errors"], one["parse_errors"]);
    assert_eq!(two["parse_errors"]["target"], 1, "{two}");
    assert_eq!(two["settings"]["second_pass"]["strategy"], "full", "{two}");
}

#[test]
fn an_int32_key_matches_an_int64_key_by_value() {
    // The orders fixture's source key is int32, the target's int64.
    let (s, t) = orders();
    let (_, r) = keyed_json(&s, &t, &["--key", "order_id,line_no"]);
    assert!(r["columns"][0]["source_type"] == "Int32" && r["columns"][0]["target_type"] == "Int64");
    assert_eq!(r["matched_keys"], 1);
}

// ---- property test against a naive keyed diff ----

type Raw = (Option<i64>, Option<i64>, Option<&'static str>);

fn raw_rows() -> impl Strategy<Value = Vec<Raw>> {
    let row = (
        prop::option::weighted(0.9, 0i64..12),
        prop::option::weighted(0.8, 0i64..3),
        prop::option::of(prop::sample::select(vec!["", "x", "y"])),
    );
    prop::collection::vec(row, 0..25)
}

fn batch(rows: &[Raw]) -> RecordBatch {
    let k: ArrayRef = Arc::new(Int64Array::from(
        rows.iter().map(|r| r.0).collect::<Vec<_>>(),
    ));
    let v: ArrayRef = Arc::new(Int64Array::from(
        rows.iter().map(|r| r.1).collect::<Vec<_>>(),
    ));
    let s: ArrayRef = Arc::new(StringArray::from(
        rows.iter().map(|r| r.2).collect::<Vec<_>>(),
    ));
    RecordBatch::try_from_iter([("k", k), ("v", v), ("s", s)]).unwrap()
}

#[derive(Debug, Default, PartialEq)]
struct Naive {
    categories: [u64; 6],
    column_mismatches: [u64; 2],
    unmatched: [u64; 2],
    dup_unmatched: [u64; 2],
    null_unmatched: [u64; 2],
}

/// Multiset difference sizes of two row lists.
fn except_all<T: Ord + Clone>(a: &[T], b: &[T]) -> [u64; 2] {
    let mut counts: BTreeMap<T, (i64, i64)> = BTreeMap::new();
    for r in a {
        counts.entry(r.clone()).or_default().0 += 1;
    }
    for r in b {
        counts.entry(r.clone()).or_default().1 += 1;
    }
    let mut out = [0u64; 2];
    for (s, t) in counts.values() {
        if s > t {
            out[0] += (s - t) as u64;
        } else {
            out[1] += (t - s) as u64;
        }
    }
    out
}

fn naive(src: &[Raw], tgt: &[Raw]) -> Naive {
    let mut n = Naive::default();
    let nulls = |rows: &[Raw]| {
        rows.iter()
            .filter(|r| r.0.is_none())
            .cloned()
            .collect::<Vec<_>>()
    };
    let (ns, nt) = (nulls(src), nulls(tgt));
    n.categories[5] = (ns.len() + nt.len()) as u64;
    n.null_unmatched = except_all(&ns, &nt);
    let mut by_key: BTreeMap<i64, (Vec<Raw>, Vec<Raw>)> = BTreeMap::new();
    for r in src.iter().filter(|r| r.0.is_some()) {
        by_key.entry(r.0.unwrap()).or_default().0.push(*r);
    }
    for r in tgt.iter().filter(|r| r.0.is_some()) {
        by_key.entry(r.0.unwrap()).or_default().1.push(*r);
    }
    for (s, t) in by_key.values() {
        match (s.len(), t.len()) {
            (1, 1) if s[0] == t[0] => n.categories[0] += 1,
            (1, 1) => {
                n.categories[1] += 1;
                n.column_mismatches[0] += (s[0].1 != t[0].1) as u64;
                n.column_mismatches[1] += (s[0].2 != t[0].2) as u64;
                n.unmatched[0] += 1;
                n.unmatched[1] += 1;
            }
            (1, 0) => {
                n.categories[2] += 1;
                n.unmatched[0] += 1;
            }
            (0, 1) => {
                n.categories[3] += 1;
                n.unmatched[1] += 1;
            }
            _ => {
                n.categories[4] += 1;
                let d = except_all(s, t);
                n.dup_unmatched[0] += d[0];
                n.dup_unmatched[1] += d[1];
            }
        }
    }
    for i in 0..2 {
        n.unmatched[i] += n.dup_unmatched[i] + n.null_unmatched[i];
    }
    n
}

fn recon_keyed(dir: &Path, src: &[Raw], tgt: &[Raw], cfg: (usize, u64, usize, bool)) -> Naive {
    let (threads, mem, group, two) = cfg;
    let (s, t) = (dir.join("s.parquet"), dir.join("t.parquet"));
    write_parquet(&s, &batch(src), group);
    write_parquet(&t, &batch(tgt), group + 1);
    let opts = DiffOptions {
        run: RunSettings {
            threads,
            memory_limit: mem,
            passes: if two { Passes::Two } else { Passes::One },
            ..RunSettings::default()
        },
        single_bucket: mem < (16 << 20),
        align: AlignOptions {
            key: Some(vec!["k".into()]),
            ..AlignOptions::default()
        },
        ..DiffOptions::default()
    };
    let r = serde_json::to_value(diff(&s, &t, &opts).unwrap().report).unwrap();
    let stats = |v: &Value| {
        [
            v["source_only"]["rows"].as_u64().unwrap(),
            v["target_only"]["rows"].as_u64().unwrap(),
        ]
    };
    Naive {
        categories: categories(&r),
        column_mismatches: [
            r["column_mismatches"]["v"].as_u64().unwrap(),
            r["column_mismatches"]["s"].as_u64().unwrap(),
        ],
        unmatched: [
            r["source_only_rows"].as_u64().unwrap(),
            r["target_only_rows"].as_u64().unwrap(),
        ],
        dup_unmatched: stats(&r["keyed"]["duplicate_key_rows"]),
        null_unmatched: stats(&r["keyed"]["null_key_unmatched"]),
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    #[test]
    fn keyed_mode_equals_a_naive_keyed_diff(
        src in raw_rows(),
        edits in raw_rows(),
        keep in prop::collection::vec(any::<bool>(), 25),
        threads in 1usize..4,
        tiny in any::<bool>(),
        group in 1usize..8,
        two in any::<bool>(),
    ) {
        // The target: the source with some rows dropped, plus new rows.
        let mut tgt: Vec<Raw> = src.iter().zip(keep.iter().cycle()).filter(|(_, k)| **k).map(|(r, _)| *r).collect();
        tgt.extend(edits.iter().take(6).copied());
        tgt.reverse();
        let dir = tempfile::tempdir().unwrap();
        let mem = if tiny { 8 << 20 } else { 256 << 20 };
        let got = recon_keyed(dir.path(), &src, &tgt, (threads, mem, group, two));
        prop_assert_eq!(got, naive(&src, &tgt));
    }
}

#[test]
fn naive_sanity() {
    // The oracle itself on a hand-checked case.
    let s: Vec<Raw> = vec![(Some(1), Some(1), Some("x")), (Some(2), Some(1), None)];
    let t: Vec<Raw> = vec![(Some(1), Some(2), Some("x")), (None, Some(1), None)];
    let n = naive(&s, &t);
    assert_eq!(n.categories, [0, 1, 1, 0, 0, 1]);
    assert_eq!(n.column_mismatches, [1, 0]);
}

#[test]
fn keyless_pairing_shows_rows_that_differ_in_one_or_two_columns() {
    // The README demo: one row changed amount 200 -> 201.
    Run::diff(
        fixture("demo/source.parquet"),
        fixture("demo/target.parquet"),
    )
    .exits(1)
    .stdout_has("region=\"south\": amount 200 -> 201");
    let dir = tempfile::tempdir().unwrap();
    let (s, t) = (dir.path().join("s.parquet"), dir.path().join("t.parquet"));
    write_parquet(
        &s,
        &abv(&[
            (Some("one"), Some("x"), Some(1)),
            (Some("two"), Some("x"), Some(2)),
            (Some("amb"), Some("x"), Some(3)),
            (Some("gone"), Some("g"), Some(9)),
        ]),
        10,
    );
    write_parquet(
        &t,
        &abv(&[
            (Some("one"), Some("x"), Some(10)), // v changed
            (Some("two"), Some("y"), Some(20)), // b and v changed
            (Some("amb"), Some("x"), Some(30)), // two candidates for "amb"
            (Some("amb"), Some("x"), Some(31)),
            (Some("new"), Some("n"), Some(100)), // differs in all three
        ]),
        10,
    );
    let (code, r) = keyed_json(&s, &t, &[]);
    assert_eq!(code, 1);
    // The EXCEPT ALL counts are unchanged by pairing.
    assert_eq!(
        (
            r["source_only_rows"].as_u64(),
            r["target_only_rows"].as_u64()
        ),
        (Some(4), Some(5))
    );
    let p = &r["pairs"];
    assert_eq!(p["paired"], 2, "{p}");
    assert_eq!(p["ambiguous_groups"], 1);
    assert_eq!(p["ambiguous_rows"], 3);
    assert_eq!(p["by_column"]["v"], 2);
    assert_eq!(p["by_column"]["b"], 1);
    let changed: Vec<Vec<String>> = p["samples"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| {
            s["changed"]
                .as_array()
                .unwrap()
                .iter()
                .map(|c| c["column"].as_str().unwrap().to_string())
                .collect()
        })
        .collect();
    assert_eq!(
        changed,
        vec![vec!["v".to_string()], vec!["b".into(), "v".into()]]
    );
}
