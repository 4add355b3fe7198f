//! The option table: every option of a diff described once — its name (the
//! Python keyword, the rules and batch file key, the settings JSON key), its
//! command-line flag, its group, the shape of its value and its help text.
//!
//! The front ends take their knowledge from here: the CLI's help for these
//! flags is [`help`] of the option, Python's settings groups and value
//! shapes come from the native module's copy of [`OPTIONS`], and the error
//! hints that spell an option as a keyword use [`Shape`]. Tests on each
//! side fail when a flag or keyword exists that the table lacks, or the
//! other way round (`crates/recon-cli/src/args.rs`,
//! `python/tests/test_option_parity.py`), with the exceptions named there
//! (output flags only the CLI has, Spark's `digests=`).

/// Which settings an option belongs to: the groups of a batch pair's
/// settings (and of the settings JSON the Python package sends), plus the
/// arguments of a diff call itself.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Group {
    /// How the run uses the machine: threads, memory, spill, passes, samples.
    Run,
    /// When drift still passes.
    Thresholds,
    /// Which columns are compared and how their values are normalized.
    Align,
    /// How the tables are read.
    Input,
    /// Arguments of the diff itself: rules file, breakdown, evidence output.
    Call,
}

impl Group {
    /// The group's name in settings JSON and batch files.
    pub fn name(self) -> &'static str {
        match self {
            Group::Run => "run",
            Group::Thresholds => "thresholds",
            Group::Align => "align",
            Group::Input => "input",
            Group::Call => "call",
        }
    }
}

/// The shape of an option's value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Shape {
    /// On or off: a flag without a value, `True` in Python.
    Switch,
    /// One value.
    Value,
    /// Several values: a repeatable or comma-separated flag, a list.
    List,
    /// Column to value: `COL=VALUE` flags (repeatable), a dict.
    Dict,
}

/// One option.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OptionSpec {
    /// The Python keyword and settings key (`null_values`).
    pub name: &'static str,
    /// The long command-line flag, without dashes (`null-value`).
    pub flag: &'static str,
    /// Which settings it belongs to.
    pub group: Group,
    /// The shape of its value.
    pub shape: Shape,
    /// One line of help, as `recon diff --help` prints it.
    pub help: &'static str,
}

const fn opt(
    name: &'static str,
    flag: &'static str,
    group: Group,
    shape: Shape,
    help: &'static str,
) -> OptionSpec {
    OptionSpec {
        name,
        flag,
        group,
        shape,
        help,
    }
}

