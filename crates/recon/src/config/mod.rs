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

pub(crate) mod batch;
mod inputs;
pub mod option_table;
mod run;
mod toml_error;

use arrow::datatypes::{DataType, TimeUnit};

use crate::error::ReconError;

pub use inputs::{
    Dialect, Encoding, Format, InputConfig, InputOptions, Int96Unit, Sniff, TextOptions,
};
pub use run::{default_limit, default_threads, Passes, RunConfig, RunSettings};

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
    /// The rule in words, as reports and `recon schema` show it:
    /// `round to 2 places (half away from zero)`, `trim whitespace`.
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
pub(crate) fn unit_name(u: &TimeUnit) -> &'static str {
    crate::units::name(*u)
}

/// Parses `s`, `ms`, `us` or `ns`.
pub(crate) fn parse_unit(text: &str) -> Result<TimeUnit, String> {
    crate::units::parse(text)
}

/// A rule for a column name, or for every eligible column (`*`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rule {
    /// The column the rule is for, by source or target name, or `*` for
    /// every column the rule can apply to.
    pub column: String,
    /// What is done to the column's values.
    pub rule: Normalize,
}

/// How the user asked columns to be aligned and treated.
#[derive(Debug, Clone, Default)]
pub struct AlignOptions {
    /// Pair columns by position, as SQL set operations do, instead of by
    /// name (`--by-position`). Default: false.
    pub by_position: bool,
    /// Match column names case-insensitively, in pairing and in the names
    /// other options give (`--ignore-case-names`). Default: false.
    pub ignore_case_names: bool,
    /// (source name, target name)
    pub maps: Vec<(String, String)>,
    /// Columns left out of the comparison, by source or target name
    /// (`--exclude`); they still appear in the evidence files. Default: none.
    pub exclude: Vec<String>,
    /// Compare only these columns, by source or target name (`--columns`).
    /// None (the default) compares every paired column.
    pub columns: Option<Vec<String>>,
    /// Leave out a column present on one side only instead of refusing the
    /// pair (`--ignore-extra-columns`). Default: false.
    pub ignore_extra_columns: bool,
    /// Time zone assumed for naive timestamps compared with zoned ones.
    pub assume_tz: Option<String>,
    /// Zone abbreviations text values may carry (`EST`), with the offset
    /// each stands for (seconds east of UTC): abbreviations are ambiguous
    /// (CST is three zones), so recon reads one only as mapped.
    pub zone_names: Vec<(String, i32)>,
    /// (column, type): parse that column into the type on the side where it differs.
    pub casts: Vec<(String, DataType)>,
    /// Normalization rules (`--round`, `--timestamp-precision`, `--trim`,
    /// `--case-insensitive`, `--empty-as-null`). Default: none.
    pub rules: Vec<Rule>,
    /// Keyed mode: the business key columns (source names), in order.
    pub key: Option<Vec<String>>,
    /// Keyed mode: (column, tolerance) for float and decimal columns.
    pub tolerances: Vec<(String, Tolerance)>,
}

/// Drift allowed before a diff fails: within every threshold given, a
/// drifting pair passes (exit 0) with its drift reported.
#[derive(Debug, Clone, Copy, Default, PartialEq, serde::Deserialize, serde::Serialize)]
#[serde(deny_unknown_fields)]
pub struct Thresholds {
    /// Unmatched occurrences, both directions together (plus values that
    /// failed to parse).
    pub max_unmatched_rows: Option<u64>,
    /// Unmatched occurrences over max(source rows, target rows).
    pub max_unmatched_ratio: Option<f64>,
    /// Keyed mode: keys whose values changed.
    pub max_changed: Option<u64>,
    /// Keyed mode: keys missing on either side.
    pub max_missing: Option<u64>,
}

/// A setting whose value is refused, named as the library and files spell
/// it (`assume_tz`). As text it names the setting as a rules file's key
/// (`assume_tz X: why`); as a [`ReconError`] the setting is an option hint
/// each front end spells its own way.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SettingError {
    /// The setting's name as the library and files spell it (`assume_tz`).
    pub setting: &'static str,
    /// The refused value as given (`COL=VALUE` for a per-column setting),
    /// or None when the setting is refused as a whole and named alone.
    pub value: Option<String>,
    /// Why the value is refused.
    pub message: String,
}

