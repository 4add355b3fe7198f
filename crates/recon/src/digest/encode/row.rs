//! The row encoder: row digests (and per-column value digests) of record
//! batches through the column writers, and the reference row digest and
//! encoding straight from the specification.

use crate::error::{invalid, Invalid};
use arrow::array::ArrayRef;
use arrow::datatypes::DataType;

use super::canonical::encode_value;
use super::columns::{column_writer, dictionary_writer, DictCache};
use super::mix::{column_constants, combine, lane_add, q, term, value_digest};
use super::sums::{Out, ValueSum};

/// What a batch's value digests are kept as, besides the row digests.
enum PerColumn<'a> {
    Nothing,
    /// Each row's value digest, appended per column.
    Lists(&'a mut Vec<Vec<u128>>),
    /// Per column, the count and sum of the non-NULL value digests.
    Totals(&'a mut Vec<ValueSum>),
}

/// Computes row digests (and, when asked, per-column value digests) for
/// record batches. Reuses its buffers across batches, so the per-row loops
/// do not allocate.
#[derive(Default)]
pub struct RowEncoder {
    /// One value's encoding, for values that take the hashed path.
    scratch: Vec<u8>,
    /// Per row: the running sum of the columns' seeded value digests.
    acc: Vec<u128>,
    /// Per column: the last dictionary seen and its encoded values.
    dictionaries: Vec<DictCache>,
    /// Which columns' value digests `digests_with_columns` hands out (all
    /// when unset); the others' lists stay empty, which saves copying them.
    keep: Option<std::sync::Arc<[bool]>>,
}

impl RowEncoder {
    /// An encoder with empty buffers.
    pub fn new() -> Self {
        Self::default()
    }

    /// An encoder whose `digests_with_columns` hands out the value digests
    /// of only the columns marked in `keep`.
    pub(crate) fn keeping(keep: std::sync::Arc<[bool]>) -> Self {
        RowEncoder {
            keep: Some(keep),
            ..Self::default()
        }
    }

    /// Appends the 128-bit digest of every row of `columns` to `out`.
    pub fn digests(&mut self, columns: &[ArrayRef], out: &mut Vec<u128>) -> Result<(), Invalid> {
        self.digests_with_columns(columns, out, None)
    }

    /// Appends every row's digest to `out` and, with `per_column`, each
    /// column's value digests to `per_column[c]` (the digests keyed mode and
    /// fingerprints compare per column), from one pass over the values.
    ///
    /// Column at a time: each column gets a typed writer once per batch
    /// (downcasts and type dispatch happen here, not per value), which fills
    /// the batch's value digests in one loop; the row sums then take one
    /// multiply-add per value.
    pub fn digests_with_columns(
        &mut self,
        columns: &[ArrayRef],
        out: &mut Vec<u128>,
        per_column: Option<&mut Vec<Vec<u128>>>,
    ) -> Result<(), Invalid> {
        match per_column {
            Some(lists) => self.digests_into(columns, out, PerColumn::Lists(lists)),
            None => self.digests_into(columns, out, PerColumn::Nothing),
        }
    }

    /// Appends every row's digest to `out` and adds each column's non-NULL
    /// value digests to `totals[c]` (what a whole-table fingerprint keeps),
    /// in the loop that computes them: no per-column list is written and
    /// read back.
    pub(crate) fn digests_with_totals(
        &mut self,
        columns: &[ArrayRef],
        out: &mut Vec<u128>,
        totals: &mut Vec<ValueSum>,
    ) -> Result<(), Invalid> {
        self.digests_into(columns, out, PerColumn::Totals(totals))
    }

    fn digests_into(
        &mut self,
        columns: &[ArrayRef],
        out: &mut Vec<u128>,
        mut per_column: PerColumn<'_>,
    ) -> Result<(), Invalid> {
        let rows = columns.first().map_or(0, |c| c.len());
        if self.dictionaries.len() < columns.len() {
            self.dictionaries.resize_with(columns.len(), || None);
        }
        match &mut per_column {
            PerColumn::Nothing => {}
            PerColumn::Lists(pc) => pc.resize_with(columns.len(), Vec::new),
            PerColumn::Totals(t) => t.resize(columns.len(), ValueSum::default()),
        }
        self.acc.clear();
        self.acc.resize(rows, 0);
        for (c, (array, cache)) in columns.iter().zip(self.dictionaries.iter_mut()).enumerate() {
            let writer = match array.data_type() {
                DataType::Dictionary(..) => dictionary_writer(array.as_ref(), Some(cache))?,
                _ => column_writer(array.as_ref())?,
            };
            if array.len() != rows {
                return Err(invalid!(
                    "column {c}: {} values for {rows} rows",
                    array.len()
                ));
            }
            let (a, b) = column_constants(c);
            let kept = self
                .keep
                .as_ref()
                .is_none_or(|k| k.get(c).copied().unwrap_or(true));
            match &mut per_column {
                // Per-column digests wanted: list them, then add their terms.
                PerColumn::Lists(pc) if kept => {
                    let list = &mut pc[c];
                    let from = list.len();
                    writer.value_digests(rows, Out::List(list), &mut self.scratch);
                    for (acc, &v) in self.acc.iter_mut().zip(&list[from..]) {
                        *acc = lane_add(*acc, term(v, a, b));
                    }
                }
                PerColumn::Totals(totals) => writer.value_digests(
                    rows,
                    Out::SumAndTotal {
                        acc: &mut self.acc,
                        a,
                        b,
                        total: &mut totals[c],
                    },
                    &mut self.scratch,
                ),
                _ => writer.value_digests(
                    rows,
                    Out::Sum {
                        acc: &mut self.acc,
                        a,
                        b,
                    },
                    &mut self.scratch,
                ),
            }
        }
        out.reserve(rows);
        out.extend(self.acc.iter().map(|&x| q(x)));
        Ok(())
    }

    /// The fast path's encoding of one row; tests compare it with [`encode_row`].
    pub fn encode_one(&mut self, columns: &[ArrayRef], row: usize) -> Result<Vec<u8>, Invalid> {
        let writers = columns
            .iter()
            .map(|c| column_writer(c.as_ref()))
            .collect::<Result<Vec<_>, _>>()?;
        let mut out = Vec::new();
        for w in &writers {
            w.append(row, &mut out);
        }
        Ok(out)
    }
}

/// The reference row digest of row `row` of `columns`, straight from the
/// specification: each value encoded by the reference encoder, its value
/// digest, then their combination (docs/encoding.md). The fast path must
/// agree (property-tested).
pub fn reference_digest(columns: &[ArrayRef], row: usize) -> Result<u128, Invalid> {
    let mut values = Vec::with_capacity(columns.len());
    let mut e = Vec::new();
    for c in columns {
        e.clear();
        encode_value(c.as_ref(), row, &mut e)?;
        values.push(value_digest(&e));
    }
    Ok(combine(&values))
}

/// Convenience for tests and tools: the encoding of one row of `columns`.
pub fn encode_row(columns: &[ArrayRef], row: usize) -> Result<Vec<u8>, Invalid> {
    let mut out = Vec::new();
    for c in columns {
        encode_value(c.as_ref(), row, &mut out)?;
    }
    Ok(out)
}
#[cfg(test)]
mod dictionary_cache_tests {
    use super::*;
    use arrow::array::{DictionaryArray, Int32Array, StringArray};
    use std::sync::Arc;

    fn plain_digests(values: &[Option<&str>]) -> Vec<u128> {
        let a: ArrayRef = Arc::new(StringArray::from(values.to_vec()));
        let mut out = Vec::new();
        RowEncoder::new().digests(&[a], &mut out).unwrap();
        out
    }

    #[test]
    fn cached_dictionaries_digest_like_plain_strings() {
        // One encoder across batches: the same dictionary (cache hit), then a
        // different dictionary with the same keys (must be a miss), then the first again.
        let d1: ArrayRef = Arc::new(StringArray::from(vec!["a", "b", "c"]));
        let d2: ArrayRef = Arc::new(StringArray::from(vec!["c", "b", "a"]));
        let keys = Int32Array::from(vec![Some(0), None, Some(2), Some(1), Some(0)]);
        let batch = |values: &ArrayRef| -> ArrayRef {
            Arc::new(DictionaryArray::try_new(keys.clone(), values.clone()).unwrap())
        };
        let mut enc = RowEncoder::new();
        for (values, expect) in [
            (&d1, vec![Some("a"), None, Some("c"), Some("b"), Some("a")]),
            (&d1, vec![Some("a"), None, Some("c"), Some("b"), Some("a")]),
            (&d2, vec![Some("c"), None, Some("a"), Some("b"), Some("c")]),
            (&d1, vec![Some("a"), None, Some("c"), Some("b"), Some("a")]),
        ] {
            let mut got = Vec::new();
            enc.digests(&[batch(values)], &mut got).unwrap();
            assert_eq!(got, plain_digests(&expect));
        }
    }
}
