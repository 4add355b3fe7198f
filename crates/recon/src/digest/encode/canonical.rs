//! The canonical encoding of one value: its tag, its payload, and the
//! reference encoder that writes them value at a time (see the layout table
//! in [`super`]).

use arrow::array::{Array, ArrayRef, AsArray, MapArray, StructArray};
use arrow::datatypes::*;

/// Value tags; see the module documentation.
pub(crate) mod tag {
    pub(crate) const NULL: u8 = 0x00;
    pub(crate) const BOOL: u8 = 0x01;
    pub(crate) const INT: u8 = 0x02;
    pub(crate) const FLOAT: u8 = 0x03;
    pub(crate) const DECIMAL: u8 = 0x04;
    pub(crate) const DECIMAL_WIDE: u8 = 0x05;
    pub(crate) const UTF8: u8 = 0x06;
    pub(crate) const BINARY: u8 = 0x07;
    pub(crate) const DATE: u8 = 0x08;
    pub(crate) const TIMESTAMP: u8 = 0x09;
    pub(crate) const TIMESTAMP_UTC: u8 = 0x0A;
    pub(crate) const TIME: u8 = 0x0B;
    pub(crate) const DURATION: u8 = 0x0C;
    pub(crate) const INTERVAL: u8 = 0x0D;
    pub(crate) const INT_WIDE: u8 = 0x0E;
    pub(crate) const LIST: u8 = 0x10;
    pub(crate) const STRUCT: u8 = 0x11;
    pub(crate) const MAP: u8 = 0x12;
}

/// Returns `Err(reason)` when recon has no canonical encoding for `dt`.
pub(crate) fn check_supported(dt: &DataType) -> Result<(), String> {
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
pub(super) fn canonical_f64(v: f64) -> [u8; 8] {
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
pub(super) fn decimal_bytes(m: i64, scale: i32) -> [u8; 10] {
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
pub(super) fn seconds_nanos<const PER_SEC: i64>(v: i64) -> [u8; 12] {
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

pub(super) fn push_bytes(out: &mut Vec<u8>, t: u8, bytes: &[u8]) {
    out.push(t);
    put_varint(out, bytes.len() as u64);
    out.extend_from_slice(bytes);
}

/// Appends the canonical encoding of `array[row]` to `out`.
///
/// This is the reference implementation of the specification: simple,
/// value-at-a-time, and used for nested types. The column-wise fast paths in
/// [`RowEncoder`] must produce the same bytes; a unit test checks that.
pub(crate) fn encode_value(array: &dyn Array, row: usize, out: &mut Vec<u8>) -> Result<(), String> {
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
        Date32 | Date64 | Timestamp(..) | Time32(_) | Time64(_) | Duration(_) | Interval(_) => {
            encode_temporal(array, row, out)?
        }
        List(_) => encode_list(&array.as_list::<i32>().value(row), out)?,
        LargeList(_) => encode_list(&array.as_list::<i64>().value(row), out)?,
        FixedSizeList(..) => encode_list(&array.as_fixed_size_list().value(row), out)?,
        Struct(fields) => encode_struct(array.as_struct(), fields, row, out)?,
        Map(..) => encode_map(array.as_map(), row, out)?,
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

/// The temporal arms of [`encode_value`]: dates, times, timestamps, durations
/// and intervals, each as whole seconds and nanoseconds so the unit a file
/// stores them in does not change the digest.
fn encode_temporal(array: &dyn Array, row: usize, out: &mut Vec<u8>) -> Result<(), String> {
    use DataType::*;
    match array.data_type() {
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
        other => return Err(format!("{other} is not a temporal type")),
    }
    Ok(())
}

/// A struct encodes its fields sorted by name, each preceded by that name, so
/// column order inside the struct does not change the digest.
fn encode_struct(
    s: &StructArray,
    fields: &Fields,
    row: usize,
    out: &mut Vec<u8>,
) -> Result<(), String> {
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
    Ok(())
}

fn encode_map(m: &MapArray, row: usize, out: &mut Vec<u8>) -> Result<(), String> {
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
