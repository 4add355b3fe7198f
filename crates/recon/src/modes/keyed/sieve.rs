//! Pass 1 of the two-pass keyed diff: sums per key bucket, so that only the
//! keys that differ (and the duplicated ones) are partitioned.
//!
//! Every row with a complete key adds its *pair digest* — its row digest
//! with the key digest's top [`FP_BITS`] bits — to its side's
//! [`Fingerprint`] of the key's fingerprint bucket. The row digest covers
//! the key columns, so two equal fingerprints mean the bucket holds the
//! same rows on both sides (the multiset sums' argument, over the digest's
//! other 114 bits and the 64-bit mix), and each of its keys has the same
//! rows on both sides: it is matched, or it is a duplicated key whose
//! copies agree.
//!
//! Telling those two apart needs the keys themselves: the source's key
//! digests are written (16 bytes a row, against a keyed record's 40 or
//! more), and sorted bucket by bucket after the pass. A key seen more than
//! once is a duplicated key; outside the keys read again, its copies agree
//! and it has as many on each side. The few shown as samples are read again
//! for their rows.
//!
//! The keys that make a bucket differ are found from two more sums per
//! side, modulo the prime 2^61 − 1: U = Σ g and T = Σ tag · g, where tag is
//! the key digest's top 61 bits and g is the row digest's low 64 bits mod
//! 2^61 − 1. When every row that differs in a bucket has the same key (a
//! changed key, a missing one, a key with an extra copy),
//! T_s − T_t = tag · (U_s − U_t), so tag = ΔT / ΔU. A bucket where more
//! than one key differs gives a quotient that is not one of its tags (or,
//! 2^-14 of the time, a wrong one, which the second pass's check below
//! catches).
//!
//! The second pass reads only the batches whose filters may hold a wanted
//! tag and partitions those keys' rows in full. It checks that the rows it
//! partitioned account for every bucket's whole difference; when they do
//! not, or a bucket could not be decoded, whole buckets are partitioned
//! instead ([`Keep::Buckets`](super::sink::Keep)).

use std::sync::atomic::{AtomicUsize, Ordering};

use super::sink::{KeyedConfig, Staged};
use super::tags::{pair_digest, tag_of, tag_probe, KeySums};
use crate::digest::sketch::prefetch;
use crate::digest::{
    fp_bucket_of, null_digest, Combiner, Fingerprint, FP_BUCKETS, FP_PREFETCH_AHEAD,
};
use crate::engine::partition::{bucket_of, FingerprintSink, SliceFilters};
use crate::engine::record::Keyless;
use crate::engine::scan::{Batch, RowSink};
use crate::engine::spill::{Partitioner, SpillIndex, SpillWriter};
use crate::error::{ReconError, Result};
use crate::input::Unit;
use crate::side::Side;

/// The keyed sink of pass 1: fingerprints and decoding sums per bucket,
/// per-batch filters of the key tags, the source's key words, and the rows
/// with a NULL key (partitioned as in one pass: they are diffed as a
/// multiset).
pub(crate) struct SieveSink {
    cfg: KeyedConfig,
    key: Combiner,
    null: u128,
    fp: FingerprintSink,
    sums: [Vec<KeySums>; 2],
    words: SpillWriter,
    word_staging: Partitioner,
    null_keys: Staged,
    pairs: Vec<u128>,
    keys: Vec<u128>,
    probes: Vec<u128>,
    /// Rows with a complete key, and with a NULL in a key column, per side.
    keyed_rows: [u64; 2],
    null_rows: [u64; 2],
}

/// What the workers' sieve sinks add up to.
pub(crate) struct Sieved {
    pub fingerprints: [Vec<Fingerprint>; 2],
    /// Per unit, its batches' filters of key tags, when every unit has them.
    pub filters: Option<SliceFilters>,
    pub sums: [Vec<KeySums>; 2],
    /// The source's key digests, keyed by their first-level bucket.
    pub words: SpillIndex,
    pub null_keys: SpillIndex,
    pub keyed_rows: [u64; 2],
    pub null_rows: [u64; 2],
}

