//! Measures whether memory-mapping Parquet inputs cuts the kernel copy
//! (`_copy_to_iter`) enough to matter: reads every row group of both files
//! on N threads with plain arrow-rs, from `File` reads or from a `memmap2`
//! mapping handed to the reader as `Bytes`, and prints the wall time and the
//! process's peak RSS (VmHWM, which counts file-backed mapped pages too).
//! Used for the performance notes; not part of the product.
//!
//! cargo run --release --example mmap_floor -- SOURCE TARGET THREADS file|mmap

use std::fs::File;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Instant;

use bytes::Bytes;
use parquet::arrow::arrow_reader::{ArrowReaderMetadata, ParquetRecordBatchReaderBuilder};

fn vm_hwm_kib() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmHWM:"))
                .and_then(|l| l.split_whitespace().nth(1)?.parse().ok())
        })
        .unwrap_or(0)
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let threads: usize = args[3].parse().unwrap();
    let mmap = args[4] == "mmap";
    let paths = [&args[1], &args[2]];
    let maps: Vec<Option<Bytes>> = paths
        .iter()
        .map(|p| {
            mmap.then(|| {
                let f = File::open(p).unwrap();
                // SAFETY: the benchmark's input files are not modified while
                // mapped (the reason recon itself does not map inputs).
                let m = unsafe { memmap2::Mmap::map(&f).unwrap() };
                Bytes::from_owner(m)
            })
        })
        .collect();
    let metas: Vec<ArrowReaderMetadata> = paths
        .iter()
        .map(|p| ArrowReaderMetadata::load(&File::open(p).unwrap(), Default::default()).unwrap())
        .collect();
    let units: Vec<(usize, usize)> = (0..2)
        .flat_map(|s| (0..metas[s].metadata().num_row_groups()).map(move |g| (s, g)))
        .collect();
    let next = AtomicUsize::new(0);
    let rows = AtomicUsize::new(0);
    let t0 = Instant::now();
    std::thread::scope(|sc| {
        for _ in 0..threads {
            sc.spawn(|| {
                while let Some(&(s, g)) = units.get(next.fetch_add(1, Ordering::Relaxed)) {
                    let n: usize = match &maps[s] {
                        Some(bytes) => ParquetRecordBatchReaderBuilder::new_with_metadata(
                            bytes.clone(),
                            metas[s].clone(),
                        )
                        .with_row_groups(vec![g])
                        .build()
                        .unwrap()
                        .map(|b| b.unwrap().num_rows())
                        .sum(),
                        None => ParquetRecordBatchReaderBuilder::new_with_metadata(
                            File::open(paths[s]).unwrap(),
                            metas[s].clone(),
                        )
                        .with_row_groups(vec![g])
                        .build()
                        .unwrap()
                        .map(|b| b.unwrap().num_rows())
                        .sum(),
                    };
                    rows.fetch_add(n, Ordering::Relaxed);
                }
            });
        }
    });
    println!(
        "{}: {} rows in {:.2} s, VmHWM {} MiB",
        if mmap { "mmap" } else { "file" },
        rows.into_inner(),
        t0.elapsed().as_secs_f64(),
        vm_hwm_kib() / 1024
    );
}
