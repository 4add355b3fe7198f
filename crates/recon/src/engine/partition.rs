//! Scan sinks of the multiset engine: fingerprint the digests of each
//! bucket (pass 1 of two, nothing written), or partition records into
//! on-disk buckets by their key's top bits (staged per worker, memory first).

use std::collections::{HashMap, HashSet};
use std::path::PathBuf;
use std::sync::Arc;

use super::record::Keyless;
use super::scan::{Batch, RowRanges, RowSink};
use super::spill::{Partitioner, SpillBudget, SpillIndex, SpillWriter};
use crate::digest::sketch::{prefetch, UnitFilter};
use crate::digest::{
    fp_bucket_of, mix, DigestBuildHasher, FilterId, FilterStore, Fingerprint, RunSketch,
    FP_BUCKETS, FP_PREFETCH_AHEAD,
};
use crate::error::Result;
use crate::input::Unit;
use crate::side::Side;

/// A unit of one side: (side, file, block).
pub(crate) type UnitKey = (Side, usize, usize);

/// Per unit read, its batches' filters, and the store that holds them.
#[derive(Debug, Default)]
pub(crate) struct SliceFilters {
    units: HashMap<UnitKey, Vec<Slice>>,
    store: FilterStore,
}

/// Which first-level bucket a key belongs to.
#[inline]
pub(crate) fn bucket_of(key: u128, bits: u32) -> usize {
    if bits == 0 {
        0
    } else {
        (key >> (128 - bits)) as usize
    }
}

/// The rows of one scanned batch of a row group (positions `first ..
/// first + rows` of its file), and a filter of their digests.
#[derive(Debug, Clone)]
pub(crate) struct Slice {
    pub first: u64,
    pub rows: u64,
    pub filter: FilterId,
}

/// Pass 1 of two: per side, one [`Fingerprint`] per fingerprint bucket (the
/// digest's top [`crate::digest::FP_BITS`] bits) and, when memory allows, a
/// [`UnitFilter`] per scanned batch of each row group, so that a targeted
/// second pass can read only the batches that may hold the differing
/// digests (a batch's filter is a few KiB, so inserts stay in cache, and a
/// row selection reads only the pages holding the batch).
///
/// With a sketch ([`FingerprintSink::with_sketch`]), every digest also goes
/// into the two sub-tables of a [`RunSketch`], source `+1` and target `−1`, so
/// buckets that hold several differing digests can be peeled apart.
pub(crate) struct FingerprintSink {
    pub fingerprints: [Vec<Fingerprint>; 2],
    sketch: Option<RunSketch>,
    /// Bits per row of each filter; 0: no filters.
    filter_bits: u32,
    current: Option<(UnitKey, Vec<Slice>)>,
    pub filters: Vec<(UnitKey, Vec<Slice>)>,
    /// The filters of `current` and `filters`.
    store: FilterStore,
    /// A unit was read that has no filter (an IPC stream, text).
    pub unfiltered: bool,
}

impl Default for FingerprintSink {
    fn default() -> Self {
        FingerprintSink::new(0)
    }
}

/// Sub-tables of the in-run sketch, and their cells: 2 × 1024 cells of 32
/// bytes, 64 KiB per worker, which stay in cache. With the fingerprint
/// buckets as a third table they peel about 5,000 differing digests, more
/// than a targeted second pass can use (its Bloom filters then hit most
/// batches). 2 × 16384 cells peeled 36,000 but cost 11% of a light-drift
/// diff on the 50M pair against 5% (docs/sketch.md).
const RUN_SKETCH_TABLES: u32 = 2;
const RUN_SKETCH_LOG_CELLS: u32 = 10;

/// What the workers' fingerprint sinks add up to.
pub(crate) struct Fingerprinted {
    pub fingerprints: [Vec<Fingerprint>; 2],
    /// The source's digests less the target's, when every sink kept a sketch.
    pub sketch: Option<RunSketch>,
    /// Per unit, its batches' filters, when every unit read has them.
    pub filters: Option<SliceFilters>,
}

