//! Order-independent digests of multisets of row digests.
//!
//! A [`Fingerprint`] summarizes a multiset of 128-bit digests so that two
//! multisets can be compared without holding either: the count, the
//! wrapping sum of the digests (never XOR, which cancels duplicate pairs)
//! and a wrapping sum of an independent nonlinear mix of each digest. It is
//! what the two-pass strategy compares per bucket.

/// Buckets of the fingerprint pass are chosen by the digest's top bits.
pub(crate) const FP_BITS: u32 = 14;
pub(crate) const FP_BUCKETS: usize = 1 << FP_BITS;

/// How many rows ahead a per-row update of a bucket array indexed by
/// [`fp_bucket_of`] prefetches its bucket. Such arrays (256-512 KiB a side)
/// are evicted from L2 by the decoder between batches, and without a
/// prefetch the load was half the update's time; 16 ahead and 40 ahead
/// measured the same.
pub(crate) const FP_PREFETCH_AHEAD: usize = 16;

/// A multiset fingerprint of the digests in one bucket: count, wrapping sum
/// of the 128-bit digests, and a wrapping sum of a nonlinear 64-bit mix of
/// them. Two multisets that differ have equal fingerprints only by a
/// coincidence of the order of 2^-128 (see the README's collision argument).
///
/// Aligned to 32 bytes, so a bucket never straddles two cache lines: the
/// fingerprint pass updates one random bucket per row.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[repr(align(32))]
pub(crate) struct Fingerprint {
    pub count: u64,
    pub sum: u128,
    pub mix: u64,
}

impl Fingerprint {
    #[inline]
    pub(crate) fn add(&mut self, d: u128) {
        self.add_mixed(d, mix(d));
    }

    /// [`add`](Self::add) of a digest whose [`mix`] is `m`.
    #[inline(always)]
    pub(crate) fn add_mixed(&mut self, d: u128, m: u64) {
        self.count += 1;
        self.sum = self.sum.wrapping_add(d);
        self.mix = self.mix.wrapping_add(m);
    }

