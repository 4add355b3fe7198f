//! Scan and partition: stream both tables, digest every row, and route each
//! (digest, locator) record to a bucket chosen by the digest's top bits.
//!
//! Row groups of both tables are the units of work; threads pull them from a
//! shared counter, so there is no lock in the per-row path. Each thread stages
//! records per bucket and hands whole chunks to its own [`SpillWriter`].

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use arrow::array::ArrayRef;

use crate::diff::Progress;
use crate::encode::RowEncoder;
use crate::error::{panic_message, ReconError, Result};
use crate::input::{Table, Unit};
use crate::normalize::{Prep, Refused};
use crate::spill::{Partitioner, SpillBudget, SpillIndex, SpillWriter};
use crate::Side;

/// Bytes of text handed to a worker at once.
const TEXT_CHUNK: usize = 2 << 20;

/// Bytes of one partition record: digest (u128 LE) then locator (u64 LE).
pub const RECORD_BYTES: usize = 24;

/// Everything the scan needs to know about one side.
pub struct ScanSide<'a> {
    pub table: &'a Table,
    /// Top-level column indices of the compared columns, in plan order.
    pub columns: Vec<usize>,
    /// Per compared column: conversion and normalization before hashing.
    pub prep: Vec<Prep>,
}

/// Buckets of the fingerprint pass are chosen by the digest's top bits.
pub const FP_BITS: u32 = 14;
pub const FP_BUCKETS: usize = 1 << FP_BITS;

/// A multiset fingerprint of the digests in one bucket: count, wrapping sum
/// of the 128-bit digests, and a wrapping sum of a nonlinear 64-bit mix of
/// them. Two multisets that differ have equal fingerprints only by a
/// coincidence of the order of 2^-128 (see the README's collision argument).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Fingerprint {
    pub count: u64,
    pub sum: u128,
    pub mix: u64,
}

impl Fingerprint {
    #[inline]
    fn add(&mut self, d: u128) {
        self.count += 1;
        self.sum = self.sum.wrapping_add(d);
        // MurmurHash3's finalizer over both halves: no linear relation with `sum`.
        let mut x = (d as u64) ^ ((d >> 64) as u64).rotate_left(23);
        x = (x ^ (x >> 33)).wrapping_mul(0xff51_afd7_ed55_8ccd);
        x = (x ^ (x >> 33)).wrapping_mul(0xc4ce_b9fe_1a85_ec53);
        self.mix = self.mix.wrapping_add(x ^ (x >> 33));
    }

    fn merge(&mut self, o: &Fingerprint) {
        self.count += o.count;
        self.sum = self.sum.wrapping_add(o.sum);
        self.mix = self.mix.wrapping_add(o.mix);
    }
}

#[inline]
pub fn fp_bucket_of(digest: u128) -> usize {
    (digest >> (128 - FP_BITS)) as usize
}

/// What a scan does with each row's digest.
#[derive(Clone)]
pub enum ScanMode {
    /// Pass 1 of two: only fingerprint each bucket per side; nothing spills.
    Fingerprint,
    /// Spill (digest, locator) records; with a filter, only those whose
    /// fingerprint bucket is marked (the buckets that differ).
    Partition { filter: Option<Arc<Vec<bool>>> },
}

/// Settings shared by the scan workers.
pub struct ScanConfig<'a> {
    pub mode: ScanMode,
    pub threads: usize,
    pub bucket_bits: u32,
    pub chunk_bytes: usize,
    pub batch_size: usize,
    pub dir: &'a Path,
    pub budget: Arc<SpillBudget>,
    pub cancel: &'a AtomicBool,
    pub progress: &'a Progress,
}

/// The partitioned records: key `side * buckets + bucket`.
pub struct Partitioned {
    pub index: SpillIndex,
    pub buckets: usize,
    /// Rows actually read per side.
    pub rows: [u64; 2],
    /// With [`ScanMode::Fingerprint`]: per side, one fingerprint per bucket.
    pub fingerprints: [Vec<Fingerprint>; 2],
}

