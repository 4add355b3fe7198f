//! Iceberg equality deletes, applied as the positions they remove.
//!
//! An equality delete file lists values of some columns (its
//! `equality_ids`); every row of a data file it applies to (see
//! `iceberg::Entry::deletes_from`) whose values of those columns equal one
//! of its rows is gone, NULL equal to NULL. recon turns that into
//! positions when the table is opened, so the rest of the engine sees one
//! kind of delete: each delete file's rows become key digests (the row
//! digest of encoding.md over the compared columns in field-id order, each
//! value read as the table's type, so a delete written before an `int` to
//! `long` promotion still matches), and each data file it applies to is
//! read for those columns alone, its rows' digests looked up.
//!
//! Equal values have equal encodings, and encodings are compared by their
//! 128-bit digests, as rows are everywhere in recon (encoding.md's
//! collision argument). Memory: 16 bytes per distinct delete row, held
//! while the table is opened; a table of many millions of equality-deleted
//! rows wants compacting anyway.

use std::path::Path;

use arrow::array::{ArrayRef, UInt32Array};

use super::iceberg::{Column, EqualityDelete, FIELD_ID};
use crate::config::Int96Unit;
use crate::digest::RowEncoder;
use crate::error::{ReconError, Result};
use crate::input::format::block::BlockMeta;
use crate::input::format::file::FileColumn;
use crate::input::types;

/// Rows per batch when reading the compared columns.
const BATCH: usize = 8192;

/// Each equality delete file's key digests, sorted, read when first needed.
pub(super) struct KeySets<'s> {
    deletes: &'s [EqualityDelete],
    columns: &'s [Column],
    int96_unit: Int96Unit,
    keys: Vec<Option<Vec<u128>>>,
}

impl<'s> KeySets<'s> {
    pub(super) fn new(
        deletes: &'s [EqualityDelete],
        columns: &'s [Column],
        int96_unit: Int96Unit,
    ) -> KeySets<'s> {
        KeySets {
            deletes,
            columns,
            int96_unit,
            keys: vec![None; deletes.len()],
        }
    }

    fn column(&self, id: i32) -> Result<&'s Column> {
        self.columns
            .iter()
            .find(|c| c.id == id)
            .ok_or_else(|| ReconError::Internal(format!("equality field id {id} not checked")))
    }

    /// Delete file `i`'s key digests, sorted and without repeats.
    fn keys(&mut self, i: usize) -> Result<&[u128]> {
        if self.keys[i].is_none() {
            let keys = self.read(&self.deletes[i])?;
            self.keys[i] = Some(keys);
        }
        Ok(self.keys[i].as_deref().unwrap_or_default())
    }

    fn read(&self, del: &EqualityDelete) -> Result<Vec<u128>> {
        let path = del.path.as_path();
        let block = del
            .format
            .open(path, del.remote.as_ref(), self.int96_unit)?;
        let fields = block.schema.fields();
        // Where each compared column is in the file, and the exact
        // conversion to the table's type.
        let mut stored = Vec::with_capacity(del.ids.len());
        for &id in &del.ids {
            let column = self.column(id)?;
            let index = fields
                .iter()
                .position(|f| f.metadata().get(FIELD_ID).and_then(|v| v.parse().ok()) == Some(id))
                .ok_or_else(|| {
                    ReconError::input(
                        path,
                        format!(
                            "is an equality delete on {} (field id {id}), but holds no column with that field id",
                            column.field.name()
                        ),
                    )
                })?;
            let (file_type, table_type) = (fields[index].data_type(), column.field.data_type());
            let widen = types::widening(file_type, table_type, types::Declared::default())
                .ok_or_else(|| {
                    ReconError::input(
                        path,
                        format!(
                            "holds equality delete column {} as {file_type}, but the table declares {table_type}: not a widening recon can make exactly",
                            column.field.name()
                        ),
                    )
                })?;
            stored.push(FileColumn::Stored { index, widen });
        }
        let types: Vec<_> = del
            .ids
            .iter()
            .map(|&id| Ok(self.column(id)?.field.data_type().clone()))
            .collect::<Result<_>>()?;
        let mut keys = Vec::new();
        each_key(path, &block, &stored, &types, &mut |_, digests| {
            keys.extend_from_slice(digests);
            Ok(())
        })?;
        keys.sort_unstable();
        keys.dedup();
        Ok(keys)
    }
}

