//! Input tables: discovery, formats, schemas, row locators and reads.
//!
//! A table is one file, a directory of files (read recursively in sorted path
//! order), or a glob pattern. Directory levels named `key=value` (Hive
//! partitions) become columns. Formats: Parquet, Arrow IPC (file and stream),
//! CSV/TSV and NDJSON, the text formats optionally gzip- or zstd-compressed.
//!
//! Every row gets a *locator*: `(file index << 44) | position`, where the
//! position is the row ordinal within the file (Parquet, IPC) or the byte
//! offset of the record in the decompressed file (CSV, NDJSON). Locators
//! increase in table order, and each maps back to its row without a rescan
//! (compressed text and IPC streams excepted: they are read again from the
//! start, because they cannot be entered in the middle).

mod block;
pub mod csv_lex;
#[cfg(feature = "delta")]
pub mod delta;
#[cfg(feature = "iceberg")]
pub mod iceberg;
mod lakehouse;
pub mod parse;
pub mod sniff;
mod source;
mod spool;
mod text;
pub mod types;
pub mod values;

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use arrow::array::{ArrayRef, RecordBatch};
use arrow::datatypes::{DataType, Field, Schema, SchemaRef};

use crate::error::{guard, ReconError, Result};
use crate::side::Side;

pub use crate::config::{Encoding, Format, InputOptions, Int96Unit, TextOptions};
pub use block::{int96_exact, BlockMeta};
pub use source::{BatchesSource, Source, StreamSource};
pub use spool::Spool;
pub use text::{sample, ParseErrors, RENAMED_HEADER};

/// Bits of a locator that hold the position within a file.
pub const POS_BITS: u32 = 44;
/// Most files one table may have (the locator's file bits).
pub const MAX_FILES: usize = 1 << (64 - POS_BITS);

#[inline]
pub fn pack(file: usize, pos: u64) -> u64 {
    ((file as u64) << POS_BITS) | pos
}

#[inline]
pub fn unpack(locator: u64) -> (usize, u64) {
    (
        (locator >> POS_BITS) as usize,
        locator & ((1u64 << POS_BITS) - 1),
    )
}

/// Compression of a text file, from its name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Compression {
    None,
    Gzip,
    Zstd,
}

/// Splits a file name into (format by extension, compression).
fn classify(name: &str) -> (Option<Format>, Compression) {
    let lower = name.to_ascii_lowercase();
    let (stem, compression) = if let Some(s) = lower.strip_suffix(".gz") {
        (s.to_string(), Compression::Gzip)
    } else if let Some(s) = lower.strip_suffix(".zst") {
        (s.to_string(), Compression::Zstd)
    } else {
        (lower.clone(), Compression::None)
    };
    let ext = stem.rsplit_once('.').map(|(_, e)| e).unwrap_or("");
    let format = match ext {
        "parquet" | "pq" => Some(Format::Parquet),
        "arrow" | "feather" | "ipc" | "arrows" => Some(Format::Ipc),
        "csv" => Some(Format::Csv),
        "tsv" | "tab" => Some(Format::Tsv),
        // TPC-H's dbgen and other legacy exports: pipe-delimited, no header.
        "tbl" => Some(Format::Csv),
        "jsonl" | "ndjson" => Some(Format::Ndjson),
        _ => None,
    };
    (format, compression)
}

/// Recognizes binary formats by their magic bytes, for files without a
/// known extension (Hive writes `000000_0`). Text is never guessed.
fn sniff(path: &Path) -> Option<Format> {
    use std::io::Read;
    let mut head = [0u8; 6];
    let n = std::fs::File::open(path).ok()?.read(&mut head).ok()?;
    magic_format(&head[..n])
}

/// Parquet or Arrow IPC, by the first bytes of a file.
fn magic_format(head: &[u8]) -> Option<Format> {
    match head {
        [b'P', b'A', b'R', b'1', ..] => Some(Format::Parquet),
        [b'A', b'R', b'R', b'O', b'W', b'1'] => Some(Format::Ipc),
        [0xff, 0xff, 0xff, 0xff, ..] => Some(Format::Ipc),
        _ => None,
    }
}

/// One file of a table.
pub struct TableFile {
    pub path: PathBuf,
    pub compression: Compression,
    /// Raw Hive partition values, one per `Table::partition_keys` (None: NULL).
    partition_values: Vec<Option<String>>,
    /// Footer metadata of Parquet and IPC files.
    block: Option<BlockMeta>,
    /// Rows (block formats) or decompressed bytes (text) of the file; text
    /// files learn it during the scan.
    extent: AtomicU64,
    /// Text decoded to UTF-8 as it is read (UTF-16, Shift_JIS, ...); its
    /// locators are offsets in the decoded text.
    pub decode: Option<&'static encoding_rs::Encoding>,
    /// Rows (positions, ascending) a table format's deletes remove: they
    /// are skipped by every read (a Delta deletion vector, Iceberg
    /// position deletes).
    pub deleted: Option<Arc<[u64]>>,
    /// Where each of the table's file columns is in this file and how its
    /// stored type reads as the table's, for table formats whose files may
    /// predate the schema and for files of a plain table that store a
    /// column in a narrower type (None: column `i` is the file's column
    /// `i`, of the table's type).
    columns: Option<Arc<[FileColumn]>>,
}

/// Where a table column is in one file of a table.
#[derive(Debug, Clone)]
pub enum FileColumn {
    /// The file's column `index`. When `widen` names a type, its values are
    /// converted exactly to it ([`types::convert`]: an Iceberg promotion, a
    /// Delta `timestamp` stored zone-less, a plain file's narrower type),
    /// then given the table type's nested field names if they differ (a
    /// Delta column mapping's physical names, an Iceberg file's list items).
    Stored {
        index: usize,
        widen: Option<DataType>,
    },
    /// Not in the file (written before the column was added): NULL.
    Missing,
}

impl TableFile {
    /// A live Parquet file of a lakehouse table, with the positions its
    /// deletes remove and where the table's columns are in it.
    #[cfg(any(feature = "delta", feature = "iceberg"))]
    fn live(
        path: PathBuf,
        block: BlockMeta,
        partition_values: Vec<Option<String>>,
        deleted: Option<&[u64]>,
        columns: Option<Arc<[FileColumn]>>,
    ) -> (TableFile, u64) {
        let n = block.rows().unwrap_or(0);
        let gone = deleted.map_or(0, |d| d.iter().filter(|&&r| r < n).count() as u64);
        let file = TableFile {
            path,
            compression: Compression::None,
            partition_values,
            block: Some(block),
            // Positions, deleted ones included: locators' ordinals span them.
            extent: AtomicU64::new(n),
            decode: None,
            deleted: deleted.map(Arc::from),
            columns,
        };
        (file, n - gone)
    }

    /// The encoding its values arrive in: UTF-8 once decoded.
    pub fn encoding(&self, table: Encoding) -> Encoding {
        if self.decode.is_some() {
            Encoding::Utf8
        } else {
            table
        }
    }

