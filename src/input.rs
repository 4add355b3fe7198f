//! Input tables: discovery of Parquet files, metadata, row locators, and reads.
//!
//! A table is one Parquet file or a directory of them. Every row gets a
//! *locator*: its ordinal in the table, counting files in sorted path order and
//! row groups in file order. A locator maps back to (file, row group, row)
//! through the metadata alone, so unmatched rows are fetched by reading only
//! the row groups that hold them.

use std::fs::File;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use arrow::datatypes::{Field, Schema, SchemaRef};
use parquet::arrow::arrow_reader::{
    ArrowReaderMetadata, ArrowReaderOptions, ParquetRecordBatchReader,
    ParquetRecordBatchReaderBuilder, RowSelection,
};
use parquet::arrow::ProjectionMask;

use crate::error::{ReconError, Result};

/// One Parquet file of a table.
pub struct TableFile {
    pub path: PathBuf,
    meta: ArrowReaderMetadata,
    /// Locator of the first row of each row group, plus the end.
    row_group_starts: Vec<u64>,
}

impl TableFile {
    pub fn rows(&self) -> u64 {
        self.row_group_starts.last().copied().unwrap_or(0)
            - self.row_group_starts.first().copied().unwrap_or(0)
    }

    pub fn row_groups(&self) -> usize {
        self.row_group_starts.len().saturating_sub(1)
    }
}

/// A table: one or more Parquet files with one schema.
pub struct Table {
    /// The path the user gave.
    pub path: PathBuf,
    pub files: Vec<TableFile>,
    /// The Arrow schema shared by all files.
    pub schema: SchemaRef,
    /// Row count from the metadata.
    pub rows: u64,
}

/// One row group to scan.
#[derive(Debug, Clone, Copy)]
pub struct ScanUnit {
    pub file: usize,
    pub row_group: usize,
    /// Locator of the row group's first row.
    pub first_row: u64,
    pub rows: u64,
}

/// Spark and friends leave _SUCCESS, _committed_*, .crc and other markers
/// beside the data; names starting with `_` or `.` are never data.
fn is_marker(name: &str) -> bool {
    name.starts_with('_') || name.starts_with('.')
}

fn collect_files(dir: &Path, out: &mut Vec<PathBuf>) -> Result<()> {
    let entries = std::fs::read_dir(dir).map_err(|e| ReconError::input(dir, e.to_string()))?;
    let mut children = Vec::new();
    for entry in entries {
        let entry = entry.map_err(|e| ReconError::input(dir, e.to_string()))?;
        // file_type() does not follow symlinks, so a link cycle cannot recurse forever.
        let kind = entry
            .file_type()
            .map_err(|e| ReconError::input(entry.path(), e.to_string()))?;
        children.push((entry.path(), kind));
    }
    children.sort_by(|a, b| a.0.cmp(&b.0));
    for (child, kind) in children {
        let name = child.file_name().and_then(|n| n.to_str()).unwrap_or("");
        if is_marker(name) {
            continue;
        }
        if kind.is_dir() {
            collect_files(&child, out)?;
        } else if kind.is_symlink() && child.is_dir() {
            return Err(ReconError::input(
                &child,
                "symlinked directory inside a table is not followed; pass the real path",
            ));
        } else if name.ends_with(".parquet") {
            out.push(child);
        } else {
            // Never drop data silently: a file we would skip could hold the difference.
            return Err(ReconError::input(
                &child,
                "not a .parquet file inside a table directory (only .parquet files and _/. markers may be there)",
            ));
        }
    }
    Ok(())
}

/// Lists the Parquet files of `path`: itself, or a directory's `*.parquet`
/// files found recursively, in sorted path order.
pub fn discover(path: &Path) -> Result<Vec<PathBuf>> {
    let meta = std::fs::metadata(path).map_err(|e| ReconError::input(path, e.to_string()))?;
    if meta.is_file() {
        return Ok(vec![path.to_path_buf()]);
    }
    let mut files = Vec::new();
    collect_files(path, &mut files)?;
    if files.is_empty() {
        return Err(ReconError::input(path, "directory holds no .parquet files"));
    }
    Ok(files)
}

fn same_fields(a: &Field, b: &Field) -> bool {
    a.name() == b.name() && a.data_type() == b.data_type()
}

