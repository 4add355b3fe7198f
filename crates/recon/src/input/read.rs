//! Reading a table: the units of a scan, each read into batches of the
//! wanted columns with their rows' locators (block formats here, text
//! through [`super::format::text`]), and rows fetched back by locator.

use arrow::array::{ArrayRef, RecordBatch};

use super::locator::{pack, unpack, Locators, Unit};
use super::table::{FileColumn, Table, TableFile};
use super::text_reader::{self as reader, TextCursor};
use crate::error::{guard, ReconError, Result};

/// The rows of a batch (positions `first..first + n` of `file`) that
/// `deleted` (ascending positions) leaves, with their locators.
fn skip_deleted(
    columns: &[ArrayRef],
    first: u64,
    n: usize,
    deleted: &[u64],
    file: usize,
) -> std::result::Result<(Vec<ArrayRef>, Vec<u64>), arrow::error::ArrowError> {
    let start = deleted.partition_point(|&r| r < first);
    let end = deleted.partition_point(|&r| r < first + n as u64);
    let gone = &deleted[start..end];
    let mut keep = vec![true; n];
    for &r in gone {
        keep[(r - first) as usize] = false;
    }
    let locs: Vec<u64> = (0..n as u64)
        .filter(|&i| keep[i as usize])
        .map(|i| pack(file, first + i))
        .collect();
    if gone.is_empty() {
        return Ok((columns.to_vec(), locs));
    }
    let mask = arrow::array::BooleanArray::from(keep);
    let out = columns
        .iter()
        .map(|c| arrow::compute::filter(c.as_ref(), &mask))
        .collect::<std::result::Result<Vec<_>, _>>()?;
    Ok((out, locs))
}

/// The file columns that hold table columns `projected` (ascending).
fn stored_columns(f: &TableFile, projected: &[usize]) -> Vec<usize> {
    let Some(layout) = &f.columns else {
        return projected.to_vec();
    };
    let mut stored: Vec<usize> = projected
        .iter()
        .filter_map(|&c| match &layout[c] {
            FileColumn::Stored { index, .. } => Some(*index),
            FileColumn::Missing | FileColumn::Constant(_) => None,
        })
        .collect();
    stored.sort_unstable();
    stored
}

impl Table {
    /// Fetches the rows at `locators` (sorted ascending, unique) with every
    /// column of the table. Calls `each` with batches whose rows follow
    /// `locators` order.
    pub fn fetch<'t>(
        &'t self,
        fetcher: &mut Fetcher<'t>,
        locators: &[u64],
        mut each: impl FnMut(RecordBatch) -> Result<()>,
    ) -> Result<()> {
        let mut start = 0;
        while start < locators.len() {
            let (file, _) = unpack(locators[start]);
            let end = start + locators[start..].partition_point(|&l| unpack(l).0 == file);
            let positions: Vec<u64> = locators[start..end].iter().map(|&l| unpack(l).1).collect();
            let path = self.files[file].path.clone();
            let f = &self.files[file];
            // A fetch reads every column of the file, for every table column.
            let (table, all): (Vec<usize>, Vec<usize>) = match (&f.columns, &f.block) {
                (Some(_), Some(b)) => (
                    (0..self.file_columns).collect(),
                    (0..b.schema.fields().len()).collect(),
                ),
                _ => Default::default(),
            };
            let mut emit = |cols: Vec<ArrayRef>| -> Result<()> {
                let n = cols.first().map_or(0, |c| c.len());
                let cols = match &f.columns {
                    None => cols,
                    Some(layout) => self.conform(f, layout, &table, &all, &cols, n)?,
                };
                let cols = self.with_partitions(file, cols, n)?;
                let batch = RecordBatch::try_new(self.schema.clone(), cols)
                    .map_err(|e| ReconError::arrow(&path, e))?;
                each(batch)
            };
            guard(&path, || match &self.files[file].block {
                Some(b) => b.fetch(&path, &positions, &mut emit),
                None => {
                    if fetcher.text.len() <= file {
                        fetcher.text.resize_with(file + 1, || None);
                    }
                    reader::fetch(self, file, &positions, &mut fetcher.text[file], &mut emit)
                }
            })?;
            start = end;
        }
        Ok(())
    }

    /// The units of work of a scan, for block formats; text files are cut
    /// into chunks by [`Table::feed_text`] instead.
    pub fn block_units(&self) -> Vec<Unit> {
        let mut units = Vec::new();
        for (fi, f) in self.files.iter().enumerate() {
            if let Some(b) = &f.block {
                units.extend(b.units(fi));
            } else {
                units.push(Unit::TextFile { file: fi });
            }
        }
        units
    }

    /// Reads one unit, calling `each(columns, locators)` per batch, where
    /// `columns` are the table columns `wanted` (in that order).
    pub fn read_unit(
        &self,
        unit: &Unit,
        wanted: &[usize],
        batch_size: usize,
        each: &mut dyn FnMut(&[ArrayRef], Locators<'_>) -> Result<()>,
    ) -> Result<u64> {
        match unit {
            Unit::Block { file, .. } | Unit::Stream { file } => {
                let f = &self.files[*file];
                let b = f
                    .block
                    .as_ref()
                    .ok_or_else(|| ReconError::Internal("block unit on a text file".into()))?;
                let file_cols: Vec<usize> = wanted
                    .iter()
                    .copied()
                    .filter(|&c| c < self.file_columns)
                    .collect();
                let mut projected = file_cols.clone();
                projected.sort_unstable();
                projected.dedup();
                let stored = stored_columns(f, &projected);
                b.read(
                    &f.path,
                    unit,
                    &stored,
                    batch_size,
                    &mut |cols: &[ArrayRef], first: u64, n: usize| {
                        let conformed;
                        let cols = match &f.columns {
                            None => cols,
                            Some(layout) => {
                                conformed =
                                    self.conform(f, layout, &projected, &stored, cols, n)?;
                                &conformed
                            }
                        };
                        let out = self.pick(*file, wanted, &projected, cols, n)?;
                        match f.deleted.as_deref() {
                            Some(deleted) => {
                                let (out, locs) = skip_deleted(&out, first, n, deleted, *file)
                                    .map_err(|e| ReconError::arrow(&f.path, e))?;
                                each(&out, Locators::List(&locs))
                            }
                            None => each(&out, Locators::Run(pack(*file, first))),
                        }
                    },
                )
            }
            Unit::TextFile { .. } => Err(ReconError::Internal(
                "text file units are fed as chunks".into(),
            )),
            Unit::Text(chunk) => reader::read_chunk(self, chunk, wanted, batch_size, each),
        }
    }

    /// Cuts text file `file` into chunks at record boundaries and passes each
    /// to `send` (returns false to stop). Records the file's decompressed size.
    pub fn feed_text(
        &self,
        file: usize,
        chunk_bytes: usize,
        send: &mut dyn FnMut(Unit) -> bool,
    ) -> Result<()> {
        reader::feed(self, file, chunk_bytes, send)
    }
}

/// State kept across the fetches of one pass over a table's unmatched rows:
/// compressed text is read forward once instead of once per evidence range.
#[derive(Default)]
pub struct Fetcher<'t> {
    text: Vec<Option<TextCursor<'t>>>,
}
