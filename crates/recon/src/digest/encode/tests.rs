//! The encoding's unit tests: the test vectors of docs/encoding.md, and
//! the fast paths against the reference encoder.

use super::canonical::tag;
use super::mix::combine;
use super::*;
use arrow::array::*;
use arrow::buffer::OffsetBuffer;
use arrow::datatypes::*;
use std::sync::Arc;
use xxhash_rust::xxh3::xxh3_128;

fn one(a: ArrayRef) -> Vec<u8> {
    encode_row(&[a], 0).unwrap()
}

#[test]
fn the_combiner_is_combine_and_null_has_its_own_digest() {
    let values = [1u128, u128::MAX, 7 << 64];
    assert_eq!(Combiner::new(3).digest(values), combine(&values));
    // Key digests of a composite key are row digests of the key columns.
    let a: ArrayRef = Arc::new(StringArray::from(vec!["ab", "a"]));
    let b: ArrayRef = Arc::new(StringArray::from(vec!["c", "bc"]));
    let mut rows = Vec::new();
    let mut per = Vec::new();
    RowEncoder::new()
        .digests_with_columns(&[a, b], &mut rows, Some(&mut per))
        .unwrap();
    let keys: Vec<u128> = (0..2)
        .map(|i| Combiner::new(2).digest([per[0][i], per[1][i]]))
        .collect();
    assert_eq!(keys, rows);
    assert_ne!(keys[0], keys[1]);
    assert_eq!(null_digest(), value_digest(&[tag::NULL]));
    let n: ArrayRef = Arc::new(StringArray::from(vec![None, Some(""), Some("NULL")]));
    let mut d = Vec::new();
    let mut per = Vec::new();
    RowEncoder::new()
        .digests_with_columns(&[n], &mut d, Some(&mut per))
        .unwrap();
    assert_eq!(per[0][0], null_digest());
    assert!(per[0][1..].iter().all(|&v| v != null_digest()));
}

fn digest_of(cols: Vec<ArrayRef>) -> Vec<u128> {
    let mut out = Vec::new();
    RowEncoder::new().digests(&cols, &mut out).unwrap();
    out
}

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

/// A map array with string keys and nullable Int64 values.
fn string_int_map(keys: Vec<&str>, values: Vec<Option<i64>>, offsets: Vec<i32>) -> MapArray {
    let entries = StructArray::from(vec![
        (
            Arc::new(Field::new("keys", DataType::Utf8, false)),
            Arc::new(StringArray::from(keys)) as ArrayRef,
        ),
        (
            Arc::new(Field::new("values", DataType::Int64, true)),
            Arc::new(Int64Array::from(values)) as ArrayRef,
        ),
    ]);
    let field = Arc::new(Field::new("entries", entries.data_type().clone(), false));
    MapArray::new(
        field,
        OffsetBuffer::new(offsets.into()),
        entries,
        None,
        false,
    )
}