impl SieveSink {
    pub(crate) fn new(cfg: KeyedConfig, filter_bits: u32) -> SieveSink {
        SieveSink {
            key: Combiner::new(cfg.shape.key.len()),
            null: null_digest(),
            fp: FingerprintSink::new(filter_bits),
            sums: [
                vec![KeySums::default(); FP_BUCKETS],
                vec![KeySums::default(); FP_BUCKETS],
            ],
            words: SpillWriter::new(cfg.dir.clone(), cfg.budget.clone()),
            word_staging: Partitioner::new(1 << cfg.bucket_bits, cfg.chunk_bytes, 0),
            null_keys: Staged::new(&cfg),
            pairs: Vec::new(),
            keys: Vec::new(),
            probes: Vec::new(),
            keyed_rows: [0, 0],
            null_rows: [0, 0],
            cfg,
        }
    }

    pub(crate) fn merge(sinks: Vec<SieveSink>, bucket_bits: u32) -> Result<Sieved> {
        let mut sums = [
            vec![KeySums::default(); FP_BUCKETS],
            vec![KeySums::default(); FP_BUCKETS],
        ];
        let (mut keyed_rows, mut null_rows) = ([0u64; 2], [0u64; 2]);
        let (mut fps, mut words, mut nulls) = (Vec::new(), Vec::new(), Vec::new());
        for s in sinks {
            for i in 0..2 {
                keyed_rows[i] += s.keyed_rows[i];
                null_rows[i] += s.null_rows[i];
                for (a, b) in sums[i].iter_mut().zip(&s.sums[i]) {
                    a.merge(b);
                }
            }
            fps.push(s.fp);
            words.push(s.words);
            nulls.push(s.null_keys.writer);
        }
        let fingerprinted = FingerprintSink::merge(fps);
        Ok(Sieved {
            fingerprints: fingerprinted.fingerprints,
            filters: fingerprinted.filters,
            sums,
            words: SpillIndex::merge(words, 1 << bucket_bits)?,
            null_keys: SpillIndex::merge(nulls, 2 << bucket_bits)?,
            keyed_rows,
            null_rows,
        })
    }
}

impl RowSink for SieveSink {
    fn start_unit(&mut self, side: Side, unit: &Unit) -> Result<()> {
        self.fp.start_unit(side, unit)
    }

    fn rows(&mut self, side: Side, batch: &Batch<'_>) -> Result<()> {
        let shape = self.cfg.shape.clone();
        if batch.columns.len() < shape.key.len() {
            return Err(ReconError::Internal(
                "the keyed sink needs per-column digests".into(),
            ));
        }
        let s = side.index();
        self.pairs.clear();
        self.keys.clear();
        self.probes.clear();
        for i in 0..batch.len() {
            let mut null_key = false;
            let key = self.key.digest(shape.key.iter().map(|&c| {
                let v = batch.columns[c][i];
                null_key |= v == self.null;
                v
            }));
            let tag = tag_of(key);
            // One probe per row (the filter spans the batch's rows); a
            // NULL key's is never looked up.
            self.probes.push(tag_probe(tag));
            let row = batch.digests[i];
            if null_key {
                self.null_rows[s] += 1;
                let rec = Keyless::encode(row, batch.locators.get(i));
                self.null_keys.push(&self.cfg, side, row, &rec)?;
                continue;
            }
            self.pairs.push(pair_digest(key, row));
            self.keys.push(key);
            if side == Side::Source {
                self.word_staging.push(
                    bucket_of(key, self.cfg.bucket_bits),
                    &key.to_le_bytes(),
                    &mut self.words,
                )?;
            }
        }
        // The sums of 16384 buckets are 256 KiB a side, which the decoder's
        // pages evict between batches: each row's bucket is asked for
        // `FP_PREFETCH_AHEAD` rows ahead.
        let sums = &mut self.sums[s];
        for (j, (&key, &pair)) in self.keys.iter().zip(&self.pairs).enumerate() {
            if let Some(&next) = self.keys.get(j + FP_PREFETCH_AHEAD) {
                prefetch(&sums[fp_bucket_of(next)]);
            }
            sums[fp_bucket_of(key)].add(tag_of(key), pair);
        }
        self.keyed_rows[s] += self.pairs.len() as u64;
        self.fp.add(side, &self.pairs, &self.probes, batch.locators);
        Ok(())
    }

