//! Options: what the user asked for, in one set of structs shared by the
//! command line, `--rules` files and (later) batch files, with the checks
//! that need no data. A setting is validated here once, whichever way it
//! arrived; the plan then checks it against the schemas.
//!
//! Two shapes per concern: a serde shape of plain strings and numbers as a
//! file spells it ([`RulesFile`], [`InputConfig`], [`RunConfig`]), and the
//! typed options the engine takes ([`AlignOptions`], [`InputOptions`]). The
//! command line fills the serde shapes from its flags, so there is one
//! conversion and one set of error messages.

mod inputs;
mod run;

use arrow::datatypes::{DataType, TimeUnit};

pub use inputs::{Dialect, Encoding, Format, InputConfig, InputOptions, Int96Unit, TextOptions};
pub use run::{Passes, RunConfig, RunSettings};

/// A normalization rule applied to a column's values before hashing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Normalize {
    /// Round floats and decimals to N decimal places, half away from zero.
    Round(u32),
    /// Truncate timestamps to this unit (toward negative infinity).
    TimestampPrecision(TimeUnit),
    /// Strip leading and trailing whitespace (CHAR padding included).
    Trim,
    /// Compare strings case-insensitively (Unicode lowercase).
    CaseInsensitive,
    /// Treat the empty string as NULL.
    EmptyAsNull,
}

impl Normalize {
    pub fn describe(&self) -> String {
        match self {
            Normalize::Round(n) => format!("round to {n} places (half away from zero)"),
            Normalize::TimestampPrecision(u) => format!("truncate to {}", unit_name(u)),
            Normalize::Trim => "trim whitespace".into(),
            Normalize::CaseInsensitive => "case-insensitive".into(),
            Normalize::EmptyAsNull => "'' as NULL".into(),
        }
    }
}

/// The flag spelling of a unit: `s`, `ms`, `us`, `ns`.
pub fn unit_name(u: &TimeUnit) -> &'static str {
    crate::units::name(*u)
}

/// Parses `s`, `ms`, `us` or `ns`.
pub fn parse_unit(text: &str) -> Result<TimeUnit, String> {
    crate::units::parse(text)
}

/// A rule for a column name, or for every eligible column (`*`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rule {
    pub column: String,
    pub rule: Normalize,
}

/// How the user asked columns to be aligned and treated.
#[derive(Debug, Clone, Default)]
pub struct AlignOptions {
    pub by_position: bool,
    pub ignore_case_names: bool,
    /// (source name, target name)
    pub maps: Vec<(String, String)>,
    pub exclude: Vec<String>,
    pub columns: Option<Vec<String>>,
    pub ignore_extra_columns: bool,
    /// Time zone assumed for naive timestamps compared with zoned ones.
    pub assume_tz: Option<String>,
    /// (column, type): parse that column into the type on the side where it differs.
    pub casts: Vec<(String, DataType)>,
    pub rules: Vec<Rule>,
}

/// Parses a type name for `--cast`: int64, float64, decimal(P,S), date,
/// timestamp[(unit[, tz])], string, bool, and Arrow's own spellings.
pub fn parse_type(text: &str) -> Result<DataType, String> {
    let t = text.trim().to_ascii_lowercase();
    let simple = match t.as_str() {
        "int8" | "tinyint" => Some(DataType::Int8),
        "int16" | "smallint" => Some(DataType::Int16),
        "int32" | "int" | "integer" => Some(DataType::Int32),
        "int64" | "bigint" | "long" => Some(DataType::Int64),
        "uint64" => Some(DataType::UInt64),
        "float32" | "float" | "real" => Some(DataType::Float32),
        "float64" | "double" => Some(DataType::Float64),
        "string" | "utf8" | "text" | "varchar" => Some(DataType::Utf8),
        "bool" | "boolean" => Some(DataType::Boolean),
        "date" | "date32" => Some(DataType::Date32),
        "timestamp" => Some(DataType::Timestamp(TimeUnit::Microsecond, None)),
        _ => None,
    };
    if let Some(dt) = simple {
        return Ok(dt);
    }
    if let Some(args) = t.strip_prefix("decimal(").and_then(|r| r.strip_suffix(')')) {
        let mut it = args.split(',').map(|x| x.trim().parse::<i64>());
        if let (Some(Ok(p)), Some(Ok(s)), None) = (it.next(), it.next(), it.next()) {
            if (1..=38).contains(&p) && (-38..=38).contains(&s) {
                return Ok(DataType::Decimal128(p as u8, s as i8));
            }
            if (39..=76).contains(&p) && (-76..=76).contains(&s) {
                return Ok(DataType::Decimal256(p as u8, s as i8));
            }
        }
        return Err(format!(
            "invalid decimal type '{text}': use decimal(P,S) with 1 <= P <= 76"
        ));
    }
    if let Some(args) = t
        .strip_prefix("timestamp(")
        .and_then(|r| r.strip_suffix(')'))
    {
        let unit = parse_unit(args.split(',').next().unwrap_or(""))?;
        // The zone keeps the user's spelling (zone names are case-sensitive).
        let tz = text
            .trim()
            .split_once(',')
            .map(|(_, z)| z.trim().trim_end_matches(')').trim().to_string());
        return Ok(DataType::Timestamp(unit, tz.map(Into::into)));
    }
    text.trim()
        .parse::<DataType>()
        .map_err(|_| format!("unknown type '{text}': try int64, float64, decimal(18,2), date, timestamp(us), timestamp(us, UTC), string, bool"))
}

