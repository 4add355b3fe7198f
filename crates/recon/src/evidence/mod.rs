//! Evidence: fetch the unmatched rows back from the inputs by locator.
//!
//! Reconciliation leaves, per side, (locator, excess copies) records grouped
//! in locator ranges. Each range is loaded, sorted, and its rows are read with
//! a row selection on just the row groups that hold them; each fetched row is
//! written as many times as it is unmatched, so the output is exactly what
//! `EXCEPT ALL` returns, in input order.

pub(crate) mod output;

use std::fs::File;
use std::path::Path;

use arrow::array::{Array, RecordBatch, UInt32Array};
use arrow::compute::take_record_batch;
use arrow::util::display::{ArrayFormatter, FormatOptions};
use parquet::arrow::ArrowWriter;
use parquet::basic::{Compression, ZstdLevel};
use parquet::file::properties::WriterProperties;

pub(crate) use output::{write_atomic, AtomicFile};

use crate::engine::record::{Evidence, EVIDENCE_BYTES};
use crate::engine::scan::ScanSide;
use crate::engine::spill::SpillIndex;
use crate::error::{ReconError, Result};
use crate::input::{Fetcher, Table};
use crate::side::Side;

/// Rows per output batch (and the most copies materialized at once).
const OUT_BATCH: usize = 64 * 1024;

/// Runs `pass` for the source and for the target: on two threads when
/// `parallel`, else one after the other. Each side's evidence is its own
/// file, read from its own input, so the two passes share nothing; with
/// every row unmatched, writing the files is most of a run's time (encoding
/// and compressing Parquet is single-threaded per file). The source's error
/// wins when both fail, so the message does not depend on timing.
pub(crate) fn for_both_sides<T, F>(parallel: bool, pass: F) -> Result<[T; 2]>
where
    T: Send,
    F: Fn(Side) -> Result<T> + Sync,
{
    if !parallel {
        return Ok([pass(Side::Source)?, pass(Side::Target)?]);
    }
    let pass = &pass;
    let (source, target) = std::thread::scope(|scope| {
        let target = scope.spawn(move || pass(Side::Target));
        let source = pass(Side::Source);
        (source, target.join())
    });
    let target = match target {
        Ok(result) => result,
        Err(panic) => std::panic::resume_unwind(panic),
    };
    Ok([source?, target?])
}

/// Loads the (locator, excess) records of one range, sorted by locator.
fn load_range(index: &SpillIndex, key: u32) -> Result<Vec<(u64, u64)>> {
    let mut buf = Vec::new();
    let mut records = Vec::with_capacity(index.key_bytes(key) / EVIDENCE_BYTES);
    for chunk in index.chunks(key) {
        Evidence::decode_all(chunk.bytes(&mut buf)?, &mut records)?;
    }
    records.sort_unstable();
    Ok(records)
}

/// What one pass over a side's unmatched rows produced.
pub(crate) struct EvidencePass {
    /// Rows written to the evidence file (0 without one).
    pub rows: u64,
    /// Per compared column, over the unmatched occurrences: the count of
    /// non-NULL values and the sum of their 128-bit value digests mod 2^128
    /// (the multiset digest a fingerprint holds per column).
    pub column_digests: Vec<(u64, u128)>,
    /// With `Wants::by`: unmatched occurrences per value of that column.
    pub by_group: std::collections::BTreeMap<Option<String>, u64>,
    /// With `collect`: every distinct unmatched row, unless there were more
    /// than asked for.
    pub distinct: Option<Vec<UnmatchedRow>>,
}

/// What a pass over the unmatched rows collects besides the evidence file.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Wants {
    /// Keep each distinct unmatched row's value digests when there are at
    /// most this many (0: never).
    pub collect: usize,
    /// Count unmatched occurrences per value of this compared column.
    pub by: Option<usize>,
}

