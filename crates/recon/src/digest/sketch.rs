//! Per-unit digest filters for the targeted second pass.
//!
//! When the differing digests decode from the fingerprint buckets and the
//! sketch beside them (see [`super::multiset::bucket_difference`] and
//! [`super::RunSketch`]), they are known after the fingerprint pass, but
//! not where their rows are: a locator cannot be recovered from sums (a
//! row's locator differs per side, so matched rows never cancel). A
//! [`UnitFilter`] per scanned batch of a row group (a split-block Bloom
//! filter of its digests) tells which batches may hold them; the second pass
//! reads only those. A filter has no false negatives, so every batch holding
//! a decoded digest is read, and the second pass recounts the digests from
//! the rows themselves.

/// A split-block Bloom filter of one scanned batch's digests. A digest
/// picks one 64-byte block (by its high half, which also picks the
/// fingerprint bucket) and sets one bit in each of the block's eight words
/// (six bits of its low half per word): an insert is one OR of a 512-bit
/// mask into one cache line.
///
/// Why this shape: the filter is filled for every row of pass 1, identical
/// tables included, so its cost per row is paid whether or not a targeted
/// pass follows. The classic blocked filter (six probes anywhere in the
/// block) took ~40 instructions and six read-modify-writes per row, about
/// 4.5% of an identical-tables diff's samples (0.7% now); this mask is a
/// few vector instructions
/// ([`insert_all`] picks AVX-512, AVX2 or the
/// portable loop at run time, all setting the same bits). One bit per word
/// also gives fewer false positives at the same size: about 0.026% per
/// looked-up digest at 20 bits per row against 0.044% (0.42% and 0.43% at
/// 12 bits). The filters live in a [`FilterStore`]; this is one of them.
#[derive(Debug, Clone, Copy)]
pub(crate) struct UnitFilter<'a> {
    blocks: &'a [Block],
}

/// One cache line of a [`UnitFilter`].
#[derive(Debug, Clone, Copy, Default)]
#[repr(C, align(64))]
struct Block([u64; 8]);

/// The block of digest `d` among `blocks`: bits 64..128 mapped onto the
/// blocks by a multiply-shift instead of a division.
#[inline(always)]
fn block_of(d: u128, blocks: usize) -> usize {
    ((((d >> 64) as u64 as u128) * blocks as u128) >> 64) as usize
}

/// The bit digest `d` sets in word `i` of its block.
#[inline(always)]
fn bit_of(d: u128, i: usize) -> u64 {
    1 << ((d as u64 >> (6 * i)) & 63)
}

/// Blocks of a filter for `rows` digests at `bits_per_row` bits each.
fn blocks_for(rows: usize, bits_per_row: u32) -> usize {
    ((rows.max(1) as u64 * bits_per_row as u64).div_ceil(512)).max(1) as usize
}

impl UnitFilter<'_> {
    /// Whether `d` may be in the batch (never false for a digest inserted).
    pub(crate) fn may_contain(&self, d: u128) -> bool {
        let Block(w) = &self.blocks[block_of(d, self.blocks.len())];
        (0..8).all(|i| w[i] & bit_of(d, i) != 0)
    }
}

/// Where one batch's filter lies in a [`FilterStore`].
#[derive(Debug, Clone, Copy)]
pub(crate) struct FilterId {
    slab: u32,
    start: u32,
    blocks: u32,
}

/// The filters of many batches, back to back in a few large allocations
/// ("slabs", doubling from 64 KiB to 4 MiB).
///
/// Why: a diff keeps a filter per batch of 8192 rows (20 KiB at 20 bits per
/// row) for the whole first pass, some 12,000 of them on the 50M pair. Each
/// in its own allocation, they were scattered through the workers' malloc
/// heaps between the decoding buffers, which then landed on fresh pages
/// and made malloc split and merge free chunks (`_int_malloc`,
/// `unlink_chunk` and `malloc_consolidate` took 3% of an identical-tables
/// diff's samples, against 1% in a fingerprint). Slabs of a MiB and more
/// are mapped outside the heaps (see `engine::memory::tune_malloc`).
#[derive(Debug, Default)]
pub(crate) struct FilterStore {
    slabs: Vec<Vec<Block>>,
}

/// The first slab's blocks (64 KiB), and the largest slab's (4 MiB).
const FIRST_SLAB_BLOCKS: usize = 1 << 10;
const MAX_SLAB_BLOCKS: usize = 1 << 16;