    fn finish(&mut self) -> Result<()> {
        self.fp.finish()?;
        self.word_staging.finish(&mut self.words)?;
        self.null_keys.staging.finish(&mut self.null_keys.writer)
    }
}

/// The source's duplicated keys and their copies, read bucket by bucket on
/// `threads` threads.
pub(crate) fn repeated_keys(
    words: &SpillIndex,
    buckets: usize,
    threads: usize,
) -> Result<Vec<(u128, u64)>> {
    let next = AtomicUsize::new(0);
    let worker = || -> Result<Vec<(u128, u64)>> {
        let (mut buf, mut all, mut out) = (Vec::new(), Vec::new(), Vec::new());
        loop {
            let b = next.fetch_add(1, Ordering::Relaxed);
            if b >= buckets {
                return Ok(out);
            }
            all.clear();
            for chunk in words.chunks(b as u32) {
                let bytes = chunk.bytes(&mut buf)?;
                all.extend(bytes.chunks_exact(16).map(|w| {
                    let mut a = [0u8; 16];
                    a.copy_from_slice(w);
                    u128::from_le_bytes(a)
                }));
            }
            all.sort_unstable();
            for run in all.chunk_by(|a, b| a == b) {
                if run.len() > 1 {
                    out.push((run[0], run.len() as u64));
                }
            }
        }
    };
    let results: Vec<Result<Vec<(u128, u64)>>> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..threads.max(1)).map(|_| scope.spawn(worker)).collect();
        handles
            .into_iter()
            .map(|h| {
                h.join()
                    .unwrap_or_else(|_| Err(ReconError::Internal("a worker panicked".into())))
            })
            .collect()
    });
    let mut keys = Vec::new();
    for r in results {
        keys.extend(r?);
    }
    keys.sort_unstable();
    Ok(keys)
}