/// One distinct unmatched row and its per-column value digests.
#[derive(Debug, Clone)]
pub(crate) struct UnmatchedRow {
    pub locator: u64,
    /// Unmatched occurrences.
    pub excess: u64,
    /// Per compared column, the 128-bit value digest (docs/encoding.md).
    pub digests: Vec<u128>,
}

/// Reads every unmatched occurrence of `side` once. With `dest`, writes them
/// to it as Parquet with the table's own schema (one row per occurrence,
/// exactly what `EXCEPT ALL` returns); always sums per-column value digests.
///
/// Why sums over unmatched rows name the drifting columns: a side's multiset
/// of rows is the matched rows plus its unmatched rows, and the matched rows
/// are the same on both sides. So a column's multiset of values differs
/// between the full tables exactly when it differs between the unmatched rows.
///
/// `evidence` holds (locator, excess) records under key `side * ranges +
/// range`; `expected` is the unmatched occurrences they add up to, which an
/// evidence file must hold exactly. `wants` asks for the distinct rows'
/// digests and a breakdown by a column.
#[allow(clippy::too_many_arguments)]
pub(crate) fn write_side(
    table: &Table,
    side: Side,
    evidence: &SpillIndex,
    ranges: usize,
    expected: u64,
    dest: Option<&Path>,
    scan: &ScanSide<'_>,
    wants: &Wants,
) -> Result<EvidencePass> {
    let mut out = match dest {
        None => None,
        Some(dest) => {
            let (af, writer) = rows_writer(dest, table)?;
            Some((af, writer, dest))
        }
    };
    let distinct_records: usize = (0..ranges)
        .map(|r| evidence.key_bytes((side.index() * ranges + r) as u32) / EVIDENCE_BYTES)
        .sum();
    let mut pass = EvidencePass {
        rows: 0,
        column_digests: vec![(0, 0); scan.columns.len()],
        by_group: Default::default(),
        distinct: (wants.collect > 0 && distinct_records <= wants.collect).then(Vec::new),
    };
    let mut encoder = crate::digest::RowEncoder::new();
    let (mut row_digests, mut per_column) = (Vec::new(), Vec::new());
    let any = (0..ranges).any(|r| evidence.key_bytes((side.index() * ranges + r) as u32) > 0);
    if !any && out.is_none() {
        return Ok(pass);
    }
    let null = crate::digest::null_digest();
    let mut fetcher = Fetcher::default();
    for range in 0..ranges {
        let key = (side.index() * ranges + range) as u32;
        let records = load_range(evidence, key)?;
        if records.is_empty() {
            continue;
        }
        let locators: Vec<u64> = records.iter().map(|r| r.0).collect();
        let mut next = 0usize; // index in `records` of the batch's first row
        table.fetch(&mut fetcher, &locators, |batch| {
            let first = next;
            next += batch.num_rows();
            let copies = first..next;
            let prepared = scan.prepare_fetched(&batch)?;
            row_digests.clear();
            per_column.clear();
            encoder
                .digests_with_columns(&prepared, &mut row_digests, Some(&mut per_column))
                .map_err(|m| ReconError::input(&table.path, m))?;
            for (acc, values) in pass.column_digests.iter_mut().zip(&per_column) {
                for (&v, i) in values.iter().zip(copies.clone()) {
                    if v != null {
                        let excess = records[i].1;
                        acc.0 += excess;
                        acc.1 = acc.1.wrapping_add(v.wrapping_mul(excess as u128));
                    }
                }
            }
            if let Some(b) = wants.by {
                // The compared (normalized) value, so rows a diff treats
                // as one group are one group here.
                let text = render_column(&prepared[b])?;
                for (t, i) in text.into_iter().zip(copies.clone()) {
                    *pass.by_group.entry(t).or_default() += records[i].1;
                }
            }
            if let Some(rows) = pass.distinct.as_mut() {
                for (j, i) in copies.clone().enumerate() {
                    rows.push(UnmatchedRow {
                        locator: records[i].0,
                        excess: records[i].1,
                        digests: per_column.iter().map(|c: &Vec<u128>| c[j]).collect(),
                    });
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

/// A Parquet file of rows of `table`, with its own schema, written
/// through an [`AtomicFile`] (published only when committed).
pub(crate) fn rows_writer(dest: &Path, table: &Table) -> Result<(AtomicFile, ArrowWriter<File>)> {
    let (af, file) = AtomicFile::create(dest)?;
    let props = WriterProperties::builder()
        .set_compression(Compression::ZSTD(ZstdLevel::default()))
        .set_max_row_group_row_count(Some(OUT_BATCH))
        // The writer buffers a row group in memory; bound it for wide rows too.
        .set_max_row_group_bytes(Some(8 << 20))
        // Plain pages: every row group would build its own dictionaries
        // (hashing every value) for rows that are mostly distinct; with
        // zstd on top, the 10M-row all-different pair's evidence was 0.66x
        // the time and 0.87x the bytes without them (docs/performance.md).
        .set_dictionary_enabled(false)
        .build();
    let writer = ArrowWriter::try_new(file, table.schema.clone(), Some(props))
        .map_err(|e| ReconError::parquet(dest, e))?;
    Ok((af, writer))
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

/// One value as text. A timestamp outside the calendar range Arrow can
/// print (e.g. year 290000, which Spark can write) is shown as its raw count.
fn render(column: &arrow::array::ArrayRef, fmt: &ArrayFormatter<'_>, row: usize) -> String {
    use arrow::array::AsArray;
    use arrow::datatypes::*;
    if let Ok(text) = fmt.value(row).try_to_string() {
        return text;
    }
    let raw = match column.data_type() {
        DataType::Timestamp(unit, _) => {
            let v = match unit {
                TimeUnit::Second => column.as_primitive::<TimestampSecondType>().value(row),
                TimeUnit::Millisecond => {
                    column.as_primitive::<TimestampMillisecondType>().value(row)
                }
                TimeUnit::Microsecond => {
                    column.as_primitive::<TimestampMicrosecondType>().value(row)
                }
                TimeUnit::Nanosecond => column.as_primitive::<TimestampNanosecondType>().value(row),
            };
            Some((v, crate::units::symbol(*unit)))
        }
        _ => None,
    };
    match raw {
        Some((v, unit)) => format!("{v} {unit} from 1970-01-01T00:00:00"),
        None => fmt.value(row).to_string(),
    }
}

/// Renders every value of `column` as text (None is NULL), as samples show them.
pub(crate) fn render_column(column: &arrow::array::ArrayRef) -> Result<Vec<Option<String>>> {
    let opts = FormatOptions::default().with_display_error(false);
    let fmt = ArrayFormatter::try_new(column.as_ref(), &opts)
        .map_err(|e| ReconError::Internal(format!("cannot display {}: {e}", column.data_type())))?;
    Ok((0..column.len())
        .map(|r| (!column.is_null(r)).then(|| render(column, &fmt, r)))
        .collect())
}

/// Fetches the rows at `locators` (any order) and renders their values as
/// text (None is NULL), in the order given.
pub(crate) fn fetch_samples(table: &Table, locators: &[u64]) -> Result<Vec<Vec<Option<String>>>> {
    let mut order: Vec<usize> = (0..locators.len()).collect();
    order.sort_by_key(|&i| locators[i]);
    let sorted: Vec<u64> = order.iter().map(|&i| locators[i]).collect();
    let mut rendered: Vec<Option<Vec<Option<String>>>> = vec![None; locators.len()];
    // Unsafe formatting reports a value it cannot print (a timestamp beyond
    // the years chrono knows) as an error, so [`render`] can fall back.
    let opts = FormatOptions::default().with_display_error(false);
    let mut next = 0usize;
    table.fetch(&mut Fetcher::default(), &sorted, |batch| {
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
    rendered
        .into_iter()
        .map(|v| v.ok_or_else(|| ReconError::Internal("sample row not fetched".into())))
        .collect()
}
