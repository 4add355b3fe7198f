//! Exact text-to-value parsers.
//!
//! recon parses CSV text into the other table's Arrow types. A value that
//! cannot be represented exactly is an error, never a silent rounding or
//! NULL: a reconciliation that rounded would report a match that is not one.
//! Every function is total (errors, never panics) and uses checked integer
//! arithmetic only.

use chrono::{Datelike, FixedOffset, LocalResult, NaiveDate, NaiveDateTime, NaiveTime, TimeZone};

/// Parses `true/false, t/f, 1/0, yes/no, y/n`, case-insensitively.
pub(crate) fn parse_bool(s: &str) -> Result<bool, String> {
    const TRUE: [&str; 5] = ["true", "t", "1", "yes", "y"];
    const FALSE: [&str; 5] = ["false", "f", "0", "no", "n"];
    if TRUE.iter().any(|t| s.eq_ignore_ascii_case(t)) {
        Ok(true)
    } else if FALSE.iter().any(|f| s.eq_ignore_ascii_case(f)) {
        Ok(false)
    } else {
        Err("not a valid boolean".to_string())
    }
}

/// Splits an optional leading sign off; true means negative.
fn split_sign(b: &[u8]) -> (bool, &[u8]) {
    match b.split_first() {
        Some((b'-', rest)) => (true, rest),
        Some((b'+', rest)) => (false, rest),
        _ => (false, b),
    }
}

/// Parses an integer: optional sign, ASCII digits only. Callers range-check
/// to the target width.
pub(crate) fn parse_i128(s: &str) -> Result<i128, String> {
    let (neg, digits) = split_sign(s.as_bytes());
    if digits.is_empty() || !digits.iter().all(u8::is_ascii_digit) {
        return Err("not a valid integer".to_string());
    }
    // Accumulate towards the sign so that i128::MIN parses.
    let mut v: i128 = 0;
    for &c in digits {
        let d = i128::from(c - b'0');
        v = v
            .checked_mul(10)
            .and_then(|v| {
                if neg {
                    v.checked_sub(d)
                } else {
                    v.checked_add(d)
                }
            })
            .ok_or_else(|| "out of range for int128".to_string())?;
    }
    Ok(v)
}

/// Parses a float: Rust's `f64` grammar (which includes case-insensitive
/// `nan`, `inf` and `infinity` with an optional sign).
///
/// Finite text too large for `f64` is an error rather than infinity; other
/// text is rounded to the nearest `f64` as any float parse must.
pub(crate) fn parse_f64(s: &str) -> Result<f64, String> {
    let v: f64 = s.parse().map_err(|_| "not a valid float64".to_string())?;
    if v.is_infinite() {
        let body = s.trim_start_matches(['+', '-']);
        if !body.eq_ignore_ascii_case("inf") && !body.eq_ignore_ascii_case("infinity") {
            return Err("out of range for float64".to_string());
        }
    }
    Ok(v)
}

/// The digits of a decimal mantissa, stored as the integer part and the
/// fraction part so parsing does not allocate.
struct Digits<'a> {
    int: &'a [u8],
    frac: &'a [u8],
}

impl Digits<'_> {
    fn len(&self) -> usize {
        self.int.len() + self.frac.len()
    }

    fn iter(&self) -> impl DoubleEndedIterator<Item = u8> + '_ {
        self.int.iter().chain(self.frac.iter()).map(|c| c - b'0')
    }
}

/// Largest exponent magnitude kept exactly; anything beyond is out of range
/// (or a fraction error) for every precision ≤ 38 whatever the digit count,
/// and clamping keeps the arithmetic in `i64`.
const EXP_CLAMP: i64 = 1 << 40;

/// Parses a decimal literal into the unscaled integer at `scale`.
///
/// Grammar: optional sign, digits, optional `.` and digits (at least one
/// digit overall; `.5` and `5.` allowed), optional exponent `e`/`E`, sign,
/// digits. Digits beyond `scale` must be zero; the result must fit
/// `precision` (1..=38) digits. Negative scales require a multiple of
/// `10^-scale`.
pub(crate) fn parse_decimal(s: &str, precision: u8, scale: i8) -> Result<i128, String> {
    let ty = || format!("decimal({precision},{scale})");
    let invalid = || format!("not a valid {}", ty());
    if precision == 0 || precision > 38 {
        return Err(format!("unsupported precision for {}", ty()));
    }
    let (neg, rest) = split_sign(s.as_bytes());
    let int_len = rest.iter().take_while(|c| c.is_ascii_digit()).count();
    let (int, rest) = rest.split_at(int_len);
    let (frac, rest) = match rest.split_first() {
        Some((b'.', after)) => {
            let n = after.iter().take_while(|c| c.is_ascii_digit()).count();
            after.split_at(n)
        }
        _ => (&[][..], rest),
    };
    if int.is_empty() && frac.is_empty() {
        return Err(invalid());
    }
    let exp: i64 = match rest.split_first() {
        None => 0,
        Some((b'e' | b'E', e)) => {
            let (eneg, edigits) = split_sign(e);
            if edigits.is_empty() || !edigits.iter().all(u8::is_ascii_digit) {
                return Err(invalid());
            }
            // Saturate instead of overflowing: huge exponents just fail below.
            let mag = edigits.iter().fold(0i64, |acc, &c| {
                acc.saturating_mul(10)
                    .saturating_add(i64::from(c - b'0'))
                    .min(EXP_CLAMP)
            });
            if eneg {
                -mag
            } else {
                mag
            }
        }
        Some(_) => return Err(invalid()),
    };
    let digits = Digits { int, frac };
    let n = digits.len();
    let lead = digits.iter().take_while(|&d| d == 0).count();
    if lead == n {
        return Ok(0);
    }
    let trail = digits.iter().rev().take_while(|&d| d == 0).count();
    let sig = n - lead;
    let out_of_range = || format!("out of range for {}", ty());
    let to_i64 = |x: usize| i64::try_from(x).map_err(|_| out_of_range());
    // value = digits * 10^(exp - frac.len()); unscaled = value * 10^scale.
    let shift = exp
        .checked_sub(to_i64(frac.len())?)
        .and_then(|x| x.checked_add(i64::from(scale)))
        .ok_or_else(out_of_range)?;
    let (keep, zeros) = if shift >= 0 {
        (sig, shift)
    } else {
        let drop = usize::try_from(shift.unsigned_abs()).unwrap_or(usize::MAX);
        if drop > trail {
            return Err(if scale >= 0 {
                format!("has more than {scale} fractional digits for {}", ty())
            } else {
                format!("is not a multiple of 10^{} for {}", -i16::from(scale), ty())
            });
        }
        // drop <= trail < sig, so this neither underflows nor truncates.
        (sig - drop, 0)
    };
    let total = to_i64(keep)?.checked_add(zeros).ok_or_else(out_of_range)?;
    if total > i64::from(precision) {
        return Err(out_of_range());
    }
    let mut v: i128 = 0;
    for d in digits.iter().skip(lead).take(keep) {
        v = v
            .checked_mul(10)
            .and_then(|v| v.checked_add(i128::from(d)))
            .ok_or_else(out_of_range)?;
    }
    for _ in 0..zeros {
        v = v.checked_mul(10).ok_or_else(out_of_range)?;
    }
    Ok(if neg { -v } else { v })
}

