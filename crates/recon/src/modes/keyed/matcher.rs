//! The keyed matcher: within a bucket, every key's rows on both sides are
//! counted, and each key lands in exactly one category.
//!
//! A first look at the bucket's records counts each key's rows per side and
//! keeps one row digest and locator per side. A key seen once on each side
//! with equal row digests is matched; once on one side only, missing; more
//! than once on either side, duplicated. Only when a bucket holds a key
//! whose two rows differ, or a duplicated key, is it read a second time:
//! the differing keys' column words name the changed columns (and their
//! carried numbers decide tolerances), and every row of a duplicated key is
//! passed on, as a keyless record, to a multiset diff. No row value is held.

use std::collections::{BinaryHeap, HashMap};
use std::path::PathBuf;
use std::sync::Arc;

use super::numbers::within;
use super::sink::{KeyedRecord, KeyedShape};
use crate::digest::DigestBuildHasher;
use crate::engine::partition::bucket_of;
use crate::engine::reconcile::Matcher;
use crate::engine::record::{Evidence, Keyless};
use crate::engine::spill::{ChunkRef, Partitioner, SpillBudget, SpillIndex, SpillWriter};
use crate::error::Result;
use crate::report::DirectionStats;
use crate::side::Side;

/// One key's rows in the bucket: how many per side, and the first seen.
#[derive(Clone, Copy)]
struct Entry {
    count: [u64; 2],
    row: [u128; 2],
    loc: [u64; 2],
}

const EMPTY: Entry = Entry {
    count: [0, 0],
    row: [0, 0],
    loc: [u64::MAX, u64::MAX],
};

/// Bytes a map entry costs (key, entry, control byte, load factor slack),
/// for sizing maps against their share.
pub(crate) const ENTRY_BYTES: usize = 16 + std::mem::size_of::<Entry>() + 16;

/// Settings and destinations shared by the workers' matchers.
pub(crate) struct KeyedSlots {
    pub shape: Arc<KeyedShape>,
    /// Per side, per file: dense ordinal of the file's first position.
    pub bases: [Vec<u64>; 2],
    pub range_bits: u32,
    pub ranges: usize,
    pub chunk_bytes: usize,
    pub dir: PathBuf,
    pub budget: Arc<SpillBudget>,
    pub sample: usize,
    /// First-level buckets of the duplicated keys' keyless records.
    pub dup_bucket_bits: u32,
}

impl KeyedSlots {
    fn range(&self, side: Side, loc: u64) -> usize {
        let (file, pos) = crate::input::unpack(loc);
        let base = self.bases[side.index()].get(file).copied().unwrap_or(0);
        (((base + pos) >> self.range_bits) as usize).min(self.ranges - 1)
    }

    /// Words of a changed-key record's column mask.
    pub(crate) fn mask_words(&self) -> usize {
        mask_words(self.shape.values.len())
    }
}

/// Words of the column mask for `values` value columns.
fn mask_words(values: usize) -> usize {
    values.div_ceil(64).max(1)
}

/// Bytes of one changed-key record for `values` value columns: source
/// locator, target locator, key digest, column mask.
pub(crate) fn pair_bytes(values: usize) -> usize {
    8 + 8 + 16 + 8 * mask_words(values)
}

/// A changed key: where its two rows are and which columns differ.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ChangedPair {
    pub source: u64,
    pub target: u64,
    pub key: u128,
    /// Bit `v` set: value column `v` differs.
    pub mask: Vec<u64>,
}

impl ChangedPair {
    pub(crate) fn encode(&self, out: &mut Vec<u8>) {
        out.clear();
        out.extend_from_slice(&self.source.to_le_bytes());
        out.extend_from_slice(&self.target.to_le_bytes());
        out.extend_from_slice(&self.key.to_le_bytes());
        for w in &self.mask {
            out.extend_from_slice(&w.to_le_bytes());
        }
    }

