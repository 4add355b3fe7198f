//! Per-unit digest filters for the targeted second pass.
//!
//! When the differing digests decode from the fingerprint buckets and the
//! sketch beside them (see [`super::multiset::bucket_difference`] and
//! [`super::RunSketch`]), they are known after the fingerprint pass, but
//! not where their rows are: a locator cannot be recovered from sums (a
//! row's locator differs per side, so matched rows never cancel). A
//! [`UnitFilter`] per scanned batch of a row group (a blocked Bloom filter
//! of its digests) tells which batches may hold them; the second pass
//! reads only those. A filter has no false negatives, so every batch holding
//! a decoded digest is read, and the second pass recounts the digests from
//! the rows themselves.

/// Bits per 64-byte block of a [`UnitFilter`], and bits set per digest.
const BLOCK_WORDS: usize = 8;
const PROBES: usize = 6;

/// A blocked Bloom filter of one unit's digests: each digest sets
/// `PROBES` bits inside one 64-byte block, so an insert touches one cache
/// line.
#[derive(Debug, Clone)]
pub(crate) struct UnitFilter {
    words: Vec<u64>,
}

impl UnitFilter {
    /// A filter for `rows` digests at `bits_per_row` bits each.
    pub(crate) fn new(rows: u64, bits_per_row: u32) -> UnitFilter {
        let blocks = ((rows.max(1) * bits_per_row as u64).div_ceil(512)).max(1) as usize;
        UnitFilter {
            words: vec![0; blocks * BLOCK_WORDS],
        }
    }

    /// The block of digest `d`: bits 64..128 (the high half, which also
    /// picks the fingerprint bucket; the low half picks the bits) mapped onto
    /// the blocks by a multiply-shift instead of a division.
    #[inline(always)]
    fn block_of(&self, d: u128) -> usize {
        let blocks = (self.words.len() / BLOCK_WORDS) as u128;
        ((((d >> 64) as u64 as u128) * blocks) >> 64) as usize
    }

    #[inline]
    fn probes(&self, d: u128) -> (usize, [u32; PROBES]) {
        let low = (d as u64).rotate_left(29);
        (
            self.block_of(d),
            std::array::from_fn(|i| ((low >> (9 * i)) & 511) as u32),
        )
    }

    #[inline]
    pub(crate) fn insert(&mut self, d: u128) {
        let (block, bits) = self.probes(d);
        let w = &mut self.words[block * BLOCK_WORDS..(block + 1) * BLOCK_WORDS];
        for b in bits {
            w[(b / 64) as usize] |= 1 << (b % 64);
        }
    }

    /// Inserts a batch of digests. No prefetch: a filter holds one scanned
    /// batch (8192 rows at up to 20 bits, 20 KiB), which stays in the L1
    /// cache while it is filled.
    pub(crate) fn insert_all(&mut self, digests: &[u128]) {
        for &d in digests {
            self.insert(d);
        }
    }

    /// Whether `d` may be in the unit (never false for a digest inserted).
    pub(crate) fn may_contain(&self, d: u128) -> bool {
        let (block, bits) = self.probes(d);
        let w = &self.words[block * BLOCK_WORDS..(block + 1) * BLOCK_WORDS];
        bits.iter()
            .all(|b| w[(b / 64) as usize] & (1 << (b % 64)) != 0)
    }
}

/// Asks the CPU to start loading the cache line holding `word` (its first byte).
#[inline(always)]
pub(crate) fn prefetch<T>(word: &T) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: prefetching is a hint with no architectural effect; the
    // pointer comes from a live reference, and SSE is part of x86_64.
    unsafe {
        use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
        _mm_prefetch::<_MM_HINT_T0>((word as *const T).cast());
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = word;
}

#[cfg(test)]
mod tests {
    use super::*;

    fn digest(i: u64) -> u128 {
        crate::digest::test_digests(i, 1)[0]
    }

    #[test]
    fn unit_filters_have_no_false_negatives_and_few_false_positives() {
        let mut f = UnitFilter::new(10_000, 12);
        for i in 0..10_000 {
            f.insert(digest(i));
        }
        assert!((0..10_000).all(|i| f.may_contain(digest(i))));
        let false_hits = (10_000..110_000)
            .filter(|&i| f.may_contain(digest(i)))
            .count();
        assert!(false_hits < 1_000, "{false_hits} false positives in 100000");
    }
}
