//! Key tags and the decoding sums both keyed passes use: a key digest's
//! tag and bucket, its batch-filter probe, the pair digest a row adds to its
//! key's fingerprint bucket, and the sums modulo 2^61 − 1 from which the
//! one differing key of a bucket is decoded (see [`super::sieve`]).
//!
//! Its own module so that the sieve pass and the second pass's sink share
//! it without importing each other.

use crate::digest::{FP_BITS, FP_BUCKETS};

/// A set of key tags.
pub(crate) type TagSet = std::collections::HashSet<u64, ahash::RandomState>;

/// The prime modulus of the decoding sums.
pub(super) const P: u64 = (1 << 61) - 1;

/// `x` mod P, for any `x`.
#[inline]
pub(super) fn fold(x: u64) -> u64 {
    let r = (x & P) + (x >> 61);
    if r >= P {
        r - P
    } else {
        r
    }
}

#[inline]
pub(super) fn add(a: u64, b: u64) -> u64 {
    fold(a + b)
}

#[inline]
pub(super) fn sub(a: u64, b: u64) -> u64 {
    fold(a + (P - b))
}

#[inline]
pub(super) fn mul(a: u64, b: u64) -> u64 {
    let x = a as u128 * b as u128;
    fold(((x as u64) & P) + (x >> 61) as u64)
}

pub(super) fn inverse(a: u64) -> u64 {
    // Fermat: a^(P-2).
    let (mut base, mut e, mut out) = (a, P - 2, 1u64);
    while e > 0 {
        if e & 1 == 1 {
            out = mul(out, base);
        }
        base = mul(base, base);
        e >>= 1;
    }
    out
}

/// A key digest's tag: its top 61 bits (the top [`FP_BITS`] of which are
/// its fingerprint bucket).
#[inline]
pub(crate) fn tag_of(key: u128) -> u64 {
    (key >> 67) as u64
}

/// The fingerprint bucket of a tag.
#[inline]
pub(crate) fn bucket_of_tag(tag: u64) -> usize {
    (tag >> (61 - FP_BITS)) as usize
}

/// What a batch filter holds for a tag: its bits spread over the high half
/// (which picks the filter's block) and the low half (which picks the bits).
#[inline]
pub(crate) fn tag_probe(tag: u64) -> u128 {
    let low = tag.wrapping_mul(0x9e37_79b9_7f4a_7c15) ^ (tag >> 29);
    ((tag << 3) as u128) << 64 | low as u128
}

/// The pair digest of a row: its row digest (which covers the key columns
/// too, so it determines the key) with the key digest's top [`FP_BITS`]
/// bits, which place it in the key's fingerprint bucket.
#[inline]
pub(crate) fn pair_digest(key: u128, row: u128) -> u128 {
    const TOP: u128 = !(u128::MAX >> FP_BITS);
    (key & TOP) | (row & !TOP)
}

/// The decoding sums of one bucket of one side (mod 2^61 − 1).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct KeySums {
    t: u64,
    u: u64,
}

impl KeySums {
    #[inline]
    pub(crate) fn add(&mut self, tag: u64, pair: u128) {
        let g = fold(pair as u64);
        self.u = add(self.u, g);
        self.t = add(self.t, mul(fold(tag), g));
    }

    pub(super) fn merge(&mut self, o: &KeySums) {
        self.u = add(self.u, o.u);
        self.t = add(self.t, o.t);
    }
}

/// The one key tag whose rows make bucket `bucket` differ, when there is
/// one: ΔT / ΔU, if that is a tag of the bucket.
pub(crate) fn decode(bucket: usize, source: &KeySums, target: &KeySums) -> Option<u64> {
    let du = sub(source.u, target.u);
    if du == 0 {
        return None;
    }
    let q = mul(sub(source.t, target.t), inverse(du));
    // The tag of all ones is P, which the sums hold as 0.
    let tag = if q == 0 && bucket == FP_BUCKETS - 1 {
        P
    } else {
        q
    };
    (bucket_of_tag(tag) == bucket).then_some(tag)
}
