//! What the CLI reads from the unmatched rows besides their counts, for an
//! engine that holds those rows: the `--by` breakdown and the pairing of
//! changed rows. The engine hands the rows over as batches of a side's
//! columns; recon prepares, digests and renders them as its own evidence
//! pass does, so the text and the pairs are the CLI's.

use std::collections::BTreeMap;

use arrow::array::{RecordBatch, UInt32Array};
use arrow::compute::take_record_batch;

use super::digester::SideDigester;
use super::plan::DistributedPlan;
use crate::error::{ReconError, Result};
use crate::evidence::{render_column, UnmatchedRow};
use crate::modes::multiset::pairing;
pub use crate::modes::multiset::pairing::PAIR_MOST;
use crate::report::{ByGroupReport, GroupCount, PairsReport};
use crate::side::Side;

/// Each row's value of the compared column at `by` (plan order) as the
/// CLI's `--by` groups it: the value after the plan's conversions and
/// rules, as text (None: NULL).
pub fn by_values(
    digester: &mut SideDigester,
    batch: &RecordBatch,
    by: usize,
) -> Result<Vec<Option<String>>> {
    digester.prepare(batch)?;
    let column = digester
        .arrays
        .get(by)
        .ok_or_else(|| ReconError::Internal(format!("no compared column {by}")))?;
    render_column(column)
}

/// The `--by` report of the column `column` from each side's (value,
/// unmatched occurrences) groups, in any order and possibly repeated (an
/// engine's groups of values that render alike): summed per value and
/// listed in value order, as the CLI lists them.
pub fn by_group(column: &str, groups: [Vec<(Option<String>, u64)>; 2]) -> ByGroupReport {
    let mut sums: BTreeMap<Option<String>, [u64; 2]> = BTreeMap::new();
    for (side, groups) in groups.into_iter().enumerate() {
        for (value, n) in groups {
            sums.entry(value).or_default()[side] += n;
        }
    }
    ByGroupReport {
        column: column.to_string(),
        groups: sums
            .into_iter()
            .filter(|(_, [s, t])| s + t > 0)
            .map(|(value, [source_only, target_only])| GroupCount {
                value,
                source_only,
                target_only,
            })
            .collect(),
    }
}

/// The CLI's pairing of changed rows, from each side's distinct unmatched
/// rows: `rows[side]` is a batch of that side's columns (the table's, in
/// its schema's order) and each row's unmatched occurrences. `sample`
/// pairs are shown. None when a side has no unmatched row; the caller
/// reports [`pairing_skipped`] instead when a side has more than
/// [`PAIR_MOST`] distinct unmatched rows.
pub fn pairs(
    plan: &DistributedPlan,
    rows: [(&RecordBatch, &[u64]); 2],
    sample: usize,
) -> Result<Option<PairsReport>> {
    if rows.iter().any(|(batch, _)| batch.num_rows() == 0) {
        return Ok(None);
    }
    let mut digesters = [Side::Source, Side::Target].map(|side| plan.digester(side));
    let mut unmatched: [Vec<UnmatchedRow>; 2] = Default::default();
    for ((d, (batch, excess)), out) in digesters.iter_mut().zip(rows).zip(&mut unmatched) {
        if excess.len() != batch.num_rows() {
            return Err(ReconError::Internal(
                "unmatched rows and their counts differ in number".into(),
            ));
        }
        d.digest(batch, true)?;
        *out = (0..batch.num_rows())
            .map(|r| UnmatchedRow {
                locator: r as u64,
                excess: excess[r],
                digests: d.values.iter().map(|c| c[r]).collect(),
            })
            .collect();
    }
    let names: Vec<String> = plan
        .plan
        .columns
        .iter()
        .map(|c| c.source_name.clone())
        .collect();
    let found = pairing::pair(&unmatched[0], &unmatched[1], names.len());
    let columns = [
        digesters[0].columns.as_slice(),
        digesters[1].columns.as_slice(),
    ];
    let report = pairing::report(
        &names,
        [&unmatched[0], &unmatched[1]],
        &found,
        sample,
        columns,
        |side, shown| {
            // Only the shown rows are rendered, as samples show them.
            let (batch, _) = rows[side.index()];
            let at = UInt32Array::from_iter_values(shown.iter().map(|&r| r as u32));
            let shown = take_record_batch(batch, &at)
                .map_err(|e| ReconError::Internal(format!("taking sample rows: {e}")))?;
            let text = shown
                .columns()
                .iter()
                .map(render_column)
                .collect::<Result<Vec<_>>>()?;
            Ok((0..shown.num_rows())
                .map(|r| text.iter().map(|c| c[r].clone()).collect())
                .collect())
        },
    )?;
    Ok(Some(report))
}

/// The pairing report when a side had more distinct unmatched rows than
/// the CLI pairs.
pub fn pairing_skipped() -> PairsReport {
    pairing::skipped()
}
