//! What `recon.spark` calls: on the driver, the plan, the comparison of the
//! partitions' bucket sums and the report; inside `mapInArrow` on the
//! workers, the digests of each partition's Arrow batches. Every decision
//! is the library's (`recon::distributed`); this converts.

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use arrow::array::{Array, ArrayRef, Int32Array, Int64Array, RecordBatch, UInt32Array};
use arrow::datatypes::{DataType, Field, Schema};
use arrow_pyarrow::{FromPyArrow, PyArrowType, ToPyArrow};
use pyo3::prelude::*;
use pyo3::types::PyBytes;

use recon::config::{AlignOptions, RulesFile};
use recon::distributed::{
    by_group, by_values, compare_buckets, complete_keyed, pairing_skipped, pairs, report, samples,
    BucketComparison, BucketSums, Bucketing, Described, DistributedPlan, Findings, KeyedRest,
    Selector, SideDigester, PAIR_MOST,
};
use recon::fingerprint::{assemble, DigestsFile, PartialFingerprint};
use recon::report::DirectionStats;
use recon::{DiffOptions, ReconError, Side};

use crate::{errors, parse_settings, py_err, DiffResult};

/// The column names a second pass appends: the row digest's two halves.
const DIGEST_HI: &str = "__recon_digest_hi";
const DIGEST_LO: &str = "__recon_digest_lo";

fn options(
    py: Python<'_>,
    settings: &str,
    rules: Option<(String, String)>,
) -> PyResult<DiffOptions> {
    let settings = parse_settings(py, settings)?;
    let rules = match &rules {
        None => None,
        Some((path, text)) => {
            let path = Path::new(path);
            Some((path, RulesFile::parse(path, text).map_err(py_err(py))?))
        }
    };
    DiffOptions::from_settings_and_rules(&settings, rules).map_err(py_err(py))
}

fn side_of(py: Python<'_>, side: &str) -> PyResult<Side> {
    match side {
        "source" => Ok(Side::Source),
        "target" => Ok(Side::Target),
        other => Err(errors::to_py(
            py,
            ReconError::Internal(format!("no side {other:?}")),
        )),
    }
}

/// A comparison planned from Spark schemas (as Arrow schemas).
#[pyclass(module = "recon._recon", unsendable)]
pub struct SparkPlan {
    plan: DistributedPlan,
    opts: DiffOptions,
}

/// Plans a keyless diff: `(name, schema)` per side, settings as JSON, the
/// rules file as `(path, text)` and the `--by` column.
#[pyfunction]
#[pyo3(signature = (source, target, settings, rules=None, by=None))]
pub fn spark_plan_pair(
    py: Python<'_>,
    source: (String, PyArrowType<Schema>),
    target: (String, PyArrowType<Schema>),
    settings: &str,
    rules: Option<(String, String)>,
    by: Option<String>,
) -> PyResult<SparkPlan> {
    plan_two(
        py,
        [source, target],
        settings,
        rules,
        by,
        DistributedPlan::pair,
    )
}

/// Plans a keyed diff (the settings name the key): as `spark_plan_pair`
/// (`by` is refused, as the command line refuses `--by` with `--key`).
#[pyfunction]
#[pyo3(signature = (source, target, settings, rules=None, by=None))]
pub fn spark_plan_keyed(
    py: Python<'_>,
    source: (String, PyArrowType<Schema>),
    target: (String, PyArrowType<Schema>),
    settings: &str,
    rules: Option<(String, String)>,
    by: Option<String>,
) -> PyResult<SparkPlan> {
    plan_two(
        py,
        [source, target],
        settings,
        rules,
        by,
        DistributedPlan::keyed,
    )
}

type Planner = fn(&Described, &Described, &AlignOptions) -> recon::Result<DistributedPlan>;

/// A pair planned from its two schemas by `planner` (keyless or keyed),
/// broken down by the compared column `by` if given.
fn plan_two(
    py: Python<'_>,
    tables: [(String, PyArrowType<Schema>); 2],
    settings: &str,
    rules: Option<(String, String)>,
    by: Option<String>,
    planner: Planner,
) -> PyResult<SparkPlan> {
    let mut opts = options(py, settings, rules)?;
    opts.by = by;
    let [source, target] = tables.map(|(name, schema)| Described {
        name,
        schema: Arc::new(schema.0),
    });
    let plan = planner(&source, &target, &opts.align)
        .and_then(|plan| plan.with_by(opts.by.as_deref()))
        .map_err(py_err(py))?;
    Ok(SparkPlan { plan, opts })
}

