use super::compare::{compare_buckets, BucketComparison, Bucketing, Selector};
use super::plan::{Described, DistributedPlan};
use super::sums::BucketSums;
use crate::config::AlignOptions;
use crate::side::Side;
use arrow::array::{ArrayRef, Int32Array, Int64Array, RecordBatch, StringArray};
use arrow::datatypes::{DataType, Field, Schema};
use std::collections::HashMap;
use std::sync::Arc;

fn described(name: &str, int: DataType) -> Described {
    Described {
        name: name.into(),
        schema: Arc::new(Schema::new(vec![
            Field::new("k", int, true),
            Field::new("s", DataType::Utf8, true),
        ])),
    }
}

fn batch(d: &Described, rows: &[(Option<i64>, Option<&str>)]) -> RecordBatch {
    let k: ArrayRef = match d.schema.field(0).data_type() {
        DataType::Int32 => Arc::new(
            rows.iter()
                .map(|r| r.0.map(|v| v as i32))
                .collect::<Int32Array>(),
        ),
        _ => Arc::new(rows.iter().map(|r| r.0).collect::<Int64Array>()),
    };
    let s: ArrayRef = Arc::new(rows.iter().map(|r| r.1).collect::<StringArray>());
    RecordBatch::try_new(d.schema.clone(), vec![k, s]).unwrap()
}

#[test]
fn keyed_plans_name_the_key_and_refuse_a_converted_or_nested_one() {
    let (a, b) = (
        described("a", DataType::Int32),
        described("b", DataType::Int64),
    );
    let keyed = |key: &str, casts: Vec<(String, DataType)>| AlignOptions {
        key: Some(vec![key.into()]),
        casts,
        ..AlignOptions::default()
    };
    let plan = DistributedPlan::keyed(&a, &b, &keyed("k", Vec::new())).unwrap();
    assert_eq!(plan.key(Side::Source), ["k"]);
    assert!(DistributedPlan::pair(&a, &b, &keyed("k", Vec::new())).is_err());
    let cast = vec![("k".to_string(), DataType::Utf8)];
    let e = DistributedPlan::keyed(&a, &b, &keyed("k", cast))
        .err()
        .unwrap()
        .to_string();
    assert!(e.contains("key column \"k\" is converted"), "{e}");
    let e = DistributedPlan::keyed(&a, &b, &keyed("nope", Vec::new()))
        .err()
        .unwrap()
        .to_string();
    assert!(e.contains("not a compared column"), "{e}");
    let nested = Described {
        name: "n".into(),
        schema: Arc::new(Schema::new(vec![Field::new(
            "st",
            DataType::Struct(vec![Field::new("p", DataType::Int32, true)].into()),
            true,
        )])),
    };
    let e = DistributedPlan::keyed(&nested, &nested, &keyed("st", Vec::new()))
        .err()
        .unwrap()
        .to_string();
    assert!(e.contains("key column \"st\" is nested"), "{e}");
}