    pub fn extent(&self) -> u64 {
        self.extent.load(Ordering::Relaxed)
    }

    pub(crate) fn set_extent(&self, n: u64) {
        self.extent.store(n, Ordering::Relaxed);
    }
}

/// A table: one or more files of one format and one schema.
pub struct Table {
    /// The path the user gave.
    pub path: PathBuf,
    pub format: Format,
    pub files: Vec<TableFile>,
    /// File columns, then Hive partition columns.
    pub schema: SchemaRef,
    /// Columns stored in the files; the rest come from partition directories.
    pub file_columns: usize,
    pub partition_keys: Vec<String>,
    /// Per column: its type was not stored but comes from text (CSV fields,
    /// NDJSON scalars, partition values), so it may take the other side's type.
    pub untyped: Vec<bool>,
    /// Row count from metadata, when the format stores one.
    pub rows: Option<u64>,
    /// Total size of the files on disk.
    pub bytes_on_disk: u64,
    pub text: TextOptions,
    /// Per file, per partition column: the value as a one-row typed array.
    partition_arrays: Vec<Vec<ArrayRef>>,
    /// Text values that failed to parse and were counted (`--max-parse-errors`).
    pub parse_errors: text::ParseErrors,
    /// The CSV dialect in words, noting what was sniffed (None: not CSV).
    pub dialect: Option<String>,
    /// Per column: how its text is read before and while parsing (trim,
    /// empty-as-NULL, date patterns); plain for stored columns.
    pub text_columns: Vec<values::TextColumn>,
    /// For `-` or a pipe: the copy the table is read from (its one file),
    /// deleted when the table is dropped.
    pub spool: Option<Spool>,
    /// A lakehouse table read as of a version: its format and what was read
    /// ("delta version 3: 4 live files, 1 with a deletion vector").
    pub snapshot: Option<Snapshot>,
    /// Arrow data a library caller gave ("arrow (in memory)", "arrow
    /// stream"), for the report; None for tables named by a spec.
    pub origin: Option<&'static str>,
}

/// A lakehouse table's version, for the report and the schema screen.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Snapshot {
    /// `delta` or `iceberg`.
    pub format: &'static str,
    /// The Delta version or the Iceberg snapshot id (None: an Iceberg table
    /// with no snapshot yet).
    pub version: Option<i64>,
    /// How the version was found: the Iceberg metadata file read (relative
    /// to the table's folder), the commit time of a Delta version pinned by
    /// a timestamp.
    pub detail: Option<String>,
    pub live_files: usize,
    /// Files some of whose rows deletes remove.
    pub files_with_deletes: usize,
}

impl Snapshot {
    pub fn describe(&self) -> String {
        let what = match (self.format, self.version) {
            ("delta", Some(v)) => format!("delta version {v}"),
            (f, Some(v)) => format!("{f} snapshot {v}"),
            (f, None) => format!("{f} table with no snapshot"),
        };
        format!(
            "{what}{}: {} live file{}{}",
            self.detail
                .as_ref()
                .map_or_else(String::new, |d| format!(" ({d})")),
            self.live_files,
            if self.live_files == 1 { "" } else { "s" },
            match self.files_with_deletes {
                0 => String::new(),
                n => format!(", {n} with deleted rows"),
            }
        )
    }
}

/// Refuses the CSV-only options (`--skip-rows`, `--comment`) that reach no
/// CSV/TSV table: an option that cannot apply is an error, never dropped
/// unseen. One given for both sides applies when either side is CSV/TSV.
pub fn refuse_unused_csv_options(sides: [(&InputOptions, &Table); 2]) -> Result<()> {
    let csv = |t: &Table| matches!(t.format, Format::Csv | Format::Tsv);
    for (opts, _) in sides {
        for &flag in &opts.csv_only {
            let reached: Vec<&Table> = sides
                .iter()
                .filter(|(o, _)| o.csv_only.contains(&flag))
                .map(|(_, t)| *t)
                .collect();
            if reached.iter().any(|t| csv(t)) {
                continue;
            }
            let what: Vec<String> = reached
                .iter()
                .map(|t| format!("{} is {}", t.path.display(), t.format.name()))
                .collect();
            return Err(ReconError::Usage(format!(
                "{flag} applies to CSV/TSV files only, and {}",
                what.join(" and ")
            )));
        }
    }
    Ok(())
}

/// `e`, naming `to` where it named the file `from`.
fn renamed(e: ReconError, from: &Path, to: &Path) -> ReconError {
    let rename = |p: PathBuf| if p == from { to.to_path_buf() } else { p };
    match e {
        ReconError::Input { path, message } => ReconError::Input {
            path: rename(path),
            message,
        },
        ReconError::Parquet { path, source } => ReconError::Parquet {
            path: rename(path),
            source,
        },
        ReconError::Arrow { path, source } => ReconError::Arrow {
            path: rename(path),
            source,
        },
        other => other,
    }
}

/// Field metadata key listing the rules (`trim`, `empty_as_null`) applied to
/// a text column's raw text before it was parsed into a typed column; the
/// plan treats those rules as done rather than refusing them on a number.
pub const TEXT_RULES: &str = "recon.text_rules";

/// The rows of a batch (positions `first..first + n` of `file`) that
/// `deleted` (ascending positions) leaves, with their locators.
fn skip_deleted(
    columns: &[ArrayRef],
    first: u64,
    n: usize,
    deleted: &[u64],
    file: usize,
) -> std::result::Result<(Vec<ArrayRef>, Vec<u64>), arrow::error::ArrowError> {
    let start = deleted.partition_point(|&r| r < first);
    let end = deleted.partition_point(|&r| r < first + n as u64);
    let gone = &deleted[start..end];
    let mut keep = vec![true; n];
    for &r in gone {
        keep[(r - first) as usize] = false;
    }
    let locs: Vec<u64> = (0..n as u64)
        .filter(|&i| keep[i as usize])
        .map(|i| pack(file, first + i))
        .collect();
    if gone.is_empty() {
        return Ok((columns.to_vec(), locs));
    }
    let mask = arrow::array::BooleanArray::from(keep);
    let out = columns
        .iter()
        .map(|c| arrow::compute::filter(c.as_ref(), &mask))
        .collect::<std::result::Result<Vec<_>, _>>()?;
    Ok((out, locs))
}

/// The file columns that hold table columns `projected` (ascending).
fn stored_columns(f: &TableFile, projected: &[usize]) -> Vec<usize> {
    let Some(layout) = &f.columns else {
        return projected.to_vec();
    };
    let mut stored: Vec<usize> = projected
        .iter()
        .filter_map(|&c| match &layout[c] {
            FileColumn::Stored { index, .. } => Some(*index),
            FileColumn::Missing => None,
        })
        .collect();
    stored.sort_unstable();
    stored
}

