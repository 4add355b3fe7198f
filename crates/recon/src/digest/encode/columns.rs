//! Column writers: the fast path of the encoding. Each column of a batch
//! gets a writer typed once per batch (downcasts and type dispatch happen
//! there, not per value), which appends a row's encoding or fills the
//! batch's value digests in one tight loop; it must agree byte for byte
//! with the reference encoder ([`encode_value`]).

use std::sync::Arc;

use arrow::array::ArrayData;
use arrow::array::{
    Array, AsArray, BooleanArray, FixedSizeBinaryArray, GenericByteArray, GenericByteViewArray,
    PrimitiveArray,
};
use arrow::buffer::NullBuffer;
use arrow::datatypes::*;
use arrow::downcast_dictionary_array;
use xxhash_rust::xxh3::xxh3_128;

use super::canonical::{
    canonical_f64, decimal_bytes, encode_value, push_bytes, seconds_nanos, tag,
};
use super::lanes;
use super::mix::{lane_add, null_digest, p, term, value_digest};
use super::sums::{Out, ValueSum};

thread_local! {
    /// Each thread's buffer of fixed-width encodings for [`lanes`].
    static LANES: std::cell::RefCell<lanes::Encodings> = Default::default();
}

/// One column's contribution to the row-major encoding buffer, written
/// column-at-a-time so the inner loops are tight and monomorphic.
pub(super) trait ColumnWriter {
    /// Appends one row's encoding.
    fn append(&self, row: usize, out: &mut Vec<u8>);

    /// Hands the value digest of rows `0..rows` to `out`. The default
    /// encodes each value into `scratch`; the fixed-width and byte writers
    /// compute the padded encoding directly, in a loop without a call per
    /// value.
    fn value_digests(&self, rows: usize, out: Out<'_>, scratch: &mut Vec<u8>) {
        hashed_digests(self, rows, out, scratch);
    }
}

impl<'a> Out<'a> {
    /// The column constants, when the digests go into the row sums.
    fn sum_constants(&self) -> Option<(u128, u128)> {
        match self {
            Out::Sum { a, b, .. } | Out::SumAndTotal { a, b, .. } => Some((*a, *b)),
            Out::List(_) => None,
        }
    }

    /// Into the row sums (and the column's total), rows whose digest is an
    /// entry of a small table add that entry's term, `table.terms[index(row)]`
    /// (NULL's where `nulls` says so): a lookup and an add per row instead
    /// of two multiplies. `None` when done; `self` back for a list.
    #[inline(always)]
    fn sum_by_terms(
        self,
        rows: usize,
        table: &Terms,
        nulls: Option<&NullBuffer>,
        index: impl Fn(usize) -> usize,
    ) -> Option<Out<'a>> {
        let (acc, mut total) = match self {
            Out::Sum { acc, .. } => (acc, None),
            Out::SumAndTotal { acc, total, .. } => (acc, Some(total)),
            list => return Some(list),
        };
        let acc = &mut acc[..rows];
        match nulls {
            None => add_terms(acc, table, total, index),
            Some(n) => {
                // A NULL slot's key may be anything, even out of range: it
                // is replaced by NULL's position before the lookup, without
                // a branch (NULLs are scattered).
                let null_at = table.terms.len() - 1;
                add_terms(acc, table, total.as_deref_mut(), |row| {
                    let valid = 0usize.wrapping_sub(n.is_valid(row) as usize);
                    (index(row) & valid) | (null_at & !valid)
                });
                if let Some(t) = total {
                    // NULL counted in by `add_terms`, out here.
                    t.non_null -= n.null_count() as u64;
                }
            }
        }
        None
    }
}

/// Adds `table.terms[position(row)]` to each row's sum and, with `total`,
/// what each row adds to the column's total.
#[inline(always)]
fn add_terms(
    acc: &mut [u128],
    table: &Terms,
    total: Option<&mut ValueSum>,
    position: impl Fn(usize) -> usize,
) {
    match total {
        None => {
            for (row, s) in acc.iter_mut().enumerate() {
                *s = lane_add(*s, table.terms[position(row)]);
            }
        }
        Some(total) => {
            let mut sum = total.sum;
            for (row, s) in acc.iter_mut().enumerate() {
                let i = position(row);
                *s = lane_add(*s, table.terms[i]);
                sum = sum.wrapping_add(table.totalled[i]);
            }
            total.sum = sum;
            total.non_null += acc.len() as u64;
        }
    }
}