    pub(crate) fn merge(&mut self, o: &Fingerprint) {
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

/// Builds the hasher of digest sets: digests are already uniform, so it
/// takes their low 64 bits instead of hashing them again.
pub type DigestBuildHasher = std::hash::BuildHasherDefault<DigestHasher>;

/// MurmurHash3's finalizer over both halves of a digest: a 64-bit value
/// with no linear relation to the digest itself.
#[inline]
pub(crate) fn mix(d: u128) -> u64 {
    let mut x = (d as u64) ^ ((d >> 64) as u64).rotate_left(23);
    x = (x ^ (x >> 33)).wrapping_mul(0xff51_afd7_ed55_8ccd);
    x = (x ^ (x >> 33)).wrapping_mul(0xc4ce_b9fe_1a85_ec53);
    x ^ (x >> 33)
}

/// The one digest whose count differs between two fingerprints of bucket
/// `bucket` (of `2^bits`, picked by a digest's top bits), when the
/// difference is a single digest. Returns `(d, c)`, `c = source − target`.
///
/// The sums differ by `c · d (mod 2¹²⁸)`. With `c = 2ᵛ · u`, `u` odd, that
/// fixes the low `128 − v` bits of `d` (`u` is invertible modulo 2¹²⁸), and
/// the bucket supplies the top `bits ≥ v` bits that the factor `2ᵛ` hides,
/// so any copy count up to a multiple of `2^bits` decodes, even ones. The
/// nonlinear mix then confirms `d`.
///
/// This decodes almost every differing bucket of a pair that drifts in a
/// few rows: with 16384 buckets, two differing digests rarely share one. A
/// bucket holding more than one difference yields `None` (or, with
/// probability 2⁻⁶⁴ per bucket, a wrong `d`; the targeted second pass then
/// finds counts that do not reproduce `c`, which is an error, never an answer).
pub(crate) fn bucket_difference(
    source: &Fingerprint,
    target: &Fingerprint,
    bucket: usize,
    bits: u32,
) -> Option<(u128, i64)> {
    let c = (source.count as i64).checked_sub(target.count as i64)?;
    decode_bucket(
        c,
        source.sum.wrapping_sub(target.sum),
        source.mix.wrapping_sub(target.mix),
        bucket,
        bits,
    )
}

/// [`bucket_difference`] of a bucket's differences: count `c`, sum `sum`
/// and mix `mixed`.
fn decode_bucket(c: i64, sum: u128, mixed: u64, bucket: usize, bits: u32) -> Option<(u128, i64)> {
    let v = c.trailing_zeros();
    if c == 0 || v > bits {
        return None;
    }
    let top = if bits == 0 {
        0
    } else {
        (bucket as u128) << (128 - bits)
    };
    let low_mask = if bits == 0 {
        u128::MAX
    } else {
        u128::MAX >> bits
    };
    let d = (low_bits(c, sum) & low_mask) | top;
    // The bits the bucket and the quotient both give must agree: checking
    // c · d against the sum's difference covers them and the hidden ones.
    ((c as i128 as u128).wrapping_mul(d) == sum && mixed == mix(d).wrapping_mul(c as u64))
        .then_some((d, c))
}

/// With `c = 2ᵛ · u` (`u` odd): the `d` whose low `128 − v` bits satisfy
/// `c · d ≡ sum (mod 2¹²⁸)`, its top `v` bits zero.
fn low_bits(c: i64, sum: u128) -> u128 {
    let v = c.trailing_zeros();
    let u = ((c as i128) >> v) as u128;
    // u · u⁻¹ ≡ 1 (mod 2¹²⁸) by Newton's iteration (correct to 3 bits for odd u).
    let mut inv = u;
    for _ in 0..6 {
        inv = inv.wrapping_mul(2u128.wrapping_sub(u.wrapping_mul(inv)));
    }
    let low = (sum >> v).wrapping_mul(inv);
    if v == 0 {
        low
    } else {
        low & (u128::MAX >> v)
    }
}

/// Most hidden top bits a [`RunSketch`] cell searches (1024 candidates):
/// copy counts up to 1023 decode there whatever their factors of two.
const SEARCH_BITS: u32 = 10;

/// The in-run sketch beside the fingerprint buckets (the sub-tables of
/// docs/sketch.md, "Inside recon diff"): `tables` sub-tables of `2^log`
/// cells, sub-table `j` indexed by bits `32j .. 32j + log` of a digest,
/// each cell a signed fingerprint (count, sum mod 2¹²⁸, mix) of source
/// digests less target digests.
///
/// Why not the [`super::iblt::Iblt`] of files: its sums modulo a prime make
/// every count invertible, at a compare or two more per cell, and pass 1
/// of every two-pass diff pays for this table on every row; wrapping sums
/// are what the fingerprint buckets beside it already add. A wrapping cell
/// gives a digest's low `128 − v` bits for `c = 2ᵛ · u`; the
/// top `v` bits are searched (`v ≤ 10`), each candidate checked by the mix
/// and by indexing its cell. The run's targeted pass recounts every
/// decoded digest, so a wrong candidate (2⁻⁶⁴ per test) is an error, not
/// an answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct RunSketch {
    log: u32,
    cells: Vec<SignedCell>,
}

/// A signed fingerprint (source less target): 32 bytes, aligned, one
/// cache line per cell. The cells of [`RunSketch`] and of
/// [`BucketDifferences`].
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[repr(C, align(32))]
struct SignedCell {
    count: i64,
    mix: u64,
    sum: u128,
}

impl SignedCell {
    fn is_zero(&self) -> bool {
        *self == SignedCell::default()
    }

