//! Text values into typed arrays: which Arrow type a CSV field, NDJSON
//! scalar or Hive partition value can be parsed into, the exact parsing of a
//! column of them, and type inference for text against text. Which type a
//! column takes is decided by the plan (`plan::typing`).
//!
//! A text column paired with a typed column (Parquet, IPC) takes that
//! column's type, so "12.50" meets decimal(18,2) as the decimal 12.50. A value
//! that does not fit the type exactly is an error naming it, never a NULL and
//! never a rounding. Two text columns stay text and compare as exact strings.

use std::path::Path;
use std::sync::atomic::Ordering;
use std::sync::Arc;

use arrow::array::*;
use arrow::datatypes::{i256, DataType, TimeUnit};

use super::parse::{self, Unit};
use crate::error::{ReconError, Result};

/// The type a text column takes when paired with a column of type `dt`, or
/// why text cannot become it.
pub(crate) fn text_type_for(dt: &DataType) -> std::result::Result<DataType, String> {
    use DataType::*;
    Ok(match dt {
        Null | Boolean | Int8 | Int16 | Int32 | Int64 | UInt8 | UInt16 | UInt32 | UInt64
        | Float16 | Float32 | Float64 | Date32 | Date64 | Timestamp(..) | Time32(_) | Time64(_)
        | Utf8 => dt.clone(),
        Decimal32(p, s) | Decimal64(p, s) | Decimal128(p, s) => Decimal128(*p, *s),
        Decimal256(p, s) => Decimal256(*p, *s),
        LargeUtf8 | Utf8View => Utf8,
        Dictionary(_, v) => text_type_for(v)?,
        other => return Err(format!("text cannot be read as {other}")),
    })
}

/// How one text column's values are read, beyond its type: rules applied to
/// the raw text before it is parsed (`--trim`, `--empty-as-null` on a text
/// column read as a typed one, so `" 1992"` meets an integer), and how dates
/// and timestamps are written (`--date-format`, `--timestamp-format`, zone
/// abbreviations from `--assume-tz EST=-05:00`).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct TextColumn {
    pub trim: bool,
    pub empty_as_null: bool,
    /// strftime pattern of a date or timestamp column.
    pub pattern: Option<String>,
    /// Zone abbreviations and their offsets east of UTC, in seconds.
    pub zones: Vec<(String, i32)>,
}

impl TextColumn {
    /// The value the parser sees: trimmed, and NULL when empty if asked.
    pub fn prepare<'a>(&self, v: Option<&'a str>) -> Option<&'a str> {
        let v = if self.trim { v.map(str::trim) } else { v };
        v.filter(|s| !(self.empty_as_null && s.is_empty()))
    }

    pub fn is_plain(&self) -> bool {
        *self == TextColumn::default()
    }
}

/// A bad value: its row in the batch and what is wrong.
pub(crate) type BadValue = (usize, String);

/// Parses text values (None: NULL) into an array of type `dt`, recording up
/// to `keep` bad values (their slots become NULL); `bad` is sorted by row.
pub(crate) fn parse_lenient(
    dt: &DataType,
    values: &[Option<&str>],
    bad: &mut Vec<BadValue>,
    keep: usize,
) -> ArrayRef {
    parse_lenient_as(dt, values, bad, keep, &TextColumn::default())
}

/// Parses each value with `f`, recording up to `keep` failures in `bad`
/// (their slots become NULL).
fn go<T, F>(values: &[Option<&str>], bad: &mut Vec<BadValue>, keep: usize, f: F) -> Vec<Option<T>>
where
    F: Fn(&str) -> std::result::Result<T, String>,
{
    let mut out = Vec::with_capacity(values.len());
    for (i, v) in values.iter().enumerate() {
        out.push(match v {
            None => None,
            Some(s) => match f(s) {
                Ok(x) => Some(x),
                Err(m) => {
                    if bad.len() < keep || bad.is_empty() {
                        bad.push((i, m));
                    }
                    None
                }
            },
        });
    }
    out
}
/// A parser of integers of type `T` (`name` in the message when one does
/// not fit).
fn int<T: TryFrom<i128>>(name: &'static str) -> impl Fn(&str) -> std::result::Result<T, String> {
    move |s| {
        let v = parse::parse_i128(s)?;
        T::try_from(v).map_err(|_| format!("out of range for {name}"))
    }
}

