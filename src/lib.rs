//! recon: exact, out-of-core, duplicate-aware reconciliation of two tables.
//!
//! recon answers what SQL's `EXCEPT ALL`, run in both directions, answers:
//! each table is a multiset of complete rows, order is ignored, every
//! duplicate counts, and NULL matches NULL. It streams both tables, digests
//! every row with a 128-bit hash of a canonical encoding ([`encode`]),
//! partitions (digest, locator) records into buckets by digest prefix
//! ([`partition`], [`spill`]), reconciles each bucket pair with a
//! multiplicity map ([`reconcile`]) and fetches the unmatched rows back by
//! locator ([`evidence`]). Memory is bounded by a limit ([`memory`]).
//!
//! The library never prints and never exits; the `recon` binary is a thin
//! CLI over [`diff::diff`].

// Data-dependent failures must be typed errors, never panics: keep unwrap and
// expect out of the library (tests may use them).
#![cfg_attr(not(test), deny(clippy::unwrap_used, clippy::expect_used))]

pub mod align;
pub mod diff;
pub mod encode;
pub mod error;
pub mod evidence;
pub mod input;
pub mod memory;
pub mod normalize;
pub mod partition;
pub mod reconcile;
pub mod report;
pub mod schema;
pub mod spill;
pub mod tempspace;

pub use diff::{diff, DiffOptions, DiffOutcome, Passes};
pub use error::{ReconError, Result};
pub use report::Report;

/// Which input a row came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Side {
    Source,
    Target,
}

impl Side {
    pub const BOTH: [Side; 2] = [Side::Source, Side::Target];

    pub fn index(self) -> usize {
        match self {
            Side::Source => 0,
            Side::Target => 1,
        }
    }
}