impl SettingError {
    /// `setting` refused, with the `value` given if any, and why
    /// (`message`).
    pub fn new(setting: &'static str, value: Option<String>, message: impl Into<String>) -> Self {
        SettingError {
            setting,
            value,
            message: message.into(),
        }
    }
}

impl std::fmt::Display for SettingError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let name = self.setting;
        match &self.value {
            Some(v) => write!(f, "{name} {v}: {}", self.message),
            None => write!(f, "{name}: {}", self.message),
        }
    }
}

impl From<SettingError> for ReconError {
    fn from(e: SettingError) -> Self {
        let hint = match &e.value {
            Some(v) => crate::error::hint::option(e.setting, v),
            None => crate::error::hint::switch(e.setting),
        };
        ReconError::Usage(format!("{hint}: {}", e.message))
    }
}

impl Thresholds {
    /// Whether no threshold is given.
    pub fn is_empty(&self) -> bool {
        *self == Thresholds::default()
    }

    /// Checks the values: a ratio is between 0 and 1 (`0.05` is 5%).
    pub fn validate(&self) -> Result<(), SettingError> {
        if let Some(r) = self.max_unmatched_ratio {
            if !(0.0..=1.0).contains(&r) {
                return Err(SettingError::new(
                    "max_unmatched_ratio",
                    Some(r.to_string()),
                    "must be between 0 and 1 (0.05 is 5%)",
                ));
            }
        }
        Ok(())
    }

    /// The first threshold a fingerprint comparison (`--quick`, a batch's
    /// `mode = "quick"`) cannot decide, as (setting, value): fingerprints
    /// tell whether the tables differ, not by how many rows, so only a
    /// limit of 0 (the comparison's own verdict) can be gated on exactly.
    /// Passing a drift that might exceed the limit would be a false pass.
    pub fn undecidable_by_fingerprints(&self) -> Option<(&'static str, String)> {
        if let Some(n) = self.max_unmatched_rows.filter(|&n| n > 0) {
            return Some(("max_unmatched_rows", n.to_string()));
        }
        if let Some(r) = self.max_unmatched_ratio.filter(|&r| r > 0.0) {
            return Some(("max_unmatched_ratio", r.to_string()));
        }
        if let Some(n) = self.max_changed.filter(|&n| n > 0) {
            return Some(("max_changed", n.to_string()));
        }
        self.max_missing
            .filter(|&n| n > 0)
            .map(|n| ("max_missing", n.to_string()))
    }

    /// `self`, with `fallback`'s value where `self` gives none.
    pub fn or(self, fallback: Thresholds) -> Thresholds {
        Thresholds {
            max_unmatched_rows: self.max_unmatched_rows.or(fallback.max_unmatched_rows),
            max_unmatched_ratio: self.max_unmatched_ratio.or(fallback.max_unmatched_ratio),
            max_changed: self.max_changed.or(fallback.max_changed),
            max_missing: self.max_missing.or(fallback.max_missing),
        }
    }
}

/// Parses one of a settings enum's names ([`Format`], [`Passes`],
/// [`DiffColumns`], [`Int96Unit`]) as files spell it, aliases included,
/// for front ends that take the name as text (`--passes 1`).
pub fn parse_choice<T: serde::de::DeserializeOwned>(text: &str) -> crate::error::Result<T> {
    use serde::de::IntoDeserializer;
    let text: serde::de::value::StrDeserializer<'_, serde::de::value::Error> =
        text.into_deserializer();
    T::deserialize(text).map_err(|e| ReconError::Usage(e.to_string()))
}

/// Which value columns of `changed.parquet` are filled (keyed mode).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum DiffColumns {
    /// Only the columns that changed for that key (the others are NULL).
    #[default]
    Changed,
    /// Every compared column, changed or not.
    All,
}

