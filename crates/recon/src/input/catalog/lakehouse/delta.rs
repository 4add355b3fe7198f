//! Delta Lake tables, read as of a version through delta-kernel-rs.
//!
//! A Delta table's folder holds the files of every version still on disk
//! and files whose rows deletion vectors remove; only the log says which
//! rows are live. The kernel replays the log (JSON commits, checkpoints) at
//! the version asked for and lists the live files with their partition
//! values and deletion vectors; recon then reads those Parquet files itself,
//! skipping the deleted rows, so its locators still point at rows of real
//! files and evidence comes back as for any Parquet table.
//!
//! What recon applies: live files only, partition values as typed columns,
//! deletion vectors, column mapping (`name` or `id`: the files' physical
//! names become the logical ones). A reader feature the kernel does not
//! support is its error, naming the feature. Column types are the Delta
//! schema's: each file's stored column is converted to it exactly or the
//! file is refused (see [`crate::input::types`]); a file written before a column
//! was added reads it as NULL.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use arrow::datatypes::{Field, Schema};
use delta_kernel::engine::arrow_conversion::TryIntoArrow;
use delta_kernel::history_manager::{latest_version_as_of, HistoryCommitType};
use delta_kernel::object_store::local::LocalFileSystem;
use delta_kernel::schema::MetadataValue;
use delta_kernel::Snapshot;
use delta_kernel_default_engine::DefaultEngine;
use url::Url;

use crate::error::{ReconError, Result};

/// Field metadata key naming a column's name in the data files.
const PHYSICAL_NAME: &str = "delta.columnMapping.physicalName";

/// A live data file of a Delta version.
pub(crate) struct LiveFile {
    pub path: PathBuf,
    /// The object, when the table is in an object store.
    pub remote: Option<Arc<crate::input::store::Object>>,
    /// Raw partition values, one per [`DeltaVersion::partition_columns`]
    /// (None: NULL), as the log writes them.
    pub partition_values: Vec<Option<String>>,
    /// Row indexes (from 0, ascending) a deletion vector removes.
    pub deleted: Option<Vec<u64>>,
}

/// What a Delta table is at one version.
pub(crate) struct DeltaVersion {
    pub version: u64,
    /// For a timestamp: the commit's own time (milliseconds since the epoch).
    pub committed_at: Option<i64>,
    /// The table's logical schema: data columns (as Arrow fields with
    /// logical names), in the order the log declares them.
    pub data_columns: Vec<Field>,
    /// Each data column's name in the Parquet files (column mapping).
    pub physical_names: Vec<String>,
    /// Each data column's type as the files name its nested fields
    /// (physical names under column mapping; else the logical type).
    pub physical_types: Vec<arrow::datatypes::DataType>,
    /// Partition columns, typed, in declared order.
    pub partition_columns: Vec<Field>,
    pub files: Vec<LiveFile>,
}

impl DeltaVersion {
    /// Files with a deletion vector.
    pub(crate) fn with_deletes(&self) -> usize {
        self.files.iter().filter(|f| f.deleted.is_some()).count()
    }
}

/// Which version of a Delta table to read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum AsOf {
    Latest,
    Version(u64),
    /// The latest commit at or before this instant (milliseconds since the
    /// epoch), as Delta's `TIMESTAMP AS OF` reads it.
    Timestamp(i64),
}

/// Splits `delta:PATH[@VERSION | @TIMESTAMP]` into the path and the version
/// asked for. A timestamp must carry its zone (`Z` or an offset): a time
/// read in the wrong zone would pin another version without a word.
pub(crate) fn parse_source(text: &str) -> Option<std::result::Result<(PathBuf, AsOf), String>> {
    let rest = text.strip_prefix("delta:")?;
    Some(match rest.rsplit_once('@') {
        Some((path, at)) if !path.is_empty() => parse_as_of(at)
            .map(|a| (PathBuf::from(path), a))
            .map_err(|why| format!("delta:{path}@{at}: {why}")),
        _ => Ok((PathBuf::from(rest), AsOf::Latest)),
    })
}

