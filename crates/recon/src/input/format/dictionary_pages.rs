//! Dictionary-encoded primitive Parquet columns read as Arrow dictionaries.
//!
//! arrow-rs keeps a Parquet dictionary only for byte-array columns: an
//! integer, date, timestamp, decimal or float column is gathered value by
//! value into a plain array, which the digest then reads row by row. Most
//! writers (Spark, pyarrow, arrow-rs) dictionary-encode such columns when
//! they have few distinct values, so this reader decodes the dictionary page
//! once per column chunk and hands the rows on as keys into it: the digest
//! encodes each distinct value once and each row is a table lookup
//! ([`crate::digest`]'s dictionary writer).
//!
//! Only column chunks whose every data page is dictionary-encoded are read
//! here (the caller checks the page encoding statistics), and only types
//! whose Parquet values are the Arrow values unchanged or widened exactly;
//! everything else goes through arrow-rs as before. A page that breaks the
//! promise of the statistics is an error naming the file, not a guess.

use std::path::Path;
use std::sync::Arc;

use arrow::array::{
    Array, ArrayRef, BooleanBufferBuilder, Date32Array, Decimal128Array, DictionaryArray,
    Float32Array, Float64Array, Int32Array, Int64Array, PrimitiveArray,
};
use arrow::buffer::NullBuffer;
use arrow::datatypes::{DataType, Field, TimeUnit, UInt32Type};
use bytes::Bytes;
use parquet::basic::{Encoding, LogicalType, Type as Physical};
use parquet::column::page::{Page, PageReader};
use parquet::file::metadata::{ColumnChunkMetaData, ParquetMetaData};
use parquet::file::reader::ChunkReader;
use parquet::file::serialized_reader::SerializedPageReader;
use parquet::schema::types::ColumnDescriptor;

use crate::error::{ReconError, Result};

/// The largest dictionary page (compressed bytes, as the chunk's offsets
/// give it) read here. A row's digest is then a lookup in a table of 16
/// bytes per distinct value; past about a megabyte that table leaves the
/// L2 cache and computing each row's digest from its value is faster.
const MAX_DICTIONARY_PAGE: i64 = 256 << 10;

/// Whether leaf `column` of row group `group` can be read here as field
/// `field`: a top-level leaf of a supported type, with no repetition, at
/// most one definition level, and dictionary pages only (by the chunk's
/// encoding statistics).
pub(in crate::input) fn readable(
    meta: &ParquetMetaData,
    group: usize,
    column: usize,
    field: &Field,
) -> bool {
    let descr = meta.file_metadata().schema_descr().column(column);
    let chunk = meta.row_group(group).column(column);
    descr.path().parts().len() == 1
        && descr.max_rep_level() == 0
        && descr.max_def_level() <= 1
        && chunk
            .dictionary_page_offset()
            .is_some_and(|d| chunk.data_page_offset().saturating_sub(d) <= MAX_DICTIONARY_PAGE)
        && exact_type(&descr, field.data_type())
        && dictionary_only_chunk(chunk)
}

/// Whether every data page of a column chunk is dictionary-encoded, from
/// its page encoding statistics: the full list, or the mask of data-page
/// encodings that the parquet crate keeps by default (since version 57 it
/// no longer decodes the list unless asked, which silently turned this
/// check off). A chunk without statistics is not known to be, so it is not.
pub(in crate::input) fn dictionary_only_chunk(chunk: &ColumnChunkMetaData) -> bool {
    use parquet::basic::PageType;
    let dictionary =
        |e: Encoding| matches!(e, Encoding::RLE_DICTIONARY | Encoding::PLAIN_DICTIONARY);
    if let Some(mask) = chunk.page_encoding_stats_mask() {
        let mut encodings = mask.encodings().peekable();
        return encodings.peek().is_some() && encodings.all(dictionary);
    }
    chunk.page_encoding_stats().is_some_and(|stats| {
        stats.iter().all(|s| {
            !matches!(s.page_type, PageType::DATA_PAGE | PageType::DATA_PAGE_V2)
                || dictionary(s.encoding)
        })
    })
}

