//! The EXCEPT ALL matcher: for each bucket, a multiplicity map counts every
//! row digest on both sides; a digest whose counts differ is unmatched by
//! the difference.
//!
//! A row with `s` copies in the source and `t` in the target contributes
//! `s - t` source-only rows when `s > t` and `t - s` target-only rows when
//! `t > s`. Because all copies of a digest are the same row, one locator per
//! side is enough to fetch them all. Identical rows share one map entry, so
//! heavy duplication never forces a split.

use std::collections::{BinaryHeap, HashMap};
use std::path::PathBuf;
use std::sync::Arc;

use crate::digest::DigestBuildHasher;
use crate::engine::reconcile::Matcher;
use crate::engine::record::{Evidence, Keyless};
use crate::engine::spill::{ChunkRef, Partitioner, SpillBudget, SpillIndex, SpillWriter};
use crate::error::Result;
use crate::report::DirectionStats;
use crate::side::Side;

const NO_LOCATOR: u64 = u64::MAX;

/// Keyed by digest, hashed by its low bits ([`DigestHasher`](crate::digest::DigestHasher)).
type DigestMap = HashMap<u128, Counts, DigestBuildHasher>;

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

/// One distinct unmatched row chosen for display.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct SampleRef {
    /// Samples are the unmatched rows with the smallest digests: a choice that
    /// does not depend on row order, file splits or threads.
    pub digest: u128,
    /// Where one copy of the row is (a locator of the side that has more).
    pub locator: u64,
    /// Copies of the row in the source.
    pub source_count: u64,
    /// Copies of the row in the target.
    pub target_count: u64,
}

/// Where evidence records go: per side, ranges of dense positions.
pub struct EvidenceSlots {
    /// Per side, per file: the dense ordinal of the file's first position, so
    /// that a locator's range is `(base + position) >> range_bits`.
    pub bases: [Vec<u64>; 2],
    /// Dense positions per evidence range, as a power of two.
    pub range_bits: u32,
    /// Number of evidence ranges per side.
    pub ranges: usize,
    /// Buffer size of each range's spill chunks.
    pub chunk_bytes: usize,
    /// The run directory the evidence spills into.
    pub dir: PathBuf,
    /// The run's spill allowance, shared with the partitions.
    pub budget: Arc<SpillBudget>,
    /// Distinct unmatched rows kept for display per direction.
    pub sample: usize,
    /// Keep every (digest, source − target) found, to check a targeted
    /// second pass against the differences it was targeted at.
    pub record_differences: bool,
}

/// One worker's EXCEPT ALL state.
pub struct MultisetMatcher {
    slots: Arc<EvidenceSlots>,
    map: DigestMap,
    evidence_writer: SpillWriter,
    evidence: Partitioner,
    stats: [DirectionStats; 2],
    samples: [BinaryHeap<SampleRef>; 2],
    rows_seen: [u64; 2],
    differences: Vec<(u128, i64)>,
}

/// What reconciliation found.
pub struct Reconciled {
    pub stats: [DirectionStats; 2],
    pub samples: [Vec<SampleRef>; 2],
    /// Evidence records under key `side * ranges + range`, ranges in locator order.
    pub evidence: SpillIndex,
    pub ranges: usize,
    pub rows_seen: [u64; 2],
    /// With `record_differences`: every differing digest and its count
    /// difference (source − target), sorted.
    pub differences: Vec<(u128, i64)>,
}

impl MultisetMatcher {
    /// A matcher writing its evidence into `slots`.
    pub fn new(slots: Arc<EvidenceSlots>) -> MultisetMatcher {
        MultisetMatcher {
            map: DigestMap::default(),
            evidence_writer: SpillWriter::new(slots.dir.clone(), slots.budget.clone()),
            evidence: Partitioner::new(2 * slots.ranges, slots.chunk_bytes.min(64 * 1024), 0),
            stats: Default::default(),
            samples: Default::default(),
            rows_seen: [0, 0],
            differences: Vec::new(),
            slots,
        }
    }