/// Which first-level bucket a digest belongs to.
#[inline]
pub fn bucket_of(digest: u128, bits: u32) -> usize {
    if bits == 0 {
        0
    } else {
        (digest >> (128 - bits)) as usize
    }
}

/// Turns a panic raised while decoding a file into an error that names it:
/// a corrupt file must never crash recon.
pub(crate) fn guard<T>(path: &Path, f: impl FnOnce() -> Result<T>) -> Result<T> {
    match catch_unwind(AssertUnwindSafe(f)) {
        Ok(r) => r,
        Err(payload) => Err(ReconError::input(
            path,
            format!(
                "corrupt or unreadable data: {}",
                panic_message(payload.as_ref())
            ),
        )),
    }
}

type WorkerOutput = (SpillWriter, [u64; 2], [Vec<Fingerprint>; 2]);

struct Worker<'a> {
    cfg: &'a ScanConfig<'a>,
    sides: &'a [ScanSide<'a>; 2],
    writer: SpillWriter,
    staging: Partitioner,
    staging_side: Option<Side>,
    encoder: RowEncoder,
    digests: Vec<u128>,
    rows: [u64; 2],
    fingerprints: [Vec<Fingerprint>; 2],
}

impl Worker<'_> {
    fn run_unit(&mut self, side: Side, unit: &Unit) -> Result<()> {
        let buckets = 1usize << self.cfg.bucket_bits;
        if self.staging_side != Some(side) {
            self.staging.finish(&mut self.writer)?;
            self.staging = Partitioner::new(
                buckets,
                self.cfg.chunk_bytes,
                side.index() as u32 * buckets as u32,
            );
            self.staging_side = Some(side);
        }
        let sides = self.sides;
        let cfg = self.cfg;
        let scan = &sides[side.index()];
        let table = scan.table;
        let path = table.file_path(unit.file()).to_path_buf();
        let (staging, writer, encoder, digests) = (
            &mut self.staging,
            &mut self.writer,
            &mut self.encoder,
            &mut self.digests,
        );
        let fps = &mut self.fingerprints[side.index()];
        let filter = match &cfg.mode {
            ScanMode::Partition { filter } => filter.as_deref(),
            ScanMode::Fingerprint => None,
        };
        let fingerprinting = matches!(cfg.mode, ScanMode::Fingerprint);
        let mut hashed = 0u64;
        let read = table.read_unit(unit, &scan.columns, cfg.batch_size, &mut |cols, locs| {
            if cfg.cancel.load(Ordering::Relaxed) {
                return Err(ReconError::Interrupted);
            }
            let kept: Vec<u64>;
            let (columns, locs) = match prepare(&scan.prep, cols) {
                Ok(columns) => (columns, locs),
                Err(refused) => {
                    // Values a conversion refuses are errors, or with
                    // --max-parse-errors counted as drift like text that does
                    // not parse: their rows leave the comparison.
                    let rows = cols.first().map_or(0, |c| c.len());
                    let keep = count_refusals(table, &path, locs, rows, refused)?;
                    let mask = arrow::array::BooleanArray::from(keep.clone());
                    let filtered = cols
                        .iter()
                        .map(|c| {
                            arrow::compute::filter(c.as_ref(), &mask)
                                .map_err(|e| ReconError::arrow(&path, e))
                        })
                        .collect::<Result<Vec<_>>>()?;
                    kept = (0..keep.len())
                        .filter(|&i| keep[i])
                        .map(|i| locs.get(i))
                        .collect();
                    let columns = prepare(&scan.prep, &filtered).map_err(|r| {
                        ReconError::Internal(format!("a conversion refused a kept row: {r:?}"))
                    })?;
                    (columns, crate::input::Locators::List(&kept))
                }
            };
            digests.clear();
            encoder
                .digests(&columns, digests)
                .map_err(|m| ReconError::input(&path, m))?;
            cfg.progress
                .rows_scanned
                .fetch_add(digests.len() as u64, Ordering::Relaxed);
            hashed += digests.len() as u64;
            if fingerprinting {
                for &d in digests.iter() {
                    fps[fp_bucket_of(d)].add(d);
                }
                return Ok(());
            }
            let mut record = [0u8; RECORD_BYTES];
            for (i, &d) in digests.iter().enumerate() {
                if filter.is_some_and(|f| !f[fp_bucket_of(d)]) {
                    continue;
                }
                record[..16].copy_from_slice(&d.to_le_bytes());
                record[16..].copy_from_slice(&locs.get(i).to_le_bytes());
                let bucket = bucket_of(d, cfg.bucket_bits);
                staging.push(bucket, &record, writer)?;
            }
            Ok(())
        })?;
        if let Unit::Stream { file } = unit {
            table.files[*file].set_extent(read);
        }
        self.rows[side.index()] += hashed;
        Ok(())
    }
}

