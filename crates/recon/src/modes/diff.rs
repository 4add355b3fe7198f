//! The diff entry point: keyed when the options name a key, else keyless.

use super::options::{DiffOptions, DiffOutcome};
use super::{keyed, multiset};
use crate::error::Result;
use crate::input::Source;

/// Runs the diff the options ask for: keyed when they name a key, else the
/// multiset diff. A table is a [`Source`]: a spec such as a path
/// (`"orders.parquet".into()`), or Arrow data.
///
/// ```
/// use recon::{diff, DiffOptions, Source};
///
/// let root = concat!(env!("CARGO_MANIFEST_DIR"), "/../../testdata/demo");
/// let source = Source::from(format!("{root}/source.parquet"));
/// let target = Source::from(format!("{root}/target.parquet"));
/// let outcome = diff(source, target, &DiffOptions::default())?;
/// // One changed amount: one source-only and one target-only row.
/// assert!(!outcome.report.exact_match);
/// assert_eq!((outcome.report.source_only_rows, outcome.report.target_only_rows), (1, 1));
/// # Ok::<(), recon::ReconError>(())
/// ```
pub fn diff(
    source: impl Into<Source>,
    target: impl Into<Source>,
    opts: &DiffOptions,
) -> Result<DiffOutcome> {
    let (source, target) = (source.into(), target.into());
    if opts.align.key.is_some() {
        keyed::diff(&source, &target, opts)
    } else {
        multiset::diff(&source, &target, opts)
    }
}