/// A small table of value digests made ready for the row sums: each
/// entry's term `T_c(V)` and, when a column total is kept, what it adds to
/// it (its digest), with NULL's last (its term, and 0: a total counts NULL
/// out). `totalled` is empty when no total was asked for.
#[derive(Clone)]
struct Terms {
    terms: Vec<u128>,
    totalled: Vec<u128>,
}

fn terms_of(digests: &[u128], a: u128, b: u128, totals: bool) -> Terms {
    let mut terms = Vec::with_capacity(digests.len() + 1);
    terms.extend(digests.iter().map(|&v| term(v, a, b)));
    terms.push(term(null_digest(), a, b));
    let mut totalled = Vec::new();
    if totals {
        totalled.reserve(digests.len() + 1);
        totalled.extend_from_slice(digests);
        totalled.push(0);
    }
    Terms { terms, totalled }
}

/// `v` when `valid`, else `null`, without a branch: NULLs are scattered, so
/// a branch on them mispredicts about as often as they occur.
#[inline(always)]
fn select(valid: bool, v: u128, null: u128) -> u128 {
    let m = 0u128.wrapping_sub(valid as u128);
    (v & m) | (null & !m)
}

/// Value digests through the encoding: each value encoded into `scratch`
/// and digested (the path for values that do not fit 16 bytes).
fn hashed_digests<W: ColumnWriter + ?Sized>(
    writer: &W,
    rows: usize,
    out: Out<'_>,
    scratch: &mut Vec<u8>,
) {
    out.fill(rows, |row| {
        scratch.clear();
        writer.append(row, scratch);
        value_digest(scratch)
    });
}

struct FixedWriter<'a, F, const N: usize> {
    nulls: Option<&'a NullBuffer>,
    tag: u8,
    value: F,
}

impl<F: Fn(usize) -> [u8; N], const N: usize> ColumnWriter for FixedWriter<'_, F, N> {
    #[inline]
    fn append(&self, row: usize, out: &mut Vec<u8>) {
        if self.nulls.is_none_or(|n| n.is_valid(row)) {
            let mut rec = [0u8; 17];
            rec[0] = self.tag;
            rec[1..1 + N].copy_from_slice(&(self.value)(row));
            out.extend_from_slice(&rec[..1 + N]);
        } else {
            out.push(tag::NULL);
        }
    }

    fn value_digests(&self, rows: usize, out: Out<'_>, scratch: &mut Vec<u8>) {
        if N >= 16 {
            // Tag + payload exceed 16 bytes: the hashed path.
            return hashed_digests(self, rows, out, scratch);
        }
        if lanes::available() {
            // The encodings first, then eight digests per instruction.
            return LANES.with_borrow_mut(|enc| {
                let valid = |row: usize| self.nulls.is_none_or(|n| n.is_valid(row));
                enc.fill::<N>(rows, self.tag, &self.value, valid);
                lanes::digests(enc, out)
            });
        }
        let digest = |row: usize| padded(self.tag, (self.value)(row));
        match self.nulls {
            None => out.fill(rows, digest),
            // A NULL slot holds some value of the type too; digesting it and
            // selecting the NULL digest instead costs less than a branch.
            Some(n) => {
                let null = p(tag::NULL as u128);
                out.fill(rows, |row| select(n.is_valid(row), digest(row), null))
            }
        }
    }
}

struct BytesWriter<'a, F> {
    nulls: Option<&'a NullBuffer>,
    tag: u8,
    value: F,
}

