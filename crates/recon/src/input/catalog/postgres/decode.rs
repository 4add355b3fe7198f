//! PostgreSQL's binary COPY values into Arrow arrays, exactly or refused.
//!
//! Each column's PostgreSQL type is mapped once ([`ColumnKind::of`]) to an
//! Arrow type that holds every value of it; a value that does not fit (a
//! `NaN` numeric, an infinite date, a multidimensional array) is refused
//! with the column's name, never rounded or dropped:
//!
//! | PostgreSQL | Arrow |
//! |---|---|
//! | bool, int2/4/8, float4/8 | Boolean, Int16/32/64, Float32/64 (NaN and -0.0 kept) |
//! | numeric(p,s) | Decimal128(p,s), Decimal256 past 38 digits |
//! | numeric | Decimal with the scale the values need (a scan finds it) |
//! | text, varchar, char(n), name, enums | Utf8 (char(n) keeps its padding) |
//! | uuid | Utf8, lower-case hex with hyphens |
//! | json, jsonb | Utf8, as the server writes their text |
//! | bytea | Binary |
//! | date, time, timestamp | Date32, Time64(µs), Timestamp(µs) |
//! | timestamptz | Timestamp(µs, UTC): the instant |
//! | one-dimensional arrays of these | List |

use std::sync::Arc;

use arrow::array::NullBufferBuilder;
use arrow::array::{
    ArrayRef, BinaryBuilder, BooleanBuilder, Date32Builder, Decimal128Builder, Decimal256Builder,
    Float32Builder, Float64Builder, Int16Builder, Int32Builder, Int64Builder, ListArray,
    StringBuilder, Time64MicrosecondBuilder, TimestampMicrosecondBuilder,
};
use arrow::buffer::OffsetBuffer;
use arrow::datatypes::{i256, DataType, Field, TimeUnit};
use postgres::types::{Kind, Type};
use postgres_protocol::types as pg;

/// Days from 1970-01-01 to PostgreSQL's epoch, 2000-01-01.
const EPOCH_DAYS: i32 = 10_957;
/// Microseconds from 1970-01-01 to 2000-01-01.
const EPOCH_MICROS: i64 = EPOCH_DAYS as i64 * 86_400_000_000;

/// How one column's values are read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum ColumnKind {
    Bool,
    Int16,
    Int32,
    Int64,
    Float32,
    Float64,
    /// text, varchar, bpchar, name, enums: the bytes are UTF-8 text.
    Text,
    /// jsonb: a version byte, then the text.
    Jsonb,
    Uuid,
    Bytea,
    Date,
    Time,
    Timestamp,
    TimestampTz,
    /// A numeric read at this precision and scale (Decimal256 past 38).
    Numeric {
        precision: u8,
        scale: i8,
    },
    /// A numeric whose scale the values decide: found by a scan first
    /// ([`ColumnKind::Numeric`] after it).
    NumericUnsized,
    List(Box<ColumnKind>),
}

impl ColumnKind {
    /// The kind for a column of `ty` with type modifier `typmod`, or why
    /// recon cannot read it exactly.
    pub(crate) fn of(ty: &Type, typmod: i32) -> Result<ColumnKind, String> {
        match ty.kind() {
            Kind::Enum(_) => return Ok(ColumnKind::Text),
            Kind::Domain(base) => return ColumnKind::of(base, -1),
            Kind::Array(elem) => {
                let inner = ColumnKind::of(elem, typmod)?;
                return match inner {
                    ColumnKind::List(_) => Err("nested arrays".into()),
                    // The elements' scale would take a scan of their own.
                    ColumnKind::NumericUnsized => Err(
                        "an array of unconstrained numeric: cast it to a numeric(p,s)[] in a query"
                            .into(),
                    ),
                    inner => Ok(ColumnKind::List(Box::new(inner))),
                };
            }
            _ => {}
        }
        Ok(match *ty {
            Type::BOOL => ColumnKind::Bool,
            Type::INT2 => ColumnKind::Int16,
            Type::INT4 => ColumnKind::Int32,
            Type::INT8 => ColumnKind::Int64,
            Type::FLOAT4 => ColumnKind::Float32,
            Type::FLOAT8 => ColumnKind::Float64,
            Type::TEXT | Type::VARCHAR | Type::BPCHAR | Type::NAME | Type::JSON => ColumnKind::Text,
            Type::JSONB => ColumnKind::Jsonb,
            Type::UUID => ColumnKind::Uuid,
            Type::BYTEA => ColumnKind::Bytea,
            Type::DATE => ColumnKind::Date,
            Type::TIME => ColumnKind::Time,
            Type::TIMESTAMP => ColumnKind::Timestamp,
            Type::TIMESTAMPTZ => ColumnKind::TimestampTz,
            Type::NUMERIC if typmod >= 4 => {
                // typmod = (precision << 16 | scale) + 4; the scale is an
                // 11-bit signed number since PostgreSQL 15 (numeric(3,-2)).
                let m = typmod - 4;
                let precision = (m >> 16) & 0xffff;
                let scale = ((m & 0x7ff) ^ 0x400) - 0x400;
                decimal_shape(precision as u32, scale)?
            }
            Type::NUMERIC => ColumnKind::NumericUnsized,
            _ => {
                return Err(format!(
                    "type {} has no exact Arrow type in recon; cast it in a query (--source-query \"SELECT …, col::text …\")",
                    ty.name()
                ))
            }
        })
    }

