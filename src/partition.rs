//! Scan and partition: stream both tables, digest every row, and route each
//! (digest, locator) record to a bucket chosen by the digest's top bits.
//!
//! Row groups of both tables are the units of work; threads pull them from a
//! shared counter, so there is no lock in the per-row path. Each thread stages
//! records per bucket and hands whole chunks to its own [`SpillWriter`].

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;

use arrow::array::ArrayRef;

use crate::diff::Progress;
use crate::encode::RowEncoder;
use crate::error::{panic_message, ReconError, Result};
use crate::input::{ScanUnit, Table};
use crate::normalize::Prep;
use crate::spill::{Partitioner, SpillBudget, SpillIndex, SpillWriter};
use crate::Side;

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

/// Settings shared by the scan workers.
pub struct ScanConfig<'a> {
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

/// The file columns to read (ascending, as the projection yields them) and,
/// per compared column in plan order, its position among them.
type Projection = (Vec<usize>, Vec<usize>);

fn projection(columns: &[usize]) -> Projection {
    let mut projected = columns.to_vec();
    projected.sort_unstable();
    projected.dedup();
    let order = columns
        .iter()
        .filter_map(|c| projected.binary_search(c).ok())
        .collect();
    (projected, order)
}

struct Worker<'a> {
    cfg: &'a ScanConfig<'a>,
    sides: &'a [ScanSide<'a>; 2],
    projections: &'a [Projection; 2],
    writer: SpillWriter,
    staging: Partitioner,
    staging_side: Option<Side>,
    encoder: RowEncoder,
    digests: Vec<u128>,
    rows: [u64; 2],
}

impl Worker<'_> {
    fn run_unit(&mut self, side: Side, unit: ScanUnit) -> Result<()> {
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
        let scan = &self.sides[side.index()];
        let (projected, order) = &self.projections[side.index()];
        let path = scan.table.file_path(unit.file).to_path_buf();
        let reader = scan.table.read_row_group(
            unit.file,
            unit.row_group,
            Some(projected),
            None,
            self.cfg.batch_size,
        )?;
        let mut locator = unit.first_row;
        for batch in reader {
            if self.cfg.cancel.load(Ordering::Relaxed) {
                return Err(ReconError::Interrupted);
            }
            let batch = batch.map_err(|e| ReconError::arrow(&path, e))?;
            let mut columns: Vec<ArrayRef> =
                order.iter().map(|&i| batch.column(i).clone()).collect();
            for (col, prep) in columns.iter_mut().zip(&scan.prep) {
                if !prep.is_noop() {
                    *col = prep.apply(col).map_err(|(row, msg)| {
                        let in_file = locator + row as u64 - scan.table.file_first_row(unit.file);
                        ReconError::input(&path, format!("row {in_file} (counting from 0): {msg}"))
                    })?;
                }
            }
            self.digests.clear();
            self.encoder
                .digests(&columns, &mut self.digests)
                .map_err(|m| ReconError::input(&path, m))?;
            self.cfg
                .progress
                .rows_scanned
                .fetch_add(self.digests.len() as u64, Ordering::Relaxed);
            let mut record = [0u8; RECORD_BYTES];
            for &d in &self.digests {
                record[..16].copy_from_slice(&d.to_le_bytes());
                record[16..].copy_from_slice(&locator.to_le_bytes());
                let bucket = bucket_of(d, self.cfg.bucket_bits);
                self.staging.push(bucket, &record, &mut self.writer)?;
                locator += 1;
            }
        }
        let read = locator - unit.first_row;
        if read != unit.rows {
            return Err(ReconError::input(
                &path,
                format!(
                    "row group {} holds {read} rows but its metadata says {}",
                    unit.row_group, unit.rows
                ),
            ));
        }
        self.rows[side.index()] += read;
        Ok(())
    }
}

/// Scans both sides and partitions their records.
pub fn scan(sides: &[ScanSide<'_>; 2], cfg: &ScanConfig<'_>) -> Result<Partitioned> {
    let buckets = 1usize << cfg.bucket_bits;
    // Source units first, then target: a worker switches side at most once or twice,
    // so one set of staging buffers per worker suffices.
    let mut units: Vec<(Side, ScanUnit)> = Vec::new();
    for side in Side::BOTH {
        units.extend(
            sides[side.index()]
                .table
                .scan_units()
                .into_iter()
                .map(|u| (side, u)),
        );
    }
    // Computed once per side, not per row group.
    let projections = [projection(&sides[0].columns), projection(&sides[1].columns)];
    let next = AtomicUsize::new(0);
    let results: Vec<Result<(SpillWriter, [u64; 2])>> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..cfg.threads.max(1))
            .map(|_| {
                s.spawn(|| -> Result<(SpillWriter, [u64; 2])> {
                    let mut w = Worker {
                        cfg,
                        sides,
                        projections: &projections,
                        writer: SpillWriter::new(cfg.dir.to_path_buf(), cfg.budget.clone()),
                        staging: Partitioner::new(0, cfg.chunk_bytes, 0),
                        staging_side: None,
                        encoder: RowEncoder::new(),
                        digests: Vec::new(),
                        rows: [0, 0],
                    };
                    loop {
                        let i = next.fetch_add(1, Ordering::Relaxed);
                        let Some(&(side, unit)) = units.get(i) else {
                            break;
                        };
                        let path = sides[side.index()].table.file_path(unit.file).to_path_buf();
                        if let Err(e) = guard(&path, || w.run_unit(side, unit)) {
                            // Stop the other workers early; the first error wins.
                            next.store(usize::MAX / 2, Ordering::Relaxed);
                            return Err(e);
                        }
                    }
                    w.staging.finish(&mut w.writer)?;
                    Ok((w.writer, w.rows))
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| {
                h.join()
                    .unwrap_or_else(|_| Err(ReconError::Internal("scan worker panicked".into())))
            })
            .collect()
    });
    let mut writers = Vec::new();
    let mut rows = [0u64; 2];
    for r in results {
        let (w, n) = r?;
        writers.push(w);
        rows[0] += n[0];
        rows[1] += n[1];
    }
    let index = SpillIndex::merge(writers, 2 * buckets)?;
    Ok(Partitioned {
        index,
        buckets,
        rows,
    })
}