impl<'a, F: Fn(usize) -> &'a [u8]> ColumnWriter for BytesWriter<'a, F> {
    #[inline]
    fn append(&self, row: usize, out: &mut Vec<u8>) {
        if self.nulls.is_none_or(|n| n.is_valid(row)) {
            push_bytes(out, self.tag, (self.value)(row));
        } else {
            out.push(tag::NULL);
        }
    }

    fn value_digests(&self, rows: usize, out: Out<'_>, scratch: &mut Vec<u8>) {
        let null = p(tag::NULL as u128);
        out.fill(rows, |row| {
            if !self.nulls.is_none_or(|n| n.is_valid(row)) {
                return null;
            }
            let bytes = (self.value)(row);
            // Tag, one varint byte and up to 14 bytes fit the permuted path.
            if bytes.len() <= 14 {
                let mut rec = [0u8; 16];
                rec[0] = self.tag;
                rec[1] = bytes.len() as u8;
                rec[2..2 + bytes.len()].copy_from_slice(bytes);
                p(u128::from_le_bytes(rec))
            } else {
                scratch.clear();
                push_bytes(scratch, self.tag, bytes);
                xxh3_128(scratch)
            }
        })
    }
}

/// Values encoded up front with the reference encoder; rows then pick a
/// slice. Used for nested types; dictionaries share [`PreEncoded`] through
/// [`DictWriter`] (each distinct value is encoded once, rows index it by key).
struct PreEncodedWriter {
    values: Arc<PreEncoded>,
}

/// The canonical encodings of every value of an array, back to back, and
/// their value digests.
pub(super) struct PreEncoded {
    data: Vec<u8>,
    /// `offsets[k]..offsets[k + 1]` is the encoding of value `k`.
    offsets: Vec<usize>,
    digests: Vec<u128>,
    /// The digests' terms of the row sum ([`terms_of`]) for the column
    /// constants they were computed with: a dictionary cached for a column
    /// chunk is summed by lookup in every batch that shares it.
    terms: std::sync::OnceLock<((u128, u128), Terms)>,
}

impl PreEncoded {
    /// [`terms_of`] the digests, with their totals' addends, computed once
    /// for the constants `(a, b)` (a cache belongs to one column, so they do
    /// not change; once per column chunk, the addends cost nothing to keep).
    fn terms(&self, a: u128, b: u128) -> std::borrow::Cow<'_, Terms> {
        let (ab, terms) = self
            .terms
            .get_or_init(|| ((a, b), terms_of(&self.digests, a, b, true)));
        if *ab == (a, b) {
            std::borrow::Cow::Borrowed(terms)
        } else {
            std::borrow::Cow::Owned(terms_of(&self.digests, a, b, true))
        }
    }

    /// The encoding of value `k`.
    fn encoding(&self, k: usize) -> &[u8] {
        &self.data[self.offsets[k]..self.offsets[k + 1]]
    }
}

impl PreEncodedWriter {
    fn encode_all(array: &dyn Array) -> Result<Arc<PreEncoded>, String> {
        let mut data = Vec::new();
        let mut offsets = Vec::with_capacity(array.len() + 1);
        offsets.push(0);
        let mut digests = Vec::with_capacity(array.len());
        for row in 0..array.len() {
            let start = data.len();
            encode_value(array, row, &mut data)?;
            digests.push(value_digest(&data[start..]));
            offsets.push(data.len());
        }
        Ok(Arc::new(PreEncoded {
            data,
            offsets,
            digests,
            terms: std::sync::OnceLock::new(),
        }))
    }
}

impl ColumnWriter for PreEncodedWriter {
    fn append(&self, row: usize, out: &mut Vec<u8>) {
        out.extend_from_slice(self.values.encoding(row));
    }

    fn value_digests(&self, rows: usize, out: Out<'_>, _: &mut Vec<u8>) {
        let d = &self.values.digests[..rows];
        out.fill(rows, |row| d[row])
    }
}

fn fixed<'a, F: Fn(usize) -> [u8; N] + 'a, const N: usize>(
    array: &'a dyn Array,
    tag: u8,
    value: F,
) -> Box<dyn ColumnWriter + 'a> {
    Box::new(FixedWriter {
        nulls: array.logical_nulls_ref(),
        tag,
        value,
    })
}

/// `Array::nulls` is the physical null buffer, which is what primitive and
/// byte arrays use; kept behind a helper so that intent is named once.
trait NullsRef {
    /// The physical null buffer, if it holds any NULL. Used only for the
    /// primitive and byte arrays of the fast paths, where physical nulls are
    /// the logical ones.
    fn logical_nulls_ref(&self) -> Option<&NullBuffer>;
}

