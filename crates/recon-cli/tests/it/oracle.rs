//! Property test: recon's verdict and evidence equal a naive in-memory
//! multiset diff (the oracle) on random tables with NULLs, duplicates,
//! NaN/-0.0, empty strings and nested lists, under random thread counts,
//! memory limits, row-group sizes and forced bucket splitting.

use crate::common;

use std::collections::BTreeMap;
use std::sync::Arc;

use arrow::array::{
    Array, ArrayRef, AsArray, DictionaryArray, Float64Array, Int64Array, ListArray, RecordBatch,
    StringArray,
};
use arrow::datatypes::{Float64Type, Int32Type, Int64Type};
use common::{read_parquet, write_parquet};
use proptest::prelude::*;
use recon::config::RunSettings;
use recon::{diff, DiffOptions, Passes};

/// An independent notion of a value: NULL is `None`, floats by canonical bits.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
enum V {
    Null,
    I(i64),
    F(u64),
    S(String),
    L(Vec<Option<i32>>),
}

type Row = Vec<V>;

fn canon_f(x: f64) -> u64 {
    if x.is_nan() {
        f64::NAN.to_bits()
    } else if x == 0.0 {
        0
    } else {
        x.to_bits()
    }
}

fn value() -> impl Strategy<Value = Raw> {
    let i = prop::option::of(0i64..4);
    let f = prop::option::of(prop_oneof![
        Just(f64::NAN),
        Just(f64::from_bits(0x7ff8_0000_0000_0001)),
        Just(-0.0),
        Just(0.0),
        Just(1.5),
    ]);
    let s = prop::option::of(prop_oneof![
        Just(String::new()),
        Just(" ".to_string()),
        Just("NULL".to_string()),
        Just("a".to_string()),
        Just("ab".to_string()),
        "[a-c]{0,3}".prop_map(|s| s),
    ]);
    let l = prop::option::of(prop::collection::vec(prop::option::of(0i32..3), 0..3));
    (i, f, s, l)
}

type Raw = (
    Option<i64>,
    Option<f64>,
    Option<String>,
    Option<Vec<Option<i32>>>,
);

fn to_batch(rows: &[Raw]) -> RecordBatch {
    let i: ArrayRef = Arc::new(Int64Array::from(
        rows.iter().map(|r| r.0).collect::<Vec<_>>(),
    ));
    let f: ArrayRef = Arc::new(Float64Array::from(
        rows.iter().map(|r| r.1).collect::<Vec<_>>(),
    ));
    let s: ArrayRef = Arc::new(StringArray::from(
        rows.iter().map(|r| r.2.clone()).collect::<Vec<_>>(),
    ));
    let l: ArrayRef = Arc::new(ListArray::from_iter_primitive::<Int32Type, _, _>(
        rows.iter().map(|r| r.3.clone()),
    ));
    // The string again, dictionary-encoded: exercises dictionary pages and
    // all-NULL batches whose dictionary is empty.
    let d: DictionaryArray<Int32Type> = rows.iter().map(|r| r.2.as_deref()).collect();
    let d: ArrayRef = Arc::new(d);
    RecordBatch::try_from_iter([("i", i), ("f", f), ("s", s), ("l", l), ("d", d)]).unwrap()
}

fn oracle_row(r: &Raw) -> Row {
    vec![
        r.0.map_or(V::Null, V::I),
        r.1.map_or(V::Null, |x| V::F(canon_f(x))),
        r.2.clone().map_or(V::Null, V::S),
        r.3.clone().map_or(V::Null, V::L),
        r.2.clone().map_or(V::Null, V::S),
    ]
}

fn rows_of_batches(batches: &[RecordBatch]) -> Vec<Row> {
    let mut out = Vec::new();
    for b in batches {
        let i = b.column(0).as_primitive::<Int64Type>();
        let f = b.column(1).as_primitive::<Float64Type>();
        let s = b.column(2).as_string::<i32>();
        let l = b.column(3).as_list::<i32>();
        let d = arrow::compute::cast(b.column(4), &arrow::datatypes::DataType::Utf8).unwrap();
        let d = d.as_string::<i32>();
        for r in 0..b.num_rows() {
            assert_eq!(
                (!s.is_null(r)).then(|| s.value(r)),
                (!d.is_null(r)).then(|| d.value(r)),
                "the dictionary column must hold the string column's values"
            );
            let list = (!l.is_null(r)).then(|| {
                let v = l.value(r);
                let v = v.as_primitive::<Int32Type>();
                (0..v.len())
                    .map(|k| (!v.is_null(k)).then(|| v.value(k)))
                    .collect()
            });
            out.push(oracle_row(&(
                (!i.is_null(r)).then(|| i.value(r)),
                (!f.is_null(r)).then(|| f.value(r)),
                (!s.is_null(r)).then(|| s.value(r).to_string()),
                list,
            )));
        }
    }
    out
}

fn multiset(rows: impl IntoIterator<Item = Row>) -> BTreeMap<Row, u64> {
    let mut m = BTreeMap::new();
    for r in rows {
        *m.entry(r).or_insert(0) += 1;
    }
    m
}

