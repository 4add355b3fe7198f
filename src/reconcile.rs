//! Reconciliation: for each bucket, a multiplicity map counts every digest on
//! both sides; a digest whose counts differ is unmatched by the difference.
//!
//! This is exactly `EXCEPT ALL` in both directions: a row with `s` copies in
//! the source and `t` in the target contributes `s - t` source-only rows when
//! `s > t` and `t - s` target-only rows when `t > s`. Because all copies of a
//! digest are the same row, one locator per side is enough to fetch them all.
//!
//! A map that would outgrow its memory share is abandoned and its bucket is
//! split sixteen ways by the next four digest bits, recursively. Identical
//! rows share one map entry, so heavy duplication never forces a split.

use std::collections::{BinaryHeap, HashMap};
use std::hash::{BuildHasherDefault, Hasher};
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::Arc;

use crate::diff::Progress;
use crate::error::{ReconError, Result};
use crate::partition::RECORD_BYTES;
use crate::spill::{ChunkRef, Partitioner, SpillBudget, SpillIndex, SpillWriter};
use crate::Side;

/// Bytes of one evidence record: locator (u64 LE) then excess copies (u64 LE).
pub const EVIDENCE_BYTES: usize = 16;
const NO_LOCATOR: u64 = u64::MAX;
const SPLIT_BITS: u32 = 4;

/// Digests are already uniform random bits, so the map hashes them by taking
/// their low 64 bits (the bucket is chosen by the high bits, so these are
/// independent of it). A general-purpose hasher would only add cost.
#[derive(Default)]
pub struct DigestHasher(u64);

impl Hasher for DigestHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = self.0.rotate_left(8) ^ b as u64;
        }
    }
    fn write_u128(&mut self, v: u128) {
        self.0 = v as u64;
    }
}

type DigestMap = HashMap<u128, Counts, BuildHasherDefault<DigestHasher>>;

#[derive(Clone, Copy)]
struct Counts {
    source: u64,
    target: u64,
    /// Smallest locator seen per side: deterministic whatever the scan order.
    source_loc: u64,
    target_loc: u64,
}

impl Counts {
    const EMPTY: Counts = Counts {
        source: 0,
        target: 0,
        source_loc: NO_LOCATOR,
        target_loc: NO_LOCATOR,
    };
}

/// Unmatched-row counts for one direction (source-only or target-only).
#[derive(Debug, Default, Clone, Copy, serde::Serialize, PartialEq, Eq)]
pub struct DirectionStats {
    /// Unmatched row occurrences: what `EXCEPT ALL` returns.
    pub rows: u64,
    /// Distinct unmatched row values.
    pub distinct_rows: u64,
    /// Occurrences of values absent from the other side.
    pub absent_rows: u64,
    pub absent_distinct: u64,
    /// Extra copies of values the other side also holds, with fewer copies.
    pub extra_copy_rows: u64,
    pub extra_copy_distinct: u64,
}

impl DirectionStats {
    fn add(&mut self, o: &DirectionStats) {
        self.rows += o.rows;
        self.distinct_rows += o.distinct_rows;
        self.absent_rows += o.absent_rows;
        self.absent_distinct += o.absent_distinct;
        self.extra_copy_rows += o.extra_copy_rows;
        self.extra_copy_distinct += o.extra_copy_distinct;
    }
}

/// One distinct unmatched row chosen for display.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct SampleRef {
    /// Samples are the unmatched rows with the smallest digests: a choice that
    /// does not depend on row order, file splits or threads.
    pub digest: u128,
    pub locator: u64,
    pub source_count: u64,
    pub target_count: u64,
}

/// What reconciliation found.
pub struct Reconciled {
    pub stats: [DirectionStats; 2],
    pub samples: [Vec<SampleRef>; 2],
    /// Evidence records under key `side * ranges + range`, ranges in locator order.
    pub evidence: SpillIndex,
    pub ranges: usize,
    /// Buckets that had to be split because their map would not fit.
    pub splits: u64,
    pub rows_seen: [u64; 2],
}

/// Settings for reconciliation.
pub struct ReconcileConfig<'a> {
    pub threads: usize,
    pub map_max_entries: usize,
    pub chunk_bytes: usize,
    pub range_bits: u32,
    pub ranges: usize,
    /// Per side, per file: the dense ordinal of the file's first position, so
    /// that a locator's range is `(base + position) >> range_bits`.
    pub bases: [Vec<u64>; 2],
    pub sample: usize,
    pub first_level_bits: u32,
    pub dir: &'a Path,
    pub budget: Arc<SpillBudget>,
    pub cancel: &'a AtomicBool,
    pub progress: &'a Progress,
}