/// Every option of a diff, by group.
pub const OPTIONS: &[OptionSpec] = &[
    opt("threads", "threads", Group::Run, Shape::Value, "Worker threads [default: all cores]"),
    opt("memory_limit", "memory-limit", Group::Run, Shape::Value, "Peak memory budget, e.g. 256MiB, 4GiB, or 'unlimited' [default: half of RAM]"),
    opt("temp_dir", "temp-dir", Group::Run, Shape::Value, "Directory for spill files and for the copy of a piped input (`-`, a FIFO) [default: the system temp dir]"),
    opt("passes", "passes", Group::Run, Shape::Value, "Read the inputs once (spill every row) or twice (fingerprint buckets first, then spill only the buckets that differ); auto is 2 unless a side is CSV/NDJSON"),
    opt("sample", "sample", Group::Run, Shape::Value, "Distinct unmatched rows to show per direction [default: 20]"),
    opt("max_unmatched_rows", "max-unmatched-rows", Group::Thresholds, Shape::Value, "Pass (exit 0) when at most N rows are unmatched, both ways together"),
    opt("max_unmatched_ratio", "max-unmatched-ratio", Group::Thresholds, Shape::Value, "Pass when unmatched rows / max(source rows, target rows) is at most R"),
    opt("max_changed", "max-changed", Group::Thresholds, Shape::Value, "With --key: pass when at most N keys changed"),
    opt("max_missing", "max-missing", Group::Thresholds, Shape::Value, "With --key: pass when at most N keys are missing on either side"),
    opt("key", "key", Group::Align, Shape::List, "Match rows by this business key: missing, extra and changed rows by key, and which columns changed. Duplicated and NULL keys are diffed as multisets"),
    opt("tolerance", "tolerance", Group::Align, Shape::Dict, "A numeric column matches within this bound: COL=0.01 (absolute) or COL=1e-9r (relative); a difference equal to the bound matches (repeatable)"),
    opt("columns", "columns", Group::Align, Shape::List, "Compare only these columns"),
    opt("exclude", "exclude", Group::Align, Shape::List, "Leave columns out of the comparison (they stay in the evidence rows)"),
    opt("map", "map", Group::Align, Shape::Dict, "Pair a renamed column: SRC=TGT (repeatable)"),
    opt("cast", "cast", Group::Align, Shape::Dict, "Parse or convert a column into a type: COL=TYPE, e.g. amount=decimal(18,2) (repeatable)"),
    opt("by_position", "by-position", Group::Align, Shape::Switch, "Pair columns by position (SQL set-operation semantics) instead of by name"),
    opt("ignore_case_names", "ignore-case-names", Group::Align, Shape::Switch, "Match column names case-insensitively"),
    opt("ignore_extra_columns", "ignore-extra-columns", Group::Align, Shape::Switch, "Ignore columns present on one side only instead of failing"),
    opt("assume_tz", "assume-tz", Group::Align, Shape::List, "Read naive timestamps in this zone when compared with zoned ones (e.g. UTC, Europe/Paris, +02:00); or ABBR=OFFSET to read a zone abbreviation in text values, e.g. EST=-05:00 (repeatable)"),
    opt("round", "round", Group::Align, Shape::Dict, "Round floats/decimals to N places, half away from zero: COL=N or *=N (repeatable)"),
    opt("timestamp_precision", "timestamp-precision", Group::Align, Shape::Dict, "Truncate timestamps: COL=s|ms|us|ns or *=UNIT (repeatable)"),
    opt("trim", "trim", Group::Align, Shape::List, "Strip leading/trailing whitespace: COL or * (repeatable)"),
    opt("case_insensitive", "case-insensitive", Group::Align, Shape::List, "Compare strings case-insensitively: COL or * (repeatable)"),
    opt("empty_as_null", "empty-as-null", Group::Align, Shape::List, "Treat '' as NULL: COL or * (repeatable)"),
    opt("source_format", "source-format", Group::Input, Shape::Value, "Source format instead of the file extension: parquet, ipc (arrow, feather), csv, tsv, ndjson (jsonl, json)"),
    opt("target_format", "target-format", Group::Input, Shape::Value, "Target format instead of the file extension"),
    opt("delimiter", "delimiter", Group::Input, Shape::Value, "CSV field delimiter (one byte; \\t for tab) [default: sniffed among , ; | tab; tab for .tsv, | for .tbl]"),
    opt("quote", "quote", Group::Input, Shape::Value, "CSV quote character, or 'none' [default: sniffed: '\"', '\\'' or none]"),
    opt("escape", "escape", Group::Input, Shape::Value, "CSV escape character inside quotes, e.g. '\\\\' [default: sniffed: none (quotes are doubled) or '\\\\']"),
    opt("header", "header", Group::Input, Shape::Switch, "The first line of CSV files is a header [default: sniffed from the first lines]"),
    opt("null_values", "null-value", Group::Input, Shape::List, "Unquoted CSV fields equal to STR are NULL, besides the empty field (repeatable)"),
    opt("encoding", "encoding", Group::Input, Shape::Value, "Text encoding of CSV/NDJSON files: utf-8, latin-1, or a WHATWG label such as windows-1252, iso-8859-15, utf-16le, shift_jis [default: utf-8; a UTF-16 byte-order mark is read as UTF-16]"),
    opt("infer_types", "infer-types", Group::Input, Shape::Switch, "When both sides are text (CSV/NDJSON), infer column types from the first records (so 1.50 equals 1.5) instead of comparing exact text"),
    opt("max_parse_errors", "max-parse-errors", Group::Input, Shape::Value, "Count up to N text values that fail to parse as drift instead of stopping (exit 2)"),
    opt("int96_unit", "int96-unit", Group::Input, Shape::Value, "Unit Parquet INT96 timestamps are read in: us (every date Spark writes) or ns (sub-microsecond digits, 1677-2262 only). A value the unit cannot hold is an error"),
    opt("trailing_delimiter", "trailing-delimiter", Group::Input, Shape::Switch, "Every CSV line ends with a delimiter (legacy exports, TPC-H .tbl); its empty last field is not a column [default: detected from the first lines]"),
    opt("quoted_empty_as_null", "quoted-empty-as-null", Group::Input, Shape::Switch, "A quoted empty CSV field \"\" is NULL too (exports that quote every field and write NULL as \"\"); the same as --null-value '\"\"'"),
    opt("date_format", "date-format", Group::Input, Shape::Dict, "Text dates are written as this strftime pattern: COL=FMT or *=FMT, e.g. '*=%d/%m/%Y' (repeatable). A value must read back to its own text under the pattern"),
    opt("timestamp_format", "timestamp-format", Group::Input, Shape::Dict, "Text timestamps are written as this strftime pattern: COL=FMT or *=FMT, e.g. '*=%d/%m/%Y %H:%M:%S' (repeatable)"),
    opt("skip_rows", "skip-rows", Group::Input, Shape::Value, "Skip the first N lines of every CSV/TSV file (a title, notes, an export banner) before the header [default: a clear preamble is sniffed; 0 turns that off]"),
    opt("source_skip_rows", "source-skip-rows", Group::Input, Shape::Value, "--skip-rows for the source side only"),
    opt("target_skip_rows", "target-skip-rows", Group::Input, Shape::Value, "--skip-rows for the target side only"),
    opt("comment", "comment", Group::Input, Shape::Value, "CSV/TSV lines starting with CHAR are comments, ignored everywhere in the file (not inside a quoted field), e.g. '#'"),
    opt("source_query", "source-query", Group::Input, Shape::Value, "A SELECT to read when the source is a database (postgres://USER@HOST/DB) instead of its ?table="),
    opt("target_query", "target-query", Group::Input, Shape::Value, "A SELECT to read when the target is a database"),
    opt("connections", "connections", Group::Input, Shape::Value, "Connections per database table, each reading a slice of one exported snapshot [default: one per core]"),
    opt("storage_options", "storage-option", Group::Input, Shape::Dict, "A setting of the object store an s3://, gs://, az:// or https:// table is in, with object_store's (and delta-rs's) keys, e.g. aws_endpoint=http://localhost:9000, aws_region=eu-west-1, aws_skip_signature=true (repeatable). Credentials come from each cloud's environment variables and instance metadata"),
    opt("rules", "rules", Group::Call, Shape::Value, "Read alignment and normalization settings from a TOML file"),
    opt("by", "by", Group::Call, Shape::Value, "Break the unmatched rows (with --quick: the fingerprints) down by this column, e.g. business_date"),
    opt("diff_columns", "diff-columns", Group::Call, Shape::Value, "Which value columns changed.parquet fills: the changed ones, or all [default: changed]"),
    opt("output", "output", Group::Call, Shape::Value, "Write source_only.parquet, target_only.parquet and report.json here (with --key: changed.parquet, missing_in_target.parquet, missing_in_source.parquet, ...)"),
    opt("force", "force", Group::Call, Shape::Switch, "Overwrite results already present in --output"),
];

