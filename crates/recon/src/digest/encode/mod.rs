//! The canonical row encoding and the 128-bit row digest.
//!
//! Two rows are "the same row" for recon exactly when their canonical
//! encodings are byte-identical. The encoding is value-based, so the same
//! logical value stored differently (dictionary vs plain, Utf8 vs LargeUtf8 vs
//! Utf8View, Int32 vs Int64, DECIMAL(10,2) vs DECIMAL(38,6)) encodes the same,
//! and it is self-delimiting, so concatenating the values of a row is
//! injective: `('ab','c')` and `('a','bc')` cannot encode alike, and NULL
//! never encodes like any string.
//!
//! The full specification, with test vectors, is in `docs/encoding.md`; the
//! vectors are checked by the unit tests at the bottom of this file.
//!
//! # Layout (encoding version 1)
//!
//! Every value starts with a one-byte tag. Integers are little-endian.
//! `varint` is unsigned LEB128.
//!
//! | tag  | value class                  | payload                                              |
//! |------|------------------------------|------------------------------------------------------|
//! | 0x00 | NULL (any type)              | none                                                 |
//! | 0x01 | boolean                      | 1 byte: 0 or 1                                       |
//! | 0x02 | integer (any width, signed or not) that fits i64 | i64, 8 bytes                 |
//! | 0x0E | integer beyond i64 (UInt64 > i64::MAX) | i128, 16 bytes                          |
//! | 0x03 | float (f16/f32/f64)          | f64 bits, 8 bytes; every NaN → 0x7ff8000000000000, -0.0 → 0.0 |
//! | 0x04 | decimal, mantissa fits i64   | scale i16 (2 bytes) + mantissa i64 (8 bytes), normalized |
//! | 0x05 | decimal, wider mantissa      | scale i16 + mantissa i256 (32 bytes), normalized     |
//! | 0x06 | string (Utf8, LargeUtf8, Utf8View) | varint byte length + UTF-8 bytes               |
//! | 0x07 | binary (Binary, LargeBinary, BinaryView, FixedSizeBinary) | varint length + bytes  |
//! | 0x08 | date (Date32, Date64)        | i64 milliseconds since 1970-01-01                    |
//! | 0x09 | timestamp without time zone  | seconds since the epoch (i64, floored) + nanoseconds (u32), wall clock |
//! | 0x0A | timestamp with a time zone   | seconds (i64) + nanoseconds (u32) of the UTC instant |
//! | 0x0B | time of day (Time32, Time64) | i64 nanoseconds since midnight                       |
//! | 0x0C | duration                     | seconds (i64, floored) + nanoseconds (u32)           |
//! | 0x0D | interval                     | months i32 + days i32 + nanoseconds i64              |
//! | 0x10 | list (List, LargeList, FixedSizeList) | varint element count + each element's encoding |
//! | 0x11 | struct                       | varint field count + per field, in field-name order: varint name length, name, value |
//! | 0x12 | map                          | varint entry count + entries (key encoding ++ value encoding) sorted bytewise |
//!
//! A decimal is normalized by stripping trailing decimal zeros from the
//! mantissa (adjusting the scale), and zero is mantissa 0 with scale 0, so
//! 1.50 in DECIMAL(10,2) and 1.500000 in DECIMAL(38,6) both encode as
//! mantissa 15, scale 1.
//!
//! # Digests (encoding version 2)
//!
//! Each value's encoding `e` gets a 128-bit **value digest** `V(e)`: when `e`
//! is at most 16 bytes (every fixed-width value, and strings of up to 14
//! bytes), `V(e) = P(e zero-padded to 16 bytes, read little-endian)`, where
//! `P` is a fixed bijection of 128-bit integers, so distinct short values
//! never share a digest; longer encodings use `V(e) = XXH3-128(e)`. The
//! **row digest** combines the compared columns `c = 0, 1, …` (plan order):
//! `D = Q(Σ_c (V_c ⊕ A_c) · B_c mod 2^128)`, with column constants `A_c` and
//! odd `B_c`, and `Q` another bijection with a nonlinear mix, so a sum of row
//! digests does not reduce to per-column multisets. Value digests are
//! computed column at a time in tight loops and are the per-column digests
//! keyed mode and fingerprints use. See docs/encoding.md for the constants,
//! test vectors and the collision argument.

use arrow::array::{
    Array, ArrayRef, AsArray, BooleanArray, FixedSizeBinaryArray, GenericByteArray,
    GenericByteViewArray, PrimitiveArray,
};
use std::sync::Arc;

use arrow::array::ArrayData;
use arrow::buffer::NullBuffer;
use arrow::datatypes::*;
use xxhash_rust::xxh3::xxh3_128;

/// Version of the canonical encoding and digests. Bumped on any change to
/// the bytes or to how digests are computed from them. Version 1 hashed the
/// concatenated row encoding with XXH3-128; version 2 combines value digests.
pub const ENCODING_VERSION: u32 = 2;

