//! How a side is read: its format, the CSV dialect, NULL strings, the text
//! encoding and INT96 timestamps; the serde shape a file or the command
//! line fills ([`InputConfig`]) and its validation.

use arrow::datatypes::TimeUnit;

use crate::error::hint::{option, switch};
use crate::error::{ReconError, Result};

/// A file format recon reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Format {
    /// Apache Parquet.
    Parquet,
    /// Arrow IPC, file or stream (told apart by the file's magic bytes).
    #[serde(alias = "arrow", alias = "feather")]
    Ipc,
    /// CSV, its dialect sniffed where not given.
    Csv,
    /// CSV with a tab delimiter by default.
    Tsv,
    /// Newline-delimited JSON: one object per line (also `jsonl`, `json`).
    #[serde(alias = "jsonl", alias = "json")]
    Ndjson,
}

impl Format {
    /// The name messages and reports use: `parquet`, `arrow-ipc`, `csv`,
    /// `tsv`, `ndjson`.
    pub fn name(self) -> &'static str {
        match self {
            Format::Parquet => "parquet",
            Format::Ipc => "arrow-ipc",
            Format::Csv => "csv",
            Format::Tsv => "tsv",
            Format::Ndjson => "ndjson",
        }
    }

    /// Whether values arrive as text and take their types from elsewhere.
    pub(crate) fn is_text(self) -> bool {
        matches!(self, Format::Csv | Format::Tsv | Format::Ndjson)
    }
}

/// How the user asked to read one side.
#[derive(Debug, Clone, Default)]
pub struct InputOptions {
    /// Overrides detection by file extension.
    pub format: Option<Format>,
    /// How this side's text files are read: the CSV dialect, NULL strings,
    /// the encoding.
    pub text: TextOptions,
    /// When both sides are text, infer column types instead of comparing text.
    pub infer_types: bool,
    /// The unit Parquet INT96 timestamps are read in.
    pub int96_unit: Int96Unit,
    /// The options given for this side that only CSV/TSV files take
    /// (`skip_rows`, `comment`), by option name: a pair where no side they
    /// reach is CSV/TSV refuses them rather than drop them unseen.
    pub csv_only: Vec<&'static str>,
    /// A database side's SELECT (`--source-query`), read instead of a
    /// `?table=`; refused for a side that is not a database.
    pub query: Option<String>,
    /// Connections a database side reads with (`--connections`); None:
    /// one per core.
    pub connections: Option<usize>,
    /// Settings of the object store a side's URL names (`--storage-option
    /// KEY=VALUE`): object_store's keys (`aws_endpoint`, `aws_region`,
    /// `aws_skip_signature`, ...), as delta-rs takes them.
    pub storage_options: Vec<(String, String)>,
}

/// Character encoding of text files.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Encoding {
    /// UTF-8, the default.
    #[default]
    Utf8,
    /// ISO-8859-1: every byte is the code point of the same value. (WHATWG
    /// maps the label to windows-1252; recon keeps the ISO meaning, which is
    /// what `latin-1` always meant here.)
    Latin1,
    /// An encoding whose bytes below 0x80 are always ASCII (single-byte
    /// code pages, EUC-JP, EUC-KR): the CSV structure is read from the bytes
    /// and each value decoded.
    Bytes(&'static encoding_rs::Encoding),
    /// An encoding whose bytes can look like ASCII inside a character
    /// (UTF-16, Shift_JIS, Big5, GBK, gb18030, ISO-2022-JP): the file is
    /// decoded to UTF-8 as it is read, before the CSV structure is.
    Stream(&'static encoding_rs::Encoding),
}

impl Encoding {
    /// The encoding a WHATWG label names (`windows-1252`, `utf-16le`,
    /// `shift_jis`, ...), or why not.
    pub(crate) fn from_label(label: &str) -> std::result::Result<Encoding, String> {
        let l = label.trim().to_ascii_lowercase();
        match l.as_str() {
            "utf-8" | "utf8" => return Ok(Encoding::Utf8),
            "latin-1" | "latin1" | "iso-8859-1" | "iso8859-1" | "l1" => {
                return Ok(Encoding::Latin1)
            }
            _ => {}
        }
        let e = encoding_rs::Encoding::for_label(l.as_bytes())
            .filter(|e| *e != encoding_rs::REPLACEMENT)
            .ok_or_else(|| {
                format!("{} {label}: not an encoding label recon knows (WHATWG labels, e.g. utf-8, windows-1252, iso-8859-15, utf-16le, shift_jis)", switch("encoding"))
            })?;
        Ok(if e == encoding_rs::UTF_8 {
            Encoding::Utf8
        } else if e.is_single_byte() || e == encoding_rs::EUC_JP || e == encoding_rs::EUC_KR {
            Encoding::Bytes(e)
        } else {
            Encoding::Stream(e)
        })
    }

    /// The encoding's name as messages and reports show it: `UTF-8`,
    /// `ISO-8859-1`, `windows-1252`, ...
    pub fn name(self) -> &'static str {
        match self {
            Encoding::Utf8 => "UTF-8",
            Encoding::Latin1 => "ISO-8859-1",
            Encoding::Bytes(e) | Encoding::Stream(e) => e.name(),
        }
    }
}