impl NullsRef for dyn Array + '_ {
    fn logical_nulls_ref(&self) -> Option<&NullBuffer> {
        self.nulls().filter(|n| n.null_count() > 0)
    }
}

fn int_writer<'a, T: ArrowPrimitiveType>(array: &'a dyn Array) -> Box<dyn ColumnWriter + 'a>
where
    T::Native: Into<i64>,
{
    let a: &PrimitiveArray<T> = array.as_primitive::<T>();
    let w = fixed(array, tag::INT, move |i| {
        let x: i64 = a.value(i).into();
        x.to_le_bytes()
    });
    tabled::<T>(array, w, |v| padded(tag::INT, v.to_le_bytes()))
}

/// The value digest of a fixed-width value: `P` of the tag and payload,
/// zero-padded to 16 bytes (what [`FixedWriter`] computes per row).
#[inline(always)]
fn padded<const N: usize>(tag: u8, payload: [u8; N]) -> u128 {
    let mut rec = [0u8; 16];
    rec[0] = tag;
    rec[1..1 + N].copy_from_slice(&payload);
    p(u128::from_le_bytes(rec))
}

/// Integer-like columns whose values in a batch span a narrow range (dates,
/// small codes, quantities): each value of the range is digested once per
/// batch and rows look theirs up, instead of one permutation per row. The
/// table holds exactly the digests the row path would compute.
struct TableWriter<'a, K> {
    /// The row path, for encodings.
    inner: Box<dyn ColumnWriter + 'a>,
    keys: &'a [K],
    nulls: Option<&'a NullBuffer>,
    min: i64,
    /// `table[k - min]`: the value digest of value `k`.
    table: Vec<u128>,
}

impl<K: Copy + Into<i64>> ColumnWriter for TableWriter<'_, K> {
    fn append(&self, row: usize, out: &mut Vec<u8>) {
        self.inner.append(row, out)
    }

    fn value_digests(&self, rows: usize, out: Out<'_>, _: &mut Vec<u8>) {
        let (keys, table, min) = (&self.keys[..rows], &self.table[..], self.min);
        let position = |row: usize| (keys[row].into() - min) as usize;
        // The table spans under a quarter of the batch's rows: its terms
        // (and a total's addends, only when one is kept) cost less than a
        // term per row.
        let out = match out.sum_constants() {
            Some((a, b)) => {
                let totals = matches!(out, Out::SumAndTotal { .. });
                let terms = terms_of(table, a, b, totals);
                match out.sum_by_terms(rows, &terms, self.nulls, position) {
                    Some(out) => out,
                    None => return,
                }
            }
            None => out,
        };
        let at = |row: usize| table[position(row)];
        match self.nulls {
            None => out.fill(rows, at),
            Some(n) => {
                let null = p(tag::NULL as u128);
                out.fill(rows, |row| select(n.is_valid(row), at(row), null))
            }
        }
    }
}

/// `inner`, or a [`TableWriter`] when the batch's values (NULL slots
/// included) span fewer than a quarter as many values as it has rows;
/// `digest_of(v)` must be the value digest `inner` computes for `v`.
fn tabled<'a, T: ArrowPrimitiveType>(
    array: &'a dyn Array,
    inner: Box<dyn ColumnWriter + 'a>,
    digest_of: impl Fn(i64) -> u128,
) -> Box<dyn ColumnWriter + 'a>
where
    T::Native: Into<i64>,
{
    let keys: &[T::Native] = array.as_primitive::<T>().values();
    let rows = keys.len();
    if rows < 256 {
        return inner;
    }
    let limit = (rows / 4) as i128;
    let span = |keys: &[T::Native]| {
        let (lo, hi) = keys.iter().fold((i64::MAX, i64::MIN), |(lo, hi), &k| {
            let k: i64 = k.into();
            (lo.min(k), hi.max(k))
        });
        (lo, hi as i128 - lo as i128)
    };
    // A sample first, so wide columns (ids, amounts) give up early.
    if span(&keys[..256]).1 >= limit {
        return inner;
    }
    let (lo, width) = span(keys);
    if width >= limit {
        return inner;
    }
    Box::new(TableWriter {
        inner,
        keys,
        nulls: array.logical_nulls_ref(),
        min: lo,
        table: (0..=width as i64).map(|i| digest_of(lo + i)).collect(),
    })
}

