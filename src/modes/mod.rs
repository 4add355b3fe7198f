//! The modes recon runs, each a short sequence of engine stages:
//! - [`multiset`]: the keyless diff, `EXCEPT ALL` both ways.
//!
//! Keyed diffs, fingerprints and batches will be modules beside it.

pub mod multiset;
