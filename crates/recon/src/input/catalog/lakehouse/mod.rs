//! Tables of the lakehouse formats, read as of a version: the live
//! Parquet files a Delta version or an Iceberg snapshot lists (see
//! [`delta`] and [`iceberg`] for how they are found), the
//! positions their deletes remove, and where each table column is in each
//! file ([`FileColumn`](super::FileColumn)): files written before a column was added read it
//! as NULL, and Iceberg's type promotions are widened exactly.

#[cfg(feature = "delta")]
pub(crate) mod delta;
#[cfg(feature = "iceberg")]
mod equality;
#[cfg(feature = "iceberg")]
pub(crate) use equality::set_key_budget;
#[cfg(feature = "iceberg")]
pub(crate) mod iceberg;

use std::path::Path;
#[cfg(any(feature = "delta", feature = "iceberg"))]
use std::sync::Arc;

#[cfg(any(feature = "delta", feature = "iceberg"))]
use arrow::datatypes::{Field, Schema};

use crate::config::{Format, InputOptions};
use crate::error::{ReconError, Result};
use crate::input::discover::is_iceberg_root;
#[cfg(any(feature = "delta", feature = "iceberg"))]
use crate::input::format::block::BlockMeta;
#[cfg(any(feature = "delta", feature = "iceberg"))]
use crate::input::format::file::{FileColumn, TableFile};
#[cfg(any(feature = "delta", feature = "iceberg"))]
use crate::input::table::Snapshot;
use crate::input::table::Table;
#[cfg(any(feature = "delta", feature = "iceberg"))]
use crate::input::types;

/// A lakehouse table: `delta:PATH[@VERSION]` or a Delta table's root
/// folder, `iceberg:PATH[@SNAPSHOT_ID]` or an Iceberg table's root
/// folder; None for anything else.
pub(in crate::input) fn open(
    path: &Path,
    opts: &InputOptions,
    temp_dir: &Path,
) -> Result<Option<Table>> {
    let text = path.to_string_lossy();
    let delta = text.starts_with("delta:") || path.join("_delta_log").is_dir();
    let iceberg = text.starts_with("iceberg:") || is_iceberg_root(path);
    if !delta && !iceberg {
        return Ok(None);
    }
    if opts.format.is_some_and(|f| f != Format::Parquet) {
        return Err(ReconError::input(
            path,
            format!(
                "is {} table, whose files' format its metadata names: leave out `--source-format`/`--target-format`",
                if delta { "a Delta" } else { "an Iceberg" }
            ),
        ));
    }
    if delta {
        open_delta(path, opts).map(Some)
    } else {
        open_iceberg(path, opts, temp_dir).map(Some)
    }
}