/// Spark and friends leave _SUCCESS, _committed_*, .crc and other markers
/// beside the data; names starting with `_` or `.` are never data.
fn is_marker(name: &str) -> bool {
    name.starts_with('_') || name.starts_with('.')
}

/// A file found for a table, with its Hive partition values.
struct Found {
    path: PathBuf,
    partitions: Vec<(String, Option<String>)>,
}

fn collect_files(root: &Path, dir: &Path, out: &mut Vec<Found>) -> Result<()> {
    let entries = std::fs::read_dir(dir).map_err(|e| ReconError::input(dir, e.to_string()))?;
    let mut children = Vec::new();
    for entry in entries {
        let entry = entry.map_err(|e| ReconError::input(dir, e.to_string()))?;
        // file_type() does not follow symlinks, so a link cycle cannot recurse forever.
        let kind = entry
            .file_type()
            .map_err(|e| ReconError::input(entry.path(), e.to_string()))?;
        children.push((entry.path(), kind));
    }
    children.sort_by(|a, b| a.0.cmp(&b.0));
    for (child, kind) in children {
        let name = child.file_name().and_then(|n| n.to_str()).unwrap_or("");
        if is_marker(name) {
            continue;
        }
        if kind.is_dir() {
            collect_files(root, &child, out)?;
        } else if kind.is_symlink() && child.is_dir() {
            return Err(ReconError::input(
                &child,
                "symlinked directory inside a table is not followed; pass the real path",
            ));
        } else {
            out.push(Found {
                partitions: hive_parts(root, &child)?,
                path: child,
            });
        }
    }
    Ok(())
}

/// The `key=value` directory levels between `root` and `file`.
fn hive_parts(root: &Path, file: &Path) -> Result<Vec<(String, Option<String>)>> {
    let Ok(rel) = file.strip_prefix(root) else {
        return Err(ReconError::Internal(format!(
            "{} is outside its table root {}",
            file.display(),
            root.display()
        )));
    };
    let mut parts = Vec::new();
    let dirs: Vec<_> = rel.components().collect();
    for c in dirs.iter().take(dirs.len().saturating_sub(1)) {
        let s = c.as_os_str().to_string_lossy();
        if let Some((k, v)) = s.split_once('=') {
            if k.is_empty() {
                return Err(ReconError::input(
                    file,
                    "partition directory with an empty key",
                ));
            }
            let value = if v == "__HIVE_DEFAULT_PARTITION__" {
                None
            } else {
                Some(percent_decode(v).ok_or_else(|| {
                    ReconError::input(file, format!("partition value '{v}' is badly escaped"))
                })?)
            };
            parts.push((percent_decode(k).unwrap_or_else(|| k.to_string()), value));
        }
    }
    Ok(parts)
}

/// Hive escapes special characters in partition paths as %XX.
fn percent_decode(s: &str) -> Option<String> {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%' {
            let hex = std::str::from_utf8(b.get(i + 1..i + 3)?).ok()?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else {
            out.push(b[i]);
            i += 1;
        }
    }
    String::from_utf8(out).ok()
}

fn has_glob_chars(s: &str) -> bool {
    s.contains(['*', '?', '['])
}

/// Lists the files of `path` (a file, a directory, or a glob pattern).
/// What a folder of a lakehouse table format holds besides live data.
const TABLE_FOLDER_WHY: &str = "its folder also holds the files of older versions (until VACUUM or expiry removes them) and files whose rows later deletes remove, so reading every Parquet file in it would count dead and deleted rows";

/// Refuses a directory that is (or lies inside) a Delta Lake or Iceberg
/// table: `_delta_log/` in it or an ancestor, or Iceberg's
/// `metadata/*.metadata.json` beside it or in an ancestor. recon reads
/// plain folders of files; reading a table folder as one would silently
/// count rows the table no longer holds.
fn refuse_table_folder(dir: &Path) -> Result<()> {
    let absolute = std::fs::canonicalize(dir).unwrap_or_else(|_| dir.to_path_buf());
    for level in absolute.ancestors() {
        if level.join("_delta_log").is_dir() {
            return Err(ReconError::input(
                dir,
                format!(
                    "this is inside a Delta table ({} has _delta_log/): {TABLE_FOLDER_WHY}. {}",
                    level.display(),
                    if cfg!(feature = "delta") {
                        format!("Read the table with delta:{} (its latest version), or pin one with delta:{}@VERSION", level.display(), level.display())
                    } else {
                        "This recon was built without Delta support: compare an export of the version you mean".to_string()
                    }
                ),
            ));
        }
        if is_iceberg_root(level) {
            return Err(ReconError::input(
                dir,
                format!(
                    "this is inside an Iceberg table ({} holds *.metadata.json): {TABLE_FOLDER_WHY}. {}",
                    level.join("metadata").display(),
                    if cfg!(feature = "iceberg") {
                        format!("Read the table with iceberg:{} (its current snapshot), or pin one with iceberg:{}@SNAPSHOT_ID", level.display(), level.display())
                    } else {
                        "This recon was built without Iceberg support: compare an export of the snapshot you mean".to_string()
                    }
                ),
            ));
        }
    }
    Ok(())
}

/// True when `dir` is an Iceberg table's root: its `metadata/` folder holds
/// a `*.metadata.json`.
fn is_iceberg_root(dir: &Path) -> bool {
    std::fs::read_dir(dir.join("metadata"))
        .ok()
        .is_some_and(|entries| {
            entries
                .flatten()
                .any(|e| e.file_name().to_str().is_some_and(is_metadata_name))
        })
}

/// An Iceberg table metadata file's name: `….metadata.json`, maybe gzipped.
fn is_metadata_name(name: &str) -> bool {
    name.ends_with(".metadata.json") || name.ends_with(".metadata.json.gz")
}