/// How far apart two numbers may be and still match (keyed mode).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Tolerance {
    /// The bound as an exact decimal: `mantissa × 10^-scale`.
    pub mantissa: i128,
    /// Decimal places of `mantissa`, from -38 to 76; negative when an
    /// exponent moves the point past the digits (`2.5e3` is 25, scale -2).
    pub scale: i32,
    /// Relative (`1e-9r`: |a − b| ≤ t · max(|a|, |b|)) or absolute (|a − b| ≤ t).
    pub relative: bool,
}

impl Tolerance {
    /// Parses `0.01` (absolute) or `1e-9r` (relative). The bound is kept as
    /// the exact decimal written, so `0.1` is one tenth, not the nearest
    /// float64.
    pub(crate) fn parse(text: &str) -> Result<Tolerance, String> {
        let t = text.trim();
        let (num, relative) = match t.strip_suffix(['r', 'R']) {
            Some(n) => (n, true),
            None => (t, false),
        };
        let bad = || {
            format!(
                "invalid tolerance '{text}': use a non-negative number, e.g. 0.01 (absolute) or 1e-9r (relative)"
            )
        };
        let (digits, exp) = match num.split_once(['e', 'E']) {
            Some((d, e)) => (d, e.parse::<i32>().map_err(|_| bad())?),
            None => (num, 0),
        };
        let digits = digits.strip_prefix('+').unwrap_or(digits);
        let (int, frac) = digits.split_once('.').unwrap_or((digits, ""));
        if int.is_empty() && frac.is_empty()
            || !int.bytes().chain(frac.bytes()).all(|b| b.is_ascii_digit())
        {
            return Err(bad());
        }
        let all = format!("{int}{frac}");
        let mantissa: i128 = all.parse().map_err(|_| bad())?;
        let scale = (frac.len() as i32).checked_sub(exp).ok_or_else(bad)?;
        if !(-38..=76).contains(&scale) {
            return Err(bad());
        }
        Ok(Tolerance {
            mantissa,
            scale,
            relative,
        })
    }

    /// The bound as a float64 (for float columns).
    pub(crate) fn as_f64(&self) -> f64 {
        self.mantissa as f64 / 10f64.powi(self.scale)
    }

    /// The bound as a plain decimal, with ` (relative)` for a relative one
    /// (`0.01`, `2500`, `0.5 (relative)`), as the keyed report's
    /// `tolerances` show it.
    pub fn describe(&self) -> String {
        let mut s = if self.scale > 0 {
            let digits = self.mantissa.to_string();
            let scale = self.scale as usize;
            let padded = format!("{digits:0>width$}", width = scale + 1);
            let (i, f) = padded.split_at(padded.len() - scale);
            format!("{i}.{f}")
        } else {
            format!("{}{}", self.mantissa, "0".repeat((-self.scale) as usize))
        };
        if self.relative {
            s.push_str(" (relative)");
        }
        s
    }
}

