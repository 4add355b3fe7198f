//! The scan floor: read both tables' row groups on N threads with arrow-rs and
//! do nothing else (or, with `--hash`, recon's row digest), to see what recon
//! adds on top of decoding. Used when profiling; not part of the product.
//!
//! cargo run --release --example read_floor -- SOURCE TARGET THREADS [--hash] [--batch N]

use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Instant;

use recon::internals::{open_table, RowEncoder};
use recon::Side;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let opts = recon::internals::InputOptions::default();
    let temp = std::env::temp_dir();
    let tables = [
        open_table(&args[1].as_str().into(), &opts, Side::Source, &temp).unwrap(),
        open_table(&args[2].as_str().into(), &opts, Side::Target, &temp).unwrap(),
    ];
    let threads: usize = args[3].parse().unwrap();
    let hash = args.iter().any(|a| a == "--hash");
    let batch: usize = args
        .iter()
        .position(|a| a == "--batch")
        .and_then(|i| args.get(i + 1))
        .map_or(8192, |b| b.parse().unwrap());
    let units: Vec<(usize, recon::internals::Unit)> = (0..2)
        .flat_map(|s| tables[s].scan_units().into_iter().map(move |u| (s, u)))
        .collect();
    let next = AtomicUsize::new(0);
    let t0 = Instant::now();
    let rows = AtomicUsize::new(0);
    std::thread::scope(|sc| {
        for _ in 0..threads {
            sc.spawn(|| {
                let mut enc = RowEncoder::new();
                let mut out = Vec::new();
                while let Some((s, u)) = units.get(next.fetch_add(1, Ordering::Relaxed)) {
                    let all: Vec<usize> = (0..tables[*s].schema.fields().len()).collect();
                    tables[*s]
                        .read_unit(u, &all, batch, &mut |cols, _| {
                            rows.fetch_add(cols[0].len(), Ordering::Relaxed);
                            if hash {
                                out.clear();
                                enc.digests(cols, &mut out).unwrap();
                            }
                            Ok(())
                        })
                        .unwrap();
                }
            });
        }
    });
    println!(
        "{} rows in {:.2} s",
        rows.into_inner(),
        t0.elapsed().as_secs_f64()
    );
}
