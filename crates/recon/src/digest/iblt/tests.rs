use std::collections::BTreeMap;

use proptest::prelude::*;

use super::field::{add, inv, mul, neg, reduce, sub};
use super::*;
use crate::digest::multiset::{fp_bucket_of, BucketDifferences, Fingerprint, FP_BUCKETS};

/// The mixes `Iblt::add_all` takes with the digests.
fn mixes(digests: &[u128]) -> Vec<u64> {
    digests.iter().map(|&d| mix(d)).collect()
}

/// A uniform digest, reproducible by `i`.
fn digest(i: u64) -> u128 {
    crate::digest::test_digests(i, 1)[0]
}

fn pow(mut b: u128, mut e: u128) -> u128 {
    let mut r = 1;
    while e > 0 {
        if e & 1 == 1 {
            r = mul(r, b);
        }
        b = mul(b, b);
        e >>= 1;
    }
    r
}

#[test]
fn field_arithmetic_agrees_with_its_definitions() {
    let big = [
        0,
        1,
        158,
        159,
        P - 1,
        P - 2,
        u128::MAX >> 1,
        digest(1) % P,
        digest(2) % P,
    ];
    for &a in &big {
        for &b in &big {
            assert_eq!(sub(add(a, b), b), a);
            assert_eq!(add(a, neg(a)), 0);
            assert_eq!(mul(a, b), mul(b, a));
            assert!(add(a, b) < P && mul(a, b) < P);
        }
    }
    // 2¹²⁸ ≡ 159: 2⁶⁴ · 2⁶⁴.
    assert_eq!(mul(1 << 64, 1 << 64), 159);
    assert_eq!(reduce(u128::MAX), 158);
    // Inverses against Fermat's little theorem.
    for c in [
        1i64,
        -1,
        2,
        3,
        -20,
        16384,
        -16384,
        1 << 40,
        i64::MAX,
        i64::MIN,
        159,
        -159,
    ] {
        let c_field = super::field::from_i64(c);
        assert_eq!(inv(c), pow(c_field, P - 2), "inverse of {c}");
        assert_eq!(mul(inv(c), c_field), 1, "c · c⁻¹ for {c}");
    }
}

/// The multiset difference of two lists of digests, by digest.
fn expected(source: &[u128], target: &[u128]) -> Vec<(u128, i64)> {
    let mut m: BTreeMap<u128, i64> = BTreeMap::new();
    for &d in source {
        *m.entry(d).or_default() += 1;
    }
    for &d in target {
        *m.entry(d).or_default() -= 1;
    }
    m.into_iter().filter(|&(_, c)| c != 0).collect()
}

fn sketch_difference(shape: (u32, u32), source: &[u128], target: &[u128]) -> Iblt {
    let (mut a, mut b) = (Iblt::new(shape.0, shape.1), Iblt::new(shape.0, shape.1));
    a.add_all(source, &mixes(source));
    b.add_all(target, &mixes(target));
    a.subtract(&b).unwrap();
    a
}

#[test]
fn every_copy_count_difference_decodes_and_pairs_do_not_cancel() {
    let (x, y, z) = (digest(1), digest(2), digest(3));
    // {x, x} against {}: XOR would see nothing.
    let s = sketch_difference((3, 4), &[x, x], &[]);
    assert_eq!(
        s.decode(),
        Peeled {
            differences: vec![(x, 2)],
            complete: true
        }
    );
    let many: Vec<u128> = std::iter::repeat_n(y, 16384).collect();
    let mut source = vec![x; 20];
    source.push(z);
    let mut target = many.clone();
    target.push(z);
    let got = sketch_difference((3, 6), &source, &target).decode();
    assert!(got.complete);
    assert_eq!(got.differences, expected(&source, &target));
    assert!(got.differences.contains(&(y, -16384)));
}

#[test]
fn a_sketch_sized_for_n_decodes_n_differences() {
    for n in [1u64, 10, 200, 5_000] {
        let source: Vec<u128> = (0..n).map(digest).collect();
        let target: Vec<u128> = (n..n + n / 2).map(digest).collect();
        let mut a = Iblt::sized_for(n + n / 2);
        let mut b = a.clone();
        a.add_all(&source, &mixes(&source));
        b.add_all(&target, &mixes(&target));
        a.subtract(&b).unwrap();
        let got = a.decode();
        assert!(got.complete, "{} differences did not decode", n + n / 2);
        assert_eq!(got.differences, expected(&source, &target));
    }
}

