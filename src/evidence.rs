//! Evidence: fetch the unmatched rows back from the inputs by locator.
//!
//! Reconciliation leaves, per side, (locator, excess copies) records grouped
//! in locator ranges. Each range is loaded, sorted, and its rows are read with
//! a row selection on just the row groups that hold them; each fetched row is
//! written as many times as it is unmatched, so the output is exactly what
//! `EXCEPT ALL` returns, in input order.

use std::fs::File;
use std::path::{Path, PathBuf};

use arrow::array::{Array, RecordBatch, UInt32Array};
use arrow::compute::take_record_batch;
use arrow::datatypes::DataType;
use arrow::util::display::{ArrayFormatter, FormatOptions};
use parquet::arrow::ArrowWriter;
use parquet::basic::{Compression, ZstdLevel};
use parquet::file::properties::WriterProperties;

use crate::encode::value_hashes;
use crate::error::{ReconError, Result};
use crate::input::{Fetcher, Table};
use crate::partition::ScanSide;
use crate::reconcile::{Reconciled, SampleRef, EVIDENCE_BYTES};
use crate::spill::SpillIndex;
use crate::tempspace;
use crate::Side;

/// Rows per output batch (and the most copies materialized at once).
const OUT_BATCH: usize = 64 * 1024;

/// A file written under a temporary name and renamed into place on commit, so
/// readers never see it half-written. Dropped uncommitted, it is removed.
pub struct AtomicFile {
    tmp: PathBuf,
    dest: PathBuf,
    committed: bool,
}

impl AtomicFile {
    pub fn create(dest: &Path) -> Result<(AtomicFile, File)> {
        let name = dest
            .file_name()
            .and_then(|n| n.to_str())
            .unwrap_or("output");
        let tmp = dest.with_file_name(format!(".{name}.recon-tmp-{}", std::process::id()));
        let file = File::create(&tmp).map_err(|e| ReconError::io(&tmp, e))?;
        tempspace::register(&tmp);
        Ok((
            AtomicFile {
                tmp,
                dest: dest.to_path_buf(),
                committed: false,
            },
            file,
        ))
    }

    pub fn commit(mut self) -> Result<()> {
        std::fs::rename(&self.tmp, &self.dest).map_err(|e| ReconError::io(&self.dest, e))?;
        tempspace::unregister(&self.tmp);
        self.committed = true;
        Ok(())
    }
}

impl Drop for AtomicFile {
    fn drop(&mut self) {
        if !self.committed {
            let _ = std::fs::remove_file(&self.tmp);
            tempspace::unregister(&self.tmp);
        }
    }
}

/// Writes `bytes` to `dest` atomically.
pub fn write_atomic(dest: &Path, bytes: &[u8]) -> Result<()> {
    use std::io::Write;
    let (af, mut file) = AtomicFile::create(dest)?;
    file.write_all(bytes)
        .and_then(|_| file.sync_all())
        .map_err(|e| ReconError::io(dest, e))?;
    af.commit()
}

/// Loads the (locator, excess) records of one range, sorted by locator.
fn load_range(index: &SpillIndex, key: u32) -> Result<Vec<(u64, u64)>> {
    let mut buf = Vec::new();
    let mut records = Vec::with_capacity(index.key_bytes(key) / EVIDENCE_BYTES);
    for chunk in index.chunks(key) {
        for rec in chunk.bytes(&mut buf)?.chunks_exact(EVIDENCE_BYTES) {
            let loc = u64::from_le_bytes(rec[..8].try_into().unwrap_or_default());
            let excess = u64::from_le_bytes(rec[8..].try_into().unwrap_or_default());
            records.push((loc, excess));
        }
    }
    records.sort_unstable();
    Ok(records)
}

/// What one pass over a side's unmatched rows produced.
pub struct EvidencePass {
    /// Rows written to the evidence file (0 without one).
    pub rows: u64,
    /// Per compared column: the wrapping sum over unmatched occurrences of a
    /// 64-bit hash of the (normalized) value's canonical encoding.
    pub column_sums: Vec<u64>,
}

