//! Invertible Bloom lookup tables (IBLTs) of row digests with signed copy
//! counts: the structure that names which digests differ between two
//! multisets, and by how many copies, from sums alone.
//!
//! Specified in docs/sketch.md, with test vectors from the independent
//! implementation in `scripts/sketch_vectors.py`. In short: each digest
//! `d` adds to one [`Cell`] in each of `k` sub-tables, picked by disjoint
//! 32-bit fields of `d`; a cell holds a signed count, the sum of the
//! digests modulo the prime `p = 2¹²⁸ − 159`, and the wrapping sum of
//! [`mix`]`(d)`. Subtracting one side's table from the other's leaves only
//! the differing digests, each `c` times (`c` = source − target copies). A
//! cell is *pure* when it holds one digest: `d = sum · c⁻¹ mod p`, `c ·
//! mix(d)` equals its check sum, and `d` indexes the cell. Peeling pure
//! cells one by one decodes the whole difference when there are about 1.3
//! cells per differing digest or more.
//!
//! Sums modulo a prime, never XOR, so that `{x, x}` does not cancel and any
//! copy count (±1, 20, −16384) decodes: `c` is invertible modulo `p`.

use super::multiset::mix;
pub(crate) use super::peel::{peel, Peelable, Peeled};
use crate::error::{ReconError, Result};

/// The field's prime, `2¹²⁸ − 159`.
pub(crate) const P: u128 = u128::MAX - 158;

/// Arithmetic modulo [`P`].
pub(crate) mod field {
    use super::P;

    /// `2¹²⁸ mod p`.
    const FOLD: u128 = 159;

    /// `x mod p` for any 128-bit `x`.
    #[inline(always)]
    pub(crate) fn reduce(x: u128) -> u128 {
        if x >= P {
            x - P
        } else {
            x
        }
    }

    /// `a + b mod p`, for `a, b < p`.
    #[inline(always)]
    pub(crate) fn add(a: u128, b: u128) -> u128 {
        let (s, carry) = a.overflowing_add(b);
        // With a carry, a + b = s + 2¹²⁸ ≡ s + 159, and s + 159 < p. No
        // branch on the carry: sums of digests carry half the time at
        // random, and a mispredicted branch per cell cost ~15% of a diff's
        // first pass (`reduce`'s branch is almost never taken).
        reduce(s + FOLD * carry as u128)
    }

    /// `−a mod p`, for `a < p`.
    #[inline(always)]
    pub(crate) fn neg(a: u128) -> u128 {
        if a == 0 {
            0
        } else {
            P - a
        }
    }

    /// `a − b mod p`, for `a, b < p`.
    #[inline(always)]
    pub(crate) fn sub(a: u128, b: u128) -> u128 {
        add(a, neg(b))
    }

    /// A signed count as a field element.
    pub(crate) fn from_i64(c: i64) -> u128 {
        let m = c.unsigned_abs() as u128;
        if c < 0 {
            neg(m)
        } else {
            m
        }
    }

    /// The 256-bit product `a · b` as (high, low) halves.
    fn mul_wide(a: u128, b: u128) -> (u128, u128) {
        let (a0, a1) = (a as u64 as u128, a >> 64);
        let (b0, b1) = (b as u64 as u128, b >> 64);
        let (p00, p01, p10, p11) = (a0 * b0, a0 * b1, a1 * b0, a1 * b1);
        let mid = (p00 >> 64) + (p01 as u64 as u128) + (p10 as u64 as u128);
        let low = (p00 as u64 as u128) | (mid << 64);
        let high = p11 + (p01 >> 64) + (p10 >> 64) + (mid >> 64);
        (high, low)
    }

    /// `a · b mod p`, for any 128-bit `a`, `b`.
    pub(crate) fn mul(a: u128, b: u128) -> u128 {
        let (high, low) = mul_wide(a, b);
        // high · 2¹²⁸ + low ≡ high · 159 + low, and high · 159 < 2¹³⁶.
        let (h2, l2) = mul_wide(high, FOLD);
        add(add(reduce(low), reduce(l2)), h2 * FOLD)
    }

