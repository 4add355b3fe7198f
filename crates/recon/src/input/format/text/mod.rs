//! Text formats: CSV/TSV and NDJSON.
//!
//! Lowest first: the CSV lexer ([`lex`]) and the exact text-to-value
//! parsers ([`parse`]); columns of text into typed arrays ([`values`]) and
//! CSV dialect sniffing ([`sniff`]). The reader of a table's text files
//! (chunks of whole records, typed batches, fetch by locator) works on a
//! `Table`, which uses these, so it sits above both: `input/text_reader.rs`.

pub mod lex;
pub(crate) mod parse;
pub(crate) mod sniff;
pub(crate) mod values;