/// Whether every value (nulls included: their slots hold arbitrary data, and
/// checking them too only sends a batch to the slower path) satisfies `ok`.
fn all_values<T: ArrowPrimitiveType>(array: &dyn Array, ok: impl Fn(T::Native) -> bool) -> bool {
    array.as_primitive::<T>().values().iter().all(|v| ok(*v))
}

fn bytes_writer<'a, T: ByteArrayType>(
    array: &'a GenericByteArray<T>,
    tag: u8,
) -> Box<dyn ColumnWriter + 'a> {
    Box::new(OffsetBytesWriter {
        nulls: (array as &dyn Array).logical_nulls_ref(),
        tag,
        offsets: array.value_offsets(),
        values: array.values().as_slice(),
    })
}

/// Strings and binaries stored as offsets into one values buffer. Short
/// values (up to 14 bytes, so tag + length + bytes fit 16) are read as one
/// 16-byte load from the buffer and masked, instead of a copy per value.
struct OffsetBytesWriter<'a, O> {
    nulls: Option<&'a NullBuffer>,
    tag: u8,
    offsets: &'a [O],
    values: &'a [u8],
}

impl<O: arrow::array::OffsetSizeTrait> OffsetBytesWriter<'_, O> {
    #[inline]
    fn range(&self, row: usize) -> (usize, usize) {
        (
            self.offsets[row].as_usize(),
            self.offsets[row + 1].as_usize(),
        )
    }
}

impl<O: arrow::array::OffsetSizeTrait> ColumnWriter for OffsetBytesWriter<'_, O> {
    fn append(&self, row: usize, out: &mut Vec<u8>) {
        if self.nulls.is_none_or(|n| n.is_valid(row)) {
            let (start, end) = self.range(row);
            push_bytes(out, self.tag, &self.values[start..end]);
        } else {
            out.push(tag::NULL);
        }
    }

    fn value_digests(&self, rows: usize, out: Out<'_>, scratch: &mut Vec<u8>) {
        let null = p(tag::NULL as u128);
        match self.nulls {
            None => out.fill(rows, |row| self.digest(row, scratch)),
            // A branch, not a select: digesting NULL rows too measured
            // slower for strings (criterion utf8, 10% NULLs).
            Some(n) => out.fill(rows, |row| {
                if n.is_valid(row) {
                    self.digest(row, scratch)
                } else {
                    null
                }
            }),
        }
    }
}

impl<O: arrow::array::OffsetSizeTrait> OffsetBytesWriter<'_, O> {
    /// The value digest of row `row`'s bytes (as if it were not NULL).
    #[inline(always)]
    fn digest(&self, row: usize, scratch: &mut Vec<u8>) -> u128 {
        let (start, end) = self.range(row);
        let len = end - start;
        if len <= 14 {
            // The padded encoding: tag, the one-byte varint length, the bytes, zeros.
            let bytes = if start + 16 <= self.values.len() {
                let mut w = [0u8; 16];
                w.copy_from_slice(&self.values[start..start + 16]);
                u128::from_le_bytes(w) & ((1u128 << (8 * len)) - 1)
            } else {
                let mut w = [0u8; 16];
                w[..len].copy_from_slice(&self.values[start..end]);
                u128::from_le_bytes(w)
            };
            p(self.tag as u128 | ((len as u128) << 8) | (bytes << 16))
        } else {
            scratch.clear();
            push_bytes(scratch, self.tag, &self.values[start..end]);
            xxh3_128(scratch)
        }
    }
}

fn view_writer<'a, T: ByteViewType + ?Sized>(
    array: &'a GenericByteViewArray<T>,
    tag: u8,
) -> Box<dyn ColumnWriter + 'a> {
    Box::new(BytesWriter {
        nulls: (array as &dyn Array).logical_nulls_ref(),
        tag,
        value: move |i| -> &'a [u8] { array.value(i).as_ref() },
    })
}

fn seconds_nanos_writer<'a, T: ArrowPrimitiveType<Native = i64>, const PER_SEC: i64>(
    array: &'a dyn Array,
    t: u8,
) -> Box<dyn ColumnWriter + 'a> {
    let a = array.as_primitive::<T>();
    fixed(array, t, move |i| seconds_nanos::<PER_SEC>(a.value(i)))
}