/// A batch touching every fast path and the reference fallback.
fn wide_batch() -> Vec<ArrayRef> {
    let dict: DictionaryArray<Int32Type> = vec![Some("x"), None, Some("y"), Some("x")]
        .into_iter()
        .collect();
    let map = string_int_map(
        vec!["a", "b", "c"],
        vec![Some(1), None, Some(3)],
        vec![0, 2, 2, 3, 3],
    );
    let strukt = StructArray::from(vec![
        (
            Arc::new(Field::new("b", DataType::Int32, true)),
            Arc::new(Int32Array::from(vec![Some(1), None, Some(3), Some(4)])) as ArrayRef,
        ),
        (
            Arc::new(Field::new("a", DataType::Utf8, true)),
            Arc::new(StringArray::from(vec![
                Some("p"),
                Some(""),
                None,
                Some("q"),
            ])) as ArrayRef,
        ),
    ]);
    vec![
        Arc::new(BooleanArray::from(vec![
            Some(true),
            None,
            Some(false),
            Some(true),
        ])),
        Arc::new(Int8Array::from(vec![
            Some(-1),
            None,
            Some(7),
            Some(i8::MIN),
        ])),
        Arc::new(UInt64Array::from(vec![
            Some(u64::MAX),
            Some(0),
            None,
            Some(5),
        ])),
        Arc::new(Float32Array::from(vec![
            Some(1.5),
            Some(f32::NAN),
            Some(-0.0),
            None,
        ])),
        Arc::new(Float64Array::from(vec![
            Some(-0.0),
            None,
            Some(f64::INFINITY),
            Some(2.25),
        ])),
        Arc::new(
            Decimal128Array::from(vec![Some(150), Some(0), None, Some(-1000)])
                .with_precision_and_scale(10, 2)
                .unwrap(),
        ),
        Arc::new(
            Decimal256Array::from(vec![
                Some(i256::from_i128(1500)),
                None,
                Some(i256::MAX),
                Some(i256::ZERO),
            ])
            .with_precision_and_scale(76, 3)
            .unwrap(),
        ),
        Arc::new(StringArray::from(vec![
            Some("ab"),
            Some(""),
            None,
            Some("NULL"),
        ])),
        Arc::new(LargeStringArray::from(vec![
            Some("c"),
            Some(" "),
            Some("é"),
            None,
        ])),
        Arc::new(StringViewArray::from(vec![
            Some("a string longer than twelve bytes"),
            None,
            Some("s"),
            Some(""),
        ])),
        Arc::new(BinaryArray::from(vec![
            Some(&b"\x00\x01"[..]),
            None,
            Some(b""),
            Some(b"z"),
        ])),
        Arc::new(Date32Array::from(vec![
            Some(0),
            Some(-1),
            None,
            Some(19000),
        ])),
        Arc::new(TimestampMillisecondArray::from(vec![
            Some(1),
            None,
            Some(-5),
            Some(0),
        ])),
        Arc::new(
            TimestampMicrosecondArray::from(vec![Some(1), Some(2), None, Some(3)])
                .with_timezone("+02:00"),
        ),
        Arc::new(dict),
        Arc::new(ListArray::from_iter_primitive::<Int32Type, _, _>(vec![
            Some(vec![Some(1), None]),
            None,
            Some(vec![]),
            Some(vec![Some(2)]),
        ])),
        Arc::new(strukt),
        Arc::new(map),
        Arc::new(NullArray::new(4)),
    ]
}

#[test]
fn narrow_and_dictionary_columns_digest_like_the_reference_into_every_destination() {
    // Wide enough for the per-batch table (span < rows / 4), with NULLs,
    // negative values and a slice; one too wide for it; dictionaries small
    // enough for a table of terms, with NULL keys, and one that is not.
    let n: usize = 1000;
    let small: ArrayRef = Arc::new(Int32Array::from_iter(
        (0..n).map(|i| (i % 7 != 3).then_some((i * 37 % 200) as i32 - 100)),
    ));
    let dates: ArrayRef = Arc::new(Date32Array::from_iter_values(
        (0..n).map(|i| 18_000 + (i * 13 % 150) as i32),
    ));
    let bytes: ArrayRef = Arc::new(UInt8Array::from_iter_values((0..n).map(|i| i as u8)));
    let wide: ArrayRef = Arc::new(Int64Array::from_iter_values(
        (0..n).map(|i| (i as i64) << 40),
    ));
    let labels: DictionaryArray<Int32Type> = (0..n)
        .map(|i| (i % 5 != 1).then(|| ["a", "bb", "a long label, hashed"][i % 3]))
        .collect();
    let names: Vec<String> = (0..n).map(|i| format!("v{i}")).collect();
    let distinct: DictionaryArray<Int16Type> = names.iter().map(|s| s.as_str()).collect();
    // Fixed-width columns of every payload width the vector kernel takes
    // (8: ints and floats, 10: decimals, 12: timestamps), with NULLs.
    let floats: ArrayRef =
        Arc::new(Float64Array::from_iter((0..n).map(|i| {
            (i % 11 != 4).then_some([f64::NAN, -0.0, 1.5e300, -(i as f64)][i % 4])
        })));
    let amounts: ArrayRef = Arc::new(
        Decimal128Array::from_iter(
            (0..n).map(|i| (i % 9 != 2).then_some(i as i128 * 1234 - 50_000)),
        )
        .with_precision_and_scale(18, 2)
        .unwrap(),
    );
    let stamps: ArrayRef = Arc::new(TimestampMicrosecondArray::from_iter(
        (0..n).map(|i| (i % 6 != 5).then_some((i as i64 - 500) * 987_654_321)),
    ));
    let cols = vec![
        small,
        dates,
        bytes,
        wide,
        Arc::new(labels),
        Arc::new(distinct),
        floats,
        amounts,
        stamps,
    ];
    for cols in [cols.clone(), cols.iter().map(|c| c.slice(3, 900)).collect()] {
        let mut digests = Vec::new();
        let mut per = Vec::new();
        RowEncoder::new()
            .digests_with_columns(&cols, &mut digests, Some(&mut per))
            .unwrap();
        let mut summed = Vec::new();
        RowEncoder::new().digests(&cols, &mut summed).unwrap();
        assert_eq!(summed, digests);
        let (mut totalled, mut totals) = (Vec::new(), Vec::new());
        RowEncoder::new()
            .digests_with_totals(&cols, &mut totalled, &mut totals)
            .unwrap();
        assert_eq!(totalled, digests);
        for (c, list) in per.iter().enumerate() {
            let mut t = ValueSum::default();
            t.add_values(list, null_digest());
            assert_eq!(totals[c], t, "column {c}");
        }
        for (row, digest) in digests.iter().enumerate() {
            assert_eq!(*digest, reference_digest(&cols, row).unwrap(), "row {row}");
            for (c, col) in cols.iter().enumerate() {
                let mut e = Vec::new();
                encode_value(col.as_ref(), row, &mut e).unwrap();
                assert_eq!(per[c][row], value_digest(&e), "row {row} column {c}");
            }
        }
    }
}