/// Parses a type name for `--cast`: int64, float64, decimal(P,S), date,
/// timestamp[(unit[, tz])], string, bool, and Arrow's own spellings.
pub(crate) fn parse_type(text: &str) -> Result<DataType, String> {
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

/// A setting given as one string or a list of them.
#[derive(Debug, Clone, PartialEq, Eq, serde::Deserialize)]
#[serde(untagged)]
pub enum OneOrMany {
    /// One string (`assume_tz = "UTC"`).
    One(String),
    /// A list of strings (`assume_tz = ["UTC", "EST=-05:00"]`).
    Many(Vec<String>),
}

impl OneOrMany {
    /// The strings as a list (one string is a list of one).
    pub(crate) fn into_vec(self) -> Vec<String> {
        match self {
            OneOrMany::One(s) => vec![s],
            OneOrMany::Many(v) => v,
        }
    }
}

/// The `--rules FILE` format: one TOML file per migrated table.
///
/// ```toml
/// ignore_case_names = true
/// exclude = ["load_ts"]
/// assume_tz = "Europe/Paris"      # or a list: ["Europe/Paris", "EST=-05:00"]
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
/// key = ["order_id", "line_no"]
/// [tolerance]
/// amount = "0.01"
/// rate = "1e-9r"
/// ```
#[derive(Debug, Clone, Default, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RulesFile {
    /// Pair columns by position instead of by name (`--by-position`).
    /// Default: false.
    #[serde(default)]
    pub by_position: bool,
    /// Match column names case-insensitively (`--ignore-case-names`).
    /// Default: false.
    #[serde(default)]
    pub ignore_case_names: bool,
    /// Leave out a column present on one side only instead of refusing the
    /// pair (`--ignore-extra-columns`). Default: false.
    #[serde(default)]
    pub ignore_extra_columns: bool,
    /// Columns left out of the comparison, by source or target name
    /// (`--exclude`). Default: none.
    #[serde(default)]
    pub exclude: Vec<String>,
    /// Compare only these columns, by source or target name (`--columns`);
    /// unset: every paired column.
    pub columns: Option<Vec<String>>,
    /// A zone for naive timestamps, and `ABBR=±HH:MM` abbreviations.
    pub assume_tz: Option<OneOrMany>,
    /// Renamed columns, source name to target name (`--map SRC=TGT`), under
    /// `[map]`.
    #[serde(default)]
    pub map: std::collections::BTreeMap<String, String>,
    /// Column (or `*`) to the type it is parsed or converted into, such as
    /// `decimal(18,2)` (`--cast COL=TYPE`), under `[cast]`.
    #[serde(default)]
    pub cast: std::collections::BTreeMap<String, String>,
    /// Column (or `*`) to the decimal places its floats and decimals are
    /// rounded to, half away from zero (`--round COL=N`), under `[round]`.
    #[serde(default)]
    pub round: std::collections::BTreeMap<String, u32>,
    /// Column (or `*`) to the unit its timestamps are truncated to: `s`,
    /// `ms`, `us` or `ns` (`--timestamp-precision COL=UNIT`), under
    /// `[timestamp_precision]`.
    #[serde(default)]
    pub timestamp_precision: std::collections::BTreeMap<String, String>,
    /// Columns (or `*`) whose leading and trailing whitespace is stripped
    /// (`--trim`). Default: none.
    #[serde(default)]
    pub trim: Vec<String>,
    /// Columns (or `*`) whose strings compare case-insensitively
    /// (`--case-insensitive`). Default: none.
    #[serde(default)]
    pub case_insensitive: Vec<String>,
    /// Columns (or `*`) whose empty strings are NULL (`--empty-as-null`).
    /// Default: none.
    #[serde(default)]
    pub empty_as_null: Vec<String>,
    /// Keyed mode's business key.
    pub key: Option<Vec<String>>,
    /// Keyed mode: column to the bound its values may differ by, `0.01`
    /// (absolute) or `1e-9r` (relative) (`--tolerance COL=TOL`), under
    /// `[tolerance]`.
    #[serde(default)]
    pub tolerance: std::collections::BTreeMap<String, String>,
    /// CSV/TSV lines before the header (`--skip-rows`), for every file or
    /// one side's; input settings, read by [`RulesFile::fill_input`].
    pub skip_rows: Option<usize>,
    /// `skip_rows` for the source side only (`--source-skip-rows`).
    pub source_skip_rows: Option<usize>,
    /// `skip_rows` for the target side only (`--target-skip-rows`).
    pub target_skip_rows: Option<usize>,
    /// CSV/TSV comment character (`--comment`).
    pub comment: Option<String>,
    /// The source's SELECT, when the source is a database
    /// (`--source-query`).
    pub source_query: Option<String>,
    /// The target's SELECT (`--target-query`).
    pub target_query: Option<String>,
    /// Connections per database side (`--connections`).
    pub connections: Option<usize>,
    /// Object-store settings (`--storage-option`), under `[storage_options]`.
    #[serde(default)]
    pub storage_options: std::collections::BTreeMap<String, String>,
}

