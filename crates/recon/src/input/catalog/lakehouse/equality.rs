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
//! collision argument).
//!
//! Memory: a delete file's keys are held in memory (16 bytes per row) while
//! all the files held so far fit the key budget, a quarter of the run's
//! memory limit ([`set_key_budget`]). A delete file beyond it is spilled:
//! its keys go to 2^b partition files by their top b bits, chosen so a
//! partition holds about half the budget; a data file it applies to is then
//! read once for its key columns, its (digest, position) pairs written to
//! partitions the same way, and each partition's keys are loaded, sorted and
//! probed by that partition's pairs alone. Both ways find the same
//! positions (the property test below); the spilled way costs writing 16
//! bytes per delete row once and reading them again for each data file the
//! delete applies to, and writing and reading 24 bytes per data row.
//! The positions found are kept as position deletes are: 8 bytes per
//! deleted row, for the run.

use std::io::{BufReader, BufWriter, Read, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

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

/// Bytes of key digests held in memory while a table is opened (see the
/// module's doc); the default until a run sets it.
static KEY_BUDGET: AtomicU64 = AtomicU64::new(64 << 20);

/// Gives equality-delete keys a quarter of `memory_limit` (at least 1 MiB):
/// they are held while the tables are opened, before the engine takes its
/// shares. Runs in one process share the setting (the last run's holds).
pub(crate) fn set_key_budget(memory_limit: u64) {
    KEY_BUDGET.store((memory_limit / 4).max(1 << 20), Ordering::Relaxed);
}

/// The most partition bits a spilled key set gets: 256 files, each written
/// through an 8 KiB buffer. Past that a partition holds more than half the
/// budget (over 128 times the budget in keys).
const MAX_BITS: u32 = 8;

/// One delete file's keys.
enum Keys {
    /// Sorted, without repeats.
    Memory(Vec<u128>),
    /// In `1 << bits` files by the digests' top `bits` bits, unsorted.
    Spilled(Partitions),
}

/// Records of a fixed size written to `1 << bits` files by the top `bits`
/// bits of their digest, in a temp dir removed when dropped (or by the
/// interrupt handler).
struct Partitions {
    dir: tempfile::TempDir,
    bits: u32,
}

impl Partitions {
    fn new(base: &Path, bits: u32) -> Result<Partitions> {
        std::fs::create_dir_all(base).map_err(|e| ReconError::io(base, e))?;
        let dir = tempfile::Builder::new()
            .prefix("recon-eqdel-")
            .tempdir_in(base)
            .map_err(|e| ReconError::io(base, e))?;
        crate::tempspace::register(dir.path());
        Ok(Partitions { dir, bits })
    }

    fn path(&self, p: usize) -> PathBuf {
        self.dir.path().join(p.to_string())
    }

    fn of(&self, digest: u128) -> usize {
        (digest >> (128 - self.bits)) as usize
    }

    fn writers(&self) -> Result<Vec<BufWriter<std::fs::File>>> {
        (0..1usize << self.bits)
            .map(|p| {
                let path = self.path(p);
                std::fs::File::create(&path)
                    .map(|f| BufWriter::with_capacity(8 << 10, f))
                    .map_err(|e| ReconError::io(&path, e))
            })
            .collect()
    }

    /// Reads partition `p`'s records of `N` bytes, calling `each` per record.
    fn scan<const N: usize>(&self, p: usize, each: &mut dyn FnMut(&[u8; N])) -> Result<()> {
        let path = self.path(p);
        let file = std::fs::File::open(&path).map_err(|e| ReconError::io(&path, e))?;
        let mut r = BufReader::with_capacity(64 << 10, file);
        let mut record = [0u8; N];
        loop {
            match r.read_exact(&mut record) {
                Ok(()) => each(&record),
                Err(e) if e.kind() == std::io::ErrorKind::UnexpectedEof => return Ok(()),
                Err(e) => return Err(ReconError::io(&path, e)),
            }
        }
    }
}

impl Drop for Partitions {
    fn drop(&mut self) {
        crate::tempspace::unregister(self.dir.path());
    }
}

fn flush(parts: &Partitions, writers: Vec<BufWriter<std::fs::File>>) -> Result<()> {
    for (p, mut w) in writers.into_iter().enumerate() {
        w.flush().map_err(|e| ReconError::io(parts.path(p), e))?;
    }
    Ok(())
}

/// Partition bits for `bytes` of keys under `budget`: partitions of about
/// half the budget, at least 2, at most 2^[`MAX_BITS`].
fn partition_bits(bytes: u64, budget: u64) -> u32 {
    let parts = bytes.div_ceil((budget / 2).max(1)).max(2);
    parts.next_power_of_two().trailing_zeros().min(MAX_BITS)
}

/// Each equality delete file's key digests, read when first needed.
pub(super) struct KeySets<'s> {
    deletes: &'s [EqualityDelete],
    columns: &'s [Column],
    int96_unit: Int96Unit,
    keys: Vec<Option<Keys>>,
    /// Bytes of keys held in memory, and the most there may be.
    held: u64,
    budget: u64,
    /// Where spilled keys and positions go.
    temp_dir: PathBuf,
}