#[cfg(feature = "delta")]
fn open_delta(path: &Path, opts: &InputOptions) -> Result<Table> {
    let text = path.to_string_lossy();
    let (root, at) = match delta::parse_source(&text) {
        Some(parsed) => parsed.map_err(|m| ReconError::input(path, m))?,
        None => (path.to_path_buf(), delta::AsOf::Latest),
    };
    let v = delta::open(&root, at, &opts.storage_options)?;
    let n = v.physical_names.len();
    let mut files = Vec::with_capacity(v.files.len());
    // Per column: some live file lacks it (NULL there), some stores it nullable.
    let mut missing_somewhere = vec![false; n];
    let mut nullable_somewhere = vec![false; n];
    let (mut rows, mut bytes_on_disk) = (0u64, 0u64);
    for lf in &v.files {
        let b = BlockMeta::parquet(&lf.path, lf.remote.as_ref(), opts.int96_unit)?;
        let layout = delta_layout(&v, &lf.path, &b.schema)?;
        for (j, c) in layout.iter().enumerate() {
            match c {
                FileColumn::Missing | FileColumn::Constant(_) => missing_somewhere[j] = true,
                FileColumn::Stored { index, .. } => {
                    nullable_somewhere[j] |= b.schema.field(*index).is_nullable()
                }
            }
        }
        // A file that stores every column as the table reads it pays nothing per row.
        let plain = b.schema.fields().len() == n
            && layout.iter().enumerate().all(
                |(j, c)| matches!(c, FileColumn::Stored { index, widen: None } if *index == j),
            );
        let (file, live_rows) = TableFile::live(
            lf.path.clone(),
            b,
            lf.partition_values.clone(),
            lf.deleted.as_deref(),
            (!plain).then(|| layout.into()),
        );
        rows += live_rows;
        bytes_on_disk += std::fs::metadata(&lf.path).map(|m| m.len()).unwrap_or(0);
        files.push(file);
    }
    let mut fields: Vec<Field> = v
        .data_columns
        .iter()
        .enumerate()
        .map(|(j, f)| {
            // A NULL a file holds, or the NULLs of a file without the
            // column, make the column nullable whatever the schema says.
            let nullable = f.is_nullable() || missing_somewhere[j] || nullable_somewhere[j];
            f.clone().with_nullable(nullable)
        })
        .collect();
    let file_columns = fields.len();
    fields.extend(
        v.partition_columns
            .iter()
            .cloned()
            .map(|f| f.with_nullable(true)),
    );
    let snapshot = Snapshot {
        format: "delta",
        version: Some(i128::from(v.version)),
        detail: v.committed_at.map(|ms| {
            let at = chrono::DateTime::from_timestamp_millis(ms).map_or_else(
                || format!("{ms} ms"),
                |t| t.to_rfc3339_opts(chrono::SecondsFormat::Millis, true),
            );
            format!("committed at {at}")
        }),
        live_files: v.files.len(),
        files_with_deletes: v.with_deletes(),
    };
    lakehouse(
        path,
        opts,
        files,
        fields,
        file_columns,
        v.partition_columns
            .iter()
            .map(|f| f.name().clone())
            .collect(),
        rows,
        bytes_on_disk,
        snapshot,
    )
}

#[cfg(not(feature = "delta"))]
fn open_delta(path: &Path, _opts: &InputOptions) -> Result<Table> {
    Err(ReconError::input(
        path,
        "is a Delta table, but this recon was built without Delta support (cargo feature `delta`)",
    ))
}

#[cfg(feature = "iceberg")]
fn open_iceberg(path: &Path, opts: &InputOptions, temp_dir: &Path) -> Result<Table> {
    let text = path.to_string_lossy();
    let (root, snapshot_id) = match iceberg::parse_source(&text) {
        Some(parsed) => parsed.map_err(|m| ReconError::input(path, m))?,
        None => (path.to_path_buf(), None),
    };
    let s = iceberg::open(&root, snapshot_id, &iceberg::Fs::new(&opts.storage_options))?;
    let fields: Vec<Field> = s.columns.iter().map(|c| c.field.clone()).collect();
    let id = s
        .snapshot_id
        .map_or_else(|| "(none)".to_string(), |i| i.to_string());
    let mut files = Vec::with_capacity(s.files.len());
    let (mut rows, mut bytes_on_disk) = (0u64, 0u64);
    let mut key_sets =
        equality::KeySets::new(&s.equality_deletes, &s.columns, opts.int96_unit, temp_dir);
    let mut files_with_deletes = 0;
    for lf in &s.files {
        let b = lf
            .format
            .open(&lf.path, lf.remote.as_ref(), opts.int96_unit)?;
        // The manifest and the file must agree on what the file holds,
        // or a delete's positions would name other rows.
        let n = b.rows().unwrap_or(0);
        if let Some(expected) = lf.record_count.filter(|&c| c != n) {
            return Err(ReconError::input(
                &lf.path,
                format!("holds {n} rows, but snapshot {id}'s manifest says {expected}: the file is not the one the table wrote"),
            ));
        }
        if let Some(&last) = lf.deleted.as_ref().and_then(|d| d.last()) {
            if last >= n {
                return Err(ReconError::input(
                    &lf.path,
                    format!("a position delete of snapshot {id} removes row {last}, but the file holds {n} rows"),
                ));
            }
        }
        let layout = iceberg_layout(&s, lf, &b.schema, &id)?;
        // Equality deletes become positions too: the rest of the
        // engine knows one kind of delete.
        let deleted = if lf.equality.is_empty() {
            lf.deleted.clone()
        } else {
            let mut all =
                equality::deleted_positions(&lf.path, &b, &layout, &lf.equality, &mut key_sets)?;
            all.extend(lf.deleted.iter().flatten());
            all.sort_unstable();
            all.dedup();
            (!all.is_empty()).then_some(all)
        };
        files_with_deletes += usize::from(deleted.is_some());
        let (file, live_rows) = TableFile::live(
            lf.path.clone(),
            b,
            Vec::new(),
            deleted.as_deref(),
            Some(layout.into()),
        );
        rows += live_rows;
        bytes_on_disk += std::fs::metadata(&lf.path).map(|m| m.len()).unwrap_or(0);
        files.push(file);
    }
    let file_columns = fields.len();
    let shown = s
        .metadata_file
        .strip_prefix(&root)
        .unwrap_or(&s.metadata_file)
        .display()
        .to_string();
    let snapshot = Snapshot {
        format: "iceberg",
        version: s.snapshot_id,
        detail: Some(format!("from {shown}")),
        live_files: s.files.len(),
        files_with_deletes,
    };
    lakehouse(
        path,
        opts,
        files,
        fields,
        file_columns,
        Vec::new(),
        rows,
        bytes_on_disk,
        snapshot,
    )
}