/// The `--rules FILE` format: one TOML file per migrated table.
///
/// ```toml
/// ignore_case_names = true
/// exclude = ["load_ts"]
/// assume_tz = "Europe/Paris"
/// [map]
/// cust_id = "customer_id"
/// [cast]
/// amount = "decimal(18,2)"
/// [round]
/// amount = 2
/// [timestamp_precision]
/// created_at = "ms"
/// trim = ["name"]
/// case_insensitive = ["status"]
/// empty_as_null = ["*"]
/// ```
#[derive(Debug, Default, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RulesFile {
    #[serde(default)]
    pub by_position: bool,
    #[serde(default)]
    pub ignore_case_names: bool,
    #[serde(default)]
    pub ignore_extra_columns: bool,
    #[serde(default)]
    pub exclude: Vec<String>,
    pub columns: Option<Vec<String>>,
    pub assume_tz: Option<String>,
    #[serde(default)]
    pub map: std::collections::BTreeMap<String, String>,
    #[serde(default)]
    pub cast: std::collections::BTreeMap<String, String>,
    #[serde(default)]
    pub round: std::collections::BTreeMap<String, u32>,
    #[serde(default)]
    pub timestamp_precision: std::collections::BTreeMap<String, String>,
    #[serde(default)]
    pub trim: Vec<String>,
    #[serde(default)]
    pub case_insensitive: Vec<String>,
    #[serde(default)]
    pub empty_as_null: Vec<String>,
}

impl RulesFile {
    /// Reads and validates a rules file. Errors name the file but not
    /// their setting; [`RulesFile::apply_to`] errors name the setting.
    pub fn load(path: &std::path::Path) -> Result<RulesFile, String> {
        let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
        toml::from_str(&text).map_err(|e| {
            let msg = e.to_string();
            let first = msg.lines().next().unwrap_or("invalid TOML").to_string();
            format!("{}: {}", path.display(), first.trim_end_matches('\n'))
        })
    }

    /// Adds this file's settings to `opts`; command-line settings given too are kept.
    pub fn apply_to(self, opts: &mut AlignOptions) -> Result<(), String> {
        opts.by_position |= self.by_position;
        opts.ignore_case_names |= self.ignore_case_names;
        opts.ignore_extra_columns |= self.ignore_extra_columns;
        opts.exclude.extend(self.exclude);
        if opts.columns.is_none() {
            opts.columns = self.columns;
        }
        if opts.assume_tz.is_none() {
            opts.assume_tz = self.assume_tz;
        }
        opts.maps.extend(self.map);
        for (c, t) in self.cast {
            let ty = parse_type(&t).map_err(|e| format!("cast {c}={t}: {e}"))?;
            opts.casts.push((c, ty));
        }
        for (c, n) in self.round {
            opts.rules.push(Rule {
                column: c,
                rule: Normalize::Round(n),
            });
        }
        for (c, u) in self.timestamp_precision {
            let unit = parse_unit(&u).map_err(|e| format!("timestamp-precision {c}={u}: {e}"))?;
            opts.rules.push(Rule {
                column: c,
                rule: Normalize::TimestampPrecision(unit),
            });
        }
        for (list, rule) in [
            (self.trim, Normalize::Trim),
            (self.case_insensitive, Normalize::CaseInsensitive),
            (self.empty_as_null, Normalize::EmptyAsNull),
        ] {
            for c in list {
                opts.rules.push(Rule {
                    column: c,
                    rule: rule.clone(),
                });
            }
        }
        Ok(())
    }
}
