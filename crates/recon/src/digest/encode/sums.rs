//! Where a column's value digests go ([`Out`]), and the per-column total a
//! fingerprint keeps ([`ValueSum`]): shared by the column writers and the
//! fixed-width kernels, which fill them.

use super::mix::{lane_add, null_digest, term};

/// Where a column's value digests go: appended to a list (when the caller
/// wants per-column digests), or straight into the row sums as the column's
/// term `T_c(V)`, without a buffer written and read back per column, and
/// with `total`, also added up per column in the same loop.
pub(super) enum Out<'a> {
    List(&'a mut Vec<u128>),
    Sum {
        acc: &'a mut [u128],
        a: u128,
        b: u128,
    },
    SumAndTotal {
        acc: &'a mut [u128],
        a: u128,
        b: u128,
        total: &'a mut ValueSum,
    },
}

/// The count and wrapping sum of a column's non-NULL value digests: what a
/// fingerprint keeps per column.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct ValueSum {
    pub(crate) non_null: u64,
    pub(crate) sum: u128,
}

impl ValueSum {
    /// Adds `values`; NULL's digest (`null`) is counted out.
    #[inline]
    pub(crate) fn add_values(&mut self, values: &[u128], null: u128) {
        for &v in values {
            self.add(v, null);
        }
    }

    #[inline(always)]
    fn add(&mut self, v: u128, null: u128) {
        let keep = v != null;
        self.non_null += keep as u64;
        self.sum = self.sum.wrapping_add(if keep { v } else { 0 });
    }
}

impl<'a> Out<'a> {
    /// Hands `digest(row)` for every row `0..rows` on: one monomorphic loop
    /// per writer and destination.
    #[inline(always)]
    pub(super) fn fill(self, rows: usize, mut digest: impl FnMut(usize) -> u128) {
        match self {
            Out::List(out) => out.extend((0..rows).map(digest)),
            Out::Sum { acc, a, b } => {
                for (row, s) in acc[..rows].iter_mut().enumerate() {
                    *s = lane_add(*s, term(digest(row), a, b));
                }
            }
            Out::SumAndTotal { acc, a, b, total } => {
                let null = null_digest();
                let mut t = *total;
                for (row, s) in acc[..rows].iter_mut().enumerate() {
                    let v = digest(row);
                    *s = lane_add(*s, term(v, a, b));
                    t.add(v, null);
                }
                *total = t;
            }
        }
    }

    /// The same destination past its first `from` rows (a list is appended to
    /// anyway).
    pub(super) fn skip_rows(self, from: usize) -> Out<'a> {
        match self {
            Out::List(list) => Out::List(list),
            Out::Sum { acc, a, b } => Out::Sum {
                acc: &mut acc[from..],
                a,
                b,
            },
            Out::SumAndTotal { acc, a, b, total } => Out::SumAndTotal {
                acc: &mut acc[from..],
                a,
                b,
                total,
            },
        }
    }
}