fn discover(path: &Path) -> Result<Vec<Found>> {
    let text = path.to_string_lossy();
    match std::fs::metadata(path) {
        Ok(meta) if meta.is_file() => {
            return Ok(vec![Found {
                path: path.to_path_buf(),
                partitions: Vec::new(),
            }])
        }
        Ok(meta) if !meta.is_dir() => {
            return Err(ReconError::input(
                path,
                "is not a regular file, directory or pipe: recon reads its inputs more than once, so write it to a file first",
            ));
        }
        Ok(_) => {
            refuse_table_folder(path)?;
            let mut files = Vec::new();
            collect_files(path, path, &mut files)?;
            if files.is_empty() {
                return Err(ReconError::input(path, "directory holds no data files"));
            }
            return Ok(files);
        }
        Err(e) if !has_glob_chars(&text) => {
            return Err(ReconError::input(path, e.to_string()));
        }
        Err(_) => {}
    }
    // A glob: Hive levels are counted from the pattern's literal prefix.
    // `./` is dropped from both sides: glob reports `./src/x` as `src/x`.
    let plain = |p: &Path| -> PathBuf {
        p.components()
            .filter(|c| !matches!(c, std::path::Component::CurDir))
            .collect()
    };
    let root: PathBuf = plain(path)
        .components()
        .take_while(|c| !has_glob_chars(&c.as_os_str().to_string_lossy()))
        .collect();
    let paths =
        glob::glob(&text).map_err(|e| ReconError::input(path, format!("bad glob pattern: {e}")))?;
    let mut matched: Vec<PathBuf> = Vec::new();
    for p in paths {
        let p = p.map_err(|e| ReconError::input(e.path(), e.error().to_string()))?;
        let p = plain(&p);
        let rel = p.strip_prefix(&root).map_err(|_| {
            ReconError::Internal(format!(
                "glob match {} is outside its root {}",
                p.display(),
                root.display()
            ))
        })?;
        // Markers at any level below the root (`_temporary/…`, `.hidden/…`) are not data.
        if rel
            .components()
            .any(|c| is_marker(&c.as_os_str().to_string_lossy()))
        {
            continue;
        }
        matched.push(p);
    }
    let mut files = Vec::new();
    for p in matched {
        if p.is_dir() {
            collect_files(&root, &p, &mut files)?;
        } else {
            files.push(Found {
                partitions: hive_parts(&root, &p)?,
                path: p,
            });
        }
    }
    // `**` matches a directory and the files inside it: read each file once.
    files.sort_by(|a, b| a.path.cmp(&b.path));
    files.dedup_by(|a, b| a.path == b.path);
    if files.is_empty() {
        return Err(ReconError::input(path, "glob pattern matches no files"));
    }
    Ok(files)
}

fn same_fields(a: &Field, b: &Field) -> bool {
    a.name() == b.name() && a.data_type() == b.data_type()
}

/// Merges one file's schema into the table's, which must hold the same columns.
fn merge_schema(
    table: &Path,
    file: &Path,
    into: &mut Option<SchemaRef>,
    next: SchemaRef,
) -> Result<()> {
    let Some(first) = into.as_ref() else {
        *into = Some(next);
        return Ok(());
    };
    let same = first.fields().len() == next.fields().len()
        && first
            .fields()
            .iter()
            .zip(next.fields())
            .all(|(a, b)| same_fields(a, b));
    if !same {
        return Err(ReconError::input(
            file,
            format!(
                "schema differs from the other files of {}: all files of a table must share one schema",
                table.display()
            ),
        ));
    }
    // Nullability may differ between files; the table's field is nullable if any is.
    let merged: Vec<Field> = first
        .fields()
        .iter()
        .zip(next.fields())
        .map(|(a, b)| {
            a.as_ref()
                .clone()
                .with_nullable(a.is_nullable() || b.is_nullable())
        })
        .collect();
    *into = Some(Arc::new(Schema::new_with_metadata(
        merged,
        first.metadata().clone(),
    )));
    Ok(())
}

/// The schema of a table of Parquet or IPC files, which must hold the same
/// columns; where files store a column in different types, the table reads
/// the one type [`types::unify`] finds for them, and each file storing
/// another type gets the layout that converts it exactly. A difference no
/// type holds exactly (lossy or ambiguous) is refused naming both files.
fn unify_block_schemas(table: &Path, files: &mut [TableFile]) -> Result<SchemaRef> {
    let schema_of = |tf: &TableFile| {
        tf.block
            .as_ref()
            .map(|b| b.schema.clone())
            .ok_or_else(|| ReconError::Internal("block file without metadata".into()))
    };
    let first = schema_of(&files[0])?;
    let mut fields: Vec<Field> = first.fields().iter().map(|f| f.as_ref().clone()).collect();
    // Per column: the file whose type the table's type last came from, for messages.
    let mut origin = vec![0usize; fields.len()];
    for k in 1..files.len() {
        let next = schema_of(&files[k])?;
        let same_names = next.fields().len() == fields.len()
            && next
                .fields()
                .iter()
                .zip(&fields)
                .all(|(a, b)| a.name() == b.name());
        if !same_names {
            return Err(ReconError::input(
                &files[k].path,
                format!(
                    "schema differs from the other files of {}: all files of a table must hold the same columns",
                    table.display()
                ),
            ));
        }
        for (j, f) in next.fields().iter().enumerate() {
            let t = &fields[j];
            let unified = types::unify(t.data_type(), f.data_type()).ok_or_else(|| {
                ReconError::input(
                    &files[k].path,
                    format!(
                        "holds column {} as {}, but {} holds it as {}: no type holds the values of both exactly, so they are not read as one column",
                        f.name(),
                        f.data_type(),
                        files[origin[j]].path.display(),
                        t.data_type()
                    ),
                )
            })?;
            if &unified != t.data_type() {
                origin[j] = k;
            }
            // Nullability may differ between files; the table's field is nullable if any is.
            let nullable = t.is_nullable() || f.is_nullable();
            fields[j] = t.clone().with_data_type(unified).with_nullable(nullable);
        }
    }
    for tf in files.iter_mut() {
        let s = schema_of(tf)?;
        let layout = s
            .fields()
            .iter()
            .zip(&fields)
            .enumerate()
            .map(|(index, (f, t))| {
                types::widening(f.data_type(), t.data_type(), Default::default())
                    .map(|widen| FileColumn::Stored { index, widen })
                    .ok_or_else(|| {
                        ReconError::Internal(format!(
                            "{} does not widen to its unified type {}",
                            f.data_type(),
                            t.data_type()
                        ))
                    })
            })
            .collect::<Result<Vec<_>>>()?;
        // Files of the table's types keep no layout: their reads pay nothing.
        if layout
            .iter()
            .any(|c| matches!(c, FileColumn::Stored { widen: Some(_), .. }))
        {
            tf.columns = Some(layout.into());
        }
    }
    Ok(Arc::new(Schema::new_with_metadata(
        fields,
        first.metadata().clone(),
    )))
}

impl Table {
    /// Opens a table reading only metadata: footers for Parquet and IPC, the
    /// header line (or first lines) for text. Text columns are Utf8 until
    /// `plan::typing::resolve` gives them the other side's types.
    ///
    /// `-` (stdin) and a pipe are first copied to a spool file in a run
    /// directory under `temp_dir` (see [`Spool`]); `side` names the format
    /// flag in the error when their format is unknown.
    ///
    /// Arrow data: batches in memory are read in place; a stream is first
    /// copied to the run directory as an Arrow IPC file (see [`Source`]).
    pub fn open(
        source: &Source,
        opts: &InputOptions,
        side: Side,
        temp_dir: &Path,
    ) -> Result<Table> {
        match source {
            Source::Spec(path) => Table::open_spec(path, opts, side, temp_dir),
            Source::Batches(b) => Table::in_memory(b, opts),
            Source::Stream(s) => {
                let spool = spool::spool_arrow(&s.name, s.take()?, temp_dir)?;
                let ipc = InputOptions {
                    format: Some(Format::Ipc),
                    ..opts.clone()
                };
                let mut table = Table::open_spool(spool, &ipc, &s.name)?;
                table.origin = Some("arrow stream");
                Ok(table)
            }
        }
    }