impl RulesFile {
    /// Gives `input` this file's input settings (`skip_rows`, its per-side
    /// forms, `comment`, the database queries and connections) where it has none: flags, and a batch pair's
    /// own `[pair.input]`, win.
    pub fn fill_input(&self, input: &mut InputConfig) {
        input.skip_rows = input.skip_rows.or(self.skip_rows);
        input.source_skip_rows = input.source_skip_rows.or(self.source_skip_rows);
        input.target_skip_rows = input.target_skip_rows.or(self.target_skip_rows);
        if input.comment.is_none() {
            input.comment.clone_from(&self.comment);
        }
        if input.source_query.is_none() {
            input.source_query.clone_from(&self.source_query);
        }
        if input.target_query.is_none() {
            input.target_query.clone_from(&self.target_query);
        }
        input.connections = input.connections.or(self.connections);
        for (k, v) in &self.storage_options {
            input
                .storage_options
                .entry(k.clone())
                .or_insert_with(|| v.clone());
        }
    }

    /// Reads and validates a rules file. TOML errors are one line naming
    /// the file, the line and the key; [`RulesFile::apply_to`] errors name
    /// the setting.
    pub fn load(path: &std::path::Path) -> crate::error::Result<RulesFile> {
        let text = std::fs::read_to_string(path)
            .map_err(|e| ReconError::Usage(format!("{}: {e}", path.display())))?;
        RulesFile::parse(path, &text)
    }

    /// Parses the text of a rules file read from `path` (named in errors).
    pub fn parse(path: &std::path::Path, text: &str) -> crate::error::Result<RulesFile> {
        toml::from_str(text).map_err(|e| ReconError::Usage(toml_error::describe(path, text, &e)))
    }