impl Table {
    /// Opens a table reading only footers: schema, row groups and row counts.
    pub fn open(path: &Path) -> Result<Table> {
        let paths = discover(path)?;
        let mut files = Vec::with_capacity(paths.len());
        let mut schema: Option<SchemaRef> = None;
        let mut next = 0u64;
        for p in paths {
            let file = File::open(&p).map_err(|e| ReconError::input(&p, e.to_string()))?;
            if file
                .metadata()
                .map_err(|e| ReconError::input(&p, e.to_string()))?
                .len()
                == 0
            {
                return Err(ReconError::input(
                    &p,
                    "file is empty (0 bytes), not Parquet",
                ));
            }
            let meta = crate::partition::guard(&p, || {
                ArrowReaderMetadata::load(&file, ArrowReaderOptions::new())
                    .map_err(|e| ReconError::parquet(&p, e))
            })?;
            let file_schema = meta.schema().clone();
            match &schema {
                None => schema = Some(file_schema.clone()),
                Some(first) => {
                    let same = first.fields().len() == file_schema.fields().len()
                        && first
                            .fields()
                            .iter()
                            .zip(file_schema.fields())
                            .all(|(a, b)| same_fields(a, b));
                    if !same {
                        return Err(ReconError::input(
                            &p,
                            format!(
                                "schema differs from the other files of {}: all files of a table must share one schema",
                                path.display()
                            ),
                        ));
                    }
                    // Nullability may differ between files; the table's field is nullable if any is.
                    let merged: Vec<Field> = first
                        .fields()
                        .iter()
                        .zip(file_schema.fields())
                        .map(|(a, b)| {
                            a.as_ref()
                                .clone()
                                .with_nullable(a.is_nullable() || b.is_nullable())
                        })
                        .collect();
                    schema = Some(Arc::new(Schema::new_with_metadata(
                        merged,
                        first.metadata().clone(),
                    )));
                }
            }
            let mut row_group_starts = vec![next];
            for rg in meta.metadata().row_groups() {
                let n = u64::try_from(rg.num_rows())
                    .map_err(|_| ReconError::input(&p, "negative row count in metadata"))?;
                next = next
                    .checked_add(n)
                    .ok_or_else(|| ReconError::input(&p, "row count in metadata overflows"))?;
                row_group_starts.push(next);
            }
            files.push(TableFile {
                path: p,
                meta,
                row_group_starts,
            });
        }
        let schema = schema.ok_or_else(|| ReconError::input(path, "no Parquet files"))?;
        Ok(Table {
            path: path.to_path_buf(),
            files,
            schema,
            rows: next,
        })
    }

    /// One unit per non-empty row group, in locator order.
    pub fn scan_units(&self) -> Vec<ScanUnit> {
        let mut units = Vec::new();
        for (fi, f) in self.files.iter().enumerate() {
            for rg in 0..f.row_groups() {
                let first_row = f.row_group_starts[rg];
                let rows = f.row_group_starts[rg + 1] - first_row;
                if rows > 0 {
                    units.push(ScanUnit {
                        file: fi,
                        row_group: rg,
                        first_row,
                        rows,
                    });
                }
            }
        }
        units
    }

    /// Maps a locator to (file, row group, row within the group).
    pub fn locate(&self, locator: u64) -> Option<(usize, usize, u64)> {
        let fi = self
            .files
            .partition_point(|f| f.row_group_starts.last().copied().unwrap_or(0) <= locator);
        let f = self.files.get(fi)?;
        let rg = f.row_group_starts.partition_point(|&s| s <= locator) - 1;
        if rg >= f.row_groups() {
            return None;
        }
        Some((fi, rg, locator - f.row_group_starts[rg]))
    }

    /// A reader over one row group, optionally projected to top-level
    /// `columns` (file order) and restricted to `selection`.
    pub fn read_row_group(
        &self,
        file: usize,
        row_group: usize,
        columns: Option<&[usize]>,
        selection: Option<RowSelection>,
        batch_size: usize,
    ) -> Result<ParquetRecordBatchReader> {
        let f = &self.files[file];
        let handle = File::open(&f.path).map_err(|e| ReconError::input(&f.path, e.to_string()))?;
        let mut builder =
            ParquetRecordBatchReaderBuilder::new_with_metadata(handle, f.meta.clone())
                .with_row_groups(vec![row_group])
                .with_batch_size(batch_size);
        if let Some(cols) = columns {
            let mask = ProjectionMask::roots(
                f.meta.metadata().file_metadata().schema_descr(),
                cols.iter().copied(),
            );
            builder = builder.with_projection(mask);
        }
        if let Some(sel) = selection {
            builder = builder.with_row_selection(sel);
        }
        builder.build().map_err(|e| ReconError::parquet(&f.path, e))
    }

    /// Locator of the first row of file `i`.
    pub fn file_first_row(&self, i: usize) -> u64 {
        self.files[i].row_group_starts.first().copied().unwrap_or(0)
    }

    /// Rows in one row group.
    pub fn row_group_rows(&self, file: usize, row_group: usize) -> u64 {
        let starts = &self.files[file].row_group_starts;
        starts[row_group + 1] - starts[row_group]
    }

    /// Path of file `i`.
    pub fn file_path(&self, i: usize) -> &Path {
        &self.files[i].path
    }
}