    fn open_spec(path: &Path, opts: &InputOptions, side: Side, temp_dir: &Path) -> Result<Table> {
        if let Some(table) = Table::open_lakehouse(path, opts)? {
            return Ok(table);
        }
        let Some(kind) = spool::stream_kind(path) else {
            return Table::open_files(path, opts);
        };
        let (spool, opts) = spool::spool(path, kind, opts, side, temp_dir)?;
        Table::open_spool(spool, &opts, path)
    }

    /// The table of a spooled input, named `name` (what the caller gave),
    /// keeping the spool for as long as the table lives.
    fn open_spool(spool: Spool, opts: &InputOptions, name: &Path) -> Result<Table> {
        // What is wrong with the header or the footer is wrong with the input.
        let mut table =
            Table::open_files(spool.path(), opts).map_err(|e| renamed(e, spool.path(), name))?;
        table.path = name.to_path_buf();
        table.spool = Some(spool);
        Ok(table)
    }

    fn open_files(path: &Path, opts: &InputOptions) -> Result<Table> {
        let found = discover(path)?;
        if found.len() > MAX_FILES {
            return Err(ReconError::input(
                path,
                format!("more than {MAX_FILES} files in one table"),
            ));
        }
        // One format per table.
        let mut format = opts.format;
        let mut files = Vec::with_capacity(found.len());
        for f in &found {
            let name = f.path.file_name().and_then(|n| n.to_str()).unwrap_or("");
            let (by_name, compression) = classify(name);
            let this = match (opts.format, by_name) {
                (Some(explicit), _) => explicit,
                (None, Some(fmt)) => fmt,
                (None, None) if sniff(&f.path).is_some() => sniff(&f.path).unwrap_or(Format::Parquet),
                (None, None) => {
                    return Err(ReconError::input(
                        &f.path,
                        "unknown file extension (expected .parquet, .arrow/.feather/.ipc, .csv, .tsv, .jsonl/.ndjson, optionally .gz/.zst); pass --source-format/--target-format to choose",
                    ))
                }
            };
            match format {
                None => format = Some(this),
                Some(prev) if prev != this => {
                    return Err(ReconError::input(
                        &f.path,
                        format!(
                            "is {} but other files of {} are {}: one table holds one format",
                            this.name(),
                            path.display(),
                            prev.name()
                        ),
                    ))
                }
                Some(_) => {}
            }
            if compression != Compression::None && !this.is_text() {
                return Err(ReconError::input(
                    &f.path,
                    format!(
                        "compressed {} files are not supported (only CSV/TSV/NDJSON may be .gz or .zst)",
                        this.name()
                    ),
                ));
            }
            files.push(TableFile {
                path: f.path.clone(),
                compression,
                partition_values: Vec::new(),
                block: None,
                extent: AtomicU64::new(0),
                decode: None,
                deleted: None,
                columns: None,
            });
        }
        let format = format.ok_or_else(|| ReconError::input(path, "no data files"))?;

        // Hive partition keys: the same keys, in the same order, on every file.
        let keys: Vec<String> = found[0].partitions.iter().map(|p| p.0.clone()).collect();
        for (f, tf) in found.iter().zip(files.iter_mut()) {
            let these: Vec<&String> = f.partitions.iter().map(|p| &p.0).collect();
            if these.len() != keys.len() || these.iter().zip(&keys).any(|(a, b)| *a != b) {
                return Err(ReconError::input(
                    &f.path,
                    format!(
                        "partition directories ({}) differ from the table's first file ({})",
                        these
                            .iter()
                            .map(|s| s.as_str())
                            .collect::<Vec<_>>()
                            .join("/"),
                        keys.join("/")
                    ),
                ));
            }
            tf.partition_values = f.partitions.iter().map(|p| p.1.clone()).collect();
        }

        let mut text = opts.text.clone();
        if format == Format::Tsv && text.delimiter.is_none() {
            text.delimiter = Some(b'\t');
            text.sniff.delimiter = false;
        }
        // `.tbl` files (TPC-H dbgen) are '|'-delimited without a header.
        let tbl = files.iter().all(|f| {
            let name = f.path.to_string_lossy().to_ascii_lowercase();
            [".tbl", ".tbl.gz", ".tbl.zst"]
                .iter()
                .any(|e| name.ends_with(e))
        });
        if format == Format::Csv && tbl && opts.format.is_none() {
            text.delimiter.get_or_insert(b'|');
            text.header = false;
            text.sniff.delimiter = false;
            text.sniff.header = false;
        }
        if format == Format::Ndjson {
            text.sniff = Default::default();
            // CSV-only: a pair with no CSV side refuses them (see refuse_unused_csv_options).
            text.skip_rows = 0;
            text.comment = None;
        }
        // What the user gave (or the format implies), for sniffing each file.
        let (given, given_header, to_sniff) = (text.dialect(), text.header, text.sniff);
        let mut sniffed: Option<(sniff::Sniffed, PathBuf)> = None;
        let many_files = files.len() > 1;
        let mut bytes_on_disk = 0u64;
        let mut schema: Option<SchemaRef> = None;
        let mut rows: Option<u64> = Some(0);
        for tf in files.iter_mut() {
            let meta = std::fs::metadata(&tf.path)
                .map_err(|e| ReconError::input(&tf.path, e.to_string()))?;
            bytes_on_disk += meta.len();
            if meta.len() == 0 && !format.is_text() {
                return Err(ReconError::input(
                    &tf.path,
                    format!("file is empty (0 bytes), not {}", format.name()),
                ));
            }
            // Open for reading up front, so permission problems surface before any work.
            std::fs::File::open(&tf.path)
                .map_err(|e| ReconError::input(&tf.path, e.to_string()))?;
            match format {
                Format::Parquet | Format::Ipc => {
                    let b = if format == Format::Parquet {
                        BlockMeta::parquet(&tf.path, opts.int96_unit)?
                    } else {
                        BlockMeta::ipc(&tf.path)?
                    };
                    rows = match (rows, b.rows()) {
                        (Some(a), Some(n)) => Some(a.checked_add(n).ok_or_else(|| {
                            ReconError::input(&tf.path, "row count in metadata overflows")
                        })?),
                        _ => None,
                    };
                    if let Some(n) = b.rows() {
                        if n >= 1 << POS_BITS {
                            return Err(ReconError::input(
                                &tf.path,
                                "more than 2^44 rows in one file",
                            ));
                        }
                        tf.extent.store(n, Ordering::Relaxed);
                    }
                    tf.block = Some(b);
                }
                // An empty part file (Spark and Hive write them) holds no rows
                // and no header; it takes the columns of the table's other files.
                Format::Csv | Format::Tsv | Format::Ndjson if meta.len() == 0 && many_files => {
                    rows = None;
                }
                Format::Csv | Format::Tsv | Format::Ndjson => {
                    // NDJSON is decoded whole: arrow-json reads UTF-8 only.
                    let enc = match text.encoding {
                        Encoding::Bytes(e) if format == Format::Ndjson => Encoding::Stream(e),
                        e => e,
                    };
                    tf.decode = text::file_decoding(&tf.path, tf.compression, enc)?;
                    let head = if to_sniff.any() {
                        Some(text::sniff_head(tf, &text)?)
                    } else {
                        None
                    };
                    // An empty file has nothing to sniff; reading it says it is empty.
                    if let Some((head, eof, before)) = head.filter(|(h, _, _)| !h.is_empty()) {
                        let found = sniff::sniff(&head, eof, given, given_header, to_sniff, before)
                            .map_err(|m| ReconError::input(&tf.path, m))?;
                        match &sniffed {
                            None => {
                                text.delimiter = Some(found.dialect.delimiter);
                                text.quote = found.dialect.quote;
                                text.escape = found.dialect.escape;
                                text.header = found.header;
                                text.header_unsure = found.header_unsure;
                                text.quote_unproven = found.quote_unproven;
                                if found.preamble {
                                    text.skip_rows = found.skip_rows;
                                }
                                text.preamble_hint = found.hint.map(|h| (h.lines, h.words()));
                                sniffed = Some((found, tf.path.clone()));
                            }
                            Some((first, first_path))
                                if first.dialect != found.dialect
                                    || first.header != found.header
                                    || (first.preamble || found.preamble)
                                        && first.skip_rows != found.skip_rows =>
                            {
                                let words = |f: &sniff::Sniffed| {
                                    let skip = if f.preamble { f.skip_rows } else { 0 };
                                    let sniff = crate::config::Sniff {
                                        preamble: true,
                                        ..Default::default()
                                    };
                                    sniff::describe(&f.dialect, f.header, sniff, false, skip)
                                };
                                return Err(ReconError::input(
                                    &tf.path,
                                    format!(
                                        "reads as {}, but {} reads as {}: one table holds one dialect; pass the options it is written with",
                                        words(&found),
                                        first_path.display(),
                                        words(first)
                                    ),
                                ));
                            }
                            // One file's evidence settles it for the table.
                            Some(_) => {
                                text.header_unsure &= found.header_unsure;
                                text.quote_unproven &= found.quote_unproven;
                            }
                        }
                    }
                    let (s, trailing) = text::header_schema(tf, format, &text)?;
                    // The files of one table agree on the dialect.
                    match text.trailing_delimiter {
                        None => text.trailing_delimiter = Some(trailing),
                        Some(t) if t != trailing => {
                            return Err(ReconError::input(
                                &tf.path,
                                format!(
                                    "{} a trailing delimiter on every line but other files of {} {}: one table holds one dialect (pass --trailing-delimiter if it is right)",
                                    if trailing { "has" } else { "does not have" },
                                    path.display(),
                                    if t { "do" } else { "do not" }
                                ),
                            ))
                        }
                        Some(_) => {}
                    }
                    merge_schema(path, &tf.path, &mut schema, s)?;
                    rows = None;
                }
            }
        }
        if !format.is_text() {
            schema = Some(unify_block_schemas(path, &mut files)?);
        }
        let file_schema = schema.ok_or_else(|| ReconError::input(path, "no data files"))?;
        let file_columns = file_schema.fields().len();
        let mut fields: Vec<Field> = file_schema
            .fields()
            .iter()
            .map(|f| f.as_ref().clone())
            .collect();
        for k in &keys {
            if fields.iter().any(|f| f.name() == k) {
                return Err(ReconError::input(
                    path,
                    format!("partition key '{k}' is also a column inside the files"),
                ));
            }
            fields.push(Field::new(k, DataType::Utf8, true));
        }
        let dialect = matches!(format, Format::Csv | Format::Tsv).then(|| {
            let mut d = sniff::describe(
                &text.dialect(),
                text.header,
                to_sniff,
                text.trailing_delimiter == Some(true),
                text.skip_rows,
            );
            match (files.iter().find_map(|f| f.decode), text.encoding) {
                (Some(e), Encoding::Utf8) => {
                    d.push_str(&format!(", encoding {} (byte-order mark)", e.name()))
                }
                (_, Encoding::Utf8) => {}
                (_, e) => d.push_str(&format!(", encoding {}", e.name())),
            }
            d
        });
        let mut untyped = vec![format.is_text(); file_columns];
        if format == Format::Ndjson {
            // Nested JSON values keep the types the header scan found.
            for (u, f) in untyped.iter_mut().zip(file_schema.fields()) {
                *u = matches!(f.data_type(), DataType::Utf8);
            }
        }
        untyped.extend(std::iter::repeat_n(true, keys.len()));
        let table = Table {
            path: path.to_path_buf(),
            format,
            files,
            schema: Arc::new(Schema::new_with_metadata(
                fields,
                file_schema.metadata().clone(),
            )),
            file_columns,
            partition_keys: keys,
            untyped,
            rows,
            bytes_on_disk,
            text,
            partition_arrays: Vec::new(),
            parse_errors: Default::default(),
            text_columns: Vec::new(),
            dialect,
            spool: None,
            snapshot: None,
            origin: None,
        };
        table.finish()
    }

