//! Value digests of fixed-width columns, eight values per instruction.
//!
//! A fixed-width value's digest is `P` of its padded encoding (the tag in
//! byte 0, a payload of up to 15 bytes after it, zeros to 16), and a
//! column's digests go into the row sums as `(V ⊕ A_c) · B_c`, lane by
//! lane. Per value that is
//! three 64×64→128 multiplies and two 64-bit ones, which took a fifth of a
//! fingerprint's samples on the 50M source. The AVX-512 kernel computes
//! eight at once: the 128-bit products from four 32×32→64 multiplies
//! (`vpmuludq`), the row-sum terms with `vpmullq` (AVX-512DQ). A
//! micro-benchmark of the row-sum loop: 1.8–1.9 ns per value against
//! 3.1–4.0 ns scalar. AVX2 has no 64-bit multiply at all and half the
//! lanes, so it has no kernel here: below AVX-512, the portable loop runs.
//!
//! Every kernel gives exactly the portable loop's bits (tested against it,
//! and through the column writers against the spec vectors).

use super::mix::p;
use super::sums::{Out, ValueSum};

/// The padded encodings of one batch's fixed-width values, as the 64-bit
/// halves `P` works on: row `r`'s is `(lo[r], hi[r])`, both zero for a NULL
/// (whose digest is `P(0)`, NULL's tag alone).
#[derive(Debug, Default)]
pub(super) struct Encodings {
    pub(super) lo: Vec<u64>,
    pub(super) hi: Vec<u64>,
}

impl Encodings {
    /// Clears and refills with `rows` rows of `tag`, each row's payload
    /// (`N ≤ 15` bytes, the canonical encoding's) from `value`, and NULL
    /// where `valid` says so.
    #[inline(always)]
    pub(super) fn fill<const N: usize>(
        &mut self,
        rows: usize,
        tag: u8,
        value: impl Fn(usize) -> [u8; N],
        valid: impl Fn(usize) -> bool,
    ) {
        // Sized first, then written through slices: pushing to two vectors
        // kept their lengths and capacities on the stack, and this loop
        // cost what the digests it feeds cost.
        self.lo.resize(rows, 0);
        self.hi.resize(rows, 0);
        let (lo, hi) = (&mut self.lo[..rows], &mut self.hi[..rows]);
        for (row, (lo, hi)) in lo.iter_mut().zip(hi.iter_mut()).enumerate() {
            // The padded encoding, as `columns::padded` builds it. N ≥ 16
            // never reaches here (see `available`'s callers); min keeps
            // those instantiations compiling.
            let n = N.min(15);
            let mut rec = [0u8; 16];
            rec[0] = tag;
            rec[1..1 + n].copy_from_slice(&value(row)[..n]);
            let x = u128::from_le_bytes(rec);
            // All ones for a value, zero for NULL: no branch on scattered NULLs.
            let keep = 0u64.wrapping_sub(valid(row) as u64);
            *lo = x as u64 & keep;
            *hi = (x >> 64) as u64 & keep;
        }
    }
}

/// Whether this CPU runs a kernel. Without one, the column writers keep
/// their own loop, which computes each digest where it reads the value
/// instead of filling [`Encodings`] first.
#[inline]
pub(super) fn available() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        std::arch::is_x86_feature_detected!("avx512f")
            && std::arch::is_x86_feature_detected!("avx512dq")
    }
    #[cfg(not(target_arch = "x86_64"))]
    false
}

/// Hands the digests of `enc`'s rows to `out`, with the widest kernel the
/// CPU runs.
pub(super) fn digests(enc: &Encodings, out: Out<'_>) {
    #[cfg(target_arch = "x86_64")]
    if available() {
        // SAFETY: the CPU supports AVX-512F and DQ (checked just above).
        return unsafe { avx512::digests(enc, out) };
    }
    digests_portable(enc, 0, out)
}

/// The portable loop, from row `from` on; the reference the kernels are
/// tested against, and their tail.
fn digests_portable(enc: &Encodings, from: usize, out: Out<'_>) {
    let (lo, hi) = (&enc.lo[from..], &enc.hi[from..]);
    out.skip_rows(from)
        .fill(lo.len(), |r| p((hi[r] as u128) << 64 | lo[r] as u128))
}

#[cfg(target_arch = "x86_64")]
mod avx512 {
    use super::super::mix::constants::{P_KEYS, P_MULS, P_XOR};
    use super::{digests_portable, Encodings, Out, ValueSum};
    use std::arch::x86_64::*;

