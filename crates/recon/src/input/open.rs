//! Opening what the user named: a path, a glob or a URL (a Delta or
//! Iceberg table, a database, `-` or a pipe, or files), an Arrow stream, or
//! batches in memory, each by the reader that knows it.

use std::path::Path;

use super::assemble;
use super::catalog::lakehouse;
use super::source::Source;
use super::spool;
use super::table::Table;
use crate::config::{Format, InputOptions};
use crate::error::{ReconError, Result};
use crate::side::Side;

/// Opens a table reading only metadata: footers for Parquet and IPC, the
/// header line (or first lines) for text. Text columns are Utf8 until
/// `plan::typing::resolve` gives them the other side's types.
///
/// `-` (stdin) and a pipe are first copied to a spool file in a run
/// directory under `temp_dir` (see `input/spool.rs`); `side` names the format
/// flag in the error when their format is unknown.
///
/// Arrow data: batches in memory are read in place; a stream is first
/// copied to the run directory as an Arrow IPC file (see [`Source`]).
pub fn open_table(
    source: &Source,
    opts: &InputOptions,
    side: Side,
    temp_dir: &Path,
) -> Result<Table> {
    match source {
        Source::Spec(path) => open_spec(path, opts, side, temp_dir),
        Source::Batches(b) => assemble::in_memory(b, opts),
        Source::Stream(s) => {
            let spool = spool::spool_arrow(&s.name, s.take()?, temp_dir)?;
            let ipc = InputOptions {
                format: Some(Format::Ipc),
                ..opts.clone()
            };
            let mut table = assemble::open_spool(spool, &ipc, &s.name)?;
            table.origin = Some("arrow stream");
            Ok(table)
        }
    }
}

fn open_spec(path: &Path, opts: &InputOptions, side: Side, temp_dir: &Path) -> Result<Table> {
    #[cfg(feature = "postgres")]
    if super::source::is_postgres_spec(path) {
        return super::catalog::postgres::open(path, opts, side, temp_dir);
    }
    if opts.query.is_some() {
        return Err(ReconError::Usage(format!(
            "{}: {} is not a database (postgres://USER@HOST/DB)",
            crate::error::hint::option(super::source::query_setting(side), "…"),
            path.display()
        )));
    }
    if let Some(table) = lakehouse::open(path, opts, temp_dir)? {
        return Ok(table);
    }
    let Some(kind) = spool::stream_kind(path) else {
        return assemble::open_files(path, opts);
    };
    let (spool, opts) = spool::spool(path, kind, opts, side, temp_dir)?;
    assemble::open_spool(spool, &opts, path)
}
