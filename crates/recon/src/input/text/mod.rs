//! Text formats: CSV/TSV and NDJSON.
//!
//! Lowest first: the CSV lexer ([`lex`]) and the exact text-to-value
//! parsers ([`parse`]); columns of text into typed arrays ([`values`]) and
//! CSV dialect sniffing ([`sniff`]); the reader of a table's text files
//! (`reader`: chunks of whole records, typed batches, fetch by locator).

pub mod lex;
pub mod parse;
pub mod reader;
pub mod sniff;
pub mod values;