/// How text files are read.
#[derive(Debug, Clone)]
pub struct TextOptions {
    /// None: ',' (tab for .tsv).
    pub delimiter: Option<u8>,
    /// None: no field is quoted (quote bytes are data). Default: `"`.
    pub quote: Option<u8>,
    /// None: quotes inside quoted fields are doubled.
    pub escape: Option<u8>,
    /// The first record names the columns.
    pub header: bool,
    /// Unquoted fields equal to one of these are NULL (the empty field always is).
    pub null_values: Vec<String>,
    /// Character encoding of the files (`--encoding`). Default: UTF-8.
    pub encoding: Encoding,
    /// Values that fail to parse and are counted as drift instead of
    /// stopping the run.
    pub max_parse_errors: u64,
    /// Every record ends with a delimiter (legacy exports, TPC-H `.tbl`),
    /// whose empty last field is not a column. None: detected per table.
    pub trailing_delimiter: Option<bool>,
    /// A quoted empty field `""` is NULL too (fully quoted exports that
    /// write NULL as `""`); otherwise it is the empty string.
    pub quoted_empty_as_null: bool,
    /// (column or `*`, strftime pattern) for text read as dates.
    pub date_formats: Vec<(String, String)>,
    /// The parts of the dialect recon sniffs from the files: those not given.
    pub sniff: Sniff,
    /// The header was sniffed with no evidence either way (every column text).
    pub header_unsure: bool,
    /// The quote was sniffed with no quoted field in the sample (see
    /// `input::sniff`): a quoted field in a record is an error.
    pub quote_unproven: bool,
    /// (column or `*`, strftime pattern) for text read as timestamps.
    pub timestamp_formats: Vec<(String, String)>,
    /// Physical lines skipped at the top of each file, before blank lines
    /// and the header (`--skip-rows`, or a preamble sniffing found).
    pub skip_rows: usize,
    /// Lines starting with this byte (outside quoted fields) are ignored
    /// everywhere in the file (`--comment`).
    pub comment: Option<u8>,
    /// Lines at the top look like a preamble (or comments) but sniffing is
    /// not sure enough to skip them: the words that name the option, added
    /// to errors the preamble would cause. The number is the lines meant.
    pub preamble_hint: Option<(usize, String)>,
}

impl Default for TextOptions {
    fn default() -> Self {
        TextOptions {
            delimiter: None,
            quote: Some(b'"'),
            escape: None,
            header: true,
            null_values: Vec::new(),
            encoding: Encoding::Utf8,
            max_parse_errors: 0,
            trailing_delimiter: None,
            quoted_empty_as_null: false,
            date_formats: Vec::new(),
            timestamp_formats: Vec::new(),
            sniff: Sniff::default(),
            header_unsure: false,
            quote_unproven: false,
            skip_rows: 0,
            comment: None,
            preamble_hint: None,
        }
    }
}

impl TextOptions {
    /// The CSV dialect these options give, with `,` where no delimiter is
    /// set.
    pub fn dialect(&self) -> Dialect {
        Dialect {
            delimiter: self.delimiter.unwrap_or(b','),
            quote: self.quote,
            escape: self.escape,
            comment: self.comment,
        }
    }
}

