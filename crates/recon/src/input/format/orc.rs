//! ORC files (the data and delete files of Iceberg tables that Hive, Impala,
//! Spark or Flink wrote as ORC), read through orc-rust: a unit is a stripe.
//!
//! What recon adds to orc-rust's reader:
//! - **Field ids.** orc-rust's schema drops a type's attributes, where
//!   Iceberg's writers keep each column's field id (`iceberg.id`); recon
//!   reads the footer's types itself (orc-rust's `proto` module, decoded
//!   with prost) and puts the id under the key arrow-rs gives a Parquet field
//!   id, so an Iceberg table resolves both formats' columns in one place.
//! - **Exact timestamps.** Timestamps are read in microseconds, Iceberg's
//!   unit; orc-rust refuses a value with digits below the unit or outside
//!   the range instead of truncating or wrapping it, so a read is exact or
//!   an error naming the value.
//! - **Row positions.** A row's position is its ordinal in the file (as for
//!   Parquet), so deletes by position, targeted second passes and evidence
//!   fetches work as for any block format: a slice of a stripe is its whole
//!   stripe read and sliced, since orc-rust selects rows per file, not per
//!   stripe.

use std::io::Read;
use std::path::Path;
use std::sync::Arc;

use arrow::array::RecordBatch;
use arrow::datatypes::{Field, Schema, SchemaRef};
use orc_rust::arrow_reader::{ArrowReader, ArrowReaderBuilder};
use orc_rust::compression::Decompressor;
use orc_rust::projection::ProjectionMask;
use orc_rust::proto;
use orc_rust::schema::TimestampPrecision;
use parquet::arrow::PARQUET_FIELD_ID_META_KEY;
use prost::Message;

use crate::error::{guard, ReconError, Result};
use crate::input::locator::BlockSink;
use crate::input::store::{Blob, Object};

/// The attribute of an ORC type that holds its Iceberg field id.
const ICEBERG_ID: &str = "iceberg.id";

/// What recon keeps of one ORC file between reads.
pub(crate) struct OrcMeta {
    /// The file's columns as recon reads them (timestamps in microseconds,
    /// Iceberg field ids in the fields' metadata).
    pub(crate) schema: SchemaRef,
    /// Position of each stripe's first row, plus the end.
    pub(crate) starts: Vec<u64>,
    /// Each stripe's byte offset: a read names its stripe by it.
    offsets: Vec<u64>,
    /// The ORC column index of each top-level column (what a projection names).
    roots: Vec<usize>,
}

/// A [`Blob`] as orc-rust reads a file: by offset, local or remote alike.
struct OrcBlob(Blob);

impl orc_rust::reader::ChunkReader for OrcBlob {
    type T = Box<dyn Read + Send>;

    fn len(&self) -> u64 {
        parquet::file::reader::Length::len(&self.0)
    }

    fn get_read(&self, offset: u64) -> std::io::Result<Self::T> {
        parquet::file::reader::ChunkReader::get_read(&self.0, offset)
            .map_err(|e| std::io::Error::other(e.to_string()))
    }

    /// orc-rust reads every stream of a stripe, and the file's tail, by
    /// `get_bytes`: one ranged request of exactly those bytes for a remote
    /// object (`get_read` would stream on from the offset, fetching ahead).
    fn get_bytes(&self, offset: u64, length: u64) -> std::io::Result<bytes::Bytes> {
        let length = usize::try_from(length).map_err(std::io::Error::other)?;
        parquet::file::reader::ChunkReader::get_bytes(&self.0, offset, length)
            .map_err(|e| std::io::Error::other(e.to_string()))
    }
}

fn unreadable(path: &Path, e: impl std::fmt::Display) -> ReconError {
    ReconError::input(path, format!("not a readable ORC file: {e}"))
}

fn builder(path: &Path, remote: Option<&Arc<Object>>) -> Result<ArrowReaderBuilder<OrcBlob>> {
    let blob = OrcBlob(Blob::open(path, remote)?);
    ArrowReaderBuilder::try_new(blob)
        .map(|b| b.with_timestamp_precision(TimestampPrecision::Microsecond))
        .map_err(|e| unreadable(path, e))
}