    /// Adds this file's settings to `opts`; command-line settings given too are kept.
    pub fn apply_to(self, opts: &mut AlignOptions) -> Result<(), SettingError> {
        opts.by_position |= self.by_position;
        opts.ignore_case_names |= self.ignore_case_names;
        opts.ignore_extra_columns |= self.ignore_extra_columns;
        opts.exclude.extend(self.exclude);
        if opts.columns.is_none() {
            opts.columns = self.columns;
        }
        let mut zone = None;
        for tz in self.assume_tz.map(OneOrMany::into_vec).unwrap_or_default() {
            match tz.split_once('=') {
                Some((name, offset)) => {
                    let (name, offset) = (name.trim(), offset.trim());
                    let bad = |why: &str| SettingError::new("assume_tz", Some(tz.clone()), why);
                    let secs = crate::units::parse_utc_offset(offset)
                        .ok_or_else(|| bad("expected ABBR=+HH:MM, e.g. EST=-05:00"))?;
                    if name.is_empty() || !name.chars().all(|c| c.is_ascii_alphabetic()) {
                        return Err(bad("a zone abbreviation is letters, e.g. EST=-05:00"));
                    }
                    if !opts.zone_names.iter().any(|(n, _)| n == name) {
                        opts.zone_names.push((name.to_string(), secs));
                    }
                }
                None if zone.is_some() => {
                    return Err(SettingError::new(
                        "assume_tz",
                        None,
                        format!(
                            "two zones for naive timestamps ({} and {tz}); give one",
                            zone.unwrap_or_default()
                        ),
                    ))
                }
                None => zone = Some(tz),
            }
        }
        if opts.assume_tz.is_none() {
            opts.assume_tz = zone;
        }
        opts.maps.extend(self.map);
        if opts.key.is_none() {
            opts.key = self.key;
        }
        for (c, t) in self.tolerance {
            let tol = Tolerance::parse(&t)
                .map_err(|e| SettingError::new("tolerance", Some(format!("{c}={t}")), e))?;
            opts.tolerances.push((c, tol));
        }
        for (c, t) in self.cast {
            let ty = parse_type(&t)
                .map_err(|e| SettingError::new("cast", Some(format!("{c}={t}")), e))?;
            opts.casts.push((c, ty));
        }
        for (c, n) in self.round {
            opts.rules.push(Rule {
                column: c,
                rule: Normalize::Round(n),
            });
        }
        for (c, u) in self.timestamp_precision {
            let unit = parse_unit(&u).map_err(|e| {
                SettingError::new("timestamp_precision", Some(format!("{c}={u}")), e)
            })?;
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

#[cfg(test)]
mod tests {
    use super::*;

    fn rules_error(text: &str) -> String {
        RulesFile::parse(std::path::Path::new("rules.toml"), text)
            .unwrap_err()
            .to_string()
    }

    #[test]
    fn a_rules_file_error_names_the_line_and_the_key() {
        let unknown = rules_error("by_position = true\nexlcude = [\"load_ts\"]\n");
        assert!(
            unknown.starts_with(
                "rules.toml: line 2: unknown key 'exlcude': did you mean 'exclude'? (expected one of: by_position, ignore_case_names,"
            ),
            "{unknown}"
        );
        assert_eq!(
            rules_error("trim = [\"a\"]\n[round]\namount = \"x\"\n"),
            "rules.toml: line 3, key 'round.amount': invalid type: string \"x\", expected u32"
        );
        assert_eq!(
            rules_error("by_position = \"yes\"\n"),
            "rules.toml: line 1, key 'by_position': invalid type: string \"yes\", expected a boolean"
        );
        assert_eq!(
            rules_error("exclude = [\"a\"\ntrim = [\"b\"]\n"),
            "rules.toml: line 2, column 1: missing comma between array elements, expected `,`"
        );
        assert_eq!(
            rules_error("trim = [\"a\"]\ntrim = [\"b\"]\n"),
            "rules.toml: line 2, column 1: duplicate key 'trim'"
        );
        assert!(!unknown.contains('\n'), "{unknown}");
    }

    #[test]
    fn storage_options_in_a_rules_file_fill_what_flags_leave_out() {
        let rules = RulesFile::parse(
            std::path::Path::new("rules.toml"),
            "[storage_options]\naws_endpoint = \"http://localhost:9000\"\naws_region = \"eu-west-1\"\n",
        )
        .unwrap();
        let mut input = InputConfig::default();
        input
            .storage_options
            .insert("aws_region".into(), "us-east-1".into());
        rules.fill_input(&mut input);
        assert_eq!(input.storage_options["aws_region"], "us-east-1");
        assert_eq!(
            input.storage_options["aws_endpoint"],
            "http://localhost:9000"
        );
        let [src, tgt] = input.build().unwrap();
        assert_eq!(src.storage_options, tgt.storage_options);
        assert_eq!(src.storage_options.len(), 2);
    }

    #[test]
    fn tolerances_are_exact_decimals() {
        let t = Tolerance::parse("0.01").unwrap();
        assert_eq!((t.mantissa, t.scale, t.relative), (1, 2, false));
        let r = Tolerance::parse("1e-9r").unwrap();
        assert_eq!((r.mantissa, r.scale, r.relative), (1, 9, true));
        let big = Tolerance::parse("2.5E3").unwrap();
        assert_eq!((big.mantissa, big.scale), (25, -2));
        assert_eq!(big.describe(), "2500");
        assert_eq!(t.describe(), "0.01");
        assert_eq!(
            Tolerance::parse("0.5r").unwrap().describe(),
            "0.5 (relative)"
        );
        for bad in ["", "-1", "abc", "1e", ".", "1.2.3", "r"] {
            assert!(Tolerance::parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn assume_tz_takes_one_zone_and_mapped_abbreviations() {
        let f: RulesFile =
            toml::from_str(r#"assume_tz = ["Europe/Paris", "EST=-05:00", "IST=+05:30"]"#).unwrap();
        let mut o = AlignOptions::default();
        f.apply_to(&mut o).unwrap();
        assert_eq!(o.assume_tz.as_deref(), Some("Europe/Paris"));
        assert_eq!(
            o.zone_names,
            vec![
                ("EST".to_string(), -5 * 3600),
                ("IST".to_string(), 5 * 3600 + 1800)
            ]
        );
        let one: RulesFile = toml::from_str(r#"assume_tz = "UTC""#).unwrap();
        let mut o = AlignOptions::default();
        one.apply_to(&mut o).unwrap();
        assert_eq!(o.assume_tz.as_deref(), Some("UTC"));
        for bad in [
            r#"["UTC", "Europe/Paris"]"#,
            r#""EST=5""#,
            r#""E5T=-05:00""#,
        ] {
            let f: RulesFile = toml::from_str(&format!("assume_tz = {bad}")).unwrap();
            assert!(f.apply_to(&mut AlignOptions::default()).is_err(), "{bad}");
        }
    }
}
