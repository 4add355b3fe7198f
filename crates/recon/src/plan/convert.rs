//! Conversions and normalization rules, applied to a column's values before
//! they are hashed. The original values are never changed: evidence rows and
//! samples show what is in the files.
//!
//! Order per column: the conversion (`--cast`, `--assume-tz`), then the rules
//! in this order: timestamp precision, rounding, trim, case, empty-as-NULL
//! (so `'  '` with `--trim` and `--empty-as-null` becomes NULL).

use std::sync::Arc;

use arrow::array::*;
use arrow::compute::{cast_with_options, CastOptions};
use arrow::datatypes::*;

use super::align::Convert;
use crate::config::Normalize;
use crate::error::quoted_value;

/// What to do to one column of one side before hashing.
#[derive(Debug, Clone, Default)]
pub struct Prep {
    pub column: String,
    pub convert: Option<Convert>,
    pub normalize: Vec<Normalize>,
}

impl Prep {
    /// A preparation whose rules are put in their application order once,
    /// here, rather than on every batch.
    pub fn new(column: String, convert: Option<Convert>, mut normalize: Vec<Normalize>) -> Prep {
        normalize.sort_by_key(|r| match r {
            Normalize::TimestampPrecision(_) => 0,
            Normalize::Round(_) => 1,
            Normalize::Trim => 2,
            Normalize::CaseInsensitive => 3,
            Normalize::EmptyAsNull => 4,
        });
        Prep {
            column,
            convert,
            normalize,
        }
    }

    pub fn is_noop(&self) -> bool {
        self.convert.is_none() && self.normalize.is_empty()
    }

    /// Applies the conversion, then the rules in stored order (see
    /// [`Prep::new`]). A conversion that would change a value (truncate a
    /// time of day, drop fraction digits, overflow) refuses it: `Err` lists
    /// the offsets within `array` of the values refused, ascending, each with
    /// a message naming the column, the value and why.
    pub fn apply(&self, array: &ArrayRef) -> Result<ArrayRef, Refused> {
        let mut a = array.clone();
        if self.is_noop() {
            return Ok(a);
        }
        let whole = |m: String| vec![(0, format!("column '{}': {m}", self.column))];
        // Conversions and rules work on plain values; scans may hand out
        // dictionaries (dictionary-encoded Parquet strings).
        if let arrow::datatypes::DataType::Dictionary(_, value) = a.data_type() {
            a = arrow::compute::cast(&a, value).map_err(|e| whole(e.to_string()))?;
        }
        if let Some(conv) = &self.convert {
            a = convert(&a, conv, &self.column)?;
        }
        for r in &self.normalize {
            a = normalize(&a, r).map_err(whole)?;
        }
        Ok(a)
    }
}

/// Values a conversion refused: (offset in the batch, message), ascending.
pub(crate) type Refused = Vec<(usize, String)>;

/// A value as text, for messages (see [`quoted_value`]).
fn shown(a: &dyn Array, row: usize) -> String {
    let text = arrow::util::display::ArrayFormatter::try_new(a, &Default::default())
        .map(|f| f.value(row).to_string())
        .unwrap_or_default();
    quoted_value(&text)
}