    /// The Arrow type its values become.
    pub(crate) fn data_type(&self) -> DataType {
        match self {
            ColumnKind::Bool => DataType::Boolean,
            ColumnKind::Int16 => DataType::Int16,
            ColumnKind::Int32 => DataType::Int32,
            ColumnKind::Int64 => DataType::Int64,
            ColumnKind::Float32 => DataType::Float32,
            ColumnKind::Float64 => DataType::Float64,
            ColumnKind::Text | ColumnKind::Jsonb | ColumnKind::Uuid => DataType::Utf8,
            ColumnKind::Bytea => DataType::Binary,
            ColumnKind::Date => DataType::Date32,
            ColumnKind::Time => DataType::Time64(TimeUnit::Microsecond),
            ColumnKind::Timestamp => DataType::Timestamp(TimeUnit::Microsecond, None),
            ColumnKind::TimestampTz => {
                DataType::Timestamp(TimeUnit::Microsecond, Some("UTC".into()))
            }
            ColumnKind::Numeric { precision, scale } if *precision <= 38 => {
                DataType::Decimal128(*precision, *scale)
            }
            ColumnKind::Numeric { precision, scale } => DataType::Decimal256(*precision, *scale),
            // Resolved by the scan before any value is read.
            ColumnKind::NumericUnsized => DataType::Decimal128(38, 0),
            ColumnKind::List(inner) => {
                DataType::List(Arc::new(Field::new("item", inner.data_type(), true)))
            }
        }
    }
}

/// The decimal kind for numbers of `precision` digits, `scale` of them
/// after the point, or why Arrow's decimals cannot hold them.
pub(crate) fn decimal_shape(precision: u32, scale: i32) -> Result<ColumnKind, String> {
    // Arrow wants scale <= precision; numeric(2,4) holds 0.00xx.
    let precision = precision.max(scale.max(0) as u32).max(1);
    if precision > 76 || !(-76..=76).contains(&scale) {
        return Err(format!(
            "numbers of {precision} digits ({scale} after the point): Arrow's decimals hold at most 76 digits; round or cast them in a query"
        ));
    }
    Ok(ColumnKind::Numeric {
        precision: precision as u8,
        scale: scale as i8,
    })
}

/// One column's values, as they are read.
pub(crate) enum Builder {
    Bool(BooleanBuilder),
    Int16(Int16Builder),
    Int32(Int32Builder),
    Int64(Int64Builder),
    Float32(Float32Builder),
    Float64(Float64Builder),
    Text(StringBuilder, ColumnKind),
    Bytea(BinaryBuilder),
    Date(Date32Builder),
    Time(Time64MicrosecondBuilder),
    Timestamp(TimestampMicrosecondBuilder, Option<Arc<str>>),
    Decimal128(Decimal128Builder, i8),
    Decimal256(Decimal256Builder, i8),
    List {
        field: Arc<Field>,
        values: Box<Builder>,
        offsets: Vec<i32>,
        nulls: NullBufferBuilder,
    },
}