    /// A table of record batches in memory: one "file" whose blocks are
    /// the batches, read in place.
    fn in_memory(b: &BatchesSource, opts: &InputOptions) -> Result<Table> {
        let block = BlockMeta::memory(&b.name, b.schema.clone(), b.batches.clone())?;
        let rows = block.rows().unwrap_or(0);
        if rows >= 1 << POS_BITS {
            return Err(ReconError::input(
                &b.name,
                "more than 2^44 rows in one table",
            ));
        }
        let bytes: usize = b.batches.iter().map(|x| x.get_array_memory_size()).sum();
        let n = b.schema.fields().len();
        let table = Table {
            path: b.name.clone(),
            format: Format::Ipc,
            files: vec![TableFile {
                path: b.name.clone(),
                compression: Compression::None,
                partition_values: Vec::new(),
                block: Some(block),
                extent: AtomicU64::new(rows),
                decode: None,
                deleted: None,
                columns: None,
            }],
            schema: b.schema.clone(),
            file_columns: n,
            partition_keys: Vec::new(),
            untyped: vec![false; n],
            rows: Some(rows),
            bytes_on_disk: bytes as u64,
            text: opts.text.clone(),
            partition_arrays: Vec::new(),
            parse_errors: Default::default(),
            text_columns: Vec::new(),
            dialect: None,
            spool: None,
            snapshot: None,
            origin: Some("arrow (in memory)"),
        };
        table.finish()
    }

