//! The changed keys' values, fetched back by locator, both sides together:
//! `changed.parquet`, the side-by-side samples, and each numeric column's
//! largest absolute difference.
//!
//! Changed keys are grouped by their source row's locator range. Each range
//! is cut into chunks of at most `chunk_pairs` keys; a chunk's source rows
//! are read in source order and its target rows in target order, then put
//! side by side. A chunk holds its two sides' rows in memory, which bounds
//! memory; a very large number of changed keys costs one read of the target
//! row groups per chunk.

use std::collections::HashSet;
use std::path::Path;
use std::sync::Arc;

use arrow::array::{ArrayRef, BooleanArray, ListBuilder, RecordBatch, StringBuilder, UInt32Array};
use arrow::compute::{concat_batches, nullif, take_record_batch};
use arrow::datatypes::{DataType, Field, Schema, SchemaRef};
use parquet::arrow::ArrowWriter;
use parquet::basic::{Compression, ZstdLevel};
use parquet::file::properties::WriterProperties;

use super::matcher::{ChangedPair, KeyedFound};
use super::numbers::{is_numeric_class, numbers, MaxDiff, Num};
use super::sink::KeyedShape;
use crate::config::DiffColumns;
use crate::engine::scan::ScanSide;
use crate::error::{ReconError, Result};
use crate::evidence::{render_column, AtomicFile};
use crate::input::{Fetcher, Table};
use crate::plan::ComparePlan;
use crate::report::{ChangedSample, ChangedValue};

/// What the changed-keys pass produced.
pub(crate) struct ChangedResult {
    /// Rows written to changed.parquet (None without an output).
    pub written: Option<u64>,
    pub samples: Vec<ChangedSample>,
    /// Per value column: the largest absolute difference (numeric columns).
    pub max_diff: Vec<Option<Num>>,
}

/// Everything the changed-keys pass reads.
pub(crate) struct ChangedInputs<'a> {
    pub sides: &'a [ScanSide<'a>; 2],
    pub plan: &'a ComparePlan,
    pub shape: &'a KeyedShape,
    pub found: &'a KeyedFound,
    pub ranges: usize,
    pub sample: usize,
    pub diff_columns: DiffColumns,
    pub chunk_pairs: usize,
}

fn load_pairs(
    found: &KeyedFound,
    ranges: usize,
    range: usize,
    bytes: usize,
) -> Result<Vec<ChangedPair>> {
    let key = KeyedFound::pair_key(ranges, range);
    let mut buf = Vec::new();
    let mut out = Vec::new();
    for chunk in found.index.chunks(key) {
        let data = chunk.bytes(&mut buf)?;
        if !data.len().is_multiple_of(bytes) {
            return Err(ReconError::Internal(format!(
                "a changed-key chunk of {} bytes is not a whole number of {bytes}-byte records",
                data.len()
            )));
        }
        out.extend(data.chunks_exact(bytes).map(ChangedPair::decode));
    }
    Ok(out)
}

/// The output schema: key columns, `changed_columns`, then `source_<col>`
/// and `target_<col>` per compared value column.
fn schema(inp: &ChangedInputs<'_>) -> SchemaRef {
    let mut fields = Vec::new();
    for &k in &inp.shape.key {
        let c = &inp.plan.columns[k];
        fields.push(Field::new(
            c.source_name.clone(),
            c.source_field.data_type().clone(),
            true,
        ));
    }
    fields.push(Field::new(
        "changed_columns",
        DataType::List(Arc::new(Field::new("item", DataType::Utf8, true))),
        false,
    ));
    for &v in &inp.shape.values {
        let c = &inp.plan.columns[v];
        fields.push(Field::new(
            format!("source_{}", c.source_name),
            c.source_field.data_type().clone(),
            true,
        ));
        fields.push(Field::new(
            format!("target_{}", c.source_name),
            c.target_field.data_type().clone(),
            true,
        ));
    }
    Arc::new(Schema::new(fields))
}

/// Fetches the rows at `locators` (sorted, unique) as one batch.
fn fetch_rows(table: &Table, locators: &[u64]) -> Result<RecordBatch> {
    let mut batches = Vec::new();
    table.fetch(&mut Fetcher::default(), locators, |b| {
        batches.push(b);
        Ok(())
    })?;
    let batch =
        concat_batches(&table.schema, &batches).map_err(|e| ReconError::arrow(&table.path, e))?;
    if batch.num_rows() != locators.len() {
        return Err(ReconError::Internal(format!(
            "{}: fetched {} of {} changed rows",
            table.path.display(),
            batch.num_rows(),
            locators.len()
        )));
    }
    Ok(batch)
}