/// Constants of the digest construction (docs/encoding.md lists them).
pub mod constants {
    /// `P`: the value permutation, a three-round Feistel network on the
    /// 64-bit halves whose round function is a folded 64×64→128 multiply.
    pub const P_XOR: u128 = 0x243f_6a88_85a3_08d3_1319_8a2e_0370_7344;
    pub const P_KEYS: [u64; 3] = [
        0x9e37_79b9_7f4a_7c15,
        0xf39c_c060_5ced_c835,
        0xbf58_476d_1ce4_e5b9,
    ];
    pub const P_MULS: [u64; 3] = [
        0x94d0_49bb_1331_11eb,
        0xd6e8_feb8_6659_fd93,
        0xa076_1d64_78bd_642f,
    ];
    /// `Q`: the final row mix.
    pub const Q_XOR: u128 = 0xa409_3822_299f_31d0_082e_fa98_ec4e_6c89;
    pub const Q_MUL1: u128 = 0xff51_afd7_ed55_8ccd_c4ce_b9fe_1a85_ec53;
    pub const Q_MUL2: u128 = 0xd6e8_feb8_6659_fd93_a076_1d64_78bd_642f;
    /// Seeds of the column constants `A_c`, `B_c` (splitmix64 streams; both
    /// 64-bit halves of `B_c` are odd).
    pub const A_SEED: u64 = 0x6a09_e667_f3bc_c908;
    pub const B_SEED: u64 = 0xbb67_ae85_84ca_a73b;
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
fn p(x: u128) -> u128 {
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
pub fn q(x: u128) -> u128 {
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
pub fn column_constants(c: usize) -> (u128, u128) {
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
fn term(v: u128, a: u128, b: u128) -> u128 {
    let x = v ^ a;
    let lo = (x as u64).wrapping_mul(b as u64);
    let hi = ((x >> 64) as u64).wrapping_mul((b >> 64) as u64);
    ((hi as u128) << 64) | lo as u128
}

/// Adds two row sums lane by lane (each 64-bit half mod 2^64).
#[inline(always)]
fn lane_add(acc: u128, t: u128) -> u128 {
    let lo = (acc as u64).wrapping_add(t as u64);
    let hi = ((acc >> 64) as u64).wrapping_add((t >> 64) as u64);
    ((hi as u128) << 64) | lo as u128
}

/// The row digest of already computed value digests, one per compared column.
pub fn combine(values: &[u128]) -> u128 {
    let acc = values.iter().enumerate().fold(0u128, |acc, (c, &v)| {
        let (a, b) = column_constants(c);
        lane_add(acc, term(v, a, b))
    });
    q(acc)
}

/// The value digest of NULL (of any type): `V(0x00)`. No other value's
/// digest equals it, since `P` is a bijection and every other encoding
/// starts with a non-zero tag.
pub fn null_digest() -> u128 {
    p(tag::NULL as u128)
}

/// Combines value digests into a row digest with precomputed column
/// constants: [`combine`] for many rows. Keyed mode digests its key columns
/// with one (positions `0..k` in key order), so the key digest of a row is
/// the row digest of its key columns alone.
#[derive(Debug, Clone)]
pub struct Combiner {
    constants: Vec<(u128, u128)>,
}

impl Combiner {
    /// A combiner for `columns` value digests per row.
    pub fn new(columns: usize) -> Combiner {
        Combiner {
            constants: (0..columns).map(column_constants).collect(),
        }
    }

    /// `combine` of the values, one per column, in column order.
    #[inline]
    pub fn digest(&self, values: impl IntoIterator<Item = u128>) -> u128 {
        let acc = values
            .into_iter()
            .zip(&self.constants)
            .fold(0u128, |acc, (v, &(a, b))| lane_add(acc, term(v, a, b)));
        q(acc)
    }
}

/// Value tags; see the module documentation.
pub mod tag {
    pub const NULL: u8 = 0x00;
    pub const BOOL: u8 = 0x01;
    pub const INT: u8 = 0x02;
    pub const FLOAT: u8 = 0x03;
    pub const DECIMAL: u8 = 0x04;
    pub const DECIMAL_WIDE: u8 = 0x05;
    pub const UTF8: u8 = 0x06;
    pub const BINARY: u8 = 0x07;
    pub const DATE: u8 = 0x08;
    pub const TIMESTAMP: u8 = 0x09;
    pub const TIMESTAMP_UTC: u8 = 0x0A;
    pub const TIME: u8 = 0x0B;
    pub const DURATION: u8 = 0x0C;
    pub const INTERVAL: u8 = 0x0D;
    pub const INT_WIDE: u8 = 0x0E;
    pub const LIST: u8 = 0x10;
    pub const STRUCT: u8 = 0x11;
    pub const MAP: u8 = 0x12;
}

/// Returns `Err(reason)` when recon has no canonical encoding for `dt`.
pub fn check_supported(dt: &DataType) -> Result<(), String> {
    use DataType::*;
    match dt {
        Null | Boolean | Int8 | Int16 | Int32 | Int64 | UInt8 | UInt16 | UInt32 | UInt64
        | Float16 | Float32 | Float64 | Decimal32(..) | Decimal64(..) | Decimal128(..)
        | Decimal256(..) | Utf8 | LargeUtf8 | Utf8View | Binary | LargeBinary | BinaryView
        | FixedSizeBinary(_) | Date32 | Date64 | Timestamp(..) | Time32(_) | Time64(_)
        | Duration(_) | Interval(_) => Ok(()),
        List(f) | LargeList(f) | FixedSizeList(f, _) => check_supported(f.data_type()),
        Struct(fields) => fields
            .iter()
            .try_for_each(|f| check_supported(f.data_type())),
        Map(entries, _) => check_supported(entries.data_type()),
        Dictionary(_, values) => check_supported(values),
        other => Err(format!("{other} has no canonical encoding")),
    }
}

fn put_varint(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

#[inline]
fn canonical_f64(v: f64) -> [u8; 8] {
    let v = if v.is_nan() {
        f64::NAN
    } else if v == 0.0 {
        0.0
    } else {
        v
    };
    // f64::NAN is the quiet NaN 0x7ff8000000000000 on every platform Rust supports.
    v.to_bits().to_le_bytes()
}

/// Strips trailing decimal zeros: `(1500, 3)` → `(15, 1)`; zero → `(0, 0)`.
#[inline]
fn normalize_decimal_i64(mut m: i64, mut scale: i32) -> (i64, i32) {
    if m == 0 {
        return (0, 0);
    }
    while m % 10 == 0 {
        m /= 10;
        scale -= 1;
    }
    (m, scale)
}

/// Payload of tag DECIMAL: normalized scale (i16) and mantissa (i64).
#[inline]
fn decimal_bytes(m: i64, scale: i32) -> [u8; 10] {
    let (m, scale) = normalize_decimal_i64(m, scale);
    let mut b = [0u8; 10];
    b[..2].copy_from_slice(&(scale as i16).to_le_bytes());
    b[2..].copy_from_slice(&m.to_le_bytes());
    b
}

/// Any decimal, up to a 256-bit mantissa: DECIMAL when the normalized
/// mantissa fits i64, DECIMAL_WIDE otherwise.
fn push_decimal(out: &mut Vec<u8>, v: i256, scale: i32) {
    if let Some(small) = v.to_i128().and_then(|x| i64::try_from(x).ok()) {
        return push_tagged(out, tag::DECIMAL, &decimal_bytes(small, scale));
    }
    let ten = i256::from_i128(10);
    let (mut m, mut s) = (v, scale);
    while m.wrapping_rem(ten) == i256::ZERO {
        m = m.wrapping_div(ten);
        s -= 1;
    }
    match m.to_i128().and_then(|x| i64::try_from(x).ok()) {
        Some(small) => push_tagged(out, tag::DECIMAL, &decimal_bytes(small, s)),
        None => {
            out.push(tag::DECIMAL_WIDE);
            out.extend_from_slice(&(s as i16).to_le_bytes());
            out.extend_from_slice(&m.to_le_bytes());
        }
    }
}

/// Integers: INT with an i64 payload when the value fits (every value of
/// every integer type except UInt64 above i64::MAX), INT_WIDE otherwise.
#[inline]
fn push_int(out: &mut Vec<u8>, v: i128) {
    match i64::try_from(v) {
        Ok(small) => push_tagged(out, tag::INT, &small.to_le_bytes()),
        Err(_) => push_tagged(out, tag::INT_WIDE, &v.to_le_bytes()),
    }
}

/// An instant or span counted in units with `PER_SEC` units per second, as
/// whole seconds (floored, i64) and the nanoseconds past them (u32). This
/// holds every value of every unit without overflow.
#[inline]
fn seconds_nanos<const PER_SEC: i64>(v: i64) -> [u8; 12] {
    let secs = v.div_euclid(PER_SEC);
    let nanos = (v.rem_euclid(PER_SEC) * (1_000_000_000 / PER_SEC)) as u32;
    let mut b = [0u8; 12];
    b[..8].copy_from_slice(&secs.to_le_bytes());
    b[8..].copy_from_slice(&nanos.to_le_bytes());
    b
}

fn seconds_nanos_of(v: i64, unit: &TimeUnit) -> [u8; 12] {
    match unit {
        TimeUnit::Second => seconds_nanos::<1>(v),
        TimeUnit::Millisecond => seconds_nanos::<1_000>(v),
        TimeUnit::Microsecond => seconds_nanos::<1_000_000>(v),
        TimeUnit::Nanosecond => seconds_nanos::<1_000_000_000>(v),
    }
}

fn time_unit_nanos(unit: &TimeUnit) -> i64 {
    crate::units::nanos_per(*unit)
}

fn interval_bytes(months: i32, days: i32, nanos: i64) -> [u8; 16] {
    let mut b = [0u8; 16];
    b[..4].copy_from_slice(&months.to_le_bytes());
    b[4..8].copy_from_slice(&days.to_le_bytes());
    b[8..].copy_from_slice(&nanos.to_le_bytes());
    b
}

fn push_tagged(out: &mut Vec<u8>, t: u8, payload: &[u8]) {
    out.push(t);
    out.extend_from_slice(payload);
}

fn push_bytes(out: &mut Vec<u8>, t: u8, bytes: &[u8]) {
    out.push(t);
    put_varint(out, bytes.len() as u64);
    out.extend_from_slice(bytes);
}

/// Appends the canonical encoding of `array[row]` to `out`.
///
/// This is the reference implementation of the specification: simple,
/// value-at-a-time, and used for nested types. The column-wise fast paths in
/// [`RowEncoder`] must produce the same bytes; a unit test checks that.
pub fn encode_value(array: &dyn Array, row: usize, out: &mut Vec<u8>) -> Result<(), String> {
    use DataType::*;
    if array.is_null(row) {
        out.push(tag::NULL);
        return Ok(());
    }
    macro_rules! int {
        ($t:ty) => {
            push_int(out, array.as_primitive::<$t>().value(row) as i128)
        };
    }
    match array.data_type() {
        Null => out.push(tag::NULL),
        Boolean => push_tagged(out, tag::BOOL, &[array.as_boolean().value(row) as u8]),
        Int8 => int!(Int8Type),
        Int16 => int!(Int16Type),
        Int32 => int!(Int32Type),
        Int64 => int!(Int64Type),
        UInt8 => int!(UInt8Type),
        UInt16 => int!(UInt16Type),
        UInt32 => int!(UInt32Type),
        UInt64 => int!(UInt64Type),
        Float16 => push_tagged(
            out,
            tag::FLOAT,
            &canonical_f64(array.as_primitive::<Float16Type>().value(row).to_f64()),
        ),
        Float32 => push_tagged(
            out,
            tag::FLOAT,
            &canonical_f64(array.as_primitive::<Float32Type>().value(row) as f64),
        ),
        Float64 => push_tagged(
            out,
            tag::FLOAT,
            &canonical_f64(array.as_primitive::<Float64Type>().value(row)),
        ),
        Decimal32(_, s) => push_decimal(
            out,
            i256::from_i128(array.as_primitive::<Decimal32Type>().value(row) as i128),
            *s as i32,
        ),
        Decimal64(_, s) => push_decimal(
            out,
            i256::from_i128(array.as_primitive::<Decimal64Type>().value(row) as i128),
            *s as i32,
        ),
        Decimal128(_, s) => push_decimal(
            out,
            i256::from_i128(array.as_primitive::<Decimal128Type>().value(row)),
            *s as i32,
        ),
        Decimal256(_, s) => push_decimal(
            out,
            array.as_primitive::<Decimal256Type>().value(row),
            *s as i32,
        ),
        Utf8 => push_bytes(
            out,
            tag::UTF8,
            array.as_string::<i32>().value(row).as_bytes(),
        ),
        LargeUtf8 => push_bytes(
            out,
            tag::UTF8,
            array.as_string::<i64>().value(row).as_bytes(),
        ),
        Utf8View => push_bytes(out, tag::UTF8, array.as_string_view().value(row).as_bytes()),
        Binary => push_bytes(out, tag::BINARY, array.as_binary::<i32>().value(row)),
        LargeBinary => push_bytes(out, tag::BINARY, array.as_binary::<i64>().value(row)),
        BinaryView => push_bytes(out, tag::BINARY, array.as_binary_view().value(row)),
        FixedSizeBinary(_) => push_bytes(out, tag::BINARY, array.as_fixed_size_binary().value(row)),
        Date32 => push_tagged(
            out,
            tag::DATE,
            &(array.as_primitive::<Date32Type>().value(row) as i64 * 86_400_000).to_le_bytes(),
        ),
        Date64 => push_tagged(
            out,
            tag::DATE,
            &array.as_primitive::<Date64Type>().value(row).to_le_bytes(),
        ),
        Timestamp(unit, tz) => {
            let v = match unit {
                TimeUnit::Second => array.as_primitive::<TimestampSecondType>().value(row),
                TimeUnit::Millisecond => {
                    array.as_primitive::<TimestampMillisecondType>().value(row)
                }
                TimeUnit::Microsecond => {
                    array.as_primitive::<TimestampMicrosecondType>().value(row)
                }
                TimeUnit::Nanosecond => array.as_primitive::<TimestampNanosecondType>().value(row),
            };
            let t = if tz.is_some() {
                tag::TIMESTAMP_UTC
            } else {
                tag::TIMESTAMP
            };
            push_tagged(out, t, &seconds_nanos_of(v, unit));
        }
        Time32(unit) => {
            let v = match unit {
                TimeUnit::Second => array.as_primitive::<Time32SecondType>().value(row),
                _ => array.as_primitive::<Time32MillisecondType>().value(row),
            } as i64;
            let nanos = v
                .checked_mul(time_unit_nanos(unit))
                .ok_or_else(|| format!("time of day {v} is out of range"))?;
            push_tagged(out, tag::TIME, &nanos.to_le_bytes());
        }
        Time64(unit) => {
            let v = match unit {
                TimeUnit::Microsecond => array.as_primitive::<Time64MicrosecondType>().value(row),
                _ => array.as_primitive::<Time64NanosecondType>().value(row),
            };
            let nanos = v
                .checked_mul(time_unit_nanos(unit))
                .ok_or_else(|| format!("time of day {v} is out of range"))?;
            push_tagged(out, tag::TIME, &nanos.to_le_bytes());
        }
        Duration(unit) => {
            let v = match unit {
                TimeUnit::Second => array.as_primitive::<DurationSecondType>().value(row),
                TimeUnit::Millisecond => array.as_primitive::<DurationMillisecondType>().value(row),
                TimeUnit::Microsecond => array.as_primitive::<DurationMicrosecondType>().value(row),
                TimeUnit::Nanosecond => array.as_primitive::<DurationNanosecondType>().value(row),
            };
            push_tagged(out, tag::DURATION, &seconds_nanos_of(v, unit));
        }
        Interval(IntervalUnit::YearMonth) => {
            let months = array.as_primitive::<IntervalYearMonthType>().value(row);
            push_tagged(out, tag::INTERVAL, &interval_bytes(months, 0, 0));
        }
        Interval(IntervalUnit::DayTime) => {
            let v = array.as_primitive::<IntervalDayTimeType>().value(row);
            let nanos = v.milliseconds as i64 * 1_000_000;
            push_tagged(out, tag::INTERVAL, &interval_bytes(0, v.days, nanos));
        }
        Interval(IntervalUnit::MonthDayNano) => {
            let v = array.as_primitive::<IntervalMonthDayNanoType>().value(row);
            push_tagged(
                out,
                tag::INTERVAL,
                &interval_bytes(v.months, v.days, v.nanoseconds),
            );
        }
        List(_) => encode_list(&array.as_list::<i32>().value(row), out)?,
        LargeList(_) => encode_list(&array.as_list::<i64>().value(row), out)?,
        FixedSizeList(..) => encode_list(&array.as_fixed_size_list().value(row), out)?,
        Struct(fields) => {
            let s = array.as_struct();
            let mut order: Vec<usize> = (0..fields.len()).collect();
            order.sort_by(|&a, &b| fields[a].name().cmp(fields[b].name()));
            out.push(tag::STRUCT);
            put_varint(out, fields.len() as u64);
            for i in order {
                let name = fields[i].name().as_bytes();
                put_varint(out, name.len() as u64);
                out.extend_from_slice(name);
                encode_value(s.column(i).as_ref(), row, out)?;
            }
        }
        Map(..) => {
            let m = array.as_map();
            let offsets = m.value_offsets();
            let (start, end) = (offsets[row] as usize, offsets[row + 1] as usize);
            let (keys, values) = (m.keys(), m.values());
            let mut entries: Vec<Vec<u8>> = Vec::with_capacity(end - start);
            for j in start..end {
                let mut e = Vec::new();
                encode_value(keys.as_ref(), j, &mut e)?;
                encode_value(values.as_ref(), j, &mut e)?;
                entries.push(e);
            }
            // A map is an unordered set of entries: sort them so storage order is irrelevant.
            entries.sort_unstable();
            out.push(tag::MAP);
            put_varint(out, entries.len() as u64);
            for e in entries {
                out.extend_from_slice(&e);
            }
        }
        Dictionary(..) => {
            let dict = array
                .as_any_dictionary_opt()
                .ok_or_else(|| "dictionary array expected".to_string())?;
            if dict.values().is_empty() {
                return Err("dictionary key points into an empty dictionary".into());
            }
            let key = dict.normalized_keys()[row];
            encode_value(dict.values().as_ref(), key, out)?;
        }
        other => return Err(format!("{other} has no canonical encoding")),
    }
    Ok(())
}

fn encode_list(values: &ArrayRef, out: &mut Vec<u8>) -> Result<(), String> {
    out.push(tag::LIST);
    put_varint(out, values.len() as u64);
    for j in 0..values.len() {
        encode_value(values.as_ref(), j, out)?;
    }
    Ok(())
}

/// One column's contribution to the row-major encoding buffer, written
/// column-at-a-time so the inner loops are tight and monomorphic.
trait ColumnWriter {
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

/// Where a column's value digests go: appended to a list (when the caller
/// wants per-column digests), or straight into the row sums as the column's
/// term `T_c(V)`, without a buffer written and read back per column.
enum Out<'a> {
    List(&'a mut Vec<u128>),
    Sum {
        acc: &'a mut [u128],
        a: u128,
        b: u128,
    },
}

impl Out<'_> {
    /// Hands `digest(row)` for every row `0..rows` on: one monomorphic loop
    /// per writer and destination.
    #[inline(always)]
    fn fill(self, rows: usize, mut digest: impl FnMut(usize) -> u128) {
        match self {
            Out::List(out) => out.extend((0..rows).map(digest)),
            Out::Sum { acc, a, b } => {
                for (row, s) in acc[..rows].iter_mut().enumerate() {
                    *s = lane_add(*s, term(digest(row), a, b));
                }
            }
        }
    }
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

/// Values encoded up front with the reference encoder; rows then pick a slice.
/// Used for nested types, and for dictionaries (each distinct value is encoded
/// once, rows index it by key).
struct PreEncodedWriter {
    values: Arc<PreEncoded>,
    /// Row → value index; `None` is a NULL row. Absent means row `i` is value `i`.
    keys: Option<Vec<Option<usize>>>,
}

/// The canonical encodings of every value of an array, back to back, and
/// their value digests.
struct PreEncoded {
    data: Vec<u8>,
    /// `offsets[k]..offsets[k + 1]` is the encoding of value `k`.
    offsets: Vec<usize>,
    digests: Vec<u128>,
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
        }))
    }

    fn slice(&self, row: usize) -> &[u8] {
        const NULL: &[u8] = &[tag::NULL];
        let k = match &self.keys {
            None => row,
            Some(keys) => match keys[row] {
                Some(k) => k,
                None => return NULL,
            },
        };
        &self.values.data[self.values.offsets[k]..self.values.offsets[k + 1]]
    }
}

impl ColumnWriter for PreEncodedWriter {
    fn append(&self, row: usize, out: &mut Vec<u8>) {
        out.extend_from_slice(self.slice(row));
    }

    fn value_digests(&self, rows: usize, out: Out<'_>, _: &mut Vec<u8>) {
        let d = &self.values.digests[..];
        match &self.keys {
            None => {
                let d = &d[..rows];
                out.fill(rows, |row| d[row])
            }
            Some(keys) => {
                let keys = &keys[..rows];
                let null = p(tag::NULL as u128);
                out.fill(rows, |row| keys[row].map_or(null, |k| d[k]))
            }
        }
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
        let at = |row: usize| table[(keys[row].into() - min) as usize];
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

fn column_writer(array: &dyn Array) -> Result<Box<dyn ColumnWriter + '_>, String> {
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
            keys: None,
        }),
    })
}