/// Whether the rows a second pass partitioned (`spilled`, per side and
/// bucket; empty: none) account for every bucket's difference in pass 1
/// (`pass1`): then the rows it did not partition are the same on both
/// sides, bucket by bucket.
pub(crate) fn accounts_for(pass1: &[Vec<Fingerprint>; 2], spilled: &[Vec<Fingerprint>; 2]) -> bool {
    let delta = |a: &Fingerprint, b: &Fingerprint| {
        (
            a.count as i128 - b.count as i128,
            a.sum.wrapping_sub(b.sum),
            a.mix.wrapping_sub(b.mix),
        )
    };
    let none = Fingerprint::default();
    let at = |v: &[Fingerprint], b: usize| *v.get(b).unwrap_or(&none);
    (0..FP_BUCKETS).all(|b| {
        delta(&pass1[0][b], &pass1[1][b]) == delta(&at(&spilled[0], b), &at(&spilled[1], b))
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::digest::FP_BITS;
    use crate::modes::keyed::tags::{add, decode, fold, inverse, mul, sub, P};

    fn key_in(bucket: usize, low: u128) -> u128 {
        ((bucket as u128) << (128 - FP_BITS)) | low
    }

    /// A row digest: pseudo-random bits, as the scan's are.
    fn row(i: u128) -> u128 {
        let m = crate::digest::mix;
        (m(i) as u128) << 64 | m(i | 1 << 100) as u128
    }

    fn sums(rows: &[(u128, u128)]) -> Vec<KeySums> {
        let mut out = vec![KeySums::default(); FP_BUCKETS];
        for &(k, r) in rows {
            out[fp_bucket_of(k)].add(tag_of(k), pair_digest(k, row(r)));
        }
        out
    }

    #[test]
    fn field_arithmetic_inverts() {
        for a in [1u64, 2, 12345, P - 1, 1 << 60] {
            assert_eq!(mul(a, inverse(a)), 1, "{a}");
        }
        assert_eq!(sub(3, 5), P - 2);
        assert_eq!(add(P - 1, 1), 0);
        assert_eq!(fold(u64::MAX), u64::MAX % P);
    }

    #[test]
    fn a_bucket_where_one_key_differs_decodes_to_its_tag() {
        let b = 77;
        let (k, other) = (key_in(b, 0xdead_beef_u128 << 40), key_in(b, 99 << 70));
        let common = [(other, 5u128), (key_in(b, 3), 8)];
        // Changed value, missing key, an extra copy.
        for (src, tgt) in [
            (vec![(k, 1u128)], vec![(k, 2u128)]),
            (vec![(k, 1)], vec![]),
            (vec![(k, 1)], vec![(k, 1), (k, 1)]),
        ] {
            let s = sums(&[&common[..], &src].concat());
            let t = sums(&[&common[..], &tgt].concat());
            assert_eq!(decode(b, &s[b], &t[b]), Some(tag_of(k)));
        }
        // The tag of all ones, which the field holds as 0.
        let top = u128::MAX;
        let (s, t) = (sums(&[(top, 1)]), sums(&[(top, 2)]));
        assert_eq!(
            decode(FP_BUCKETS - 1, &s[FP_BUCKETS - 1], &t[FP_BUCKETS - 1]),
            Some(P)
        );
    }

    #[test]
    fn a_bucket_where_two_keys_differ_rarely_decodes() {
        // Two changed keys in one bucket (rows of different keys differ,
        // since a row digest covers the key): the quotient is no tag of the
        // bucket but with probability 2^-14; over 200 trials, allow 1.
        let mut wrong = 0;
        for i in 0..200u128 {
            let b = (i as usize * 31) % FP_BUCKETS;
            let (k1, k2) = (key_in(b, i << 80 | 1), key_in(b, i << 90 | 2));
            let s = sums(&[(k1, 4 * i), (k2, 4 * i + 1)]);
            let t = sums(&[(k1, 4 * i + 2), (k2, 4 * i + 3)]);
            if decode(b, &s[b], &t[b]).is_some() {
                wrong += 1;
            }
        }
        assert!(wrong <= 1, "{wrong} of 200 decoded");
    }

    #[test]
    fn a_pair_digest_is_the_row_digest_in_the_key_bucket() {
        let (k, r) = (key_in(5, 1), row(7));
        let p = pair_digest(k, r);
        assert_eq!(fp_bucket_of(p), 5);
        assert_eq!(p << FP_BITS, r << FP_BITS);
    }

    #[test]
    fn the_rows_read_again_must_hold_each_buckets_whole_difference() {
        let fp = |rows: &[(u128, u128)]| {
            let mut out = vec![Fingerprint::default(); FP_BUCKETS];
            for &(k, r) in rows {
                out[fp_bucket_of(k)].add(pair_digest(k, row(r)));
            }
            out
        };
        let (k1, k2, k3) = (key_in(3, 1), key_in(3, 2), key_in(9, 1));
        let pass1 = [
            fp(&[(k1, 1), (k2, 5), (k3, 1)]),
            fp(&[(k1, 2), (k2, 5), (k3, 1)]),
        ];
        let spilled = |s: &[(u128, u128)], t: &[(u128, u128)]| [fp(s), fp(t)];
        // k1's rows: the whole difference. k2's as well: still accounted for.
        assert!(accounts_for(&pass1, &spilled(&[(k1, 1)], &[(k1, 2)])));
        assert!(accounts_for(
            &pass1,
            &spilled(&[(k1, 1), (k2, 5)], &[(k1, 2), (k2, 5)])
        ));
        // A wrong key read again (k2), or one side of k1 only: not.
        assert!(!accounts_for(&pass1, &spilled(&[(k2, 5)], &[(k2, 5)])));
        assert!(!accounts_for(&pass1, &spilled(&[(k1, 1)], &[])));
    }

    #[test]
    fn a_probe_spreads_a_tag_over_both_halves() {
        let p = tag_probe(P);
        assert_eq!((p >> 64) as u64, P << 3);
        assert_ne!(tag_probe(1) as u64, tag_probe(2) as u64);
    }
}
