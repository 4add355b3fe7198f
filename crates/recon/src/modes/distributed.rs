//! The pieces of a diff and a fingerprint that a distributed engine runs
//! (Spark, through the Python package's `recon.spark`), so that a cluster
//! computes recon's digests and reaches recon's answer:
//!
//! - [`DistributedPlan`]: the comparison planned from the two tables'
//!   Arrow schemas on the driver, exactly as for local batches, and
//!   re-planned from the same schemas and settings on each worker;
//! - [`SideDigester`]: one side's row and column digests of a batch, after
//!   the plan's conversions and rules (the CLI's bits: docs/encoding.md);
//! - [`BucketSums`]: one partition's per-bucket fingerprints (pass 1);
//!   [`compare_buckets`] adds up every partition's on the driver, finds the
//!   differing buckets and decodes their single differences;
//! - [`Selector`]: which rows a second pass keeps (those of the decoded
//!   digests and of the buckets that did not decode);
//! - [`report`]: the diff's [`Report`], in the CLI's shape, from the counts
//!   and sample rows the engine computed.
//!
//! The engine moves rows; recon decides which, and what the answer is.

use std::collections::HashSet;
use std::path::Path;
use std::time::Duration;

use arrow::array::{ArrayRef, RecordBatch};
use arrow::datatypes::SchemaRef;

use super::fingerprint::{by_position, name_order, refuse_keyed, ColumnDigest};
use super::keyed;
use super::stages;
use crate::config::{AlignOptions, InputOptions, Thresholds};
use crate::digest::{null_digest, single_difference, DigestBuildHasher, Fingerprint, RowEncoder};
use crate::engine::scan::{prepare, refusal_error};
use crate::error::{ReconError, Result};
use crate::evidence::render_column;
use crate::input::{Source, Table};
use crate::plan::classes::ValueClass;
use crate::plan::{ComparePlan, Prep};
use crate::report::{
    DirectionStats, InputReport, Inputs, ParseErrorsReport, PhaseSeconds, Report, SampleReport,
    Samples, SecondPass, Settings,
};
use crate::side::Side;

/// Bucket bits of the fingerprint pass when the caller does not choose:
/// 4096 buckets keep each partition's record small (under 160 KiB) while
/// few drifting rows share a bucket.
pub const DEFAULT_BUCKET_BITS: u32 = 12;

/// A comparison planned from two tables' schemas.
pub struct DistributedPlan {
    pub plan: ComparePlan,
    tables: [Table; 2],
    /// Fingerprints: the position of the `--by` column.
    by: Option<usize>,
    /// Keyed diffs: the key columns' positions in the plan, in key order.
    key: Vec<usize>,
}

/// One table for planning: its name (for reports and messages) and the
/// Arrow schema its batches arrive in.
pub struct Described {
    pub name: String,
    pub schema: SchemaRef,
}

fn empty_source(t: &Described) -> Result<Source> {
    Source::batches(t.name.clone(), t.schema.clone(), Vec::new())
}

impl DistributedPlan {
    /// Plans a keyless diff of two tables from their schemas, as the
    /// library plans two in-memory tables (and refuses what it refuses).
    pub fn pair(source: &Described, target: &Described, align: &AlignOptions) -> Result<Self> {
        if align.key.is_some() || !align.tolerances.is_empty() {
            return Err(ReconError::Internal(
                "a keyed diff is planned with DistributedPlan::keyed".into(),
            ));
        }
        Self::planned(source, target, align)
    }

    /// Plans a keyed diff (`align.key`, tolerances allowed) of two tables.
    ///
    /// The engine groups and buckets rows by the key columns' own values,
    /// so those must be the values recon compares: a key column the plan
    /// converts or normalizes (a cast, trim, case or time-zone rule) is
    /// refused, as is a nested key column (the engine's hash of a struct
    /// does not know recon's equality of its fields). Other columns may be
    /// converted: recon's own keyed diff judges the kept rows.
    pub fn keyed(source: &Described, target: &Described, align: &AlignOptions) -> Result<Self> {
        if align.key.is_none() {
            return Err(ReconError::Internal("a keyed plan without a key".into()));
        }
        let mut planned = Self::planned(source, target, align)?;
        let shape = keyed::shape(&planned.plan, align).map_err(ReconError::Usage)?;
        let converted = planned.converted();
        for &i in &shape.key {
            let c = &planned.plan.columns[i];
            if converted.contains(&c.source_name) {
                return Err(ReconError::Usage(format!(
                    "key column {:?} is converted before it is compared (a cast, or a trim, case, rounding, empty-as-NULL or time-zone rule); on Spark the key is matched by its own values, so convert it in Spark first (for example with F.trim or .cast) and pass the converted column",
                    c.source_name
                )));
            }
            if matches!(
                c.class(),
                ValueClass::List(_) | ValueClass::Struct(_) | ValueClass::Map(..)
            ) {
                return Err(ReconError::Usage(format!(
                    "key column {:?} is nested ({}); on Spark a key is one or more scalar columns",
                    c.source_name,
                    c.source_field.data_type()
                )));
            }
        }
        planned.key = shape.key;
        Ok(planned)
    }