impl<'s> KeySets<'s> {
    pub(super) fn new(
        deletes: &'s [EqualityDelete],
        columns: &'s [Column],
        int96_unit: Int96Unit,
        temp_dir: &Path,
    ) -> KeySets<'s> {
        KeySets {
            deletes,
            columns,
            int96_unit,
            keys: deletes.iter().map(|_| None).collect(),
            held: 0,
            budget: KEY_BUDGET.load(Ordering::Relaxed),
            temp_dir: temp_dir.to_path_buf(),
        }
    }

    fn column(&self, id: i32) -> Result<&'s Column> {
        self.columns
            .iter()
            .find(|c| c.id == id)
            .ok_or_else(|| ReconError::Internal(format!("equality field id {id} not checked")))
    }

    /// Reads delete file `i`'s keys if not yet read.
    fn load(&mut self, i: usize) -> Result<()> {
        if self.keys[i].is_none() {
            let keys = self.read(&self.deletes[i])?;
            if let Keys::Memory(k) = &keys {
                self.held += 16 * k.len() as u64;
            }
            self.keys[i] = Some(keys);
        }
        Ok(())
    }

    fn read(&self, del: &EqualityDelete) -> Result<Keys> {
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
        // The file's row count says what its keys take before they are read.
        let bytes = 16 * block.rows().unwrap_or(0);
        if self.held + bytes <= self.budget {
            let mut keys = Vec::new();
            each_key(path, &block, &stored, &types, &mut |_, digests| {
                keys.extend_from_slice(digests);
                Ok(())
            })?;
            keys.sort_unstable();
            keys.dedup();
            return Ok(Keys::Memory(keys));
        }
        let parts = Partitions::new(&self.temp_dir, partition_bits(bytes, self.budget))?;
        let mut writers = parts.writers()?;
        each_key(path, &block, &stored, &types, &mut |_, digests| {
            for &d in digests {
                let p = parts.of(d);
                writers[p]
                    .write_all(&d.to_le_bytes())
                    .map_err(|e| ReconError::io(parts.path(p), e))?;
            }
            Ok(())
        })?;
        flush(&parts, writers)?;
        Ok(Keys::Spilled(parts))
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
            sets.load(i)?;
        }
        let mut in_memory: Vec<&[u128]> = Vec::new();
        let mut spilled: Vec<&Partitions> = Vec::new();
        for &i in &members {
            match &sets.keys[i] {
                Some(Keys::Memory(k)) => in_memory.push(k),
                Some(Keys::Spilled(p)) => spilled.push(p),
                None => return Err(ReconError::Internal("delete keys not loaded".into())),
            }
        }
        let read = |each: &mut dyn FnMut(u64, &[u128]) -> Result<()>| {
            each_key(path, block, &wanted, &types, each)
        };
        if !in_memory.is_empty() {
            probe_in_memory(&in_memory, &read, &mut removed)?;
        }
        // Spilled sets of the same partitioning share a read of the file.
        let mut by_bits: Vec<(u32, Vec<&Partitions>)> = Vec::new();
        for p in spilled {
            match by_bits.iter_mut().find(|(b, _)| *b == p.bits) {
                Some((_, v)) => v.push(p),
                None => by_bits.push((p.bits, vec![p])),
            }
        }
        for (bits, keys) in by_bits {
            probe_spilled(&sets.temp_dir, bits, &keys, &read, &mut removed)?;
        }
    }
    removed.sort_unstable();
    removed.dedup();
    Ok(removed)
}