    /// Takes `c` copies of `d` out, `c · d` and `c · mix(d)` given.
    fn take(&mut self, c: i64, dc: u128, mc: u64) {
        self.count = self.count.wrapping_sub(c);
        self.sum = self.sum.wrapping_sub(dc);
        self.mix = self.mix.wrapping_sub(mc);
    }
}

impl RunSketch {
    pub(crate) fn new(tables: u32, log: u32) -> RunSketch {
        assert!((1..=3).contains(&tables) && log <= 32);
        RunSketch {
            log,
            cells: vec![SignedCell::default(); (tables as usize) << log],
        }
    }

    fn tables(&self) -> usize {
        self.cells.len() >> self.log
    }

    #[inline(always)]
    fn index(&self, j: usize, d: u128) -> usize {
        (j << self.log) | (((d >> (32 * j)) as u64 & ((1u64 << self.log) - 1)) as usize)
    }

    /// Adds digests (`source`: one copy each; else takes one out), calling
    /// `each(d, mix(d))` too. No prefetch: the table stays in cache, and
    /// prefetching cost 3% of a light-drift diff on the 50M pair.
    #[inline]
    pub(crate) fn add_all_mixed(
        &mut self,
        digests: &[u128],
        source: bool,
        mut each: impl FnMut(u128, u64),
    ) {
        let tables = self.tables();
        for &d in digests {
            let m = mix(d);
            each(d, m);
            for j in 0..tables {
                let i = self.index(j, d);
                let cell = &mut self.cells[i];
                if source {
                    cell.count = cell.count.wrapping_add(1);
                    cell.sum = cell.sum.wrapping_add(d);
                    cell.mix = cell.mix.wrapping_add(m);
                } else {
                    cell.count = cell.count.wrapping_sub(1);
                    cell.sum = cell.sum.wrapping_sub(d);
                    cell.mix = cell.mix.wrapping_sub(m);
                }
            }
        }
    }

    /// Adds another worker's sketch of the same shape.
    pub(crate) fn merge(&mut self, o: &RunSketch) -> bool {
        if (self.log, self.cells.len()) != (o.log, o.cells.len()) {
            return false;
        }
        for (a, b) in self.cells.iter_mut().zip(&o.cells) {
            a.count = a.count.wrapping_add(b.count);
            a.sum = a.sum.wrapping_add(b.sum);
            a.mix = a.mix.wrapping_add(b.mix);
        }
        true
    }
}

impl super::peel::Peelable for RunSketch {
    fn cells(&self) -> usize {
        self.cells.len()
    }

    fn is_zero_at(&self, i: usize) -> bool {
        self.cells[i].is_zero()
    }

    fn pure_at(&self, i: usize) -> Option<(u128, i64)> {
        let SignedCell {
            count: c,
            mix: mixed,
            sum,
        } = self.cells[i];
        let v = c.trailing_zeros();
        if c == 0 || v > SEARCH_BITS {
            return None;
        }
        let low = low_bits(c, sum);
        if (c as i128 as u128).wrapping_mul(low) != sum {
            return None; // no digest has c · d = sum: several share the cell
        }
        let j = i >> self.log;
        (0..1u128 << v)
            .map(|top| {
                if v == 0 {
                    low
                } else {
                    low | (top << (128 - v))
                }
            })
            .find(|&d| mix(d).wrapping_mul(c as u64) == mixed && self.index(j, d) == i)
            .map(|d| (d, c))
    }

    fn take(&mut self, d: u128, c: i64, changed: &mut Vec<usize>) {
        let m = mix(d).wrapping_mul(c as u64);
        let dc = d.wrapping_mul(c as i128 as u128);
        for j in 0..self.tables() {
            let i = self.index(j, d);
            self.cells[i].take(c, dc, m);
            changed.push(i);
        }
    }
}

/// The differences of the two sides' [`FP_BUCKETS`] fingerprint buckets,
/// as a table a peeling decode takes digests out of (with the sub-tables of
/// an [`super::iblt::Iblt`] beside it, buckets that hold several differing
/// digests decode too).
pub(crate) struct BucketDifferences {
    cells: Vec<SignedCell>,
}

impl BucketDifferences {
    pub(crate) fn new(source: &[Fingerprint], target: &[Fingerprint]) -> BucketDifferences {
        BucketDifferences {
            cells: source
                .iter()
                .zip(target)
                .map(|(s, t)| SignedCell {
                    count: (s.count as i64).wrapping_sub(t.count as i64),
                    sum: s.sum.wrapping_sub(t.sum),
                    mix: s.mix.wrapping_sub(t.mix),
                })
                .collect(),
        }
    }

