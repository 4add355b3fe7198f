//! The row encoding on arbitrary values: the fast per-column encoders give
//! the same digests as the reference encoder, and equal rows equal digests.
#![no_main]
use std::sync::Arc;

use arrow::array::{ArrayRef, Float64Array, Int64Array, StringArray};
use libfuzzer_sys::fuzz_target;
use recon::internals::{encode_row, reference_digest, RowEncoder};

fuzz_target!(|data: &[u8]| {
    let n = data.len() / 9;
    if n == 0 {
        return;
    }
    let ints: Vec<Option<i64>> = (0..n)
        .map(|i| {
            let b = &data[i * 9..i * 9 + 9];
            (b[8] % 5 != 0).then(|| i64::from_le_bytes(b[..8].try_into().unwrap()))
        })
        .collect();
    let floats: Vec<Option<f64>> = ints.iter().map(|v| v.map(|x| f64::from_bits(x as u64))).collect();
    let texts: Vec<Option<String>> = (0..n)
        .map(|i| {
            let b = &data[i * 9..i * 9 + 9];
            (b[8] % 7 != 0).then(|| String::from_utf8_lossy(&b[..(b[8] as usize % 9)]).into_owned())
        })
        .collect();
    let cols: Vec<ArrayRef> = vec![
        Arc::new(Int64Array::from(ints)),
        Arc::new(Float64Array::from(floats)),
        Arc::new(StringArray::from(texts)),
    ];
    let mut fast = Vec::new();
    RowEncoder::new().digests(&cols, &mut fast).unwrap();
    for (row, d) in fast.iter().enumerate() {
        // The fast encoders write the reference encoding, byte for byte.
        let reference = encode_row(&cols, row).unwrap();
        assert_eq!(RowEncoder::new().encode_one(&cols, row).unwrap(), reference, "row {row}");
        assert_eq!(*d, reference_digest(&cols, row).unwrap(), "row {row}");
    }
    // Slicing never changes a row's digest.
    if n > 1 {
        let sliced: Vec<ArrayRef> = cols.iter().map(|c| c.slice(1, n - 1)).collect();
        let mut again = Vec::new();
        RowEncoder::new().digests(&sliced, &mut again).unwrap();
        assert_eq!(&fast[1..], &again[..]);
    }
});