    pub(crate) fn decode(rec: &[u8]) -> ChangedPair {
        let u64_at = |at: usize| {
            let mut b = [0u8; 8];
            b.copy_from_slice(&rec[at..at + 8]);
            u64::from_le_bytes(b)
        };
        let mut k = [0u8; 16];
        k.copy_from_slice(&rec[16..32]);
        ChangedPair {
            source: u64_at(0),
            target: u64_at(8),
            key: u128::from_le_bytes(k),
            mask: (32..rec.len()).step_by(8).map(u64_at).collect(),
        }
    }

    pub(crate) fn changed(&self, v: usize) -> bool {
        self.mask[v / 64] >> (v % 64) & 1 == 1
    }
}

/// A duplicated key chosen for display: keys whose copies differ in
/// number come first (they are drift), then by key digest.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) struct DupRef {
    pub same_counts: bool,
    pub key: u128,
    pub side: usize,
    pub locator: u64,
    pub source_count: u64,
    pub target_count: u64,
}

/// Counts of the keyed categories.
#[derive(Debug, Clone, Default)]
pub(crate) struct KeyCounts {
    pub matched: u64,
    pub value_mismatch: u64,
    /// [missing_in_target, missing_in_source]
    pub missing: [u64; 2],
    pub duplicate_keys: u64,
    /// Keys matched only thanks to a tolerance.
    pub tolerance_keys: u64,
    /// Per tolerance column: values that matched only thanks to it.
    pub tolerance_values: Vec<u64>,
    /// Per value column: keys where it differs.
    pub column_mismatches: Vec<u64>,
    /// Changed keys whose 64-bit column words could not name a column (a
    /// collision of two values' words; the row digests still differ).
    pub unattributed: u64,
}

impl KeyCounts {
    fn new(values: usize, tolerances: usize) -> KeyCounts {
        KeyCounts {
            tolerance_values: vec![0; tolerances],
            column_mismatches: vec![0; values],
            ..KeyCounts::default()
        }
    }

    fn add(&mut self, o: &KeyCounts) {
        self.matched += o.matched;
        self.value_mismatch += o.value_mismatch;
        self.missing[0] += o.missing[0];
        self.missing[1] += o.missing[1];
        self.duplicate_keys += o.duplicate_keys;
        self.tolerance_keys += o.tolerance_keys;
        self.unattributed += o.unattributed;
        for (a, b) in self.tolerance_values.iter_mut().zip(&o.tolerance_values) {
            *a += b;
        }
        for (a, b) in self.column_mismatches.iter_mut().zip(&o.column_mismatches) {
            *a += b;
        }
    }
}

/// One worker's keyed state.
pub(crate) struct KeyedMatcher {
    slots: Arc<KeyedSlots>,
    map: HashMap<u128, Entry, DigestBuildHasher>,
    writer: SpillWriter,
    /// Missing rows: evidence records under `side * ranges + range`.
    missing: Partitioner,
    /// Changed keys under their source row's range.
    pairs: Partitioner,
    /// Rows of duplicated keys, keyless, under `side * dup_buckets + bucket`.
    dups: Partitioner,
    counts: KeyCounts,
    stats: [DirectionStats; 2],
    missing_samples: [BinaryHeap<(u128, u64)>; 2],
    dup_samples: BinaryHeap<DupRef>,
    rows_seen: [u64; 2],
    pair_buf: Vec<u8>,
    /// Second look: the records of changed keys, per side.
    changed: HashMap<u128, [Vec<u8>; 2], DigestBuildHasher>,
}

/// What keyed reconciliation found.
pub(crate) struct KeyedFound {
    pub counts: KeyCounts,
    /// EXCEPT ALL statistics of the keyed rows (changed and missing keys).
    pub stats: [DirectionStats; 2],
    pub missing_samples: [Vec<u64>; 2],
    pub dup_samples: Vec<DupRef>,
    /// Missing rows (evidence, `side * ranges + range`), changed keys
    /// (`2 * ranges + range`) and duplicated keys' rows (`3 * ranges + side
    /// * dup_buckets + bucket`).
    pub index: SpillIndex,
    pub rows_seen: [u64; 2],
}