pub(super) fn column_writer(array: &dyn Array) -> Result<Box<dyn ColumnWriter + '_>, String> {
    use DataType::*;
    Ok(match array.data_type() {
        Boolean => {
            let a: &BooleanArray = array.as_boolean();
            fixed(array, tag::BOOL, move |i| [a.value(i) as u8])
        }
        Int8 => int_writer::<Int8Type>(array),
        Int16 => int_writer::<Int16Type>(array),
        Int32 => int_writer::<Int32Type>(array),
        Int64 => int_writer::<Int64Type>(array),
        UInt8 => int_writer::<UInt8Type>(array),
        UInt16 => int_writer::<UInt16Type>(array),
        UInt32 => int_writer::<UInt32Type>(array),
        UInt64 if all_values::<UInt64Type>(array, |v| v <= i64::MAX as u64) => {
            let a = array.as_primitive::<UInt64Type>();
            fixed(array, tag::INT, move |i| (a.value(i) as i64).to_le_bytes())
        }
        Float32 => {
            let a = array.as_primitive::<Float32Type>();
            fixed(array, tag::FLOAT, move |i| canonical_f64(a.value(i) as f64))
        }
        Float64 => {
            let a = array.as_primitive::<Float64Type>();
            fixed(array, tag::FLOAT, move |i| canonical_f64(a.value(i)))
        }
        Decimal128(_, s) if all_values::<Decimal128Type>(array, |v| i64::try_from(v).is_ok()) => {
            let a = array.as_primitive::<Decimal128Type>();
            let s = *s as i32;
            fixed(array, tag::DECIMAL, move |i| {
                decimal_bytes(a.value(i) as i64, s)
            })
        }
        Decimal64(_, s) => {
            let a = array.as_primitive::<Decimal64Type>();
            let s = *s as i32;
            fixed(array, tag::DECIMAL, move |i| decimal_bytes(a.value(i), s))
        }
        Decimal32(_, s) => {
            let a = array.as_primitive::<Decimal32Type>();
            let s = *s as i32;
            fixed(array, tag::DECIMAL, move |i| {
                decimal_bytes(a.value(i) as i64, s)
            })
        }
        Date32 => {
            let a = array.as_primitive::<Date32Type>();
            let w = fixed(array, tag::DATE, move |i| {
                (a.value(i) as i64 * 86_400_000).to_le_bytes()
            });
            tabled::<Date32Type>(array, w, |v| {
                padded(tag::DATE, (v * 86_400_000).to_le_bytes())
            })
        }
        Date64 => {
            let a = array.as_primitive::<Date64Type>();
            fixed(array, tag::DATE, move |i| a.value(i).to_le_bytes())
        }
        Timestamp(unit, tz) => {
            let t = if tz.is_some() {
                tag::TIMESTAMP_UTC
            } else {
                tag::TIMESTAMP
            };
            match unit {
                TimeUnit::Second => seconds_nanos_writer::<TimestampSecondType, 1>(array, t),
                TimeUnit::Millisecond => {
                    seconds_nanos_writer::<TimestampMillisecondType, 1_000>(array, t)
                }
                TimeUnit::Microsecond => {
                    seconds_nanos_writer::<TimestampMicrosecondType, 1_000_000>(array, t)
                }
                TimeUnit::Nanosecond => {
                    seconds_nanos_writer::<TimestampNanosecondType, 1_000_000_000>(array, t)
                }
            }
        }
        Utf8 => bytes_writer(array.as_string::<i32>(), tag::UTF8),
        LargeUtf8 => bytes_writer(array.as_string::<i64>(), tag::UTF8),
        Utf8View => view_writer(array.as_string_view(), tag::UTF8),
        Binary => bytes_writer(array.as_binary::<i32>(), tag::BINARY),
        LargeBinary => bytes_writer(array.as_binary::<i64>(), tag::BINARY),
        BinaryView => view_writer(array.as_binary_view(), tag::BINARY),
        FixedSizeBinary(_) => {
            let a: &FixedSizeBinaryArray = array.as_fixed_size_binary();
            Box::new(BytesWriter {
                nulls: array.logical_nulls_ref(),
                tag: tag::BINARY,
                value: move |i| a.value(i),
            })
        }
        Dictionary(..) => dictionary_writer(array, None)?,
        _ => Box::new(PreEncodedWriter {
            values: PreEncodedWriter::encode_all(array)?,
        }),
    })
}