    /// `c⁻¹ mod p` for a nonzero count `c` (every one is invertible: p is
    /// prime and |c| < p).
    ///
    /// Not Fermat's `c^(p−2)` (256 multiplications): for `m = |c| < 2⁶⁴`,
    /// `c⁻¹ = (1 + k·p) / m` for the one `k < m` with `k·p ≡ −1 (mod m)`,
    /// which a 64-bit extended Euclid finds; the division is exact.
    pub(crate) fn inv(c: i64) -> u128 {
        let m = c.unsigned_abs();
        assert!(m != 0, "zero has no inverse");
        let x = if m == 1 {
            1
        } else {
            let r = (P % m as u128) as u64;
            let k = (m - inv_mod(r, m)) as u128;
            // 1 + k·p = k·2¹²⁸ − (159k − 1) = (k − 1)·2¹²⁸ + (2¹²⁸ − (159k − 1)).
            let high = k - 1;
            let low = 0u128.wrapping_sub(159 * k - 1);
            let m = m as u128;
            // Long division by m in two 64-bit steps (high < m).
            let n1 = (high << 64) | (low >> 64);
            let n2 = ((n1 % m) << 64) | (low as u64 as u128);
            ((n1 / m) << 64) | (n2 / m)
        };
        if c < 0 {
            neg(x)
        } else {
            x
        }
    }

    /// `a⁻¹ mod m` for coprime `a`, `m` (extended Euclid).
    fn inv_mod(a: u64, m: u64) -> u64 {
        let (mut r0, mut r1) = (a as i128, m as i128);
        let (mut s0, mut s1) = (1i128, 0i128);
        while r1 != 0 {
            let q = r0 / r1;
            (r0, r1) = (r1, r0 - q * r1);
            (s0, s1) = (s1, s0 - q * s1);
        }
        s0.rem_euclid(m as i128) as u64
    }
}

/// One cell: a signed copy count, the digests' sum modulo [`P`] and the
/// wrapping sum of their [`mix`]. 32 bytes, aligned so a cell never
/// straddles two cache lines.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[repr(C, align(32))]
pub struct Cell {
    pub count: i64,
    pub check: u64,
    pub sum: u128,
}

impl Cell {
    /// Adds `c` copies of `d` (negative: takes them out).
    #[inline]
    pub fn add(&mut self, d: u128, c: i64) {
        self.count = self.count.wrapping_add(c);
        let term = match c {
            1 => field::reduce(d),
            -1 => field::neg(field::reduce(d)),
            _ => field::mul(field::reduce(d), field::from_i64(c)),
        };
        self.sum = field::add(self.sum, term);
        self.check = self.check.wrapping_add(mix(d).wrapping_mul(c as u64));
    }

    /// Adds one copy of `d`, whose [`mix`] is `m` (the fast path of a scan).
    #[inline(always)]
    pub fn insert(&mut self, d: u128, m: u64) {
        self.count = self.count.wrapping_add(1);
        self.sum = field::add(self.sum, field::reduce(d));
        self.check = self.check.wrapping_add(m);
    }

    pub fn merge(&mut self, o: &Cell) {
        self.count = self.count.wrapping_add(o.count);
        self.sum = field::add(self.sum, o.sum);
        self.check = self.check.wrapping_add(o.check);
    }

    pub fn subtract(&mut self, o: &Cell) {
        self.count = self.count.wrapping_sub(o.count);
        self.sum = field::sub(self.sum, o.sum);
        self.check = self.check.wrapping_sub(o.check);
    }

    pub fn is_zero(&self) -> bool {
        *self == Cell::default()
    }

    /// The digest and count of a cell that holds exactly one digest (the
    /// caller also checks that the digest indexes this cell). A digest of
    /// `p` or more (one in 2¹²⁰) decodes to itself minus `p`, which the
    /// mix refuses: the decode then fails, it never names a wrong digest.
    pub fn pure(&self) -> Option<(u128, i64)> {
        if self.count == 0 {
            return None;
        }
        let d = field::mul(self.sum, field::inv(self.count));
        (mix(d).wrapping_mul(self.count as u64) == self.check).then_some((d, self.count))
    }
}