    /// Merges the workers' findings.
    pub fn merge(
        matchers: Vec<MultisetMatcher>,
        sample: usize,
        ranges: usize,
    ) -> Result<Reconciled> {
        let mut writers = Vec::new();
        let mut stats = [DirectionStats::default(); 2];
        let mut heaps: [Vec<SampleRef>; 2] = Default::default();
        let mut rows_seen = [0u64; 2];
        let mut differences = Vec::new();
        for m in matchers {
            differences.extend(m.differences);
            writers.push(m.evidence_writer);
            for side in 0..2 {
                stats[side].add(&m.stats[side]);
                rows_seen[side] += m.rows_seen[side];
            }
            for (side, heap) in m.samples.into_iter().enumerate() {
                heaps[side].extend(heap);
            }
        }
        for h in heaps.iter_mut() {
            h.sort_unstable();
            h.truncate(sample);
        }
        differences.sort_unstable();
        Ok(Reconciled {
            stats,
            samples: heaps,
            evidence: SpillIndex::merge(writers, 2 * ranges)?,
            ranges,
            rows_seen,
            differences,
        })
    }

    /// Counts one side's records; false when the map reached `max` entries.
    fn count_side(
        map: &mut DigestMap,
        chunks: &[ChunkRef<'_>],
        side: Side,
        max: usize,
        buf: &mut Vec<u8>,
    ) -> Result<Option<u64>> {
        let mut seen = 0u64;
        for chunk in chunks {
            let bytes = chunk.bytes(buf)?;
            for rec in Keyless::LAYOUT.records(bytes)? {
                let (digest, loc) = Keyless::decode(rec);
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
                    return Ok(None);
                }
            }
        }
        Ok(Some(seen))
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
            if self.slots.record_differences {
                self.differences
                    .push((digest, c.source as i64 - c.target as i64));
            }
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
            let slots = &self.slots;
            let (file, pos) = crate::input::unpack(loc);
            let base = slots.bases[side.index()].get(file).copied().unwrap_or(0);
            let range = ((base + pos) >> slots.range_bits) as usize;
            let slot = side.index() * slots.ranges + range.min(slots.ranges - 1);
            self.evidence.push(
                slot,
                &Evidence::encode(loc, excess),
                &mut self.evidence_writer,
            )?;
            if slots.sample > 0 {
                let heap = &mut self.samples[side.index()];
                heap.push(SampleRef {
                    digest,
                    locator: loc,
                    source_count: c.source,
                    target_count: c.target,
                });
                if heap.len() > slots.sample {
                    heap.pop();
                }
            }
        }
        self.map = map;
        Ok(())
    }
}

impl Matcher for MultisetMatcher {
    fn bucket(
        &mut self,
        source: &[ChunkRef<'_>],
        target: &[ChunkRef<'_>],
        records: usize,
        max_entries: usize,
        buf: &mut Vec<u8>,
    ) -> Result<bool> {
        // One map per worker, cleared between buckets: its table stays
        // allocated (within the worker's share) instead of being faulted in
        // afresh for every bucket.
        let mut map = std::mem::take(&mut self.map);
        map.clear();
        map.reserve(records.min(max_entries));
        let counted = match Self::count_side(&mut map, source, Side::Source, max_entries, buf)? {
            Some(s) => {
                Self::count_side(&mut map, target, Side::Target, max_entries, buf)?.map(|t| [s, t])
            }
            None => None,
        };
        let Some(seen) = counted else {
            map.clear();
            self.map = map;
            return Ok(false);
        };
        self.rows_seen[0] += seen[0];
        self.rows_seen[1] += seen[1];
        self.emit(map)?;
        Ok(true)
    }

    fn finish(&mut self) -> Result<()> {
        self.evidence.finish(&mut self.evidence_writer)
    }
}