#[test]
fn fast_paths_equal_the_reference_encoder() {
    let cols = wide_batch();
    let mut enc = RowEncoder::new();
    let mut digests = Vec::new();
    enc.digests(&cols, &mut digests).unwrap();
    for (row, digest) in digests.iter().enumerate() {
        let reference = encode_row(&cols, row).unwrap();
        assert_eq!(
            hex(&enc.encode_one(&cols, row).unwrap()),
            hex(&reference),
            "row {row}"
        );
        assert_eq!(*digest, reference_digest(&cols, row).unwrap());
    }
    // Sliced arrays (non-zero offsets) encode the same as their unsliced rows.
    let sliced: Vec<ArrayRef> = cols.iter().map(|c| c.slice(1, 3)).collect();
    for row in 0..3 {
        assert_eq!(
            enc.encode_one(&sliced, row).unwrap(),
            encode_row(&cols, row + 1).unwrap()
        );
    }
}

#[test]
fn test_vectors_from_the_spec() {
    // These exact bytes are documented in docs/encoding.md; changing them
    // changes every digest and requires a new ENCODING_VERSION.
    let null: ArrayRef = Arc::new(StringArray::from(vec![None::<&str>]));
    assert_eq!(hex(&one(null)), "00");
    let s: ArrayRef = Arc::new(StringArray::from(vec!["ab"]));
    assert_eq!(hex(&one(s)), "06026162");
    let empty: ArrayRef = Arc::new(StringArray::from(vec![""]));
    assert_eq!(hex(&one(empty)), "0600");
    let i: ArrayRef = Arc::new(Int32Array::from(vec![-2]));
    assert_eq!(hex(&one(i)), "02feffffffffffffff");
    let f: ArrayRef = Arc::new(Float64Array::from(vec![1.5]));
    assert_eq!(hex(&one(f)), "03000000000000f83f");
    let d: ArrayRef = Arc::new(
        Decimal128Array::from(vec![150])
            .with_precision_and_scale(10, 2)
            .unwrap(),
    );
    assert_eq!(hex(&one(d)), "0401000f00000000000000");
    let b: ArrayRef = Arc::new(BooleanArray::from(vec![true]));
    assert_eq!(hex(&one(b)), "0101");
    let date: ArrayRef = Arc::new(Date32Array::from(vec![1]));
    assert_eq!(hex(&one(date)), "08005c260500000000");
    let l: ArrayRef = Arc::new(ListArray::from_iter_primitive::<Int8Type, _, _>(vec![
        Some(vec![Some(1), None]),
    ]));
    assert_eq!(hex(&one(l)), "100202010000000000000000");
    let ts: ArrayRef = Arc::new(TimestampMillisecondArray::from(vec![-1]));
    assert_eq!(hex(&one(ts)), "09ffffffffffffffffc0878b3b");
    let big: ArrayRef = Arc::new(UInt64Array::from(vec![u64::MAX]));
    assert_eq!(hex(&one(big)), "0effffffffffffffff0000000000000000");
}

