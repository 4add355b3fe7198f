//! Formats: how a file's bytes become Arrow columns. [`block`] reads the
//! block formats (Parquet row groups, Arrow IPC batches, in-memory batches),
//! with [`dictionary_pages`] for Parquet chunks kept as dictionaries;
//! [`text`] holds CSV/TSV and NDJSON's lexer, exact value parsers, typed
//! columns and dialect sniffing. The reader of a table's text files works
//! on a `Table` and sits above it (`input/text_reader.rs`).

pub(crate) mod block;
pub(crate) mod dictionary_pages;
pub(crate) mod text;