impl Builder {
    pub(crate) fn new(kind: &ColumnKind) -> Builder {
        match kind {
            ColumnKind::Bool => Builder::Bool(BooleanBuilder::new()),
            ColumnKind::Int16 => Builder::Int16(Int16Builder::new()),
            ColumnKind::Int32 => Builder::Int32(Int32Builder::new()),
            ColumnKind::Int64 => Builder::Int64(Int64Builder::new()),
            ColumnKind::Float32 => Builder::Float32(Float32Builder::new()),
            ColumnKind::Float64 => Builder::Float64(Float64Builder::new()),
            ColumnKind::Text | ColumnKind::Jsonb | ColumnKind::Uuid => {
                Builder::Text(StringBuilder::new(), kind.clone())
            }
            ColumnKind::Bytea => Builder::Bytea(BinaryBuilder::new()),
            ColumnKind::Date => Builder::Date(Date32Builder::new()),
            ColumnKind::Time => Builder::Time(Time64MicrosecondBuilder::new()),
            ColumnKind::Timestamp => Builder::Timestamp(TimestampMicrosecondBuilder::new(), None),
            ColumnKind::TimestampTz => {
                Builder::Timestamp(TimestampMicrosecondBuilder::new(), Some("UTC".into()))
            }
            ColumnKind::Numeric { precision, scale } if *precision <= 38 => Builder::Decimal128(
                Decimal128Builder::new().with_data_type(kind.data_type()),
                *scale,
            ),
            ColumnKind::Numeric { scale, .. } => Builder::Decimal256(
                Decimal256Builder::new().with_data_type(kind.data_type()),
                *scale,
            ),
            ColumnKind::NumericUnsized => {
                unreachable!("an unconstrained numeric's scale is found before it is read")
            }
            ColumnKind::List(inner) => Builder::List {
                field: Arc::new(Field::new("item", inner.data_type(), true)),
                values: Box::new(Builder::new(inner)),
                offsets: vec![0],
                nulls: NullBufferBuilder::new(0),
            },
        }
    }

    /// Appends one value (None: NULL), or says why it cannot be read.
    pub(crate) fn append(&mut self, value: Option<&[u8]>) -> Result<(), String> {
        let Some(buf) = value else {
            self.append_null();
            return Ok(());
        };
        match self {
            Builder::Bool(b) => b.append_value(pg::bool_from_sql(buf).map_err(bad)?),
            Builder::Int16(b) => b.append_value(pg::int2_from_sql(buf).map_err(bad)?),
            Builder::Int32(b) => b.append_value(pg::int4_from_sql(buf).map_err(bad)?),
            Builder::Int64(b) => b.append_value(pg::int8_from_sql(buf).map_err(bad)?),
            Builder::Float32(b) => b.append_value(pg::float4_from_sql(buf).map_err(bad)?),
            Builder::Float64(b) => b.append_value(pg::float8_from_sql(buf).map_err(bad)?),
            Builder::Text(b, ColumnKind::Uuid) => {
                let u = pg::uuid_from_sql(buf).map_err(bad)?;
                b.append_value(uuid_text(&u));
            }
            Builder::Text(b, ColumnKind::Jsonb) => match buf.split_first() {
                Some((1, text)) => b.append_value(std::str::from_utf8(text).map_err(bad)?),
                _ => return Err("jsonb in a binary version recon does not know".into()),
            },
            Builder::Text(b, _) => b.append_value(pg::text_from_sql(buf).map_err(bad)?),
            Builder::Bytea(b) => b.append_value(pg::bytea_from_sql(buf)),
            Builder::Date(b) => {
                let d = pg::date_from_sql(buf).map_err(bad)?;
                if d == i32::MAX || d == i32::MIN {
                    return Err("an infinite date ('infinity'), which Arrow's dates cannot hold; map it in a query".into());
                }
                b.append_value(d.checked_add(EPOCH_DAYS).ok_or("a date out of range")?);
            }
            Builder::Time(b) => b.append_value(pg::time_from_sql(buf).map_err(bad)?),
            Builder::Timestamp(b, _) => {
                let t = pg::timestamp_from_sql(buf).map_err(bad)?;
                if t == i64::MAX || t == i64::MIN {
                    return Err("an infinite timestamp ('infinity'), which Arrow's timestamps cannot hold; map it in a query".into());
                }
                b.append_value(
                    t.checked_add(EPOCH_MICROS)
                        .ok_or("a timestamp out of range")?,
                );
            }
            Builder::Decimal128(b, scale) => {
                // Most values fit i128 all the way; the exact i256 path
                // decides (and words the refusal) for the rest.
                let v = match numeric_i128(buf, *scale) {
                    Some(v) => v,
                    None => numeric_unscaled(buf, *scale)?
                        .to_i128()
                        .ok_or("a numeric too large for its column")?,
                };
                b.append_value(v);
            }
            Builder::Decimal256(b, scale) => b.append_value(numeric_unscaled(buf, *scale)?),
            Builder::List {
                values,
                offsets,
                nulls,
                ..
            } => {
                use postgres::fallible_iterator::FallibleIterator;
                let arr = pg::array_from_sql(buf).map_err(bad)?;
                let mut dims = arr.dimensions();
                let mut n = 0usize;
                let mut count = 0;
                while let Some(d) = dims.next().map_err(bad)? {
                    n = d.len as usize;
                    count += 1;
                    if d.lower_bound != 1 {
                        return Err(format!(
                            "an array whose first index is {} (a list starts at 1; '[{}:…]={{…}}' arrays differ from '{{…}}' ones in PostgreSQL)",
                            d.lower_bound, d.lower_bound
                        ));
                    }
                }
                if count > 1 {
                    return Err(format!(
                        "a {count}-dimensional array; recon reads one-dimensional arrays as lists"
                    ));
                }
                let mut items = arr.values();
                while let Some(item) = items.next().map_err(bad)? {
                    values.append(item)?;
                }
                let end = offsets.last().copied().unwrap_or(0) as usize + n;
                offsets.push(
                    i32::try_from(end).map_err(|_| "more array elements than a batch holds")?,
                );
                nulls.append_non_null();
            }
        }
        Ok(())
    }

