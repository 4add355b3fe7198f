//! The keyed scan sink and its records.
//!
//! Every row with a complete key becomes one keyed record, partitioned by
//! its key digest, so all rows of a key meet in one bucket:
//!
//! | bytes | field |
//! |---|---|
//! | 16 | key digest (the row digest of the key columns alone; partition key) |
//! | 16 | row digest (every compared column) |
//! | 8 | locator |
//! | 8 per value column | low 64 bits of the column's value digest |
//! | 24 per tolerance column | the value itself ([`Num`]) |
//!
//! A row with a NULL in any key column has no key: it becomes a keyless
//! record (row digest, locator) in a second partition, and those rows are
//! diffed as a multiset.

use std::sync::Arc;

use super::numbers::{numbers, Num, NUM_BYTES};
use super::tags::{pair_digest, tag_of, TagSet};
use crate::config::Tolerance;
use crate::digest::{fp_bucket_of, null_digest, Combiner, Fingerprint, FP_BUCKETS};
use crate::engine::partition::bucket_of;
use crate::engine::record::{Keyless, RecordLayout, KEY_BYTES};
use crate::engine::scan::{Batch, RowSink};
use crate::engine::spill::{Partitioner, SpillBudget, SpillIndex, SpillWriter};
use crate::error::{ReconError, Result};
use crate::side::Side;

/// Which compared columns are the key, which are compared by value, and
/// which carry a tolerance.
#[derive(Debug, Clone)]
pub(crate) struct KeyedShape {
    /// Plan positions of the key columns, in key order.
    pub key: Vec<usize>,
    /// Plan positions of the other compared columns.
    pub values: Vec<usize>,
    /// (index into `values`, tolerance).
    pub tolerances: Vec<(usize, Tolerance)>,
}

const ROW_AT: usize = KEY_BYTES;
const LOC_AT: usize = ROW_AT + 16;
const WORDS_AT: usize = LOC_AT + 8;

impl KeyedShape {
    pub(crate) fn layout(&self) -> RecordLayout {
        RecordLayout::with_payload(
            16 + 8 + 8 * self.values.len() + NUM_BYTES * self.tolerances.len(),
        )
    }

    fn nums_at(&self) -> usize {
        WORDS_AT + 8 * self.values.len()
    }
}

/// A decoded view of one keyed record.
pub(crate) struct KeyedRecord<'r> {
    pub rec: &'r [u8],
}

impl<'r> KeyedRecord<'r> {
    #[inline]
    pub(crate) fn key(&self) -> u128 {
        RecordLayout::key(self.rec)
    }

    #[inline]
    pub(crate) fn row(&self) -> u128 {
        let mut b = [0u8; 16];
        b.copy_from_slice(&self.rec[ROW_AT..LOC_AT]);
        u128::from_le_bytes(b)
    }

    #[inline]
    pub(crate) fn locator(&self) -> u64 {
        let mut b = [0u8; 8];
        b.copy_from_slice(&self.rec[LOC_AT..WORDS_AT]);
        u64::from_le_bytes(b)
    }

    /// The column word of value column `v`.
    #[inline]
    pub(crate) fn word(&self, v: usize) -> u64 {
        let at = WORDS_AT + 8 * v;
        let mut b = [0u8; 8];
        b.copy_from_slice(&self.rec[at..at + 8]);
        u64::from_le_bytes(b)
    }

    /// The value of tolerance column `t` (its index in `shape.tolerances`).
    pub(crate) fn num(&self, shape: &KeyedShape, t: usize) -> Num {
        let at = shape.nums_at() + NUM_BYTES * t;
        Num::decode(&self.rec[at..at + NUM_BYTES])
    }
}

/// How the keyed sink partitions.
#[derive(Clone)]
pub(crate) struct KeyedConfig {
    pub shape: Arc<KeyedShape>,
    pub bucket_bits: u32,
    pub chunk_bytes: usize,
    pub dir: std::path::PathBuf,
    pub budget: Arc<SpillBudget>,
    pub keep: Keep,
}