impl OrcMeta {
    /// Reads an ORC file's footer: its stripes, and its columns as recon
    /// reads them.
    pub(crate) fn open(path: &Path, remote: Option<&Arc<Object>>) -> Result<OrcMeta> {
        guard(path, || {
            let b = builder(path, remote)?;
            let meta = b.file_metadata();
            let mut starts = vec![0u64];
            let mut offsets = Vec::new();
            for s in meta.stripe_metadatas() {
                let next = starts[starts.len() - 1]
                    .checked_add(s.number_of_rows())
                    .ok_or_else(|| unreadable(path, "row count overflows"))?;
                starts.push(next);
                offsets.push(s.offset());
            }
            if starts.last() != Some(&meta.number_of_rows()) {
                return Err(unreadable(
                    path,
                    format!(
                        "its stripes hold {} rows but its footer says {}",
                        starts[starts.len() - 1],
                        meta.number_of_rows()
                    ),
                ));
            }
            let roots: Vec<usize> = meta
                .root_data_type()
                .children()
                .iter()
                .map(|c| c.data_type().column_index())
                .collect();
            let types = footer_types(path, remote, meta.compression())?;
            let ids: Vec<Option<String>> = roots
                .iter()
                .map(|&i| {
                    types.get(i).and_then(|t| {
                        t.attributes
                            .iter()
                            .find(|a| a.key() == ICEBERG_ID)
                            .map(|a| a.value().to_string())
                    })
                })
                .collect();
            let read = b.schema();
            let fields: Vec<Field> = read
                .fields()
                .iter()
                .zip(&ids)
                .map(|(f, id)| {
                    let mut md = f.metadata().clone();
                    if let Some(id) = id {
                        md.insert(PARQUET_FIELD_ID_META_KEY.to_string(), id.clone());
                    }
                    f.as_ref().clone().with_metadata(md)
                })
                .collect();
            Ok(OrcMeta {
                schema: Arc::new(Schema::new(fields)),
                starts,
                offsets,
                roots,
            })
        })
    }

    /// A reader of stripe `stripe`'s `projected` columns (ascending; None:
    /// all of them).
    fn stripe_reader(
        &self,
        path: &Path,
        remote: Option<&Arc<Object>>,
        stripe: usize,
        projected: Option<&[usize]>,
        batch_size: usize,
    ) -> Result<ArrowReader<OrcBlob>> {
        let b = builder(path, remote)?;
        let (mask, schema) = match projected {
            Some(p) => (
                ProjectionMask::roots(
                    b.file_metadata().root_data_type(),
                    p.iter().map(|&i| self.roots[i]),
                ),
                Arc::new(
                    self.schema
                        .project(p)
                        .map_err(|e| ReconError::arrow(path, e))?,
                ),
            ),
            None => (ProjectionMask::all(), self.schema.clone()),
        };
        let offset = usize::try_from(self.offsets[stripe])
            .map_err(|_| unreadable(path, "stripe offset beyond this machine's range"))?;
        Ok(b.with_projection(mask)
            .with_schema(schema)
            .with_batch_size(batch_size.max(1))
            .with_file_byte_range(offset..offset + 1)
            .build())
    }

    /// Reads the `rows` rows from position `first` of stripe `stripe` (the
    /// whole stripe or a slice of it), columns `projected` (ascending),
    /// calling `each` with each batch's columns, first position and row
    /// count. Returns the rows read.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn read(
        &self,
        path: &Path,
        remote: Option<&Arc<Object>>,
        stripe: usize,
        (first, rows): (u64, u64),
        projected: &[usize],
        batch_size: usize,
        each: &mut BlockSink<'_>,
    ) -> Result<u64> {
        let start = self.starts[stripe];
        let (lo, hi) = (first, first + rows);
        if projected.is_empty() {
            // Only the row count is wanted, and the footer holds it.
            let mut at = lo;
            while at < hi {
                let n = (hi - at).min(batch_size.max(1) as u64);
                each(&[], at, n as usize)?;
                at += n;
            }
            return Ok(rows);
        }
        // Only orc-rust's decoding is guarded: a panic in `each` is the
        // caller's, not a corrupt file.
        let mut reader = guard(path, || {
            self.stripe_reader(path, remote, stripe, Some(projected), batch_size)
        })?;
        let mut pos = start;
        let mut read = 0u64;
        while let Some(batch) = guard(path, || Ok(reader.next()))? {
            let batch = batch.map_err(|e| unreadable(path, e))?;
            let end = pos + batch.num_rows() as u64;
            let (from, to) = (pos.max(lo), end.min(hi));
            if from < to {
                let slice = batch.slice((from - pos) as usize, (to - from) as usize);
                each(slice.columns(), from, slice.num_rows())?;
                read += to - from;
            }
            pos = end;
            if pos >= hi {
                break;
            }
        }
        Ok(read)
    }

    /// Every column of stripe `stripe`, as one batch.
    pub(crate) fn stripe(
        &self,
        path: &Path,
        remote: Option<&Arc<Object>>,
        stripe: usize,
    ) -> Result<RecordBatch> {
        guard(path, || {
            let rows = (self.starts[stripe + 1] - self.starts[stripe]) as usize;
            let reader = self.stripe_reader(path, remote, stripe, None, rows.min(1 << 16))?;
            let batches = reader
                .collect::<std::result::Result<Vec<_>, _>>()
                .map_err(|e| unreadable(path, e))?;
            arrow::compute::concat_batches(&self.schema, &batches)
                .map_err(|e| ReconError::arrow(path, e))
        })
    }
}