    fn append_null(&mut self) {
        match self {
            Builder::Bool(b) => b.append_null(),
            Builder::Int16(b) => b.append_null(),
            Builder::Int32(b) => b.append_null(),
            Builder::Int64(b) => b.append_null(),
            Builder::Float32(b) => b.append_null(),
            Builder::Float64(b) => b.append_null(),
            Builder::Text(b, _) => b.append_null(),
            Builder::Bytea(b) => b.append_null(),
            Builder::Date(b) => b.append_null(),
            Builder::Time(b) => b.append_null(),
            Builder::Timestamp(b, _) => b.append_null(),
            Builder::Decimal128(b, _) => b.append_null(),
            Builder::Decimal256(b, _) => b.append_null(),
            Builder::List { offsets, nulls, .. } => {
                offsets.push(offsets.last().copied().unwrap_or(0));
                nulls.append_null();
            }
        }
    }

    /// The values so far as an array; the builder starts again empty.
    pub(crate) fn finish(&mut self) -> ArrayRef {
        match self {
            Builder::Bool(b) => Arc::new(b.finish()),
            Builder::Int16(b) => Arc::new(b.finish()),
            Builder::Int32(b) => Arc::new(b.finish()),
            Builder::Int64(b) => Arc::new(b.finish()),
            Builder::Float32(b) => Arc::new(b.finish()),
            Builder::Float64(b) => Arc::new(b.finish()),
            Builder::Text(b, _) => Arc::new(b.finish()),
            Builder::Bytea(b) => Arc::new(b.finish()),
            Builder::Date(b) => Arc::new(b.finish()),
            Builder::Time(b) => Arc::new(b.finish()),
            Builder::Timestamp(b, tz) => Arc::new(b.finish().with_timezone_opt(tz.clone())),
            Builder::Decimal128(b, _) => Arc::new(b.finish()),
            Builder::Decimal256(b, _) => Arc::new(b.finish()),
            Builder::List {
                field,
                values,
                offsets,
                nulls,
            } => {
                let offsets = OffsetBuffer::new(std::mem::replace(offsets, vec![0]).into());
                Arc::new(ListArray::new(
                    field.clone(),
                    offsets,
                    values.finish(),
                    nulls.finish(),
                ))
            }
        }
    }
}

fn bad(e: impl std::fmt::Display) -> String {
    format!("a value recon could not decode: {e}")
}

fn uuid_text(u: &[u8; 16]) -> String {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let mut s = String::with_capacity(36);
    for (i, b) in u.iter().enumerate() {
        if matches!(i, 4 | 6 | 8 | 10) {
            s.push('-');
        }
        s.push(HEX[(b >> 4) as usize] as char);
        s.push(HEX[(b & 15) as usize] as char);
    }
    s
}