fn digests_of(py: Python<'_>, digests: Option<&str>) -> PyResult<Option<&'static str>> {
    match digests {
        None => Ok(None),
        Some("jvm") => Ok(Some("jvm")),
        Some("python") => Ok(Some("python")),
        Some(other) => Err(errors::to_py(
            py,
            ReconError::Internal(format!("digests {other:?}")),
        )),
    }
}

/// Plans the fingerprint of one table.
#[pyfunction]
#[pyo3(signature = (table, settings, rules=None, by=None))]
pub fn spark_plan_table(
    py: Python<'_>,
    table: (String, PyArrowType<Schema>),
    settings: &str,
    rules: Option<(String, String)>,
    by: Option<String>,
) -> PyResult<SparkPlan> {
    let opts = options(py, settings, rules)?;
    let table = Described {
        name: table.0,
        schema: Arc::new(table.1 .0),
    };
    let plan = DistributedPlan::table(&table, &opts.align, by.as_deref()).map_err(py_err(py))?;
    Ok(SparkPlan { plan, opts })
}

/// Pass 1's comparison of the bucket sums.
#[pyclass(module = "recon._recon", frozen)]
pub struct SparkComparison {
    cmp: BucketComparison,
}

#[pymethods]
impl SparkComparison {
    /// Every bucket agrees: an exact match, no second pass.
    #[getter]
    fn all_agree(&self) -> bool {
        self.cmp.all_agree()
    }

    #[getter]
    fn rows(&self) -> (u64, u64) {
        (self.cmp.rows[0], self.cmp.rows[1])
    }

    /// The differing buckets, ascending.
    #[getter]
    fn differing(&self) -> Vec<u32> {
        self.cmp.differing.clone()
    }

    #[getter]
    fn decoded(&self) -> usize {
        self.cmp.decoded.len()
    }

    #[getter]
    fn undecoded(&self) -> usize {
        self.cmp.undecoded.len()
    }

    /// Which rows the second pass keeps, as bytes for the workers.
    fn selector<'py>(&self, py: Python<'py>) -> Bound<'py, PyBytes> {
        PyBytes::new(py, &self.cmp.selector().to_bytes())
    }

    /// A selector that keeps every row (a keyed second pass's digests).
    fn keep_all<'py>(&self, py: Python<'py>) -> Bound<'py, PyBytes> {
        PyBytes::new(py, &self.cmp.keep_all().to_bytes())
    }
}

/// A batch whose last column is each row's bucket (the engine's hash of
/// the row): the table's columns, and the buckets.
fn split_buckets(py: Python<'_>, batch: RecordBatch) -> PyResult<(RecordBatch, Vec<u32>)> {
    let internal = |m: String| errors::to_py(py, ReconError::Internal(m));
    let last = batch
        .num_columns()
        .checked_sub(1)
        .ok_or_else(|| internal("a batch without its bucket column".into()))?;
    let buckets = batch
        .column(last)
        .as_any()
        .downcast_ref::<Int32Array>()
        .ok_or_else(|| {
            internal(format!(
                "the bucket column is {}",
                batch.column(last).data_type()
            ))
        })?;
    if buckets.null_count() > 0 {
        return Err(internal("a row without a bucket".into()));
    }
    let buckets = buckets.values().iter().map(|&b| b as u32).collect();
    let columns: Vec<usize> = (0..last).collect();
    let table = batch
        .project(&columns)
        .map_err(|e| internal(format!("project: {e}")))?;
    Ok((table, buckets))
}