impl KeyedFound {
    pub(crate) fn pair_key(ranges: usize, range: usize) -> u32 {
        (2 * ranges + range) as u32
    }

    pub(crate) fn dup_base(ranges: usize) -> u32 {
        (3 * ranges) as u32
    }
}

fn push_bounded<T: Ord>(heap: &mut BinaryHeap<T>, item: T, limit: usize) {
    if limit == 0 {
        return;
    }
    heap.push(item);
    if heap.len() > limit {
        heap.pop();
    }
}

impl KeyedMatcher {
    pub(crate) fn new(slots: Arc<KeyedSlots>) -> KeyedMatcher {
        let ranges = slots.ranges;
        let dup_buckets = 1usize << slots.dup_bucket_bits;
        let small = slots.chunk_bytes.min(64 * 1024);
        KeyedMatcher {
            map: HashMap::default(),
            writer: SpillWriter::new(slots.dir.clone(), slots.budget.clone()),
            missing: Partitioner::new(2 * ranges, small, 0),
            pairs: Partitioner::new(ranges, small, 2 * ranges as u32),
            dups: Partitioner::new(2 * dup_buckets, small, 3 * ranges as u32),
            counts: KeyCounts::new(slots.shape.values.len(), slots.shape.tolerances.len()),
            stats: Default::default(),
            missing_samples: Default::default(),
            dup_samples: BinaryHeap::new(),
            rows_seen: [0, 0],
            pair_buf: Vec::new(),
            changed: HashMap::default(),
            slots,
        }
    }

    pub(crate) fn merge(matchers: Vec<KeyedMatcher>, sample: usize) -> Result<KeyedFound> {
        let first = matchers.first().map(|m| m.slots.clone());
        let mut counts = first
            .as_ref()
            .map(|s| KeyCounts::new(s.shape.values.len(), s.shape.tolerances.len()))
            .unwrap_or_default();
        let mut stats = [DirectionStats::default(); 2];
        let mut rows_seen = [0u64; 2];
        let mut missing: [Vec<(u128, u64)>; 2] = Default::default();
        let mut dups = Vec::new();
        let mut writers = Vec::new();
        for m in matchers {
            counts.add(&m.counts);
            for s in 0..2 {
                stats[s].add(&m.stats[s]);
                rows_seen[s] += m.rows_seen[s];
            }
            for (s, heap) in m.missing_samples.into_iter().enumerate() {
                missing[s].extend(heap);
            }
            dups.extend(m.dup_samples);
            writers.push(m.writer);
        }
        let keys = first.map_or(0, |s| 3 * s.ranges + (2 << s.dup_bucket_bits));
        let picked = |mut v: Vec<(u128, u64)>| {
            v.sort_unstable();
            v.truncate(sample);
            // Chosen by key digest, shown in input order.
            let mut locs: Vec<u64> = v.into_iter().map(|(_, loc)| loc).collect();
            locs.sort_unstable();
            locs
        };
        let [ms, mt] = missing;
        dups.sort_unstable();
        dups.truncate(sample);
        dups.sort_unstable_by_key(|d| (d.side, d.locator));
        Ok(KeyedFound {
            counts,
            stats,
            missing_samples: [picked(ms), picked(mt)],
            dup_samples: dups,
            index: SpillIndex::merge(writers, keys)?,
            rows_seen,
        })
    }