/// A dictionary's values encoded once, with the values array they came
/// from (held, so its buffers cannot be freed and their addresses reused).
pub(super) type DictCache = Option<(ArrayData, Arc<PreEncoded>)>;

/// A writer for a dictionary array: each distinct value is encoded once, and
/// with a cache, once for all the batches that share the same dictionary
/// (Parquet readers hand out one dictionary per column chunk).
pub(super) fn dictionary_writer<'a>(
    array: &'a dyn Array,
    cache: Option<&mut DictCache>,
) -> Result<Box<dyn ColumnWriter + 'a>, String> {
    let dict = array
        .as_any_dictionary_opt()
        .ok_or_else(|| "dictionary array expected".to_string())?;
    let values_data = dict.values().to_data();
    let cached = cache.is_some();
    let values = match cache {
        Some(slot) => match slot {
            Some((data, enc)) if data.ptr_eq(&values_data) => enc.clone(),
            _ => {
                let enc = PreEncodedWriter::encode_all(dict.values().as_ref())?;
                *slot = Some((values_data, enc.clone()));
                enc
            }
        },
        None => PreEncodedWriter::encode_all(dict.values().as_ref())?,
    };
    if dict.values().is_empty() && dict.keys().null_count() != dict.keys().len() {
        // An all-NULL batch may carry an empty dictionary (Parquet writes
        // them); a key that is not NULL cannot point into one.
        return Err("dictionary key points into an empty dictionary".into());
    }
    Ok(downcast_dictionary_array!(
        array => Box::new(DictWriter {
            values,
            cached,
            keys: array.keys().values(),
            nulls: (array.keys() as &dyn Array).logical_nulls_ref(),
        }),
        other => return Err(format!("dictionary array expected, got {other}")),
    ))
}

/// Rows of a dictionary array: each row's digest is its key's entry in the
/// dictionary's pre-computed digests, read straight from the key buffer
/// (no per-batch vector of normalized keys).
struct DictWriter<'a, K> {
    values: Arc<PreEncoded>,
    /// `values` serves every batch of a column chunk (a [`DictCache`]).
    cached: bool,
    keys: &'a [K],
    /// NULL keys; a NULL key's slot may hold any value, even one out of range.
    nulls: Option<&'a NullBuffer>,
}

impl<K: ArrowNativeType> DictWriter<'_, K> {
    /// The encoding of row `row`.
    fn slice(&self, row: usize) -> &[u8] {
        const NULL: &[u8] = &[tag::NULL];
        if !self.nulls.is_none_or(|n| n.is_valid(row)) {
            return NULL;
        }
        self.values.encoding(self.keys[row].as_usize())
    }
}

impl<K: ArrowNativeType> ColumnWriter for DictWriter<'_, K> {
    fn append(&self, row: usize, out: &mut Vec<u8>) {
        out.extend_from_slice(self.slice(row));
    }

    fn value_digests(&self, rows: usize, out: Out<'_>, _: &mut Vec<u8>) {
        let (d, keys) = (&self.values.digests[..], &self.keys[..rows]);
        // Terms by lookup for a dictionary cached across batches, or one
        // smaller than the batch.
        let out = match out.sum_constants() {
            Some((a, b)) if self.cached || d.len() * 2 <= rows => {
                let terms = self.values.terms(a, b);
                match out.sum_by_terms(rows, &terms, self.nulls, |row| keys[row].as_usize()) {
                    Some(out) => out,
                    None => return,
                }
            }
            _ => out,
        };
        let at = |row: usize| d[keys[row].as_usize()];
        match self.nulls {
            None => out.fill(rows, at),
            // A branch, not a select: a NULL key's slot may be out of range.
            Some(n) => {
                let null = p(tag::NULL as u128);
                out.fill(rows, |row| if n.is_valid(row) { at(row) } else { null })
            }
        }
    }
}