#[pymethods]
impl SparkPlan {
    /// Pass 1 of one partition of `side`: its bucket sums over `1 << bits`
    /// buckets, as bytes. Each batch's last column is its rows' buckets.
    fn bucket_sums<'py>(
        &self,
        py: Python<'py>,
        side: &str,
        batches: &Bound<'py, PyAny>,
        bits: u32,
    ) -> PyResult<Bound<'py, PyBytes>> {
        let side = side_of(py, side)?;
        let mut d = self.plan.digester(side);
        let mut sums = BucketSums::new(bits, self.plan.plan.columns.len()).map_err(py_err(py))?;
        for batch in batches.try_iter()? {
            let (batch, buckets) = split_buckets(py, RecordBatch::from_pyarrow_bound(&batch?)?)?;
            d.digest(&batch, true).map_err(py_err(py))?;
            sums.add(&d, Some(&buckets)).map_err(py_err(py))?;
        }
        Ok(PyBytes::new(py, &sums.to_bytes()))
    }

    /// The compared columns (source names) the plan converts or
    /// normalizes: the JVM digest, which digests values as Spark holds
    /// them, cannot run such a plan.
    fn converted(&self) -> Vec<String> {
        self.plan.converted()
    }

    /// Adds up every partition's bucket sums per side and compares them.
    /// `prefix`: the rows were bucketed by their digests' top bits (the
    /// JVM's keyless pass 1), not by Spark's hash.
    #[pyo3(signature = (source, target, bits, prefix=false))]
    fn compare(
        &self,
        py: Python<'_>,
        source: Vec<Vec<u8>>,
        target: Vec<Vec<u8>>,
        bits: u32,
        prefix: bool,
    ) -> PyResult<SparkComparison> {
        let columns = self.plan.plan.columns.len();
        let total = |parts: &[Vec<u8>]| -> recon::Result<BucketSums> {
            let mut sums = BucketSums::new(bits, columns)?;
            for p in parts {
                sums.merge(&BucketSums::from_bytes(p)?)?;
            }
            Ok(sums)
        };
        let (s, t) = (
            total(&source).map_err(py_err(py))?,
            total(&target).map_err(py_err(py))?,
        );
        let bucketing = if prefix {
            Bucketing::DigestPrefix
        } else {
            Bucketing::Engine
        };
        let cmp = compare_buckets(&self.plan, &s, &t, bucketing).map_err(py_err(py))?;
        Ok(SparkComparison { cmp })
    }

    /// A digester of `side`'s batches for the second pass.
    fn digester(&self, py: Python<'_>, side: &str, selector: &[u8]) -> PyResult<SparkDigester> {
        let side = side_of(py, side)?;
        Ok(SparkDigester {
            digester: self.plan.digester(side),
            selector: Selector::from_bytes(selector).map_err(py_err(py))?,
        })
    }

    /// One partition's share of a fingerprint (with a sketch sized for
    /// `sketch` differing rows), as bytes.
    #[pyo3(signature = (batches, sketch=None))]
    fn fingerprint_part<'py>(
        &self,
        py: Python<'py>,
        batches: &Bound<'py, PyAny>,
        sketch: Option<u64>,
    ) -> PyResult<Bound<'py, PyBytes>> {
        let mut d = self.plan.digester(Side::Source);
        let mut part =
            PartialFingerprint::new(self.plan.plan.columns.len(), self.plan.by(), sketch)
                .map_err(py_err(py))?;
        for batch in batches.try_iter()? {
            let batch = RecordBatch::from_pyarrow_bound(&batch?)?;
            d.digest(&batch, true).map_err(py_err(py))?;
            part.add(&d.digests, &d.values, &d.arrays)
                .map_err(py_err(py))?;
        }
        Ok(PyBytes::new(py, &part.to_bytes()))
    }

    /// The fingerprint of the table from its parts.
    #[pyo3(signature = (table, parts, by=None, sketch=None))]
    fn assemble_fingerprint(
        &self,
        py: Python<'_>,
        table: &str,
        parts: Vec<Vec<u8>>,
        by: Option<String>,
        sketch: Option<u64>,
    ) -> PyResult<crate::FingerprintHandle> {
        let parts = parts
            .iter()
            .map(|p| PartialFingerprint::parse(p))
            .collect::<recon::Result<Vec<_>>>()
            .map_err(py_err(py))?;
        let file = assemble(table, &self.plan.plan, by, &parts, sketch).map_err(py_err(py))?;
        Ok(crate::FingerprintHandle { file })
    }

    /// The fingerprint of the table from the bucket sums its rows were
    /// added into (recon's jar: `recon_jvm.bucket_sums` over the whole
    /// table, `bits` bucket bits): the file [`Self::assemble_fingerprint`]
    /// makes from Python's parts, for a fingerprint without `by` or a sketch.
    fn fingerprint_from_sums(
        &self,
        py: Python<'_>,
        table: &str,
        sums: Vec<Vec<u8>>,
        bits: u32,
    ) -> PyResult<crate::FingerprintHandle> {
        let columns = self.plan.plan.columns.len();
        let whole = || -> recon::Result<BucketSums> {
            let mut total = BucketSums::new(bits, columns)?;
            for p in &sums {
                total.merge(&BucketSums::from_bytes(p)?)?;
            }
            Ok(total)
        };
        let part = whole().map_err(py_err(py))?.fingerprint_part();
        let file = assemble(table, &self.plan.plan, None, &[part], None).map_err(py_err(py))?;
        Ok(crate::FingerprintHandle { file })
    }

    /// The rows of `batches` whose digest the digests file (JSON) lists,
    /// every column as it came.
    fn extract_part<'py>(
        &self,
        py: Python<'py>,
        batches: &Bound<'py, PyAny>,
        digests: &str,
    ) -> PyResult<Vec<PyArrowType<RecordBatch>>> {
        let file =
            DigestsFile::parse(std::path::Path::new("digests"), digests).map_err(py_err(py))?;
        let wanted: std::collections::HashSet<u128, recon::distributed::DigestBuildHasher> =
            file.differences.iter().map(|d| d.digest).collect();
        let mut d = self.plan.digester(Side::Source);
        let mut out = Vec::new();
        for batch in batches.try_iter()? {
            let batch = RecordBatch::from_pyarrow_bound(&batch?)?;
            d.digest(&batch, false).map_err(py_err(py))?;
            let keep: arrow::array::BooleanArray =
                d.digests.iter().map(|x| Some(wanted.contains(x))).collect();
            let kept = arrow::compute::filter_record_batch(&batch, &keep)
                .map_err(|e| errors::to_py(py, ReconError::Internal(format!("extract: {e}"))))?;
            if kept.num_rows() > 0 {
                out.push(PyArrowType(kept));
            }
        }
        Ok(out)
    }

    /// The diff's report. `stats` per direction: `(rows, distinct,
    /// absent rows, absent distinct)`; `samples` per direction: a batch of
    /// the table's columns plus `source_count` and `target_count`.
    ///
    /// `by_groups` (with a `by` column): each side's (value, unmatched
    /// occurrences) groups from `by_values`. `unmatched`: each side's
    /// distinct unmatched rows (the table's columns, then their unmatched
    /// occurrences as int64) for the pairing of changed rows, or None when
    /// a side has none; `pairs_skipped` when a side had more than
    /// `PAIR_MOST`.
    #[allow(clippy::too_many_arguments)]
    #[pyo3(signature = (comparison, stats, samples_source, samples_target, threads, rows_shuffled, pass1, rest, digests=None, by_groups=None, unmatched=None, pairs_skipped=false))]
    fn report(
        &self,
        py: Python<'_>,
        comparison: &SparkComparison,
        stats: [(u64, u64, u64, u64); 2],
        samples_source: PyArrowType<RecordBatch>,
        samples_target: PyArrowType<RecordBatch>,
        threads: usize,
        rows_shuffled: Option<u64>,
        pass1: f64,
        rest: f64,
        digests: Option<&str>,
        by_groups: Option<[ByGroups; 2]>,
        unmatched: Option<[PyArrowType<RecordBatch>; 2]>,
        pairs_skipped: bool,
    ) -> PyResult<DiffResult> {
        let digests = digests_of(py, digests)?;
        let stats = stats.map(|(rows, distinct, absent, absent_distinct)| DirectionStats {
            rows,
            distinct_rows: distinct,
            absent_rows: absent,
            absent_distinct,
            extra_copy_rows: rows - absent.min(rows),
            extra_copy_distinct: distinct - absent_distinct.min(distinct),
        });
        let samples = [
            samples(&samples_source.0).map_err(py_err(py))?,
            samples(&samples_target.0).map_err(py_err(py))?,
        ];
        let mut report = report(
            &self.plan,
            &comparison.cmp,
            Findings {
                stats,
                samples,
                sample_limit: self.opts.run.sample,
                threads,
                rows_shuffled,
                pass1: Duration::from_secs_f64(pass1.max(0.0)),
                rest: Duration::from_secs_f64(rest.max(0.0)),
                engine: "spark",
                digests,
            },
        );
        if let (Some(groups), Some(column)) = (by_groups, self.opts.by.as_deref()) {
            report.by_group = Some(by_group(column, groups));
        }
        report.pairs = if pairs_skipped {
            Some(pairing_skipped())
        } else {
            match unmatched {
                None => None,
                Some([s, t]) => {
                    let [s, t] = [split_excess(py, s.0)?, split_excess(py, t.0)?];
                    let rows = [(&s.0, s.1.as_slice()), (&t.0, t.1.as_slice())];
                    pairs(&self.plan, rows, self.opts.run.sample).map_err(py_err(py))?
                }
            }
        };
        report.judge(&self.opts.thresholds);
        Ok(DiffResult {
            report,
            quoted: self.plan.quoted(),
            seconds: pass1 + rest,
        })
    }

    /// Each row's value of the `by` column as `recon diff --by` groups it
    /// (after the plan's conversions and rules, as text), for `batch`: the
    /// table's columns of `side`.
    fn by_values(
        &self,
        py: Python<'_>,
        side: &str,
        batch: PyArrowType<RecordBatch>,
    ) -> PyResult<Py<PyAny>> {
        let by = self
            .plan
            .by()
            .ok_or_else(|| errors::to_py(py, ReconError::Internal("a plan without `by`".into())))?;
        let mut digester = self.plan.digester(side_of(py, side)?);
        let values = by_values(&mut digester, &batch.0, by).map_err(py_err(py))?;
        let array = arrow::array::StringArray::from(values);
        Ok(array.to_data().to_pyarrow(py)?.unbind())
    }

    /// The `by` column's name on `side`, or None.
    fn by_column(&self, py: Python<'_>, side: &str) -> PyResult<Option<String>> {
        let side = side_of(py, side)?;
        Ok(self.plan.by().map(|i| {
            let c = &self.plan.plan.columns[i];
            match side {
                Side::Source => c.source_name.clone(),
                Side::Target => c.target_name.clone(),
            }
        }))
    }

    /// The most distinct unmatched rows per side that are paired.
    #[getter]
    fn pair_most(&self) -> usize {
        PAIR_MOST
    }

    /// The keyed report of the whole tables from recon's keyed diff of the
    /// kept rows (`kept`) and what the engine counted outside them:
    /// `rows` per side, the agreeing buckets' `duplicate_keys` (with their
    /// source rows) and source rows with a NULL key.
    #[allow(clippy::too_many_arguments)]
    #[pyo3(signature = (kept, rows, duplicate_keys, duplicate_rows, null_key_rows, bits, differing, threads, pass1, rest, digests=None))]
    fn complete_keyed(
        &self,
        py: Python<'_>,
        kept: &DiffResult,
        rows: (u64, u64),
        duplicate_keys: u64,
        duplicate_rows: u64,
        null_key_rows: u64,
        bits: u32,
        differing: usize,
        threads: usize,
        pass1: f64,
        rest: f64,
        digests: Option<&str>,
    ) -> PyResult<DiffResult> {
        let counted = KeyedRest {
            rows: [rows.0, rows.1],
            duplicate_keys,
            duplicate_rows,
            null_key_rows,
            buckets: 1 << bits,
            differing_buckets: differing,
            threads,
            pass1: Duration::from_secs_f64(pass1.max(0.0)),
            rest: Duration::from_secs_f64(rest.max(0.0)),
            engine: "spark",
            digests: digests_of(py, digests)?,
        };
        let report = complete_keyed(&self.plan, &kept.report, counted, &self.opts.thresholds)
            .map_err(py_err(py))?;
        Ok(DiffResult {
            report,
            quoted: self.plan.quoted(),
            seconds: pass1 + rest,
        })
    }

    /// Keyed plans: the key columns of `side`, in key order.
    fn key(&self, py: Python<'_>, side: &str) -> PyResult<Vec<String>> {
        Ok(self.plan.key(side_of(py, side)?))
    }

    /// The compared columns of `side`, in plan order.
    fn compared(&self, py: Python<'_>, side: &str) -> PyResult<Vec<String>> {
        let side = side_of(py, side)?;
        Ok(self
            .plan
            .plan
            .columns
            .iter()
            .map(|c| match side {
                Side::Source => c.source_name.clone(),
                Side::Target => c.target_name.clone(),
            })
            .collect())
    }

    /// The sample size the settings ask for.
    #[getter]
    fn sample(&self) -> usize {
        self.opts.run.sample
    }
}

