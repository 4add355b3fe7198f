//! The reconcile driver: worker threads take bucket pairs (the source's and
//! the target's records of one bucket) and hand them to a [`Matcher`], which
//! decides what matches (EXCEPT ALL counting for the multiset mode; keyed
//! matching later).
//!
//! A bucket whose distinct keys would outgrow a worker's memory share is
//! split sixteen ways by the next four bits of the partition key into a
//! private sub-partition, recursively, and each part is matched on its own.
//! The driver knows records only by their layout and key.

use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use super::context::{CancelToken, Progress};
use super::record::RecordLayout;
use super::spill::{ChunkRef, Partitioner, SpillBudget, SpillIndex, SpillWriter};
use crate::error::{ReconError, Result};
use crate::side::Side;

/// Key bits consumed by one split.
pub(crate) const SPLIT_BITS: u32 = 4;

/// Matches the records of one bucket pair.
pub trait Matcher: Send {
    /// Matches one bucket, given its `records` in all. Returns `Ok(false)`,
    /// having kept nothing of this bucket, when it would need more than
    /// `max_entries` distinct keys in memory: the driver then splits the
    /// bucket and calls again for each part.
    fn bucket(
        &mut self,
        source: &[ChunkRef<'_>],
        target: &[ChunkRef<'_>],
        records: usize,
        max_entries: usize,
        buf: &mut Vec<u8>,
    ) -> Result<bool>;

    /// The worker has no more buckets.
    fn finish(&mut self) -> Result<()>;
}

/// Settings of the driver.
pub struct DriverConfig<'a> {
    /// Worker threads reconciling bucket pairs.
    pub threads: usize,
    /// The records' layout (key and payload bytes).
    pub layout: RecordLayout,
    /// Most distinct keys one worker's matcher may hold at once.
    pub max_entries: usize,
    /// Chunk size of split sub-partitions.
    pub chunk_bytes: usize,
    /// Key bits already fixed by the first-level buckets.
    pub first_level_bits: u32,
    /// The index keys of the bucket pairs start here: bucket `b` is keys
    /// `key_base + b` (source) and `key_base + buckets + b` (target).
    pub key_base: u32,
    /// The run directory split sub-partitions spill into.
    pub dir: &'a Path,
    /// The run's spill allowance.
    pub budget: Arc<SpillBudget>,
    /// Stops the workers between buckets.
    pub cancel: &'a CancelToken,
    /// Counts the buckets done.
    pub progress: &'a Progress,
}

/// Every worker's matcher, and how many buckets had to be split.
pub struct Driven<M> {
    pub matchers: Vec<M>,
    pub splits: u64,
}

struct Worker<'a, M> {
    cfg: &'a DriverConfig<'a>,
    matcher: M,
    splits: u64,
    buf: Vec<u8>,
}