/// The option called `name` (its Python keyword).
pub fn spec(name: &str) -> Option<&'static OptionSpec> {
    OPTIONS.iter().find(|o| o.name == name)
}

/// The help text of option `name`, for the command line's flag definitions.
///
/// # Panics
///
/// When the table has no such option: a misspelt name in a flag
/// definition, which every CLI test would hit.
pub fn help(name: &str) -> &'static str {
    match spec(name) {
        Some(o) => o.help,
        None => panic!("the option table has no option {name:?}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashSet;

    #[test]
    fn names_and_flags_are_unique() {
        let names: HashSet<_> = OPTIONS.iter().map(|o| o.name).collect();
        let flags: HashSet<_> = OPTIONS.iter().map(|o| o.flag).collect();
        assert_eq!(names.len(), OPTIONS.len());
        assert_eq!(flags.len(), OPTIONS.len());
    }

    #[test]
    fn help_is_one_line_without_a_final_period() {
        for o in OPTIONS {
            assert!(!o.help.is_empty() && !o.help.contains('\n'), "{}", o.name);
            assert!(!o.help.ends_with('.'), "{}: clap drops the period", o.name);
        }
    }

    /// The keys serde accepts for `T` (from its unknown-field error, which
    /// lists them).
    fn keys_of<T: serde::de::DeserializeOwned + std::fmt::Debug>() -> HashSet<String> {
        let err = serde_json::from_str::<T>(r#"{"__not_a_key__": 0}"#).unwrap_err();
        let text = err.to_string();
        let (_, expected) = text.split_once("expected").expect("an unknown-field error");
        expected
            .split('`')
            .skip(1)
            .step_by(2)
            .map(str::to_string)
            .collect()
    }

    fn table_keys(group: Group) -> HashSet<String> {
        OPTIONS
            .iter()
            .filter(|o| o.group == group)
            .map(|o| o.name.to_string())
            .collect()
    }

    /// The rules and batch file keys of each group are the table's: a key
    /// added to a file and not to the table (or the other way) fails here.
    #[test]
    fn file_keys_are_the_tables() {
        use crate::config::{InputConfig, RulesFile, RunConfig, Thresholds};
        assert_eq!(keys_of::<RunConfig>(), table_keys(Group::Run));
        assert_eq!(keys_of::<Thresholds>(), table_keys(Group::Thresholds));
        // A rules file also carries the input options that describe a
        // table rather than a format (RulesFile::fill_input).
        let rules_input = [
            "skip_rows",
            "source_skip_rows",
            "target_skip_rows",
            "comment",
            "connections",
            "source_query",
            "target_query",
            "storage_options",
        ];
        let mut align = table_keys(Group::Align);
        align.extend(rules_input.iter().map(|k| k.to_string()));
        assert!(rules_input
            .iter()
            .all(|k| spec(k).unwrap().group == Group::Input));
        assert_eq!(keys_of::<RulesFile>(), align);
        // `no_header = true` is the files' (and --no-header's) header = false.
        let mut input = table_keys(Group::Input);
        input.insert("no_header".into());
        assert_eq!(keys_of::<InputConfig>(), input);
    }

    #[test]
    fn storage_options_is_a_dict_of_the_input_group() {
        let o = spec("storage_options").unwrap();
        assert_eq!(
            (o.group, o.shape, o.flag),
            (Group::Input, Shape::Dict, "storage-option")
        );
    }
}