/// Converts `a` into the conversion's type, exactly or not at all.
///
/// Arrow's casts truncate and round (1.9 becomes 1, a timestamp loses its
/// time of day, decimal(38,6) rounds into decimal(18,2)); a truncation the
/// user did not ask for by name must never turn drift into a match. So a
/// value is accepted only when it survives the conversion: text is parsed
/// with recon's exact parsers (never rounding), and any other value is cast
/// and cast back, and must come back as the same value (by recon's
/// canonical encoding, so NaN and -0.0 keep their meaning). `--assume-tz`
/// is exact by construction: a wall-clock time maps to one instant, and a
/// nonexistent or ambiguous local time (a DST change) is an error.
fn convert(a: &ArrayRef, conv: &Convert, column: &str) -> Result<ArrayRef, Refused> {
    let to = match conv {
        Convert::Cast(t) => t.clone(),
        Convert::AssumeTz(tz) => return assume_tz(a, tz, column),
    };
    if a.data_type() == &to {
        return Ok(a.clone());
    }
    let fail = |row: usize, why: &str| {
        (
            row,
            format!(
                "column '{column}': value {} does not convert to {to}: {why}",
                shown(a.as_ref(), row)
            ),
        )
    };
    if matches!(
        a.data_type(),
        DataType::Utf8 | DataType::LargeUtf8 | DataType::Utf8View
    ) && !matches!(
        to,
        DataType::Utf8 | DataType::LargeUtf8 | DataType::Utf8View
    ) {
        let utf8 = arrow::compute::cast(a.as_ref(), &DataType::Utf8)
            .map_err(|e| vec![fail(0, &e.to_string())])?;
        let values: Vec<Option<&str>> = utf8.as_string::<i32>().iter().collect();
        let mut bad = Vec::new();
        let out =
            crate::input::format::text::values::parse_lenient(&to, &values, &mut bad, usize::MAX);
        if bad.is_empty() {
            return Ok(out);
        }
        return Err(bad.into_iter().map(|(row, m)| fail(row, &m)).collect());
    }
    let strict = CastOptions {
        safe: false,
        ..Default::default()
    };
    let out = match cast_with_options(a.as_ref(), &to, &strict) {
        Ok(out) => out,
        Err(e) => {
            // Name the values that fail: a lenient cast turns failures into
            // NULLs where the input was not NULL.
            let lenient = cast_with_options(a.as_ref(), &to, &CastOptions::default()).ok();
            let rows: Vec<usize> = lenient
                .map(|l| {
                    (0..a.len())
                        .filter(|&i| a.is_valid(i) && l.is_null(i))
                        .collect()
                })
                .unwrap_or_default();
            let why = e.to_string();
            return Err(if rows.is_empty() {
                vec![fail(0, &why)]
            } else {
                rows.into_iter().map(|r| fail(r, &why)).collect()
            });
        }
    };
    let back =
        cast_with_options(out.as_ref(), a.data_type(), &CastOptions::default()).map_err(|e| {
            vec![fail(
                0,
                &format!("recon cannot check that the conversion keeps every value ({e})"),
            )]
        })?;
    let changed = changed_rows(a, &back).map_err(|m| vec![fail(0, &m)])?;
    if changed.is_empty() {
        return Ok(out);
    }
    Err(changed
        .into_iter()
        .map(|row| {
            let why = format!(
                "it would become {} (recon refuses conversions that change a value; use `--round` or `--timestamp-precision` to lose precision on purpose)",
                shown(out.as_ref(), row)
            );
            fail(row, &why)
        })
        .collect())
}

/// Reads naive timestamps as wall-clock time in `tz`. Each local time must
/// name exactly one instant: a time in a DST gap (02:30 on the night clocks
/// jump to 03:00) or in a DST overlap (02:30 on the night they fall back)
/// is refused. Arrow's cast resolves both silently (the later offset, the
/// offset before the gap), which could match an instant the data never held.
fn assume_tz(a: &ArrayRef, tz: &str, column: &str) -> Result<ArrayRef, Refused> {
    use arrow::array::timezone::Tz;
    use chrono::{LocalResult, Offset, TimeZone};
    let DataType::Timestamp(unit, None) = a.data_type() else {
        return Ok(a.clone());
    };
    let unit = *unit;
    let whole = |m: String| vec![(0, format!("column '{column}': {m}"))];
    let zone: Tz = tz
        .parse()
        .map_err(|e: arrow::error::ArrowError| whole(e.to_string()))?;
    let ups = crate::units::per_second(unit);
    let values = arrow::compute::cast(a.as_ref(), &DataType::Timestamp(unit, None))
        .map_err(|e| whole(e.to_string()))?;
    let raw = arrow::compute::cast(&values, &DataType::Int64).map_err(|e| whole(e.to_string()))?;
    let raw = raw.as_primitive::<Int64Type>();
    let mut refused = Vec::new();
    let mut out: Vec<Option<i64>> = Vec::with_capacity(raw.len());
    for (row, v) in raw.iter().enumerate() {
        let Some(v) = v else {
            out.push(None);
            continue;
        };
        let local = chrono::DateTime::from_timestamp(v.div_euclid(ups), 0).map(|d| d.naive_utc());
        let why = match local.map(|l| zone.offset_from_local_datetime(&l)) {
            Some(LocalResult::Single(o)) => {
                let off = o.fix().local_minus_utc() as i64;
                match off.checked_mul(ups).and_then(|o| v.checked_sub(o)) {
                    Some(utc) => {
                        out.push(Some(utc));
                        continue;
                    }
                    None => "is out of range".to_string(),
                }
            }
            Some(LocalResult::Ambiguous(..)) => {
                format!("is ambiguous in {tz} (it occurs twice, at a DST change)")
            }
            Some(LocalResult::None) => {
                format!("does not exist in {tz} (clocks skip it at a DST change)")
            }
            None => "is out of range".to_string(),
        };
        out.push(None);
        refused.push((
            row,
            format!(
                "column '{column}': local time {} {why}; recon does not guess which instant was meant",
                shown(a.as_ref(), row)
            ),
        ));
    }
    if !refused.is_empty() {
        return Err(refused);
    }
    let utc = Int64Array::from(out);
    arrow::compute::cast(&utc, &DataType::Timestamp(unit, Some(tz.into())))
        .map_err(|e| whole(e.to_string()))
}

