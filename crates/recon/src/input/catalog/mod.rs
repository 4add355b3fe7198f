//! Tables that a catalog's metadata describes rather than a list of files:
//! `lakehouse` opens a Delta or Iceberg table as of a version (its live
//! files, deletes and column mapping); `postgres` reads a PostgreSQL table
//! or query under one snapshot into a spool. Both build a `Table` from the
//! layers below; plain files, directories and globs are found by
//! `input/discover.rs`.

pub(crate) mod lakehouse;
#[cfg(feature = "postgres")]
pub(crate) mod postgres;