    /// The low and high halves of the 128-bit products `a · m` per lane,
    /// `m` given as its 32-bit halves, from four 32×32→64 products.
    #[inline]
    #[target_feature(enable = "avx512f")]
    fn mul_wide(a: __m512i, m_lo: __m512i, m_hi: __m512i) -> (__m512i, __m512i) {
        let low32 = _mm512_set1_epi64(0xffff_ffff);
        let a_hi = _mm512_srli_epi64::<32>(a);
        let p00 = _mm512_mul_epu32(a, m_lo);
        let p01 = _mm512_mul_epu32(a, m_hi);
        let p10 = _mm512_mul_epu32(a_hi, m_lo);
        let p11 = _mm512_mul_epu32(a_hi, m_hi);
        // The middle column: at most 3 · (2^32 − 1), no overflow.
        let mid = _mm512_add_epi64(
            _mm512_add_epi64(_mm512_srli_epi64::<32>(p00), _mm512_and_si512(p01, low32)),
            _mm512_and_si512(p10, low32),
        );
        let lo = _mm512_or_si512(_mm512_and_si512(p00, low32), _mm512_slli_epi64::<32>(mid));
        let hi = _mm512_add_epi64(
            _mm512_add_epi64(p11, _mm512_srli_epi64::<32>(p01)),
            _mm512_add_epi64(_mm512_srli_epi64::<32>(p10), _mm512_srli_epi64::<32>(mid)),
        );
        (lo, hi)
    }

    /// One Feistel round's function: `folded_mul(x ⊕ key, mul)` per lane.
    #[inline]
    #[target_feature(enable = "avx512f")]
    fn round(x: __m512i, key: u64, mul: u64) -> __m512i {
        let x = _mm512_xor_si512(x, _mm512_set1_epi64(key as i64));
        let (lo, hi) = mul_wide(
            x,
            _mm512_set1_epi64((mul & 0xffff_ffff) as i64),
            _mm512_set1_epi64((mul >> 32) as i64),
        );
        _mm512_xor_si512(lo, hi)
    }

    /// Rows `i .. i + 8` of `enc`: their encodings' low halves, and their
    /// digests' low and high halves (`P` as in `mix::p`).
    ///
    /// # Safety
    /// `i + 8` must be at most `enc`'s rows.
    #[inline]
    #[target_feature(enable = "avx512f")]
    unsafe fn digest8(enc: &Encodings, i: usize) -> (__m512i, __m512i, __m512i) {
        // SAFETY: rows i .. i + 8 exist (the caller's promise).
        let (lo, hi) = unsafe {
            (
                _mm512_loadu_si512(enc.lo.as_ptr().add(i).cast()),
                _mm512_loadu_si512(enc.hi.as_ptr().add(i).cast()),
            )
        };
        let mut l = _mm512_xor_si512(lo, _mm512_set1_epi64(P_XOR as u64 as i64));
        let mut r = _mm512_xor_si512(hi, _mm512_set1_epi64((P_XOR >> 64) as u64 as i64));
        l = _mm512_xor_si512(l, round(r, P_KEYS[0], P_MULS[0]));
        r = _mm512_xor_si512(r, round(l, P_KEYS[1], P_MULS[1]));
        l = _mm512_xor_si512(l, round(r, P_KEYS[2], P_MULS[2]));
        (lo, l, r)
    }

