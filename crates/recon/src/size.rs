//! Byte sizes: the units, parsing `512MiB`-style limits, and formatting for people.

pub(crate) const KIB: u64 = 1024;
pub(crate) const MIB: u64 = 1024 * KIB;
pub(crate) const GIB: u64 = 1024 * MIB;

/// Parses `512MiB`, `1GiB`, `2G`, `100000` (bytes), or `unlimited`.
pub(crate) fn parse_size(text: &str) -> Result<u64, String> {
    let t = text.trim();
    if t.eq_ignore_ascii_case("unlimited") || t.eq_ignore_ascii_case("none") {
        return Ok(u64::MAX);
    }
    let split = t
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(t.len());
    let (num, unit) = t.split_at(split);
    let value: f64 = num
        .parse()
        .map_err(|_| format!("invalid size '{text}': expected e.g. 512MiB, 1GiB"))?;
    let mult = match unit.trim().to_ascii_lowercase().as_str() {
        "" | "b" => 1,
        "k" | "kb" | "kib" => KIB,
        "m" | "mb" | "mib" => MIB,
        "g" | "gb" | "gib" => GIB,
        "t" | "tb" | "tib" => 1024 * GIB,
        _ => {
            return Err(format!(
                "invalid size unit in '{text}': use KiB, MiB, GiB or TiB"
            ))
        }
    };
    Ok((value * mult as f64) as u64)
}

/// Formats bytes for people: `1.5 GiB`.
pub(crate) fn format_size(bytes: u64) -> String {
    if bytes == u64::MAX {
        return "unlimited".into();
    }
    let units = [("GiB", GIB), ("MiB", MIB), ("KiB", KIB)];
    for (name, size) in units {
        if bytes >= size {
            return format!("{:.1} {name}", bytes as f64 / size as f64);
        }
    }
    format!("{bytes} B")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_parse() {
        assert_eq!(parse_size("256MiB").unwrap(), 256 * MIB);
        assert_eq!(parse_size("1GiB").unwrap(), GIB);
        assert_eq!(parse_size("1.5G").unwrap(), GIB + GIB / 2);
        assert_eq!(parse_size("64 KiB").unwrap(), 64 * KIB);
        assert_eq!(parse_size("100").unwrap(), 100);
        assert_eq!(parse_size("unlimited").unwrap(), u64::MAX);
        assert!(parse_size("12 parsecs").is_err());
        assert!(parse_size("MiB").is_err());
    }
}
