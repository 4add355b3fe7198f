//! The modes recon runs, each a short sequence of engine stages:
//! - [`multiset`]: the keyless diff, `EXCEPT ALL` both ways;
//! - [`keyed`]: the diff by business key (`--key`), built on the same
//!   stages with keyed records;
//! - [`fingerprint`]: small per-table summaries, compared without the tables;
//! - [`batch`]: many pairs from one file, with thresholds.
//!
//! What an outside engine (Spark) runs to reach the same answers is
//! [`crate::distributed`], above these.

pub(crate) mod batch;
mod diff;
pub(crate) mod fingerprint;
pub(crate) mod keyed;
pub(crate) mod multiset;
pub(crate) mod options;
pub(crate) mod stages;

pub use diff::diff;
pub use options::{DiffOptions, DiffOutcome};