/// Reads every changed key's two rows once; writes `dest` if given.
pub(crate) fn changed_stage(inp: &ChangedInputs<'_>, dest: Option<&Path>) -> Result<ChangedResult> {
    let bytes = super::matcher::pair_bytes(inp.shape.values.len());
    let expected = inp.found.counts.value_mismatch;
    // The samples: the changed keys with the smallest key digests, a choice
    // that does not depend on row order, file splits or threads.
    let mut smallest: Vec<u128> = Vec::new();
    if inp.sample > 0 {
        for range in 0..inp.ranges {
            smallest.extend(
                load_pairs(inp.found, inp.ranges, range, bytes)?
                    .iter()
                    .map(|p| p.key),
            );
            smallest.sort_unstable();
            smallest.truncate(inp.sample);
        }
    }
    let wanted: HashSet<u128> = smallest.iter().copied().collect();
    let schema = schema(inp);
    let mut out = match dest {
        Some(dest) => {
            let (af, file) = AtomicFile::create(dest)?;
            let props = WriterProperties::builder()
                .set_compression(Compression::ZSTD(ZstdLevel::default()))
                .set_max_row_group_bytes(Some(8 << 20))
                .build();
            let writer = ArrowWriter::try_new(file, schema.clone(), Some(props))
                .map_err(|e| ReconError::parquet(dest, e))?;
            Some((af, writer, dest))
        }
        None => None,
    };
    let numeric: Vec<bool> = inp
        .shape
        .values
        .iter()
        .map(|&v| is_numeric_class(&inp.plan.columns[v].class()))
        .collect();
    let mut max_diff = vec![MaxDiff::default(); inp.shape.values.len()];
    let mut samples: Vec<ChangedSample> = Vec::new();
    let mut written = 0u64;
    let any_numeric = numeric.iter().any(|n| *n);
    for range in 0..inp.ranges {
        let mut pairs = load_pairs(inp.found, inp.ranges, range, bytes)?;
        if pairs.is_empty() {
            continue;
        }
        if out.is_none() && !any_numeric && !pairs.iter().any(|p| wanted.contains(&p.key)) {
            continue;
        }
        pairs.sort_unstable_by_key(|p| p.source);
        for chunk in pairs.chunks(inp.chunk_pairs.max(1)) {
            let batch = side_by_side(
                inp,
                chunk,
                &schema,
                &numeric,
                &mut max_diff,
                &wanted,
                &mut samples,
            )?;
            if let Some((_, writer, dest)) = out.as_mut() {
                writer
                    .write(&batch)
                    .map_err(|e| ReconError::parquet(dest, e))?;
                written += batch.num_rows() as u64;
            }
        }
    }
    if let Some((af, writer, dest)) = out {
        if written != expected {
            return Err(ReconError::Internal(format!(
                "{}: wrote {written} changed keys, expected {expected}",
                dest.display()
            )));
        }
        writer.close().map_err(|e| ReconError::parquet(dest, e))?;
        af.commit()?;
    }
    // Shown in source order.
    samples.sort_by_key(|s| s.order);
    Ok(ChangedResult {
        written: dest.map(|_| written),
        samples,
        max_diff: max_diff.iter().map(|m| m.get()).collect(),
    })
}

