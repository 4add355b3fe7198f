//! The pieces of a diff and a fingerprint that a distributed engine runs
//! (Spark, through the Python package's `recon.spark`), so that a cluster
//! computes recon's digests and reaches recon's answer:
//!
//! - [`DistributedPlan`]: the comparison planned from the two tables'
//!   Arrow schemas on the driver, exactly as for local batches, and
//!   re-planned from the same schemas and settings on each worker;
//! - [`SideDigester`]: one side's row and column digests of a batch, after
//!   the plan's conversions and rules (the CLI's bits: docs/encoding.md);
//! - [`BucketSums`]: one partition's per-bucket fingerprints (pass 1);
//!   [`compare_buckets`] adds up every partition's on the driver, finds the
//!   differing buckets and decodes their single differences;
//! - [`Selector`]: which rows a second pass keeps (those of the decoded
//!   digests and of the buckets that did not decode);
//! - [`by_values`], [`by_group`] and [`pairs`]: the `--by` breakdown and
//!   the pairing of changed rows, from the unmatched rows the engine holds;
//! - [`report`]: the diff's [`Report`](crate::Report), in the CLI's shape, from the counts
//!   and sample rows the engine computed; [`complete_keyed`] completes a
//!   keyed diff of the rows the engine kept with what it counted outside them.
//!
//! The engine moves rows; recon decides which, and what the answer is.

mod compare;
mod digester;
mod evidence;
mod plan;
mod report;
mod sums;
#[cfg(test)]
mod tests;

pub use compare::{compare_buckets, BucketComparison, Bucketing, Selector};
pub use digester::SideDigester;
pub use evidence::{by_group, by_values, pairing_skipped, pairs, PAIR_MOST};
pub use plan::{Described, DistributedPlan};
pub use report::{complete_keyed, report, samples, Findings, KeyedRest};
pub use sums::{bucket_of, BucketSums};

pub use crate::digest::multiset::DigestBuildHasher;

/// Bucket bits of the fingerprint pass when the caller does not choose:
/// 4096 buckets keep each partition's record small (under 160 KiB) while
/// few drifting rows share a bucket.
pub const DEFAULT_BUCKET_BITS: u32 = 12;