/// An IBLT of `tables` sub-tables of `2^log_cells` cells each; sub-table
/// `j` indexes digest `d` by bits `32j .. 32j + log_cells` of `d`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Iblt {
    tables: u32,
    log_cells: u32,
    cells: Vec<Cell>,
}

/// Most sub-tables: their 32-bit fields stay within the digest's low 96
/// bits, clear of the top bits that pick a fingerprint bucket.
pub(crate) const MAX_TABLES: u32 = 3;
/// Most cells per sub-table, `2³²` (a field is 32 bits).
pub(crate) const MAX_LOG_CELLS: u32 = 32;

impl Iblt {
    pub fn new(tables: u32, log_cells: u32) -> Iblt {
        assert!((1..=MAX_TABLES).contains(&tables) && log_cells <= MAX_LOG_CELLS);
        Iblt {
            tables,
            log_cells,
            cells: vec![Cell::default(); (tables as usize) << log_cells],
        }
    }

    /// Three sub-tables with at least 1.5 cells per difference in all, for
    /// up to `differences` differing distinct digests. Peeling needs about
    /// 1.23 cells per digest as the table grows, but more when it is small
    /// (a few unlucky collisions stall it), hence 16 more cells per table.
    pub fn sized_for(differences: u64) -> Iblt {
        let per_table = (differences.div_ceil(2) + 16).next_power_of_two();
        Iblt::new(3, per_table.trailing_zeros().min(MAX_LOG_CELLS))
    }

    pub fn tables(&self) -> u32 {
        self.tables
    }

    pub fn log_cells(&self) -> u32 {
        self.log_cells
    }

    pub fn as_cells(&self) -> &[Cell] {
        &self.cells
    }

    /// The cell of digest `d` in sub-table `j`.
    #[inline(always)]
    pub fn index(&self, j: u32, d: u128) -> usize {
        let mask = (1u64 << self.log_cells) - 1;
        ((j as usize) << self.log_cells) | (((d >> (32 * j)) as u64 & mask) as usize)
    }

    /// Adds `c` copies of `d`.
    pub fn add(&mut self, d: u128, c: i64) {
        for j in 0..self.tables {
            let i = self.index(j, d);
            self.cells[i].add(d, c);
        }
    }

    /// Adds one copy of each digest, whose [`mix`] is `mixes[i]` (a scan
    /// computes each mix once, for its fingerprint too), asking for each
    /// digest's cells a few digests ahead: a sketch larger than the cache
    /// costs a miss per cell otherwise.
    pub fn add_all(&mut self, digests: &[u128], mixes: &[u64]) {
        const AHEAD: usize = 8;
        debug_assert_eq!(digests.len(), mixes.len());
        for (n, (&d, &m)) in digests.iter().zip(mixes).enumerate() {
            if let Some(&next) = digests.get(n + AHEAD) {
                for j in 0..self.tables {
                    super::sketch::prefetch(&self.cells[self.index(j, next)]);
                }
            }
            for j in 0..self.tables {
                let i = self.index(j, d);
                self.cells[i].insert(d, m);
            }
        }
    }

    fn same_shape(&self, o: &Iblt) -> Result<()> {
        if (self.tables, self.log_cells) != (o.tables, o.log_cells) {
            return Err(ReconError::Internal(format!(
                "sketches of different shapes: {}×2^{} and {}×2^{} cells",
                self.tables, self.log_cells, o.tables, o.log_cells
            )));
        }
        Ok(())
    }

    /// Adds another sketch of the same shape (partition sketches add up).
    pub fn merge(&mut self, o: &Iblt) -> Result<()> {
        self.same_shape(o)?;
        for (a, b) in self.cells.iter_mut().zip(&o.cells) {
            a.merge(b);
        }
        Ok(())
    }

    /// Subtracts another sketch of the same shape: what is left holds the
    /// digests whose counts differ, `self − o` copies each.
    pub fn subtract(&mut self, o: &Iblt) -> Result<()> {
        self.same_shape(o)?;
        for (a, b) in self.cells.iter_mut().zip(&o.cells) {
            a.subtract(b);
        }
        Ok(())
    }