/// Applies each column's conversion and rules.
fn prepare(preps: &[Prep], cols: &[ArrayRef]) -> std::result::Result<Vec<ArrayRef>, Refused> {
    cols.iter()
        .zip(preps)
        .map(|(c, p)| {
            if p.is_noop() {
                Ok(c.clone())
            } else {
                p.apply(c)
            }
        })
        .collect()
}

/// Counts the rows holding refused values against `--max-parse-errors`
/// (an error past it), records them in the table's parse errors, and
/// returns which rows of the batch to keep.
fn count_refusals(
    table: &Table,
    path: &Path,
    locs: crate::input::Locators<'_>,
    rows: usize,
    refused: Refused,
) -> Result<Vec<bool>> {
    let allowed = table.text.max_parse_errors;
    let mut keep = vec![true; rows];
    for (row, msg) in refused {
        if keep.get(row) != Some(&true) {
            continue;
        }
        keep[row] = false;
        let message = format!("{}: {msg}", table.position(locs.get(row)));
        let seen = table.parse_errors.count.fetch_add(1, Ordering::Relaxed) + 1;
        if seen > allowed {
            let hint = if allowed == 0 {
                " (or --max-parse-errors N to count such values as drift)"
            } else {
                " (more than --max-parse-errors)"
            };
            return Err(ReconError::input(path, format!("{message}{hint}")));
        }
        table
            .parse_errors
            .record(locs.get(row), format!("{}: {message}", path.display()));
    }
    Ok(keep)
}