/// One chunk of changed keys as an output batch (sorted by source locator).
#[allow(clippy::too_many_arguments)]
fn side_by_side(
    inp: &ChangedInputs<'_>,
    chunk: &[ChangedPair],
    schema: &SchemaRef,
    numeric: &[bool],
    max_diff: &mut [MaxDiff],
    wanted: &HashSet<u128>,
    samples: &mut Vec<ChangedSample>,
) -> Result<RecordBatch> {
    let [src, tgt] = inp.sides;
    let s_locs: Vec<u64> = chunk.iter().map(|p| p.source).collect();
    let source = fetch_rows(src.table, &s_locs)?;
    // Target rows are read in target order, then put in the chunk's order.
    let mut order: Vec<usize> = (0..chunk.len()).collect();
    order.sort_unstable_by_key(|&i| chunk[i].target);
    let t_locs: Vec<u64> = order.iter().map(|&i| chunk[i].target).collect();
    let sorted = fetch_rows(tgt.table, &t_locs)?;
    let mut rank = vec![0u32; chunk.len()];
    for (pos, &i) in order.iter().enumerate() {
        rank[i] = pos as u32;
    }
    let target = take_record_batch(&sorted, &UInt32Array::from(rank))
        .map_err(|e| ReconError::arrow(&tgt.table.path, e))?;

    let names: Vec<&str> = inp
        .shape
        .values
        .iter()
        .map(|&v| inp.plan.columns[v].source_name.as_str())
        .collect();
    let mut columns: Vec<ArrayRef> = Vec::new();
    for &k in &inp.shape.key {
        columns.push(source.column(inp.plan.columns[k].source_index).clone());
    }
    let mut list = ListBuilder::new(StringBuilder::new());
    for p in chunk {
        for (v, name) in names.iter().enumerate() {
            if p.changed(v) {
                list.values().append_value(name);
            }
        }
        list.append(true);
    }
    columns.push(Arc::new(list.finish()));
    let sample_rows: Vec<usize> = (0..chunk.len())
        .filter(|&i| wanted.contains(&chunk[i].key))
        .collect();
    let mut sample_values: Vec<Vec<ChangedValue>> = vec![Vec::new(); sample_rows.len()];
    for (v, &pos) in inp.shape.values.iter().enumerate() {
        let c = &inp.plan.columns[pos];
        let s_col = source.column(c.source_index).clone();
        let t_col = target.column(c.target_index).clone();
        let unchanged = BooleanArray::from(chunk.iter().map(|p| !p.changed(v)).collect::<Vec<_>>());
        if numeric[v] {
            let prep = |side: &ScanSide<'_>, col: &ArrayRef| -> Result<Option<Vec<Num>>> {
                let arr = side.prep[pos].apply(col).map_err(|r| side.refused(r))?;
                let mut nums = Vec::new();
                // A value beyond i128 (a huge Decimal256) has no exact
                // difference here: the column gets no max_abs_diff, and
                // the run goes on.
                Ok(numbers(&arr, &mut nums).is_ok().then_some(nums))
            };
            if let (Some(a), Some(b)) = (prep(src, &s_col)?, prep(tgt, &t_col)?) {
                for (i, p) in chunk.iter().enumerate() {
                    if p.changed(v) {
                        max_diff[v].add(a[i], b[i]);
                    }
                }
            }
        }
        if !sample_rows.is_empty() {
            let (sr, tr) = (render_column(&s_col)?, render_column(&t_col)?);
            for (k, &i) in sample_rows.iter().enumerate() {
                if chunk[i].changed(v) {
                    sample_values[k].push(ChangedValue {
                        column: names[v].to_string(),
                        source: sr[i].clone(),
                        target: tr[i].clone(),
                    });
                }
            }
        }
        let (s_out, t_out) = match inp.diff_columns {
            DiffColumns::All => (s_col, t_col),
            DiffColumns::Changed => (
                nullif(&s_col, &unchanged).map_err(|e| ReconError::arrow(&src.table.path, e))?,
                nullif(&t_col, &unchanged).map_err(|e| ReconError::arrow(&tgt.table.path, e))?,
            ),
        };
        columns.push(s_out);
        columns.push(t_out);
    }
    if !sample_rows.is_empty() {
        let key_text: Vec<Vec<Option<String>>> = inp
            .shape
            .key
            .iter()
            .map(|&k| render_column(source.column(inp.plan.columns[k].source_index)))
            .collect::<Result<_>>()?;
        for (k, &i) in sample_rows.iter().enumerate() {
            let key = inp
                .shape
                .key
                .iter()
                .zip(&key_text)
                .map(|(&kc, text)| {
                    let v = text[i]
                        .clone()
                        .map_or(serde_json::Value::Null, serde_json::Value::String);
                    (inp.plan.columns[kc].source_name.clone(), v)
                })
                .collect();
            samples.push(ChangedSample {
                order: chunk[i].source as u128,
                key,
                changed: std::mem::take(&mut sample_values[k]),
            });
        }
    }
    RecordBatch::try_new(schema.clone(), columns).map_err(|e| ReconError::arrow(&src.table.path, e))
}
