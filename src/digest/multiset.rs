//! Order-independent digests of multisets of row digests.
//!
//! A [`Fingerprint`] summarizes a multiset of 128-bit digests so that two
//! multisets can be compared without holding either: the count, the
//! wrapping sum of the digests (never XOR, which cancels duplicate pairs)
//! and a wrapping sum of an independent nonlinear mix of each digest. It is
//! what the two-pass strategy compares per bucket.

/// Buckets of the fingerprint pass are chosen by the digest's top bits.
pub const FP_BITS: u32 = 14;
pub const FP_BUCKETS: usize = 1 << FP_BITS;

/// A multiset fingerprint of the digests in one bucket: count, wrapping sum
/// of the 128-bit digests, and a wrapping sum of a nonlinear 64-bit mix of
/// them. Two multisets that differ have equal fingerprints only by a
/// coincidence of the order of 2^-128 (see the README's collision argument).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Fingerprint {
    pub count: u64,
    pub sum: u128,
    pub mix: u64,
}

impl Fingerprint {
    #[inline]
    pub fn add(&mut self, d: u128) {
        self.count += 1;
        self.sum = self.sum.wrapping_add(d);
        // MurmurHash3's finalizer over both halves: no linear relation with `sum`.
        let mut x = (d as u64) ^ ((d >> 64) as u64).rotate_left(23);
        x = (x ^ (x >> 33)).wrapping_mul(0xff51_afd7_ed55_8ccd);
        x = (x ^ (x >> 33)).wrapping_mul(0xc4ce_b9fe_1a85_ec53);
        self.mix = self.mix.wrapping_add(x ^ (x >> 33));
    }

    pub fn merge(&mut self, o: &Fingerprint) {
        self.count += o.count;
        self.sum = self.sum.wrapping_add(o.sum);
        self.mix = self.mix.wrapping_add(o.mix);
    }
}

#[inline]
pub fn fp_bucket_of(digest: u128) -> usize {
    (digest >> (128 - FP_BITS)) as usize
}

#[cfg(test)]
mod tests {
    use super::*;

    fn of(digests: &[u128]) -> Fingerprint {
        let mut f = Fingerprint::default();
        for &d in digests {
            f.add(d);
        }
        f
    }

    #[test]
    fn order_does_not_matter_and_duplicates_count() {
        assert_eq!(of(&[1, 2, 3]), of(&[3, 1, 2]));
        // XOR would cancel the pair; the sum and count do not.
        assert_ne!(of(&[7, 7]), of(&[]));
        assert_ne!(of(&[7, 7, 9]), of(&[9]));
        let mut merged = of(&[1, 2]);
        merged.merge(&of(&[3]));
        assert_eq!(merged, of(&[1, 2, 3]));
    }

    #[test]
    fn a_sum_preserving_change_is_still_seen() {
        // {1, 4} and {2, 3} have the same count and the same sum: only the
        // nonlinear mix tells them apart.
        let (a, b) = (of(&[1, 4]), of(&[2, 3]));
        assert_eq!((a.count, a.sum), (b.count, b.sum));
        assert_ne!(a, b);
    }
}