/// Whether the Parquet values of `descr` are the Arrow values of `to`
/// unchanged (or, for decimals, sign-extended): the types arrow-rs itself
/// reads without a conversion that could round or reject.
fn exact_type(descr: &ColumnDescriptor, to: &DataType) -> bool {
    let logical = descr.logical_type_ref();
    let plain_int = |bits: i8| match &logical {
        None => true,
        Some(LogicalType::Integer(int)) => int.bit_width == bits && int.is_signed,
        _ => false,
    };
    match (descr.physical_type(), to) {
        (Physical::INT32, DataType::Int32) => plain_int(32),
        (Physical::INT64, DataType::Int64) => plain_int(64),
        (Physical::INT32, DataType::Date32) => matches!(logical, Some(LogicalType::Date)),
        (Physical::INT32 | Physical::INT64, DataType::Decimal128(p, s)) => {
            // The scale must be the file's: arrow's reader would otherwise
            // rescale, which this reader does not.
            matches!(logical, Some(LogicalType::Decimal(d))
                if d.scale == i32::from(*s) && d.precision == i32::from(*p))
        }
        (Physical::INT64, DataType::Timestamp(unit, _)) => match &logical {
            Some(LogicalType::Timestamp(t)) => matches!(
                (&t.unit, unit),
                (parquet::basic::TimeUnit::MILLIS, TimeUnit::Millisecond)
                    | (parquet::basic::TimeUnit::MICROS, TimeUnit::Microsecond)
                    | (parquet::basic::TimeUnit::NANOS, TimeUnit::Nanosecond)
            ),
            _ => false,
        },
        (Physical::FLOAT, DataType::Float32) => logical.is_none(),
        (Physical::DOUBLE, DataType::Float64) => logical.is_none(),
        _ => false,
    }
}

/// Reads one column chunk, `rows` at a time, as dictionary arrays that all
/// share the chunk's one dictionary (so the digest encodes it once).
pub(in crate::input) struct DictionaryChunk<'p, R: ChunkReader> {
    path: &'p Path,
    pages: SerializedPageReader<R>,
    physical: Physical,
    data_type: DataType,
    /// 0: a required column; 1: an optional one.
    max_def: i16,
    values: Option<ArrayRef>,
    /// The current data page: its definition levels, its dictionary
    /// indices, and the rows it still holds.
    levels: Option<Hybrid>,
    indices: Hybrid,
    left: usize,
    /// Scratch for an optional column's levels and indices.
    defs: Vec<u32>,
    packed: Vec<u32>,
}