    /// Buckets that still differ (after a peel: those it could not empty).
    pub(crate) fn differing(&self) -> usize {
        self.cells.iter().filter(|c| !c.is_zero()).count()
    }
}

impl super::peel::Peelable for BucketDifferences {
    fn cells(&self) -> usize {
        self.cells.len()
    }

    fn is_zero_at(&self, i: usize) -> bool {
        self.cells[i].is_zero()
    }

    fn pure_at(&self, i: usize) -> Option<(u128, i64)> {
        let SignedCell { count, mix, sum } = self.cells[i];
        decode_bucket(count, sum, mix, i, FP_BITS)
    }

    fn take(&mut self, d: u128, c: i64, changed: &mut Vec<usize>) {
        let k = fp_bucket_of(d);
        let dc = (c as i128 as u128).wrapping_mul(d);
        self.cells[k].take(c, dc, mix(d).wrapping_mul(c as u64));
        changed.push(k);
    }
}

/// The decoded `differences` (digest, copies) add up to `(rows, sum, mix)`:
/// `Σ c`, `Σ c · d` (mod 2¹²⁸) and `Σ c · mix(d)` (mod 2⁶⁴), the difference
/// of two tables' row counts, row sums and row mixes.
pub(crate) fn adds_up(
    differences: impl IntoIterator<Item = (u128, i64)>,
    totals: (i64, u128, u64),
) -> bool {
    let (mut rows, mut sum, mut mixed) = (0i64, 0u128, 0u64);
    for (d, c) in differences {
        rows = rows.wrapping_add(c);
        sum = sum.wrapping_add(d.wrapping_mul(c as i128 as u128));
        mixed = mixed.wrapping_add(mix(d).wrapping_mul(c as u64));
    }
    (rows, sum, mixed) == totals
}

#[inline]
pub(crate) fn fp_bucket_of(digest: u128) -> usize {
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
    fn a_single_difference_decodes_from_the_fingerprints_whatever_its_count() {
        let (a, b, c) = (
            0x1234_5678_9abc_def0_u128 << 60 | 77,
            5u128 << 100 | 3,
            9u128,
        );
        // One more copy in the source, then three more, then one fewer.
        let one = |s: &[u128], t: &[u128], d: u128| {
            bucket_difference(&of(s), &of(t), fp_bucket_of(d), FP_BITS)
        };
        assert_eq!(one(&[a, b, c], &[b, c], a), Some((a, 1)));
        assert_eq!(one(&[a, a, a, b], &[b], a), Some((a, 3)));
        assert_eq!(one(&[b], &[b, c], c), Some((c, -1)));
        // Even counts decode too: the bucket gives the bits 2ᵛ hides.
        assert_eq!(one(&[a, a], &[], a), Some((a, 2)));
        assert_eq!(one(&[b], &[b; 21], b), Some((b, -20)));
        let many = vec![a; 1 << FP_BITS];
        assert_eq!(one(&many, &[], a), Some((a, 1 << FP_BITS)));
        // Beyond what the bucket's bits can supply, or two differences (a
        // changed row): not decodable.
        let more = vec![a; 1 << (FP_BITS + 1)];
        assert_eq!(one(&more, &[], a), None);
        assert_eq!(one(&[a], &[b], a), None);
        assert_eq!(one(&[a, b], &[c], a), None);
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
