//! The digest construction: the permutations `P` (value digests of short
//! encodings) and `Q` (the final row mix), the column constants `A_c` and
//! `B_c`, and the row sum that combines a row's value digests.

use xxhash_rust::xxh3::xxh3_128;

use super::canonical::tag;

/// Constants of the digest construction (docs/encoding.md lists them).
pub(crate) mod constants {
    /// `P`: the value permutation, a three-round Feistel network on the
    /// 64-bit halves whose round function is a folded 64×64→128 multiply.
    pub(crate) const P_XOR: u128 = 0x243f_6a88_85a3_08d3_1319_8a2e_0370_7344;
    pub(crate) const P_KEYS: [u64; 3] = [
        0x9e37_79b9_7f4a_7c15,
        0xf39c_c060_5ced_c835,
        0xbf58_476d_1ce4_e5b9,
    ];
    pub(crate) const P_MULS: [u64; 3] = [
        0x94d0_49bb_1331_11eb,
        0xd6e8_feb8_6659_fd93,
        0xa076_1d64_78bd_642f,
    ];
    /// `Q`: the final row mix.
    pub(crate) const Q_XOR: u128 = 0xa409_3822_299f_31d0_082e_fa98_ec4e_6c89;
    pub(crate) const Q_MUL1: u128 = 0xff51_afd7_ed55_8ccd_c4ce_b9fe_1a85_ec53;
    pub(crate) const Q_MUL2: u128 = 0xd6e8_feb8_6659_fd93_a076_1d64_78bd_642f;
    /// Seeds of the column constants `A_c`, `B_c` (splitmix64 streams; both
    /// 64-bit halves of `B_c` are odd).
    pub(crate) const A_SEED: u64 = 0x6a09_e667_f3bc_c908;
    pub(crate) const B_SEED: u64 = 0xbb67_ae85_84ca_a73b;
}

/// `Q`'s 128-bit bijection: xor a constant, then two rounds of "fold the high
/// half into the low half, multiply by an odd constant", then a last fold.
/// Every step is invertible, so distinct inputs give distinct outputs.
#[inline(always)]
fn permute(mut x: u128, xor: u128, m1: u128, m2: u128) -> u128 {
    x ^= xor;
    x ^= x >> 64;
    x = x.wrapping_mul(m1);
    x ^= x >> 64;
    x = x.wrapping_mul(m2);
    x ^ (x >> 64)
}

/// The 128-bit product of two 64-bit words, folded to 64 bits (high ⊕ low).
#[inline(always)]
fn folded_mul(a: u64, b: u64) -> u64 {
    let r = (a as u128) * (b as u128);
    (r as u64) ^ ((r >> 64) as u64)
}

/// `P`: the digest of a value whose encoding fits 16 bytes. After xoring a
/// constant, three Feistel rounds on the halves `(l, r)`: `l ^= f1(r)`,
/// `r ^= f2(l)`, `l ^= f3(r)` with `f_i(x) = folded_mul(x ⊕ KEY_i, MUL_i)`.
/// Each round is undone by repeating it, so `P` is a bijection: distinct
/// short values never share a digest. One 64-bit multiply per round.
#[inline(always)]
pub(super) fn p(x: u128) -> u128 {
    use constants::*;
    let x = x ^ P_XOR;
    let (mut l, mut r) = (x as u64, (x >> 64) as u64);
    l ^= folded_mul(r ^ P_KEYS[0], P_MULS[0]);
    r ^= folded_mul(l ^ P_KEYS[1], P_MULS[1]);
    l ^= folded_mul(r ^ P_KEYS[2], P_MULS[2]);
    ((r as u128) << 64) | l as u128
}

/// `Q`: the final mix of a row's combined column digests.
#[inline(always)]
pub(crate) fn q(x: u128) -> u128 {
    use constants::*;
    permute(x, Q_XOR, Q_MUL1, Q_MUL2)
}

/// The value digest `V(e)` of one value's canonical encoding.
#[inline]
pub fn value_digest(encoded: &[u8]) -> u128 {
    if encoded.len() <= 16 {
        let mut b = [0u8; 16];
        b[..encoded.len()].copy_from_slice(encoded);
        p(u128::from_le_bytes(b))
    } else {
        xxh3_128(encoded)
    }
}

fn splitmix64(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// The constants `(A_c, B_c)` of column position `c` (B_c is odd).
pub(crate) fn column_constants(c: usize) -> (u128, u128) {
    let word = |seed: u64, k: u64| {
        let mut s = seed ^ k.wrapping_mul(0xd134_2543_de82_ef95);
        let hi = splitmix64(&mut s) as u128;
        let lo = splitmix64(&mut s) as u128;
        (hi << 64) | lo
    };
    (
        word(constants::A_SEED, c as u64),
        word(constants::B_SEED, c as u64) | 1 | (1 << 64),
    )
}

/// One column's term of the row sum: `(V ⊕ A_c) · B_c`, computed in two
/// independent 64-bit lanes (low and high halves, each multiplied mod 2^64
/// by its odd half of `B_c`). Each lane is a bijection, so the term is one
/// too, and two 64-bit multiplies cost less than one 128-bit multiply.
#[inline(always)]
pub(super) fn term(v: u128, a: u128, b: u128) -> u128 {
    let x = v ^ a;
    let lo = (x as u64).wrapping_mul(b as u64);
    let hi = ((x >> 64) as u64).wrapping_mul((b >> 64) as u64);
    ((hi as u128) << 64) | lo as u128
}

/// Adds two row sums lane by lane (each 64-bit half mod 2^64).
#[inline(always)]
pub(super) fn lane_add(acc: u128, t: u128) -> u128 {
    let lo = (acc as u64).wrapping_add(t as u64);
    let hi = ((acc >> 64) as u64).wrapping_add((t >> 64) as u64);
    ((hi as u128) << 64) | lo as u128
}

/// The row digest of already computed value digests, one per compared column.
pub(crate) fn combine(values: &[u128]) -> u128 {
    let acc = values.iter().enumerate().fold(0u128, |acc, (c, &v)| {
        let (a, b) = column_constants(c);
        lane_add(acc, term(v, a, b))
    });
    q(acc)
}

/// The value digest of NULL (of any type): `V(0x00)`. No other value's
/// digest equals it, since `P` is a bijection and every other encoding
/// starts with a non-zero tag.
#[inline]
pub(crate) fn null_digest() -> u128 {
    p(tag::NULL as u128)
}

/// Combines value digests into a row digest with precomputed column
/// constants: [`combine`] for many rows. Keyed mode digests its key columns
/// with one (positions `0..k` in key order), so the key digest of a row is
/// the row digest of its key columns alone.
#[derive(Debug, Clone)]
pub(crate) struct Combiner {
    constants: Vec<(u128, u128)>,
}

impl Combiner {
    /// A combiner for `columns` value digests per row.
    pub(crate) fn new(columns: usize) -> Combiner {
        Combiner {
            constants: (0..columns).map(column_constants).collect(),
        }
    }

    /// `combine` of the values, one per column, in column order.
    #[inline]
    pub(crate) fn digest(&self, values: impl IntoIterator<Item = u128>) -> u128 {
        let acc = values
            .into_iter()
            .zip(&self.constants)
            .fold(0u128, |acc, (v, &(a, b))| lane_add(acc, term(v, a, b)));
        q(acc)
    }
}
