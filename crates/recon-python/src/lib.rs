//! `recon._recon`: the native module of the Python package. It converts
//! arguments, runs the library off the GIL and converts results; what an
//! option means, and every check of its value, is the library's. The
//! Python layer (python/recon) shapes the API around it.

mod errors;
mod inputs;
mod run;
mod spark;

use std::path::PathBuf;
use std::time::Instant;

use pyo3::prelude::*;

use recon::batch::PairSettings;
use recon::batch::{junit, PairOutcome};
use recon::config::{parse_choice, DiffColumns};
use recon::fingerprint::{
    compare, extract as extract_rows, fingerprint as fingerprint_table, Comparison, DigestsFile,
    FingerprintFile, FingerprintOptions,
};
use recon::report::{diff_html, quick_html};
use recon::{DiffOptions, ReconError, Report};

type Table<'py> = (String, Bound<'py, PyAny>, String);

fn py_err(py: Python<'_>) -> impl Fn(ReconError) -> PyErr + '_ {
    move |e| errors::to_py(py, e)
}

/// Settings as JSON in a batch pair's shape (`run`, `thresholds`, `align`,
/// `input`), then a rules file.
fn options(py: Python<'_>, settings: &str, rules: Option<PathBuf>) -> PyResult<DiffOptions> {
    DiffOptions::from_settings(&parse_settings(py, settings)?, rules.as_deref()).map_err(py_err(py))
}

/// The settings JSON the Python layer sends (`recon/_settings.py`).
fn parse_settings(py: Python<'_>, settings: &str) -> PyResult<PairSettings> {
    serde_json::from_str(settings)
        .map_err(|e| errors::to_py(py, ReconError::Usage(format!("settings: {e}"))))
}

/// A finished diff: the report, and what renders it.
#[pyclass(frozen, module = "recon._recon")]
struct DiffResult {
    report: Report,
    quoted: [Vec<bool>; 2],
    seconds: f64,
}

#[pymethods]
impl DiffResult {
    /// The JSON report (what `--report` writes).
    fn json(&self) -> String {
        self.report.to_json()
    }

    /// The text summary (what the command line prints).
    fn text(&self) -> String {
        self.report.render_text(&self.quoted)
    }

    /// The self-contained HTML report (what `--html` writes).
    fn html(&self, py: Python<'_>) -> PyResult<String> {
        diff_html(&self.report).map_err(py_err(py))
    }

    /// JUnit XML with this diff as one test case called `name`.
    fn junit(&self, py: Python<'_>, name: &str) -> PyResult<String> {
        let outcome = PairOutcome::of_diff(name, &self.report, self.text(), self.seconds);
        junit(&[outcome]).map_err(py_err(py))
    }

    #[getter]
    fn exact_match(&self) -> bool {
        self.report.exact_match
    }

    /// Whether the diff passes its thresholds (an exact match always does).
    #[getter]
    fn passes(&self) -> bool {
        self.report.passes()
    }

    #[getter]
    fn verdict(&self) -> String {
        self.report.verdict_line()
    }
}

/// Diffs two tables; see `recon.diff` for the arguments.
#[pyfunction]
#[pyo3(signature = (source, target, settings, *, rules=None, output=None, force=false, report=None, by=None, diff_columns=None, progress=None))]
#[allow(clippy::too_many_arguments)]
fn diff(
    py: Python<'_>,
    source: Table<'_>,
    target: Table<'_>,
    settings: &str,
    rules: Option<PathBuf>,
    output: Option<PathBuf>,
    force: bool,
    report: Option<PathBuf>,
    by: Option<String>,
    diff_columns: Option<String>,
    progress: Option<Bound<'_, PyAny>>,
) -> PyResult<DiffResult> {
    let mut opts = options(py, settings, rules)?;
    opts.output_dir = output;
    opts.force = force;
    opts.report_path = report;
    opts.by = by;
    if let Some(d) = diff_columns {
        opts.diff_columns = parse_choice::<DiffColumns>(&d).map_err(py_err(py))?;
    }
    let source = inputs::source(py, source, &opts.cancel)?;
    let target = inputs::source(py, target, &opts.cancel)?;
    let started = Instant::now();
    let (cancel, counters) = (opts.cancel.clone(), opts.progress.clone());
    let outcome = run::run(py, cancel, counters, progress, move || {
        recon::diff(source, target, &opts)
    })?;
    Ok(DiffResult {
        report: outcome.report,
        quoted: outcome.quoted,
        seconds: started.elapsed().as_secs_f64(),
    })
}

/// Plans a pair from metadata: `(plan JSON, text screen)`.
#[pyfunction]
#[pyo3(signature = (source, target, settings, *, rules=None))]
fn schema(
    py: Python<'_>,
    source: Table<'_>,
    target: Table<'_>,
    settings: &str,
    rules: Option<PathBuf>,
) -> PyResult<(String, String)> {
    let opts = options(py, settings, rules)?;
    let source = inputs::source(py, source, &opts.cancel)?;
    let target = inputs::source(py, target, &opts.cancel)?;
    let (cancel, counters) = (opts.cancel.clone(), opts.progress.clone());
    run::run(py, cancel, counters, None, move || {
        let screen = recon::schema(source, target, &opts.align, &opts.inputs)?;
        Ok((screen.json, screen.text))
    })
}

/// A fingerprint file and, when it was made with one, its sketch.
#[pyclass(frozen, module = "recon._recon")]
pub(crate) struct FingerprintHandle {
    pub(crate) file: FingerprintFile,
}

#[pymethods]
impl FingerprintHandle {
    fn json(&self) -> String {
        self.file.to_json()
    }

    /// Writes the fingerprint file and its sketch beside it (`.sketch`).
    fn save(&self, py: Python<'_>, path: PathBuf) -> PyResult<()> {
        let mut file = self.file.clone();
        py.detach(|| file.write(&path)).map_err(py_err(py))
    }

    #[getter]
    fn has_sketch(&self) -> bool {
        !self.file.sketch_levels.is_empty()
    }
}

/// Fingerprints one table (with a sketch sized for `sketch` differing rows).
#[pyfunction]
#[pyo3(signature = (table, settings, *, rules=None, by=None, schema_like=None, sketch=None, progress=None))]
#[allow(clippy::too_many_arguments)]
fn fingerprint(
    py: Python<'_>,
    table: Table<'_>,
    settings: &str,
    rules: Option<PathBuf>,
    by: Option<String>,
    schema_like: Option<PathBuf>,
    sketch: Option<u64>,
    progress: Option<Bound<'_, PyAny>>,
) -> PyResult<FingerprintHandle> {
    let mut opts = fingerprint_options(py, settings, rules)?;
    opts.by = by;
    opts.schema_like = schema_like;
    opts.sketch = sketch;
    let table = inputs::source(py, table, &opts.cancel)?;
    let (cancel, counters) = (opts.cancel.clone(), opts.progress.clone());
    let file = run::run(py, cancel, counters, progress, move || {
        fingerprint_table(table, &opts)
    })?;
    Ok(FingerprintHandle { file })
}

/// The settings of a fingerprint (or an extract) from a diff's settings.
fn fingerprint_options(
    py: Python<'_>,
    settings: &str,
    rules: Option<PathBuf>,
) -> PyResult<FingerprintOptions> {
    let d = options(py, settings, rules)?;
    let [input, _] = d.inputs;
    Ok(FingerprintOptions {
        threads: d.run.threads,
        temp_dir: d.run.temp_dir,
        align: d.align,
        inputs: input,
        ..FingerprintOptions::default()
    })
}

/// Reads and checks a fingerprint file (and its sketch).
#[pyfunction]
fn load_fingerprint(py: Python<'_>, path: PathBuf) -> PyResult<FingerprintHandle> {
    let file = py
        .detach(|| FingerprintFile::load(&path))
        .map_err(py_err(py))?;
    Ok(FingerprintHandle { file })
}

/// A fingerprint file's JSON (`name` names it in messages), without a sketch.
#[pyfunction]
fn parse_fingerprint(py: Python<'_>, name: PathBuf, text: &str) -> PyResult<FingerprintHandle> {
    let file = FingerprintFile::parse(&name, text).map_err(py_err(py))?;
    Ok(FingerprintHandle { file })
}

/// Two fingerprints compared.
#[pyclass(frozen, module = "recon._recon")]
struct ComparisonResult {
    comparison: Comparison,
    /// The digests file of the differing rows, or why there is none.
    digests: Result<DigestsFile, ReconError>,
}

#[pymethods]
impl ComparisonResult {
    fn json(&self) -> String {
        self.comparison.to_json()
    }

    fn text(&self) -> String {
        self.comparison.render_text()
    }

    fn html(&self, py: Python<'_>) -> PyResult<String> {
        let value = serde_json::to_value(&self.comparison).map_err(|e| {
            errors::to_py(py, ReconError::Internal(format!("comparison JSON: {e}")))
        })?;
        quick_html(&value, &self.comparison.verdict_line()).map_err(py_err(py))
    }

    /// The digests file's JSON, or the error that says why there is none.
    fn digests_json(&self, py: Python<'_>) -> PyResult<String> {
        match &self.digests {
            Ok(d) => Ok(d.to_json()),
            Err(e) => Err(errors::to_py(py, ReconError::Usage(e.to_string()))),
        }
    }

    #[getter]
    fn fingerprints_match(&self) -> bool {
        self.comparison.fingerprints_match
    }

    #[getter]
    fn verdict(&self) -> String {
        self.comparison.verdict_line()
    }
}

/// Compares two fingerprints, decoding their sketches when both have one.
#[pyfunction]
fn compare_fingerprints(
    py: Python<'_>,
    a: &FingerprintHandle,
    b: &FingerprintHandle,
) -> PyResult<ComparisonResult> {
    let comparison = compare(&a.file, &b.file).map_err(py_err(py))?;
    let digests = comparison.digests_file(&a.file, &b.file);
    Ok(ComparisonResult {
        comparison,
        digests,
    })
}

/// Writes the rows of `table` whose digests the digests file (JSON;
/// `digests_name` names it in messages) lists: `(side, rows, digests)`.
#[pyfunction]
#[pyo3(signature = (table, settings, digests_name, digests, like, output, *, rules=None, schema_like=None, progress=None))]
#[allow(clippy::too_many_arguments)]
fn extract(
    py: Python<'_>,
    table: Table<'_>,
    settings: &str,
    digests_name: PathBuf,
    digests: &str,
    like: &FingerprintHandle,
    output: PathBuf,
    rules: Option<PathBuf>,
    schema_like: Option<PathBuf>,
    progress: Option<Bound<'_, PyAny>>,
) -> PyResult<(String, u64, usize)> {
    let mut opts = fingerprint_options(py, settings, rules)?;
    opts.schema_like = schema_like;
    let digests = DigestsFile::parse(&digests_name, digests).map_err(py_err(py))?;
    let like = like.file.clone();
    let table = inputs::source(py, table, &opts.cancel)?;
    let (cancel, counters) = (opts.cancel.clone(), opts.progress.clone());
    let done = run::run(py, cancel, counters, progress, move || {
        extract_rows(table, &digests, &like, &opts, &output)
    })?;
    Ok((done.side.name().to_string(), done.rows, done.digests))
}

/// The defaults the command line uses: `(threads, memory limit in bytes)`.
#[pyfunction]
fn defaults() -> (usize, u64) {
    (
        recon::config::default_threads(),
        recon::config::default_limit(),
    )
}

#[pymodule]
fn _recon(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    m.add("ENCODING_VERSION", recon::ENCODING_VERSION)?;
    // The library's option table, for the package's settings groups and
    // value shapes: (name, flag, group, shape, help) per option.
    let options: Vec<(&str, &str, &str, &str, &str)> = recon::config::option_table::OPTIONS
        .iter()
        .map(|o| (o.name, o.flag, o.group.name(), shape_name(o.shape), o.help))
        .collect();
    m.add("OPTIONS", options)?;
    m.add_function(wrap_pyfunction!(diff, m)?)?;
    m.add_function(wrap_pyfunction!(schema, m)?)?;
    m.add_function(wrap_pyfunction!(fingerprint, m)?)?;
    m.add_function(wrap_pyfunction!(load_fingerprint, m)?)?;
    m.add_function(wrap_pyfunction!(parse_fingerprint, m)?)?;
    m.add_function(wrap_pyfunction!(extract, m)?)?;
    m.add_function(wrap_pyfunction!(compare_fingerprints, m)?)?;
    m.add_function(wrap_pyfunction!(defaults, m)?)?;
    m.add_class::<DiffResult>()?;
    m.add_class::<ComparisonResult>()?;
    m.add_class::<FingerprintHandle>()?;
    m.add_function(wrap_pyfunction!(spark::spark_plan_pair, m)?)?;
    m.add_function(wrap_pyfunction!(spark::spark_plan_keyed, m)?)?;
    m.add_function(wrap_pyfunction!(spark::spark_plan_table, m)?)?;
    m.add_class::<spark::SparkPlan>()?;
    m.add_class::<spark::SparkComparison>()?;
    m.add_class::<spark::SparkDigester>()?;
    errors::register(m)
}

/// A value shape as the Python package names it.
fn shape_name(shape: recon::config::option_table::Shape) -> &'static str {
    use recon::config::option_table::Shape;
    match shape {
        Shape::Switch => "switch",
        Shape::Value => "value",
        Shape::List => "list",
        Shape::Dict => "dict",
    }
}