/// The decimal arms of [`parse_lenient_as`]: exact, or refused.
fn parse_decimals(
    dt: &DataType,
    values: &[Option<&str>],
    bad: &mut Vec<BadValue>,
    keep: usize,
) -> ArrayRef {
    use DataType::*;
    match dt {
        Decimal128(p, s) => {
            let (p, s) = (*p, *s);
            let v = go(values, bad, keep, |t| {
                if p > 38 {
                    return Err(format!("decimal({p},{s}) is wider than 38 digits"));
                }
                parse::parse_decimal(t, p, s)
            });
            match Decimal128Array::from(v).with_precision_and_scale(p, s) {
                Ok(a) => Arc::new(a),
                Err(e) => {
                    bad.push((0, e.to_string()));
                    new_null_array(dt, values.len())
                }
            }
        }
        Decimal256(p, s) => {
            let (p, s) = (*p, *s);
            let v = go(values, bad, keep, |t| {
                // Values of up to 38 digits fit i128; wider values are refused, not rounded.
                parse::parse_decimal(t, p.min(38), s).map_err(|m| {
                    if p > 38 {
                        format!("{m} (text into decimal({p},{s}) supports up to 38 digits)")
                    } else {
                        m
                    }
                })
            });
            let v: Vec<Option<i256>> = v.into_iter().map(|x| x.map(i256::from_i128)).collect();
            match Decimal256Array::from(v).with_precision_and_scale(p, s) {
                Ok(a) => Arc::new(a),
                Err(e) => {
                    bad.push((0, e.to_string()));
                    new_null_array(dt, values.len())
                }
            }
        }
        other => {
            bad.push((0, format!("{other} is not a decimal type")));
            new_null_array(dt, values.len())
        }
    }
}

/// [`parse_lenient`] for values written as `column` says (its pattern and
/// zones; the caller has applied [`TextColumn::prepare`]).
pub(crate) fn parse_lenient_as(
    dt: &DataType,
    values: &[Option<&str>],
    bad: &mut Vec<BadValue>,
    keep: usize,
    column: &TextColumn,
) -> ArrayRef {
    let format = parse::TextFormat {
        pattern: column.pattern.as_deref(),
        zones: &column.zones,
    };
    let date = |s: &str| parse::parse_date_as(s, format.pattern);
    use DataType::*;
    match dt {
        Null => {
            for (i, v) in values.iter().enumerate() {
                if v.is_some() && bad.len() < keep.max(1) {
                    bad.push((
                        i,
                        "the column holds only NULLs on the other side's type".into(),
                    ));
                }
            }
            Arc::new(NullArray::new(values.len()))
        }
        Utf8 => Arc::new(StringArray::from_iter(values.iter().copied())),
        Boolean => Arc::new(BooleanArray::from(go(values, bad, keep, parse::parse_bool))),
        Int8 => Arc::new(Int8Array::from(go(values, bad, keep, int::<i8>("int8")))),
        Int16 => Arc::new(Int16Array::from(go(values, bad, keep, int::<i16>("int16")))),
        Int32 => Arc::new(Int32Array::from(go(values, bad, keep, int::<i32>("int32")))),
        Int64 => Arc::new(Int64Array::from(go(values, bad, keep, int::<i64>("int64")))),
        UInt8 => Arc::new(UInt8Array::from(go(values, bad, keep, int::<u8>("uint8")))),
        UInt16 => Arc::new(UInt16Array::from(go(
            values,
            bad,
            keep,
            int::<u16>("uint16"),
        ))),
        UInt32 => Arc::new(UInt32Array::from(go(
            values,
            bad,
            keep,
            int::<u32>("uint32"),
        ))),
        UInt64 => Arc::new(UInt64Array::from(go(
            values,
            bad,
            keep,
            int::<u64>("uint64"),
        ))),
        Float16 => Arc::new(Float16Array::from(go(values, bad, keep, |s| {
            parse::parse_f64(s).map(half::f16::from_f64)
        }))),
        // Parsed directly as f32: going through f64 could round twice.
        Float32 => Arc::new(Float32Array::from(go(values, bad, keep, |s| {
            let v = parse::parse_f64(s)?;
            Ok(if v.is_finite() {
                s.trim_start_matches('+').parse::<f32>().unwrap_or(v as f32)
            } else {
                v as f32
            })
        }))),
        Float64 => Arc::new(Float64Array::from(go(values, bad, keep, parse::parse_f64))),
        Decimal128(..) | Decimal256(..) => parse_decimals(dt, values, bad, keep),
        Date32 => Arc::new(Date32Array::from(go(values, bad, keep, date))),
        Date64 => Arc::new(Date64Array::from(go(values, bad, keep, |s| {
            date(s).map(|d| d as i64 * 86_400_000)
        }))),
        Timestamp(u, tz) => {
            let unit = *u;
            let v = go(values, bad, keep, |s| {
                parse::parse_timestamp_as(s, unit, tz.as_deref(), &format)
            });
            let a: ArrayRef = match u {
                TimeUnit::Second => {
                    Arc::new(TimestampSecondArray::from(v).with_timezone_opt(tz.clone()))
                }
                TimeUnit::Millisecond => {
                    Arc::new(TimestampMillisecondArray::from(v).with_timezone_opt(tz.clone()))
                }
                TimeUnit::Microsecond => {
                    Arc::new(TimestampMicrosecondArray::from(v).with_timezone_opt(tz.clone()))
                }
                TimeUnit::Nanosecond => {
                    Arc::new(TimestampNanosecondArray::from(v).with_timezone_opt(tz.clone()))
                }
            };
            a
        }
        Time32(u) => {
            let unit = *u;
            let v = go(values, bad, keep, |s| {
                parse::parse_time(s, unit)
                    .and_then(|x| i32::try_from(x).map_err(|_| "out of range".to_string()))
            });
            match u {
                TimeUnit::Second => Arc::new(Time32SecondArray::from(v)),
                _ => Arc::new(Time32MillisecondArray::from(v)),
            }
        }
        Time64(u) => {
            let unit = *u;
            let v = go(values, bad, keep, |s| parse::parse_time(s, unit));
            match u {
                TimeUnit::Nanosecond => Arc::new(Time64NanosecondArray::from(v)),
                _ => Arc::new(Time64MicrosecondArray::from(v)),
            }
        }
        other => {
            bad.push((0, format!("text cannot be read as {other}")));
            new_null_array(dt, values.len())
        }
    }
}