    /// What the report calls the table's format.
    pub fn format_name(&self) -> &'static str {
        match (&self.snapshot, self.origin) {
            (Some(s), _) => s.format,
            (None, Some(o)) => o,
            (None, None) => self.format.name(),
        }
    }

    /// Completes a table built from its files: plain text rules for every
    /// column, and the partition values parsed into their types.
    fn finish(mut self) -> Result<Table> {
        self.text_columns = vec![Default::default(); self.schema.fields().len()];
        self.build_partition_arrays()?;
        Ok(self)
    }

    /// Parses each file's partition values into the current column types.
    fn build_partition_arrays(&mut self) -> Result<()> {
        let mut all = Vec::with_capacity(self.files.len());
        for f in &self.files {
            let mut arrays = Vec::with_capacity(self.partition_keys.len());
            for (k, v) in f.partition_values.iter().enumerate() {
                let field = self.schema.field(self.file_columns + k);
                let spec = &self.text_columns[self.file_columns + k];
                let mut bad = Vec::new();
                let arr = values::parse_lenient_as(
                    field.data_type(),
                    &[spec.prepare(v.as_deref())],
                    &mut bad,
                    1,
                    spec,
                );
                if let Some((_, m)) = bad.into_iter().next() {
                    return Err(ReconError::input(
                        &f.path,
                        format!(
                            "partition value {}={}: {m}",
                            field.name(),
                            v.as_deref().unwrap_or("NULL")
                        ),
                    ));
                }
                arrays.push(arr);
            }
            all.push(arrays);
        }
        self.partition_arrays = all;
        Ok(())
    }

    /// Rebuilds the schema with `edit` applied to its fields, then the
    /// partition values in the (maybe new) types.
    fn edit_fields(&mut self, edit: impl FnOnce(&mut [Field])) -> Result<()> {
        let mut fields: Vec<Field> = self
            .schema
            .fields()
            .iter()
            .map(|f| f.as_ref().clone())
            .collect();
        edit(&mut fields);
        self.schema = Arc::new(Schema::new_with_metadata(
            fields,
            self.schema.metadata().clone(),
        ));
        self.build_partition_arrays()
    }

    /// Gives untyped columns new types (see `plan::typing::resolve`).
    pub(crate) fn set_types(&mut self, types: &[(usize, DataType)]) -> Result<()> {
        self.edit_fields(|fields| {
            for (i, ty) in types {
                fields[*i] = fields[*i]
                    .clone()
                    .with_data_type(ty.clone())
                    .with_nullable(true);
            }
        })
    }

    /// Sets how text columns are read before and while parsing (see
    /// `plan::typing::resolve`), and marks the rules applied to raw text in
    /// the fields' metadata.
    pub(crate) fn set_text_columns(
        &mut self,
        specs: Vec<(usize, values::TextColumn)>,
    ) -> Result<()> {
        let text_columns = &mut self.text_columns;
        let mut marks = Vec::new();
        for (i, spec) in specs {
            let rules: Vec<&str> = [(spec.trim, "trim"), (spec.empty_as_null, "empty_as_null")]
                .into_iter()
                .filter_map(|(on, name)| on.then_some(name))
                .collect();
            if !rules.is_empty() {
                marks.push((i, rules.join(",")));
            }
            text_columns[i] = spec;
        }
        self.edit_fields(|fields| {
            for (i, rules) in marks {
                let mut meta = fields[i].metadata().clone();
                meta.insert(TEXT_RULES.to_string(), rules);
                fields[i] = fields[i].clone().with_metadata(meta);
            }
        })
    }

    /// Whether reading the table means decompressing text (slow to repeat).
    pub fn is_compressed_text(&self) -> bool {
        self.format.is_text()
            && self
                .files
                .iter()
                .any(|f| f.compression != Compression::None)
    }

    pub fn file_path(&self, i: usize) -> &Path {
        &self.files[i].path
    }

    /// Where a locator points within its file, for messages that name the
    /// file already: "row 7 (counting from 0)" or "record at byte 120".
    pub fn position(&self, locator: u64) -> String {
        let (_, pos) = unpack(locator);
        if self.format.is_text() {
            format!("record at byte {pos}")
        } else {
            format!("row {pos} (counting from 0)")
        }
    }

    /// The dense ordinal of a locator: the file's base (sum of earlier files'
    /// extents) plus its position. Valid after the scan.
    pub fn bases(&self) -> Vec<u64> {
        let mut next = 0u64;
        self.files
            .iter()
            .map(|f| {
                let b = next;
                next = next.saturating_add(f.extent());
                b
            })
            .collect()
    }

    /// Sum of all files' extents (rows or decompressed bytes). Valid after the scan.
    pub fn total_extent(&self) -> u64 {
        self.files
            .iter()
            .map(|f| f.extent())
            .fold(0u64, |a, b| a.saturating_add(b))
    }

    /// Partition column `k` of `file`, repeated for `rows` rows.
    fn partition_column(&self, file: usize, k: usize, rows: usize) -> Result<ArrayRef> {
        let idx = arrow::array::UInt32Array::from(vec![0u32; rows]);
        arrow::compute::take(self.partition_arrays[file][k].as_ref(), &idx, None)
            .map_err(|e| ReconError::arrow(&self.files[file].path, e))
    }

    /// Appends the partition columns of `file` to file columns `cols`.
    fn with_partitions(
        &self,
        file: usize,
        mut cols: Vec<ArrayRef>,
        rows: usize,
    ) -> Result<Vec<ArrayRef>> {
        for k in 0..self.partition_keys.len() {
            cols.push(self.partition_column(file, k, rows)?);
        }
        Ok(cols)
    }

    /// Fetches the rows at `locators` (sorted ascending, unique) with every
    /// column of the table. Calls `each` with batches whose rows follow
    /// `locators` order.
    pub fn fetch<'t>(
        &'t self,
        fetcher: &mut Fetcher<'t>,
        locators: &[u64],
        mut each: impl FnMut(RecordBatch) -> Result<()>,
    ) -> Result<()> {
        let mut start = 0;
        while start < locators.len() {
            let (file, _) = unpack(locators[start]);
            let end = start + locators[start..].partition_point(|&l| unpack(l).0 == file);
            let positions: Vec<u64> = locators[start..end].iter().map(|&l| unpack(l).1).collect();
            let path = self.files[file].path.clone();
            let f = &self.files[file];
            // A fetch reads every column of the file, for every table column.
            let (table, all): (Vec<usize>, Vec<usize>) = match (&f.columns, &f.block) {
                (Some(_), Some(b)) => (
                    (0..self.file_columns).collect(),
                    (0..b.schema.fields().len()).collect(),
                ),
                _ => Default::default(),
            };
            let mut emit = |cols: Vec<ArrayRef>| -> Result<()> {
                let n = cols.first().map_or(0, |c| c.len());
                let cols = match &f.columns {
                    None => cols,
                    Some(layout) => self.conform(f, layout, &table, &all, &cols, n)?,
                };
                let cols = self.with_partitions(file, cols, n)?;
                let batch = RecordBatch::try_new(self.schema.clone(), cols)
                    .map_err(|e| ReconError::arrow(&path, e))?;
                each(batch)
            };
            guard(&path, || match &self.files[file].block {
                Some(b) => b.fetch(&path, &positions, &mut emit),
                None => {
                    if fetcher.text.len() <= file {
                        fetcher.text.resize_with(file + 1, || None);
                    }
                    text::fetch(self, file, &positions, &mut fetcher.text[file], &mut emit)
                }
            })?;
            start = end;
        }
        Ok(())
    }

    /// The units of work of a scan, for block formats; text files are cut
    /// into chunks by [`Table::feed_text`] instead.
    pub fn block_units(&self) -> Vec<Unit> {
        let mut units = Vec::new();
        for (fi, f) in self.files.iter().enumerate() {
            if let Some(b) = &f.block {
                units.extend(b.units(fi));
            } else {
                units.push(Unit::TextFile { file: fi });
            }
        }
        units
    }

    /// Reads one unit, calling `each(columns, locators)` per batch, where
    /// `columns` are the table columns `wanted` (in that order).
    pub fn read_unit(
        &self,
        unit: &Unit,
        wanted: &[usize],
        batch_size: usize,
        each: &mut dyn FnMut(&[ArrayRef], Locators<'_>) -> Result<()>,
    ) -> Result<u64> {
        match unit {
            Unit::Block { file, .. } | Unit::Stream { file } => {
                let f = &self.files[*file];
                let b = f
                    .block
                    .as_ref()
                    .ok_or_else(|| ReconError::Internal("block unit on a text file".into()))?;
                let file_cols: Vec<usize> = wanted
                    .iter()
                    .copied()
                    .filter(|&c| c < self.file_columns)
                    .collect();
                let mut projected = file_cols.clone();
                projected.sort_unstable();
                projected.dedup();
                let stored = stored_columns(f, &projected);
                b.read(
                    &f.path,
                    unit,
                    &stored,
                    batch_size,
                    &mut |cols: &[ArrayRef], first: u64, n: usize| {
                        let conformed;
                        let cols = match &f.columns {
                            None => cols,
                            Some(layout) => {
                                conformed =
                                    self.conform(f, layout, &projected, &stored, cols, n)?;
                                &conformed
                            }
                        };
                        let out = self.pick(*file, wanted, &projected, cols, n)?;
                        match f.deleted.as_deref() {
                            Some(deleted) => {
                                let (out, locs) = skip_deleted(&out, first, n, deleted, *file)
                                    .map_err(|e| ReconError::arrow(&f.path, e))?;
                                each(&out, Locators::List(&locs))
                            }
                            None => each(&out, Locators::Run(pack(*file, first))),
                        }
                    },
                )
            }
            Unit::TextFile { .. } => Err(ReconError::Internal(
                "text file units are fed as chunks".into(),
            )),
            Unit::Text(chunk) => text::read_chunk(self, chunk, wanted, batch_size, each),
        }
    }

    /// Table columns `projected` of a file with a layout from its columns
    /// `cols` (the file's columns `stored`, ascending): converted where the
    /// file stores another type, NULL where it predates the column.
    fn conform(
        &self,
        f: &TableFile,
        layout: &[FileColumn],
        projected: &[usize],
        stored: &[usize],
        cols: &[ArrayRef],
        rows: usize,
    ) -> Result<Vec<ArrayRef>> {
        projected
            .iter()
            .map(|&c| match &layout[c] {
                FileColumn::Missing => Ok(arrow::array::new_null_array(
                    self.schema.field(c).data_type(),
                    rows,
                )),
                FileColumn::Stored { index, widen } => {
                    let i = stored
                        .binary_search(index)
                        .map_err(|_| ReconError::Internal("stored column not read".into()))?;
                    match widen {
                        None => Ok(cols[i].clone()),
                        Some(ty) => self.widen(f, c, &cols[i], ty),
                    }
                }
            })
            .collect()
    }

    /// Column `c` of file `f`, stored as `array`, converted exactly to `ty`
    /// and named as the table's type; a value that does not convert is
    /// refused, naming the file and the column.
    fn widen(&self, f: &TableFile, c: usize, array: &ArrayRef, ty: &DataType) -> Result<ArrayRef> {
        let field = self.schema.field(c);
        let refuse = |m: String| {
            ReconError::input(
                &f.path,
                format!(
                    "column {}, stored as {}, read as {}: {m}",
                    field.name(),
                    array.data_type(),
                    field.data_type()
                ),
            )
        };
        let out = types::convert(array, ty).map_err(refuse)?;
        if ty == field.data_type() {
            Ok(out)
        } else {
            types::relabel(&out, field.data_type()).map_err(refuse)
        }
    }

    /// Arranges `wanted` columns from the projected file columns plus partitions.
    fn pick(
        &self,
        file: usize,
        wanted: &[usize],
        projected: &[usize],
        cols: &[ArrayRef],
        rows: usize,
    ) -> Result<Vec<ArrayRef>> {
        let mut out = Vec::with_capacity(wanted.len());
        for &c in wanted {
            if c < self.file_columns {
                let i = projected
                    .binary_search(&c)
                    .map_err(|_| ReconError::Internal("column not projected".into()))?;
                out.push(cols[i].clone());
            } else {
                out.push(self.partition_column(file, c - self.file_columns, rows)?);
            }
        }
        Ok(out)
    }

    /// Cuts text file `file` into chunks at record boundaries and passes each
    /// to `send` (returns false to stop). Records the file's decompressed size.
    pub fn feed_text(
        &self,
        file: usize,
        chunk_bytes: usize,
        send: &mut dyn FnMut(Unit) -> bool,
    ) -> Result<()> {
        text::feed(self, file, chunk_bytes, send)
    }
}