/// A data file's key digests, batch by batch, with the first position of each.
type KeyReader<'r> = dyn Fn(&mut dyn FnMut(u64, &[u128]) -> Result<()>) -> Result<()> + 'r;

/// Adds to `removed` the positions whose digest is in one of `keys`
/// (sorted, unique).
fn probe_in_memory(keys: &[&[u128]], read: &KeyReader<'_>, removed: &mut Vec<u64>) -> Result<()> {
    read(&mut |first, digests| {
        for (r, d) in digests.iter().enumerate() {
            if keys.iter().any(|k| k.binary_search(d).is_ok()) {
                removed.push(first + r as u64);
            }
        }
        Ok(())
    })
}

/// Adds to `removed` the positions whose digest is in one of the spilled
/// key sets `keys` (all partitioned by `bits`): the file's (digest,
/// position) pairs are partitioned alike, then each partition's keys are
/// loaded and probed by its pairs alone.
fn probe_spilled(
    temp_dir: &Path,
    bits: u32,
    keys: &[&Partitions],
    read: &KeyReader<'_>,
    removed: &mut Vec<u64>,
) -> Result<()> {
    let pairs = Partitions::new(temp_dir, bits)?;
    let mut writers = pairs.writers()?;
    read(&mut |first, digests| {
        for (r, &d) in digests.iter().enumerate() {
            let p = pairs.of(d);
            let mut record = [0u8; 24];
            record[..16].copy_from_slice(&d.to_le_bytes());
            record[16..].copy_from_slice(&(first + r as u64).to_le_bytes());
            writers[p]
                .write_all(&record)
                .map_err(|e| ReconError::io(pairs.path(p), e))?;
        }
        Ok(())
    })?;
    flush(&pairs, writers)?;
    let mut part: Vec<u128> = Vec::new();
    for p in 0..1usize << bits {
        part.clear();
        for k in keys {
            k.scan::<16>(p, &mut |b| part.push(u128::from_le_bytes(*b)))?;
        }
        if part.is_empty() {
            continue;
        }
        part.sort_unstable();
        part.dedup();
        pairs.scan::<24>(p, &mut |b| {
            let (mut d, mut pos) = ([0u8; 16], [0u8; 8]);
            d.copy_from_slice(&b[..16]);
            pos.copy_from_slice(&b[16..]);
            if part.binary_search(&u128::from_le_bytes(d)).is_ok() {
                removed.push(u64::from_le_bytes(pos));
            }
        })?;
    }
    Ok(())
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

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn spill(dir: &Path, bits: u32, keys: &[u128]) -> Partitions {
        let parts = Partitions::new(dir, bits).unwrap();
        let mut w = parts.writers().unwrap();
        for &k in keys {
            w[parts.of(k)].write_all(&k.to_le_bytes()).unwrap();
        }
        flush(&parts, w).unwrap();
        parts
    }

    #[test]
    fn partitions_hold_about_half_the_budget() {
        assert_eq!(partition_bits(3 << 20, 2 << 20), 2);
        assert_eq!(partition_bits(1, 2 << 20), 1);
        assert_eq!(partition_bits(100 << 20, 2 << 20), 7);
        assert_eq!(partition_bits(u64::MAX, 2 << 20), MAX_BITS);
    }

    #[test]
    fn spilled_partitions_are_removed_when_dropped() {
        let dir = tempfile::tempdir().unwrap();
        let parts = spill(dir.path(), 2, &[1, u128::MAX]);
        assert_eq!(std::fs::read_dir(parts.dir.path()).unwrap().count(), 4);
        drop(parts);
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
    }

    #[test]
    fn a_delete_file_beyond_the_budget_is_spilled_and_removes_the_same_rows() {
        // pyiceberg's orders_eqdel: an equality delete of order_id = 4.
        let table =
            Path::new(env!("CARGO_MANIFEST_DIR")).join("../../testdata/iceberg/orders_eqdel/data");
        let files: Vec<PathBuf> = std::fs::read_dir(&table)
            .unwrap()
            .map(|e| e.unwrap().path())
            .collect();
        let delete = files
            .iter()
            .find(|p| p.to_string_lossy().ends_with("-eq-deletes.parquet"))
            .unwrap();
        let deletes = [EqualityDelete {
            path: delete.clone(),
            format: super::super::iceberg::FileFormat::Parquet,
            remote: None,
            ids: vec![1],
        }];
        let columns = [Column {
            id: 1,
            field: arrow::datatypes::Field::new(
                "order_id",
                arrow::datatypes::DataType::Int64,
                true,
            ),
            required: false,
            initial_default: None,
        }];
        let temp = tempfile::tempdir().unwrap();
        let mut held = KeySets::new(&deletes, &columns, Int96Unit::default(), temp.path());
        let mut spilled = KeySets::new(&deletes, &columns, Int96Unit::default(), temp.path());
        spilled.budget = 0;
        let mut removed = 0;
        for data in files.iter().filter(|p| *p != delete) {
            let block = BlockMeta::parquet(data, None, Int96Unit::default()).unwrap();
            let index = block.schema.index_of("order_id").unwrap();
            let layout = [FileColumn::Stored { index, widen: None }];
            let a = deleted_positions(data, &block, &layout, &[0], &mut held).unwrap();
            let b = deleted_positions(data, &block, &layout, &[0], &mut spilled).unwrap();
            assert_eq!(a, b, "{}", data.display());
            removed += a.len();
        }
        assert!(matches!(held.keys[0], Some(Keys::Memory(_))));
        assert!(matches!(spilled.keys[0], Some(Keys::Spilled(_))));
        // Every copy of order 4 in the data files: three before the delete
        // and one after (this test applies the delete to every file;
        // sequence numbers are `iceberg`'s part).
        assert_eq!(removed, 4);
    }

    proptest! {
        /// Spilled key sets remove exactly the positions in-memory ones
        /// (and a brute-force scan) do: duplicates on both sides, keys
        /// split over two delete files, batches of any size.
        #[test]
        fn spilled_keys_remove_the_positions_held_keys_do(
            pool in prop::collection::vec(any::<u128>(), 1..40),
            deletes in prop::collection::vec(any::<prop::sample::Index>(), 0..60),
            rows in prop::collection::vec(any::<prop::sample::Index>(), 0..300),
            bits in 1u32..4,
            batch in 1usize..50,
        ) {
            let keys: Vec<u128> = deletes.iter().map(|i| pool[i.index(pool.len())]).collect();
            let data: Vec<u128> = rows.iter().map(|i| pool[i.index(pool.len())]).collect();
            let read = |each: &mut dyn FnMut(u64, &[u128]) -> Result<()>| {
                for (c, chunk) in data.chunks(batch).enumerate() {
                    each((c * batch) as u64, chunk)?;
                }
                Ok(())
            };
            let brute: Vec<u64> = data
                .iter()
                .enumerate()
                .filter(|(_, d)| keys.contains(d))
                .map(|(i, _)| i as u64)
                .collect();
            let mut held = keys.clone();
            held.sort_unstable();
            held.dedup();
            let mut in_memory = Vec::new();
            probe_in_memory(&[&held], &read, &mut in_memory).unwrap();
            prop_assert_eq!(&in_memory, &brute);
            let dir = tempfile::tempdir().unwrap();
            let (a, b) = keys.split_at(keys.len() / 2);
            let (a, b) = (spill(dir.path(), bits, a), spill(dir.path(), bits, b));
            let mut spilled = Vec::new();
            probe_spilled(dir.path(), bits, &[&a, &b], &read, &mut spilled).unwrap();
            spilled.sort_unstable();
            prop_assert_eq!(spilled, brute);
        }
    }
}