    /// # Safety
    /// The CPU must support AVX-512F and AVX-512DQ.
    #[target_feature(enable = "avx512f,avx512dq")]
    pub(super) unsafe fn digests(enc: &Encodings, out: Out<'_>) {
        let rows = enc.lo.len();
        let whole = rows / 8 * 8;
        // Lanes (lo, hi) of eight u128s interleaved into two vectors of
        // four, in memory order.
        let first = _mm512_setr_epi64(0, 8, 1, 9, 2, 10, 3, 11);
        let second = _mm512_setr_epi64(4, 12, 5, 13, 6, 14, 7, 15);
        match out {
            Out::List(list) => {
                let start = list.len();
                list.resize(start + whole, 0);
                let dst = &mut list[start..];
                for i in (0..whole).step_by(8) {
                    // SAFETY: i + 8 <= whole <= rows.
                    let (_, l, r) = unsafe { digest8(enc, i) };
                    let at = dst[i..i + 8].as_mut_ptr().cast::<__m512i>();
                    // SAFETY: `at` spans dst[i..i + 8], 128 bytes.
                    unsafe {
                        _mm512_storeu_si512(at, _mm512_permutex2var_epi64(l, first, r));
                        _mm512_storeu_si512(at.add(1), _mm512_permutex2var_epi64(l, second, r));
                    }
                }
                digests_portable(enc, whole, Out::List(list));
            }
            Out::Sum { acc, a, b } => {
                let terms = Terms::new(a, b);
                for i in (0..whole).step_by(8) {
                    // SAFETY: i + 8 <= whole <= rows.
                    let (_, l, r) = unsafe { digest8(enc, i) };
                    terms.add_into(&mut acc[i..i + 8], l, r, first, second);
                }
                digests_portable(enc, whole, Out::Sum { acc, a, b });
            }
            Out::SumAndTotal { acc, a, b, total } => {
                let terms = Terms::new(a, b);
                // Per lane: the non-NULL count and the 128-bit sum as two
                // 64-bit words, the carry out of the low word added to the
                // high one.
                let zero = _mm512_setzero_si512();
                let (mut count, mut sum_lo, mut sum_hi) = (zero, zero, zero);
                let one = _mm512_set1_epi64(1);
                for i in (0..whole).step_by(8) {
                    // SAFETY: i + 8 <= whole <= rows.
                    let (enc_lo, l, r) = unsafe { digest8(enc, i) };
                    terms.add_into(&mut acc[i..i + 8], l, r, first, second);
                    // A NULL row is the only one whose encoding is zero.
                    let keep = _mm512_test_epi64_mask(enc_lo, enc_lo);
                    count = _mm512_mask_add_epi64(count, keep, count, one);
                    let new_lo = _mm512_mask_add_epi64(sum_lo, keep, sum_lo, l);
                    let carry = _mm512_cmplt_epu64_mask(new_lo, sum_lo);
                    sum_hi = _mm512_mask_add_epi64(sum_hi, keep, sum_hi, r);
                    sum_hi = _mm512_mask_add_epi64(sum_hi, carry, sum_hi, one);
                    sum_lo = new_lo;
                }
                let (mut c, mut lo, mut hi) = ([0u64; 8], [0u64; 8], [0u64; 8]);
                // SAFETY: each array is 64 bytes.
                unsafe {
                    _mm512_storeu_si512(c.as_mut_ptr().cast(), count);
                    _mm512_storeu_si512(lo.as_mut_ptr().cast(), sum_lo);
                    _mm512_storeu_si512(hi.as_mut_ptr().cast(), sum_hi);
                }
                let mut t: ValueSum = *total;
                for k in 0..8 {
                    t.non_null += c[k];
                    t.sum = t.sum.wrapping_add((hi[k] as u128) << 64 | lo[k] as u128);
                }
                *total = t;
                digests_portable(enc, whole, Out::SumAndTotal { acc, a, b, total });
            }
        }
    }

    /// A column's constants, broadcast, for its row-sum terms.
    struct Terms {
        a_lo: __m512i,
        a_hi: __m512i,
        b_lo: __m512i,
        b_hi: __m512i,
    }

    impl Terms {
        #[inline]
        #[target_feature(enable = "avx512f")]
        fn new(a: u128, b: u128) -> Terms {
            Terms {
                a_lo: _mm512_set1_epi64(a as u64 as i64),
                a_hi: _mm512_set1_epi64((a >> 64) as u64 as i64),
                b_lo: _mm512_set1_epi64(b as u64 as i64),
                b_hi: _mm512_set1_epi64((b >> 64) as u64 as i64),
            }
        }