/// Days from 0001-01-01 (CE day 1) to 1970-01-01.
const UNIX_EPOCH_DAYS_FROM_CE: i32 = 719_163;

/// Reads exactly `n` ASCII digits at `b[at..]` as a number.
fn fixed_digits(b: &[u8], at: usize, n: usize) -> Option<u32> {
    let d = b.get(at..at.checked_add(n)?)?;
    d.iter().try_fold(0u32, |acc, &c| {
        c.is_ascii_digit().then(|| acc * 10 + u32::from(c - b'0'))
    })
}

/// Parses `YYYY-MM-DD` at the start of `b`; returns the date.
fn date_prefix(b: &[u8]) -> Option<NaiveDate> {
    if b.get(4) != Some(&b'-') || b.get(7) != Some(&b'-') {
        return None;
    }
    let y = fixed_digits(b, 0, 4)?;
    let m = fixed_digits(b, 5, 2)?;
    let d = fixed_digits(b, 8, 2)?;
    NaiveDate::from_ymd_opt(i32::try_from(y).ok()?, m, d)
}

fn days_since_epoch(d: NaiveDate) -> i32 {
    d.num_days_from_ce() - UNIX_EPOCH_DAYS_FROM_CE
}

const NOT_A_DATE: &str = "not a valid date (expected YYYY-MM-DD)";

/// Parses `YYYY-MM-DD` (years 0000-9999) into days since 1970-01-01.
pub(crate) fn parse_date(s: &str) -> Result<i32, String> {
    let b = s.as_bytes();
    if b.len() != 10 {
        return Err(NOT_A_DATE.to_string());
    }
    date_prefix(b)
        .map(days_since_epoch)
        .ok_or_else(|| NOT_A_DATE.to_string())
}

/// Time units are Arrow's (see `crate::units` for their table).
pub use crate::units::TimeUnit as Unit;

trait UnitExt {
    fn per_second(self) -> i64;
    fn name(self) -> &'static str;
}

impl UnitExt for Unit {
    fn per_second(self) -> i64 {
        crate::units::per_second(self)
    }

    fn name(self) -> &'static str {
        crate::units::symbol(self)
    }
}

/// Converts nanoseconds within a second to `unit`, refusing to drop
/// nonzero digits.
fn nanos_to_unit(nanos: u32, unit: Unit) -> Result<i64, String> {
    let per = 1_000_000_000 / unit.per_second();
    let n = i64::from(nanos);
    if n % per != 0 {
        return Err(format!("has more precision than {}", unit.name()));
    }
    Ok(n / per)
}

/// A parsed `HH:MM[:SS[.fraction]]`.
struct Clock {
    secs: u32,
    nanos: u32,
}

/// Parses a clock time at the start of `b`; returns it and the bytes used.
/// Seconds are optional only when `need_secs` is false.
fn clock_prefix(b: &[u8], need_secs: bool) -> Option<(Clock, usize)> {
    let h = fixed_digits(b, 0, 2)?;
    if b.get(2) != Some(&b':') {
        return None;
    }
    let m = fixed_digits(b, 3, 2)?;
    let mut used = 5;
    let mut s = 0;
    let mut nanos = 0;
    if b.get(5) == Some(&b':') {
        s = fixed_digits(b, 6, 2)?;
        used = 8;
        if b.get(8) == Some(&b'.') {
            let frac = b.get(9..)?;
            let n = frac.iter().take_while(|c| c.is_ascii_digit()).count();
            if n == 0 || n > 9 {
                return None;
            }
            let value = fixed_digits(frac, 0, n)?;
            nanos = value * 10u32.pow(u32::try_from(9 - n).ok()?);
            used = 9 + n;
        }
    } else if need_secs {
        return None;
    }
    // No leap seconds or 24:00: Arrow times are in [0, 86400).
    if h > 23 || m > 59 || s > 59 {
        return None;
    }
    Some((
        Clock {
            secs: h * 3600 + m * 60 + s,
            nanos,
        },
        used,
    ))
}

/// Parses `HH:MM`, `HH:MM:SS` or `HH:MM:SS.fraction` (1-9 fraction digits)
/// into time since midnight in `unit`. Fraction digits beyond the unit must
/// be zero. `HH:MM` is 0 seconds: it names one time of day exactly, as
/// DuckDB and PostgreSQL read it.
pub(crate) fn parse_time(s: &str, unit: Unit) -> Result<i64, String> {
    let b = s.as_bytes();
    let (c, _) = clock_prefix(b, false)
        .filter(|&(_, used)| used == b.len())
        .ok_or_else(|| "not a valid time (expected HH:MM[:SS[.fraction]])".to_string())?;
    // Cannot overflow: 86400 * 1e9 < i64::MAX.
    Ok(i64::from(c.secs) * unit.per_second() + nanos_to_unit(c.nanos, unit)?)
}