/// Reads every unmatched occurrence of `side` once. With `dest`, writes them
/// to it as Parquet with the table's own schema (one row per occurrence,
/// exactly what `EXCEPT ALL` returns); always sums per-column value digests.
///
/// Why sums over unmatched rows name the drifting columns: a side's multiset
/// of rows is the matched rows plus its unmatched rows, and the matched rows
/// are the same on both sides. So a column's multiset of values differs
/// between the full tables exactly when it differs between the unmatched rows.
pub fn write_side(
    table: &Table,
    side: Side,
    found: &Reconciled,
    dest: Option<&Path>,
    scan: &ScanSide<'_>,
) -> Result<EvidencePass> {
    let mut out = match dest {
        None => None,
        Some(dest) => {
            let (af, file) = AtomicFile::create(dest)?;
            let props = WriterProperties::builder()
                .set_compression(Compression::ZSTD(ZstdLevel::default()))
                .set_max_row_group_row_count(Some(OUT_BATCH))
                // The writer buffers a row group in memory; bound it for wide rows too.
                .set_max_row_group_bytes(Some(8 << 20))
                .build();
            let writer = ArrowWriter::try_new(file, table.schema.clone(), Some(props))
                .map_err(|e| ReconError::parquet(dest, e))?;
            Some((af, writer, dest))
        }
    };
    let mut pass = EvidencePass {
        rows: 0,
        column_sums: vec![0; scan.columns.len()],
    };
    if found.stats[side.index()].rows == 0 && out.is_none() {
        return Ok(pass);
    }
    let mut hashes = Vec::new();
    let mut fetcher = Fetcher::default();
    for range in 0..found.ranges {
        let key = (side.index() * found.ranges + range) as u32;
        let records = load_range(&found.evidence, key)?;
        if records.is_empty() {
            continue;
        }
        let locators: Vec<u64> = records.iter().map(|r| r.0).collect();
        let mut next = 0usize; // index in `records` of the batch's first row
        table.fetch(&mut fetcher, &locators, |batch| {
            let first = next;
            next += batch.num_rows();
            let copies = first..next;
            for (k, (&col, prep)) in scan.columns.iter().zip(&scan.prep).enumerate() {
                let arr = prep.apply(batch.column(col)).map_err(|refused| {
                    let m = refused.into_iter().next().map(|r| r.1).unwrap_or_default();
                    ReconError::input(&table.path, m)
                })?;
                hashes.clear();
                value_hashes(&arr, &mut hashes).map_err(|m| ReconError::input(&table.path, m))?;
                for (h, i) in hashes.iter().zip(copies.clone()) {
                    let weighted = h.wrapping_mul(records[i].1);
                    pass.column_sums[k] = pass.column_sums[k].wrapping_add(weighted);
                }
            }
            let Some((_, writer, dest)) = out.as_mut() else {
                return Ok(());
            };
            let mut take: Vec<u32> = Vec::with_capacity(OUT_BATCH);
            for (k, i) in copies.enumerate() {
                for _ in 0..records[i].1 {
                    take.push(k as u32);
                    if take.len() == OUT_BATCH {
                        pass.rows += flush(writer, &batch, &mut take, dest)?;
                    }
                }
            }
            pass.rows += flush(writer, &batch, &mut take, dest)?;
            Ok(())
        })?;
        if next != records.len() {
            return Err(ReconError::Internal(format!(
                "{}: fetched {next} of {} unmatched rows",
                table.path.display(),
                records.len()
            )));
        }
    }
    if let Some((af, writer, dest)) = out {
        // Never publish a short evidence file: every unmatched occurrence must be there.
        let expected = found.stats[side.index()].rows;
        if pass.rows != expected {
            return Err(ReconError::Internal(format!(
                "{}: wrote {} evidence rows, expected {expected}",
                dest.display(),
                pass.rows
            )));
        }
        writer.close().map_err(|e| ReconError::parquet(dest, e))?;
        af.commit()?;
    }
    Ok(pass)
}

fn flush(
    writer: &mut ArrowWriter<File>,
    batch: &RecordBatch,
    take: &mut Vec<u32>,
    dest: &Path,
) -> Result<u64> {
    if take.is_empty() {
        return Ok(0);
    }
    let indices = UInt32Array::from(std::mem::take(take));
    let out = take_record_batch(batch, &indices).map_err(|e| ReconError::arrow(dest, e))?;
    writer
        .write(&out)
        .map_err(|e| ReconError::parquet(dest, e))?;
    Ok(indices.len() as u64)
}