    fn planned(source: &Described, target: &Described, align: &AlignOptions) -> Result<Self> {
        let inputs = [InputOptions::default(), InputOptions::default()];
        let (src, tgt, plan) = stages::plan(
            &empty_source(source)?,
            &empty_source(target)?,
            align,
            &inputs,
            None,
        )?;
        Ok(DistributedPlan {
            plan,
            tables: [src, tgt],
            by: None,
            key: Vec::new(),
        })
    }

    /// Keyed diffs: the key columns of `side`, in key order.
    pub fn key(&self, side: Side) -> Vec<String> {
        self.key
            .iter()
            .map(|&i| {
                let c = &self.plan.columns[i];
                match side {
                    Side::Source => c.source_name.clone(),
                    Side::Target => c.target_name.clone(),
                }
            })
            .collect()
    }

    /// Plans the fingerprint of one table (columns in name order, as
    /// `recon fingerprint` does), optionally grouped by the column `by`.
    pub fn table(table: &Described, align: &AlignOptions, by: Option<&str>) -> Result<Self> {
        refuse_keyed(align)?;
        let inputs = [InputOptions::default(), InputOptions::default()];
        let source = empty_source(table)?;
        let (src, tgt, plan) = stages::plan(&source, &source, align, &inputs, None)?;
        let plan = name_order(plan);
        let by = by_position(&plan, by)?;
        Ok(DistributedPlan {
            plan,
            tables: [src, tgt],
            by,
            key: Vec::new(),
        })
    }

    /// Fingerprints: the position of the grouping column.
    pub fn by(&self) -> Option<usize> {
        self.by
    }

    /// The table's name on `side`.
    pub fn name(&self, side: Side) -> String {
        self.tables[side.index()].path.display().to_string()
    }

    /// Per side and table column, whether values are text (quoted in the
    /// text summary).
    pub fn quoted(&self) -> [Vec<bool>; 2] {
        self.tables.each_ref().map(stages::quoted_columns)
    }

    /// The compared columns (source names) whose values the plan converts
    /// or normalizes on either side before digesting. An engine that
    /// digests the values as they are (the JVM digest) cannot run such a
    /// plan.
    pub fn converted(&self) -> Vec<String> {
        let [source, target] = [Side::Source, Side::Target].map(|s| self.plan.preps(s));
        self.plan
            .columns
            .iter()
            .zip(source.iter().zip(&target))
            .filter(|(_, (s, t))| !s.is_noop() || !t.is_noop())
            .map(|(c, _)| c.source_name.clone())
            .collect()
    }

    /// A digester for `side`'s batches.
    pub fn digester(&self, side: Side) -> SideDigester {
        let table = &self.tables[side.index()];
        let columns = self.plan.indices(side);
        let classes = columns
            .iter()
            .map(|&i| ValueClass::of(table.schema.field(i).data_type()))
            .collect();
        SideDigester {
            name: table.path.display().to_string(),
            width: table.schema.fields().len(),
            columns,
            classes,
            prep: self.plan.preps(side),
            encoder: RowEncoder::new(),
            digests: Vec::new(),
            values: Vec::new(),
            arrays: Vec::new(),
        }
    }
}

/// Digests one side's batches as the CLI digests that side's rows.
pub struct SideDigester {
    name: String,
    /// Columns the planned schema has; each batch must have as many.
    width: usize,
    columns: Vec<usize>,
    /// The planned value class of each compared column: a batch whose
    /// column arrives in another class is refused, never digested.
    classes: Vec<ValueClass>,
    prep: Vec<Prep>,
    encoder: RowEncoder,
    /// The last batch's row digests.
    pub digests: Vec<u128>,
    /// The last batch's value digests per compared column (plan order),
    /// when asked for.
    pub values: Vec<Vec<u128>>,
    /// The last batch's compared columns after conversions and rules.
    pub arrays: Vec<ArrayRef>,
}

impl SideDigester {
    /// Digests `batch` (every column of the table, in its schema's order):
    /// fills `digests`, and with `per_column` also `values`.
    pub fn digest(&mut self, batch: &RecordBatch, per_column: bool) -> Result<()> {
        let path = Path::new(&self.name);
        if batch.num_columns() != self.width {
            return Err(ReconError::input(
                path,
                format!(
                    "a batch has {} columns, the planned schema {}",
                    batch.num_columns(),
                    self.width
                ),
            ));
        }
        let mut columns = Vec::with_capacity(self.columns.len());
        for (&i, class) in self.columns.iter().zip(&self.classes) {
            let array = batch.column(i);
            let arrived = ValueClass::of(array.data_type());
            if &arrived != class {
                return Err(ReconError::input(
                    path,
                    format!(
                        "column {:?} arrived as {} ({arrived:?}), planned as {class:?}",
                        batch.schema().field(i).name(),
                        array.data_type()
                    ),
                ));
            }
            columns.push(array.clone());
        }
        self.arrays = prepare(&self.prep, &columns).map_err(|r| refusal_error(path, r))?;
        self.digests.clear();
        for v in &mut self.values {
            v.clear();
        }
        self.encoder
            .digests_with_columns(
                &self.arrays,
                &mut self.digests,
                per_column.then_some(&mut self.values),
            )
            .map_err(|m| ReconError::input(path, m))
    }
}