impl FilterStore {
    /// Stores the filter of one batch's `digests` at `bits_per_row` bits
    /// per digest, filled with the widest kernel the CPU runs.
    pub(crate) fn add(&mut self, digests: &[u128], bits_per_row: u32) -> FilterId {
        let blocks = blocks_for(digests.len(), bits_per_row);
        if self
            .slabs
            .last()
            .is_none_or(|s| s.capacity() - s.len() < blocks)
        {
            let next = self.slabs.last().map_or(FIRST_SLAB_BLOCKS, |s| {
                (2 * s.capacity()).min(MAX_SLAB_BLOCKS)
            });
            self.slabs.push(Vec::with_capacity(next.max(blocks)));
        }
        let slab_index = self.slabs.len() - 1;
        let slab = &mut self.slabs[slab_index];
        let start = slab.len();
        slab.resize(start + blocks, Block::default());
        insert_all(&mut slab[start..], digests);
        FilterId {
            slab: slab_index as u32,
            start: start as u32,
            blocks: blocks as u32,
        }
    }

    /// The filter stored as `id`.
    pub(crate) fn get(&self, id: FilterId) -> UnitFilter<'_> {
        let start = id.start as usize;
        UnitFilter {
            blocks: &self.slabs[id.slab as usize][start..start + id.blocks as usize],
        }
    }

    /// Moves `other`'s slabs into this store; its ids then name the same
    /// filters here once [`FilterId::moved`] by the returned offset.
    pub(crate) fn append(&mut self, other: FilterStore) -> u32 {
        let offset = self.slabs.len() as u32;
        self.slabs.extend(other.slabs);
        offset
    }
}

impl FilterId {
    /// This id after its store was appended at slab `offset` of another.
    pub(crate) fn moved(self, offset: u32) -> FilterId {
        FilterId {
            slab: self.slab + offset,
            ..self
        }
    }
}

/// Inserts a batch of digests into `blocks`, with the widest kernel the
/// CPU runs.
fn insert_all(blocks: &mut [Block], digests: &[u128]) {
    #[cfg(target_arch = "x86_64")]
    {
        if std::arch::is_x86_feature_detected!("avx512f") {
            // SAFETY: the CPU supports AVX-512F (checked just above).
            return unsafe { kernels::insert_all_avx512(blocks, digests) };
        }
        if std::arch::is_x86_feature_detected!("avx2") {
            // SAFETY: the CPU supports AVX2 (checked just above).
            return unsafe { kernels::insert_all_avx2(blocks, digests) };
        }
    }
    insert_all_portable(blocks, digests)
}

/// The portable kernel of [`insert_all`], and the reference the
/// vector kernels are tested against.
fn insert_all_portable(blocks: &mut [Block], digests: &[u128]) {
    let n = blocks.len();
    for &d in digests {
        let Block(w) = &mut blocks[block_of(d, n)];
        for (i, word) in w.iter_mut().enumerate() {
            *word |= bit_of(d, i);
        }
    }
}

/// Vector kernels of [`insert_all`]: each builds a digest's
/// mask by shifting its low half right by 0, 6, .., 42 bits in every lane,
/// keeping six bits, and shifting a 1 left by them ([`bit_of`] per lane).
#[cfg(target_arch = "x86_64")]
mod kernels {
    use super::{block_of, Block};
    use std::arch::x86_64::*;

    /// # Safety
    /// The CPU must support AVX2.
    #[target_feature(enable = "avx2")]
    pub(super) unsafe fn insert_all_avx2(blocks: &mut [Block], digests: &[u128]) {
        let n = blocks.len();
        let shifts = [
            _mm256_setr_epi64x(0, 6, 12, 18),
            _mm256_setr_epi64x(24, 30, 36, 42),
        ];
        let six_bits = _mm256_set1_epi64x(63);
        let one = _mm256_set1_epi64x(1);
        for &d in digests {
            let low = _mm256_set1_epi64x(d as u64 as i64);
            let Block(w) = &mut blocks[block_of(d, n)];
            for (half, shift) in shifts.iter().enumerate() {
                let bits = _mm256_and_si256(_mm256_srlv_epi64(low, *shift), six_bits);
                let mask = _mm256_sllv_epi64(one, bits);
                let at = w[4 * half..].as_mut_ptr().cast::<__m256i>();
                // SAFETY: `at` points at four of the block's eight words
                // (in bounds, and 32-byte aligned since blocks are 64).
                unsafe { _mm256_store_si256(at, _mm256_or_si256(_mm256_load_si256(at), mask)) };
            }
        }
    }