/// Digest test vectors of encoding version 2, documented in
/// docs/encoding.md and recomputed there by an independent Python
/// implementation of the spec (scripts/digest_vectors.py).
#[test]
fn digest_vectors_from_the_spec() {
    let v = |e: &[u8]| format!("{:032x}", value_digest(e));
    assert_eq!(v(&[tag::NULL]), VECTORS[0]);
    assert_eq!(v(&hex_bytes("02feffffffffffffff")), VECTORS[1]);
    assert_eq!(v(&hex_bytes("06026162")), VECTORS[2]);
    let (a0, b0) = column_constants(0);
    let (a1, b1) = column_constants(1);
    assert_eq!(format!("{a0:032x}"), VECTORS[3]);
    assert_eq!(format!("{b0:032x}"), VECTORS[4]);
    assert_eq!(format!("{a1:032x}"), VECTORS[5]);
    assert_eq!(format!("{b1:032x}"), VECTORS[6]);
    // The same vectors through the column writers, in a batch long enough
    // for the fixed-width vector kernel (eight rows at a time) where the
    // CPU has one.
    let ints: ArrayRef = Arc::new(Int64Array::from_iter(
        (0..21).map(|i| (i % 5 != 3).then_some(-2i64)),
    ));
    let mut per = Vec::new();
    RowEncoder::new()
        .digests_with_columns(&[ints], &mut Vec::new(), Some(&mut per))
        .unwrap();
    for (row, d) in per[0].iter().enumerate() {
        let want = if row % 5 == 3 { VECTORS[0] } else { VECTORS[1] };
        assert_eq!(format!("{d:032x}"), want, "row {row}");
    }
    // The demo's first row, ('north', 100): stable across runs,
    // platforms, batch sizes and thread counts.
    let row = digest_of(vec![
        Arc::new(StringArray::from(vec!["north"])),
        Arc::new(Int64Array::from(vec![100])),
    ]);
    assert_eq!(format!("{:032x}", row[0]), VECTORS[7]);
    // A string longer than 14 bytes takes the XXH3-128 path.
    let long = encode_row(
        &[Arc::new(StringArray::from(vec!["a longer string value"]))],
        0,
    )
    .unwrap();
    assert_eq!(v(&long), format!("{:032x}", xxh3_128(&long)));
    assert_eq!(v(&long), VECTORS[8]);
}

fn hex_bytes(h: &str) -> Vec<u8> {
    (0..h.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&h[i..i + 2], 16).unwrap())
        .collect()
}

const VECTORS: [&str; 9] = [
    "736a9cf56a518b388a7ad6c9814ac603",
    "ebc98e8e0919846f44561c4b3139db34",
    "716f5109266eb11169b57f30167ebd37",
    "1ac046dda8e86e2abe2c3b00b1d348c8",
    "0d35b78b9930a2bd80f4d5a8ca972ced",
    "c092b9d3981ecda1b8f05fb9bdfb1c82",
    "4a8035856681dfef3c7581a7ed64c935",
    "4782c54d603d81007ce99b7748fa9eee",
    "6bb100ac22d5938588a8d6192c8c0ce8",
];