/// The bucket of a digest among `1 << bits`: its top bits, as the CLI's
/// fingerprint pass chooses.
#[inline]
pub fn bucket_of(digest: u128, bits: u32) -> usize {
    (digest >> (128 - bits)) as usize
}

/// One partition's (or a whole side's) per-bucket fingerprints, with each
/// compared column's non-NULL count and value-digest sum.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BucketSums {
    bits: u32,
    buckets: Vec<Fingerprint>,
    columns: Vec<ColumnDigest>,
}

const SUMS_MAGIC: &[u8; 8] = b"reconBS1";

impl BucketSums {
    /// Empty sums over `1 << bits` buckets (1 ≤ bits ≤ 20) and `columns`
    /// compared columns.
    pub fn new(bits: u32, columns: usize) -> Result<BucketSums> {
        if !(1..=20).contains(&bits) {
            return Err(ReconError::Usage(format!(
                "buckets: 2^{bits} is out of range (2 to 2^20)"
            )));
        }
        Ok(BucketSums {
            bits,
            buckets: vec![Fingerprint::default(); 1 << bits],
            columns: vec![ColumnDigest::default(); columns],
        })
    }

    /// Adds the digests of the batch `d` last digested (with `per_column`),
    /// each row into its bucket: `buckets[row]` when the engine chose them
    /// (its own hash of the row, which lets it filter a second pass before
    /// digesting), else the digest's top bits ([`bucket_of`]).
    ///
    /// Any choice is exact: each bucket's fingerprint sums recon's digests,
    /// so buckets that all agree mean equal multisets of rows, and a row
    /// the two sides bucket differently only makes both buckets differ.
    pub fn add(&mut self, d: &SideDigester, buckets: Option<&[u32]>) -> Result<()> {
        match buckets {
            None => {
                for &x in &d.digests {
                    self.buckets[bucket_of(x, self.bits)].add(x);
                }
            }
            Some(buckets) => {
                if buckets.len() != d.digests.len() {
                    return Err(ReconError::Internal("a bucket per row is missing".into()));
                }
                for (&x, &b) in d.digests.iter().zip(buckets) {
                    let f = self.buckets.get_mut(b as usize).ok_or_else(|| {
                        ReconError::Internal(format!("bucket {b} is out of range"))
                    })?;
                    f.add(x);
                }
            }
        }
        let null = null_digest();
        for (col, values) in self.columns.iter_mut().zip(&d.values) {
            col.add_values(values, null);
        }
        Ok(())
    }

    pub fn merge(&mut self, o: &BucketSums) -> Result<()> {
        if o.bits != self.bits || o.columns.len() != self.columns.len() {
            return Err(ReconError::Internal(
                "bucket sums of different shapes".into(),
            ));
        }
        for (a, b) in self.buckets.iter_mut().zip(&o.buckets) {
            a.merge(b);
        }
        for (a, b) in self.columns.iter_mut().zip(&o.columns) {
            a.merge(b);
        }
        Ok(())
    }

    /// Rows added.
    pub fn rows(&self) -> u64 {
        self.buckets.iter().map(|f| f.count).sum()
    }

    /// Compact bytes to send to the driver: the non-empty buckets only.
    /// (Not persisted: the same wheel writes and reads them in one run.)
    pub fn to_bytes(&self) -> Vec<u8> {
        let used = self.buckets.iter().filter(|f| f.count > 0).count();
        let mut out = Vec::with_capacity(24 + self.columns.len() * 24 + used * 36);
        out.extend_from_slice(SUMS_MAGIC);
        out.extend_from_slice(&self.bits.to_le_bytes());
        out.extend_from_slice(&(self.columns.len() as u32).to_le_bytes());
        for c in &self.columns {
            out.extend_from_slice(&c.non_null.to_le_bytes());
            out.extend_from_slice(&c.sum.to_le_bytes());
        }
        for (i, f) in self.buckets.iter().enumerate().filter(|(_, f)| f.count > 0) {
            out.extend_from_slice(&(i as u32).to_le_bytes());
            out.extend_from_slice(&f.count.to_le_bytes());
            out.extend_from_slice(&f.sum.to_le_bytes());
            out.extend_from_slice(&f.mix.to_le_bytes());
        }
        out
    }