/// A dictionary's values encoded once, with the values array they came
/// from (held, so its buffers cannot be freed and their addresses reused).
type DictCache = Option<(ArrayData, Arc<PreEncoded>)>;

/// A writer for a dictionary array: each distinct value is encoded once, and
/// with a cache, once for all the batches that share the same dictionary
/// (Parquet readers hand out one dictionary per column chunk).
fn dictionary_writer<'a>(
    array: &'a dyn Array,
    cache: Option<&mut DictCache>,
) -> Result<Box<dyn ColumnWriter + 'a>, String> {
    let dict = array
        .as_any_dictionary_opt()
        .ok_or_else(|| "dictionary array expected".to_string())?;
    let values_data = dict.values().to_data();
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
    let keys = dict.keys();
    // An all-NULL batch may carry an empty dictionary (Parquet writes
    // them); arrow's normalized_keys panics on that, so skip it.
    let keys: Vec<Option<usize>> = if dict.values().is_empty() {
        if keys.null_count() != keys.len() {
            return Err("dictionary key points into an empty dictionary".into());
        }
        vec![None; keys.len()]
    } else {
        let normalized = dict.normalized_keys();
        (0..array.len())
            .map(|i| keys.is_valid(i).then(|| normalized[i]))
            .collect()
    };
    Ok(Box::new(PreEncodedWriter {
        values,
        keys: Some(keys),
    }))
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
    pub fn new() -> Self {
        Self::default()
    }

    /// An encoder whose `digests_with_columns` hands out the value digests
    /// of only the columns marked in `keep`.
    pub fn keeping(keep: std::sync::Arc<[bool]>) -> Self {
        RowEncoder {
            keep: Some(keep),
            ..Self::default()
        }
    }

    /// Appends the 128-bit digest of every row of `columns` to `out`.
    pub fn digests(&mut self, columns: &[ArrayRef], out: &mut Vec<u128>) -> Result<(), String> {
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
        mut per_column: Option<&mut Vec<Vec<u128>>>,
    ) -> Result<(), String> {
        let rows = columns.first().map_or(0, |c| c.len());
        if self.dictionaries.len() < columns.len() {
            self.dictionaries.resize_with(columns.len(), || None);
        }
        if let Some(pc) = per_column.as_deref_mut() {
            pc.resize_with(columns.len(), Vec::new);
        }
        self.acc.clear();
        self.acc.resize(rows, 0);
        for (c, (array, cache)) in columns.iter().zip(self.dictionaries.iter_mut()).enumerate() {
            let writer = match array.data_type() {
                DataType::Dictionary(..) => dictionary_writer(array.as_ref(), Some(cache))?,
                _ => column_writer(array.as_ref())?,
            };
            if array.len() != rows {
                return Err(format!(
                    "column {c}: {} values for {rows} rows",
                    array.len()
                ));
            }
            let (a, b) = column_constants(c);
            let kept = per_column.as_deref_mut().filter(|_| {
                self.keep
                    .as_ref()
                    .is_none_or(|k| k.get(c).copied().unwrap_or(true))
            });
            match kept {
                // Per-column digests wanted: list them, then add their terms.
                Some(pc) => {
                    let list = &mut pc[c];
                    let from = list.len();
                    writer.value_digests(rows, Out::List(list), &mut self.scratch);
                    for (acc, &v) in self.acc.iter_mut().zip(&list[from..]) {
                        *acc = lane_add(*acc, term(v, a, b));
                    }
                }
                None => writer.value_digests(
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
    pub fn encode_one(&mut self, columns: &[ArrayRef], row: usize) -> Result<Vec<u8>, String> {
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
/// digest, then [`combine`]. The fast path must agree (property-tested).
pub fn reference_digest(columns: &[ArrayRef], row: usize) -> Result<u128, String> {
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
pub fn encode_row(columns: &[ArrayRef], row: usize) -> Result<Vec<u8>, String> {
    let mut out = Vec::new();
    for c in columns {
        encode_value(c.as_ref(), row, &mut out)?;
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use arrow::array::*;
    use arrow::buffer::OffsetBuffer;
    use std::sync::Arc;

    fn one(a: ArrayRef) -> Vec<u8> {
        encode_row(&[a], 0).unwrap()
    }

    #[test]
    fn the_combiner_is_combine_and_null_has_its_own_digest() {
        let values = [1u128, u128::MAX, 7 << 64];
        assert_eq!(Combiner::new(3).digest(values), combine(&values));
        // Key digests of a composite key are row digests of the key columns.
        let a: ArrayRef = Arc::new(StringArray::from(vec!["ab", "a"]));
        let b: ArrayRef = Arc::new(StringArray::from(vec!["c", "bc"]));
        let mut rows = Vec::new();
        let mut per = Vec::new();
        RowEncoder::new()
            .digests_with_columns(&[a, b], &mut rows, Some(&mut per))
            .unwrap();
        let keys: Vec<u128> = (0..2)
            .map(|i| Combiner::new(2).digest([per[0][i], per[1][i]]))
            .collect();
        assert_eq!(keys, rows);
        assert_ne!(keys[0], keys[1]);
        assert_eq!(null_digest(), value_digest(&[tag::NULL]));
        let n: ArrayRef = Arc::new(StringArray::from(vec![None, Some(""), Some("NULL")]));
        let mut d = Vec::new();
        let mut per = Vec::new();
        RowEncoder::new()
            .digests_with_columns(&[n], &mut d, Some(&mut per))
            .unwrap();
        assert_eq!(per[0][0], null_digest());
        assert!(per[0][1..].iter().all(|&v| v != null_digest()));
    }

    fn digest_of(cols: Vec<ArrayRef>) -> Vec<u128> {
        let mut out = Vec::new();
        RowEncoder::new().digests(&cols, &mut out).unwrap();
        out
    }

    fn hex(b: &[u8]) -> String {
        b.iter().map(|x| format!("{x:02x}")).collect()
    }

    /// A map array with string keys and nullable Int64 values.
    fn string_int_map(keys: Vec<&str>, values: Vec<Option<i64>>, offsets: Vec<i32>) -> MapArray {
        let entries = StructArray::from(vec![
            (
                Arc::new(Field::new("keys", DataType::Utf8, false)),
                Arc::new(StringArray::from(keys)) as ArrayRef,
            ),
            (
                Arc::new(Field::new("values", DataType::Int64, true)),
                Arc::new(Int64Array::from(values)) as ArrayRef,
            ),
        ]);
        let field = Arc::new(Field::new("entries", entries.data_type().clone(), false));
        MapArray::new(
            field,
            OffsetBuffer::new(offsets.into()),
            entries,
            None,
            false,
        )
    }

    /// A batch touching every fast path and the reference fallback.
    fn wide_batch() -> Vec<ArrayRef> {
        let dict: DictionaryArray<Int32Type> = vec![Some("x"), None, Some("y"), Some("x")]
            .into_iter()
            .collect();
        let map = string_int_map(
            vec!["a", "b", "c"],
            vec![Some(1), None, Some(3)],
            vec![0, 2, 2, 3, 3],
        );
        let strukt = StructArray::from(vec![
            (
                Arc::new(Field::new("b", DataType::Int32, true)),
                Arc::new(Int32Array::from(vec![Some(1), None, Some(3), Some(4)])) as ArrayRef,
            ),
            (
                Arc::new(Field::new("a", DataType::Utf8, true)),
                Arc::new(StringArray::from(vec![
                    Some("p"),
                    Some(""),
                    None,
                    Some("q"),
                ])) as ArrayRef,
            ),
        ]);
        vec![
            Arc::new(BooleanArray::from(vec![
                Some(true),
                None,
                Some(false),
                Some(true),
            ])),
            Arc::new(Int8Array::from(vec![
                Some(-1),
                None,
                Some(7),
                Some(i8::MIN),
            ])),
            Arc::new(UInt64Array::from(vec![
                Some(u64::MAX),
                Some(0),
                None,
                Some(5),
            ])),
            Arc::new(Float32Array::from(vec![
                Some(1.5),
                Some(f32::NAN),
                Some(-0.0),
                None,
            ])),
            Arc::new(Float64Array::from(vec![
                Some(-0.0),
                None,
                Some(f64::INFINITY),
                Some(2.25),
            ])),
            Arc::new(
                Decimal128Array::from(vec![Some(150), Some(0), None, Some(-1000)])
                    .with_precision_and_scale(10, 2)
                    .unwrap(),
            ),
            Arc::new(
                Decimal256Array::from(vec![
                    Some(i256::from_i128(1500)),
                    None,
                    Some(i256::MAX),
                    Some(i256::ZERO),
                ])
                .with_precision_and_scale(76, 3)
                .unwrap(),
            ),
            Arc::new(StringArray::from(vec![
                Some("ab"),
                Some(""),
                None,
                Some("NULL"),
            ])),
            Arc::new(LargeStringArray::from(vec![
                Some("c"),
                Some(" "),
                Some("é"),
                None,
            ])),
            Arc::new(StringViewArray::from(vec![
                Some("a string longer than twelve bytes"),
                None,
                Some("s"),
                Some(""),
            ])),
            Arc::new(BinaryArray::from(vec![
                Some(&b"\x00\x01"[..]),
                None,
                Some(b""),
                Some(b"z"),
            ])),
            Arc::new(Date32Array::from(vec![
                Some(0),
                Some(-1),
                None,
                Some(19000),
            ])),
            Arc::new(TimestampMillisecondArray::from(vec![
                Some(1),
                None,
                Some(-5),
                Some(0),
            ])),
            Arc::new(
                TimestampMicrosecondArray::from(vec![Some(1), Some(2), None, Some(3)])
                    .with_timezone("+02:00"),
            ),
            Arc::new(dict),
            Arc::new(ListArray::from_iter_primitive::<Int32Type, _, _>(vec![
                Some(vec![Some(1), None]),
                None,
                Some(vec![]),
                Some(vec![Some(2)]),
            ])),
            Arc::new(strukt),
            Arc::new(map),
            Arc::new(NullArray::new(4)),
        ]
    }

    #[test]
    fn narrow_integer_columns_digest_like_the_reference() {
        // Wide enough for the per-batch table (span < rows / 4), with NULLs,
        // negative values and a slice; and one too wide for it.
        let n: usize = 1000;
        let small: ArrayRef = Arc::new(Int32Array::from_iter(
            (0..n).map(|i| (i % 7 != 3).then_some((i * 37 % 200) as i32 - 100)),
        ));
        let dates: ArrayRef = Arc::new(Date32Array::from_iter_values(
            (0..n).map(|i| 18_000 + (i * 13 % 150) as i32),
        ));
        let bytes: ArrayRef = Arc::new(UInt8Array::from_iter_values((0..n).map(|i| i as u8)));
        let wide: ArrayRef = Arc::new(Int64Array::from_iter_values(
            (0..n).map(|i| (i as i64) << 40),
        ));
        let cols = vec![small, dates, bytes, wide];
        for cols in [cols.clone(), cols.iter().map(|c| c.slice(3, 900)).collect()] {
            let mut digests = Vec::new();
            let mut per = Vec::new();
            RowEncoder::new()
                .digests_with_columns(&cols, &mut digests, Some(&mut per))
                .unwrap();
            for (row, digest) in digests.iter().enumerate() {
                assert_eq!(*digest, reference_digest(&cols, row).unwrap(), "row {row}");
                for (c, col) in cols.iter().enumerate() {
                    let mut e = Vec::new();
                    encode_value(col.as_ref(), row, &mut e).unwrap();
                    assert_eq!(per[c][row], value_digest(&e), "row {row} column {c}");
                }
            }
        }
    }

    #[test]
    fn fast_paths_equal_the_reference_encoder() {
        let cols = wide_batch();
        let mut enc = RowEncoder::new();
        let mut digests = Vec::new();
        enc.digests(&cols, &mut digests).unwrap();
        for (row, digest) in digests.iter().enumerate() {
            let reference = encode_row(&cols, row).unwrap();
            assert_eq!(
                hex(&enc.encode_one(&cols, row).unwrap()),
                hex(&reference),
                "row {row}"
            );
            assert_eq!(*digest, reference_digest(&cols, row).unwrap());
        }
        // Sliced arrays (non-zero offsets) encode the same as their unsliced rows.
        let sliced: Vec<ArrayRef> = cols.iter().map(|c| c.slice(1, 3)).collect();
        for row in 0..3 {
            assert_eq!(
                enc.encode_one(&sliced, row).unwrap(),
                encode_row(&cols, row + 1).unwrap()
            );
        }
    }

    #[test]
    fn test_vectors_from_the_spec() {
        // These exact bytes are documented in docs/encoding.md; changing them
        // changes every digest and requires a new ENCODING_VERSION.
        let null: ArrayRef = Arc::new(StringArray::from(vec![None::<&str>]));
        assert_eq!(hex(&one(null)), "00");
        let s: ArrayRef = Arc::new(StringArray::from(vec!["ab"]));
        assert_eq!(hex(&one(s)), "06026162");
        let empty: ArrayRef = Arc::new(StringArray::from(vec![""]));
        assert_eq!(hex(&one(empty)), "0600");
        let i: ArrayRef = Arc::new(Int32Array::from(vec![-2]));
        assert_eq!(hex(&one(i)), "02feffffffffffffff");
        let f: ArrayRef = Arc::new(Float64Array::from(vec![1.5]));
        assert_eq!(hex(&one(f)), "03000000000000f83f");
        let d: ArrayRef = Arc::new(
            Decimal128Array::from(vec![150])
                .with_precision_and_scale(10, 2)
                .unwrap(),
        );
        assert_eq!(hex(&one(d)), "0401000f00000000000000");
        let b: ArrayRef = Arc::new(BooleanArray::from(vec![true]));
        assert_eq!(hex(&one(b)), "0101");
        let date: ArrayRef = Arc::new(Date32Array::from(vec![1]));
        assert_eq!(hex(&one(date)), "08005c260500000000");
        let l: ArrayRef = Arc::new(ListArray::from_iter_primitive::<Int8Type, _, _>(vec![
            Some(vec![Some(1), None]),
        ]));
        assert_eq!(hex(&one(l)), "100202010000000000000000");
        let ts: ArrayRef = Arc::new(TimestampMillisecondArray::from(vec![-1]));
        assert_eq!(hex(&one(ts)), "09ffffffffffffffffc0878b3b");
        let big: ArrayRef = Arc::new(UInt64Array::from(vec![u64::MAX]));
        assert_eq!(hex(&one(big)), "0effffffffffffffff0000000000000000");
    }

    /// Digest test vectors of encoding version 2, documented in
    /// docs/encoding.md and recomputed there by an independent Python
    /// implementation of the spec (scripts/digest_vectors.py).
    #[test]
    fn digest_vectors_from_the_spec() {
        let v = |e: &[u8]| format!("{:032x}", value_digest(e));
        assert_eq!(v(&[tag::NULL]), VECTORS[0]);
        assert_eq!(v(&hex_bytes("02feffffffffffffff")), VECTORS[1]);
        assert_eq!(v(&hex_bytes("06026162")), VECTORS[2]);
        let (a0, b0) = column_constants(0);
        let (a1, b1) = column_constants(1);
        assert_eq!(format!("{a0:032x}"), VECTORS[3]);
        assert_eq!(format!("{b0:032x}"), VECTORS[4]);
        assert_eq!(format!("{a1:032x}"), VECTORS[5]);
        assert_eq!(format!("{b1:032x}"), VECTORS[6]);
        // The demo's first row, ('north', 100): stable across runs,
        // platforms, batch sizes and thread counts.
        let row = digest_of(vec![
            Arc::new(StringArray::from(vec!["north"])),
            Arc::new(Int64Array::from(vec![100])),
        ]);
        assert_eq!(format!("{:032x}", row[0]), VECTORS[7]);
        // A string longer than 14 bytes takes the XXH3-128 path.
        let long = encode_row(
            &[Arc::new(StringArray::from(vec!["a longer string value"]))],
            0,
        )
        .unwrap();
        assert_eq!(v(&long), format!("{:032x}", xxh3_128(&long)));
        assert_eq!(v(&long), VECTORS[8]);
    }

    fn hex_bytes(h: &str) -> Vec<u8> {
        (0..h.len())
            .step_by(2)
            .map(|i| u8::from_str_radix(&h[i..i + 2], 16).unwrap())
            .collect()
    }

    const VECTORS: [&str; 9] = [
        "736a9cf56a518b388a7ad6c9814ac603",
        "ebc98e8e0919846f44561c4b3139db34",
        "716f5109266eb11169b57f30167ebd37",
        "1ac046dda8e86e2abe2c3b00b1d348c8",
        "0d35b78b9930a2bd80f4d5a8ca972ced",
        "c092b9d3981ecda1b8f05fb9bdfb1c82",
        "4a8035856681dfef3c7581a7ed64c935",
        "4782c54d603d81007ce99b7748fa9eee",
        "6bb100ac22d5938588a8d6192c8c0ce8",
    ];

    #[test]
    fn physical_variants_of_a_value_encode_alike() {
        let same = |a: ArrayRef, b: ArrayRef| assert_eq!(one(a), one(b));
        same(
            Arc::new(Int8Array::from(vec![5])),
            Arc::new(UInt64Array::from(vec![5])),
        );
        same(
            Arc::new(Float32Array::from(vec![1.5])),
            Arc::new(Float64Array::from(vec![1.5])),
        );
        same(
            Arc::new(Float64Array::from(vec![f64::from_bits(
                0x7ff8_0000_0000_0001,
            )])),
            Arc::new(Float64Array::from(vec![-f64::NAN])),
        );
        same(
            Arc::new(Float64Array::from(vec![-0.0])),
            Arc::new(Float64Array::from(vec![0.0])),
        );
        same(
            Arc::new(
                Decimal128Array::from(vec![150])
                    .with_precision_and_scale(10, 2)
                    .unwrap(),
            ),
            Arc::new(
                Decimal256Array::from(vec![i256::from_i128(1_500_000)])
                    .with_precision_and_scale(38, 6)
                    .unwrap(),
            ),
        );
        same(
            Arc::new(
                Decimal128Array::from(vec![0])
                    .with_precision_and_scale(10, 2)
                    .unwrap(),
            ),
            Arc::new(
                Decimal64Array::from(vec![0])
                    .with_precision_and_scale(5, 0)
                    .unwrap(),
            ),
        );
        same(
            Arc::new(StringArray::from(vec!["x"])),
            Arc::new(StringViewArray::from(vec!["x"])),
        );
        let dict: DictionaryArray<Int8Type> = vec!["x"].into_iter().collect();
        same(Arc::new(StringArray::from(vec!["x"])), Arc::new(dict));
        same(
            Arc::new(Date32Array::from(vec![2])),
            Arc::new(Date64Array::from(vec![2 * 86_400_000])),
        );
        same(
            Arc::new(TimestampSecondArray::from(vec![3])),
            Arc::new(TimestampNanosecondArray::from(vec![3_000_000_000])),
        );
        same(
            Arc::new(TimestampSecondArray::from(vec![3]).with_timezone("UTC")),
            Arc::new(TimestampMillisecondArray::from(vec![3000]).with_timezone("+05:00")),
        );
    }

    #[test]
    fn different_values_encode_differently() {
        let differ = |a: Vec<ArrayRef>, b: Vec<ArrayRef>| {
            assert_ne!(encode_row(&a, 0).unwrap(), encode_row(&b, 0).unwrap())
        };
        let s = |v: Option<&str>| Arc::new(StringArray::from(vec![v])) as ArrayRef;
        // NULL, '', ' ', '<NULL>', 'NULL' are five values.
        let five = [None, Some(""), Some(" "), Some("<NULL>"), Some("NULL")];
        for (i, a) in five.iter().enumerate() {
            for b in &five[i + 1..] {
                differ(vec![s(*a)], vec![s(*b)]);
            }
        }
        differ(
            vec![s(Some("ab")), s(Some("c"))],
            vec![s(Some("a")), s(Some("bc"))],
        );
        differ(vec![s(Some("a")), s(None)], vec![s(None), s(Some("a"))]);
        // Naive and zoned timestamps with the same number are different values.
        differ(
            vec![Arc::new(TimestampSecondArray::from(vec![3]))],
            vec![Arc::new(
                TimestampSecondArray::from(vec![3]).with_timezone("UTC"),
            )],
        );
        // Integer 5 is not string "5"; list order matters.
        differ(
            vec![Arc::new(Int64Array::from(vec![5]))],
            vec![s(Some("5"))],
        );
        differ(
            vec![Arc::new(ListArray::from_iter_primitive::<Int32Type, _, _>(
                vec![Some(vec![Some(1), Some(2)])],
            ))],
            vec![Arc::new(ListArray::from_iter_primitive::<Int32Type, _, _>(
                vec![Some(vec![Some(2), Some(1)])],
            ))],
        );
    }

    #[test]
    fn all_null_dictionary_with_no_values_encodes_as_nulls() {
        // Found by tests/encoding_props.rs: arrow's normalized_keys panics on
        // an empty dictionary, which an all-NULL batch may carry.
        let d: DictionaryArray<Int16Type> = vec![None::<&str>, None].into_iter().collect();
        assert!(d.values().is_empty());
        let cols: Vec<ArrayRef> = vec![Arc::new(d)];
        let mut out = Vec::new();
        RowEncoder::new().digests(&cols, &mut out).unwrap();
        assert_eq!(out[0], combine(&[value_digest(&[tag::NULL])]));
        assert_eq!(encode_row(&cols, 1).unwrap(), vec![tag::NULL]);
    }

    #[test]
    fn map_entry_order_does_not_matter() {
        let cols = wide_batch();
        let map = cols.iter().find_map(|c| c.as_map_opt()).unwrap();
        // Row 0 holds {a: 1, b: NULL}; build {b: NULL, a: 1} and compare.
        let swapped = string_int_map(vec!["b", "a"], vec![None, Some(1)], vec![0, 2]);
        let mut a = Vec::new();
        encode_value(map, 0, &mut a).unwrap();
        let mut b = Vec::new();
        encode_value(&swapped, 0, &mut b).unwrap();
        assert_eq!(a, b);
    }
}

#[cfg(test)]
mod dictionary_cache_tests {
    use super::*;
    use arrow::array::{DictionaryArray, Int32Array, StringArray};

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