impl<'p, R: ChunkReader + 'static> DictionaryChunk<'p, R> {
    pub(in crate::input) fn new(
        path: &'p Path,
        reader: Arc<R>,
        meta: &ParquetMetaData,
        group: usize,
        column: usize,
        field: &Field,
    ) -> Result<Self> {
        let chunk = meta.row_group(group).column(column);
        let rows = meta.row_group(group).num_rows() as usize;
        let descr = meta.file_metadata().schema_descr().column(column);
        let pages = SerializedPageReader::new(reader, chunk, rows, None)
            .map_err(|e| ReconError::parquet(path, e))?;
        Ok(DictionaryChunk {
            path,
            pages,
            physical: descr.physical_type(),
            data_type: field.data_type().clone(),
            max_def: descr.max_def_level(),
            values: None,
            levels: None,
            indices: Hybrid::empty(),
            left: 0,
            defs: Vec::new(),
            packed: Vec::new(),
        })
    }

    fn bad(&self, why: impl std::fmt::Display) -> ReconError {
        ReconError::input(
            self.path,
            format!("column chunk of type {}: {why}", self.data_type),
        )
    }

    /// The next `rows` rows, as a dictionary array.
    pub(in crate::input) fn read(&mut self, rows: usize) -> Result<ArrayRef> {
        let mut keys = vec![0u32; rows];
        let mut valid = (self.max_def > 0).then(|| BooleanBufferBuilder::new(rows));
        let mut filled = 0;
        while filled < rows {
            if self.left == 0 {
                self.next_page()?;
            }
            let take = (rows - filled).min(self.left);
            let out = &mut keys[filled..filled + take];
            match (&mut self.levels, &mut valid) {
                (Some(levels), Some(valid)) => {
                    self.defs.resize(take, 0);
                    if levels.read(&mut self.defs) != take {
                        return Err(self.bad("a data page holds fewer levels than it says"));
                    }
                    // One pass: levels are 0 (NULL) or 1 (a value).
                    let (present, beyond) =
                        self.defs.iter().fold((0usize, false), |(n, bad), &d| {
                            (n + d as usize, bad | (d > 1))
                        });
                    if beyond {
                        return Err(self.bad("a definition level out of range"));
                    }
                    self.packed.resize(present, 0);
                    if self.indices.read(&mut self.packed) != present {
                        return Err(self.bad("a data page holds fewer values than its levels"));
                    }
                    let mut next = self.packed.iter();
                    for (slot, &d) in out.iter_mut().zip(&self.defs) {
                        // A NULL row keeps key 0: its slot is never read.
                        if d == 1 {
                            *slot = *next.next().unwrap_or(&0);
                        }
                        valid.append(d == 1);
                    }
                }
                _ => {
                    if self.indices.read(out) != take {
                        return Err(self.bad("a data page holds fewer values than it says"));
                    }
                }
            }
            self.left -= take;
            filled += take;
        }
        let nulls = valid.map(|mut v| NullBuffer::new(v.finish()));
        let keys = PrimitiveArray::<UInt32Type>::new(keys.into(), nulls);
        let values = match &self.values {
            Some(v) => v.clone(),
            None => return Err(self.bad("no dictionary page before the data")),
        };
        // try_new checks every key against the dictionary's length: a
        // corrupt index is an error here, never an out-of-range read later.
        let array =
            DictionaryArray::<UInt32Type>::try_new(keys, values).map_err(|e| self.bad(e))?;
        Ok(Arc::new(array))
    }

    /// Moves to the next data page, decoding a dictionary page on the way.
    fn next_page(&mut self) -> Result<()> {
        loop {
            let page = self
                .pages
                .get_next_page()
                .map_err(|e| ReconError::parquet(self.path, e))?
                .ok_or_else(|| self.bad("the column chunk ended before the row group's rows"))?;
            let (buf, levels, encoding, rows) = match page {
                Page::DictionaryPage {
                    buf,
                    num_values,
                    encoding,
                    ..
                } => {
                    if !matches!(encoding, Encoding::PLAIN | Encoding::PLAIN_DICTIONARY) {
                        return Err(self.bad(format!("dictionary page encoded {encoding}")));
                    }
                    self.values = Some(self.dictionary(&buf, num_values as usize)?);
                    continue;
                }
                Page::DataPage {
                    buf,
                    num_values,
                    encoding,
                    def_level_encoding,
                    ..
                } => {
                    let mut offset = 0;
                    let mut levels = None;
                    if self.max_def > 0 {
                        if def_level_encoding != Encoding::RLE {
                            return Err(
                                self.bad(format!("definition levels encoded {def_level_encoding}"))
                            );
                        }
                        let len = buf
                            .get(..4)
                            .map(|b| u32::from_le_bytes(array(b)) as usize)
                            .filter(|len| 4 + len <= buf.len())
                            .ok_or_else(|| self.bad("definition levels run past the page"))?;
                        levels = Some(buf.slice(4..4 + len));
                        offset = 4 + len;
                    }
                    (buf.slice(offset..), levels, encoding, num_values)
                }
                Page::DataPageV2 {
                    buf,
                    num_values,
                    encoding,
                    def_levels_byte_len,
                    rep_levels_byte_len,
                    ..
                } => {
                    let (rep, def) = (rep_levels_byte_len as usize, def_levels_byte_len as usize);
                    if rep != 0 || rep + def > buf.len() {
                        return Err(self.bad("bad level lengths in a data page"));
                    }
                    let levels = (self.max_def > 0).then(|| buf.slice(..def));
                    (buf.slice(def..), levels, encoding, num_values)
                }
            };
            if !matches!(
                encoding,
                Encoding::RLE_DICTIONARY | Encoding::PLAIN_DICTIONARY
            ) {
                return Err(self.bad(format!(
                    "a data page is encoded {encoding}, though the column chunk's statistics say every page is dictionary-encoded"
                )));
            }
            if rows == 0 {
                continue;
            }
            // The values: a bit width, then the indices. A page of NULLs
            // only may carry neither.
            self.indices = match buf.first() {
                None => Hybrid::empty(),
                Some(&width) if width > 32 => {
                    return Err(self.bad(format!("dictionary index bit width {width}")))
                }
                Some(&width) => Hybrid::new(buf.slice(1..), width),
            };
            self.levels = levels.map(|l| Hybrid::new(l, 1));
            self.left = rows as usize;
            return Ok(());
        }
    }

    /// The dictionary page's values (PLAIN-encoded) as an Arrow array of
    /// the column's type.
    fn dictionary(&self, buf: &[u8], n: usize) -> Result<ArrayRef> {
        let width = match self.physical {
            Physical::INT32 | Physical::FLOAT => 4,
            _ => 8,
        };
        if buf.len() < n * width {
            return Err(self.bad("the dictionary page is shorter than its values"));
        }
        let words4 = || {
            buf.chunks_exact(4)
                .take(n)
                .map(|b| i32::from_le_bytes(array(b)))
        };
        let words8 = || {
            buf.chunks_exact(8)
                .take(n)
                .map(|b| i64::from_le_bytes(array(b)))
        };
        let array: ArrayRef = match (&self.data_type, self.physical) {
            (DataType::Int32, _) => Arc::new(Int32Array::from_iter_values(words4())),
            (DataType::Date32, _) => Arc::new(Date32Array::from_iter_values(words4())),
            (DataType::Int64, _) => Arc::new(Int64Array::from_iter_values(words8())),
            (DataType::Timestamp(..), _) => Int64Array::from_iter_values(words8())
                .into_data()
                .into_builder()
                .data_type(self.data_type.clone())
                .build()
                .map(arrow::array::make_array)
                .map_err(|e| self.bad(e))?,
            (DataType::Decimal128(p, s), Physical::INT32) => Arc::new(
                Decimal128Array::from_iter_values(words4().map(i128::from))
                    .with_precision_and_scale(*p, *s)
                    .map_err(|e| self.bad(e))?,
            ),
            (DataType::Decimal128(p, s), _) => Arc::new(
                Decimal128Array::from_iter_values(words8().map(i128::from))
                    .with_precision_and_scale(*p, *s)
                    .map_err(|e| self.bad(e))?,
            ),
            (DataType::Float32, _) => Arc::new(Float32Array::from_iter_values(
                words4().map(|w| f32::from_bits(w as u32)),
            )),
            (DataType::Float64, _) => Arc::new(Float64Array::from_iter_values(
                words8().map(|w| f64::from_bits(w as u64)),
            )),
            (other, _) => return Err(self.bad(format!("unsupported type {other}"))),
        };
        Ok(array)
    }
}

