//! Text formats: CSV/TSV and NDJSON.
//!
//! Lowest first: the CSV lexer ([`lex`]) and the exact text-to-value
//! parsers ([`parse`]); columns of text into typed arrays ([`values`]) and
//! CSV dialect sniffing ([`sniff`]); above them the reader of a table's text
//! files ([`reader`]: chunks of whole records, typed batches, fetch by
//! locator), which sees its table through a `TextTable` view.

pub mod lex;
pub(crate) mod parse;
pub(crate) mod reader;
pub(crate) mod sniff;
pub(crate) mod values;