/// Rows whose value differs between two arrays of one type, by the
/// canonical encoding (the equality recon compares with).
fn changed_rows(a: &ArrayRef, b: &ArrayRef) -> Result<Vec<usize>, String> {
    let mut encoder = crate::digest::RowEncoder::new();
    let (mut da, mut db) = (Vec::new(), Vec::new());
    encoder.digests(std::slice::from_ref(a), &mut da)?;
    let mut encoder = crate::digest::RowEncoder::new();
    encoder.digests(std::slice::from_ref(b), &mut db)?;
    Ok((0..a.len()).filter(|&i| da[i] != db[i]).collect())
}

/// Most decimal places `--round` accepts: a float64 carries about 15-17
/// significant digits, so more places would not change any value.
pub(crate) const MAX_FLOAT_PLACES: u32 = 17;

fn pow10_i128(n: u32) -> i128 {
    10i128.pow(n)
}

/// Divides by 10^k rounding half away from zero.
fn div_round_i128(v: i128, k: u32) -> i128 {
    if k == 0 {
        return v;
    }
    if k > 38 {
        return 0;
    }
    let d = pow10_i128(k);
    let (q, r) = (v / d, v % d);
    // Compare |r| with d - |r| rather than 2|r| with d: 2|r| can overflow i128.
    let r = r.unsigned_abs();
    if r >= d.unsigned_abs() - r {
        q + v.signum()
    } else {
        q
    }
}

fn round_decimal128(
    values: impl Iterator<Item = Option<i128>>,
    scale: i8,
    places: u32,
) -> Result<ArrayRef, String> {
    // More places than any scale are a no-op; clamping keeps the i32 math sane.
    let target = places.min(100) as i32;
    let out: Decimal128Array = if (scale as i32) <= target {
        values.collect()
    } else {
        let k = (scale as i32 - target) as u32;
        values.map(|v| v.map(|x| div_round_i128(x, k))).collect()
    };
    let s = (scale as i32).min(target) as i8;
    Ok(Arc::new(
        out.with_precision_and_scale(38, s)
            .map_err(|e| e.to_string())?,
    ))
}

fn round_decimal256(a: &Decimal256Array, scale: i8, places: u32) -> Result<ArrayRef, String> {
    let target = places.min(100) as i32;
    if (scale as i32) <= target {
        return Ok(Arc::new(a.clone()));
    }
    let k = (scale as i32 - target) as u32;
    let d = (0..k).fold(i256::ONE, |acc, _| acc.wrapping_mul(i256::from_i128(10)));
    let two = i256::from_i128(2);
    let out: Decimal256Array = a
        .iter()
        .map(|v| {
            v.map(|x| {
                let (q, r) = (x.wrapping_div(d), x.wrapping_rem(d));
                if r.wrapping_abs().wrapping_mul(two) >= d {
                    if x.is_negative() {
                        q.wrapping_sub(i256::ONE)
                    } else {
                        q.wrapping_add(i256::ONE)
                    }
                } else {
                    q
                }
            })
        })
        .collect();
    Ok(Arc::new(
        out.with_precision_and_scale(76, target as i8)
            .map_err(|e| e.to_string())?,
    ))
}