/// A column time zone, parsed the way Arrow parses it.
enum ColumnTz {
    Fixed(FixedOffset),
    Named(chrono_tz::Tz),
}

/// Arrow's fixed-offset grammar for a column time zone: `+HH:MM`, `+HHMM`,
/// `+HH` (or `-`). Mirrors arrow-array so any zone Arrow accepts, we accept.
fn arrow_fixed_offset(tz: &str) -> Option<FixedOffset> {
    let b = tz.as_bytes();
    let (hh, mm) = match b.len() {
        6 if b.get(3) == Some(&b':') => (fixed_digits(b, 1, 2)?, fixed_digits(b, 4, 2)?),
        5 => (fixed_digits(b, 1, 2)?, fixed_digits(b, 3, 2)?),
        3 => (fixed_digits(b, 1, 2)?, 0),
        _ => return None,
    };
    let secs = i32::try_from(hh * 3600 + mm * 60).ok()?;
    match b.first()? {
        b'+' => FixedOffset::east_opt(secs),
        b'-' => FixedOffset::west_opt(secs),
        _ => None,
    }
}

fn parse_column_tz(tz: &str) -> Result<ColumnTz, String> {
    if let Some(off) = arrow_fixed_offset(tz) {
        return Ok(ColumnTz::Fixed(off));
    }
    tz.parse::<chrono_tz::Tz>()
        .map(ColumnTz::Named)
        .map_err(|_| format!("unknown time zone \"{tz}\""))
}

/// Parses a value's zone suffix: `Z`, `UTC`, `+HH:MM`, `+HHMM`, `+HH` (or
/// `-`), or an abbreviation the user mapped (`--assume-tz EST=-05:00`).
/// Returns the offset east of UTC in seconds. Stricter than the column
/// grammar (minutes < 60, hours < 24) because this is data, not schema.
fn value_offset(b: &[u8], zones: &[(String, i32)]) -> Option<i32> {
    if b == b"Z" || b == b"z" || b == b"UTC" {
        return Some(0);
    }
    if let Some((_, off)) = zones.iter().find(|(name, _)| name.as_bytes() == b) {
        return Some(*off);
    }
    crate::units::parse_utc_offset(std::str::from_utf8(b).ok()?)
}

/// The pieces of a timestamp literal.
struct TsParts {
    date: NaiveDate,
    clock: Clock,
    /// Offset east of UTC in seconds, when the value carries one.
    offset: Option<i32>,
}

fn ts_parts(s: &str, zones: &[(String, i32)]) -> Option<TsParts> {
    let b = s.as_bytes();
    let date = date_prefix(b)?;
    if b.len() == 10 {
        return Some(TsParts {
            date,
            clock: Clock { secs: 0, nanos: 0 },
            offset: None,
        });
    }
    if !matches!(b.get(10), Some(b'T' | b't' | b' ')) {
        return None;
    }
    let rest = b.get(11..)?;
    let (clock, used) = clock_prefix(rest, false)?;
    let tail = rest.get(used..)?;
    if tail.is_empty() {
        return Some(TsParts {
            date,
            clock,
            offset: None,
        });
    }
    let zone = tail.strip_prefix(b" ").unwrap_or(tail);
    Some(TsParts {
        date,
        clock,
        offset: Some(value_offset(zone, zones)?),
    })
}

/// Parses a timestamp into `unit` since the Unix epoch.
///
/// Accepts `YYYY-MM-DD`, optionally followed by `T` or a space and
/// `HH:MM`, `HH:MM:SS` or `HH:MM:SS.fraction` (1-9 digits), then an optional
/// zone suffix (`Z`, `UTC`, `±HH:MM`, `±HHMM`, `±HH`, optionally after a
/// space).
///
/// `tz = None` is a naive column: a value with a zone is an error, and the
/// wall clock is encoded as if UTC (Arrow's convention). `tz = Some(zone)`:
/// a value with an offset denotes that instant; one without is a wall-clock
/// time in `zone`, and ambiguous or nonexistent local times are errors.
pub(crate) fn parse_timestamp(s: &str, unit: Unit, tz: Option<&str>) -> Result<i64, String> {
    parse_timestamp_as(s, unit, tz, &TextFormat::default())
}

/// How a date or timestamp column's text is written, beyond ISO 8601: a
/// strftime pattern (`--date-format`, `--timestamp-format`) and zone
/// abbreviations mapped to offsets (`--assume-tz EST=-05:00`).
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct TextFormat<'a> {
    pub pattern: Option<&'a str>,
    pub zones: &'a [(String, i32)],
}

/// Formats `v` with `pattern` and requires the text it came from: chrono's
/// parser accepts more than one spelling for some fields (unpadded numbers,
/// ignored weekdays), and a value whose text is not what the pattern writes
/// is refused rather than guessed at.
fn round_trip(text: &str, pattern: &str, v: impl std::fmt::Display) -> Result<(), String> {
    let mut back = String::new();
    use std::fmt::Write;
    write!(back, "{v}").map_err(|_| format!("{pattern:?} cannot format this value"))?;
    if back != text {
        return Err(format!(
            "does not read back under {pattern:?}, which writes this value as \"{back}\" (exact parsing needs the text the pattern writes; use %-d or %-m for unpadded days or months)"
        ));
    }
    Ok(())
}

