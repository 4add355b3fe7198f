//! Digests: the canonical encoding of values and rows and its 128-bit row
//! digests ([`encode`], specified with test vectors in docs/encoding.md),
//! order-independent digests of multisets of them ([`multiset`]), and
//! invertible sketches that name the digests two multisets differ in ([`iblt`]).

pub(crate) mod encode;
pub(crate) mod iblt;
pub(crate) mod multiset;
mod peel;
pub(crate) mod sketch;

pub(crate) use encode::check_supported;
pub(crate) use encode::{null_digest, Combiner, RowEncoder, ValueSum, ENCODING_VERSION};
pub(crate) use multiset::{
    adds_up, bucket_difference, fp_bucket_of, mix, BucketDifferences, DigestBuildHasher,
    Fingerprint, RunSketch, FP_BITS, FP_BUCKETS, FP_PREFETCH_AHEAD,
};
pub(crate) use sketch::{FilterId, FilterStore};

/// A digest whose count differs between the sides: (digest, source − target).
pub(crate) type Difference = (u128, i64);

/// Digests for tests: uniform 128-bit values from SplitMix64, two draws
/// each, reproducible by seed.
#[cfg(test)]
pub(crate) fn test_digests(seed: u64, n: usize) -> Vec<u128> {
    let mut s = seed.wrapping_mul(0x2545_f491_4f6c_dd1d);
    let mut next = || {
        s = s.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = s;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    };
    (0..n)
        .map(|_| ((next() as u128) << 64) | next() as u128)
        .collect()
}