    /// The same sketch with half the cells per sub-table: cell `i` and
    /// `i + m/2` add up, as if the digests had been indexed by one bit fewer.
    pub fn fold(&self) -> Option<Iblt> {
        let log = self.log_cells.checked_sub(1)?;
        let half = 1usize << log;
        let mut out = Iblt::new(self.tables, log);
        for j in 0..self.tables as usize {
            let from = &self.cells[(j << self.log_cells)..((j + 1) << self.log_cells)];
            let into = &mut out.cells[(j << log)..((j + 1) << log)];
            for (i, c) in into.iter_mut().enumerate() {
                *c = from[i];
                c.merge(&from[i + half]);
            }
        }
        Some(out)
    }

    /// Decodes what the sketch holds (after [`subtract`](Self::subtract):
    /// the difference).
    pub fn decode(&self) -> Peeled {
        let mut work = self.clone();
        peel(&mut [&mut work])
    }

    /// An estimate of how many distinct digests the sketch holds, from the
    /// share of nonzero cells of a sub-table (n items leave a share of
    /// `e^(−n/m)` of m cells empty): what to size a sketch for when it did
    /// not decode. `None` when every cell is used (the estimate is then
    /// only "more than a few times the cells").
    pub fn estimate(&self) -> Option<u64> {
        let m = 1usize << self.log_cells;
        let empty = self.cells[..m].iter().filter(|c| c.is_zero()).count();
        (empty > 0).then(|| (-(m as f64) * (empty as f64 / m as f64).ln()).round() as u64)
    }

    /// The cells as bytes: per cell, count (i64), check (u64) and sum (u128),
    /// little-endian, sub-table by sub-table.
    pub fn cell_bytes(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(self.cells.len() * 32);
        for c in &self.cells {
            out.extend_from_slice(&c.count.to_le_bytes());
            out.extend_from_slice(&c.check.to_le_bytes());
            out.extend_from_slice(&c.sum.to_le_bytes());
        }
        out
    }

    /// Reads what [`cell_bytes`](Self::cell_bytes) wrote; `None` when the
    /// length does not match the shape or a sum is not below `p`.
    pub fn from_cell_bytes(tables: u32, log_cells: u32, bytes: &[u8]) -> Option<Iblt> {
        if !(1..=MAX_TABLES).contains(&tables)
            || log_cells > MAX_LOG_CELLS
            || bytes.len() as u128 != 32 * ((tables as u128) << log_cells)
        {
            return None;
        }
        let cells = bytes
            .chunks_exact(32)
            .map(|b| {
                let cell = Cell {
                    count: i64::from_le_bytes(array(&b[0..8])),
                    check: u64::from_le_bytes(array(&b[8..16])),
                    sum: u128::from_le_bytes(array(&b[16..32])),
                };
                (cell.sum < P).then_some(cell)
            })
            .collect::<Option<Vec<_>>>()?;
        Some(Iblt {
            tables,
            log_cells,
            cells,
        })
    }
}

/// The first `N` bytes of `b` (which holds at least that many) as an array.
fn array<const N: usize>(b: &[u8]) -> [u8; N] {
    let mut a = [0u8; N];
    a.copy_from_slice(&b[..N]);
    a
}

impl Peelable for Iblt {
    fn cells(&self) -> usize {
        self.cells.len()
    }

    fn is_zero_at(&self, i: usize) -> bool {
        self.cells[i].is_zero()
    }

    fn pure_at(&self, i: usize) -> Option<(u128, i64)> {
        let (d, c) = self.cells[i].pure()?;
        let j = (i >> self.log_cells) as u32;
        (self.index(j, d) == i).then_some((d, c))
    }

    fn take(&mut self, d: u128, c: i64, changed: &mut Vec<usize>) {
        for j in 0..self.tables {
            let i = self.index(j, d);
            self.cells[i].add(d, c.wrapping_neg());
            changed.push(i);
        }
    }
}

#[cfg(test)]
mod tests;