/// A batch of a table's columns followed by an int64 count: the columns,
/// and the counts.
fn split_excess(py: Python<'_>, batch: RecordBatch) -> PyResult<(RecordBatch, Vec<u64>)> {
    let internal = |m: &str| errors::to_py(py, ReconError::Internal(m.into()));
    let last = batch
        .num_columns()
        .checked_sub(1)
        .ok_or_else(|| internal("unmatched rows without their count"))?;
    let counts = batch
        .column(last)
        .as_any()
        .downcast_ref::<Int64Array>()
        .ok_or_else(|| internal("the unmatched rows' count is not int64"))?;
    let counts = counts.values().iter().map(|&v| v.max(0) as u64).collect();
    let columns: Vec<usize> = (0..last).collect();
    let rows = batch
        .project(&columns)
        .map_err(|e| internal(&format!("project: {e}")))?;
    Ok((rows, counts))
}

/// One side's `--by` groups from the engine: (value, unmatched occurrences).
type ByGroups = Vec<(Option<String>, u64)>;

/// Second pass: keeps the rows a selector picks, with their digests.
#[pyclass(module = "recon._recon", unsendable)]
pub struct SparkDigester {
    digester: SideDigester,
    selector: Selector,
}

#[pymethods]
impl SparkDigester {
    /// The rows of `batch` (the table's columns, then the rows' buckets)
    /// the selector keeps, with the digest's halves
    /// appended as `__recon_digest_hi` and `__recon_digest_lo` (int64), or
    /// None when it keeps none.
    fn select(&mut self, py: Python<'_>, batch: &Bound<'_, PyAny>) -> PyResult<Option<Py<PyAny>>> {
        let (batch, buckets) = split_buckets(py, RecordBatch::from_pyarrow_bound(batch)?)?;
        self.digester.digest(&batch, false).map_err(py_err(py))?;
        let keep = self
            .selector
            .select(&self.digester.digests, Some(&buckets))
            .map_err(py_err(py))?;
        if keep.is_empty() {
            return Ok(None);
        }
        let digests = &self.digester.digests;
        let hi =
            Int64Array::from_iter_values(keep.iter().map(|&i| (digests[i as usize] >> 64) as i64));
        let lo = Int64Array::from_iter_values(keep.iter().map(|&i| digests[i as usize] as i64));
        let indices = UInt32Array::from(keep);
        let mut columns: Vec<ArrayRef> = batch
            .columns()
            .iter()
            .map(|c| arrow::compute::take(c.as_ref(), &indices, None))
            .collect::<Result<_, _>>()
            .map_err(|e| errors::to_py(py, ReconError::Internal(format!("take: {e}"))))?;
        columns.push(Arc::new(hi));
        columns.push(Arc::new(lo));
        let mut fields: Vec<Arc<Field>> = batch.schema().fields().iter().cloned().collect();
        fields.push(Arc::new(Field::new(DIGEST_HI, DataType::Int64, false)));
        fields.push(Arc::new(Field::new(DIGEST_LO, DataType::Int64, false)));
        let out = RecordBatch::try_new(Arc::new(Schema::new(fields)), columns)
            .map_err(|e| errors::to_py(py, ReconError::Internal(format!("batch: {e}"))))?;
        Ok(Some(out.to_pyarrow(py)?.unbind()))
    }
}
