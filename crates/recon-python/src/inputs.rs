//! A table handed over from Python as the library's [`Source`].
//!
//! The Python layer (`recon/_inputs.py`) decides what an object is and
//! hands over one of three kinds:
//! - `spec`: a path or table spec string, read as the command line reads it;
//! - `batches`: data already in memory (a pyarrow Table, a polars
//!   DataFrame), imported through the Arrow C stream interface without
//!   copying its buffers, and read in place;
//! - `stream`: data produced as it is read (a RecordBatchReader, a polars
//!   LazyFrame, a DuckDB relation, a Dataset), spooled by the library to the
//!   run's temp directory so the memory bound holds.

use std::path::PathBuf;

use arrow::array::RecordBatch;
use arrow::datatypes::SchemaRef;
use arrow::error::ArrowError;
use arrow::ffi_stream::RecordBatchStreamReader;
use arrow::record_batch::RecordBatchReader;
use arrow_pyarrow::FromPyArrow;
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;

use recon::{CancelToken, ReconError, Source};

/// A stream that stops when the run is cancelled: the engine copies a
/// stream to its temp directory before it plans the run, and an endless or
/// slow producer must not keep a cancelled run alive.
struct Cancellable {
    reader: RecordBatchStreamReader,
    cancel: CancelToken,
}

impl Iterator for Cancellable {
    type Item = Result<RecordBatch, ArrowError>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.cancel.is_cancelled() {
            return Some(Err(ArrowError::ExternalError(
                "the run was cancelled".into(),
            )));
        }
        self.reader.next()
    }
}

impl RecordBatchReader for Cancellable {
    fn schema(&self) -> SchemaRef {
        self.reader.schema()
    }
}

/// `(kind, object, name)` from the Python layer, as a source.
pub(crate) fn source(
    py: Python<'_>,
    table: (String, Bound<'_, PyAny>, String),
    cancel: &CancelToken,
) -> PyResult<Source> {
    let (kind, obj, name) = table;
    match kind.as_str() {
        "spec" => Ok(Source::from(obj.extract::<PathBuf>()?)),
        "batches" => {
            let reader = RecordBatchStreamReader::from_pyarrow_bound(&obj)?;
            let schema = reader.schema();
            let batches = reader
                .collect::<Result<Vec<RecordBatch>, _>>()
                .map_err(|e| {
                    let message = format!("reading the Arrow data: {e}");
                    let path = PathBuf::from(&name);
                    crate::errors::to_py(py, ReconError::Input { path, message })
                })?;
            Source::batches(name, schema, batches).map_err(|e| crate::errors::to_py(py, e))
        }
        "stream" => {
            let reader = RecordBatchStreamReader::from_pyarrow_bound(&obj)?;
            let cancel = cancel.clone();
            Ok(Source::stream(name, Cancellable { reader, cancel }))
        }
        other => Err(PyValueError::new_err(format!(
            "unknown table kind {other:?} (expected spec, batches or stream)"
        ))),
    }
}