/// State kept across the fetches of one pass over a table's unmatched rows:
/// compressed text is read forward once instead of once per evidence range.
#[derive(Default)]
pub struct Fetcher<'t> {
    text: Vec<Option<text::TextCursor<'t>>>,
}

/// Locators of the rows of one batch.
#[derive(Clone, Copy)]
pub enum Locators<'a> {
    /// Consecutive positions starting here.
    Run(u64),
    /// One locator per row.
    List(&'a [u64]),
}

impl Locators<'_> {
    #[inline]
    pub fn get(&self, row: usize) -> u64 {
        match self {
            Locators::Run(first) => first + row as u64,
            Locators::List(l) => l[row],
        }
    }
}

/// A unit of scan work.
pub enum Unit {
    /// A Parquet row group or an IPC file's record batch.
    Block {
        file: usize,
        block: usize,
        /// Position of the block's first row in its file.
        first: u64,
        rows: u64,
    },
    /// A whole IPC stream, read in order.
    Stream { file: usize },
    /// A text file, before the feeder cuts it into chunks.
    TextFile { file: usize },
    /// Whole records of a text file.
    Text(text::TextChunk),
}

impl Unit {
    pub fn file(&self) -> usize {
        match self {
            Unit::Block { file, .. } | Unit::Stream { file } | Unit::TextFile { file } => *file,
            Unit::Text(c) => c.file,
        }
    }
}