/// Scans both sides and partitions their records.
pub fn scan(sides: &[ScanSide<'_>; 2], cfg: &ScanConfig<'_>) -> Result<Partitioned> {
    let buckets = 1usize << cfg.bucket_bits;
    let threads = cfg.threads.max(1);
    // One feeder hands out units in order, source first, then target, so a
    // worker switches side at most once or twice and one set of staging
    // buffers per worker suffices. Text files are cut into chunks of whole
    // records here; everything else is one unit per row group or batch.
    let (tx, rx) = crossbeam_channel::bounded::<(Side, Unit)>(threads);
    let stop = AtomicBool::new(false);
    // Units in order, source first. Text files need a reader thread each
    // while they are cut into chunks; with several text files, up to
    // `threads` readers work at once (each on its own file), so a directory
    // of gzip parts decompresses in parallel.
    let units: Vec<(Side, Unit)> = Side::BOTH
        .into_iter()
        .flat_map(|side| {
            sides[side.index()]
                .table
                .block_units()
                .into_iter()
                .map(move |u| (side, u))
        })
        .collect();
    let text_files = units
        .iter()
        .filter(|(_, u)| matches!(u, Unit::TextFile { .. }))
        .count();
    let feeders = text_files.clamp(1, threads);
    // A queue of the units in order; feeders take the next one as they free up.
    let (queue, pending) = crossbeam_channel::unbounded();
    for u in units {
        let _ = queue.send(u);
    }
    drop(queue);
    let (feeder, results) = std::thread::scope(|s| {
        let feed = |tx: crossbeam_channel::Sender<(Side, Unit)>| -> Result<()> {
            loop {
                if stop.load(Ordering::Relaxed) {
                    return Ok(());
                }
                let Ok((side, unit)) = pending.try_recv() else {
                    return Ok(());
                };
                let table = sides[side.index()].table;
                let ok = match unit {
                    Unit::TextFile { file } => {
                        let mut sent = true;
                        let fed = guard(table.file_path(file), || {
                            table.feed_text(file, TEXT_CHUNK, &mut |u| {
                                sent = !stop.load(Ordering::Relaxed) && tx.send((side, u)).is_ok();
                                sent
                            })
                        });
                        if fed.is_err() {
                            // Unreadable text: stop the workers instead of finishing other units.
                            stop.store(true, Ordering::Relaxed);
                        }
                        fed?;
                        sent
                    }
                    other => tx.send((side, other)).is_ok(),
                };
                if !ok {
                    return Ok(());
                }
            }
        };
        let feeder_handles: Vec<_> = (0..feeders)
            .map(|_| {
                let tx = tx.clone();
                s.spawn(move || feed(tx))
            })
            .collect();
        // The channel closes when the last feeder's sender is gone.
        drop(tx);
        let handles: Vec<_> = (0..threads)
            .map(|_| {
                let rx = rx.clone();
                let stop = &stop;
                s.spawn(move || -> Result<WorkerOutput> {
                    let mut w = Worker {
                        cfg,
                        sides,
                        writer: SpillWriter::new(cfg.dir.to_path_buf(), cfg.budget.clone()),
                        staging: Partitioner::new(0, cfg.chunk_bytes, 0),
                        staging_side: None,
                        encoder: RowEncoder::new(),
                        digests: Vec::new(),
                        rows: [0, 0],
                        fingerprints: match cfg.mode {
                            ScanMode::Fingerprint => [
                                vec![Fingerprint::default(); FP_BUCKETS],
                                vec![Fingerprint::default(); FP_BUCKETS],
                            ],
                            ScanMode::Partition { .. } => [Vec::new(), Vec::new()],
                        },
                    };
                    for (side, unit) in rx.iter() {
                        let path = sides[side.index()]
                            .table
                            .file_path(unit.file())
                            .to_path_buf();
                        if let Err(e) = guard(&path, || w.run_unit(side, &unit)) {
                            // Stop the feeder and the other workers early; the first error wins.
                            stop.store(true, Ordering::Relaxed);
                            return Err(e);
                        }
                        if stop.load(Ordering::Relaxed) {
                            return Err(ReconError::Interrupted);
                        }
                    }
                    w.staging.finish(&mut w.writer)?;
                    Ok((w.writer, w.rows, w.fingerprints))
                })
            })
            .collect();
        drop(rx);
        let results: Vec<Result<WorkerOutput>> = handles
            .into_iter()
            .map(|h| {
                h.join()
                    .unwrap_or_else(|_| Err(ReconError::Internal("scan worker panicked".into())))
            })
            .collect();
        let feeder = feeder_handles
            .into_iter()
            .map(|h| {
                h.join()
                    .unwrap_or_else(|_| Err(ReconError::Internal("scan feeder panicked".into())))
            })
            .collect::<Result<Vec<()>>>()
            .map(|_| ());
        (feeder, results)
    });
    // A feeder error (unreadable or corrupt text) explains worker stops, so it comes first;
    // among workers, a real error beats the "interrupted" of those stopped by it.
    feeder?;
    let mut writers = Vec::new();
    let mut rows = [0u64; 2];
    let mut failed = None;
    let mut fingerprints: [Vec<Fingerprint>; 2] = [Vec::new(), Vec::new()];
    for r in results {
        match r {
            Ok((w, n, fps)) => {
                writers.push(w);
                rows[0] += n[0];
                rows[1] += n[1];
                for (into, from) in fingerprints.iter_mut().zip(fps) {
                    if into.is_empty() {
                        *into = from;
                    } else {
                        for (a, b) in into.iter_mut().zip(&from) {
                            a.merge(b);
                        }
                    }
                }
            }
            Err(ReconError::Interrupted) => {
                failed.get_or_insert(ReconError::Interrupted);
            }
            Err(e) => {
                if matches!(failed, None | Some(ReconError::Interrupted)) {
                    failed = Some(e);
                }
            }
        }
    }
    if let Some(e) = failed {
        return Err(e);
    }
    let index = SpillIndex::merge(writers, 2 * buckets)?;
    Ok(Partitioned {
        index,
        buckets,
        rows,
        fingerprints,
    })
}