fn truncate_timestamps<T: ArrowTimestampType>(a: &ArrayRef, factor: i64) -> ArrayRef {
    let p = a.as_primitive::<T>();
    // The floor multiple can fall below i64::MIN for the very smallest
    // values; those are left as they are rather than wrapped.
    let out: PrimitiveArray<T> = p.unary(|v| v.checked_sub(v.rem_euclid(factor)).unwrap_or(v));
    Arc::new(out.with_data_type(a.data_type().clone()))
}

fn map_strings(a: &ArrayRef, f: impl Fn(&str) -> Option<String>) -> Result<ArrayRef, String> {
    let utf8 = if matches!(a.data_type(), DataType::Utf8) {
        a.clone()
    } else {
        arrow::compute::cast(a.as_ref(), &DataType::Utf8).map_err(|e| e.to_string())?
    };
    let s = utf8.as_string::<i32>();
    let out: StringArray = s.iter().map(|v| v.and_then(&f)).collect();
    Ok(Arc::new(out))
}

fn normalize(a: &ArrayRef, rule: &Normalize) -> Result<ArrayRef, String> {
    Ok(match rule {
        Normalize::Round(places) => match a.data_type() {
            DataType::Float16 | DataType::Float32 | DataType::Float64 => {
                let f = arrow::compute::cast(a.as_ref(), &DataType::Float64)
                    .map_err(|e| e.to_string())?;
                let m = 10f64.powi((*places).min(MAX_FLOAT_PLACES) as i32);
                let out: Float64Array = f.as_primitive::<Float64Type>().unary(|x| {
                    let scaled = x * m;
                    // Values too large to scale are left alone: turning them
                    // into infinities would make different values equal.
                    if scaled.is_finite() {
                        (scaled).round() / m
                    } else {
                        x
                    }
                });
                Arc::new(out)
            }
            DataType::Decimal32(_, s) => round_decimal128(
                a.as_primitive::<Decimal32Type>()
                    .iter()
                    .map(|v| v.map(|x| x as i128)),
                *s,
                *places,
            )?,
            DataType::Decimal64(_, s) => round_decimal128(
                a.as_primitive::<Decimal64Type>()
                    .iter()
                    .map(|v| v.map(|x| x as i128)),
                *s,
                *places,
            )?,
            DataType::Decimal128(_, s) => {
                round_decimal128(a.as_primitive::<Decimal128Type>().iter(), *s, *places)?
            }
            DataType::Decimal256(_, s) => {
                round_decimal256(a.as_primitive::<Decimal256Type>(), *s, *places)?
            }
            _ => a.clone(),
        },
        Normalize::TimestampPrecision(to) => match a.data_type() {
            DataType::Timestamp(unit, _) => {
                let factor = crate::units::per_second(*unit) / crate::units::per_second(*to);
                if factor <= 1 {
                    return Ok(a.clone());
                }
                match unit {
                    TimeUnit::Second => a.clone(),
                    TimeUnit::Millisecond => {
                        truncate_timestamps::<TimestampMillisecondType>(a, factor)
                    }
                    TimeUnit::Microsecond => {
                        truncate_timestamps::<TimestampMicrosecondType>(a, factor)
                    }
                    TimeUnit::Nanosecond => {
                        truncate_timestamps::<TimestampNanosecondType>(a, factor)
                    }
                }
            }
            _ => a.clone(),
        },
        Normalize::Trim => map_strings(a, |s| Some(s.trim().to_string()))?,
        Normalize::CaseInsensitive => map_strings(a, |s| Some(s.to_lowercase()))?,
        Normalize::EmptyAsNull => map_strings(a, |s| (!s.is_empty()).then(|| s.to_string()))?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn prep(rules: Vec<Normalize>) -> Prep {
        Prep::new("c".into(), None, rules)
    }

    #[test]
    fn decimals_round_half_away_from_zero() {
        let a: ArrayRef = Arc::new(
            Decimal128Array::from(vec![Some(1235), Some(-1235), Some(1234), None])
                .with_precision_and_scale(10, 3)
                .unwrap(),
        );
        let out = prep(vec![Normalize::Round(2)]).apply(&a).unwrap();
        let d = out.as_primitive::<Decimal128Type>();
        assert_eq!(d.scale(), 2);
        assert_eq!(d.values().to_vec()[..3], [124, -124, 123]);
        assert!(d.is_null(3));
    }

    #[test]
    fn rounding_never_merges_distinct_extremes() {
        // 0.9 and 0.1 at scale 38 must not both round to 0 through overflow.
        let a: ArrayRef = Arc::new(
            Decimal128Array::from(vec![9 * 10i128.pow(37), 10i128.pow(37)])
                .with_precision_and_scale(38, 38)
                .unwrap(),
        );
        let out = prep(vec![Normalize::Round(0)]).apply(&a).unwrap();
        let d = out.as_primitive::<Decimal128Type>();
        assert_eq!((d.value(0), d.value(1)), (1, 0));
        // Huge floats are not turned into infinities (which would all be equal).
        let f: ArrayRef = Arc::new(Float64Array::from(vec![1e307, 2e307, f64::MAX]));
        let out = prep(vec![Normalize::Round(400)]).apply(&f).unwrap();
        let o = out.as_primitive::<Float64Type>();
        assert_eq!(o.values().to_vec(), vec![1e307, 2e307, f64::MAX]);
        // Timestamps at the very bottom of the range stay put instead of wrapping.
        let t: ArrayRef = Arc::new(TimestampMicrosecondArray::from(vec![i64::MIN + 1]));
        let out = prep(vec![Normalize::TimestampPrecision(TimeUnit::Second)])
            .apply(&t)
            .unwrap();
        assert_eq!(
            out.as_primitive::<TimestampMicrosecondType>().value(0),
            i64::MIN + 1
        );
    }

    #[test]
    fn floats_round() {
        let a: ArrayRef = Arc::new(Float64Array::from(vec![2.345, -2.5, f64::NAN]));
        let out = prep(vec![Normalize::Round(0)]).apply(&a).unwrap();
        let f = out.as_primitive::<Float64Type>();
        assert_eq!(f.value(0), 2.0);
        assert_eq!(f.value(1), -3.0);
        assert!(f.value(2).is_nan());
    }

    #[test]
    fn timestamps_truncate_toward_the_past() {
        let a: ArrayRef = Arc::new(TimestampMicrosecondArray::from(vec![1_999_999, -1]));
        let out = prep(vec![Normalize::TimestampPrecision(TimeUnit::Second)])
            .apply(&a)
            .unwrap();
        let t = out.as_primitive::<TimestampMicrosecondType>();
        assert_eq!(t.values().to_vec(), vec![1_000_000, -1_000_000]);
    }

    #[test]
    fn string_rules_compose() {
        let a: ArrayRef = Arc::new(StringArray::from(vec![
            Some("  AbC "),
            Some("   "),
            None,
            Some("x"),
        ]));
        let out = prep(vec![
            Normalize::EmptyAsNull,
            Normalize::CaseInsensitive,
            Normalize::Trim,
        ])
        .apply(&a)
        .unwrap();
        let s = out.as_string::<i32>();
        assert_eq!(s.value(0), "abc");
        assert!(s.is_null(1), "trimmed to '' then NULL");
        assert!(s.is_null(2));
        assert_eq!(s.value(3), "x");
    }

    #[test]
    fn failed_casts_name_the_value() {
        let a: ArrayRef = Arc::new(StringArray::from(vec![Some("1.50"), None, Some("abc")]));
        let p = Prep {
            column: "amount".into(),
            convert: Some(Convert::Cast(DataType::Decimal128(18, 2))),
            normalize: vec![],
        };
        let refused = p.apply(&a).unwrap_err();
        let (row, msg) = &refused[0];
        assert_eq!(*row, 2);
        assert!(msg.contains("\"abc\""), "{msg}");
        let ok: ArrayRef = Arc::new(StringArray::from(vec![Some("1.50"), None]));
        let out = p.apply(&ok).unwrap();
        assert_eq!(out.as_primitive::<Decimal128Type>().value(0), 150);
    }

    #[test]
    fn assume_tz_reads_naive_times_in_the_zone() {
        let a: ArrayRef = Arc::new(TimestampSecondArray::from(vec![3600]));
        let p = Prep {
            column: "ts".into(),
            convert: Some(Convert::AssumeTz("+01:00".into())),
            normalize: vec![],
        };
        let out = p.apply(&a).unwrap();
        // 01:00 local at +01:00 is 00:00 UTC.
        assert_eq!(out.as_primitive::<TimestampSecondType>().value(0), 0);
    }
}