/// The first `N` bytes of `b` (callers slice exactly `N`).
#[inline(always)]
fn array<const N: usize>(b: &[u8]) -> [u8; N] {
    let mut w = [0u8; N];
    w.copy_from_slice(&b[..N]);
    w
}

/// Parquet's RLE / bit-packed hybrid encoding, as definition levels and
/// dictionary indices use it: runs of one repeated value, and runs of
/// values packed `width` bits each, least significant bit first.
struct Hybrid {
    data: Bytes,
    /// Byte position of the next run header.
    pos: usize,
    width: u8,
    /// The current repeated run: its value and how many are left.
    repeat: u32,
    repeats_left: usize,
    /// The current packed run: the bit position of its next value and how
    /// many are left.
    bit: usize,
    packed_left: usize,
}

impl Hybrid {
    fn new(data: Bytes, width: u8) -> Self {
        Hybrid {
            data,
            pos: 0,
            width,
            repeat: 0,
            repeats_left: 0,
            bit: 0,
            packed_left: 0,
        }
    }

    fn empty() -> Self {
        Hybrid::new(Bytes::new(), 0)
    }

    /// Fills `out` from the runs; fewer only when the data ends (or is
    /// malformed), which the caller reports.
    fn read(&mut self, out: &mut [u32]) -> usize {
        let mut done = 0;
        while done < out.len() {
            if self.repeats_left > 0 {
                let n = self.repeats_left.min(out.len() - done);
                out[done..done + n].fill(self.repeat);
                self.repeats_left -= n;
                done += n;
            } else if self.packed_left > 0 {
                let n = self.packed_left.min(out.len() - done);
                self.unpack(&mut out[done..done + n]);
                self.packed_left -= n;
                done += n;
            } else if !self.next_run() {
                break;
            }
        }
        done
    }

