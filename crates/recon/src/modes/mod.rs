//! The modes recon runs, each a short sequence of engine stages:
//! - [`multiset`]: the keyless diff, `EXCEPT ALL` both ways;
//! - [`keyed`]: the diff by business key (`--key`), built on the same
//!   stages with keyed records;
//! - [`fingerprint`]: small per-table summaries, compared without the tables;
//! - [`batch`]: many pairs from one file, with thresholds.

pub mod batch;
pub mod fingerprint;
pub mod keyed;
pub mod multiset;

use std::path::Path;

use crate::error::Result;
pub use multiset::{DiffOptions, DiffOutcome};

/// Runs the diff the options ask for: keyed when they name a key, else the
/// multiset diff.
pub fn diff(source: &Path, target: &Path, opts: &DiffOptions) -> Result<DiffOutcome> {
    if opts.align.key.is_some() {
        keyed::diff(source, target, opts)
    } else {
        multiset::diff(source, target, opts)
    }
}