    pub fn from_bytes(bytes: &[u8]) -> Result<BucketSums> {
        let bad = || ReconError::Internal("bucket sums do not parse".into());
        let mut r = Reader(bytes);
        if r.take(8).ok_or_else(bad)? != SUMS_MAGIC {
            return Err(bad());
        }
        let bits = r.u32().ok_or_else(bad)?;
        let columns = r.u32().ok_or_else(bad)? as usize;
        let mut sums = BucketSums::new(bits, columns)?;
        for c in sums.columns.iter_mut() {
            c.non_null = r.u64().ok_or_else(bad)?;
            c.sum = r.u128().ok_or_else(bad)?;
        }
        while !r.0.is_empty() {
            let i = r.u32().ok_or_else(bad)? as usize;
            let f = sums.buckets.get_mut(i).ok_or_else(bad)?;
            f.count = r.u64().ok_or_else(bad)?;
            f.sum = r.u128().ok_or_else(bad)?;
            f.mix = r.u64().ok_or_else(bad)?;
        }
        Ok(sums)
    }
}

struct Reader<'a>(&'a [u8]);

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize) -> Option<&'a [u8]> {
        let (head, rest) = (self.0.get(..n)?, self.0.get(n..)?);
        self.0 = rest;
        Some(head)
    }
    fn u32(&mut self) -> Option<u32> {
        Some(u32::from_le_bytes(self.take(4)?.try_into().ok()?))
    }
    fn u64(&mut self) -> Option<u64> {
        Some(u64::from_le_bytes(self.take(8)?.try_into().ok()?))
    }
    fn u128(&mut self) -> Option<u128> {
        Some(u128::from_le_bytes(self.take(16)?.try_into().ok()?))
    }
}

/// What pass 1 found: the two sides' bucket fingerprints compared.
#[derive(Debug, Clone)]
pub struct BucketComparison {
    pub bits: u32,
    pub rows: [u64; 2],
    /// Buckets whose fingerprints differ, ascending.
    pub differing: Vec<u32>,
    /// Differing digests decoded from a bucket's two fingerprints, with
    /// their count difference (source − target).
    pub decoded: Vec<(u128, i64)>,
    /// Differing buckets that did not decode: every row of theirs goes to
    /// the second pass.
    pub undecoded: Vec<u32>,
    /// Compared columns (source names) whose multiset of values differs.
    pub differing_columns: Vec<String>,
}

impl BucketComparison {
    /// Every bucket agrees: the tables hold the same multiset of rows.
    pub fn all_agree(&self) -> bool {
        self.differing.is_empty()
    }

    /// Which rows the second pass keeps.
    pub fn selector(&self) -> Selector {
        let mut full = vec![false; 1 << self.bits];
        for &b in &self.undecoded {
            full[b as usize] = true;
        }
        Selector {
            bits: self.bits,
            full,
            digests: self.decoded.iter().map(|&(d, _)| d).collect(),
        }
    }

    /// A selector that keeps every row: a keyed second pass judges whole
    /// keys, so it needs every row the engine hands it, with its digest.
    pub fn keep_all(&self) -> Selector {
        Selector {
            bits: self.bits,
            full: vec![true; 1 << self.bits],
            digests: HashSet::default(),
        }
    }
}

/// Compares the two sides' added-up bucket sums.
pub fn compare_buckets(
    plan: &DistributedPlan,
    source: &BucketSums,
    target: &BucketSums,
) -> Result<BucketComparison> {
    if source.bits != target.bits {
        return Err(ReconError::Internal(
            "the sides were bucketed differently".into(),
        ));
    }
    let mut cmp = BucketComparison {
        bits: source.bits,
        rows: [source.rows(), target.rows()],
        differing: Vec::new(),
        decoded: Vec::new(),
        undecoded: Vec::new(),
        differing_columns: Vec::new(),
    };
    for (i, (s, t)) in source.buckets.iter().zip(&target.buckets).enumerate() {
        if s == t {
            continue;
        }
        cmp.differing.push(i as u32);
        match single_difference(s, t) {
            Some(d) => cmp.decoded.push(d),
            None => cmp.undecoded.push(i as u32),
        }
    }
    // A column's multiset of values differs between the tables exactly
    // when it differs between their unmatched rows (the matched rows are
    // the same on both sides), so whole-table sums name the drifting columns.
    for ((col, s), t) in plan
        .plan
        .columns
        .iter()
        .zip(&source.columns)
        .zip(&target.columns)
    {
        if s != t {
            cmp.differing_columns.push(col.source_name.clone());
        }
    }
    Ok(cmp)
}

/// Which rows of a side the second pass keeps: those whose digest was
/// decoded, and every row of a bucket that did not decode.
#[derive(Debug, Clone)]
pub struct Selector {
    bits: u32,
    full: Vec<bool>,
    digests: HashSet<u128, DigestBuildHasher>,
}

impl Selector {
    /// The positions of the rows of `digests` to keep; `buckets` as given
    /// to [`BucketSums::add`] in pass 1.
    pub fn select(&self, digests: &[u128], buckets: Option<&[u32]>) -> Result<Vec<u32>> {
        let bucket = |i: usize| -> Result<usize> {
            match buckets {
                None => Ok(bucket_of(digests[i], self.bits)),
                Some(b) => b
                    .get(i)
                    .map(|&b| b as usize)
                    .filter(|&b| b < self.full.len())
                    .ok_or_else(|| ReconError::Internal("a row's bucket is out of range".into())),
            }
        };
        let mut keep = Vec::new();
        for (i, d) in digests.iter().enumerate() {
            if self.full[bucket(i)?] || self.digests.contains(d) {
                keep.push(i as u32);
            }
        }
        Ok(keep)
    }