type Rows = Vec<(Option<i64>, Option<&'static str>)>;

/// Runs both passes with the given bucketing (per side: row index ->
/// bucket, or None for the digest's top bits) and returns, per digest
/// kept, source count - target count, the nonzero ones only.
fn run(
    src: &Rows,
    tgt: &Rows,
    bits: u32,
    bucketing: [Option<&dyn Fn(usize) -> u32>; 2],
) -> (BucketComparison, HashMap<u128, i64>) {
    let (a, b) = (
        described("a", DataType::Int32),
        described("b", DataType::Int64),
    );
    let plan = DistributedPlan::pair(&a, &b, &AlignOptions::default()).unwrap();
    let batches = [batch(&a, src), batch(&b, tgt)];
    let mut sums = Vec::new();
    let mut buckets_of: Vec<Option<Vec<u32>>> = Vec::new();
    for side in Side::BOTH {
        let i = side.index();
        let mut d = plan.digester(side);
        d.digest(&batches[i], true).unwrap();
        let buckets = bucketing[i].map(|f| (0..d.digests.len()).map(f).collect::<Vec<_>>());
        // Sums travel as bytes, split over two "partitions".
        let mut s = BucketSums::new(bits, 2).unwrap();
        s.add(&d, buckets.as_deref()).unwrap();
        let mut total = BucketSums::new(bits, 2).unwrap();
        total
            .merge(&BucketSums::from_bytes(&s.to_bytes()).unwrap())
            .unwrap();
        total.merge(&BucketSums::new(bits, 2).unwrap()).unwrap();
        sums.push(total);
        buckets_of.push(buckets);
    }
    let kind = if bucketing.iter().all(Option::is_none) {
        Bucketing::DigestPrefix
    } else {
        Bucketing::Engine
    };
    let cmp = compare_buckets(&plan, &sums[0], &sums[1], kind).unwrap();
    let selector = Selector::from_bytes(&cmp.selector().to_bytes()).unwrap();
    let mut counts: HashMap<u128, i64> = HashMap::new();
    for side in Side::BOTH {
        let i = side.index();
        let mut d = plan.digester(side);
        d.digest(&batches[i], false).unwrap();
        for r in selector
            .select(&d.digests, buckets_of[i].as_deref())
            .unwrap()
        {
            *counts.entry(d.digests[r as usize]).or_default() += if i == 0 { 1 } else { -1 };
        }
    }
    counts.retain(|_, c| *c != 0);
    (cmp, counts)
}

/// The naive answer: per digest, source count - target count.
fn naive(src: &Rows, tgt: &Rows) -> HashMap<u128, i64> {
    let (a, b) = (
        described("a", DataType::Int32),
        described("b", DataType::Int64),
    );
    let plan = DistributedPlan::pair(&a, &b, &AlignOptions::default()).unwrap();
    let mut counts: HashMap<u128, i64> = HashMap::new();
    for (side, rows, d) in [(Side::Source, src, &a), (Side::Target, tgt, &b)] {
        let mut dg = plan.digester(side);
        dg.digest(&batch(d, rows), false).unwrap();
        for &x in &dg.digests {
            *counts.entry(x).or_default() += if side == Side::Source { 1 } else { -1 };
        }
    }
    counts.retain(|_, c| *c != 0);
    counts
}

fn pair() -> (Rows, Rows) {
    let src: Rows = vec![
        (Some(1), Some("a")),
        (Some(2), Some("b")),
        (Some(2), Some("b")),
        (None, None),
        (Some(3), Some("")),
        (Some(4), Some("d")),
    ];
    let tgt: Rows = vec![
        (Some(4), Some("d")),
        (Some(2), Some("b")),
        (Some(3), None),
        (Some(1), Some("a")),
        (Some(5), Some("e")),
        (Some(5), Some("e")),
        (Some(5), Some("e")),
    ];
    (src, tgt)
}

#[test]
fn any_bucketing_gives_the_exact_differences() {
    let (src, tgt) = pair();
    let want = naive(&src, &tgt);
    assert_eq!(want.len(), 5);
    let everything_in_one = |_: usize| 0u32;
    let by_row = |i: usize| (i % 3) as u32;
    let other = |i: usize| ((i * 7 + 1) % 4) as u32;
    for bits in [1, 2, 12] {
        assert_eq!(
            run(&src, &tgt, bits, [None, None]).1,
            want,
            "top bits, 2^{bits}"
        );
    }
    // The sides bucket the same rows differently: still exact.
    assert_eq!(run(&src, &tgt, 2, [Some(&by_row), Some(&other)]).1, want);
    let (cmp, got) = run(
        &src,
        &tgt,
        1,
        [Some(&everything_in_one), Some(&everything_in_one)],
    );
    assert_eq!(got, want);
    assert_eq!(cmp.differing, vec![0]);
    // Many differences in one bucket do not decode: the bucket is kept whole.
    assert!(cmp.decoded.is_empty() && cmp.undecoded == vec![0]);
}

#[test]
fn a_single_difference_decodes_and_only_its_rows_are_kept() {
    let (src, _) = pair();
    let mut tgt = src.clone();
    tgt.remove(1); // one copy of (2, "b") fewer
    let (cmp, got) = run(&src, &tgt, 12, [None, None]);
    assert_eq!(cmp.differing.len(), 1);
    assert_eq!(cmp.decoded.len(), 1);
    assert!(cmp.undecoded.is_empty());
    assert_eq!(got, naive(&src, &tgt));
    assert_eq!(cmp.rows, [6, 5]);
}

#[test]
fn two_lost_copies_decode_only_when_buckets_are_digest_prefixes() {
    let (src, _) = pair();
    let mut src = src.clone();
    src.push(src[0]);
    let tgt: Rows = src.iter().copied().filter(|r| *r != src[0]).collect();
    assert_eq!(src.len() - tgt.len(), 2);
    let (cmp, got) = run(&src, &tgt, 12, [None, None]);
    assert_eq!((cmp.decoded.len(), cmp.undecoded.len()), (1, 0));
    assert_eq!(cmp.decoded[0].1, 2);
    assert_eq!(got, naive(&src, &tgt));
    // The same rows in the engine's buckets (here: each row's digest
    // bucket, but the comparison cannot know it): an even count does not
    // decode, and the bucket is read whole; the answer is the same.
    let same_bucket = |_: usize| 5u32;
    let (cmp, got) = run(&src, &tgt, 12, [Some(&same_bucket), Some(&same_bucket)]);
    assert_eq!((cmp.decoded.len(), cmp.undecoded.len()), (0, 1));
    assert_eq!(got, naive(&src, &tgt));
}

#[test]
fn equal_tables_agree_in_every_bucket() {
    let (src, _) = pair();
    let mut tgt = src.clone();
    tgt.reverse();
    let (cmp, got) = run(&src, &tgt, 12, [None, None]);
    assert!(cmp.all_agree() && got.is_empty());
    assert!(cmp.differing_columns.is_empty());
}

#[test]
fn a_batch_in_another_class_than_planned_is_refused() {
    let (a, b) = (
        described("a", DataType::Int32),
        described("b", DataType::Int64),
    );
    let plan = DistributedPlan::pair(&a, &b, &AlignOptions::default()).unwrap();
    let wrong = Described {
        name: "x".into(),
        schema: Arc::new(Schema::new(vec![
            Field::new("k", DataType::Utf8, true),
            Field::new("s", DataType::Utf8, true),
        ])),
    };
    let strings: ArrayRef = Arc::new(StringArray::from(vec!["1"]));
    let batch = RecordBatch::try_new(wrong.schema.clone(), vec![strings.clone(), strings]).unwrap();
    let err = plan
        .digester(Side::Source)
        .digest(&batch, false)
        .unwrap_err();
    assert!(err.to_string().contains("planned as"), "{err}");
}

#[test]
fn keys_and_malformed_bytes_are_refused() {
    let (a, b) = (
        described("a", DataType::Int32),
        described("b", DataType::Int64),
    );
    let keyed = AlignOptions {
        key: Some(vec!["k".into()]),
        ..AlignOptions::default()
    };
    assert!(DistributedPlan::pair(&a, &b, &keyed).is_err());
    assert!(BucketSums::from_bytes(b"nonsense").is_err());
    assert!(BucketSums::new(0, 1).is_err());
    let sums = BucketSums::new(3, 1).unwrap().to_bytes();
    assert!(BucketSums::from_bytes(&sums[..sums.len() - 1]).is_err());
    assert!(Selector::from_bytes(&[1, 0, 0]).is_err());
}

/// Each side's distinct unmatched rows (one per digest, in first-seen
/// order) with their excess copies: what an engine hands `pairs`.
fn unmatched(src: &Rows, tgt: &Rows) -> [(Rows, Vec<u64>); 2] {
    let want = naive(src, tgt);
    let (a, b) = (
        described("a", DataType::Int32),
        described("b", DataType::Int64),
    );
    let plan = DistributedPlan::pair(&a, &b, &AlignOptions::default()).unwrap();
    let mut out: [(Rows, Vec<u64>); 2] = Default::default();
    for (side, rows, d) in [(Side::Source, src, &a), (Side::Target, tgt, &b)] {
        let mut dg = plan.digester(side);
        dg.digest(&batch(d, rows), false).unwrap();
        let mut seen = std::collections::HashSet::new();
        for (r, x) in dg.digests.iter().enumerate() {
            let excess = want.get(x).copied().unwrap_or(0);
            let excess = if side == Side::Source {
                excess
            } else {
                -excess
            };
            if excess > 0 && seen.insert(*x) {
                out[side.index()].0.push(rows[r]);
                out[side.index()].1.push(excess as u64);
            }
        }
    }
    out
}

#[test]
fn by_groups_and_pairs_are_the_local_diffs() {
    let (a, b) = (
        described("a", DataType::Int32),
        described("b", DataType::Int64),
    );
    let (mut src, mut tgt) = pair();
    // Rows alike but for `s` (paired), and two alike source rows against
    // one target row (an ambiguous group, left unpaired).
    src.extend([
        (Some(7), Some("x")),
        (Some(8), Some("p")),
        (Some(8), Some("q")),
    ]);
    tgt.extend([(Some(7), Some("y")), (Some(8), Some("r"))]);
    for by in ["k", "s"] {
        let opts = crate::modes::DiffOptions {
            by: Some(by.into()),
            ..Default::default()
        };
        let source =
            crate::input::Source::batches("a", a.schema.clone(), vec![batch(&a, &src)]).unwrap();
        let target =
            crate::input::Source::batches("b", b.schema.clone(), vec![batch(&b, &tgt)]).unwrap();
        let local = crate::modes::diff(source, target, &opts).unwrap().report;

        let plan = DistributedPlan::pair(&a, &b, &AlignOptions::default())
            .unwrap()
            .with_by(Some(by))
            .unwrap();
        let [(s_rows, s_excess), (t_rows, t_excess)] = unmatched(&src, &tgt);
        let batches = [batch(&a, &s_rows), batch(&b, &t_rows)];
        // The engine's groups: one per row, unsummed, in no order.
        let groups = [(Side::Source, &s_excess), (Side::Target, &t_excess)].map(|(side, n)| {
            let mut d = plan.digester(side);
            let values =
                super::evidence::by_values(&mut d, &batches[side.index()], plan.by().unwrap());
            let mut g: Vec<_> = values.unwrap().into_iter().zip(n.iter().copied()).collect();
            g.reverse();
            g
        });
        let got = super::evidence::by_group(by, groups);
        let want = local.by_group.as_ref().unwrap();
        assert_eq!(
            serde_json::to_value(&got).unwrap(),
            serde_json::to_value(want).unwrap(),
            "by {by}"
        );

        let rows = [
            (&batches[0], s_excess.as_slice()),
            (&batches[1], t_excess.as_slice()),
        ];
        let got = super::evidence::pairs(&plan, rows, 20).unwrap().unwrap();
        let want = local.pairs.as_ref().unwrap();
        assert_eq!(got.paired, 2, "{got:?}");
        assert_eq!(got.ambiguous_groups, 1, "{got:?}");
        assert_eq!(
            serde_json::to_value(&got).unwrap(),
            serde_json::to_value(want).unwrap()
        );
    }
    let e = DistributedPlan::pair(&a, &b, &AlignOptions::default())
        .unwrap()
        .with_by(Some("nope"))
        .err()
        .unwrap();
    assert!(e.to_string().contains("not a compared column"), "{e}");
}