/// What the user left to sniffing.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Sniff {
    /// The delimiter (no `--delimiter` given).
    pub delimiter: bool,
    /// The quote character (no `--quote` given).
    pub quote: bool,
    /// The escape character (no `--escape` given).
    pub escape: bool,
    /// Whether the first line is a header (neither `--header` nor
    /// `--no-header` given).
    pub header: bool,
    /// Lines before the header (no `--skip-rows` given).
    pub preamble: bool,
}

impl Sniff {
    /// Whether anything is left to sniffing.
    pub fn any(self) -> bool {
        self.delimiter || self.quote || self.escape || self.header || self.preamble
    }
}

/// The unit INT96 timestamps are read in (`--int96-unit`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Deserialize)]
pub enum Int96Unit {
    /// Spark's precision; holds every date from year -290308 to 294247.
    #[default]
    #[serde(rename = "us")]
    Microsecond,
    /// Impala's and Hive's precision; holds 1677-09-21 to 2262-04-11 only.
    #[serde(rename = "ns")]
    Nanosecond,
}

impl Int96Unit {
    /// The Arrow unit of the timestamps read.
    pub(crate) fn time_unit(self) -> TimeUnit {
        match self {
            Int96Unit::Microsecond => TimeUnit::Microsecond,
            Int96Unit::Nanosecond => TimeUnit::Nanosecond,
        }
    }
}

/// How a CSV file is written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Dialect {
    /// Field separator: `b','` by default, `b'\t'` for TSV.
    pub delimiter: u8,
    /// Quote byte; `None` disables quoting (quote bytes are plain data).
    pub quote: Option<u8>,
    /// `None`: a quote inside a quoted field is written doubled (RFC 4180).
    /// `Some(b)`: inside quoted fields, `b` makes the next byte literal
    /// (doubled quotes still work too).
    pub escape: Option<u8>,
    /// A line starting with this byte where a record would start is a
    /// comment and no record; inside a quoted field it is data.
    pub comment: Option<u8>,
}

impl Default for Dialect {
    fn default() -> Self {
        Dialect {
            delimiter: b',',
            quote: Some(b'"'),
            escape: None,
            comment: None,
        }
    }
}

impl Dialect {
    /// Rejects dialects whose special bytes collide, which would make the
    /// grammar ambiguous. The lexer never panics on such a dialect, but its
    /// output would be meaningless, so callers should check this first.
    pub(crate) fn validate(&self) -> Result<(), String> {
        let d = self.delimiter;
        if d == b'\n' || d == b'\r' {
            return Err("the delimiter cannot be a line break".to_string());
        }
        if let Some(q) = self.quote {
            if q == d || q == b'\n' || q == b'\r' {
                return Err(
                    "the quote character must differ from the delimiter and line breaks"
                        .to_string(),
                );
            }
        }
        if let Some(e) = self.escape {
            if e == d || e == b'\n' || e == b'\r' {
                return Err(
                    "the escape character must differ from the delimiter and line breaks"
                        .to_string(),
                );
            }
        }
        if let Some(c) = self.comment {
            if c == d || Some(c) == self.quote || Some(c) == self.escape || c == b'\n' || c == b'\r'
            {
                return Err(
                    "the comment character must differ from the delimiter, the quote, the escape and line breaks"
                        .to_string(),
                );
            }
        }
        Ok(())
    }

    /// The escape byte, ignoring one equal to the quote: that case is
    /// exactly doubled-quote handling, which is always on.
    pub(crate) fn effective_escape(&self) -> Option<u8> {
        match (self.escape, self.quote) {
            (Some(e), Some(q)) if e == q => None,
            (Some(e), Some(_)) => Some(e),
            // Escapes only apply inside quoted fields.
            _ => None,
        }
    }
}