    pub fn to_bytes(&self) -> Vec<u8> {
        let mut out = Vec::new();
        out.extend_from_slice(&self.bits.to_le_bytes());
        let full: Vec<u32> = (0..self.full.len() as u32)
            .filter(|&b| self.full[b as usize])
            .collect();
        out.extend_from_slice(&(full.len() as u32).to_le_bytes());
        for b in full {
            out.extend_from_slice(&b.to_le_bytes());
        }
        for d in &self.digests {
            out.extend_from_slice(&d.to_le_bytes());
        }
        out
    }

    pub fn from_bytes(bytes: &[u8]) -> Result<Selector> {
        let bad = || ReconError::Internal("a row selector does not parse".into());
        let mut r = Reader(bytes);
        let bits = r.u32().ok_or_else(bad)?;
        if !(1..=20).contains(&bits) {
            return Err(bad());
        }
        let mut full = vec![false; 1 << bits];
        for _ in 0..r.u32().ok_or_else(bad)? {
            *full
                .get_mut(r.u32().ok_or_else(bad)? as usize)
                .ok_or_else(bad)? = true;
        }
        let mut digests = HashSet::default();
        while !r.0.is_empty() {
            digests.insert(r.u128().ok_or_else(bad)?);
        }
        Ok(Selector {
            bits,
            full,
            digests,
        })
    }
}

/// Sample rows of one side's unmatched rows, from a batch holding the
/// table's columns followed by the `source_count` and `target_count`
/// columns (int64).
pub fn samples(batch: &RecordBatch) -> Result<Vec<SampleReport>> {
    let n = batch.num_columns();
    if n < 2 {
        return Err(ReconError::Internal("sample rows without counts".into()));
    }
    let counts = |c: usize| -> Result<Vec<u64>> {
        let a = batch
            .column(c)
            .as_any()
            .downcast_ref::<arrow::array::Int64Array>()
            .ok_or_else(|| ReconError::Internal("sample counts are not int64".into()))?;
        Ok(a.values().iter().map(|&v| v.max(0) as u64).collect())
    };
    let (sc, tc) = (counts(n - 2)?, counts(n - 1)?);
    let names: Vec<String> = batch.schema().fields()[..n - 2]
        .iter()
        .map(|f| f.name().clone())
        .collect();
    let columns = (0..n - 2)
        .map(|c| render_column(batch.column(c)))
        .collect::<Result<Vec<_>>>()?;
    Ok((0..batch.num_rows())
        .map(|r| {
            let values = columns.iter().map(|c| c[r].clone()).collect();
            SampleReport::new(&names, values, sc[r], tc[r])
        })
        .collect())
}

/// What the engine computed besides pass 1, for the report.
pub struct Findings {
    /// Per direction (source only, target only): the unmatched counts.
    pub stats: [DirectionStats; 2],
    /// Per direction, up to `sample_limit` unmatched rows.
    pub samples: [Vec<SampleReport>; 2],
    pub sample_limit: usize,
    /// The engine's parallelism (reported as threads).
    pub threads: usize,
    /// Rows the second pass shuffled (None: no second pass).
    pub rows_shuffled: Option<u64>,
    /// Wall time of the fingerprint pass and of the rest.
    pub pass1: Duration,
    pub rest: Duration,
    /// What read the tables ("spark").
    pub engine: &'static str,
    /// Where the digests were computed ("jvm", "python"), for the report.
    pub digests: Option<&'static str>,
}

/// The diff's report in the CLI's shape.
pub fn report(plan: &DistributedPlan, cmp: &BucketComparison, found: Findings) -> Report {
    let input = |side: Side| InputReport {
        path: plan.name(side),
        format: found.engine.to_string(),
        files: 0,
        rows: cmp.rows[side.index()],
        dialect: None,
        snapshot: None,
        database: None,
        fetched: None,
    };
    let second_pass = found.rows_shuffled.map(|rows| SecondPass {
        strategy: if cmp.undecoded.is_empty() {
            "targeted"
        } else {
            "shuffle"
        },
        units_read: 0,
        units_total: 0,
        rows_read: Some(rows),
        decoded_digests: Some(cmp.decoded.len()),
        spilled_in_pass_1: None,
    });
    let settings = Settings {
        threads: found.threads,
        memory_limit_bytes: None,
        temp_dir: String::new(),
        buckets: 1 << cmp.bits,
        passes: if found.rows_shuffled.is_some() { 2 } else { 1 },
        fingerprint_buckets_differing: Some(cmp.differing.len()),
        second_pass,
        digests: found.digests,
    };
    let [source_only, target_only] = found.samples;
    let samples = Samples {
        limit: found.sample_limit,
        source_only,
        target_only,
    };
    let inputs = Inputs {
        source: input(Side::Source),
        target: input(Side::Target),
    };
    let (scan, rest) = (found.pass1.as_secs_f64(), found.rest.as_secs_f64());
    Report {
        elapsed_seconds: scan + rest,
        phase_seconds: PhaseSeconds {
            scan,
            reconcile: rest,
            evidence: 0.0,
        },
        ..Report::keyless(
            &plan.plan,
            found.stats,
            cmp.differing_columns.clone(),
            samples,
            inputs,
            ParseErrorsReport::default(),
            settings,
        )
    }
}