    fn count_side(
        &mut self,
        chunks: &[ChunkRef<'_>],
        side: Side,
        max: usize,
        buf: &mut Vec<u8>,
    ) -> Result<Option<u64>> {
        let layout = self.slots.shape.layout();
        let s = side.index();
        let mut seen = 0u64;
        for chunk in chunks {
            for rec in layout.records(chunk.bytes(buf)?)? {
                let r = KeyedRecord { rec };
                let e = self.map.entry(r.key()).or_insert(EMPTY);
                if e.count[s] == 0 {
                    e.row[s] = r.row();
                    e.loc[s] = r.locator();
                }
                e.count[s] += 1;
                seen += 1;
                if self.map.len() >= max {
                    return Ok(None);
                }
            }
        }
        Ok(Some(seen))
    }

    /// The second look at a bucket: the changed keys' records, and every
    /// row of the duplicated keys passed on as keyless records.
    fn second_look(
        &mut self,
        chunks: [&[ChunkRef<'_>]; 2],
        buf: &mut Vec<u8>,
        want_dups: bool,
    ) -> Result<()> {
        let layout = self.slots.shape.layout();
        let dup_bits = self.slots.dup_bucket_bits;
        let dup_buckets = 1usize << dup_bits;
        for side in Side::BOTH {
            let s = side.index();
            for chunk in chunks[s] {
                for rec in layout.records(chunk.bytes(buf)?)? {
                    let r = KeyedRecord { rec };
                    let key = r.key();
                    if let Some(slot) = self.changed.get_mut(&key) {
                        slot[s] = rec.to_vec();
                        continue;
                    }
                    if !want_dups {
                        continue;
                    }
                    let Some(e) = self.map.get(&key) else {
                        continue;
                    };
                    if e.count[0] > 1 || e.count[1] > 1 {
                        let row = r.row();
                        let bucket = bucket_of(row, dup_bits);
                        self.dups.push(
                            s * dup_buckets + bucket,
                            &Keyless::encode(row, r.locator()),
                            &mut self.writer,
                        )?;
                    }
                }
            }
        }
        Ok(())
    }

    /// Decides a key seen once on each side with different rows: changed,
    /// or matched within the tolerances.
    fn judge(&mut self, key: u128, recs: &[Vec<u8>; 2]) -> Result<()> {
        let shape = self.slots.shape.clone();
        let (a, b) = (KeyedRecord { rec: &recs[0] }, KeyedRecord { rec: &recs[1] });
        let mut mask = vec![0u64; self.slots.mask_words()];
        let mut differing = 0usize;
        for v in 0..shape.values.len() {
            if a.word(v) != b.word(v) {
                mask[v / 64] |= 1 << (v % 64);
                differing += 1;
            }
        }
        if differing == 0 {
            // The row digests differ but no column word does: two values
            // share their 64-bit words. Still a changed key.
            self.counts.unattributed += 1;
        }
        let mut rescued = Vec::new();
        for (t, (v, tol)) in shape.tolerances.iter().enumerate() {
            if mask[v / 64] >> (v % 64) & 1 == 1 && within(a.num(&shape, t), b.num(&shape, t), tol)
            {
                rescued.push((t, *v));
            }
        }
        if differing > 0 && rescued.len() == differing {
            self.counts.matched += 1;
            self.counts.tolerance_keys += 1;
            for (t, _) in rescued {
                self.counts.tolerance_values[t] += 1;
            }
            return Ok(());
        }
        // Columns within tolerance are not reported as changed.
        for (t, v) in rescued {
            mask[v / 64] &= !(1 << (v % 64));
            self.counts.tolerance_values[t] += 1;
        }
        for (v, n) in self.counts.column_mismatches.iter_mut().enumerate() {
            if mask[v / 64] >> (v % 64) & 1 == 1 {
                *n += 1;
            }
        }
        self.counts.value_mismatch += 1;
        for st in &mut self.stats {
            st.add_absent_row();
        }
        let pair = ChangedPair {
            source: a.locator(),
            target: b.locator(),
            key,
            mask,
        };
        pair.encode(&mut self.pair_buf);
        let range = self.slots.range(Side::Source, pair.source);
        self.pairs.push(range, &self.pair_buf, &mut self.writer)
    }
}

impl Matcher for KeyedMatcher {
    fn bucket(
        &mut self,
        source: &[ChunkRef<'_>],
        target: &[ChunkRef<'_>],
        records: usize,
        max_entries: usize,
        buf: &mut Vec<u8>,
    ) -> Result<bool> {
        self.map.clear();
        self.map.reserve(records.min(max_entries));
        let counted = match self.count_side(source, Side::Source, max_entries, buf)? {
            Some(s) => self
                .count_side(target, Side::Target, max_entries, buf)?
                .map(|t| [s, t]),
            None => None,
        };
        let Some(seen) = counted else {
            self.map.clear();
            return Ok(false);
        };
        self.rows_seen[0] += seen[0];
        self.rows_seen[1] += seen[1];
        let sample = self.slots.sample;
        let mut dups = false;
        self.changed.clear();
        let map = std::mem::take(&mut self.map);
        for (&key, e) in &map {
            match e.count {
                [1, 1] if e.row[0] == e.row[1] => self.counts.matched += 1,
                [1, 1] => {
                    self.changed.insert(key, Default::default());
                }
                [1, 0] | [0, 1] => {
                    let s = if e.count[0] == 1 { 0 } else { 1 };
                    let side = Side::BOTH[s];
                    self.counts.missing[s] += 1;
                    self.stats[s].add_absent_row();
                    let range = self.slots.range(side, e.loc[s]);
                    self.missing.push(
                        s * self.slots.ranges + range,
                        &Evidence::encode(e.loc[s], 1),
                        &mut self.writer,
                    )?;
                    push_bounded(&mut self.missing_samples[s], (key, e.loc[s]), sample);
                }
                _ => {
                    dups = true;
                    self.counts.duplicate_keys += 1;
                    let side = if e.count[0] > 0 { 0 } else { 1 };
                    push_bounded(
                        &mut self.dup_samples,
                        DupRef {
                            same_counts: e.count[0] == e.count[1],
                            key,
                            side,
                            locator: e.loc[side],
                            source_count: e.count[0],
                            target_count: e.count[1],
                        },
                        sample,
                    );
                }
            }
        }
        self.map = map;
        if dups || !self.changed.is_empty() {
            self.second_look([source, target], buf, dups)?;
            let mut changed = std::mem::take(&mut self.changed);
            let mut keys: Vec<u128> = changed.keys().copied().collect();
            keys.sort_unstable();
            for key in keys {
                if let Some(recs) = changed.remove(&key) {
                    self.judge(key, &recs)?;
                }
            }
            self.changed = changed;
        }
        Ok(true)
    }

    fn finish(&mut self) -> Result<()> {
        self.missing.finish(&mut self.writer)?;
        self.pairs.finish(&mut self.writer)?;
        self.dups.finish(&mut self.writer)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_changed_pair_round_trips_through_its_record() {
        // 70 value columns take two mask words; columns 0, 63 and 69 differ.
        let mut mask = vec![0u64; mask_words(70)];
        for v in [0usize, 63, 69] {
            mask[v / 64] |= 1 << (v % 64);
        }
        let p = ChangedPair {
            source: 7,
            target: u64::MAX - 1,
            key: u128::MAX / 3,
            mask,
        };
        let mut rec = Vec::new();
        p.encode(&mut rec);
        assert_eq!(rec.len(), pair_bytes(70));
        let back = ChangedPair::decode(&rec);
        assert_eq!(back, p);
        let changed: Vec<usize> = (0..70).filter(|&v| back.changed(v)).collect();
        assert_eq!(changed, [0, 63, 69]);
    }

    #[test]
    fn bounded_samples_keep_the_smallest() {
        let mut heap = BinaryHeap::new();
        for v in [9u32, 3, 7, 1, 8, 2] {
            push_bounded(&mut heap, v, 3);
        }
        assert_eq!(heap.into_sorted_vec(), [1, 2, 3]);
    }
}
