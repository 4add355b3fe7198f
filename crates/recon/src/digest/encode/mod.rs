//! The canonical row encoding and the 128-bit row digest.
//!
//! Two rows are "the same row" for recon exactly when their canonical
//! encodings are byte-identical. The encoding is value-based, so the same
//! logical value stored differently (dictionary vs plain, Utf8 vs LargeUtf8 vs
//! Utf8View, Int32 vs Int64, DECIMAL(10,2) vs DECIMAL(38,6)) encodes the same,
//! and it is self-delimiting, so concatenating the values of a row is
//! injective: `('ab','c')` and `('a','bc')` cannot encode alike, and NULL
//! never encodes like any string.
//!
//! The full specification, with test vectors, is in `docs/encoding.md`; the
//! vectors are checked by the unit tests in `tests.rs`.
//!
//! # Layout (encoding version 1)
//!
//! Every value starts with a one-byte tag. Integers are little-endian.
//! `varint` is unsigned LEB128.
//!
//! | tag  | value class                  | payload                                              |
//! |------|------------------------------|------------------------------------------------------|
//! | 0x00 | NULL (any type)              | none                                                 |
//! | 0x01 | boolean                      | 1 byte: 0 or 1                                       |
//! | 0x02 | integer (any width, signed or not) that fits i64 | i64, 8 bytes                 |
//! | 0x0E | integer beyond i64 (UInt64 > i64::MAX) | i128, 16 bytes                          |
//! | 0x03 | float (f16/f32/f64)          | f64 bits, 8 bytes; every NaN → 0x7ff8000000000000, -0.0 → 0.0 |
//! | 0x04 | decimal, mantissa fits i64   | scale i16 (2 bytes) + mantissa i64 (8 bytes), normalized |
//! | 0x05 | decimal, wider mantissa      | scale i16 + mantissa i256 (32 bytes), normalized     |
//! | 0x06 | string (Utf8, LargeUtf8, Utf8View) | varint byte length + UTF-8 bytes               |
//! | 0x07 | binary (Binary, LargeBinary, BinaryView, FixedSizeBinary) | varint length + bytes  |
//! | 0x08 | date (Date32, Date64)        | i64 milliseconds since 1970-01-01                    |
//! | 0x09 | timestamp without time zone  | seconds since the epoch (i64, floored) + nanoseconds (u32), wall clock |
//! | 0x0A | timestamp with a time zone   | seconds (i64) + nanoseconds (u32) of the UTC instant |
//! | 0x0B | time of day (Time32, Time64) | i64 nanoseconds since midnight                       |
//! | 0x0C | duration                     | seconds (i64, floored) + nanoseconds (u32)           |
//! | 0x0D | interval                     | months i32 + days i32 + nanoseconds i64              |
//! | 0x10 | list (List, LargeList, FixedSizeList) | varint element count + each element's encoding |
//! | 0x11 | struct                       | varint field count + per field, in field-name order: varint name length, name, value |
//! | 0x12 | map                          | varint entry count + entries (key encoding ++ value encoding) sorted bytewise |
//!
//! A decimal is normalized by stripping trailing decimal zeros from the
//! mantissa (adjusting the scale), and zero is mantissa 0 with scale 0, so
//! 1.50 in DECIMAL(10,2) and 1.500000 in DECIMAL(38,6) both encode as
//! mantissa 15, scale 1.
//!
//! # Digests (encoding version 2)
//!
//! Each value's encoding `e` gets a 128-bit **value digest** `V(e)`: when `e`
//! is at most 16 bytes (every fixed-width value, and strings of up to 14
//! bytes), `V(e) = P(e zero-padded to 16 bytes, read little-endian)`, where
//! `P` is a fixed bijection of 128-bit integers, so distinct short values
//! never share a digest; longer encodings use `V(e) = XXH3-128(e)`. The
//! **row digest** combines the compared columns `c = 0, 1, …` (plan order):
//! `D = Q(Σ_c (V_c ⊕ A_c) · B_c mod 2^128)`, with column constants `A_c` and
//! odd `B_c`, and `Q` another bijection with a nonlinear mix, so a sum of row
//! digests does not reduce to per-column multisets. Value digests are
//! computed column at a time in tight loops and are the per-column digests
//! keyed mode and fingerprints use. See docs/encoding.md for the constants,
//! test vectors and the collision argument.
//!
//! # Files
//!
//! - `mix.rs`: the permutations `P` and `Q`, value digests, the column
//!   constants and the row sum that combines value digests ([`Combiner`]).
//! - `canonical.rs`: the value tags ([`tag`]) and payloads, and the
//!   reference encoder of one value (`encode_value`).
//! - `columns.rs`: column writers, the fast path: a typed writer per column
//!   and batch that fills the batch's value digests in one loop.
//! - `lanes.rs`: fixed-width columns' value digests eight at a time (an
//!   AVX-512 kernel chosen at run time, and the portable loop).
//! - `sums.rs`: where a column's value digests go (a list, the row sums,
//!   a column total), shared by `columns.rs` and `lanes.rs`.
//! - `row.rs`: [`RowEncoder`], row digests of record batches from the
//!   column writers, and the reference row digest.

mod canonical;
mod columns;
mod lanes;
mod mix;
mod row;
mod sums;
#[cfg(test)]
mod tests;

/// Version of the canonical encoding and digests. Bumped on any change to
/// the bytes or to how digests are computed from them. Version 1 hashed the
/// concatenated row encoding with XXH3-128; version 2 combines value digests.
pub const ENCODING_VERSION: u32 = 2;

pub(crate) use canonical::check_supported;
#[cfg(test)]
pub(crate) use canonical::encode_value;
pub use mix::value_digest;
pub(crate) use mix::{column_constants, null_digest, Combiner};
pub use row::{encode_row, reference_digest, RowEncoder};
pub(crate) use sums::ValueSum;