#[test]
fn a_sketch_too_small_says_so_and_estimates_the_differences() {
    let source: Vec<u128> = (0..2_000).map(digest).collect();
    let s = sketch_difference((3, 6), &source, &[]);
    let got = s.decode();
    assert!(!got.complete);
    // What did decode is part of the difference.
    let all = expected(&source, &[]);
    assert!(got.differences.iter().all(|d| all.contains(d)));
    // 64 cells a table for 2000 digests: every cell used, no estimate.
    assert_eq!(s.estimate(), None);
    let s = sketch_difference((3, 12), &source, &[]);
    let est = s.estimate().unwrap() as f64;
    assert!((1_700.0..2_300.0).contains(&est), "estimate {est}");
}

#[test]
fn folding_gives_the_sketch_of_half_the_cells() {
    let source: Vec<u128> = (0..50).map(digest).collect();
    let target: Vec<u128> = (25..60).map(digest).collect();
    let big = sketch_difference((3, 8), &source, &target);
    let folded = big.fold().unwrap().fold().unwrap();
    assert_eq!(folded, sketch_difference((3, 6), &source, &target));
    assert_eq!(folded.decode().differences, expected(&source, &target));
    let bytes = folded.cell_bytes();
    assert_eq!(bytes.len(), 3 * 64 * 32);
    assert_eq!(Iblt::from_cell_bytes(3, 6, &bytes), Some(folded));
    assert_eq!(Iblt::from_cell_bytes(3, 7, &bytes), None);
}

#[test]
fn fingerprint_buckets_and_two_sub_tables_peel_together() {
    // 30 differing digests, all in one fingerprint bucket: the bucket alone
    // cannot decode them; the sub-tables beside it can.
    let mut picked = Vec::new();
    let mut i = 0;
    while picked.len() < 30 {
        let d = digest(i);
        if fp_bucket_of(d) == 7 {
            picked.push(d);
        }
        i += 1;
    }
    let fps = |ds: &[u128]| {
        let mut f = vec![Fingerprint::default(); FP_BUCKETS];
        for &d in ds {
            f[fp_bucket_of(d)].add(d);
        }
        f
    };
    let mut source: Vec<u128> = (1_000_000..1_000_100).map(digest).collect();
    let mut target = source.clone();
    source.extend(picked.iter().take(20).flat_map(|&d| [d, d, d]));
    target.extend(picked.iter().skip(10));
    let mut buckets = BucketDifferences::new(&fps(&source), &fps(&target));
    let mut sub = sketch_difference((2, 5), &source, &target);
    let got = peel(&mut [&mut buckets, &mut sub]);
    assert!(got.complete);
    assert_eq!(got.differences, expected(&source, &target));
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    /// Random multisets with random copy counts: the decode is the exact
    /// difference, or it says it is incomplete, and whatever it names is
    /// part of the difference. Never a wrong digest or count.
    #[test]
    fn a_decode_is_exact_or_incomplete_never_wrong(
        rows in proptest::collection::vec((0u64..400, 0u8..6, 0u8..6), 0..300),
        log_cells in 2u32..9,
        tables in 1u32..4,
    ) {
        let (mut source, mut target) = (Vec::new(), Vec::new());
        for (d, s, t) in rows {
            source.extend(std::iter::repeat_n(digest(d), s as usize));
            target.extend(std::iter::repeat_n(digest(d), t as usize));
        }
        let want = expected(&source, &target);
        let got = sketch_difference((tables, log_cells), &source, &target).decode();
        if got.complete {
            prop_assert_eq!(&got.differences, &want);
        }
        for d in &got.differences {
            prop_assert!(want.contains(d), "decoded {:?}, not a difference", d);
        }
    }
}