impl<M: Matcher> Worker<'_, M> {
    /// Matches one bucket given its chunks; `depth` key bits are already fixed.
    fn bucket(&mut self, src: Vec<ChunkRef<'_>>, tgt: Vec<ChunkRef<'_>>, depth: u32) -> Result<()> {
        if self.cfg.cancel.is_cancelled() {
            return Err(ReconError::Interrupted);
        }
        let bytes = src.iter().chain(&tgt).map(|c| c.len()).sum::<usize>();
        let records = bytes / self.cfg.layout.bytes();
        if records == 0 {
            return Ok(());
        }
        if self
            .matcher
            .bucket(&src, &tgt, records, self.cfg.max_entries, &mut self.buf)?
        {
            return Ok(());
        }
        if depth + SPLIT_BITS > 128 {
            return Err(ReconError::Internal(
                "bucket cannot be split further".into(),
            ));
        }
        self.splits += 1;
        // Split by the next key bits into a private sub-partition, then recurse.
        let parts = 1usize << SPLIT_BITS;
        let mut writer = SpillWriter::new(self.cfg.dir.to_path_buf(), self.cfg.budget.clone());
        let mut staging = Partitioner::new(2 * parts, self.cfg.chunk_bytes, 0);
        for (side, chunks) in [(Side::Source, &src), (Side::Target, &tgt)] {
            for chunk in chunks.iter() {
                let bytes = chunk.bytes(&mut self.buf)?;
                for rec in self.cfg.layout.records(bytes)? {
                    let key = RecordLayout::key(rec);
                    let sub = ((key << depth) >> (128 - SPLIT_BITS)) as usize;
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

/// Matches every bucket of `index` (keys `side * buckets + bucket`) on
/// `cfg.threads` workers, each with its own matcher from `make`.
pub fn reconcile<M, F>(
    index: &SpillIndex,
    buckets: usize,
    cfg: &DriverConfig<'_>,
    make: F,
) -> Result<Driven<M>>
where
    M: Matcher,
    F: Fn() -> Result<M> + Sync,
{
    let next = AtomicUsize::new(0);
    let results: Vec<Result<(M, u64)>> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..cfg.threads.max(1))
            .map(|_| {
                s.spawn(|| -> Result<(M, u64)> {
                    let mut w = Worker {
                        cfg,
                        matcher: make()?,
                        splits: 0,
                        buf: Vec::new(),
                    };
                    loop {
                        let b = next.fetch_add(1, Ordering::Relaxed);
                        if b >= buckets {
                            break;
                        }
                        let src: Vec<_> = index.chunks(cfg.key_base + b as u32).collect();
                        let tgt: Vec<_> =
                            index.chunks(cfg.key_base + (buckets + b) as u32).collect();
                        if let Err(e) = w.bucket(src, tgt, cfg.first_level_bits) {
                            // Stop the other workers early.
                            next.store(usize::MAX / 2, Ordering::Relaxed);
                            return Err(e);
                        }
                        cfg.progress.buckets_done.fetch_add(1, Ordering::Relaxed);
                    }
                    w.matcher.finish()?;
                    Ok((w.matcher, w.splits))
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
    let mut matchers = Vec::with_capacity(results.len());
    let mut splits = 0;
    for r in results {
        let (m, n) = r?;
        matchers.push(m);
        splits += n;
    }
    Ok(Driven { matchers, splits })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::record::Keyless;
    use std::collections::HashMap;

    /// Counts records per key and side, refusing buckets with more keys
    /// than allowed, like a real matcher.
    #[derive(Default)]
    struct Counter {
        counts: HashMap<u128, [u64; 2]>,
        buckets: usize,
    }

    impl Matcher for Counter {
        fn bucket(
            &mut self,
            source: &[ChunkRef<'_>],
            target: &[ChunkRef<'_>],
            _records: usize,
            max_entries: usize,
            buf: &mut Vec<u8>,
        ) -> Result<bool> {
            let mut local: HashMap<u128, [u64; 2]> = HashMap::new();
            for (side, chunks) in [(0, source), (1, target)] {
                for c in chunks {
                    for rec in Keyless::LAYOUT.records(c.bytes(buf)?)? {
                        local.entry(RecordLayout::key(rec)).or_default()[side] += 1;
                        if local.len() > max_entries {
                            return Ok(false);
                        }
                    }
                }
            }
            self.buckets += 1;
            for (k, v) in local {
                let e = self.counts.entry(k).or_default();
                e[0] += v[0];
                e[1] += v[1];
            }
            Ok(true)
        }

        fn finish(&mut self) -> Result<()> {
            Ok(())
        }
    }

    #[test]
    fn a_bucket_too_big_for_the_share_is_split_until_it_fits() {
        let dir = tempfile::tempdir().unwrap();
        let budget = SpillBudget::new(1 << 20);
        let mut w = SpillWriter::new(dir.path().to_path_buf(), budget.clone());
        // 64 distinct keys spread over the top bits, all in one first-level bucket.
        let keys: Vec<u128> = (0..64u128).map(|i| (i << 122) | i).collect();
        let mut src = Vec::new();
        for &k in &keys {
            src.extend_from_slice(&Keyless::encode(k, 0));
        }
        let mut tgt = Vec::new();
        for &k in &keys[..10] {
            tgt.extend_from_slice(&Keyless::encode(k, 1));
        }
        w.push(0, src).unwrap();
        w.push(1, tgt).unwrap();
        let index = SpillIndex::merge(vec![w], 2).unwrap();
        let cancel = CancelToken::new();
        let progress = Progress::default();
        let cfg = DriverConfig {
            threads: 2,
            layout: Keyless::LAYOUT,
            max_entries: 8,
            chunk_bytes: 48,
            first_level_bits: 0,
            key_base: 0,
            dir: dir.path(),
            budget,
            cancel: &cancel,
            progress: &progress,
        };
        let driven = reconcile(&index, 1, &cfg, || Ok(Counter::default())).unwrap();
        assert!(driven.splits >= 1);
        let mut all: HashMap<u128, [u64; 2]> = HashMap::new();
        for m in driven.matchers {
            all.extend(m.counts);
        }
        assert_eq!(all.len(), 64);
        assert!(keys[..10].iter().all(|k| all[k] == [1, 1]));
        assert!(keys[10..].iter().all(|k| all[k] == [1, 0]));
        // A cancelled run stops.
        cancel.cancel();
        assert!(matches!(
            reconcile(&index, 1, &cfg, || Ok(Counter::default())),
            Err(ReconError::Interrupted)
        ));
    }
}