/// A binary numeric as an integer of `10^-scale` units: exactly, or an
/// error when it has more digits after the point than `scale` (its column's
/// scale was found too small) or is NaN or infinite.
pub(crate) fn numeric_unscaled(buf: &[u8], scale: i8) -> Result<i256, String> {
    let word = |i: usize| -> Result<u16, String> {
        buf.get(2 * i..2 * i + 2)
            .map(|b| u16::from_be_bytes([b[0], b[1]]))
            .ok_or_else(|| "a truncated numeric".to_string())
    };
    let ndigits = word(0)? as usize;
    let weight = word(1)? as i16 as i64;
    let sign = word(2)?;
    match sign {
        0x0000 | 0x4000 => {}
        0xC000 => return Err("NaN, which decimals cannot hold: cast the column to float8 in a query to compare it by the float rules".into()),
        0xD000 | 0xF000 => return Err("an infinite numeric, which decimals cannot hold: cast the column to float8 in a query to compare it by the float rules".into()),
        other => return Err(format!("a numeric with an unknown sign word {other:#06x}")),
    }
    let overflow = || format!("a numeric with more than {} digits", 76);
    // value = digits (base 10000, most significant first) x 10000^(weight - ndigits + 1)
    let mut n = i256::ZERO;
    let ten_k = i256::from_i128(10_000);
    for i in 0..ndigits {
        let d = word(4 + i)?;
        n = n
            .checked_mul(ten_k)
            .and_then(|x| x.checked_add(i256::from_i128(d as i128)))
            .ok_or_else(overflow)?;
    }
    // The unscaled value is n x 10^(4 (weight - ndigits + 1) + scale).
    let exp = 4 * (weight - ndigits as i64 + 1) + scale as i64;
    if exp >= 0 {
        let p = pow10(exp).ok_or_else(overflow)?;
        n = n.checked_mul(p).ok_or_else(overflow)?;
    } else {
        let p = pow10(-exp);
        match p {
            Some(p) if (n % p) == i256::ZERO => n /= p,
            // Nonzero digits past the column's scale (or a divisor past
            // i256, which only a nonzero n smaller than it could meet).
            _ if n == i256::ZERO => {}
            _ => {
                return Err(format!(
                    "a numeric with more than {scale} digits after the point, its column's scale"
                ))
            }
        }
    }
    Ok(if sign == 0x4000 { n.wrapping_neg() } else { n })
}

fn pow10(e: i64) -> Option<i256> {
    static POWERS: std::sync::OnceLock<Vec<i256>> = std::sync::OnceLock::new();
    let powers = POWERS.get_or_init(|| {
        let mut v = vec![i256::ONE];
        while let Some(next) = v[v.len() - 1].checked_mul(i256::from_i128(10)) {
            v.push(next);
        }
        v
    });
    powers.get(usize::try_from(e).ok()?).copied()
}