fn parse_as_of(at: &str) -> std::result::Result<AsOf, String> {
    if let Ok(v) = at.parse::<u64>() {
        return Ok(AsOf::Version(v));
    }
    match chrono::DateTime::parse_from_rfc3339(at) {
        Ok(t) => Ok(AsOf::Timestamp(t.timestamp_millis())),
        Err(_) if chrono::NaiveDateTime::parse_from_str(at, "%Y-%m-%dT%H:%M:%S").is_ok()
            || chrono::NaiveDate::parse_from_str(at, "%Y-%m-%d").is_ok() =>
        {
            Err("a timestamp needs its time zone, e.g. 2024-05-01T00:00:00Z or 2024-05-01T02:00:00+02:00".into())
        }
        Err(_) => Err("not a version (a commit number of _delta_log) nor an RFC 3339 timestamp (2024-05-01T00:00:00Z)".into()),
    }
}

/// The kernel's error, in one line: its Display appends a backtrace when
/// one was captured (RUST_BACKTRACE set), which is for a developer, not for
/// recon's one-line errors.
fn local_file(root: &Path, file_url: &Url, rel: &str) -> Result<PathBuf> {
    file_url
        .to_file_path()
        .map_err(|_| delta_error(root, format!("file path {rel} is not a local file")))
}

/// The log's URL (ending in `/`) and an engine reading it through the
/// object store it names. The engine gets its own store: delta_kernel runs
/// it on its own runtime, and a connection pool must not outlive the
/// runtime its connections were made on.
#[cfg(feature = "remote")]
fn remote_engine(
    root: &Path,
    text: &str,
    storage_options: &[(String, String)],
) -> Result<(
    Url,
    DefaultEngine<delta_kernel_default_engine::executor::tokio::TokioBackgroundExecutor>,
)> {
    let url = Url::parse(&format!("{}/", text.trim_end_matches('/')))
        .map_err(|e| ReconError::input(root, format!("not a valid URL: {e}")))?;
    let (store, _, _) = crate::input::store::Stores::new(storage_options).resolve(url.as_str())?;
    Ok((url, DefaultEngine::builder(store).build()))
}

#[cfg(not(feature = "remote"))]
fn remote_engine(
    root: &Path,
    _text: &str,
    _storage_options: &[(String, String)],
) -> Result<(
    Url,
    DefaultEngine<delta_kernel_default_engine::executor::tokio::TokioBackgroundExecutor>,
)> {
    Err(ReconError::input(
        root,
        "this recon was built without object stores",
    ))
}

fn kernel_error(path: &Path, e: &delta_kernel::KernelError) -> ReconError {
    delta_error(path, one_line(e))
}

fn delta_error(path: &Path, message: impl std::fmt::Display) -> ReconError {
    ReconError::input(path, format!("Delta table: {message}"))
}