struct Worker<'a> {
    cfg: &'a ReconcileConfig<'a>,
    map: DigestMap,
    evidence_writer: SpillWriter,
    evidence: Partitioner,
    stats: [DirectionStats; 2],
    samples: [BinaryHeap<SampleRef>; 2],
    splits: u64,
    rows_seen: [u64; 2],
    buf: Vec<u8>,
}

enum MapOutcome {
    Done(DigestMap),
    TooBig,
}

impl Worker<'_> {
    fn count_side(
        &mut self,
        map: &mut DigestMap,
        chunks: &[ChunkRef<'_>],
        side: Side,
    ) -> Result<bool> {
        let max = self.cfg.map_max_entries;
        let mut seen = 0u64;
        for chunk in chunks {
            let bytes = chunk.bytes(&mut self.buf)?;
            for rec in bytes.chunks_exact(RECORD_BYTES) {
                let (d, l) = rec.split_at(16);
                let digest = u128::from_le_bytes(d.try_into().unwrap_or([0; 16]));
                let loc = u64::from_le_bytes(l.try_into().unwrap_or([0; 8]));
                let e = map.entry(digest).or_insert(Counts::EMPTY);
                match side {
                    Side::Source => {
                        e.source += 1;
                        e.source_loc = e.source_loc.min(loc);
                    }
                    Side::Target => {
                        e.target += 1;
                        e.target_loc = e.target_loc.min(loc);
                    }
                }
                seen += 1;
                // Stop before the map would have to grow past its share.
                if map.len() >= max {
                    return Ok(false);
                }
            }
        }
        self.rows_seen[side.index()] += seen;
        Ok(true)
    }

    fn build_map(
        &mut self,
        src: &[ChunkRef<'_>],
        tgt: &[ChunkRef<'_>],
        records: usize,
    ) -> Result<MapOutcome> {
        let cap = records.min(self.cfg.map_max_entries);
        // One map per worker, cleared between buckets: its table stays
        // allocated (within the worker's share) instead of being faulted in
        // afresh for every bucket.
        let mut map = std::mem::take(&mut self.map);
        map.clear();
        map.reserve(cap);
        let seen_before = self.rows_seen;
        if !self.count_side(&mut map, src, Side::Source)?
            || !self.count_side(&mut map, tgt, Side::Target)?
        {
            self.rows_seen = seen_before;
            map.clear();
            self.map = map;
            return Ok(MapOutcome::TooBig);
        }
        Ok(MapOutcome::Done(map))
    }

    fn emit(&mut self, mut map: DigestMap) -> Result<()> {
        for (digest, c) in map.drain() {
            if c.source == c.target {
                continue;
            }
            let (side, excess, loc, other) = if c.source > c.target {
                (Side::Source, c.source - c.target, c.source_loc, c.target)
            } else {
                (Side::Target, c.target - c.source, c.target_loc, c.source)
            };
            let st = &mut self.stats[side.index()];
            st.rows += excess;
            st.distinct_rows += 1;
            if other == 0 {
                st.absent_rows += excess;
                st.absent_distinct += 1;
            } else {
                st.extra_copy_rows += excess;
                st.extra_copy_distinct += 1;
            }
            let mut rec = [0u8; EVIDENCE_BYTES];
            rec[..8].copy_from_slice(&loc.to_le_bytes());
            rec[8..].copy_from_slice(&excess.to_le_bytes());
            let (file, pos) = crate::input::unpack(loc);
            let base = self.cfg.bases[side.index()].get(file).copied().unwrap_or(0);
            let range = ((base + pos) >> self.cfg.range_bits) as usize;
            let slot = side.index() * self.cfg.ranges + range.min(self.cfg.ranges - 1);
            self.evidence.push(slot, &rec, &mut self.evidence_writer)?;
            if self.cfg.sample > 0 {
                let heap = &mut self.samples[side.index()];
                heap.push(SampleRef {
                    digest,
                    locator: loc,
                    source_count: c.source,
                    target_count: c.target,
                });
                if heap.len() > self.cfg.sample {
                    heap.pop();
                }
            }
        }
        self.map = map;
        Ok(())
    }

    /// Reconciles one bucket given its chunks; `depth` digest bits are already fixed.
    fn bucket(&mut self, src: Vec<ChunkRef<'_>>, tgt: Vec<ChunkRef<'_>>, depth: u32) -> Result<()> {
        if self.cfg.cancel.load(Ordering::Relaxed) {
            return Err(ReconError::Interrupted);
        }
        let records = src.iter().chain(&tgt).map(|c| c.len()).sum::<usize>() / RECORD_BYTES;
        if records == 0 {
            return Ok(());
        }
        if let MapOutcome::Done(map) = self.build_map(&src, &tgt, records)? {
            return self.emit(map);
        }
        if depth + SPLIT_BITS > 128 {
            return Err(ReconError::Internal(
                "bucket cannot be split further".into(),
            ));
        }
        self.splits += 1;
        // Split by the next digest bits into a private sub-partition, then recurse.
        let parts = 1usize << SPLIT_BITS;
        let mut writer = SpillWriter::new(self.cfg.dir.to_path_buf(), self.cfg.budget.clone());
        let mut staging = Partitioner::new(2 * parts, self.cfg.chunk_bytes, 0);
        for (side, chunks) in [(Side::Source, &src), (Side::Target, &tgt)] {
            for chunk in chunks.iter() {
                let bytes = chunk.bytes(&mut self.buf)?;
                for rec in bytes.chunks_exact(RECORD_BYTES) {
                    let rec: &[u8; RECORD_BYTES] = rec.try_into().unwrap_or(&[0; RECORD_BYTES]);
                    let digest = u128::from_le_bytes(rec[..16].try_into().unwrap_or([0; 16]));
                    let sub = ((digest << depth) >> (128 - SPLIT_BITS)) as usize;
                    staging.push(side.index() * parts + sub, rec, &mut writer)?;
                }
            }
        }
        staging.finish(&mut writer)?;
        drop(src);
        drop(tgt);
        let index = SpillIndex::merge(vec![writer], 2 * parts)?;
        for sub in 0..parts {
            let s: Vec<_> = index.chunks(sub as u32).collect();
            let t: Vec<_> = index.chunks((parts + sub) as u32).collect();
            self.bucket(s, t, depth + SPLIT_BITS)?;
        }
        Ok(())
    }
}

/// Reconciles every bucket of `index` (keys `side * buckets + bucket`) on
/// `cfg.threads` workers.
pub fn reconcile(
    index: &SpillIndex,
    buckets: usize,
    cfg: &ReconcileConfig<'_>,
) -> Result<Reconciled> {
    let next = AtomicUsize::new(0);
    let splits = AtomicU64::new(0);
    type Out = (
        SpillWriter,
        [DirectionStats; 2],
        [BinaryHeap<SampleRef>; 2],
        [u64; 2],
    );
    let results: Vec<Result<Out>> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..cfg.threads.max(1))
            .map(|_| {
                s.spawn(|| -> Result<Out> {
                    let mut w = Worker {
                        cfg,
                        map: DigestMap::default(),
                        evidence_writer: SpillWriter::new(
                            cfg.dir.to_path_buf(),
                            cfg.budget.clone(),
                        ),
                        evidence: Partitioner::new(
                            2 * cfg.ranges,
                            cfg.chunk_bytes.min(64 * 1024),
                            0,
                        ),
                        stats: Default::default(),
                        samples: Default::default(),
                        splits: 0,
                        rows_seen: [0, 0],
                        buf: Vec::new(),
                    };
                    loop {
                        let b = next.fetch_add(1, Ordering::Relaxed);
                        if b >= buckets {
                            break;
                        }
                        let src: Vec<_> = index.chunks(b as u32).collect();
                        let tgt: Vec<_> = index.chunks((buckets + b) as u32).collect();
                        if let Err(e) = w.bucket(src, tgt, cfg.first_level_bits) {
                            next.store(usize::MAX / 2, Ordering::Relaxed);
                            return Err(e);
                        }
                        cfg.progress.buckets_done.fetch_add(1, Ordering::Relaxed);
                    }
                    w.evidence.finish(&mut w.evidence_writer)?;
                    splits.fetch_add(w.splits, Ordering::Relaxed);
                    Ok((w.evidence_writer, w.stats, w.samples, w.rows_seen))
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| {
                h.join().unwrap_or_else(|_| {
                    Err(ReconError::Internal("reconcile worker panicked".into()))
                })
            })
            .collect()
    });
    let mut writers = Vec::new();
    let mut stats = [DirectionStats::default(); 2];
    let mut heaps: [Vec<SampleRef>; 2] = Default::default();
    let mut rows_seen = [0u64; 2];
    for r in results {
        let (w, st, samples, seen) = r?;
        writers.push(w);
        for side in 0..2 {
            stats[side].add(&st[side]);
            rows_seen[side] += seen[side];
        }
        for (side, heap) in samples.into_iter().enumerate() {
            heaps[side].extend(heap);
        }
    }
    for h in heaps.iter_mut() {
        h.sort_unstable();
        h.truncate(cfg.sample);
    }
    Ok(Reconciled {
        stats,
        samples: heaps,
        evidence: SpillIndex::merge(writers, 2 * cfg.ranges)?,
        ranges: cfg.ranges,
        splits: splits.load(Ordering::Relaxed),
        rows_seen,
    })
}