    /// Reads the next run header; false at the end of the data. Runs of
    /// no values (malformed, but cheap to pass over) are skipped.
    fn next_run(&mut self) -> bool {
        while self.repeats_left == 0 && self.packed_left == 0 {
            let Some(header) = self.varint() else {
                return false;
            };
            let count = (header >> 1) as usize;
            if header & 1 == 1 {
                // Packed: `count` groups of 8 values, `count * width` bytes.
                let bytes = count.saturating_mul(self.width as usize);
                let avail = self.data.len() - self.pos;
                self.packed_left = if bytes > avail {
                    // A final run may be cut short of its padding: keep the
                    // whole values it holds.
                    (avail * 8)
                        .checked_div(self.width as usize)
                        .unwrap_or(count * 8)
                } else {
                    count * 8
                };
                self.bit = self.pos * 8;
                self.pos += bytes.min(avail);
            } else {
                let bytes = (self.width as usize).div_ceil(8);
                let Some(raw) = self.data.get(self.pos..self.pos + bytes) else {
                    return false;
                };
                let mut word = [0u8; 4];
                word[..bytes].copy_from_slice(raw);
                self.repeat = u32::from_le_bytes(word);
                self.repeats_left = count;
                self.pos += bytes;
            }
        }
        true
    }

    fn varint(&mut self) -> Option<u64> {
        let mut value = 0u64;
        for shift in (0..64).step_by(7) {
            let b = *self.data.get(self.pos)?;
            self.pos += 1;
            value |= u64::from(b & 0x7f) << shift;
            if b & 0x80 == 0 {
                return Some(value);
            }
        }
        None
    }

    /// Unpacks `out.len()` values of the current packed run.
    fn unpack(&mut self, out: &mut [u32]) {
        let width = self.width as usize;
        if width == 0 {
            out.fill(0);
            return;
        }
        let data = &self.data[..];
        // Value by value up to a byte boundary, then eight values at a time
        // from there (eight values span `width` whole bytes), then the rest
        // value by value.
        let mut done = 0;
        while done < out.len() && !(self.bit + done * width).is_multiple_of(8) {
            out[done] = unpack_one(data, self.bit + done * width, width);
            done += 1;
        }
        if done < out.len() {
            done += unpack_groups(data, self.bit + done * width, width, &mut out[done..]);
        }
        for (k, slot) in out.iter_mut().enumerate().skip(done) {
            *slot = unpack_one(data, self.bit + k * width, width);
        }
        self.bit += out.len() * width;
    }
}