        /// `acc[k] = lane_add(acc[k], term(v_k, a, b))` for the eight
        /// digests whose halves are `l` and `r`.
        #[inline]
        #[target_feature(enable = "avx512f,avx512dq")]
        fn add_into(
            &self,
            acc: &mut [u128],
            l: __m512i,
            r: __m512i,
            first: __m512i,
            second: __m512i,
        ) {
            let t_lo = _mm512_mullo_epi64(_mm512_xor_si512(l, self.a_lo), self.b_lo);
            let t_hi = _mm512_mullo_epi64(_mm512_xor_si512(r, self.a_hi), self.b_hi);
            let at = acc[..8].as_mut_ptr().cast::<__m512i>();
            // SAFETY: `at` spans acc[..8], 128 bytes; u128 lanes are two
            // little-endian u64 words, low first, which `lane_add` adds
            // word by word.
            unsafe {
                let t0 = _mm512_permutex2var_epi64(t_lo, first, t_hi);
                let t1 = _mm512_permutex2var_epi64(t_lo, second, t_hi);
                _mm512_storeu_si512(at, _mm512_add_epi64(_mm512_loadu_si512(at), t0));
                _mm512_storeu_si512(
                    at.add(1),
                    _mm512_add_epi64(_mm512_loadu_si512(at.add(1)), t1),
                );
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn run(
        enc: &Encodings,
        kernel: fn(&Encodings, Out<'_>),
    ) -> (Vec<u128>, Vec<u128>, Vec<u128>, ValueSum) {
        let (a, b) = super::super::mix::column_constants(3);
        let mut list = vec![7u128];
        kernel(enc, Out::List(&mut list));
        let start: Vec<u128> = (0..enc.lo.len() as u128).map(|i| i * 0x9e37_79b9).collect();
        let mut sum = start.clone();
        kernel(
            enc,
            Out::Sum {
                acc: &mut sum,
                a,
                b,
            },
        );
        let mut both = start;
        let mut total = ValueSum {
            non_null: 5,
            sum: u128::MAX - 3,
        };
        kernel(
            enc,
            Out::SumAndTotal {
                acc: &mut both,
                a,
                b,
                total: &mut total,
            },
        );
        (list, sum, both, total)
    }

    fn portable(enc: &Encodings, out: Out<'_>) {
        digests_portable(enc, 0, out)
    }

    proptest! {
        /// The dispatched kernel (AVX-512 where the CPU has it) gives the
        /// portable loop's digests, row sums and totals, for batches of
        /// every length, payload width and NULL pattern.
        #[test]
        fn kernels_give_the_portable_bits(
            rows in prop::collection::vec((any::<u128>(), any::<bool>()), 0..70),
            tag in 1u8..=255,
            width in prop::sample::select(vec![1usize, 4, 8, 10, 12, 15]),
        ) {
            let mut enc = Encodings::default();
            let bytes = |r: usize| rows[r].0.to_le_bytes();
            let valid = |r: usize| rows[r].1;
            match width {
                1 => enc.fill::<1>(rows.len(), tag, |r| [bytes(r)[0]], valid),
                4 => enc.fill::<4>(rows.len(), tag, |r| bytes(r)[..4].try_into().unwrap(), valid),
                8 => enc.fill::<8>(rows.len(), tag, |r| bytes(r)[..8].try_into().unwrap(), valid),
                10 => enc.fill::<10>(rows.len(), tag, |r| bytes(r)[..10].try_into().unwrap(), valid),
                12 => enc.fill::<12>(rows.len(), tag, |r| bytes(r)[..12].try_into().unwrap(), valid),
                _ => enc.fill::<15>(rows.len(), tag, |r| bytes(r)[..15].try_into().unwrap(), valid),
            }
            prop_assert_eq!(run(&enc, digests), run(&enc, portable));
        }
    }

    /// Says which kernel the property test above exercised, so that a CI
    /// machine without AVX-512 shows it.
    #[test]
    fn reports_the_kernel_tested() {
        #[cfg(target_arch = "x86_64")]
        if std::arch::is_x86_feature_detected!("avx512f")
            && std::arch::is_x86_feature_detected!("avx512dq")
        {
            return eprintln!("AVX-512 kernel tested against the portable loop");
        }
        eprintln!("skipped: this CPU has no AVX-512F/DQ; only the portable loop ran");
    }

    /// The encodings are the 16 bytes the spec pads a short value to: the
    /// tag, the payload, zeros; and zero for NULL.
    #[test]
    fn encodings_are_the_padded_bytes() {
        let mut enc = Encodings::default();
        let values: [[u8; 12]; 3] = [[1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12], [0xff; 12], [0; 12]];
        enc.fill::<12>(3, 0x11, |r| values[r], |r| r != 2);
        for (r, v) in values.iter().enumerate().take(2) {
            let mut bytes = [0u8; 16];
            bytes[0] = 0x11;
            bytes[1..13].copy_from_slice(v);
            assert_eq!(
                (enc.hi[r] as u128) << 64 | enc.lo[r] as u128,
                u128::from_le_bytes(bytes)
            );
        }
        assert_eq!((enc.lo[2], enc.hi[2]), (0, 0));
    }
}