/// What the engine counted of a keyed diff outside the rows it kept.
///
/// The engine buckets rows by their key and keeps, for recon's own keyed
/// diff, the rows of the differing buckets and of a few duplicated keys
/// shown as samples. An agreeing bucket holds the same rows on both sides,
/// so each of its keys is either once on each side with equal rows
/// (matched), duplicated with as many equal copies on each side, or NULL;
/// grouping the source by key tells which.
pub struct KeyedRest {
    /// Rows of each side, every bucket (pass 1).
    pub rows: [u64; 2],
    /// Keys more than once on the source, in agreeing buckets, whose rows
    /// were not kept; and their source rows.
    pub duplicate_keys: u64,
    pub duplicate_rows: u64,
    /// Source rows with a NULL in the key, in agreeing buckets (the target
    /// holds as many, equal).
    pub null_key_rows: u64,
    /// Buckets of pass 1, and how many differed.
    pub buckets: usize,
    pub differing_buckets: usize,
    pub threads: usize,
    pub pass1: Duration,
    pub rest: Duration,
    pub engine: &'static str,
    pub digests: Option<&'static str>,
}

/// The keyed report of the whole tables: `kept`, recon's keyed diff of the
/// rows the engine kept, completed with the agreeing buckets' keys, then
/// judged against `thresholds` (ratios count every row).
pub fn complete_keyed(
    plan: &DistributedPlan,
    kept: &Report,
    rest: KeyedRest,
    thresholds: &Thresholds,
) -> Result<Report> {
    let changed = |what: String| {
        ReconError::input(
            plan.name(Side::Source),
            format!("the tables changed while recon read them: {what} (read a pinned snapshot, or cache the DataFrames first)"),
        )
    };
    let kept_rows = [kept.source_rows, kept.target_rows];
    let agreeing = [0, 1].map(|i| rest.rows[i].checked_sub(kept_rows[i]));
    let agreeing = match agreeing {
        [Some(s), Some(t)] if s == t => s,
        _ => {
            return Err(changed(format!(
                "{:?} rows in the first pass, {kept_rows:?} kept in differing buckets",
                rest.rows
            )))
        }
    };
    let matched = agreeing
        .checked_sub(rest.duplicate_rows + rest.null_key_rows)
        .ok_or_else(|| {
            changed(format!(
                "{agreeing} rows in agreeing buckets, {} duplicated or NULL keys among them",
                rest.duplicate_rows + rest.null_key_rows
            ))
        })?;
    let mut report = kept.clone();
    let keyed = report
        .keyed
        .as_mut()
        .ok_or_else(|| ReconError::Internal("a keyed report without keys".into()))?;
    keyed.matched_keys += matched;
    keyed.duplicate_keys += rest.duplicate_keys;
    keyed.null_keys += 2 * rest.null_key_rows;
    keyed.keyed.null_key_rows.source += rest.null_key_rows;
    keyed.keyed.null_key_rows.target += rest.null_key_rows;
    report.source_rows = rest.rows[0];
    report.target_rows = rest.rows[1];
    let input = |side: Side| InputReport {
        path: plan.name(side),
        format: rest.engine.to_string(),
        files: 0,
        rows: rest.rows[side.index()],
        dialect: None,
        snapshot: None,
        database: None,
        fetched: None,
    };
    report.inputs = Inputs {
        source: input(Side::Source),
        target: input(Side::Target),
    };
    let shuffled = kept_rows[0] + kept_rows[1];
    report.settings = Settings {
        threads: rest.threads,
        buckets: rest.buckets,
        passes: if shuffled > 0 { 2 } else { 1 },
        fingerprint_buckets_differing: Some(rest.differing_buckets),
        second_pass: (shuffled > 0).then_some(SecondPass {
            strategy: "shuffle",
            units_read: 0,
            units_total: 0,
            rows_read: Some(shuffled),
            decoded_digests: None,
            spilled_in_pass_1: None,
        }),
        digests: rest.digests,
        ..report.settings
    };
    let (scan, rest_s) = (rest.pass1.as_secs_f64(), rest.rest.as_secs_f64());
    report.elapsed_seconds = scan + rest_s;
    report.phase_seconds = PhaseSeconds {
        scan,
        reconcile: rest_s,
        evidence: 0.0,
    };
    report.thresholds = None;
    report.judge(thresholds);
    Ok(report)
}

#[cfg(test)]
mod tests {
    use super::*;
    use arrow::array::{Int32Array, Int64Array, StringArray};
    use arrow::datatypes::{DataType, Field, Schema};
    use std::collections::HashMap;
    use std::sync::Arc;