/// The `width`-bit value at bit `bit` of `data` (bits past its end read as
/// zeros).
#[inline]
fn unpack_one(data: &[u8], bit: usize, width: usize) -> u32 {
    let byte = bit / 8;
    // Eight bytes hold any value of up to 32 bits from any bit offset; near
    // the end they are read with zeros past it.
    let word = match data.get(byte..byte + 8) {
        Some(b) => u64::from_le_bytes(array(b)),
        None => {
            let mut w = [0u8; 8];
            let tail = &data[byte.min(data.len())..];
            w[..tail.len()].copy_from_slice(tail);
            u64::from_le_bytes(w)
        }
    };
    ((word >> (bit % 8)) & value_mask(width)) as u32
}

#[inline(always)]
fn value_mask(width: usize) -> u64 {
    if width >= 32 {
        u32::MAX as u64
    } else {
        (1u64 << width) - 1
    }
}

/// Unpacks groups of eight `width`-bit values from byte-aligned bit `bit`
/// into `out`, as many whole groups as `out` and the data hold; returns the
/// values unpacked. The width is made a constant, so each group's shifts
/// and offsets are too: about three instructions a value instead of
/// [`unpack_one`]'s ten (recon's dictionary indices were ~4% of an
/// identical-tables diff's samples).
fn unpack_groups(data: &[u8], bit: usize, width: usize, out: &mut [u32]) -> usize {
    fn groups<const W: usize>(data: &[u8], bit: usize, out: &mut [u32]) -> usize {
        let mut byte = bit / 8;
        let mut done = 0;
        for group in out.chunks_exact_mut(8) {
            // The group's W bytes and the slack its last 8-byte read needs.
            let Some(window) = data.get(byte..byte + W + 8) else {
                break;
            };
            for (i, slot) in group.iter_mut().enumerate() {
                let at = i * W;
                let word = u64::from_le_bytes(array(&window[at / 8..at / 8 + 8]));
                *slot = ((word >> (at % 8)) & value_mask(W)) as u32;
            }
            byte += W;
            done += 8;
        }
        done
    }
    debug_assert_eq!(bit % 8, 0);
    macro_rules! by_width {
        ($($w:literal)*) => {
            match width {
                $($w => groups::<$w>(data, bit, out),)*
                _ => 0,
            }
        };
    }
    by_width!(1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21 22 23 24 25 26 27 28 29 30 31 32)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A hand-encoded hybrid stream: a repeated run, a packed run, and a
    /// packed run cut short of its padding.
    #[test]
    fn hybrid_runs_decode() {
        // Repeated: header (5 << 1) = 10, value 3 in one byte (width 3).
        // Packed: header (1 << 1) | 1 = 3, eight 3-bit values 0..8:
        // bits 000 001 010 011 100 101 110 111, LSB first = 0x88 0xc6 0xfa.
        let data = Bytes::from_static(&[10, 3, 3, 0x88, 0xc6, 0xfa]);
        let mut h = Hybrid::new(data, 3);
        let mut out = vec![0u32; 13];
        assert_eq!(h.read(&mut out), 13);
        assert_eq!(out, [3, 3, 3, 3, 3, 0, 1, 2, 3, 4, 5, 6, 7]);
        assert_eq!(h.read(&mut out), 0);

        // A packed run that promises 8 values but carries bytes for 5.
        let data = Bytes::from_static(&[3, 0x88, 0x46]);
        let mut h = Hybrid::new(data, 3);
        let mut out = vec![0u32; 5];
        assert_eq!(h.read(&mut out), 5);
        assert_eq!(out, [0, 1, 2, 3, 4]);
    }

    #[test]
    fn malformed_hybrid_streams_end_instead_of_looping() {
        // Zero-length runs only, then the end.
        let mut h = Hybrid::new(Bytes::from_static(&[0, 7, 1, 0, 9]), 3);
        let mut out = vec![0u32; 4];
        assert_eq!(h.read(&mut out), 0);
        // A varint that never ends.
        let mut h = Hybrid::new(Bytes::from_static(&[0xff; 12]), 3);
        assert_eq!(h.read(&mut out), 0);
    }

    /// Eight at a time and one at a time agree, for every width, from every
    /// offset into a packed run and for every read length.
    #[test]
    fn grouped_unpacking_matches_value_by_value() {
        let bytes: Vec<u8> = (0..300u32)
            .map(|i| (i.wrapping_mul(2654435761) >> 13) as u8)
            .collect();
        for width in 1..=32u8 {
            let w = width as usize;
            let runs = (bytes.len() / w).min(63);
            let mut data = vec![((runs as u8) << 1) | 1];
            data.extend_from_slice(&bytes[..runs * w]);
            let data = Bytes::from(data);
            let expected: Vec<u32> = (0..runs * 8)
                .map(|k| unpack_one(&data[1..], k * w, w))
                .collect();
            for first in [0, 1, 3, 8, 13] {
                for len in [1, 7, 8, 9, 40, runs * 8 - first] {
                    let mut h = Hybrid::new(data.clone(), width);
                    let mut skip = vec![0u32; first];
                    assert_eq!(h.read(&mut skip), first);
                    let mut out = vec![0u32; len];
                    assert_eq!(h.read(&mut out), len, "width {width}");
                    assert_eq!(
                        out,
                        expected[first..first + len],
                        "width {width}, from {first}"
                    );
                }
            }
        }
    }

    #[test]
    fn width_32_values_unpack_whole() {
        let mut bytes = vec![3u8];
        for v in [u32::MAX, 0, 1, 0x8000_0000, 5, 6, 7, 8] {
            bytes.extend_from_slice(&v.to_le_bytes());
        }
        let mut h = Hybrid::new(Bytes::from(bytes), 32);
        let mut out = vec![0u32; 8];
        assert_eq!(h.read(&mut out), 8);
        assert_eq!(out, [u32::MAX, 0, 1, 0x8000_0000, 5, 6, 7, 8]);
    }

    mod against_arrow {
        //! Every file this reader takes is read again by arrow-rs's own
        //! reader: the dictionaries, unpacked, must be its arrays bit for bit.
        use super::super::*;
        use arrow::array::{RecordBatch, TimestampMicrosecondArray, TimestampNanosecondArray};
        use arrow::datatypes::Schema;
        use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
        use parquet::arrow::ArrowWriter;
        use parquet::file::properties::{WriterProperties, WriterVersion};
        use proptest::prelude::*;

        /// One column of `rows` values drawn from `distinct` of type `kind`,
        /// NULL where `nulls` says (for an optional column).
        fn column(kind: u8, raw: &[i64], nulls: Option<&[bool]>) -> (Field, ArrayRef) {
            let valid = |i: usize| nulls.is_none_or(|n| !n[i]);
            let opt = |i: usize, v: i64| valid(i).then_some(v);
            let it = || raw.iter().enumerate().map(|(i, &v)| opt(i, v));
            let array: ArrayRef = match kind {
                0 => Arc::new(Int32Array::from_iter(it().map(|v| v.map(|v| v as i32)))),
                1 => Arc::new(Int64Array::from_iter(it())),
                2 => Arc::new(Date32Array::from_iter(it().map(|v| v.map(|v| v as i32)))),
                3 => Arc::new(
                    Decimal128Array::from_iter(it().map(|v| v.map(i128::from)))
                        .with_precision_and_scale(18, 3)
                        .unwrap(),
                ),
                4 => Arc::new(
                    Decimal128Array::from_iter(
                        it().map(|v| v.map(|v| i128::from(v as i32 % 100_000))),
                    )
                    .with_precision_and_scale(7, 2)
                    .unwrap(),
                ),
                5 => Arc::new(Float64Array::from_iter(it().map(|v| v.map(special_f64)))),
                6 => Arc::new(Float32Array::from_iter(
                    it().map(|v| v.map(|v| special_f64(v) as f32)),
                )),
                7 => Arc::new(TimestampMicrosecondArray::from_iter(it()).with_timezone("UTC")),
                _ => Arc::new(TimestampNanosecondArray::from_iter(it())),
            };
            let field = Field::new("c", array.data_type().clone(), nulls.is_some());
            (field, array)
        }

        /// Floats that must keep their bits: NaNs, both zeros, infinities.
        fn special_f64(v: i64) -> f64 {
            match v.rem_euclid(7) {
                0 => f64::NAN,
                1 => -0.0,
                2 => f64::INFINITY,
                3 => f64::from_bits(0x7ff8_0000_0000_0001),
                _ => v as f64 / 8.0,
            }
        }

        fn write(
            field: Field,
            array: ArrayRef,
            v2: bool,
            page_rows: usize,
            group_rows: usize,
        ) -> Bytes {
            let schema = Arc::new(Schema::new(vec![field]));
            let batch = RecordBatch::try_new(schema.clone(), vec![array]).unwrap();
            let props = WriterProperties::builder()
                .set_writer_version(if v2 {
                    WriterVersion::PARQUET_2_0
                } else {
                    WriterVersion::PARQUET_1_0
                })
                .set_data_page_row_count_limit(page_rows)
                .set_write_batch_size(page_rows.min(1024))
                .set_max_row_group_row_count(Some(group_rows))
                .set_compression(parquet::basic::Compression::SNAPPY)
                .build();
            let mut out = Vec::new();
            let mut w = ArrowWriter::try_new(&mut out, schema, Some(props)).unwrap();
            w.write(&batch).unwrap();
            w.close().unwrap();
            Bytes::from(out)
        }

        proptest! {
            #![proptest_config(ProptestConfig::with_cases(64))]
            #[test]
            fn dictionaries_unpack_to_arrows_arrays(
                kind in 0u8..9,
                distinct in 1i64..600,
                rows in 1usize..5000,
                seed in any::<u64>(),
                null_every in prop::option::of(1usize..6),
                v2 in any::<bool>(),
                page_rows in 1usize..3000,
                group_rows in 1usize..6000,
                batch in 1usize..3000,
            ) {
                // Values from a small set, so every page stays in the dictionary.
                let mut x = seed | 1;
                let raw: Vec<i64> = (0..rows).map(|_| {
                    x ^= x << 13; x ^= x >> 7; x ^= x << 17;
                    (x % distinct as u64) as i64 - distinct / 2
                }).collect();
                let nulls: Option<Vec<bool>> = null_every.map(|k| {
                    (0..rows).map(|i| (i as u64 ^ seed).is_multiple_of(k as u64 + 1)).collect()
                });
                let (field, array) = column(kind, &raw, nulls.as_deref());
                let file = write(field.clone(), array, v2, page_rows, group_rows);
                let builder = ParquetRecordBatchReaderBuilder::try_new(file.clone()).unwrap();
                let meta = builder.metadata().clone();
                let expected: Vec<RecordBatch> = builder
                    .with_batch_size(batch)
                    .build()
                    .unwrap()
                    .collect::<std::result::Result<_, _>>()
                    .unwrap();
                let expected = arrow::compute::concat_batches(&expected[0].schema(), &expected).unwrap();
                let reader = Arc::new(file);
                let mut got: Vec<ArrayRef> = Vec::new();
                for g in 0..meta.num_row_groups() {
                    // Must hold for every file written here: the test fails,
                    // rather than passes vacuously, if the reader stops applying.
                    prop_assert!(readable(&meta, g, 0, &field), "group {g} not readable");
                    let mut chunk = DictionaryChunk::new(
                        Path::new("t.parquet"), reader.clone(), &meta, g, 0, &field,
                    ).unwrap();
                    let mut left = meta.row_group(g).num_rows() as usize;
                    while left > 0 {
                        let n = left.min(batch);
                        let d = chunk.read(n).unwrap();
                        prop_assert_eq!(d.len(), n);
                        got.push(arrow::compute::cast(&d, field.data_type()).unwrap());
                        left -= n;
                    }
                }
                let got: Vec<&dyn Array> = got.iter().map(|a| a.as_ref()).collect();
                let got = arrow::compute::concat(&got).unwrap();
                prop_assert_eq!(got.to_data(), expected.column(0).to_data());
            }
        }
    }
}