#[cfg(not(feature = "iceberg"))]
fn open_iceberg(path: &Path, _opts: &InputOptions, _temp_dir: &Path) -> Result<Table> {
    Err(ReconError::input(
        path,
        "is an Iceberg table, but this recon was built without Iceberg support (cargo feature `iceberg`)",
    ))
}

/// A table of a lakehouse format's live files.
#[cfg(any(feature = "delta", feature = "iceberg"))]
#[allow(clippy::too_many_arguments)]
fn lakehouse(
    path: &Path,
    opts: &InputOptions,
    files: Vec<TableFile>,
    fields: Vec<Field>,
    file_columns: usize,
    partition_keys: Vec<String>,
    rows: u64,
    bytes_on_disk: u64,
    snapshot: Snapshot,
) -> Result<Table> {
    let n_fields = fields.len();
    let table = Table {
        path: path.to_path_buf(),
        format: Format::Parquet,
        files,
        schema: Arc::new(Schema::new(fields)),
        file_columns,
        partition_keys,
        untyped: vec![false; n_fields],
        rows: Some(rows),
        bytes_on_disk,
        text: opts.text.clone(),
        partition_arrays: Vec::new(),
        parse_errors: Default::default(),
        text_columns: Vec::new(),
        dialect: None,
        spool: None,
        snapshot: Some(snapshot),
        origin: None,
        database: None,
        pass_marks: Default::default(),
    };
    table.finish()
}