/// The input settings as flags and files spell them, for both sides.
#[derive(Debug, Clone, Default, PartialEq, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct InputConfig {
    /// The source's format, instead of the one its extension names
    /// (`--source-format`).
    pub source_format: Option<Format>,
    /// The target's format, instead of the one its extension names
    /// (`--target-format`).
    pub target_format: Option<Format>,
    /// One character; `\t` or `tab` for a tab.
    pub delimiter: Option<String>,
    /// One character, or `none`.
    pub quote: Option<String>,
    /// CSV escape character inside quoted fields, one character
    /// (`--escape`); unset: sniffed (none, i.e. doubled quotes, or `\`).
    pub escape: Option<String>,
    /// CSV files have no header line; columns are `column_1`, `column_2`,
    /// ... (`--no-header`). With neither this nor `header`, it is sniffed.
    #[serde(default)]
    pub no_header: bool,
    /// The first line is a header (instead of sniffing whether it is).
    #[serde(default)]
    pub header: bool,
    /// Unquoted fields equal to one of these are NULL, besides the empty
    /// field (`--null-value`); `""` names the quoted empty field, as
    /// `quoted_empty_as_null` does. Default: none.
    #[serde(default)]
    pub null_values: Vec<String>,
    /// `utf-8` (default), `latin-1`, or any WHATWG label (`windows-1252`, `utf-16le`, ...).
    pub encoding: Option<String>,
    /// When both sides are text, infer column types (so `1.50` equals
    /// `1.5`) instead of comparing exact text (`--infer-types`). Default:
    /// false.
    #[serde(default)]
    pub infer_types: bool,
    /// Up to this many text values that fail to parse are counted as drift
    /// instead of stopping the run (`--max-parse-errors`). Default: 0.
    #[serde(default)]
    pub max_parse_errors: u64,
    /// The unit Parquet INT96 timestamps are read in (`--int96-unit`);
    /// unset: microseconds.
    pub int96_unit: Option<Int96Unit>,
    /// Every record ends with a delimiter whose empty last field is not a
    /// column; detected from the first records when not set.
    #[serde(default)]
    pub trailing_delimiter: bool,
    /// `""` is NULL (also spelled `null_values = ['""']`).
    #[serde(default)]
    pub quoted_empty_as_null: bool,
    /// Column (or `*`) to the strftime pattern its dates are written in.
    #[serde(default)]
    pub date_format: std::collections::BTreeMap<String, String>,
    /// Column (or `*`) to the strftime pattern its timestamps are written in.
    #[serde(default)]
    pub timestamp_format: std::collections::BTreeMap<String, String>,
    /// Lines skipped at the top of every CSV/TSV file of both sides, before
    /// the header; unset: a clear preamble is sniffed (`0` turns that off).
    pub skip_rows: Option<usize>,
    /// `skip_rows` for the source side only (wins over `skip_rows`).
    pub source_skip_rows: Option<usize>,
    /// `skip_rows` for the target side only (wins over `skip_rows`).
    pub target_skip_rows: Option<usize>,
    /// One character: CSV/TSV lines starting with it are comments, ignored
    /// wherever a record could start (not inside a quoted field).
    pub comment: Option<String>,
    /// The source's SELECT, when the source is a database (`postgres://…`).
    pub source_query: Option<String>,
    /// The target's SELECT, when the target is a database.
    pub target_query: Option<String>,
    /// Connections per database side (ctid slices of one exported
    /// snapshot); unset: one per core.
    pub connections: Option<usize>,
    /// Object-store settings (`--storage-option KEY=VALUE`), for both sides.
    #[serde(default)]
    pub storage_options: std::collections::BTreeMap<String, String>,
}

fn one_byte(flag: &str, v: &str) -> Result<u8> {
    let v = match v {
        "\\t" | "tab" => "\t",
        other => other,
    };
    match v.as_bytes() {
        [b] if b.is_ascii() && *b != b'\n' && *b != b'\r' => Ok(*b),
        _ => Err(ReconError::Usage(format!(
            "{} {v:?}: expected one ASCII character other than a newline",
            switch(flag)
        ))),
    }
}

