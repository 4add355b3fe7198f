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
///
/// Aligned to 32 bytes, so a bucket never straddles two cache lines: the
/// fingerprint pass updates one random bucket per row.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[repr(align(32))]
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
        self.mix = self.mix.wrapping_add(mix(d));
    }

    pub fn merge(&mut self, o: &Fingerprint) {
        self.count += o.count;
        self.sum = self.sum.wrapping_add(o.sum);
        self.mix = self.mix.wrapping_add(o.mix);
    }
}

/// A hasher for maps and sets keyed by digests: they are already uniform
/// random bits, so it takes their low 64 bits (buckets are chosen by the
/// high bits, so these are independent of the bucket). A general-purpose
/// hasher, ahash included, would only add work per row.
#[derive(Default)]
pub struct DigestHasher(u64);

impl std::hash::Hasher for DigestHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = self.0.rotate_left(8) ^ b as u64;
        }
    }
    fn write_u128(&mut self, v: u128) {
        self.0 = v as u64;
    }
}

/// Builds [`DigestHasher`]s.
pub type DigestBuildHasher = std::hash::BuildHasherDefault<DigestHasher>;

/// MurmurHash3's finalizer over both halves of a digest: a 64-bit value
/// with no linear relation to the digest itself.
#[inline]
pub fn mix(d: u128) -> u64 {
    let mut x = (d as u64) ^ ((d >> 64) as u64).rotate_left(23);
    x = (x ^ (x >> 33)).wrapping_mul(0xff51_afd7_ed55_8ccd);
    x = (x ^ (x >> 33)).wrapping_mul(0xc4ce_b9fe_1a85_ec53);
    x ^ (x >> 33)
}

/// The one digest whose count differs between two fingerprints of a
/// bucket, when the difference is a single digest: `count` differs by an odd
/// `c` (the sum then differs by `c · d`, and `c` is invertible mod 2^128),
/// and the nonlinear mix confirms `d`. Returns `(d, c)`, `c = source − target`.
///
/// This decodes almost every differing bucket of a pair that drifts in a
/// few rows: with 16384 buckets, two differing digests rarely share one. A
/// bucket holding more than one difference yields `None` (or, with
/// probability 2^-64 per bucket, a wrong `d`; the targeted second pass then
/// finds counts that do not reproduce `c`, which is an error, never an answer).
pub fn single_difference(source: &Fingerprint, target: &Fingerprint) -> Option<(u128, i64)> {
    let c = (source.count as i64).checked_sub(target.count as i64)?;
    if c % 2 == 0 {
        return None;
    }
    let diff = source.sum.wrapping_sub(target.sum);
    // c · d ≡ diff (mod 2^128); c odd, so c has an inverse (Newton's iteration).
    let c128 = c as i128 as u128;
    let mut inv = c128; // correct to 3 bits for odd c
    for _ in 0..6 {
        inv = inv.wrapping_mul(2u128.wrapping_sub(c128.wrapping_mul(inv)));
    }
    let d = diff.wrapping_mul(inv);
    let mixed = source.mix.wrapping_sub(target.mix);
    (mixed == mix(d).wrapping_mul(c as u64)).then_some((d, c))
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
    fn a_single_difference_decodes_from_the_fingerprints() {
        let (a, b, c) = (
            0x1234_5678_9abc_def0_u128 << 60 | 77,
            5u128 << 100 | 3,
            9u128,
        );
        // One more copy in the source, then three more, then one fewer.
        assert_eq!(
            single_difference(&of(&[a, b, c]), &of(&[b, c])),
            Some((a, 1))
        );
        assert_eq!(
            single_difference(&of(&[a, a, a, b]), &of(&[b])),
            Some((a, 3))
        );
        assert_eq!(single_difference(&of(&[b]), &of(&[b, c])), Some((c, -1)));
        // Two differences (a changed row) or an even count: not decodable.
        assert_eq!(single_difference(&of(&[a]), &of(&[b])), None);
        assert_eq!(single_difference(&of(&[a, a]), &of(&[])), None);
        assert_eq!(single_difference(&of(&[a, b]), &of(&[c])), None);
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