/// Where each column of Iceberg snapshot `s` is in the live file `lf`
/// (whose Parquet schema is `schema`), by the spec's column projection, and
/// how its stored type reads as the column's type; `id` names the snapshot
/// in messages.
#[cfg(feature = "iceberg")]
fn iceberg_layout(
    s: &iceberg::IcebergSnapshot,
    lf: &iceberg::LiveFile,
    schema: &Schema,
    id: &str,
) -> Result<Vec<FileColumn>> {
    let by_id: Vec<Option<i32>> = schema
        .fields()
        .iter()
        .map(|f| {
            f.metadata()
                .get(iceberg::FIELD_ID)
                .and_then(|v| v.parse().ok())
        })
        .collect();
    let by_name: Vec<Option<i32>> = schema
        .fields()
        .iter()
        .map(|f| s.name_mapping.as_ref()?.get(f.name()).copied())
        .collect();
    if !by_id.is_empty() && by_id.iter().all(Option::is_none) && by_name.iter().all(Option::is_none)
    {
        return Err(ReconError::input(
            &lf.path,
            "holds no Iceberg field ids, and the table has no name mapping (schema.name-mapping.default) to resolve its columns by",
        ));
    }
    let mut layout = Vec::with_capacity(s.columns.len());
    for c in &s.columns {
        // The spec's column projection, in its order: the file's
        // field id; the identity partition value from the manifest;
        // the name mapping (for file columns without ids); the
        // column's initial default; else NULL (refused if required).
        let found = by_id.iter().position(|&x| x == Some(c.id));
        let found = match found {
            Some(i) => Some(i),
            None => match lf.identity.get(&c.id) {
                Some(value) => {
                    if c.required && value.is_null(0) {
                        return Err(ReconError::input(
                            &lf.path,
                            format!("required column {} (field id {}) has a NULL partition value in snapshot {id}'s manifest", c.field.name(), c.id),
                        ));
                    }
                    layout.push(FileColumn::Constant(value.clone()));
                    continue;
                }
                // Only a file column without a field id of its own.
                None => (0..by_id.len()).find(|&i| by_id[i].is_none() && by_name[i] == Some(c.id)),
            },
        };
        let Some(i) = found else {
            if let Some(value) = &c.initial_default {
                // Written before the column was added, with a
                // default: the value those rows hold (format 3).
                layout.push(FileColumn::Constant(value.clone()));
                continue;
            }
            if c.required {
                // Iceberg cannot add a required column without a
                // default, so its absence is a writer's defect;
                // reading NULL would invent rows.
                return Err(ReconError::input(
                    &lf.path,
                    format!("lacks required column {} (field id {}), and snapshot {id} gives no identity partition value or initial default for it", c.field.name(), c.id),
                ));
            }
            // Written before the column was added: NULL, as Iceberg reads it.
            layout.push(FileColumn::Missing);
            continue;
        };
        let stored = schema.field(i).data_type();
        let table = c.field.data_type();
        let widen = match types::widening(stored, table, types::Declared::default()) {
            // Nested columns match by field id, which names do not
            // show: only the same shape is read, relabelled by position
            // (arrow-rs may name list items differently).
            // Large offsets (a writer's large_string in a map) read as
            // the plain ones the table declares, and children the
            // file stores as required as the table's optional ones.
            _ if stored.is_nested() && stored != table => {
                let narrow = types::narrow_offsets(stored);
                types::loosen(&narrow)
                    .equals_datatype(&types::loosen(table))
                    .then_some(Some(narrow))
            }
            w => w,
        };
        let widen = match widen {
            Some(w) => w,
            None => {
                return Err(ReconError::input(
                    &lf.path,
                    format!(
                        "holds column {} (field id {}) as {stored}, but snapshot {id} declares {table}: not a widening recon can make exactly",
                        c.field.name(),
                        c.id
                    ),
                ))
            }
        };
        layout.push(FileColumn::Stored { index: i, widen });
    }
    Ok(layout)
}

/// Where each data column of Delta version `v` is in one live file, and how
/// its stored type reads as the column's Delta type: exactly (see
/// [`types::widening`] with [`types::DELTA`]: zone-less timestamps are the
/// UTC instants Delta's `timestamp` means, a finer unit must hold no digits
/// below microseconds), else the file is refused naming the column and both
/// types.
#[cfg(feature = "delta")]
fn delta_layout(v: &delta::DeltaVersion, file: &Path, schema: &Schema) -> Result<Vec<FileColumn>> {
    let mut layout = Vec::with_capacity(v.physical_names.len());
    for (j, physical) in v.physical_names.iter().enumerate() {
        let Some(i) = schema.fields().iter().position(|f| f.name() == physical) else {
            // Written before the column was added: NULL, as Delta reads it.
            layout.push(FileColumn::Missing);
            continue;
        };
        let stored = schema.field(i).data_type();
        // The files name nested fields physically; the table logically.
        let (target, table) = (&v.physical_types[j], v.data_columns[j].data_type());
        let widen = match types::widening(stored, target, types::DELTA) {
            Some(None) if target != table => Some(target.clone()),
            Some(w) => w,
            None => {
                return Err(ReconError::input(
                    file,
                    format!(
                        "holds column {} as {stored}, but Delta version {} declares it {table}: not a conversion recon can make exactly",
                        v.data_columns[j].name(),
                        v.version
                    ),
                ))
            }
        };
        layout.push(FileColumn::Stored { index: i, widen });
    }
    Ok(layout)
}