/// EXCEPT ALL: a's rows minus b's, with multiplicity.
fn except_all(a: &BTreeMap<Row, u64>, b: &BTreeMap<Row, u64>) -> BTreeMap<Row, u64> {
    a.iter()
        .filter_map(|(r, &n)| {
            let m = b.get(r).copied().unwrap_or(0);
            (n > m).then(|| (r.clone(), n - m))
        })
        .collect()
}

#[derive(Debug, Clone)]
enum Mutation {
    Delete(usize),
    Duplicate(usize),
    ChangeString(usize, String),
    MoveCopy(usize, usize),
    Insert(Raw),
}

fn mutation() -> impl Strategy<Value = Mutation> {
    prop_oneof![
        any::<usize>().prop_map(Mutation::Delete),
        any::<usize>().prop_map(Mutation::Duplicate),
        (any::<usize>(), "[a-c]{0,2}").prop_map(|(i, s)| Mutation::ChangeString(i, s)),
        (any::<usize>(), any::<usize>()).prop_map(|(a, b)| Mutation::MoveCopy(a, b)),
        value().prop_map(Mutation::Insert),
    ]
}

fn apply(rows: &mut Vec<Raw>, m: &Mutation) {
    let n = rows.len();
    match m {
        Mutation::Delete(i) if n > 0 => {
            rows.remove(i % n);
        }
        Mutation::Duplicate(i) if n > 0 => rows.push(rows[i % n].clone()),
        Mutation::ChangeString(i, s) if n > 0 => rows[i % n].2 = Some(s.clone()),
        Mutation::MoveCopy(a, b) if n > 0 => rows[a % n] = rows[b % n].clone(),
        Mutation::Insert(r) => rows.push(r.clone()),
        _ => {}
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 2000, ..ProptestConfig::default() })]

    #[test]
    fn recon_equals_the_oracle(
        source in prop::collection::vec(value(), 0..120),
        mutations in prop::collection::vec(mutation(), 0..6),
        shuffle_seed in any::<u64>(),
        threads in 1usize..4,
        group in 1usize..50,
        single_bucket in any::<bool>(),
        small_memory in any::<bool>(),
        two_pass in any::<bool>(),
    ) {
        let mut target = source.clone();
        for m in &mutations {
            apply(&mut target, m);
        }
        // Reorder the target deterministically from the seed.
        let len = target.len();
        if len > 1 {
            for i in 0..len {
                let j = (shuffle_seed.wrapping_mul(i as u64 + 1).rotate_left(17) % len as u64) as usize;
                target.swap(i, j);
            }
        }

        let tmp = tempfile::tempdir().unwrap();
        let (sp, tp) = (tmp.path().join("s.parquet"), tmp.path().join("t.parquet"));
        write_parquet(&sp, &to_batch(&source), group);
        write_parquet(&tp, &to_batch(&target), group + 7);
        let out = tmp.path().join("out");
        let opts = DiffOptions {
            run: RunSettings {
                threads,
                memory_limit: if small_memory { 8 << 20 } else { u64::MAX },
                temp_dir: Some(tmp.path().to_path_buf()),
                sample: 5,
                passes: if two_pass { Passes::Two } else { Passes::One },
            },
            output_dir: Some(out.clone()),
            single_bucket,
            batch_size: 16,
            ..DiffOptions::default()
        };
        let report = diff(&sp, &tp, &opts).unwrap().report;

        let s = multiset(source.iter().map(oracle_row));
        let t = multiset(target.iter().map(oracle_row));
        let s_only = except_all(&s, &t);
        let t_only = except_all(&t, &s);
        let total = |m: &BTreeMap<Row, u64>| m.values().sum::<u64>();
        prop_assert_eq!(report.source_rows, source.len() as u64);
        prop_assert_eq!(report.target_rows, target.len() as u64);
        prop_assert_eq!(report.source_only_rows, total(&s_only));
        prop_assert_eq!(report.target_only_rows, total(&t_only));
        prop_assert_eq!(report.exact_match, s_only.is_empty() && t_only.is_empty());
        let extra = |only: &BTreeMap<Row, u64>, other: &BTreeMap<Row, u64>| {
            only.iter().filter(|(r, _)| other.contains_key(*r)).map(|(_, n)| n).sum::<u64>()
        };
        prop_assert_eq!(report.multiplicity.source_only.extra_copy_rows, extra(&s_only, &t));
        prop_assert_eq!(report.multiplicity.target_only.extra_copy_rows, extra(&t_only, &s));
        prop_assert_eq!(report.multiplicity.source_only.distinct_rows, s_only.len() as u64);

        // The evidence files hold exactly EXCEPT ALL's rows.
        let got_s = multiset(rows_of_batches(&read_parquet(&out.join("source_only.parquet"))));
        let got_t = multiset(rows_of_batches(&read_parquet(&out.join("target_only.parquet"))));
        prop_assert_eq!(got_s, s_only);
        prop_assert_eq!(got_t, t_only);
    }
}