/// Infers one type for text values (both sides' samples together): the
/// narrowest of int64, decimal(38,s), float64, boolean, date, timestamp that
/// parses every value exactly; otherwise text. Values after the sample that
/// do not fit are parse errors, never silent NULLs.
pub(crate) fn infer(values: &[&str]) -> DataType {
    if values.is_empty() {
        return DataType::Utf8;
    }
    if values
        .iter()
        .all(|v| parse::parse_i128(v).is_ok_and(|x| i64::try_from(x).is_ok()))
    {
        return DataType::Int64;
    }
    // The scale is the most fractional digits seen (no exponents: those are floats).
    let plain = |v: &str| {
        v.bytes()
            .all(|b| b.is_ascii_digit() || b == b'.' || b == b'-' || b == b'+')
    };
    if values.iter().all(|v| plain(v)) {
        let scale = values
            .iter()
            .map(|v| v.split_once('.').map_or(0, |(_, f)| f.len()))
            .max()
            .unwrap_or(0);
        if scale <= 18
            && values
                .iter()
                .all(|v| parse::parse_decimal(v, 38, scale as i8).is_ok())
        {
            return DataType::Decimal128(38, scale as i8);
        }
    }
    if values.iter().all(|v| parse::parse_f64(v).is_ok()) {
        return DataType::Float64;
    }
    if values
        .iter()
        .all(|v| v.eq_ignore_ascii_case("true") || v.eq_ignore_ascii_case("false"))
    {
        return DataType::Boolean;
    }
    if values.iter().all(|v| parse::parse_date(v).is_ok()) {
        return DataType::Date32;
    }
    let nanos = values.iter().any(|v| {
        v.split_once('.')
            .is_some_and(|(_, f)| f.bytes().take_while(u8::is_ascii_digit).count() > 6)
    });
    let (unit, tu) = if nanos {
        (Unit::Nanosecond, TimeUnit::Nanosecond)
    } else {
        (Unit::Microsecond, TimeUnit::Microsecond)
    };
    if values
        .iter()
        .all(|v| parse::parse_timestamp(v, unit, None).is_ok())
    {
        return DataType::Timestamp(tu, None);
    }
    if values
        .iter()
        .all(|v| parse::parse_timestamp(v, unit, Some("UTC")).is_ok())
    {
        return DataType::Timestamp(tu, Some("UTC".into()));
    }
    DataType::Utf8
}

/// Counted values that failed to parse (with `--max-parse-errors`).
#[derive(Default)]
pub struct ParseErrors {
    pub count: std::sync::atomic::AtomicU64,
    examples: std::sync::Mutex<Vec<(u64, String)>>,
}

impl ParseErrors {
    const KEEP: usize = 20;

    /// Forgets everything (before a second pass reads the same values again).
    pub fn reset(&self) {
        self.count.store(0, Ordering::Relaxed);
        if let Ok(mut ex) = self.examples.lock() {
            ex.clear();
        }
    }

    /// Counts one value that failed to parse or convert: an error (`message`
    /// plus a hint) once more than `allowed` have been counted, otherwise
    /// kept as an example. `first_hint` is the way out when none are allowed.
    pub(crate) fn count(
        &self,
        allowed: u64,
        path: &Path,
        locator: u64,
        message: String,
        first_hint: &str,
    ) -> Result<()> {
        let seen = self.count.fetch_add(1, Ordering::Relaxed) + 1;
        if seen > allowed {
            let hint = if allowed == 0 {
                first_hint
            } else {
                " (more than `--max-parse-errors`)"
            };
            return Err(ReconError::input(path, format!("{message}{hint}")));
        }
        self.record(locator, format!("{}: {message}", path.display()));
        Ok(())
    }

    fn record(&self, locator: u64, message: String) {
        if let Ok(mut ex) = self.examples.lock() {
            ex.push((locator, message));
            // Keep the first ones in file order, whatever the thread timing.
            if ex.len() > 4 * Self::KEEP {
                ex.sort();
                ex.truncate(Self::KEEP);
            }
        }
    }

    /// The first messages in file order.
    pub fn examples(&self) -> Vec<String> {
        let mut ex = self.examples.lock().map(|e| e.clone()).unwrap_or_default();
        ex.sort();
        ex.truncate(Self::KEEP);
        ex.into_iter().map(|e| e.1).collect()
    }
}