/// Which rows a keyed scan partitions.
#[derive(Clone)]
pub(crate) enum Keep {
    /// Every row; a row with a NULL key goes to the NULL-key partition.
    All,
    /// Only rows whose key tag ([`tag_of`]) is in the set (a targeted second
    /// pass; pass 1 partitioned the NULL-key rows).
    Tags(Arc<TagSet>),
    /// Only rows whose key is in a marked fingerprint bucket (a second pass
    /// over whole buckets).
    Buckets(Arc<Vec<bool>>),
}

/// Staging for one partition space, switched per side.
pub(crate) struct Staged {
    pub writer: SpillWriter,
    pub staging: Partitioner,
    side: Option<Side>,
}

impl Staged {
    pub(crate) fn new(cfg: &KeyedConfig) -> Staged {
        Staged {
            writer: SpillWriter::new(cfg.dir.clone(), cfg.budget.clone()),
            staging: Partitioner::new(0, cfg.chunk_bytes, 0),
            side: None,
        }
    }

    pub(crate) fn push(
        &mut self,
        cfg: &KeyedConfig,
        side: Side,
        key: u128,
        rec: &[u8],
    ) -> Result<()> {
        let buckets = 1usize << cfg.bucket_bits;
        if self.side != Some(side) {
            // Units come source first, so a worker switches side at most
            // once or twice and one set of staging buffers suffices.
            self.staging.finish(&mut self.writer)?;
            self.staging = Partitioner::new(
                buckets,
                cfg.chunk_bytes,
                side.index() as u32 * buckets as u32,
            );
            self.side = Some(side);
        }
        self.staging
            .push(bucket_of(key, cfg.bucket_bits), rec, &mut self.writer)
    }
}

/// Writes each row's keyed record (or, for a NULL key, its keyless record)
/// into the bucket of its key digest (row digest). Keys of both spaces are
/// `side * buckets + bucket`.
pub(crate) struct KeyedSink {
    cfg: KeyedConfig,
    combiner: Combiner,
    null: u128,
    keyed: Staged,
    null_keys: Staged,
    rec: Vec<u8>,
    nums: Vec<Vec<Num>>,
    /// Keyed records written per side.
    pub written: [u64; 2],
    /// Rows with a NULL in a key column, per side.
    pub null_rows: [u64; 2],
    /// Unless every row is kept: per side, per fingerprint bucket, the pair
    /// digests of the rows written, to check them against pass 1's (empty
    /// when every row is kept).
    spilled: [Vec<Fingerprint>; 2],
}

/// What the workers' keyed sinks add up to.
pub(crate) struct KeyedPartitions {
    pub keyed: SpillIndex,
    pub null_keys: SpillIndex,
    pub written: [u64; 2],
    pub null_rows: [u64; 2],
    /// Unless every row was kept: fingerprints of the rows written, per
    /// side and fingerprint bucket.
    pub spilled: [Vec<Fingerprint>; 2],
}

impl KeyedSink {
    pub(crate) fn new(cfg: KeyedConfig) -> KeyedSink {
        let layout = cfg.shape.layout();
        KeyedSink {
            combiner: Combiner::new(cfg.shape.key.len()),
            null: null_digest(),
            keyed: Staged::new(&cfg),
            null_keys: Staged::new(&cfg),
            rec: vec![0; layout.bytes()],
            nums: vec![Vec::new(); cfg.shape.tolerances.len()],
            written: [0, 0],
            null_rows: [0, 0],
            spilled: match cfg.keep {
                Keep::All => Default::default(),
                _ => std::array::from_fn(|_| vec![Fingerprint::default(); FP_BUCKETS]),
            },
            cfg,
        }
    }

