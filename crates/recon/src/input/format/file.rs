//! One file of a table, as the formats read it: its path, compression and
//! text decoding, its block metadata (Parquet, IPC, in-memory; none for
//! text), the rows a table format's deletes remove, and where each table
//! column is in it.

use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use arrow::array::ArrayRef;
use arrow::datatypes::DataType;

use super::block::BlockMeta;
use crate::config::Encoding;
use crate::input::discover::Compression;

/// One file of a table.
pub(crate) struct TableFile {
    pub path: PathBuf,
    pub compression: Compression,
    /// Raw Hive partition values, one per `Table::partition_keys` (None: NULL).
    pub(in crate::input) partition_values: Vec<Option<String>>,
    /// Footer metadata of Parquet and IPC files.
    pub(in crate::input) block: Option<BlockMeta>,
    /// Rows (block formats) or decompressed bytes (text) of the file; text
    /// files learn it during the scan.
    pub(in crate::input) extent: AtomicU64,
    /// Text decoded to UTF-8 as it is read (UTF-16, Shift_JIS, ...); its
    /// locators are offsets in the decoded text.
    pub decode: Option<&'static encoding_rs::Encoding>,
    /// Rows (positions, ascending) a table format's deletes remove: they
    /// are skipped by every read (a Delta deletion vector, Iceberg
    /// position deletes).
    pub deleted: Option<Arc<[u64]>>,
    /// Where each of the table's file columns is in this file and how its
    /// stored type reads as the table's, for table formats whose files may
    /// predate the schema and for files of a plain table that store a
    /// column in a narrower type (None: column `i` is the file's column
    /// `i`, of the table's type).
    pub(in crate::input) columns: Option<Arc<[FileColumn]>>,
    /// The object, when the file is in an object store (read by ranges).
    pub remote: Option<Arc<crate::input::store::Object>>,
}

/// Where a table column is in one file of a table.
#[derive(Debug, Clone)]
pub(crate) enum FileColumn {
    /// The file's column `index`. When `widen` names a type, its values are
    /// converted exactly to it (`types::convert`: an Iceberg promotion, a
    /// Delta `timestamp` stored zone-less, a plain file's narrower type),
    /// then given the table type's nested field names if they differ (a
    /// Delta column mapping's physical names, an Iceberg file's list items).
    Stored {
        index: usize,
        widen: Option<DataType>,
    },
    /// Not in the file (written before the column was added): NULL.
    /// Only the lakehouse readers lay files out so.
    #[cfg_attr(not(any(feature = "delta", feature = "iceberg")), allow(dead_code))]
    Missing,
    /// Not in the file, but one value for all its rows: an Iceberg identity
    /// partition value from the manifest, a one-row array of the table
    /// column's type.
    #[cfg_attr(not(any(feature = "delta", feature = "iceberg")), allow(dead_code))]
    Constant(ArrayRef),
}

impl TableFile {
    /// A live Parquet file of a lakehouse table, with the positions its
    /// deletes remove and where the table's columns are in it.
    #[cfg(any(feature = "delta", feature = "iceberg"))]
    pub(in crate::input) fn live(
        path: PathBuf,
        block: BlockMeta,
        partition_values: Vec<Option<String>>,
        deleted: Option<&[u64]>,
        columns: Option<Arc<[FileColumn]>>,
    ) -> (TableFile, u64) {
        let n = block.rows().unwrap_or(0);
        let gone = deleted.map_or(0, |d| d.iter().filter(|&&r| r < n).count() as u64);
        let file = TableFile {
            path,
            compression: Compression::None,
            partition_values,
            // Positions, deleted ones included: locators' ordinals span them.
            extent: AtomicU64::new(n),
            decode: None,
            deleted: deleted.map(Arc::from),
            columns,
            remote: block.remote.clone(),
            block: Some(block),
        };
        (file, n - gone)
    }

    /// The encoding its values arrive in: UTF-8 once decoded.
    pub(crate) fn encoding(&self, table: Encoding) -> Encoding {
        if self.decode.is_some() {
            Encoding::Utf8
        } else {
            table
        }
    }

    pub(crate) fn extent(&self) -> u64 {
        self.extent.load(Ordering::Relaxed)
    }

    pub(crate) fn set_extent(&self, n: u64) {
        self.extent.store(n, Ordering::Relaxed);
    }
}
