//! Input tables: discovery, formats, schemas, row locators and reads.
//!
//! A table is one file, a directory of files (read recursively in sorted path
//! order), or a glob pattern. Directory levels named `key=value` (Hive
//! partitions) become columns. Formats: Parquet, Arrow IPC (file and stream),
//! CSV/TSV and NDJSON, the text formats optionally gzip- or zstd-compressed.
//!
//! Every row gets a *locator*: `(file index << 44) | position`, where the
//! position is the row ordinal within the file (Parquet, IPC) or the byte
//! offset of the record in the decompressed file (CSV, NDJSON). Locators
//! increase in table order, and each maps back to its row without a rescan
//! (compressed text and IPC streams excepted: they cannot be entered in the
//! middle, so a fetch reads an IPC stream from its start, and a pass's
//! fetches read compressed text forward once).
//!
//! # Layout
//!
//! By what it holds: [`format`], how a file's bytes become Arrow columns
//! (Parquet, Arrow IPC, ORC and in-memory blocks; CSV/TSV and NDJSON text);
//! [`catalog`], tables a catalog describes (Delta and Iceberg versions,
//! PostgreSQL); [`store`], local files and object stores read by ranges;
//! and the table itself at this level: `locator`, [`types`], `source`,
//! `discover` (a path's files and formats), `spool` (inputs read once),
//! [`table`], `assemble` and `open`.
//!
//! Lowest first; a sub-module uses only those of the items before its own
//! (`tests/it/layers.rs` checks it and holds the ranks):
//!
//! - `locator`: locators and the units of scan work; [`types`]: exact type
//!   unification; `source`: what a caller passes; [`store`]; the CSV lexer
//!   and the exact text parsers (`format::text::{lex, parse}`);
//!   `format::dictionary_pages`: dictionary-encoded Parquet chunks.
//! - `discover`: the files of a table and their formats; `format::orc`:
//!   ORC stripes (Iceberg's files); `format::text::{values, sniff}`: text
//!   columns into typed arrays, CSV dialect sniffing.
//! - `format::block`: Parquet, Arrow IPC, ORC and in-memory batches;
//!   `spool`: inputs that can be read only once, copied to a file.
//! - `format::file`: one file of a table as the formats read it.
//! - `format::text::reader`: the text reader, through a `TextTable` view.
//! - `format::reading`: the one seam a table reads every format through
//!   (list a file's units, read a unit, fetch rows by position).
//! - `table`: [`Table`] and all its methods: scan units, reading them,
//!   fetching rows by locator.
//! - `assemble`: a table from files (one format, the dialect sniffed, one
//!   schema), a spool, or batches in memory.
//! - `catalog::lakehouse`: Delta and Iceberg tables as of a version;
//!   `catalog::postgres`: PostgreSQL tables and queries, read under one
//!   snapshot into a spool.
//! - `open`: what the user named, opened by the reader that knows it.

mod assemble;
pub(crate) mod catalog;
mod discover;
pub(crate) mod format;
pub(crate) mod locator;
mod open;
mod source;
mod spool;
pub(crate) mod store;
pub(crate) mod table;
pub(crate) mod types;

pub(crate) use discover::Compression;
pub(crate) use format::text::reader::RENAMED_HEADER;
pub(crate) use locator::{unpack, Locators, Unit};
pub use open::open_table;

/// Gives the tables opened next their share of `memory_limit` for what they
/// hold while opening: Iceberg equality-delete keys, spilled beyond it.
pub(crate) fn set_open_budget(memory_limit: u64) {
    #[cfg(feature = "iceberg")]
    catalog::lakehouse::set_key_budget(memory_limit);
    #[cfg(not(feature = "iceberg"))]
    let _ = memory_limit;
}
pub use source::{BatchesSource, Source, StreamSource};
pub(crate) use table::Fetcher;
pub(crate) use table::{refuse_unused_csv_options, Table, TEXT_RULES};

/// The exact text parsers, for the fuzz targets and other callers: each
/// value is parsed exactly or refused with why ([`Invalid`]).
///
/// [`Invalid`]: crate::error::Invalid
pub mod parse {
    use super::format::text::parse as p;
    pub use super::format::text::parse::Unit;
    use crate::error::Invalid;

    /// `true`/`false` and the other spellings recon reads as booleans.
    pub fn parse_bool(s: &str) -> Result<bool, Invalid> {
        p::parse_bool(s).map_err(Invalid)
    }

    /// A whole number, exactly.
    pub fn parse_i128(s: &str) -> Result<i128, Invalid> {
        p::parse_i128(s).map_err(Invalid)
    }

    /// A float, to the nearest double.
    pub fn parse_f64(s: &str) -> Result<f64, Invalid> {
        p::parse_f64(s).map_err(Invalid)
    }

    /// Exactly `precision` digits at most, `scale` after the point.
    pub fn parse_decimal(s: &str, precision: u8, scale: i8) -> Result<i128, Invalid> {
        p::parse_decimal(s, precision, scale).map_err(Invalid)
    }

    /// Days since 1970-01-01.
    pub fn parse_date(s: &str) -> Result<i32, Invalid> {
        p::parse_date(s).map_err(Invalid)
    }

    /// A time of day, in `unit` since midnight.
    pub fn parse_time(s: &str, unit: Unit) -> Result<i64, Invalid> {
        p::parse_time(s, unit).map_err(Invalid)
    }

    /// In `unit` since the epoch; `tz` is the column's zone, if any.
    pub fn parse_timestamp(s: &str, unit: Unit, tz: Option<&str>) -> Result<i64, Invalid> {
        p::parse_timestamp(s, unit, tz).map_err(Invalid)
    }
}