/// The positions of data file `path` (read through `layout`, where each of
/// the table's columns is in it) that the equality deletes `applicable`
/// remove, ascending.
pub(super) fn deleted_positions(
    path: &Path,
    block: &BlockMeta,
    layout: &[FileColumn],
    applicable: &[usize],
    sets: &mut KeySets<'_>,
) -> Result<Vec<u64>> {
    let mut removed = Vec::new();
    // Deletes comparing the same columns share one read of the file.
    let mut groups: Vec<(&[i32], Vec<usize>)> = Vec::new();
    for &i in applicable {
        let ids = sets.deletes[i].ids.as_slice();
        match groups.iter_mut().find(|(g, _)| *g == ids) {
            Some((_, members)) => members.push(i),
            None => groups.push((ids, vec![i])),
        }
    }
    for (ids, members) in groups {
        let mut wanted = Vec::with_capacity(ids.len());
        let mut types = Vec::with_capacity(ids.len());
        for &id in ids {
            let c = sets
                .columns
                .iter()
                .position(|c| c.id == id)
                .ok_or_else(|| {
                    ReconError::Internal(format!("equality field id {id} not checked"))
                })?;
            wanted.push(layout[c].clone());
            types.push(sets.columns[c].field.data_type().clone());
        }
        for &i in &members {
            sets.keys(i)?;
        }
        let keys: Vec<&[u128]> = members
            .iter()
            .map(|&i| sets.keys[i].as_deref().unwrap_or_default())
            .collect();
        each_key(path, block, &wanted, &types, &mut |first, digests| {
            for (r, d) in digests.iter().enumerate() {
                if keys.iter().any(|k| k.binary_search(d).is_ok()) {
                    removed.push(first + r as u64);
                }
            }
            Ok(())
        })?;
    }
    removed.sort_unstable();
    removed.dedup();
    Ok(removed)
}

/// Reads columns `wanted` (of types `types`) of every row of a file and
/// calls `each` with each batch's first position and its rows' key digests.
fn each_key(
    path: &Path,
    block: &BlockMeta,
    wanted: &[FileColumn],
    types: &[arrow::datatypes::DataType],
    each: &mut dyn FnMut(u64, &[u128]) -> Result<()>,
) -> Result<()> {
    let mut stored: Vec<usize> = wanted
        .iter()
        .filter_map(|w| match w {
            FileColumn::Stored { index, .. } => Some(*index),
            _ => None,
        })
        .collect();
    stored.sort_unstable();
    stored.dedup();
    let mut encoder = RowEncoder::new();
    let mut digests = Vec::new();
    for unit in block.units(0) {
        block.read(path, &unit, &stored, BATCH, &mut |cols, first, rows| {
            let columns = wanted
                .iter()
                .zip(types)
                .map(|(w, ty)| -> Result<ArrayRef> {
                    match w {
                        FileColumn::Missing => Ok(arrow::array::new_null_array(ty, rows)),
                        FileColumn::Constant(value) => {
                            let zeros = UInt32Array::from(vec![0u32; rows]);
                            arrow::compute::take(value.as_ref(), &zeros, None)
                                .map_err(|e| ReconError::arrow(path, e))
                        }
                        FileColumn::Stored { index, widen } => {
                            let i = stored.binary_search(index).map_err(|_| {
                                ReconError::Internal("stored column not read".into())
                            })?;
                            match widen {
                                None => Ok(cols[i].clone()),
                                Some(to) => types::convert(&cols[i], to).map_err(|m| {
                                    ReconError::input(
                                        path,
                                        format!("an equality delete's column, read as {to}: {m}"),
                                    )
                                }),
                            }
                        }
                    }
                })
                .collect::<Result<Vec<_>>>()?;
            digests.clear();
            encoder
                .digests(&columns, &mut digests)
                .map_err(|e| ReconError::input(path, e.0))?;
            each(first, &digests)
        })?;
    }
    Ok(())
}