/// Splits a trailing ` ABBR` the user mapped to an offset off a value.
fn mapped_zone<'s>(s: &'s str, zones: &[(String, i32)]) -> (&'s str, Option<i32>) {
    if let Some((rest, word)) = s.rsplit_once(' ') {
        if let Some((_, off)) = zones.iter().find(|(name, _)| name == word) {
            return (rest, Some(*off));
        }
    }
    (s, None)
}

/// Parses a date written as `pattern` into days since 1970-01-01.
pub(crate) fn parse_date_as(s: &str, pattern: Option<&str>) -> Result<i32, String> {
    let Some(pattern) = pattern else {
        return parse_date(s);
    };
    let d = NaiveDate::parse_from_str(s, pattern)
        .map_err(|e| format!("does not match the date format {pattern:?}: {e}"))?;
    round_trip(s, pattern, d.format(pattern))?;
    Ok(days_since_epoch(d))
}

/// The pieces of a timestamp written as `pattern`.
fn ts_parts_as(s: &str, pattern: &str, zones: &[(String, i32)]) -> Result<TsParts, String> {
    let (text, mapped) = mapped_zone(s, zones);
    let bad =
        |e: chrono::ParseError| format!("does not match the timestamp format {pattern:?}: {e}");
    let has_offset = pattern.contains("%z")
        || pattern.contains("%:z")
        || pattern.contains("%::z")
        || pattern.contains("%#z");
    let (local, offset) = if has_offset {
        if mapped.is_some() {
            return Err("has both a zone abbreviation and an offset".to_string());
        }
        let dt = chrono::DateTime::parse_from_str(text, pattern).map_err(bad)?;
        round_trip(text, pattern, dt.format(pattern))?;
        (dt.naive_local(), Some(dt.offset().local_minus_utc()))
    } else {
        let local = match NaiveDateTime::parse_from_str(text, pattern) {
            Ok(t) => t,
            // A pattern with a date but no time of day is midnight.
            Err(e) if e.kind() == chrono::format::ParseErrorKind::NotEnough => {
                NaiveDate::parse_from_str(text, pattern)
                    .map_err(bad)?
                    .and_time(NaiveTime::MIN)
            }
            Err(e) => return Err(bad(e)),
        };
        round_trip(text, pattern, local.format(pattern))?;
        (local, mapped)
    };
    use chrono::Timelike;
    if local.nanosecond() >= 1_000_000_000 {
        return Err("is a leap second, which Arrow timestamps cannot hold".to_string());
    }
    Ok(TsParts {
        date: local.date(),
        clock: Clock {
            secs: local.num_seconds_from_midnight(),
            nanos: local.nanosecond(),
        },
        offset,
    })
}

/// [`parse_timestamp`] for text written as `format` says.
pub(crate) fn parse_timestamp_as(
    s: &str,
    unit: Unit,
    tz: Option<&str>,
    format: &TextFormat<'_>,
) -> Result<i64, String> {
    let column_tz = tz.map(parse_column_tz).transpose()?;
    let parts = match format.pattern {
        Some(pattern) => ts_parts_as(s, pattern, format.zones)?,
        None => ts_parts(s, format.zones).ok_or_else(|| {
            "not a valid timestamp (expected YYYY-MM-DD[ HH:MM[:SS[.fraction]]][zone])".to_string()
        })?,
    };
    let sub = nanos_to_unit(parts.clock.nanos, unit)?;
    let local_secs = i64::from(days_since_epoch(parts.date)) * 86_400 + i64::from(parts.clock.secs);
    let epoch_secs = match (parts.offset, &column_tz) {
        (Some(_), None) => {
            return Err("has a UTC offset but the column has no time zone".to_string())
        }
        (Some(off), Some(_)) => local_secs - i64::from(off),
        (None, None) => local_secs,
        (None, Some(ColumnTz::Fixed(off))) => local_secs - i64::from(off.local_minus_utc()),
        (None, Some(ColumnTz::Named(zone))) => named_zone_instant(&parts, zone)?,
    };
    epoch_secs
        .checked_mul(unit.per_second())
        .and_then(|v| v.checked_add(sub))
        .ok_or_else(|| format!("out of range for timestamp({})", unit.name()))
}

