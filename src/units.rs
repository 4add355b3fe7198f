//! Time units: the one table of how many of each unit make a second, and
//! their names. Arrow's `TimeUnit` is the type everywhere.

pub use arrow::datatypes::TimeUnit;

/// Units of `unit` in one second.
#[inline]
pub const fn per_second(unit: TimeUnit) -> i64 {
    match unit {
        TimeUnit::Second => 1,
        TimeUnit::Millisecond => 1_000,
        TimeUnit::Microsecond => 1_000_000,
        TimeUnit::Nanosecond => 1_000_000_000,
    }
}

/// Nanoseconds in one `unit`.
#[inline]
pub const fn nanos_per(unit: TimeUnit) -> i64 {
    1_000_000_000 / per_second(unit)
}

/// The flag spelling: `s`, `ms`, `us`, `ns`.
pub const fn name(unit: TimeUnit) -> &'static str {
    match unit {
        TimeUnit::Second => "s",
        TimeUnit::Millisecond => "ms",
        TimeUnit::Microsecond => "us",
        TimeUnit::Nanosecond => "ns",
    }
}

/// The display spelling, as Arrow prints types: `s`, `ms`, `µs`, `ns`.
pub const fn symbol(unit: TimeUnit) -> &'static str {
    match unit {
        TimeUnit::Microsecond => "µs",
        other => name(other),
    }
}

/// Parses `s`, `ms`, `us` or `ns`.
pub fn parse(text: &str) -> Result<TimeUnit, String> {
    match text.trim() {
        "s" => Ok(TimeUnit::Second),
        "ms" => Ok(TimeUnit::Millisecond),
        "us" => Ok(TimeUnit::Microsecond),
        "ns" => Ok(TimeUnit::Nanosecond),
        other => Err(format!("unknown time unit '{other}': use s, ms, us or ns")),
    }
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