/// [`numeric_unscaled`] in i128 arithmetic: None when the value is not a
/// plain number that fits at every step (the i256 path then decides).
fn numeric_i128(buf: &[u8], scale: i8) -> Option<i128> {
    let word = |i: usize| {
        buf.get(2 * i..2 * i + 2)
            .map(|b| u16::from_be_bytes([b[0], b[1]]))
    };
    let ndigits = word(0)? as usize;
    let weight = word(1)? as i16 as i64;
    let sign = word(2)?;
    if sign != 0 && sign != 0x4000 {
        return None;
    }
    let mut n: i128 = 0;
    for i in 0..ndigits {
        n = n.checked_mul(10_000)?.checked_add(word(4 + i)? as i128)?;
    }
    let exp = 4 * (weight - ndigits as i64 + 1) + scale as i64;
    if exp >= 0 {
        n = n.checked_mul(10i128.checked_pow(u32::try_from(exp).ok()?)?)?;
    } else {
        let p = 10i128.checked_pow(u32::try_from(-exp).ok()?)?;
        if n % p != 0 {
            return None;
        }
        n /= p;
    }
    Some(if sign == 0x4000 { -n } else { n })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A numeric's binary form from its base-10000 digits.
    fn numeric(weight: i16, sign: u16, dscale: u16, digits: &[u16]) -> Vec<u8> {
        let mut v = Vec::new();
        for w in [digits.len() as u16, weight as u16, sign, dscale] {
            v.extend_from_slice(&w.to_be_bytes());
        }
        for d in digits {
            v.extend_from_slice(&d.to_be_bytes());
        }
        v
    }

    #[test]
    fn numerics_are_read_exactly_or_refused() {
        // 12345.6789 = [1, 2345, 6789] weight 1
        let x = numeric(1, 0, 4, &[1, 2345, 6789]);
        assert_eq!(
            numeric_unscaled(&x, 4).unwrap(),
            i256::from_i128(123_456_789)
        );
        assert_eq!(
            numeric_unscaled(&x, 6).unwrap(),
            i256::from_i128(12_345_678_900)
        );
        assert!(numeric_unscaled(&x, 3)
            .unwrap_err()
            .contains("more than 3 digits"));
        // -0.0001: weight -1, one digit 1
        let y = numeric(-1, 0x4000, 4, &[1]);
        assert_eq!(numeric_unscaled(&y, 4).unwrap(), i256::from_i128(-1));
        // 0.33333333333333333333 (20 digits)
        let z = numeric(-1, 0, 20, &[3333, 3333, 3333, 3333, 3333]);
        assert_eq!(
            numeric_unscaled(&z, 20).unwrap(),
            i256::from_i128(33_333_333_333_333_333_333)
        );
        // 1200 with a negative scale (numeric(3,-2)): 12 units of 100
        let w = numeric(0, 0, 0, &[1200]);
        assert_eq!(numeric_unscaled(&w, -2).unwrap(), i256::from_i128(12));
        // zero has no digits
        assert_eq!(
            numeric_unscaled(&numeric(0, 0, 2, &[]), 2).unwrap(),
            i256::ZERO
        );
        assert!(numeric_unscaled(&numeric(0, 0xC000, 0, &[]), 2)
            .unwrap_err()
            .contains("NaN"));
        assert!(numeric_unscaled(&numeric(0, 0xD000, 0, &[]), 2)
            .unwrap_err()
            .contains("infinite"));
        // 10^80 does not fit
        let big = numeric(20, 0, 0, &[1]);
        assert!(numeric_unscaled(&big, 0).unwrap_err().contains("digits"));
        // the i128 path agrees wherever it answers
        for (v, scale) in [(&x, 4), (&x, 6), (&y, 4), (&z, 20), (&w, -2)] {
            assert_eq!(
                numeric_i128(v, scale).map(i256::from_i128),
                Some(numeric_unscaled(v, scale).unwrap())
            );
        }
        assert_eq!(numeric_i128(&x, 3), None);
        assert_eq!(numeric_i128(&big, 0), None);
    }

    #[test]
    fn typmods_give_decimal_shapes() {
        let tm = |p: i32, s: i32| ((p << 16) | (s & 0x7ff)) + 4;
        assert_eq!(
            ColumnKind::of(&Type::NUMERIC, tm(12, 2))
                .unwrap()
                .data_type(),
            DataType::Decimal128(12, 2)
        );
        assert_eq!(
            ColumnKind::of(&Type::NUMERIC, tm(50, 10))
                .unwrap()
                .data_type(),
            DataType::Decimal256(50, 10)
        );
        assert_eq!(
            ColumnKind::of(&Type::NUMERIC, tm(3, -2))
                .unwrap()
                .data_type(),
            DataType::Decimal128(3, -2)
        );
        assert_eq!(
            ColumnKind::of(&Type::NUMERIC, tm(2, 4))
                .unwrap()
                .data_type(),
            DataType::Decimal128(4, 4)
        );
        assert_eq!(
            ColumnKind::of(&Type::NUMERIC, -1).unwrap(),
            ColumnKind::NumericUnsized
        );
        assert!(ColumnKind::of(&Type::INTERVAL, -1)
            .unwrap_err()
            .contains("interval"));
        assert!(ColumnKind::of(&Type::NUMERIC_ARRAY, -1).is_err());
    }

    #[test]
    fn uuids_are_canonical_text() {
        let u = [
            0x12, 0x34, 0x56, 0x78, 0x9a, 0xbc, 0xde, 0xf0, 0x01, 0x23, 0x45, 0x67, 0x89, 0xab,
            0xcd, 0xef,
        ];
        assert_eq!(uuid_text(&u), "12345678-9abc-def0-0123-456789abcdef");
    }
}