impl InputConfig {
    /// Checks every setting and builds the options of both sides.
    pub fn build(&self) -> Result<[InputOptions; 2]> {
        // `--null-value '""'` names the quoted empty field, not two quote characters.
        let quoted_empty = self.null_values.iter().any(|v| v == "\"\"");
        if self.header && self.no_header {
            return Err(ReconError::Usage(format!(
                "{} and {} contradict each other",
                switch("header"),
                switch("no_header")
            )));
        }
        let mut text = TextOptions {
            header: !self.no_header,
            sniff: Sniff {
                delimiter: self.delimiter.is_none(),
                quote: self.quote.is_none(),
                escape: self.escape.is_none(),
                header: !self.header && !self.no_header,
                preamble: false,
            },
            null_values: self
                .null_values
                .iter()
                .filter(|v| *v != "\"\"")
                .cloned()
                .collect(),
            quoted_empty_as_null: self.quoted_empty_as_null || quoted_empty,
            max_parse_errors: self.max_parse_errors,
            trailing_delimiter: self.trailing_delimiter.then_some(true),
            ..Default::default()
        };
        if let Some(d) = &self.delimiter {
            text.delimiter = Some(one_byte("delimiter", d)?);
        }
        if let Some(q) = &self.quote {
            text.quote = if q.eq_ignore_ascii_case("none") {
                None
            } else {
                Some(one_byte("quote", q)?)
            };
        }
        if let Some(e) = &self.escape {
            text.escape = Some(one_byte("escape", e)?);
        }
        if let Some(c) = &self.comment {
            let b = one_byte("comment", c)?;
            // Padded values start with spaces: a blank comment byte would eat rows.
            if b.is_ascii_whitespace() {
                return Err(ReconError::Usage(format!(
                    "{} {c:?}: expected a visible character such as '#'",
                    switch("comment")
                )));
            }
            text.comment = Some(b);
        }
        let encoding = self.encoding.as_deref().unwrap_or("utf-8");
        text.encoding = Encoding::from_label(encoding).map_err(ReconError::Usage)?;
        if text.quote.is_some() && text.quote == text.delimiter {
            return Err(ReconError::Usage(format!(
                "{} and {} must differ",
                switch("quote"),
                switch("delimiter")
            )));
        }
        text.dialect()
            .validate()
            .map_err(|m| ReconError::Usage(format!("CSV dialect: {m}")))?;
        for (flag, map, out) in [
            ("date_format", &self.date_format, &mut text.date_formats),
            (
                "timestamp_format",
                &self.timestamp_format,
                &mut text.timestamp_formats,
            ),
        ] {
            for (column, pattern) in map {
                crate::units::check_pattern(pattern).map_err(|m| {
                    ReconError::Usage(format!(
                        "{}: {m}",
                        option(flag, format!("{column}={pattern}"))
                    ))
                })?;
                out.push((column.clone(), pattern.clone()));
            }
        }
        let int96_unit = self.int96_unit.unwrap_or_default();
        if self.connections == Some(0) {
            return Err(ReconError::Usage(format!(
                "{}: at least one connection",
                option("connections", "0")
            )));
        }
        let side = |format: Option<Format>,
                    own: Option<usize>,
                    flag: &'static str,
                    query: &Option<String>| {
            let mut text = text.clone();
            let mut csv_only = Vec::new();
            match (own, self.skip_rows) {
                (Some(n), _) => {
                    text.skip_rows = n;
                    csv_only.push(flag);
                }
                (None, Some(n)) => {
                    text.skip_rows = n;
                    csv_only.push("skip_rows");
                }
                // Nothing given: a clear preamble is sniffed.
                (None, None) => text.sniff.preamble = true,
            }
            if self.comment.is_some() {
                csv_only.push("comment");
            }
            InputOptions {
                format,
                text,
                infer_types: self.infer_types,
                int96_unit,
                csv_only,
                query: query.clone(),
                connections: self.connections,
                storage_options: self
                    .storage_options
                    .iter()
                    .map(|(k, v)| (k.clone(), v.clone()))
                    .collect(),
            }
        };
        Ok([
            side(
                self.source_format,
                self.source_skip_rows,
                "source_skip_rows",
                &self.source_query,
            ),
            side(
                self.target_format,
                self.target_skip_rows,
                "target_skip_rows",
                &self.target_query,
            ),
        ])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn build(c: InputConfig) -> std::result::Result<[InputOptions; 2], String> {
        c.build().map_err(|e| e.to_string())
    }

    #[test]
    fn defaults_build() {
        let [s, t] = build(InputConfig::default()).unwrap();
        assert_eq!(s.text.dialect(), Dialect::default());
        assert!(t.text.header);
        assert_eq!(s.int96_unit, Int96Unit::Microsecond);
    }

    #[test]
    fn bad_dialects_are_refused() {
        for (delimiter, quote, escape, why) in [
            (Some(","), Some(","), None, "must differ"),
            (Some(",,"), None, None, "one ASCII character"),
            (Some("\n"), None, None, "one ASCII character"),
            (None, None, Some(","), "escape character must differ"),
            (
                Some("|"),
                Some("'"),
                Some("|"),
                "escape character must differ",
            ),
        ] {
            let err = build(InputConfig {
                delimiter: delimiter.map(Into::into),
                quote: quote.map(Into::into),
                escape: escape.map(Into::into),
                ..Default::default()
            })
            .unwrap_err();
            assert!(err.contains(why), "{err}");
        }
        let ok = build(InputConfig {
            delimiter: Some("tab".into()),
            quote: Some("none".into()),
            ..Default::default()
        })
        .unwrap();
        assert_eq!(ok[0].text.delimiter, Some(b'\t'));
        assert_eq!(ok[0].text.quote, None);
    }

    #[test]
    fn a_file_spells_formats_and_units_as_the_flags_do() {
        let c: InputConfig =
            toml::from_str("source_format = \"feather\"\nint96_unit = \"ns\"").unwrap();
        assert_eq!(c.source_format, Some(Format::Ipc));
        assert_eq!(c.int96_unit, Some(Int96Unit::Nanosecond));
        assert!(toml::from_str::<InputConfig>("source_format = \"orc\"").is_err());
        assert!(toml::from_str::<InputConfig>("delimeter = \";\"").is_err());
    }

    #[test]
    fn encodings_by_whatwg_label() {
        use encoding_rs::{SHIFT_JIS, UTF_16LE, WINDOWS_1252};
        assert_eq!(Encoding::from_label("UTF8"), Ok(Encoding::Utf8));
        assert_eq!(Encoding::from_label("latin1"), Ok(Encoding::Latin1));
        assert_eq!(
            Encoding::from_label("cp1252"),
            Ok(Encoding::Bytes(WINDOWS_1252))
        );
        assert_eq!(
            Encoding::from_label("utf-16le"),
            Ok(Encoding::Stream(UTF_16LE))
        );
        assert_eq!(
            Encoding::from_label("sjis"),
            Ok(Encoding::Stream(SHIFT_JIS))
        );
        assert!(Encoding::from_label("euc-jp").is_ok_and(|e| matches!(e, Encoding::Bytes(_))));
        for bad in ["ebcdic", "replacement", ""] {
            assert!(Encoding::from_label(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn skip_rows_and_comment_from_a_file_reach_each_side() {
        let c: InputConfig =
            toml::from_str("skip_rows = 2\ntarget_skip_rows = 0\ncomment = \"#\"").unwrap();
        let [s, t] = build(c).unwrap();
        assert_eq!((s.text.skip_rows, s.text.sniff.preamble), (2, false));
        assert_eq!((t.text.skip_rows, t.text.sniff.preamble), (0, false));
        assert_eq!(s.text.dialect().comment, Some(b'#'));
        assert_eq!(s.csv_only, ["skip_rows", "comment"]);
        assert_eq!(t.csv_only, ["target_skip_rows", "comment"]);
        // Nothing given: the preamble is sniffed, and no flag needs a CSV side.
        let [s, _] = build(InputConfig::default()).unwrap();
        assert!(s.text.sniff.preamble && s.csv_only.is_empty());
        for (comment, delimiter, why) in [
            ("##", None, "one ASCII character"),
            (" ", None, "visible character"),
            (";", Some(";"), "comment character must differ"),
            ("\"", None, "comment character must differ"),
        ] {
            let e = build(InputConfig {
                comment: Some(comment.into()),
                delimiter: delimiter.map(Into::into),
                ..Default::default()
            })
            .unwrap_err();
            assert!(e.contains(why), "{comment}: {e}");
        }
    }

    #[test]
    fn bad_names_are_refused() {
        let c = InputConfig {
            encoding: Some("ebcdic".into()),
            ..Default::default()
        };
        assert!(build(c).unwrap_err().contains("not an encoding label"));
    }
}