    fn described(name: &str, int: DataType) -> Described {
        Described {
            name: name.into(),
            schema: Arc::new(Schema::new(vec![
                Field::new("k", int, true),
                Field::new("s", DataType::Utf8, true),
            ])),
        }
    }

    fn batch(d: &Described, rows: &[(Option<i64>, Option<&str>)]) -> RecordBatch {
        let k: ArrayRef = match d.schema.field(0).data_type() {
            DataType::Int32 => Arc::new(
                rows.iter()
                    .map(|r| r.0.map(|v| v as i32))
                    .collect::<Int32Array>(),
            ),
            _ => Arc::new(rows.iter().map(|r| r.0).collect::<Int64Array>()),
        };
        let s: ArrayRef = Arc::new(rows.iter().map(|r| r.1).collect::<StringArray>());
        RecordBatch::try_new(d.schema.clone(), vec![k, s]).unwrap()
    }

    #[test]
    fn keyed_plans_name_the_key_and_refuse_a_converted_or_nested_one() {
        let (a, b) = (
            described("a", DataType::Int32),
            described("b", DataType::Int64),
        );
        let keyed = |key: &str, casts: Vec<(String, DataType)>| AlignOptions {
            key: Some(vec![key.into()]),
            casts,
            ..AlignOptions::default()
        };
        let plan = DistributedPlan::keyed(&a, &b, &keyed("k", Vec::new())).unwrap();
        assert_eq!(plan.key(Side::Source), ["k"]);
        assert!(DistributedPlan::pair(&a, &b, &keyed("k", Vec::new())).is_err());
        let cast = vec![("k".to_string(), DataType::Utf8)];
        let e = DistributedPlan::keyed(&a, &b, &keyed("k", cast))
            .err()
            .unwrap()
            .to_string();
        assert!(e.contains("key column \"k\" is converted"), "{e}");
        let e = DistributedPlan::keyed(&a, &b, &keyed("nope", Vec::new()))
            .err()
            .unwrap()
            .to_string();
        assert!(e.contains("not a compared column"), "{e}");
        let nested = Described {
            name: "n".into(),
            schema: Arc::new(Schema::new(vec![Field::new(
                "st",
                DataType::Struct(vec![Field::new("p", DataType::Int32, true)].into()),
                true,
            )])),
        };
        let e = DistributedPlan::keyed(&nested, &nested, &keyed("st", Vec::new()))
            .err()
            .unwrap()
            .to_string();
        assert!(e.contains("key column \"st\" is nested"), "{e}");
    }