impl FingerprintSink {
    /// A sink with unit filters of `filter_bits` bits per row (0: none).
    pub(crate) fn new(filter_bits: u32) -> FingerprintSink {
        FingerprintSink {
            fingerprints: [
                vec![Fingerprint::default(); FP_BUCKETS],
                vec![Fingerprint::default(); FP_BUCKETS],
            ],
            sketch: None,
            filter_bits,
            current: None,
            filters: Vec::new(),
            store: FilterStore::default(),
            unfiltered: false,
        }
    }

    /// The same sink, also keeping the in-run sketch.
    pub(crate) fn with_sketch(mut self) -> FingerprintSink {
        self.sketch = Some(RunSketch::new(RUN_SKETCH_TABLES, RUN_SKETCH_LOG_CELLS));
        self
    }

    /// Merges the workers' fingerprints, sketches and filters.
    pub(crate) fn merge(sinks: Vec<FingerprintSink>) -> Fingerprinted {
        let mut fingerprints = FingerprintSink::new(0).fingerprints;
        let mut filters = SliceFilters::default();
        let mut complete = true;
        let mut sketch = Some(RunSketch::new(RUN_SKETCH_TABLES, RUN_SKETCH_LOG_CELLS));
        for mut s in sinks {
            // The last unit's filter, if `finish` was not called.
            s.close_unit();
            for (into, from) in fingerprints.iter_mut().zip(&s.fingerprints) {
                for (a, b) in into.iter_mut().zip(from) {
                    a.merge(b);
                }
            }
            sketch = match (sketch, &s.sketch) {
                (Some(mut all), Some(one)) => all.merge(one).then_some(all),
                _ => None,
            };
            complete &= !s.unfiltered && s.filter_bits > 0;
            let offset = filters.store.append(s.store);
            for (unit, mut slices) in s.filters {
                for slice in &mut slices {
                    slice.filter = slice.filter.moved(offset);
                }
                filters.units.insert(unit, slices);
            }
        }
        Fingerprinted {
            fingerprints,
            sketch,
            filters: complete.then_some(filters),
        }
    }

    /// Stops keeping per-batch filters and frees those kept: no targeted
    /// pass can follow (see [`super::probe`]).
    pub(crate) fn drop_filters(&mut self) {
        self.close_unit();
        self.filters = Vec::new();
        self.store = FilterStore::default();
        self.filter_bits = 0;
        self.unfiltered = true;
    }

    /// Adds `digests` (rows at `locators`) to their buckets, and
    /// `filtered` (one per row, the values a targeted second pass will look
    /// up: the digests themselves, or keyed mode's key tags) to the batch's
    /// filter.
    pub(crate) fn add(
        &mut self,
        side: Side,
        digests: &[u128],
        filtered: &[u128],
        locators: crate::input::Locators<'_>,
    ) {
        if let Some((_, slices)) = self.current.as_mut().filter(|_| !filtered.is_empty()) {
            // Positions of the batch's first and last rows (rows a delete
            // removes leave gaps, which the slice spans).
            let (_, first) = crate::input::unpack(locators.get(0));
            let (_, end) = crate::input::unpack(locators.get(filtered.len() - 1));
            slices.push(Slice {
                first,
                rows: end - first + 1,
                filter: self.store.add(filtered, self.filter_bits),
            });
        }
        // In row order, each bucket prefetched `FP_PREFETCH_AHEAD` digests
        // ahead: between batches the decoder's buffers evict the buckets
        // (512 KiB per side) from L2, and a bucket's update then waited for
        // its line (half of this function's samples, on the high word of
        // the sum). farm-bench, 50M identical pair, 11 runs: prefetching
        // 0.95x the wall time [0.92-1.00]; 40 ahead the same as 16.
        // Gathering 128Ki digests and sorting them by bucket instead, so that
        // each line was loaded once, no longer paid (1.00x [0.97-1.04]).
        let fps = &mut self.fingerprints[side.index()];
        let mut i = 0;
        let add = |d: u128, m: u64| {
            if let Some(&next) = digests.get(i + FP_PREFETCH_AHEAD) {
                prefetch(&fps[fp_bucket_of(next)]);
            }
            i += 1;
            fps[fp_bucket_of(d)].add_mixed(d, m)
        };
        match self.sketch.as_mut() {
            None => {
                let mut add = add;
                for &d in digests {
                    add(d, mix(d));
                }
            }
            Some(sketch) => sketch.add_all_mixed(digests, side == Side::Source, add),
        }
    }

