//! recon: exact, out-of-core, duplicate-aware reconciliation of two tables.
//!
//! recon answers what SQL's `EXCEPT ALL`, run in both directions, answers:
//! each table is a multiset of complete rows, order is ignored, every
//! duplicate counts, and NULL matches NULL. It streams both tables, digests
//! every row with a 128-bit hash of a canonical encoding ([`digest`]),
//! partitions records into buckets by digest prefix and reconciles each
//! bucket pair with a multiplicity map ([`engine`]), and fetches the
//! unmatched rows back by locator ([`evidence`]).
//!
//! Modules are layered; each imports only from the layers below it (checked
//! by `tests/it/layers.rs`; see docs/architecture.md):
//!
//! | layer | modules | what |
//! |---|---|---|
//! | 0 | `units`, `size`, [`side`] | foundations |
//! | 1 | [`error`] | typed errors |
//! | 2 | [`config`], [`tempspace`] | options from flags, rules files and batch files, validated; run directories and cleanup |
//! | 3 | [`digest`] | canonical encoding, row digests, multiset digests |
//! | 4 | [`input`] | discovery, formats, tables, locators, text values |
//! | 5 | [`plan`] | value classes, alignment, conversions, text typing |
//! | 6 | [`engine`] | run context, scan with sinks, records, spill, reconcile driver |
//! | 7 | [`evidence`] | fetch rows by locator, atomic outputs |
//! | 8 | [`report`] | the report model and its renderers |
//! | 9 | [`modes`] | the multiset and keyed diffs, fingerprints, batches |
//! | 10 | [`distributed`] | what an outside engine (Spark) runs: plan, digests, bucket sums, selection, report |
//!
//! The layer numbers are `tests/it/layers.rs`'s; that test is where they
//! are defined.
//!
//! The library never prints and never exits; the `recon` binary is a thin
//! CLI over [`modes::diff`].
//!
//! # The API
//!
//! - [`diff`] with [`DiffOptions`] (run settings in [`RunSettings`],
//!   columns and rules in [`config::AlignOptions`], readers in
//!   [`config::InputOptions`]) gives a [`DiffOutcome`] holding the
//!   [`Report`]. A table is a [`Source`]: a spec such as a path, a
//!   directory or `delta:`/`iceberg:`, an Arrow stream, or batches in memory.
//! - [`modes::fingerprint`] makes and compares fingerprints;
//!   [`modes::batch`] runs a batch file; [`plan::preflight`] plans a pair
//!   without reading data (`recon schema`).
//! - Every failure is a [`ReconError`]: [`ReconError::kind`] says what
//!   kind ([`ErrorKind`]), and option hints in its message are data
//!   ([`OptionHint`]) that each front end spells its own way
//!   ([`ReconError::render`]).
//! - [`digest`] is the canonical encoding and row digest that other engines
//!   reproduce bit for bit (docs/encoding.md).
//!
//! The other modules are public for the CLI, the benchmarks and the fuzz
//! targets; their items carry no stability promise.

// Data-dependent failures must be typed errors, never panics: keep unwrap and
// expect out of the library (tests may use them).
#![cfg_attr(not(test), deny(clippy::unwrap_used, clippy::expect_used))]

pub mod error;
pub mod side;
pub(crate) mod size;
pub(crate) mod units;

pub mod config;
pub mod tempspace;

pub mod digest;

pub mod input;

pub mod plan;

pub mod engine;

pub mod evidence;

pub mod report;

pub mod modes;

pub mod distributed;

pub use config::{Passes, RunSettings};
pub use error::{ErrorKind, OptionHint, ReconError, Result};
pub use input::Source;
pub use modes::{diff, DiffOptions, DiffOutcome};
pub use report::Report;
pub use side::Side;