/// What `python3 scripts/sketch_vectors.py` prints (an implementation of
/// docs/sketch.md written from the document): inverses, mixes, a sketch's
/// cells, its fold and its decode must agree line for line.
const VECTORS: &str = "\
# inverses modulo p
inv 1 00000000000000000000000000000001
inv -1 ffffffffffffffffffffffffffffff60
inv 2 7fffffffffffffffffffffffffffffb1
inv 20 59999999999999999999999999999962
inv -16384 9283ffffffffffffffffffffffffffa5
inv 9223372036854775807 2455e2455e2455e248abc48abc48abae
# mix
mix 0123456789abcdeffedcba9876543210 6017b620846b8d29
mix ffffffffffffffffffffffffffffff00 1200a2a61d248b28
mix 00000000000000000000000000000001 b456bcfc34c2cb2c
mix 9e3779b97f4a7c15f39cc0605cedc835 eef0babe323bb51a
mix 243f6a8885a308d313198a2e03707344 ccc3b58d868b2ea1
# 3 tables x 2^3 cells: nonzero cells (index count check sum)
0 0000000000000003 8418fb6cbeb4a379 0123456789abcdeffedcba987654314e
1 ffffffffffffffff 4ba94303cb3d34d4 ffffffffffffffffffffffffffffff60
4 ffffffffffffc000 129c9e5d3457c000 255dde973dcb3b399d747f23e3295f10
5 0000000000000014 aace96dbecaa2608 5c55827df1d1b1b7083f07874293ab98
8 0000000000000014 568f90003c52e805 5d78c7e57b7d7fa7071bc21fb8e7dda7
14 ffffffffffffc000 129c9e5d3457c000 255dde973dcb3b399d747f23e3295f10
15 0000000000000002 2401454c3a491650 fffffffffffffffffffffffffffffe9f
16 ffffffffffffffff 4ba94303cb3d34d4 ffffffffffffffffffffffffffffff60
19 ffffffffffffc000 129c9e5d3457c000 255dde973dcb3b399d747f23e3295f10
21 0000000000000014 aace96dbecaa2608 5c55827df1d1b1b7083f07874293ab98
23 0000000000000003 8418fb6cbeb4a379 0123456789abcdeffedcba987654314e
# folded once: 3 tables x 2^2 cells
0 ffffffffffffc003 96b599c9f30c6379 268123fec77709299c5139bc597d905e
1 0000000000000013 f677d9dfb7e75adc 5c55827df1d1b1b7083f07874293ab97
4 0000000000000014 568f90003c52e805 5d78c7e57b7d7fa7071bc21fb8e7dda7
6 ffffffffffffc000 129c9e5d3457c000 255dde973dcb3b399d747f23e3295f10
7 0000000000000002 2401454c3a491650 fffffffffffffffffffffffffffffe9f
8 ffffffffffffffff 4ba94303cb3d34d4 ffffffffffffffffffffffffffffff60
9 0000000000000014 aace96dbecaa2608 5c55827df1d1b1b7083f07874293ab98
11 ffffffffffffc003 96b599c9f30c6379 268123fec77709299c5139bc597d905e
# peeled: complete=true
peeled 00000000000000000000000000000001 -1
peeled 0123456789abcdeffedcba9876543210 1
peeled 243f6a8885a308d313198a2e03707344 -16384
peeled 9e3779b97f4a7c15f39cc0605cedc835 20
peeled ffffffffffffffffffffffffffffff00 2
# a digest above p: complete=false, peeled 0
";

#[test]
fn the_independent_implementations_vectors_agree() {
    use std::fmt::Write;
    let lines = |s: &Iblt, out: &mut String| {
        for (i, c) in s.as_cells().iter().enumerate() {
            if !c.is_zero() {
                writeln!(out, "{i} {:016x} {:016x} {:032x}", c.count, c.check, c.sum).unwrap();
            }
        }
    };
    let digests: [u128; 5] = [
        0x0123456789ABCDEFFEDCBA9876543210,
        0xFFFFFFFFFFFFFFFFFFFFFFFFFFFFFF00,
        0x00000000000000000000000000000001,
        0x9E3779B97F4A7C15F39CC0605CEDC835,
        0x243F6A8885A308D313198A2E03707344,
    ];
    let counts = [1i64, 2, -1, 20, -16384];
    let mut out = String::from("# inverses modulo p\n");
    for c in [1i64, -1, 2, 20, -16384, i64::MAX] {
        writeln!(out, "inv {c} {:032x}", inv(c)).unwrap();
    }
    out.push_str("# mix\n");
    for d in digests {
        writeln!(out, "mix {d:032x} {:016x}", mix(d)).unwrap();
    }
    let mut s = Iblt::new(3, 3);
    for (d, c) in digests.iter().zip(counts) {
        s.add(*d, c);
    }
    out.push_str("# 3 tables x 2^3 cells: nonzero cells (index count check sum)\n");
    lines(&s, &mut out);
    out.push_str("# folded once: 3 tables x 2^2 cells\n");
    lines(&s.fold().unwrap(), &mut out);
    let peeled = s.decode();
    writeln!(out, "# peeled: complete={}", peeled.complete).unwrap();
    for (d, c) in &peeled.differences {
        writeln!(out, "peeled {d:032x} {c}").unwrap();
    }
    let mut top = Iblt::new(3, 3);
    top.add(u128::MAX, 1);
    let peeled = top.decode();
    writeln!(
        out,
        "# a digest above p: complete={}, peeled {}",
        peeled.complete,
        peeled.differences.len()
    )
    .unwrap();
    assert_eq!(out, VECTORS);
}
