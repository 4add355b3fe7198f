//! What a caller hands the library as a table: a spec naming files (what
//! the command line takes), or Arrow data.
//!
//! recon reads a table more than once (a scan, maybe a second pass, then
//! the unmatched rows by position), so:
//! - batches already in memory are read in place, never copied;
//! - a stream that can be read only once is first copied to the run's
//!   temp directory as an Arrow IPC file, as stdin is, and read from there
//!   like any file.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use arrow::array::{RecordBatch, RecordBatchReader};
use arrow::datatypes::SchemaRef;

use crate::error::{ReconError, Result};

/// A table to compare.
///
/// ```
/// use std::sync::Arc;
/// use arrow::array::{Int64Array, RecordBatch};
/// use arrow::datatypes::{DataType, Field, Schema};
/// use recon::Source;
///
/// // A table spec, as the command line takes it: a file, a folder, a glob,
/// // `-`, `delta:PATH@VERSION`, `iceberg:PATH`.
/// let on_disk = Source::from("testdata/demo/source.parquet");
/// assert_eq!(on_disk.name(), std::path::Path::new("testdata/demo/source.parquet"));
///
/// // Batches in memory, read in place.
/// let schema = Arc::new(Schema::new(vec![Field::new("id", DataType::Int64, false)]));
/// let batch = RecordBatch::try_new(schema.clone(), vec![Arc::new(Int64Array::from(vec![1, 2]))])?;
/// let in_memory = Source::batches("orders (in memory)", schema, vec![batch])?;
/// assert_eq!(in_memory.name(), std::path::Path::new("orders (in memory)"));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub enum Source {
    /// Paths, globs, directories, `-`, `delta:…`, `iceberg:…`.
    Spec(PathBuf),
    /// An Arrow stream, read once and spooled.
    Stream(StreamSource),
    /// Record batches in memory, read in place.
    Batches(BatchesSource),
}

/// A stream of record batches that can be read once.
pub struct StreamSource {
    pub(crate) name: PathBuf,
    /// Taken by the run that opens it: a second open is an error.
    reader: Mutex<Option<Box<dyn RecordBatchReader + Send>>>,
}

/// Record batches of one schema, held by the caller (cloning shares them).
#[derive(Clone)]
pub struct BatchesSource {
    pub(crate) name: PathBuf,
    pub(crate) schema: SchemaRef,
    pub(crate) batches: Arc<[RecordBatch]>,
}

impl Source {
    /// A stream (any `RecordBatchReader + Send`: an IPC stream reader, a
    /// Parquet reader, a query's output). `name` stands for it in reports
    /// and messages. It is copied to the run's temp directory as Arrow IPC
    /// when the run starts, so the memory limit holds however large it is.
    pub fn stream(
        name: impl Into<String>,
        reader: impl RecordBatchReader + Send + 'static,
    ) -> Source {
        Source::Stream(StreamSource {
            name: PathBuf::from(name.into()),
            reader: Mutex::new(Some(Box::new(reader))),
        })
    }

    /// Batches in memory, all of `schema`; `name` stands for them in
    /// reports and messages. They are read where they are.
    pub fn batches(
        name: impl Into<String>,
        schema: SchemaRef,
        batches: impl Into<Arc<[RecordBatch]>>,
    ) -> Result<Source> {
        let name = PathBuf::from(name.into());
        let batches = batches.into();
        if let Some(i) = batches.iter().position(|b| b.schema() != schema) {
            return Err(ReconError::input(
                &name,
                format!(
                    "batch {i} has schema {}, not the table's {}",
                    batches[i].schema(),
                    schema
                ),
            ));
        }
        Ok(Source::Batches(BatchesSource {
            name,
            schema,
            batches,
        }))
    }

    /// The spec, or the name given to Arrow data: what reports and
    /// messages call the table.
    pub fn name(&self) -> &Path {
        match self {
            Source::Spec(p) => p,
            Source::Stream(s) => &s.name,
            Source::Batches(b) => &b.name,
        }
    }
}

impl StreamSource {
    /// The stream's schema, while it has not been read.
    pub(crate) fn schema(&self) -> Result<SchemaRef> {
        self.reader
            .lock()
            .ok()
            .and_then(|r| r.as_ref().map(|r| r.schema()))
            .ok_or_else(|| self.read_already())
    }

    fn read_already(&self) -> ReconError {
        ReconError::Usage(format!(
            "{}: this stream was read by an earlier run; a stream can be read once (give batches or a file to compare it again)",
            self.name.display()
        ))
    }

    /// The reader, once.
    pub(crate) fn take(&self) -> Result<Box<dyn RecordBatchReader + Send>> {
        self.reader
            .lock()
            .ok()
            .and_then(|mut r| r.take())
            .ok_or_else(|| self.read_already())
    }
}

impl std::fmt::Debug for Source {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let kind = match self {
            Source::Spec(_) => "Spec",
            Source::Stream(_) => "Stream",
            Source::Batches(_) => "Batches",
        };
        write!(f, "Source::{kind}({})", self.name().display())
    }
}

impl From<&Path> for Source {
    fn from(p: &Path) -> Source {
        Source::Spec(p.to_path_buf())
    }
}

impl From<PathBuf> for Source {
    fn from(p: PathBuf) -> Source {
        Source::Spec(p)
    }
}

impl From<&PathBuf> for Source {
    fn from(p: &PathBuf) -> Source {
        Source::Spec(p.clone())
    }
}

impl From<&str> for Source {
    fn from(p: &str) -> Source {
        Source::Spec(PathBuf::from(p))
    }
}

impl From<String> for Source {
    fn from(p: String) -> Source {
        Source::Spec(PathBuf::from(p))
    }
}

/// Whether a spec names a PostgreSQL table or database
/// (`postgres://…`, `postgresql://…`): read by `input::catalog::postgres`.
#[cfg(feature = "postgres")]
pub(crate) fn is_postgres_spec(spec: &Path) -> bool {
    let s = spec.to_string_lossy();
    s.starts_with("postgres://") || s.starts_with("postgresql://")
}

/// The setting that gives `side` a database query (`source_query`).
pub(crate) fn query_setting(side: crate::side::Side) -> &'static str {
    match side {
        crate::side::Side::Source => "source_query",
        crate::side::Side::Target => "target_query",
    }
}