    fn close_unit(&mut self) {
        if let Some(done) = self.current.take() {
            self.filters.push(done);
        }
    }
}

impl RowSink for FingerprintSink {
    fn start_unit(&mut self, side: Side, unit: &Unit) -> Result<()> {
        self.close_unit();
        match unit {
            Unit::Block { file, block, .. } if self.filter_bits > 0 => {
                self.current = Some(((side, *file, *block), Vec::new()));
            }
            _ => self.unfiltered = true,
        }
        Ok(())
    }

    fn rows(&mut self, side: Side, batch: &Batch<'_>) -> Result<()> {
        self.add(side, batch.digests, batch.digests, batch.locators);
        Ok(())
    }

    fn finish(&mut self) -> Result<()> {
        self.close_unit();
        Ok(())
    }
}

/// Per side, per row group: the batches whose filters `hit`, as row ranges
/// (adjacent ones joined), and the rows they hold: what a targeted second
/// pass reads.
pub(crate) fn slices_to_read(
    filters: &SliceFilters,
    hit: impl Fn(&UnitFilter<'_>) -> bool,
) -> ([RowRanges; 2], u64) {
    let mut only: [RowRanges; 2] = Default::default();
    let mut rows_read = 0u64;
    for ((side, file, block), slices) in &filters.units {
        let mut ranges: Vec<(u64, u64)> = Vec::new();
        for s in slices {
            if !hit(&filters.store.get(s.filter)) {
                continue;
            }
            rows_read += s.rows;
            match ranges.last_mut() {
                Some((first, rows)) if *first + *rows == s.first => *rows += s.rows,
                _ => ranges.push((s.first, s.rows)),
            }
        }
        if !ranges.is_empty() {
            ranges.sort_unstable();
            only[side.index()].insert((*file, *block), ranges);
        }
    }
    (only, rows_read)
}

/// A set of digests.
pub(crate) type DigestSet = HashSet<u128, DigestBuildHasher>;

/// How records are partitioned.
#[derive(Clone)]
pub(crate) struct PartitionConfig {
    /// First-level buckets are `1 << bucket_bits`, chosen by the key's top bits.
    pub bucket_bits: u32,
    pub chunk_bytes: usize,
    pub dir: PathBuf,
    pub budget: Arc<SpillBudget>,
    /// Only rows whose fingerprint bucket is marked (those that differ).
    pub filter: Option<Arc<Vec<bool>>>,
    /// Only rows with these digests (a targeted second pass).
    pub digests: Option<Arc<DigestSet>>,
}

/// Writes each row's keyless record into the spill bucket of its digest.
/// Keys are `side * buckets + bucket`.
pub(crate) struct PartitionSink {
    cfg: PartitionConfig,
    writer: SpillWriter,
    staging: Partitioner,
    staging_side: Option<Side>,
    /// Records written per side.
    pub written: [u64; 2],
}

impl PartitionSink {
    pub(crate) fn new(cfg: PartitionConfig) -> PartitionSink {
        PartitionSink {
            writer: SpillWriter::new(cfg.dir.clone(), cfg.budget.clone()),
            staging: Partitioner::new(0, cfg.chunk_bytes, 0),
            staging_side: None,
            written: [0, 0],
            cfg,
        }
    }

    /// The spilled buckets of every worker, keyed `side * buckets + bucket`,
    /// and the records written per side.
    pub(crate) fn merge(
        sinks: Vec<PartitionSink>,
        bucket_bits: u32,
    ) -> Result<(SpillIndex, [u64; 2])> {
        let mut written = [0u64; 2];
        let mut writers = Vec::with_capacity(sinks.len());
        for s in sinks {
            written[0] += s.written[0];
            written[1] += s.written[1];
            writers.push(s.writer);
        }
        Ok((SpillIndex::merge(writers, 2 << bucket_bits)?, written))
    }
}

impl RowSink for PartitionSink {
    fn rows(&mut self, side: Side, batch: &Batch<'_>) -> Result<()> {
        let (digests, locators) = (batch.digests, batch.locators);
        let buckets = 1usize << self.cfg.bucket_bits;
        // Units come source first, so a worker switches side at most once or
        // twice and one set of staging buffers per worker suffices.
        if self.staging_side != Some(side) {
            self.staging.finish(&mut self.writer)?;
            self.staging = Partitioner::new(
                buckets,
                self.cfg.chunk_bytes,
                side.index() as u32 * buckets as u32,
            );
            self.staging_side = Some(side);
        }
        let filter = self.cfg.filter.as_deref();
        let wanted = self.cfg.digests.as_deref();
        for (i, &d) in digests.iter().enumerate() {
            if filter.is_some_and(|f| !f[fp_bucket_of(d)]) {
                continue;
            }
            if wanted.is_some_and(|w| !w.contains(&d)) {
                continue;
            }
            self.written[side.index()] += 1;
            let record = Keyless::encode(d, locators.get(i));
            self.staging.push(
                bucket_of(d, self.cfg.bucket_bits),
                &record,
                &mut self.writer,
            )?;
        }
        Ok(())
    }

    fn finish(&mut self) -> Result<()> {
        self.staging.finish(&mut self.writer)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::record::RecordLayout;
    use crate::input::Locators;

    fn batch<'b>(digests: &'b [u128], locators: Locators<'b>) -> Batch<'b> {
        Batch {
            digests,
            columns: &[],
            totals: &[],
            arrays: &[],
            locators,
        }
    }

    fn read(index: &SpillIndex, key: u32) -> Vec<(u128, u64)> {
        let mut buf = Vec::new();
        let mut out = Vec::new();
        for c in index.chunks(key) {
            let bytes = c.bytes(&mut buf).unwrap();
            out.extend(Keyless::LAYOUT.records(bytes).unwrap().map(Keyless::decode));
        }
        out
    }

    #[test]
    fn records_land_in_the_bucket_of_their_top_bits_per_side() {
        let dir = tempfile::tempdir().unwrap();
        let cfg = PartitionConfig {
            bucket_bits: 2,
            chunk_bytes: 48,
            dir: dir.path().to_path_buf(),
            budget: SpillBudget::new(1 << 20),
            filter: None,
            digests: None,
        };
        let mut sink = PartitionSink::new(cfg);
        let top = |b: u128, low: u128| (b << 126) | low;
        let digests = [top(0, 1), top(3, 2), top(3, 3), top(1, 4)];
        sink.rows(Side::Source, &batch(&digests, Locators::Run(10)))
            .unwrap();
        sink.rows(Side::Target, &batch(&[top(2, 5)], Locators::List(&[99])))
            .unwrap();
        sink.finish().unwrap();
        let (index, written) = PartitionSink::merge(vec![sink], 2).unwrap();
        assert_eq!(written, [4, 1]);
        assert_eq!(read(&index, 0), vec![(top(0, 1), 10)]);
        assert_eq!(read(&index, 3), vec![(top(3, 2), 11), (top(3, 3), 12)]);
        assert_eq!(read(&index, 1), vec![(top(1, 4), 13)]);
        // The target's buckets follow the source's.
        assert_eq!(read(&index, 4 + 2), vec![(top(2, 5), 99)]);
        assert_eq!(RecordLayout::key(&Keyless::encode(7, 0)), 7);
    }

    #[test]
    fn the_filter_keeps_only_marked_fingerprint_buckets() {
        let dir = tempfile::tempdir().unwrap();
        let mut marked = vec![false; FP_BUCKETS];
        marked[FP_BUCKETS - 1] = true;
        let cfg = PartitionConfig {
            bucket_bits: 0,
            chunk_bytes: 48,
            dir: dir.path().to_path_buf(),
            budget: SpillBudget::new(1 << 20),
            filter: Some(Arc::new(marked)),
            digests: None,
        };
        let mut sink = PartitionSink::new(cfg);
        sink.rows(
            Side::Source,
            &batch(&[u128::MAX, 1, u128::MAX - 1], Locators::Run(0)),
        )
        .unwrap();
        sink.finish().unwrap();
        let (index, _) = PartitionSink::merge(vec![sink], 0).unwrap();
        assert_eq!(read(&index, 0), vec![(u128::MAX, 0), (u128::MAX - 1, 2)]);
    }

    #[test]
    fn fingerprints_merge_across_workers() {
        let (mut a, mut b) = (FingerprintSink::default(), FingerprintSink::default());
        a.rows(Side::Source, &batch(&[5, 6], Locators::Run(0)))
            .unwrap();
        b.rows(Side::Source, &batch(&[7], Locators::Run(0)))
            .unwrap();
        let mut one = FingerprintSink::default();
        one.rows(Side::Source, &batch(&[7, 6, 5], Locators::Run(0)))
            .unwrap();
        assert_eq!(
            FingerprintSink::merge(vec![a, b]).fingerprints,
            FingerprintSink::merge(vec![one]).fingerprints
        );
    }

    use crate::digest::test_digests;

    /// Pass 1 over `source` and `target` on two workers, then the peel of
    /// the buckets and the sketch that `scan_stage` runs.
    fn peel_run(source: &[u128], target: &[u128]) -> crate::digest::iblt::Peeled {
        let mut sinks = vec![
            FingerprintSink::default().with_sketch(),
            FingerprintSink::default().with_sketch(),
        ];
        for (side, rows) in [(Side::Source, source), (Side::Target, target)] {
            for (i, chunk) in rows.chunks(5_000).enumerate() {
                sinks[i % 2]
                    .rows(side, &batch(chunk, Locators::Run(0)))
                    .unwrap();
            }
        }
        let Fingerprinted {
            fingerprints: [a, b],
            sketch,
            ..
        } = FingerprintSink::merge(sinks);
        let mut buckets = crate::digest::BucketDifferences::new(&a, &b);
        crate::digest::iblt::peel(&mut [&mut buckets, &mut sketch.unwrap()])
    }

    #[test]
    fn the_buckets_and_the_sketch_peel_thousands_of_differences_with_any_counts() {
        for d in [1usize, 200, 1_000, 5_000] {
            let shared = test_digests(1, 20_000);
            let differing = test_digests(2 + d as u64, d);
            let (mut source, mut target) = (shared.clone(), shared);
            // Odd, even and large copy-count differences, both ways.
            let mut expected = Vec::new();
            for (i, &x) in differing.iter().enumerate() {
                let c = [1i64, -1, 2, -20, 3, 64][i % 6];
                let side = if c > 0 { &mut source } else { &mut target };
                side.extend(std::iter::repeat_n(x, c.unsigned_abs() as usize));
                expected.push((x, c));
            }
            expected.sort_unstable();
            let got = peel_run(&source, &target);
            assert!(got.complete, "{d} differences did not decode");
            assert_eq!(got.differences, expected, "{d}");
        }
    }

    #[test]
    fn more_differences_than_the_sketch_holds_leave_it_incomplete() {
        let got = peel_run(&test_digests(3, 60_000), &[]);
        assert!(!got.complete);
        assert!(got.differences.len() < 60_000);
    }
}