    pub(crate) fn merge(sinks: Vec<KeyedSink>, bucket_bits: u32) -> Result<KeyedPartitions> {
        let mut written = [0u64; 2];
        let mut null_rows = [0u64; 2];
        let (mut keyed, mut nulls) = (Vec::new(), Vec::new());
        let mut spilled: [Vec<Fingerprint>; 2] = Default::default();
        for s in sinks {
            for i in 0..2 {
                written[i] += s.written[i];
                null_rows[i] += s.null_rows[i];
            }
            for (into, from) in spilled.iter_mut().zip(s.spilled) {
                if into.is_empty() {
                    *into = from;
                } else {
                    for (a, b) in into.iter_mut().zip(&from) {
                        a.merge(b);
                    }
                }
            }
            keyed.push(s.keyed.writer);
            nulls.push(s.null_keys.writer);
        }
        Ok(KeyedPartitions {
            keyed: SpillIndex::merge(keyed, 2 << bucket_bits)?,
            null_keys: SpillIndex::merge(nulls, 2 << bucket_bits)?,
            written,
            null_rows,
            spilled,
        })
    }
}

impl RowSink for KeyedSink {
    fn rows(&mut self, side: Side, batch: &Batch<'_>) -> Result<()> {
        let shape = self.cfg.shape.clone();
        if batch.columns.len() < shape.key.len() + shape.values.len() {
            return Err(ReconError::Internal(
                "the keyed sink needs per-column digests".into(),
            ));
        }
        for (t, (v, _)) in shape.tolerances.iter().enumerate() {
            let nums = &mut self.nums[t];
            nums.clear();
            let array = &batch.arrays[shape.values[*v]];
            numbers(array, nums).map_err(|m| {
                ReconError::Usage(format!(
                    "a column with a `--tolerance` holds a value it cannot compare: {m}"
                ))
            })?;
        }
        let nums_at = shape.nums_at();
        let keep = self.cfg.keep.clone();
        let all = matches!(keep, Keep::All);
        for i in 0..batch.len() {
            let mut null_key = false;
            let key = self.combiner.digest(shape.key.iter().map(|&c| {
                let v = batch.columns[c][i];
                null_key |= v == self.null;
                v
            }));
            let kept = match &keep {
                Keep::All => true,
                Keep::Tags(tags) => !null_key && tags.contains(&tag_of(key)),
                Keep::Buckets(marked) => !null_key && marked[fp_bucket_of(key)],
            };
            if !kept {
                continue;
            }
            let row = batch.digests[i];
            let loc = batch.locators.get(i);
            if null_key {
                self.null_rows[side.index()] += 1;
                self.null_keys
                    .push(&self.cfg, side, row, &Keyless::encode(row, loc))?;
                continue;
            }
            let rec = &mut self.rec;
            rec[..KEY_BYTES].copy_from_slice(&key.to_le_bytes());
            rec[ROW_AT..LOC_AT].copy_from_slice(&row.to_le_bytes());
            rec[LOC_AT..WORDS_AT].copy_from_slice(&loc.to_le_bytes());
            for (k, &c) in shape.values.iter().enumerate() {
                let word = batch.columns[c][i] as u64;
                rec[WORDS_AT + 8 * k..WORDS_AT + 8 * k + 8].copy_from_slice(&word.to_le_bytes());
            }
            for (t, nums) in self.nums.iter().enumerate() {
                let at = nums_at + NUM_BYTES * t;
                nums[i].encode(&mut rec[at..at + NUM_BYTES]);
            }
            self.written[side.index()] += 1;
            self.keyed.push(&self.cfg, side, key, &self.rec)?;
            if !all {
                let p = pair_digest(key, row);
                self.spilled[side.index()][fp_bucket_of(key)].add(p);
            }
        }
        Ok(())
    }

    fn finish(&mut self) -> Result<()> {
        self.keyed.staging.finish(&mut self.keyed.writer)?;
        self.null_keys.staging.finish(&mut self.null_keys.writer)
    }
}