    /// # Safety
    /// The CPU must support AVX-512F.
    #[target_feature(enable = "avx512f")]
    pub(super) unsafe fn insert_all_avx512(blocks: &mut [Block], digests: &[u128]) {
        let n = blocks.len();
        let shift = _mm512_setr_epi64(0, 6, 12, 18, 24, 30, 36, 42);
        let six_bits = _mm512_set1_epi64(63);
        let one = _mm512_set1_epi64(1);
        for &d in digests {
            let low = _mm512_set1_epi64(d as u64 as i64);
            let bits = _mm512_and_si512(_mm512_srlv_epi64(low, shift), six_bits);
            let mask = _mm512_sllv_epi64(one, bits);
            let at = blocks[block_of(d, n)].0.as_mut_ptr().cast::<__m512i>();
            // SAFETY: `at` points at a whole 64-byte, 64-aligned block.
            unsafe { _mm512_store_si512(at, _mm512_or_si512(_mm512_load_si512(at), mask)) };
        }
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
        let mut store = FilterStore::default();
        let inserted: Vec<u128> = (0..10_000).map(digest).collect();
        let id = store.add(&inserted, 12);
        let f = store.get(id);
        assert!(inserted.iter().all(|&d| f.may_contain(d)));
        let false_hits = (10_000..110_000)
            .filter(|&i| f.may_contain(digest(i)))
            .count();
        assert!(false_hits < 1_000, "{false_hits} false positives in 100000");
        // The rate the filter's documentation gives for 20 bits (0.026%).
        let id = store.add(&crate::digest::test_digests(1, 8192), 20);
        let f = store.get(id);
        let false_hits = crate::digest::test_digests(2, 1_000_000)
            .into_iter()
            .filter(|&d| f.may_contain(d))
            .count();
        assert!(
            (150..400).contains(&false_hits),
            "{false_hits} false positives in 1000000"
        );
    }

    /// Filters filling several slabs, and stores appended to one another,
    /// each still answer for their own batch: every digest of a batch hits
    /// its filter, and another batch's digests mostly miss it.
    #[test]
    fn filters_keep_their_batches_across_slabs_and_appends() {
        let batches: Vec<Vec<u128>> = (0..300)
            .map(|b| crate::digest::test_digests(b ^ 0xf11, 1 + (b as usize * 37) % 5000))
            .collect();
        let (mut first, mut second) = (FilterStore::default(), FilterStore::default());
        let mut ids: Vec<FilterId> = Vec::new();
        for (b, digests) in batches.iter().enumerate() {
            let store = if b < 150 { &mut first } else { &mut second };
            ids.push(store.add(digests, 20));
        }
        assert!(first.slabs.len() > 1 && second.slabs.len() > 1);
        let offset = first.append(second);
        for id in &mut ids[150..] {
            *id = id.moved(offset);
        }
        for (b, digests) in batches.iter().enumerate() {
            let f = first.get(ids[b]);
            assert!(digests.iter().all(|&d| f.may_contain(d)), "batch {b}");
            let other = &batches[(b + 1) % batches.len()];
            let hits = other.iter().filter(|&&d| f.may_contain(d)).count();
            assert!(hits <= 1 + other.len() / 100, "batch {b}: {hits} hits");
        }
    }

    /// Every kernel the CPU runs sets exactly the portable kernel's bits,
    /// for filters of every size class and batches of every length
    /// (including none and one).
    #[test]
    fn vector_kernels_set_the_portable_kernels_bits() {
        for (rows, bits) in [(0, 6), (1, 20), (7, 12), (8192, 20), (8192, 6), (5000, 16)] {
            let digests = crate::digest::test_digests(rows ^ 0x5eed, rows as usize);
            let blocks = blocks_for(rows as usize, bits);
            let mut portable = vec![Block::default(); blocks];
            insert_all_portable(&mut portable, &digests);
            let mut dispatched = vec![Block::default(); blocks];
            insert_all(&mut dispatched, &digests);
            assert_eq!(
                words(&dispatched),
                words(&portable),
                "dispatched, {rows} rows"
            );
            #[cfg(target_arch = "x86_64")]
            {
                type Kernel = unsafe fn(&mut [Block], &[u128]);
                let kernels: [(&str, bool, Kernel); 2] = [
                    (
                        "avx2",
                        std::arch::is_x86_feature_detected!("avx2"),
                        kernels::insert_all_avx2,
                    ),
                    (
                        "avx512f",
                        std::arch::is_x86_feature_detected!("avx512f"),
                        kernels::insert_all_avx512,
                    ),
                ];
                for (name, supported, kernel) in kernels {
                    if !supported {
                        eprintln!("skipped: this CPU has no {name}; its kernel is untested here");
                        continue;
                    }
                    let mut f = vec![Block::default(); blocks];
                    // SAFETY: the CPU supports the kernel's feature (checked).
                    unsafe { kernel(&mut f, &digests) };
                    assert_eq!(words(&f), words(&portable), "{name}, {rows} rows");
                }
            }
            let f = UnitFilter { blocks: &portable };
            assert!(digests.iter().all(|&d| f.may_contain(d)));
        }
    }

    fn words(blocks: &[Block]) -> Vec<u64> {
        blocks.iter().flat_map(|b| b.0).collect()
    }
}
