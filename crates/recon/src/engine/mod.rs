//! The engine: the machinery every mode runs on, knowing nothing of what a
//! match means.
//!
//! - [`context`]: one run's cancel token, progress, temp dir and memory division;
//! - [`memory`]: how a memory limit is divided; peak RSS;
//! - [`tempspace`]: run directories and cleanup on every exit path (a lower
//!   layer, re-exported here: inputs spool pipes into a run directory too);
//! - [`spill`]: chunked spill storage, memory first, then per-thread files;
//! - [`record`]: record layouts (a 16-byte partition key, then a payload);
//! - [`scan`]: the scan driver (feeders, units, workers) with pluggable [`scan::RowSink`]s;
//! - [`partition`]: the fingerprint and partition sinks;
//! - [`probe`]: pass 1's proof of heavy drift, and its sink that spills the target's rest;
//! - [`reconcile`]: the bucket driver (threads, memory share, splits) with a pluggable [`reconcile::Matcher`].

pub(crate) mod context;
pub(crate) mod memory;
pub(crate) mod partition;
pub(crate) mod probe;
pub(crate) mod reconcile;
pub(crate) mod record;
pub(crate) mod scan;
pub(crate) mod spill;
pub(crate) use crate::tempspace;

pub(crate) use context::{CancelToken, Phase, Progress, RunContext};