/// One sample row: its values rendered as text (None is NULL) and its counts.
#[derive(Debug, Clone, serde::Serialize)]
pub struct SampleRow {
    pub source_count: u64,
    pub target_count: u64,
    pub values: Vec<Option<String>>,
}

/// Renders `value` for people: strings are quoted so '' and ' ' are visible.
pub fn display_value(v: &Option<String>, quoted: bool) -> String {
    match v {
        None => "NULL".into(),
        Some(s) if quoted => format!("{s:?}"),
        Some(s) => s.clone(),
    }
}

/// Whether a column's values should be quoted when shown.
pub fn is_text(dt: &DataType) -> bool {
    match dt {
        DataType::Utf8 | DataType::LargeUtf8 | DataType::Utf8View => true,
        DataType::Dictionary(_, v) => is_text(v),
        _ => false,
    }
}

/// One value as text. A timestamp outside the calendar range Arrow can
/// print (e.g. year 290000, which Spark can write) is shown as its raw count.
fn render(column: &arrow::array::ArrayRef, fmt: &ArrayFormatter<'_>, row: usize) -> String {
    use arrow::array::AsArray;
    use arrow::datatypes::*;
    if let Ok(text) = fmt.value(row).try_to_string() {
        return text;
    }
    let raw = match column.data_type() {
        DataType::Timestamp(TimeUnit::Second, _) => {
            Some((column.as_primitive::<TimestampSecondType>().value(row), "s"))
        }
        DataType::Timestamp(TimeUnit::Millisecond, _) => Some((
            column.as_primitive::<TimestampMillisecondType>().value(row),
            "ms",
        )),
        DataType::Timestamp(TimeUnit::Microsecond, _) => Some((
            column.as_primitive::<TimestampMicrosecondType>().value(row),
            "µs",
        )),
        DataType::Timestamp(TimeUnit::Nanosecond, _) => Some((
            column.as_primitive::<TimestampNanosecondType>().value(row),
            "ns",
        )),
        _ => None,
    };
    match raw {
        Some((v, unit)) => format!("{v} {unit} from 1970-01-01T00:00:00"),
        None => fmt.value(row).to_string(),
    }
}

/// Fetches and renders the sample rows of one side.
pub fn fetch_samples(table: &Table, samples: &[SampleRef]) -> Result<Vec<SampleRow>> {
    let mut order: Vec<usize> = (0..samples.len()).collect();
    order.sort_by_key(|&i| samples[i].locator);
    let locators: Vec<u64> = order.iter().map(|&i| samples[i].locator).collect();
    let mut rendered: Vec<Option<Vec<Option<String>>>> = vec![None; samples.len()];
    // Unsafe formatting reports a value it cannot print (a timestamp beyond
    // the years chrono knows) as an error, so [`render`] can fall back.
    let opts = FormatOptions::default().with_display_error(false);
    let mut next = 0usize;
    table.fetch(&mut Fetcher::default(), &locators, |batch| {
        let formatters = batch
            .columns()
            .iter()
            .map(|c| ArrayFormatter::try_new(c.as_ref(), &opts))
            .collect::<std::result::Result<Vec<_>, _>>()
            .map_err(|e| ReconError::arrow(&table.path, e))?;
        for r in 0..batch.num_rows() {
            let values = batch
                .columns()
                .iter()
                .zip(&formatters)
                .map(|(c, fmt)| (!c.is_null(r)).then(|| render(c, fmt, r)))
                .collect();
            if let Some(slot) = order.get(next).and_then(|&i| rendered.get_mut(i)) {
                *slot = Some(values);
            }
            next += 1;
        }
        Ok(())
    })?;
    samples
        .iter()
        .zip(rendered)
        .map(|(s, values)| {
            Ok(SampleRow {
                source_count: s.source_count,
                target_count: s.target_count,
                values: values
                    .ok_or_else(|| ReconError::Internal("sample row not fetched".into()))?,
            })
        })
        .collect()
}
