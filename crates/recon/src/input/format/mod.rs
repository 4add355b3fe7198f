//! Formats: how a file's bytes become Arrow columns. [`block`] reads the
//! block formats (Parquet row groups, Arrow IPC batches, in-memory batches,
//! ORC stripes through `orc`),
//! with [`dictionary_pages`] for Parquet chunks kept as dictionaries;
//! [`text`] holds CSV/TSV and NDJSON's lexer, exact value parsers, typed
//! columns, dialect sniffing and the reader of text files. [`file`] is one
//! file of a table as they read it; [`reading`] is the one seam through
//! which the table reads any of them (list units, read a unit, fetch rows).

pub(crate) mod block;
pub(crate) mod dictionary_pages;
pub(crate) mod file;
#[cfg(feature = "iceberg")]
pub(crate) mod orc;
pub(crate) mod reading;
pub(crate) mod text;