#[test]
fn physical_variants_of_a_value_encode_alike() {
    let same = |a: ArrayRef, b: ArrayRef| assert_eq!(one(a), one(b));
    same(
        Arc::new(Int8Array::from(vec![5])),
        Arc::new(UInt64Array::from(vec![5])),
    );
    same(
        Arc::new(Float32Array::from(vec![1.5])),
        Arc::new(Float64Array::from(vec![1.5])),
    );
    same(
        Arc::new(Float64Array::from(vec![f64::from_bits(
            0x7ff8_0000_0000_0001,
        )])),
        Arc::new(Float64Array::from(vec![-f64::NAN])),
    );
    same(
        Arc::new(Float64Array::from(vec![-0.0])),
        Arc::new(Float64Array::from(vec![0.0])),
    );
    same(
        Arc::new(
            Decimal128Array::from(vec![150])
                .with_precision_and_scale(10, 2)
                .unwrap(),
        ),
        Arc::new(
            Decimal256Array::from(vec![i256::from_i128(1_500_000)])
                .with_precision_and_scale(38, 6)
                .unwrap(),
        ),
    );
    same(
        Arc::new(
            Decimal128Array::from(vec![0])
                .with_precision_and_scale(10, 2)
                .unwrap(),
        ),
        Arc::new(
            Decimal64Array::from(vec![0])
                .with_precision_and_scale(5, 0)
                .unwrap(),
        ),
    );
    same(
        Arc::new(StringArray::from(vec!["x"])),
        Arc::new(StringViewArray::from(vec!["x"])),
    );
    let dict: DictionaryArray<Int8Type> = vec!["x"].into_iter().collect();
    same(Arc::new(StringArray::from(vec!["x"])), Arc::new(dict));
    same(
        Arc::new(Date32Array::from(vec![2])),
        Arc::new(Date64Array::from(vec![2 * 86_400_000])),
    );
    same(
        Arc::new(TimestampSecondArray::from(vec![3])),
        Arc::new(TimestampNanosecondArray::from(vec![3_000_000_000])),
    );
    same(
        Arc::new(TimestampSecondArray::from(vec![3]).with_timezone("UTC")),
        Arc::new(TimestampMillisecondArray::from(vec![3000]).with_timezone("+05:00")),
    );
}

#[test]
fn different_values_encode_differently() {
    let differ = |a: Vec<ArrayRef>, b: Vec<ArrayRef>| {
        assert_ne!(encode_row(&a, 0).unwrap(), encode_row(&b, 0).unwrap())
    };
    let s = |v: Option<&str>| Arc::new(StringArray::from(vec![v])) as ArrayRef;
    // NULL, '', ' ', '<NULL>', 'NULL' are five values.
    let five = [None, Some(""), Some(" "), Some("<NULL>"), Some("NULL")];
    for (i, a) in five.iter().enumerate() {
        for b in &five[i + 1..] {
            differ(vec![s(*a)], vec![s(*b)]);
        }
    }
    differ(
        vec![s(Some("ab")), s(Some("c"))],
        vec![s(Some("a")), s(Some("bc"))],
    );
    differ(vec![s(Some("a")), s(None)], vec![s(None), s(Some("a"))]);
    // Naive and zoned timestamps with the same number are different values.
    differ(
        vec![Arc::new(TimestampSecondArray::from(vec![3]))],
        vec![Arc::new(
            TimestampSecondArray::from(vec![3]).with_timezone("UTC"),
        )],
    );
    // Integer 5 is not string "5"; list order matters.
    differ(
        vec![Arc::new(Int64Array::from(vec![5]))],
        vec![s(Some("5"))],
    );
    differ(
        vec![Arc::new(ListArray::from_iter_primitive::<Int32Type, _, _>(
            vec![Some(vec![Some(1), Some(2)])],
        ))],
        vec![Arc::new(ListArray::from_iter_primitive::<Int32Type, _, _>(
            vec![Some(vec![Some(2), Some(1)])],
        ))],
    );
}

#[test]
fn all_null_dictionary_with_no_values_encodes_as_nulls() {
    // Found by tests/it/encoding_props.rs: arrow's normalized_keys panics on
    // an empty dictionary, which an all-NULL batch may carry.
    let d: DictionaryArray<Int16Type> = vec![None::<&str>, None].into_iter().collect();
    assert!(d.values().is_empty());
    let cols: Vec<ArrayRef> = vec![Arc::new(d)];
    let mut out = Vec::new();
    RowEncoder::new().digests(&cols, &mut out).unwrap();
    assert_eq!(out[0], combine(&[value_digest(&[tag::NULL])]));
    assert_eq!(encode_row(&cols, 1).unwrap(), vec![tag::NULL]);
}

#[test]
fn map_entry_order_does_not_matter() {
    let cols = wide_batch();
    let map = cols.iter().find_map(|c| c.as_map_opt()).unwrap();
    // Row 0 holds {a: 1, b: NULL}; build {b: NULL, a: 1} and compare.
    let swapped = string_int_map(vec!["b", "a"], vec![None, Some(1)], vec![0, 2]);
    let mut a = Vec::new();
    encode_value(map, 0, &mut a).unwrap();
    let mut b = Vec::new();
    encode_value(&swapped, 0, &mut b).unwrap();
    assert_eq!(a, b);
}