/// `e.without_backtrace()`'s message on one line: a backtrace an inner
/// error carries (from its first frame line on) is dropped, other line
/// breaks become "; ".
fn one_line(e: &delta_kernel::KernelError) -> String {
    let text = e.without_backtrace().to_string();
    let frame = |l: &str| {
        let l = l.trim_start();
        l.starts_with("stack backtrace:")
            || l.split_once(": ")
                .is_some_and(|(n, _)| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
    };
    let lines: Vec<&str> = text
        .lines()
        .take_while(|l| !frame(l))
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect();
    lines.join("; ")
}

/// Reads the log of the Delta table at `root` as of `at` and lists what
/// recon must read.
///
/// `root` may be an object-store URL (`s3://bucket/table`): the log is read
/// through object_store with `storage_options`, and each live file is an
/// [`Object`](crate::input::store::Object) pinned to its ETag.
pub(crate) fn open(
    root: &Path,
    at: AsOf,
    storage_options: &[(String, String)],
) -> Result<DeltaVersion> {
    let root_text = root.to_string_lossy();
    let remote = crate::input::store::is_url(&root_text);
    let (url, engine) = if remote {
        remote_engine(root, &root_text, storage_options)?
    } else {
        let absolute =
            std::fs::canonicalize(root).map_err(|e| ReconError::input(root, e.to_string()))?;
        if !absolute.join("_delta_log").is_dir() {
            return Err(ReconError::input(
                root,
                "is not a Delta table: it has no _delta_log/ folder",
            ));
        }
        let url = Url::from_directory_path(&absolute)
            .map_err(|_| ReconError::input(root, "cannot be named as a file:// URL"))?;
        (
            url,
            DefaultEngine::builder(Arc::new(LocalFileSystem::new())).build(),
        )
    };
    #[cfg(feature = "remote")]
    let stores = crate::input::store::Stores::new(storage_options);
    let build = |version: Option<u64>| {
        let mut builder = Snapshot::builder_for(url.as_str());
        if let Some(v) = version {
            builder = builder.at_version(v);
        }
        builder.build(&engine).map_err(|e| kernel_error(root, &e))
    };
    let mut committed_at = None;
    let snapshot = match at {
        AsOf::Latest => build(None)?,
        AsOf::Version(v) => build(Some(v))?,
        AsOf::Timestamp(ms) => {
            // Commit times: in-commit timestamps where the table has them,
            // else the commit files' modification times (the Delta spec).
            let latest = build(None)?;
            let commit = latest_version_as_of(&latest, &engine, ms, HistoryCommitType::Recreatable)
                .map_err(|e| {
                    delta_error(
                        root,
                        format!("no version as of that time: {}", one_line(&e)),
                    )
                })?;
            committed_at = Some(commit.timestamp);
            // The latest version needs no second replay of the log.
            if commit.version == latest.version() {
                latest
            } else {
                build(Some(commit.version))?
            }
        }
    };
    let version = snapshot.version();
    let scan = snapshot
        .clone()
        .scan_builder()
        .build()
        .map_err(|e| kernel_error(root, &e))?;
    let logical = scan.logical_schema().clone();
    let physical_schema: Schema = scan
        .physical_schema()
        .as_ref()
        .try_into_arrow()
        .map_err(|e| delta_error(root, e))?;
    let arrow_schema: Schema = logical
        .as_ref()
        .try_into_arrow()
        .map_err(|e| delta_error(root, e))?;
    let columns = split_columns(&logical, &arrow_schema, &physical_schema);
    struct Visit {
        files: Vec<(
            String,
            HashMap<String, String>,
            delta_kernel::scan::state::DvInfo,
        )>,
    }
    let mut visit = Visit { files: Vec::new() };
    for meta in scan
        .scan_metadata(&engine)
        .map_err(|e| kernel_error(root, &e))?
    {
        let meta = meta.map_err(|e| kernel_error(root, &e))?;
        visit = meta
            .visit_scan_files(visit, |v: &mut Visit, f| {
                v.files.push((f.path, f.partition_values, f.dv_info));
            })
            .map_err(|e| kernel_error(root, &e))?;
    }
    let mut files = Vec::with_capacity(visit.files.len());
    for (rel, partitions, dv) in visit.files {
        let file_url = url
            .join(&rel)
            .map_err(|e| delta_error(root, format!("file path {rel}: {e}")))?;
        // A remote table's files, and files a local log names by an
        // object-store URL (a shallow clone's), are objects.
        #[cfg(feature = "remote")]
        let (path, remote) = if remote || crate::input::store::is_url(file_url.as_str()) {
            let object = stores.head(file_url.as_str())?;
            (object.path(), Some(object))
        } else {
            (local_file(root, &file_url, &rel)?, None)
        };
        #[cfg(not(feature = "remote"))]
        let (path, remote) = (local_file(root, &file_url, &rel)?, None);
        let deleted = dv
            .get_row_indexes(&engine, &url)
            .map_err(|e| delta_error(root, format!("deletion vector of {rel}: {}", one_line(&e))))?
            .map(|mut rows| {
                rows.sort_unstable();
                rows.dedup();
                rows
            });
        let partition_values = columns
            .partition_keys
            .iter()
            .map(|k| partitions.get(k).filter(|v| !v.is_empty()).cloned())
            .collect();
        files.push(LiveFile {
            path,
            remote,
            partition_values,
            deleted,
        });
    }
    // Sorted paths: the table's locators and evidence order do not depend
    // on the log's order.
    files.sort_by(|a, b| a.path.cmp(&b.path));
    Ok(DeltaVersion {
        version,
        committed_at,
        data_columns: columns.data,
        physical_names: columns.physical_names,
        physical_types: columns.physical_types,
        partition_columns: columns.partitions,
        files,
    })
}

/// A Delta schema's columns: the data columns (in the files, under their
/// physical names) and the partition columns (values in the log).
struct Columns {
    data: Vec<Field>,
    physical_names: Vec<String>,
    physical_types: Vec<arrow::datatypes::DataType>,
    partitions: Vec<Field>,
    partition_keys: Vec<String>,
}

/// Splits the logical schema (`logical`, as Arrow: `arrow_schema`) by
/// whether the files' physical schema holds each column.
fn split_columns(
    logical: &delta_kernel::schema::StructType,
    arrow_schema: &Schema,
    physical_schema: &Schema,
) -> Columns {
    let mut c = Columns {
        data: Vec::new(),
        physical_names: Vec::new(),
        physical_types: Vec::new(),
        partitions: Vec::new(),
        partition_keys: Vec::new(),
    };
    for (f, arrow_field) in logical.fields().zip(arrow_schema.fields()) {
        let name = match f.metadata().get(PHYSICAL_NAME) {
            Some(MetadataValue::String(p)) => p.clone(),
            _ => f.name().clone(),
        };
        // The column's type is the Delta schema's (a `timestamp` is a UTC
        // instant whatever the files' annotation), without the metadata:
        // Delta's column-mapping keys stay out of evidence files.
        let field = Field::new(
            f.name(),
            crate::input::types::strip_metadata(arrow_field.data_type()),
            arrow_field.is_nullable(),
        );
        match physical_schema.field_with_name(&name) {
            Ok(p) => {
                c.data.push(field);
                c.physical_names.push(name);
                c.physical_types
                    .push(crate::input::types::strip_metadata(p.data_type()));
            }
            Err(_) => {
                c.partitions.push(field);
                c.partition_keys.push(name);
            }
        }
    }
    c
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sources_name_a_path_and_maybe_a_version_or_a_time() {
        assert_eq!(
            parse_source("delta:warehouse/orders@12"),
            Some(Ok((PathBuf::from("warehouse/orders"), AsOf::Version(12))))
        );
        assert_eq!(
            parse_source("delta:/t"),
            Some(Ok((PathBuf::from("/t"), AsOf::Latest)))
        );
        assert_eq!(
            parse_source("delta:t@2024-01-02T00:00:00Z"),
            Some(Ok((PathBuf::from("t"), AsOf::Timestamp(1_704_153_600_000))))
        );
        assert_eq!(
            parse_source("delta:t@2024-01-02T02:00:00+02:00"),
            Some(Ok((PathBuf::from("t"), AsOf::Timestamp(1_704_153_600_000))))
        );
        let naive = parse_source("delta:t@2024-01-02").unwrap().unwrap_err();
        assert!(naive.contains("time zone"), "{naive}");
        assert!(parse_source("delta:t@latest").unwrap().is_err());
        assert_eq!(parse_source("orders.parquet"), None);
    }
}
