//! Time units: the one table of how many of each unit make a second, and
//! their names. Arrow's `TimeUnit` is the type everywhere. Also the one
//! grammar of a UTC offset in data (`+HH:MM`, `+HHMM`, `+HH`), and the
//! check of a strftime pattern for dates written otherwise.

pub use arrow::datatypes::TimeUnit;

/// Units of `unit` in one second.
#[inline]
pub(crate) const fn per_second(unit: TimeUnit) -> i64 {
    match unit {
        TimeUnit::Second => 1,
        TimeUnit::Millisecond => 1_000,
        TimeUnit::Microsecond => 1_000_000,
        TimeUnit::Nanosecond => 1_000_000_000,
    }
}

/// Nanoseconds in one `unit`.
#[inline]
pub(crate) const fn nanos_per(unit: TimeUnit) -> i64 {
    1_000_000_000 / per_second(unit)
}

/// The flag spelling: `s`, `ms`, `us`, `ns`.
pub(crate) const fn name(unit: TimeUnit) -> &'static str {
    match unit {
        TimeUnit::Second => "s",
        TimeUnit::Millisecond => "ms",
        TimeUnit::Microsecond => "us",
        TimeUnit::Nanosecond => "ns",
    }
}

/// The display spelling, as Arrow prints types: `s`, `ms`, `µs`, `ns`.
pub(crate) const fn symbol(unit: TimeUnit) -> &'static str {
    match unit {
        TimeUnit::Microsecond => "µs",
        other => name(other),
    }
}

/// Parses `s`, `ms`, `us` or `ns`.
pub(crate) fn parse(text: &str) -> Result<TimeUnit, String> {
    match text.trim() {
        "s" => Ok(TimeUnit::Second),
        "ms" => Ok(TimeUnit::Millisecond),
        "us" => Ok(TimeUnit::Microsecond),
        "ns" => Ok(TimeUnit::Nanosecond),
        other => Err(format!("unknown time unit '{other}': use s, ms, us or ns")),
    }
}

/// Whether a strftime pattern is one chrono can both parse and format;
/// checked once, before any value, so formatting never fails later.
pub(crate) fn check_pattern(pattern: &str) -> Result<(), String> {
    use chrono::format::{Item, StrftimeItems};
    if StrftimeItems::new(pattern).any(|i| matches!(i, Item::Error)) {
        return Err(format!("{pattern:?} is not a valid strftime pattern"));
    }
    if pattern.contains("%Z") {
        return Err(format!(
            "{pattern:?}: %Z (zone names) cannot be parsed; map abbreviations with `--assume-tz EST=-05:00` and leave them out of the pattern"
        ));
    }
    Ok(())
}

/// Parses a UTC offset as data writes it: `+HH:MM`, `+HHMM` or `+HH` (or
/// `-`), hours below 24 and minutes below 60. Returns seconds east of UTC.
pub(crate) fn parse_utc_offset(text: &str) -> Option<i32> {
    let b = text.as_bytes();
    let (neg, rest) = match b.split_first()? {
        (b'+', rest) => (false, rest),
        (b'-', rest) => (true, rest),
        _ => return None,
    };
    let two = |at: usize| -> Option<i32> {
        let d = rest.get(at..at + 2)?;
        d.iter().try_fold(0i32, |acc, &c| {
            c.is_ascii_digit().then(|| acc * 10 + i32::from(c - b'0'))
        })
    };
    let (h, m) = match rest.len() {
        5 if rest.get(2) == Some(&b':') => (two(0)?, two(3)?),
        4 => (two(0)?, two(2)?),
        2 => (two(0)?, 0),
        _ => return None,
    };
    if h > 23 || m > 59 {
        return None;
    }
    let secs = h * 3600 + m * 60;
    Some(if neg { -secs } else { secs })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_table_is_consistent() {
        for u in [
            TimeUnit::Second,
            TimeUnit::Millisecond,
            TimeUnit::Microsecond,
            TimeUnit::Nanosecond,
        ] {
            assert_eq!(per_second(u) * nanos_per(u), 1_000_000_000);
            assert_eq!(parse(name(u)), Ok(u));
        }
        assert!(parse("min").is_err());
    }
}
