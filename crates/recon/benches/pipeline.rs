//! Per-stage benchmarks of the out-of-core pipeline, on seeded synthetic data.
//!
//! cargo bench --bench pipeline -- --save-baseline main
//! cargo bench --bench pipeline -- --baseline main

use std::sync::Arc;

use arrow::array::{ArrayRef, Int64Array, RecordBatch, StringArray};
use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use recon::config::RunSettings;
use recon::internals::{
    reconcile, DriverConfig, EvidenceSlots, Keyless, MultisetMatcher, Partitioner, SpillBudget,
    SpillIndex, SpillWriter,
};
use recon::{diff, DiffOptions};
use recon::{CancelToken, Progress};

const RECORD_BYTES: usize = Keyless::BYTES;

const RECORDS: usize = 1 << 20;
const BUCKETS: usize = 64;

fn splitmix(x: u64) -> u64 {
    let mut z = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// Records for both sides: the target equals the source except every 1000th digest.
fn records(side: u64) -> Vec<[u8; RECORD_BYTES]> {
    (0..RECORDS as u64)
        .map(|i| {
            let salt = if side == 1 && i % 1000 == 0 { 7 } else { 0 };
            let d = ((splitmix(i + salt) as u128) << 64) | splitmix(i ^ 0xABCD) as u128;
            Keyless::encode(d, i)
        })
        .collect()
}

/// Partitions both sides into a fresh directory (returned, so it lives as long as the index).
fn partition(
    dir: &std::path::Path,
    allowance: usize,
    recs: &[Vec<[u8; RECORD_BYTES]>; 2],
) -> (SpillIndex, tempfile::TempDir) {
    let run = tempfile::tempdir_in(dir).unwrap();
    let budget = SpillBudget::new(allowance);
    let mut writer = SpillWriter::new(run.path().to_path_buf(), budget);
    for (side, rs) in recs.iter().enumerate() {
        let mut staging = Partitioner::new(BUCKETS, 256 * 1024, (side * BUCKETS) as u32);
        for r in rs {
            let d = u128::from_le_bytes(r[..16].try_into().unwrap());
            staging.push((d >> 122) as usize, r, &mut writer).unwrap();
        }
        staging.finish(&mut writer).unwrap();
    }
    (SpillIndex::merge(vec![writer], 2 * BUCKETS).unwrap(), run)
}

fn bench_stages(c: &mut Criterion) {
    let recs = [records(0), records(1)];
    let tmp = tempfile::tempdir().unwrap();
    let mut g = c.benchmark_group("pipeline");
    g.sample_size(10);
    g.throughput(Throughput::Elements(2 * RECORDS as u64));
    g.bench_function("partition_and_spill_write_to_disk", |b| {
        b.iter(|| partition(tmp.path(), 0, &recs))
    });
    let (index, _run) = partition(tmp.path(), 0, &recs);
    g.bench_function("spill_read", |b| {
        let mut buf = Vec::new();
        b.iter(|| {
            let mut n = 0usize;
            for key in 0..2 * BUCKETS as u32 {
                for chunk in index.chunks(key) {
                    n += chunk.bytes(&mut buf).unwrap().len();
                }
            }
            n
        })
    });
    let cancel = CancelToken::new();
    let progress = Progress::default();
    g.bench_function("reconcile_multiplicity_maps_2_threads", |b| {
        b.iter(|| {
            let budget = SpillBudget::new(64 << 20);
            let slots = Arc::new(EvidenceSlots {
                bases: [vec![0], vec![0]],
                range_bits: 20,
                ranges: 2,
                chunk_bytes: 64 * 1024,
                dir: tmp.path().to_path_buf(),
                budget: budget.clone(),
                sample: 20,
                record_differences: false,
            });
            let cfg = DriverConfig {
                threads: 2,
                layout: Keyless::LAYOUT,
                max_entries: 1 << 22,
                chunk_bytes: 64 * 1024,
                first_level_bits: 6,
                key_base: 0,
                dir: tmp.path(),
                budget,
                cancel: &cancel,
                progress: &progress,
            };
            let driven = reconcile(&index, BUCKETS, &cfg, || {
                Ok(MultisetMatcher::new(slots.clone()))
            })
            .unwrap();
            let found = MultisetMatcher::merge(driven.matchers, 20, 2).unwrap();
            assert_eq!(found.stats[0].rows, (RECORDS / 1000 + 1) as u64);
        })
    });
    g.finish();
}

/// End to end on a 1M-row pair, evidence fetch included (1000 unmatched rows per side).
fn bench_end_to_end(c: &mut Criterion) {
    let tmp = tempfile::tempdir().unwrap();
    let n = 1_000_000i64;
    let write = |name: &str, changed: bool| {
        let ids: ArrayRef = Arc::new(Int64Array::from_iter_values(0..n));
        let names: ArrayRef = Arc::new(StringArray::from_iter_values((0..n).map(|i| {
            if changed && i % 1000 == 0 {
                format!("changed {i}")
            } else {
                format!("name {}", i % 5000)
            }
        })));
        let batch = RecordBatch::try_from_iter([("id", ids), ("name", names)]).unwrap();
        let path = tmp.path().join(name);
        let props = parquet::file::properties::WriterProperties::builder()
            .set_max_row_group_row_count(Some(100_000))
            .build();
        let mut w = parquet::arrow::ArrowWriter::try_new(
            std::fs::File::create(&path).unwrap(),
            batch.schema(),
            Some(props),
        )
        .unwrap();
        w.write(&batch).unwrap();
        w.close().unwrap();
        path
    };
    let (s, t) = (write("s.parquet", false), write("t.parquet", true));
    let mut g = c.benchmark_group("end_to_end");
    g.sample_size(10);
    g.throughput(Throughput::Elements(2 * n as u64));
    let out = tmp.path().join("out");
    g.bench_function("diff_1m_rows_with_evidence", |b| {
        b.iter(|| {
            let opts = DiffOptions {
                run: RunSettings {
                    threads: 2,
                    memory_limit: 256 << 20,
                    ..RunSettings::default()
                },
                output_dir: Some(out.clone()),
                force: true,
                ..DiffOptions::default()
            };
            let r = diff(&s, &t, &opts).unwrap().report;
            assert_eq!(r.source_only_rows, 1000);
        })
    });
    g.finish();
}

criterion_group!(benches, bench_stages, bench_end_to_end);
criterion_main!(benches);
