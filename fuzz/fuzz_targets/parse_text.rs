//! The exact text parsers on arbitrary strings: never panic; a decimal that
//! parses prints back to a value that parses to the same integer.
#![no_main]
use libfuzzer_sys::fuzz_target;
use recon::internals::parse::{self, Unit};

fuzz_target!(|data: &[u8]| {
    let Some((&sel, rest)) = data.split_first() else {
        return;
    };
    let Ok(s) = std::str::from_utf8(rest) else {
        return;
    };
    let _ = parse::parse_bool(s);
    let _ = parse::parse_i128(s);
    let _ = parse::parse_f64(s);
    let _ = parse::parse_date(s);
    let unit = [Unit::Second, Unit::Millisecond, Unit::Microsecond, Unit::Nanosecond][sel as usize % 4];
    let _ = parse::parse_time(s, unit);
    for tz in [None, Some("UTC"), Some("+05:30"), Some("Europe/Paris")] {
        let _ = parse::parse_timestamp(s, unit, tz);
    }
    let precision = 1 + sel % 38;
    let scale = (sel as i8 % 12) - 2;
    if let Ok(v) = parse::parse_decimal(s, precision, scale) {
        // Print the unscaled value back at the scale and parse it again.
        let text = if scale > 0 {
            let digits = v.unsigned_abs().to_string();
            let sc = scale as usize;
            let padded = format!("{digits:0>width$}", width = sc + 1);
            let (int, frac) = padded.split_at(padded.len() - sc);
            format!("{}{int}.{frac}", if v < 0 { "-" } else { "" })
        } else {
            format!("{v}e{}", -scale)
        };
        assert_eq!(parse::parse_decimal(&text, precision, scale), Ok(v), "{s} -> {text}");
    }
});