    type Rows = Vec<(Option<i64>, Option<&'static str>)>;

    /// Runs both passes with the given bucketing (per side: row index ->
    /// bucket, or None for the digest's top bits) and returns, per digest
    /// kept, source count - target count, the nonzero ones only.
    fn run(
        src: &Rows,
        tgt: &Rows,
        bits: u32,
        bucketing: [Option<&dyn Fn(usize) -> u32>; 2],
    ) -> (BucketComparison, HashMap<u128, i64>) {
        let (a, b) = (
            described("a", DataType::Int32),
            described("b", DataType::Int64),
        );
        let plan = DistributedPlan::pair(&a, &b, &AlignOptions::default()).unwrap();
        let batches = [batch(&a, src), batch(&b, tgt)];
        let mut sums = Vec::new();
        let mut buckets_of: Vec<Option<Vec<u32>>> = Vec::new();
        for side in Side::BOTH {
            let i = side.index();
            let mut d = plan.digester(side);
            d.digest(&batches[i], true).unwrap();
            let buckets = bucketing[i].map(|f| (0..d.digests.len()).map(f).collect::<Vec<_>>());
            // Sums travel as bytes, split over two "partitions".
            let mut s = BucketSums::new(bits, 2).unwrap();
            s.add(&d, buckets.as_deref()).unwrap();
            let mut total = BucketSums::new(bits, 2).unwrap();
            total
                .merge(&BucketSums::from_bytes(&s.to_bytes()).unwrap())
                .unwrap();
            total.merge(&BucketSums::new(bits, 2).unwrap()).unwrap();
            sums.push(total);
            buckets_of.push(buckets);
        }
        let cmp = compare_buckets(&plan, &sums[0], &sums[1]).unwrap();
        let selector = Selector::from_bytes(&cmp.selector().to_bytes()).unwrap();
        let mut counts: HashMap<u128, i64> = HashMap::new();
        for side in Side::BOTH {
            let i = side.index();
            let mut d = plan.digester(side);
            d.digest(&batches[i], false).unwrap();
            for r in selector
                .select(&d.digests, buckets_of[i].as_deref())
                .unwrap()
            {
                *counts.entry(d.digests[r as usize]).or_default() += if i == 0 { 1 } else { -1 };
            }
        }
        counts.retain(|_, c| *c != 0);
        (cmp, counts)
    }

    /// The naive answer: per digest, source count - target count.
    fn naive(src: &Rows, tgt: &Rows) -> HashMap<u128, i64> {
        let (a, b) = (
            described("a", DataType::Int32),
            described("b", DataType::Int64),
        );
        let plan = DistributedPlan::pair(&a, &b, &AlignOptions::default()).unwrap();
        let mut counts: HashMap<u128, i64> = HashMap::new();
        for (side, rows, d) in [(Side::Source, src, &a), (Side::Target, tgt, &b)] {
            let mut dg = plan.digester(side);
            dg.digest(&batch(d, rows), false).unwrap();
            for &x in &dg.digests {
                *counts.entry(x).or_default() += if side == Side::Source { 1 } else { -1 };
            }
        }
        counts.retain(|_, c| *c != 0);
        counts
    }

    fn pair() -> (Rows, Rows) {
        let src: Rows = vec![
            (Some(1), Some("a")),
            (Some(2), Some("b")),
            (Some(2), Some("b")),
            (None, None),
            (Some(3), Some("")),
            (Some(4), Some("d")),
        ];
        let tgt: Rows = vec![
            (Some(4), Some("d")),
            (Some(2), Some("b")),
            (Some(3), None),
            (Some(1), Some("a")),
            (Some(5), Some("e")),
            (Some(5), Some("e")),
            (Some(5), Some("e")),
        ];
        (src, tgt)
    }

    #[test]
    fn any_bucketing_gives_the_exact_differences() {
        let (src, tgt) = pair();
        let want = naive(&src, &tgt);
        assert_eq!(want.len(), 5);
        let everything_in_one = |_: usize| 0u32;
        let by_row = |i: usize| (i % 3) as u32;
        let other = |i: usize| ((i * 7 + 1) % 4) as u32;
        for bits in [1, 2, 12] {
            assert_eq!(
                run(&src, &tgt, bits, [None, None]).1,
                want,
                "top bits, 2^{bits}"
            );
        }
        // The sides bucket the same rows differently: still exact.
        assert_eq!(run(&src, &tgt, 2, [Some(&by_row), Some(&other)]).1, want);
        let (cmp, got) = run(
            &src,
            &tgt,
            1,
            [Some(&everything_in_one), Some(&everything_in_one)],
        );
        assert_eq!(got, want);
        assert_eq!(cmp.differing, vec![0]);
        // Many differences in one bucket do not decode: the bucket is kept whole.
        assert!(cmp.decoded.is_empty() && cmp.undecoded == vec![0]);
    }

    #[test]
    fn a_single_difference_decodes_and_only_its_rows_are_kept() {
        let (src, _) = pair();
        let mut tgt = src.clone();
        tgt.remove(1); // one copy of (2, "b") fewer
        let (cmp, got) = run(&src, &tgt, 12, [None, None]);
        assert_eq!(cmp.differing.len(), 1);
        assert_eq!(cmp.decoded.len(), 1);
        assert!(cmp.undecoded.is_empty());
        assert_eq!(got, naive(&src, &tgt));
        assert_eq!(cmp.rows, [6, 5]);
    }

    #[test]
    fn equal_tables_agree_in_every_bucket() {
        let (src, _) = pair();
        let mut tgt = src.clone();
        tgt.reverse();
        let (cmp, got) = run(&src, &tgt, 12, [None, None]);
        assert!(cmp.all_agree() && got.is_empty());
        assert!(cmp.differing_columns.is_empty());
    }

    #[test]
    fn a_batch_in_another_class_than_planned_is_refused() {
        let (a, b) = (
            described("a", DataType::Int32),
            described("b", DataType::Int64),
        );
        let plan = DistributedPlan::pair(&a, &b, &AlignOptions::default()).unwrap();
        let wrong = Described {
            name: "x".into(),
            schema: Arc::new(Schema::new(vec![
                Field::new("k", DataType::Utf8, true),
                Field::new("s", DataType::Utf8, true),
            ])),
        };
        let strings: ArrayRef = Arc::new(StringArray::from(vec!["1"]));
        let batch =
            RecordBatch::try_new(wrong.schema.clone(), vec![strings.clone(), strings]).unwrap();
        let err = plan
            .digester(Side::Source)
            .digest(&batch, false)
            .unwrap_err();
        assert!(err.to_string().contains("planned as"), "{err}");
    }

    #[test]
    fn keys_and_malformed_bytes_are_refused() {
        let (a, b) = (
            described("a", DataType::Int32),
            described("b", DataType::Int64),
        );
        let keyed = AlignOptions {
            key: Some(vec!["k".into()]),
            ..AlignOptions::default()
        };
        assert!(DistributedPlan::pair(&a, &b, &keyed).is_err());
        assert!(BucketSums::from_bytes(b"nonsense").is_err());
        assert!(BucketSums::new(0, 1).is_err());
        let sums = BucketSums::new(3, 1).unwrap().to_bytes();
        assert!(BucketSums::from_bytes(&sums[..sums.len() - 1]).is_err());
        assert!(Selector::from_bytes(&[1, 0, 0]).is_err());
    }
}