/// Resolves a wall-clock time in a named zone to seconds since the epoch.
fn named_zone_instant(parts: &TsParts, zone: &chrono_tz::Tz) -> Result<i64, String> {
    let time = NaiveTime::from_num_seconds_from_midnight_opt(parts.clock.secs, 0)
        .ok_or_else(|| "not a valid time of day".to_string())?;
    let local = NaiveDateTime::new(parts.date, time);
    match zone.from_local_datetime(&local) {
        LocalResult::Single(dt) => Ok(dt.timestamp()),
        // Predicate-style messages like the others: callers prefix the value.
        LocalResult::Ambiguous(_, _) => Err(format!(
            "is ambiguous in {} (it occurs twice when clocks go back)",
            zone.name()
        )),
        LocalResult::None => Err(format!(
            "does not exist in {} (clocks skip it when they go forward)",
            zone.name()
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::units::check_pattern;
    use chrono::{DateTime, Utc};
    use proptest::prelude::*;

    #[test]
    fn bools() {
        for t in [
            "true", "TRUE", "True", "t", "T", "1", "yes", "YES", "y", "Y",
        ] {
            assert_eq!(parse_bool(t), Ok(true), "{t}");
        }
        for f in ["false", "False", "f", "F", "0", "no", "No", "n", "N"] {
            assert_eq!(parse_bool(f), Ok(false), "{f}");
        }
        for bad in [
            "", " true", "true ", "2", "on", "off", "yess", "tru", "00", "-1",
        ] {
            assert!(parse_bool(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn integers() {
        assert_eq!(parse_i128("0"), Ok(0));
        assert_eq!(parse_i128("-0"), Ok(0));
        assert_eq!(parse_i128("+42"), Ok(42));
        assert_eq!(parse_i128("-42"), Ok(-42));
        assert_eq!(parse_i128("007"), Ok(7));
        assert_eq!(parse_i128(&i128::MAX.to_string()), Ok(i128::MAX));
        assert_eq!(parse_i128(&i128::MIN.to_string()), Ok(i128::MIN));
        assert!(parse_i128("170141183460469231731687303715884105728").is_err());
        assert!(parse_i128("-170141183460469231731687303715884105729").is_err());
        for bad in [
            "", "+", "-", "--1", "+-1", " 1", "1 ", "1.0", "1e3", "0x10", "1_000", "١", "abc",
        ] {
            assert!(parse_i128(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn floats() {
        assert_eq!(parse_f64("1.5"), Ok(1.5));
        assert_eq!(parse_f64("-.5"), Ok(-0.5));
        assert_eq!(parse_f64("5."), Ok(5.0));
        assert_eq!(parse_f64("1E+3"), Ok(1000.0));
        assert_eq!(parse_f64("1e-400"), Ok(0.0));
        for s in ["inf", "+inf", "INF", "infinity", "Infinity", "+infinity"] {
            assert_eq!(parse_f64(s), Ok(f64::INFINITY), "{s}");
        }
        for s in ["-inf", "-infinity", "-Inf"] {
            assert_eq!(parse_f64(s), Ok(f64::NEG_INFINITY), "{s}");
        }
        assert!(parse_f64("nan").unwrap().is_nan());
        assert!(parse_f64("NaN").unwrap().is_nan());
        for bad in [
            "", " ", " 1", "1 ", "1e400", "-1e400", "abc", "1.2.3", ".", "e5", "1e", "0x1p3",
            "infinit",
        ] {
            assert!(parse_f64(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn decimals_good() {
        assert_eq!(parse_decimal("12.340", 18, 2), Ok(1234));
        assert_eq!(parse_decimal("12.34", 18, 2), Ok(1234));
        assert_eq!(parse_decimal("12", 18, 2), Ok(1200));
        assert_eq!(parse_decimal("-0.5", 18, 1), Ok(-5));
        assert_eq!(parse_decimal("+.5", 18, 1), Ok(5));
        assert_eq!(parse_decimal("5.", 18, 1), Ok(50));
        assert_eq!(parse_decimal("1.5E+3", 18, 2), Ok(150_000));
        assert_eq!(parse_decimal("1.5e3", 18, 0), Ok(1500));
        assert_eq!(parse_decimal("1e-2", 18, 2), Ok(1));
        assert_eq!(parse_decimal("150E-2", 18, 1), Ok(15));
        assert_eq!(parse_decimal("-0", 18, 2), Ok(0));
        assert_eq!(parse_decimal("0.000", 1, 0), Ok(0));
        assert_eq!(parse_decimal("0e999999999999999999999999", 5, 2), Ok(0));
        assert_eq!(parse_decimal("000123.4500", 5, 2), Ok(12345));
        // 38 digits at the limits.
        let max = "9".repeat(38);
        assert_eq!(parse_decimal(&max, 38, 0), Ok(10i128.pow(38) - 1));
        assert_eq!(
            parse_decimal(&format!("-{max}"), 38, 0),
            Ok(1 - 10i128.pow(38))
        );
        let frac = format!("0.{max}");
        assert_eq!(parse_decimal(&frac, 38, 38), Ok(10i128.pow(38) - 1));
        assert_eq!(parse_decimal("1e37", 38, 0), Ok(10i128.pow(37)));
        // Negative scale: unscaled counts units of 10^-scale.
        assert_eq!(parse_decimal("1200", 5, -2), Ok(12));
        assert_eq!(parse_decimal("1.2e3", 5, -2), Ok(12));
        assert_eq!(parse_decimal("-1200.00", 5, -2), Ok(-12));
        // A scale above the precision is plain arithmetic.
        assert_eq!(parse_decimal("0.012", 2, 3), Ok(12));
    }

    #[test]
    fn decimals_bad() {
        let e = parse_decimal("12.345", 18, 2).unwrap_err();
        assert!(e.contains("more than 2 fractional digits"), "{e}");
        assert!(parse_decimal("1e-3", 18, 2)
            .unwrap_err()
            .contains("fractional"));
        assert!(parse_decimal("0.0000000000000000000000000000000000000000001", 38, 10).is_err());
        let e = parse_decimal("1250", 5, -2).unwrap_err();
        assert!(e.contains("multiple of 10^2"), "{e}");
        let e = parse_decimal("1000", 5, 2).unwrap_err();
        assert_eq!(e, "out of range for decimal(5,2)");
        assert!(parse_decimal("999.995", 5, 2).is_err());
        assert!(parse_decimal(&"9".repeat(39), 38, 0).is_err());
        assert!(parse_decimal("1e38", 38, 0).is_err());
        assert!(parse_decimal("1e99999999999999999999999", 38, 0).is_err());
        assert!(parse_decimal("1e-99999999999999999999999", 38, 0).is_err());
        assert!(parse_decimal(&format!("1{}", "0".repeat(100)), 38, 0).is_err());
        assert!(parse_decimal("1", 0, 0).is_err());
        assert!(parse_decimal("1", 39, 0).is_err());
        for bad in [
            "", "abc", "1.2.3", "--1", "+-1", " 1", "1 ", ".", "-", "+.", "e5", ".e5", "1e", "1e+",
            "1e1.5", "1,5", "1_0", "0x10", "inf", "NaN", "١",
        ] {
            let e = parse_decimal(bad, 18, 2).unwrap_err();
            assert_eq!(e, "not a valid decimal(18,2)", "{bad}");
        }
    }

    #[test]
    fn dates() {
        assert_eq!(parse_date("1970-01-01"), Ok(0));
        assert_eq!(parse_date("1970-01-02"), Ok(1));
        assert_eq!(parse_date("1969-12-31"), Ok(-1));
        assert_eq!(parse_date("2024-02-29"), Ok(19_782));
        assert_eq!(parse_date("0000-01-01"), Ok(-719_528));
        assert_eq!(parse_date("9999-12-31"), Ok(2_932_896));
        for bad in [
            "2023-02-29",
            "2023-13-01",
            "2023-00-10",
            "2023-01-00",
            "2023-04-31",
            "23-01-01",
            "2023-1-01",
            "2023/01/01",
            "2023-01-01 ",
            " 2023-01-01",
            "-2023-01-01",
            "+2023-01-01",
            "20230101",
            "",
            "2023-01-01T00:00",
        ] {
            assert!(parse_date(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn times() {
        assert_eq!(parse_time("00:00:00", Unit::Second), Ok(0));
        assert_eq!(parse_time("23:59:59", Unit::Second), Ok(86_399));
        assert_eq!(parse_time("01:02:03.5", Unit::Millisecond), Ok(3_723_500));
        assert_eq!(
            parse_time("01:02:03.500", Unit::Second).unwrap_err(),
            "has more precision than s"
        );
        assert_eq!(parse_time("01:02:03.000", Unit::Second), Ok(3723));
        assert_eq!(
            parse_time("00:00:00.123456", Unit::Microsecond),
            Ok(123_456)
        );
        assert!(parse_time("00:00:00.1234567", Unit::Microsecond).is_err());
        assert_eq!(
            parse_time("00:00:00.1234567", Unit::Nanosecond),
            Ok(123_456_700)
        );
        assert_eq!(
            parse_time("23:59:59.999999999", Unit::Nanosecond),
            Ok(86_399_999_999_999)
        );
        for bad in [
            "24:00:00",
            "12:60:00",
            "12:00:60",
            "12:0",
            "1:00:00",
            "12:00:00.",
            "12:00:00.1234567890",
            "12:00:00Z",
            "12:00:00 ",
            "",
            "12-00-00",
        ] {
            assert!(parse_time(bad, Unit::Nanosecond).is_err(), "{bad}");
        }
    }

    #[test]
    fn hh_mm_times_are_whole_minutes() {
        assert_eq!(parse_time("12:00", Unit::Second), Ok(43_200));
        assert_eq!(parse_time("23:59", Unit::Millisecond), Ok(86_340_000));
        assert!(parse_time("24:00", Unit::Second).is_err());
        assert!(parse_time("12:00:", Unit::Second).is_err());
    }

    #[test]
    fn date_patterns_parse_exactly_or_refuse() {
        let day = |y, m, d| days_since_epoch(NaiveDate::from_ymd_opt(y, m, d).unwrap());
        assert_eq!(
            parse_date_as("05/06/2019", Some("%d/%m/%Y")),
            Ok(day(2019, 6, 5))
        );
        assert_eq!(
            parse_date_as("2005-10-3", Some("%Y-%m-%-d")),
            Ok(day(2005, 10, 3))
        );
        assert_eq!(parse_date_as("2019-06-05", None), Ok(day(2019, 6, 5)));
        // chrono would read an unpadded day under %d; it does not write it back, so it is refused.
        let e = parse_date_as("5/06/2019", Some("%d/%m/%Y")).unwrap_err();
        assert!(e.contains("writes this value as \"05/06/2019\""), "{e}");
        assert!(parse_date_as("31/02/2019", Some("%d/%m/%Y")).is_err());
        assert!(parse_date_as("05/06/2019 ", Some("%d/%m/%Y")).is_err());
        assert!(check_pattern("%d/%m/%Y").is_ok());
        assert!(check_pattern("%Q").is_err());
        assert!(check_pattern("%Y-%m-%d %H:%M %Z").is_err());
    }

    #[test]
    fn timestamp_patterns_and_mapped_zones() {
        let zones = vec![("EST".to_string(), -5 * 3600), ("CET".to_string(), 3600)];
        let us = |s: &str, tz: Option<&str>, pattern: Option<&str>| {
            parse_timestamp_as(
                s,
                Unit::Microsecond,
                tz,
                &TextFormat {
                    pattern,
                    zones: &zones,
                },
            )
        };
        let t0 = T0 * 1_000_000;
        assert_eq!(us("01/01/2024 10:00", None, Some("%d/%m/%Y %H:%M")), Ok(t0));
        assert_eq!(
            us("01/01/2024", None, Some("%d/%m/%Y")),
            Ok(t0 - 36_000_000_000)
        );
        assert_eq!(
            us(
                "01/01/2024 10:00:00.250",
                None,
                Some("%d/%m/%Y %H:%M:%S%.3f")
            ),
            Ok(t0 + 250_000)
        );
        // Abbreviations only as mapped, with or without a pattern, and only into zoned columns.
        assert_eq!(us("2024-01-01 05:00:00 EST", Some("UTC"), None), Ok(t0));
        assert_eq!(
            us("01/01/2024 11:00 CET", Some("UTC"), Some("%d/%m/%Y %H:%M")),
            Ok(t0)
        );
        assert!(us("2024-01-01 05:00:00 PST", Some("UTC"), None).is_err());
        assert!(us("2024-01-01 05:00:00 EST", None, None).is_err());
        assert!(
            parse_timestamp("2024-01-01 05:00:00 EST", Unit::Microsecond, Some("UTC")).is_err()
        );
        assert_eq!(
            us(
                "01/01/2024 11:00 +0100",
                Some("UTC"),
                Some("%d/%m/%Y %H:%M %z")
            ),
            Ok(t0)
        );
        assert!(us("1/01/2024 10:00", None, Some("%d/%m/%Y %H:%M")).is_err());
        // Sub-unit digits are refused, never dropped.
        assert!(parse_timestamp_as(
            "01/01/2024 10:00:00.250",
            Unit::Second,
            None,
            &TextFormat {
                pattern: Some("%d/%m/%Y %H:%M:%S%.3f"),
                zones: &[]
            }
        )
        .is_err());
    }

    const T0: i64 = 1_704_103_200; // 2024-01-01T10:00:00Z

    #[test]
    fn timestamp_formats_naive() {
        let u = Unit::Second;
        assert_eq!(parse_timestamp("2024-01-01", u, None), Ok(T0 - 36_000));
        assert_eq!(parse_timestamp("2024-01-01 10:00", u, None), Ok(T0));
        assert_eq!(parse_timestamp("2024-01-01T10:00", u, None), Ok(T0));
        assert_eq!(parse_timestamp("2024-01-01 10:00:00", u, None), Ok(T0));
        assert_eq!(parse_timestamp("2024-01-01T10:00:00", u, None), Ok(T0));
        assert_eq!(parse_timestamp("2024-01-01t10:00:00", u, None), Ok(T0));
        assert_eq!(parse_timestamp("2024-01-01 10:00:00.000", u, None), Ok(T0));
        assert_eq!(parse_timestamp("1969-12-31 23:59:59", u, None), Ok(-1));
        for bad in [
            "2024-01-01 10",
            "2024-01-01T",
            "2024-01-01 10:00:00.",
            "2024-01-01 10:00.5",
            "2024-01-0110:00",
            "2024-01-01  10:00",
            "2024-02-30 10:00",
            "2024-01-01 25:00",
            "2024-01-01 10:00:00.1234567890",
            "2024-01-01 10:00:00 +25:00",
            "2024-01-01 10:00:00 +02:60",
            "2024-01-01 10:00:00+2",
            "2024-01-01 10:00:00  Z",
            "2024-01-01 10:00:00 Europe/Paris",
            "2024-01-01Z",
            "x",
        ] {
            assert!(parse_timestamp(bad, u, Some("UTC")).is_err(), "{bad}");
        }
    }

    #[test]
    fn timestamp_units_and_precision() {
        let s = "2024-01-01 10:00:00.123456789";
        assert_eq!(
            parse_timestamp(s, Unit::Nanosecond, None),
            Ok(T0 * 1_000_000_000 + 123_456_789)
        );
        assert_eq!(
            parse_timestamp(s, Unit::Microsecond, None).unwrap_err(),
            "has more precision than µs"
        );
        assert_eq!(
            parse_timestamp(s, Unit::Millisecond, None).unwrap_err(),
            "has more precision than ms"
        );
        let s = "2024-01-01 10:00:00.123";
        assert_eq!(
            parse_timestamp(s, Unit::Millisecond, None),
            Ok(T0 * 1000 + 123)
        );
        assert_eq!(
            parse_timestamp(s, Unit::Microsecond, None),
            Ok(T0 * 1_000_000 + 123_000)
        );
        assert!(parse_timestamp(s, Unit::Second, None).is_err());
        assert_eq!(
            parse_timestamp("2024-01-01 10:00:00.5", Unit::Millisecond, None),
            Ok(T0 * 1000 + 500)
        );
        // Before the epoch the fraction still counts forward from the second.
        assert_eq!(
            parse_timestamp("1969-12-31 23:59:59.25", Unit::Millisecond, None),
            Ok(-750)
        );
    }

    #[test]
    fn timestamp_range() {
        assert!(parse_timestamp("2262-04-12 00:00:00", Unit::Nanosecond, None).is_err());
        assert!(parse_timestamp("9999-12-31 23:59:59", Unit::Nanosecond, Some("UTC")).is_err());
        assert!(parse_timestamp("1677-09-21 00:00:00", Unit::Nanosecond, None).is_err());
        assert!(
            parse_timestamp("2262-04-11 23:47:16.854775807", Unit::Nanosecond, None)
                == Ok(i64::MAX)
        );
        assert_eq!(
            parse_timestamp("9999-12-31 23:59:59.999999", Unit::Microsecond, None),
            Ok(253_402_300_799_999_999)
        );
        assert_eq!(
            parse_timestamp("0000-01-01", Unit::Millisecond, None),
            Ok(-62_167_219_200_000)
        );
        // Offsets may push just past the calendar range without trouble.
        assert_eq!(
            parse_timestamp("0000-01-01 00:00+01:00", Unit::Second, Some("UTC")),
            Ok(-62_167_219_200 - 3600)
        );
    }

    #[test]
    fn timestamp_zones() {
        let u = Unit::Second;
        // A value with an offset into a naive column is refused.
        for s in [
            "2024-01-01T10:00:00Z",
            "2024-01-01 10:00:00+00:00",
            "2024-01-01 10:00 UTC",
        ] {
            assert_eq!(
                parse_timestamp(s, u, None).unwrap_err(),
                "has a UTC offset but the column has no time zone"
            );
        }
        // Every offset spelling denotes the same instant.
        for s in [
            "2024-01-01T10:00:00Z",
            "2024-01-01T10:00:00z",
            "2024-01-01 10:00:00 Z",
            "2024-01-01 10:00:00UTC",
            "2024-01-01 10:00:00 UTC",
            "2024-01-01T12:00:00+02:00",
            "2024-01-01T12:00:00+0200",
            "2024-01-01T12:00:00+02",
            "2024-01-01 12:00:00 +02:00",
            "2024-01-01T12:00+02:00",
            "2024-01-01T05:30:00-04:30",
            "2024-01-01T05:30-0430",
            "2024-01-01T10:00:00-00:00",
        ] {
            for tz in ["UTC", "+05:00", "Europe/Paris", "America/New_York"] {
                assert_eq!(parse_timestamp(s, u, Some(tz)), Ok(T0), "{s} in {tz}");
            }
        }
        // Wall-clock values are read in the column's zone.
        let wall = "2024-01-01 10:00:00";
        assert_eq!(parse_timestamp(wall, u, Some("UTC")), Ok(T0));
        assert_eq!(parse_timestamp(wall, u, Some("+02:00")), Ok(T0 - 7200));
        assert_eq!(parse_timestamp(wall, u, Some("+0200")), Ok(T0 - 7200));
        assert_eq!(parse_timestamp(wall, u, Some("+02")), Ok(T0 - 7200));
        assert_eq!(parse_timestamp(wall, u, Some("-05:30")), Ok(T0 + 19_800));
        // Paris is UTC+1 in winter and UTC+2 in summer.
        assert_eq!(
            parse_timestamp(wall, u, Some("Europe/Paris")),
            Ok(T0 - 3600)
        );
        let summer = parse_timestamp(
            "2024-07-01 10:00:00.5",
            Unit::Millisecond,
            Some("Europe/Paris"),
        );
        assert_eq!(summer, Ok(1_719_820_800_500));
        // DST gap: 02:30 does not exist in Paris on 2024-03-31.
        let e = parse_timestamp("2024-03-31 02:30:00", u, Some("Europe/Paris")).unwrap_err();
        assert!(e.contains("does not exist in Europe/Paris"), "{e}");
        // DST overlap: 02:30 happens twice on 2024-10-27.
        let e = parse_timestamp("2024-10-27 02:30:00", u, Some("Europe/Paris")).unwrap_err();
        assert!(e.contains("ambiguous in Europe/Paris"), "{e}");
        // With an explicit offset the same wall times are fine.
        assert!(parse_timestamp("2024-10-27 02:30:00+01:00", u, Some("Europe/Paris")).is_ok());
        // Unknown zones are errors, even for values that carry an offset.
        for tz in ["Mars/Olympus", "", "utc", "+2", "+02:00:00", "Z"] {
            let e = parse_timestamp("2024-01-01T10:00:00Z", u, Some(tz)).unwrap_err();
            assert!(e.contains("unknown time zone"), "{tz}: {e}");
        }
    }

    fn format_decimal(v: i64, scale: u32) -> String {
        let abs = i128::from(v).unsigned_abs();
        let p = 10u128.pow(scale);
        let sign = if v < 0 { "-" } else { "" };
        if scale == 0 {
            format!("{sign}{abs}")
        } else {
            format!(
                "{sign}{}.{:0width$}",
                abs / p,
                abs % p,
                width = scale as usize
            )
        }
    }

    proptest! {
        #[test]
        fn decimal_round_trip(v in any::<i64>(), scale in 0u32..=9, extra in 0usize..3) {
            let text = format_decimal(v, scale);
            prop_assert_eq!(parse_decimal(&text, 38, scale as i8), Ok(i128::from(v)));
            prop_assert_eq!(parse_decimal(&text, 19, scale as i8), Ok(i128::from(v)));
            // Trailing zeros in the fraction never change the value.
            let padded = if scale == 0 { format!("{text}.{}", "0".repeat(extra)) } else { format!("{text}{}", "0".repeat(extra)) };
            prop_assert_eq!(parse_decimal(&padded, 38, scale as i8), Ok(i128::from(v)));
            // Scientific notation of the same value.
            let sci = format!("{}e-{scale}", v);
            prop_assert_eq!(parse_decimal(&sci, 38, scale as i8), Ok(i128::from(v)));
            // One more scale digit multiplies by ten.
            prop_assert_eq!(parse_decimal(&text, 38, scale as i8 + 1), Ok(i128::from(v) * 10));
        }

        #[test]
        fn decimal_never_panics(s in "[-+0-9.eE]{0,30}", p in 0u8..=40, scale in any::<i8>()) {
            let _ = parse_decimal(&s, p, scale);
        }

        #[test]
        fn timestamp_round_trip(
            secs in -62_167_219_200i64..=253_402_300_799,
            nanos in 0u32..1_000_000_000,
            off_min in -(23 * 60 + 59)..=(23i32 * 60 + 59),
        ) {
            let dt: DateTime<Utc> = DateTime::from_timestamp(secs, nanos).unwrap();
            let z = dt.format("%Y-%m-%dT%H:%M:%S%.9fZ").to_string();
            let ns = i128::from(secs) * 1_000_000_000 + i128::from(nanos);
            let got = parse_timestamp(&z, Unit::Nanosecond, Some("UTC"));
            match i64::try_from(ns) {
                Ok(want) => prop_assert_eq!(got, Ok(want)),
                Err(_) => prop_assert!(got.is_err()),
            }
            let us = z.replace(&format!("{:09}", nanos), &format!("{:06}", nanos / 1000));
            if nanos % 1000 == 0 {
                prop_assert_eq!(parse_timestamp(&us, Unit::Microsecond, Some("UTC")), Ok(secs * 1_000_000 + i64::from(nanos / 1000)));
            }
            // The same instant written with a fixed offset; naive read-back of
            // the wall clock in that offset's column zone agrees.
            let off = FixedOffset::east_opt(off_min * 60).unwrap();
            let local = dt.with_timezone(&off);
            let with_off = local.format("%Y-%m-%d %H:%M:%S%.9f%:z").to_string();
            let wall = local.format("%Y-%m-%d %H:%M:%S%.9f").to_string();
            let off_str = local.format("%:z").to_string();
            if (0..=9999).contains(&local.year()) {
                let ms_secs = secs * 1000 + i64::from(nanos / 1_000_000);
                let exact_ms = nanos % 1_000_000 == 0;
                let a = parse_timestamp(&with_off, Unit::Millisecond, Some("Asia/Tokyo"));
                let b = parse_timestamp(&wall, Unit::Millisecond, Some(&off_str));
                if exact_ms {
                    prop_assert_eq!(a, Ok(ms_secs));
                    prop_assert_eq!(b, Ok(ms_secs));
                } else {
                    prop_assert!(a.is_err() && b.is_err());
                }
                let c = parse_timestamp(&with_off, Unit::Nanosecond, Some("UTC"));
                let d = parse_timestamp(&wall, Unit::Nanosecond, Some(&off_str));
                prop_assert_eq!(&c, &d);
            }
        }
    }
}
