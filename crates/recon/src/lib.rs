//! recon: exact, out-of-core, duplicate-aware reconciliation of two tables.
//!
//! recon answers what SQL's `EXCEPT ALL`, run in both directions, answers:
//! each table is a multiset of complete rows, order is ignored, every
//! duplicate counts, and NULL matches NULL. It streams both tables, digests
//! every row with a 128-bit hash of a canonical encoding (docs/encoding.md),
//! partitions records into buckets by digest prefix and reconciles each
//! bucket pair with a multiplicity map, and fetches the unmatched rows back
//! by locator.
//!
//! # The API
//!
//! - [`diff`] with [`DiffOptions`] (run settings in [`RunSettings`],
//!   columns and rules in [`config::AlignOptions`], readers in
//!   [`config::InputOptions`]) gives a [`DiffOutcome`] holding the
//!   [`Report`]. A table is a [`Source`]: a spec such as a path, a
//!   directory or `delta:`/`iceberg:`, an Arrow stream, or batches in memory.
//! - [`schema`] plans a pair without reading its rows (`recon schema`).
//! - [`fingerprint`] makes and compares fingerprints and extracts the rows
//!   they name; [`batch`] runs a batch file (and renders its JUnit and
//!   HTML); [`report`] holds the report model and its text and HTML
//!   renderers; [`write_atomic`] writes an
//!   output whole or not at all.
//! - A run can be cancelled ([`CancelToken`], or [`cancel_all`] from a
//!   signal handler, then [`cleanup_registered`]) and watched
//!   ([`Progress`], [`Phase`]).
//! - Every failure is a [`ReconError`]: [`ReconError::kind`] says what
//!   kind ([`ErrorKind`]), and option hints in its message are data
//!   ([`OptionHint`]) that each front end spells its own way
//!   ([`ReconError::render`]).
//! - [`distributed`] is what an outside engine (Spark) runs: a plan from
//!   schemas, a row digester, bucket sums, the selection of rows to read
//!   again, and the report.
//!
//! Everything else is internal. Benchmarks and fuzz targets reach the few
//! internals they measure through the hidden `internals` module, which
//! carries no stability promise.
//!
//! # Inside
//!
//! Modules are layered; each imports only from the layers below it. The
//! layers are defined, and checked, by `tests/it/layers.rs`;
//! docs/architecture.md describes each: foundations (`units`, `size`,
//! `side`), typed errors (`error`), options (`config`, `tempspace`), the
//! canonical encoding and digests (`digest`), tables and formats
//! (`input`), alignment and conversions (`plan`), the scan, spill and
//! reconcile pipeline (`engine`), rows fetched by locator (`evidence`),
//! the report model (`report`), the diff modes, fingerprints and batches
//! (`modes`), and the outside-engine kit (`distributed`).
//!
//! The library never prints and never exits; the `recon` binary is a thin
//! CLI over this face.

// Data-dependent failures must be typed errors, never panics: keep unwrap and
// expect out of the library (tests may use them).
#![cfg_attr(not(test), deny(clippy::unwrap_used, clippy::expect_used))]
// The face is what this file exports; everything else is crate-private, and
// whatever is public is documented.
#![warn(unreachable_pub, missing_docs)]

pub mod error;
pub(crate) mod side;
pub(crate) mod size;
pub(crate) mod units;

pub mod config;
pub(crate) mod tempspace;

pub(crate) mod digest;

pub(crate) mod input;

pub(crate) mod plan;

pub(crate) mod engine;

pub(crate) mod evidence;

pub mod report;

pub(crate) mod modes;

pub mod distributed;

pub use config::{Passes, RunSettings};
pub use digest::encode::ENCODING_VERSION;
pub use engine::context::{cancel_all, CancelToken, Phase, Progress};
pub use error::{ErrorKind, OptionHint, ReconError, Result};
pub use evidence::output::write_atomic;
pub use input::{BatchesSource, Source, StreamSource};
pub use modes::{diff, DiffOptions, DiffOutcome};
pub use report::schema::{schema, SchemaScreen};
pub use report::{Report, Verdict};
pub use side::Side;
pub use tempspace::cleanup_registered;

pub mod fingerprint {
    //! Fingerprints: a table's summary per group of rows ([`fingerprint()`],
    //! [`fingerprint_pair`]), two fingerprints compared ([`compare()`]), and
    //! the rows a comparison names read back ([`extract()`]). The file
    //! formats are docs/fingerprint.md's.
    pub use crate::modes::fingerprint::compare::{compare, Comparison};
    pub use crate::modes::fingerprint::extract::{extract, DigestsFile};
    pub use crate::modes::fingerprint::{
        assemble, fingerprint, fingerprint_pair, FingerprintFile, FingerprintOptions,
        PartialFingerprint,
    };
}

pub mod batch {
    //! Batch runs: many pairs from one batch file ([`run_batch`]), each with
    //! its [`PairOutcome`], and the batch's JSON, JUnit and summary
    //! renderings.
    pub use crate::config::batch::PairSettings;
    pub use crate::modes::batch::{run_batch, BatchOptions, BatchProgress, PairState};
    pub use crate::report::batch::{
        exit_code, junit, summary_table, BatchReport, PairOutcome, BATCH_REPORT_VERSION,
    };
    pub use crate::report::html::batch_html;
}

#[doc(hidden)]
pub mod internals {
    //! What the benchmarks, the fuzz targets and the property tests measure,
    //! below the face. No stability promise.
    pub use crate::config::InputOptions;
    pub use crate::digest::encode::{encode_row, reference_digest, value_digest, RowEncoder};
    pub use crate::engine::reconcile::{reconcile, DriverConfig};
    pub use crate::engine::record::Keyless;
    pub use crate::engine::spill::{Partitioner, SpillBudget, SpillIndex, SpillWriter};
    pub use crate::input::format::text::lex as csv_lex;
    pub use crate::input::locator::Unit;
    pub use crate::input::open_table;
    pub use crate::input::parse;
    pub use crate::input::table::Table;
    pub use crate::modes::multiset::diff as multiset_diff;
    pub use crate::modes::multiset::matcher::{EvidenceSlots, MultisetMatcher};
}
