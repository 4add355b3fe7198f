//! Row digest throughput per column type, in rows per second.
//!
//! cargo bench --bench digest -- --save-baseline main
//! cargo bench --bench digest -- --baseline main

use std::sync::Arc;

use arrow::array::*;
use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use recon::internals::RowEncoder;

const ROWS: usize = 8192;

fn lcg(seed: &mut u64) -> u64 {
    *seed = seed
        .wrapping_mul(6364136223846793005)
        .wrapping_add(1442695040888963407);
    *seed >> 17
}

fn columns() -> Vec<(&'static str, ArrayRef)> {
    let mut s = 42u64;
    let ints: Int64Array = (0..ROWS).map(|_| Some(lcg(&mut s) as i64)).collect();
    let floats: Float64Array = (0..ROWS).map(|_| Some(lcg(&mut s) as f64 / 7.0)).collect();
    let decimals = Decimal128Array::from(
        (0..ROWS)
            .map(|_| (lcg(&mut s) % 10_000_000) as i128)
            .collect::<Vec<_>>(),
    )
    .with_precision_and_scale(18, 2)
    .unwrap();
    let strings: StringArray = (0..ROWS)
        .map(|_| {
            let v = lcg(&mut s);
            (!v.is_multiple_of(10)).then(|| format!("note {}", v % 100_000))
        })
        .collect();
    let dates: Date32Array = (0..ROWS)
        .map(|_| Some((lcg(&mut s) % 20_000) as i32))
        .collect();
    vec![
        ("int64", Arc::new(ints)),
        ("float64", Arc::new(floats)),
        ("decimal128", Arc::new(decimals)),
        ("utf8", Arc::new(strings)),
        ("date32", Arc::new(dates)),
    ]
}

fn bench_digest(c: &mut Criterion) {
    let cols = columns();
    let mut g = c.benchmark_group("row_digest");
    g.throughput(Throughput::Elements(ROWS as u64));
    let mut enc = RowEncoder::new();
    let mut out = Vec::with_capacity(ROWS);
    for (name, col) in &cols {
        g.bench_with_input(BenchmarkId::new("one_column", name), col, |b, col| {
            b.iter(|| {
                out.clear();
                enc.digests(std::slice::from_ref(col), &mut out).unwrap();
            })
        });
    }
    let all: Vec<ArrayRef> = cols.iter().map(|(_, c)| c.clone()).collect();
    g.bench_function("all_five_columns", |b| {
        b.iter(|| {
            out.clear();
            enc.digests(&all, &mut out).unwrap();
        })
    });
    g.finish();
}

criterion_group!(benches, bench_digest);
criterion_main!(benches);