/// The footer's types, with the attributes orc-rust's schema leaves out.
fn footer_types(
    path: &Path,
    remote: Option<&Arc<Object>>,
    compression: Option<orc_rust::compression::Compression>,
) -> Result<Vec<proto::Type>> {
    use orc_rust::reader::ChunkReader;
    // An ORC file ends with its postscript and the postscript's length in
    // one byte; the footer precedes the postscript, compressed as the file
    // is (orc-rust has read and checked the same bytes already).
    let file = OrcBlob(Blob::open(path, remote)?);
    let short = || unreadable(path, "its tail is shorter than its postscript says");
    let bytes =
        |offset: u64, len: u64| file.get_bytes(offset, len).map_err(|e| unreadable(path, e));
    let end = file.len().checked_sub(1).ok_or_else(short)?;
    let ps_len = u64::from(bytes(end, 1)?.first().copied().unwrap_or(0));
    let ps_at = end.checked_sub(ps_len).ok_or_else(short)?;
    let ps = proto::PostScript::decode(bytes(ps_at, ps_len)?).map_err(|e| unreadable(path, e))?;
    let footer_len = ps.footer_length();
    let footer_at = ps_at.checked_sub(footer_len).ok_or_else(short)?;
    let mut raw = Vec::new();
    Decompressor::new(bytes(footer_at, footer_len)?, compression, Vec::new())
        .read_to_end(&mut raw)
        .map_err(|e| unreadable(path, e))?;
    let footer = proto::Footer::decode(raw.as_slice()).map_err(|e| unreadable(path, e))?;
    Ok(footer.types)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::input::format::block::BlockMeta;
    use crate::input::locator::Unit;
    use arrow::array::{
        Array, ArrayRef, Int64Array, TimestampMicrosecondArray, TimestampNanosecondArray,
    };
    use arrow::datatypes::{DataType, TimeUnit};
    use orc_rust::ArrowWriterBuilder;

    /// An ORC file of `batches`, one stripe each, written by orc-rust.
    fn write(path: &Path, batches: &[RecordBatch]) {
        let file = std::fs::File::create(path).unwrap();
        let mut w = ArrowWriterBuilder::new(file, batches[0].schema())
            .try_build()
            .unwrap();
        for b in batches {
            w.write(b).unwrap();
            w.flush_stripe().unwrap();
        }
        w.close().unwrap();
    }

    fn ids(from: i64, to: i64) -> RecordBatch {
        RecordBatch::try_from_iter([
            (
                "id",
                Arc::new(Int64Array::from_iter_values(from..to)) as ArrayRef,
            ),
            (
                "twice",
                Arc::new(Int64Array::from_iter_values((from..to).map(|i| 2 * i))) as ArrayRef,
            ),
        ])
        .unwrap()
    }

    fn values(a: &ArrayRef) -> Vec<i64> {
        a.as_any()
            .downcast_ref::<Int64Array>()
            .unwrap()
            .values()
            .to_vec()
    }

    #[test]
    fn stripes_are_units_and_a_slice_reads_only_its_rows() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.orc");
        write(&path, &[ids(0, 40), ids(40, 100)]);
        let meta = BlockMeta::orc(&path, None).unwrap();
        assert_eq!(meta.rows(), Some(100));
        let units = meta.units(0);
        assert_eq!(units.len(), 2);
        // A slice of the second stripe (a targeted second pass), one column.
        let slice = Unit::Block {
            file: 0,
            block: 1,
            first: 55,
            rows: 10,
        };
        let (mut got, mut firsts) = (Vec::new(), Vec::new());
        let n = meta
            .read(&path, &slice, &[1], 4, &mut |cols, first, n| {
                assert_eq!(cols.len(), 1);
                assert_eq!(cols[0].len(), n);
                firsts.push(first);
                got.extend(values(&cols[0]));
                Ok(())
            })
            .unwrap();
        assert_eq!(n, 10);
        assert_eq!(got, (55..65).map(|i| 2 * i).collect::<Vec<_>>());
        assert_eq!(firsts[0], 55);
        // No columns: the row count alone, from the footer.
        let whole = &units[0];
        let mut rows = 0;
        meta.read(&path, whole, &[], 16, &mut |cols, _, n| {
            assert!(cols.is_empty());
            rows += n;
            Ok(())
        })
        .unwrap();
        assert_eq!(rows, 40);
    }

    #[test]
    fn rows_are_fetched_by_position_across_stripes() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.orc");
        write(&path, &[ids(0, 40), ids(40, 100)]);
        let meta = BlockMeta::orc(&path, None).unwrap();
        let mut got = Vec::new();
        meta.fetch(&path, &[3, 39, 40, 99], &mut |cols| {
            assert_eq!(cols.len(), 2);
            got.extend(values(&cols[0]));
            Ok(())
        })
        .unwrap();
        assert_eq!(got, vec![3, 39, 40, 99]);
    }

    #[test]
    fn timestamps_read_in_microseconds_and_finer_digits_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        let ts = |v: Vec<i64>| {
            RecordBatch::try_from_iter([(
                "t",
                Arc::new(TimestampNanosecondArray::from(v)) as ArrayRef,
            )])
            .unwrap()
        };
        let exact = dir.path().join("exact.orc");
        write(&exact, &[ts(vec![1_000_000_000, -86_400_000_000_000])]);
        let meta = BlockMeta::orc(&exact, None).unwrap();
        assert_eq!(
            meta.schema.field(0).data_type(),
            &DataType::Timestamp(TimeUnit::Microsecond, None)
        );
        let mut got = Vec::new();
        meta.fetch(&exact, &[0, 1], &mut |cols| {
            let a = cols[0]
                .as_any()
                .downcast_ref::<TimestampMicrosecondArray>()
                .unwrap();
            got.extend(a.values().iter().copied());
            Ok(())
        })
        .unwrap();
        assert_eq!(got, vec![1_000_000, -86_400_000_000]);
        // One nanosecond more: no microsecond value holds it, so the read
        // fails naming the file instead of truncating.
        let fine = dir.path().join("fine.orc");
        write(&fine, &[ts(vec![1_000_000_001])]);
        let meta = BlockMeta::orc(&fine, None).unwrap();
        let err = meta
            .read(&fine, &meta.units(0)[0], &[0], 16, &mut |_, _, _| Ok(()))
            .unwrap_err()
            .to_string();
        assert!(err.contains("fine.orc") && err.contains("ORC"), "{err}");
    }

    #[test]
    fn iceberg_field_ids_come_from_the_type_attributes() {
        // Apache Impala's table, written by Hive with Iceberg's ORC writer.
        let data = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../testdata/iceberg/impala_orc_complex/data");
        let mut files: Vec<_> = std::fs::read_dir(&data)
            .unwrap()
            .map(|e| e.unwrap().path())
            .collect();
        files.sort();
        let meta = BlockMeta::orc(&files[0], None).unwrap();
        let found: Vec<(&str, Option<&str>)> = meta
            .schema
            .fields()
            .iter()
            .map(|f| {
                (
                    f.name().as_str(),
                    f.metadata()
                        .get(PARQUET_FIELD_ID_META_KEY)
                        .map(String::as_str),
                )
            })
            .collect();
        assert_eq!(found[0], ("id", Some("1")));
        assert!(found.iter().all(|(_, id)| id.is_some()), "{found:?}");
        // A file without attributes (orc-rust's writer) has no ids.
        let dir = tempfile::tempdir().unwrap();
        let plain = dir.path().join("plain.orc");
        write(&plain, &[ids(0, 3)]);
        let meta = BlockMeta::orc(&plain, None).unwrap();
        assert!(meta.schema.field(0).metadata().is_empty());
    }
}
