//! The table: one or more files of one format and one schema, with Hive
//! partition columns, and every method it has: what reads of its files
//! share, the units of a scan, each read into batches of the wanted columns
//! with their rows' locators (every format through the seam of
//! [`super::format::reading`]),
//! and rows fetched back by locator (see [`super`] for locators). Tables
//! are made by [`super::open`] (what the user named), `assemble` (files, a
//! spool, batches in memory) and the catalogs.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use arrow::array::{ArrayRef, RecordBatch};
use arrow::datatypes::{DataType, Field, Schema, SchemaRef};

use super::discover::Compression;
use super::format::file::{FileColumn, TableFile};
use super::format::reading::{BlockReader, FetchPlace, FormatReader, TextReader};
use super::format::text::reader::{self, TextTable};
use super::format::text::values::{self, ParseErrors};
use super::locator::{pack, unpack, Locators, Unit};
use super::spool::Spool;
use super::types;
use crate::config::{Format, InputOptions, TextOptions};
use crate::error::{guard, ReconError, Result};

/// A table: one or more files of one format and one schema.
pub struct Table {
    /// The path the user gave.
    pub path: PathBuf,
    pub(crate) format: Format,
    pub(crate) files: Vec<TableFile>,
    /// File columns, then Hive partition columns.
    pub schema: SchemaRef,
    /// Columns stored in the files; the rest come from partition directories.
    pub file_columns: usize,
    pub(crate) partition_keys: Vec<String>,
    /// Per column: its type was not stored but comes from text (CSV fields,
    /// NDJSON scalars, partition values), so it may take the other side's type.
    pub untyped: Vec<bool>,
    /// Row count from metadata, when the format stores one.
    pub rows: Option<u64>,
    /// Total size of the files on disk.
    pub bytes_on_disk: u64,
    pub(crate) text: TextOptions,
    /// Per file, per partition column: the value as a one-row typed array.
    pub(super) partition_arrays: Vec<Vec<ArrayRef>>,
    /// Text values that failed to parse and were counted (`--max-parse-errors`).
    pub parse_errors: ParseErrors,
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
    /// A table read from a database: the server, snapshot and query.
    pub database: Option<DatabaseRead>,
    /// Bytes fetched from object stores when each scan pass ended
    /// ([`Table::mark_pass`]).
    pub pass_marks: std::sync::Mutex<Vec<u64>>,
}

/// How a database table was read, for the report: a run signs off against
/// one snapshot of one server, and says which.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DatabaseRead {
    /// `postgres`.
    pub system: &'static str,
    /// The server's version (`15.14 (Debian 15.14-0+deb12u1)`).
    pub server_version: String,
    /// The exported snapshot every connection read under (None: one
    /// connection, in its own transaction).
    pub snapshot: Option<String>,
    /// The SELECT each connection's COPY ran (before its ctid range).
    pub query: String,
    /// Connections that read, each a range of the table's pages.
    pub connections: usize,
}

/// A lakehouse table's version, for the report and the schema screen.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Snapshot {
    /// `delta` or `iceberg`.
    pub format: &'static str,
    /// The Delta version or the Iceberg snapshot id (None: an Iceberg table
    /// with no snapshot yet).
    pub version: Option<i128>,
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

/// Refuses the CSV-only options (`skip_rows`, `comment`) that reach no
/// CSV/TSV table: an option that cannot apply is an error, never dropped
/// unseen. One given for both sides applies when either side is CSV/TSV.
pub(crate) fn refuse_unused_csv_options(sides: [(&InputOptions, &Table); 2]) -> Result<()> {
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
                "{} applies to CSV/TSV files only, and {}",
                crate::error::hint::switch(flag),
                what.join(" and ")
            )));
        }
    }
    Ok(())
}

/// Field metadata key listing the rules (`trim`, `empty_as_null`) applied to
/// a text column's raw text before it was parsed into a typed column; the
/// plan treats those rules as done rather than refusing them on a number.
pub(crate) const TEXT_RULES: &str = "recon.text_rules";

impl Table {
    /// Bytes fetched from object stores so far, and the requests; None when
    /// no file of the table is remote.
    pub fn fetched(&self) -> Option<(u64, u64)> {
        #[cfg(feature = "remote")]
        {
            let mut objects = self
                .files
                .iter()
                .filter_map(|f| f.remote.as_ref())
                .peekable();
            objects.peek()?;
            Some(objects.fold((0, 0), |(bytes, requests), o| {
                let f = o.fetched();
                (bytes + f.bytes, requests + f.requests)
            }))
        }
        #[cfg(not(feature = "remote"))]
        None
    }

    /// A scan pass ended: what was fetched until now is that pass's and the
    /// ones before it.
    pub fn mark_pass(&self) {
        if let Some((bytes, _)) = self.fetched() {
            self.pass_marks
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .push(bytes);
        }
    }
}

impl Table {
    /// What the report calls the table's format.
    pub fn format_name(&self) -> &'static str {
        if let Some(db) = &self.database {
            return db.system;
        }
        match (&self.snapshot, self.origin) {
            (Some(s), _) => s.format,
            (None, Some(o)) => o,
            (None, None) => self.format.name(),
        }
    }

    /// Completes a table built from its files: plain text rules for every
    /// column, and the partition values parsed into their types.
    pub(super) fn finish(mut self) -> Result<Table> {
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

    /// The path of the table's file `i`.
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
    pub(super) fn with_partitions(
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

    /// Table columns `projected` of a file with a layout from its columns
    /// `cols` (the file's columns `stored`, ascending): converted where the
    /// file stores another type, NULL where it predates the column.
    pub(super) fn conform(
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
                FileColumn::Constant(value) => {
                    let zeros = arrow::array::UInt32Array::from(vec![0u32; rows]);
                    arrow::compute::take(value.as_ref(), &zeros, None)
                        .map_err(|e| ReconError::arrow(&f.path, e))
                }
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
    pub(super) fn pick(
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
}

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
            FileColumn::Missing | FileColumn::Constant(_) => None,
        })
        .collect();
    stored.sort_unstable();
    stored
}

impl Table {
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
            if fetcher.places.len() <= file {
                fetcher.places.resize_with(file + 1, Default::default);
            }
            let place = &mut fetcher.places[file];
            guard(&path, || {
                self.reader(file).fetch(&positions, place, &mut emit)
            })?;
            start = end;
        }
        Ok(())
    }

    /// The units of work of a scan: row groups and batches of block files;
    /// text files whole, cut into chunks by [`Table::feed_text`].
    pub fn scan_units(&self) -> Vec<Unit> {
        (0..self.files.len())
            .flat_map(|file| self.reader(file).units())
            .collect()
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
        let file = unit.file();
        let f = &self.files[file];
        let mut projected: Vec<usize> = wanted
            .iter()
            .copied()
            .filter(|&c| c < self.file_columns)
            .collect();
        projected.sort_unstable();
        projected.dedup();
        let stored = stored_columns(f, &projected);
        self.reader(file)
            .read(unit, &stored, batch_size, &mut |cols, n, locs| {
                let conformed;
                let cols = match &f.columns {
                    None => cols,
                    Some(layout) => {
                        conformed = self.conform(f, layout, &projected, &stored, cols, n)?;
                        &conformed
                    }
                };
                let out = self.pick(file, wanted, &projected, cols, n)?;
                match (f.deleted.as_deref(), locs) {
                    (None, locs) => each(&out, locs),
                    (Some(deleted), Locators::Run(base)) => {
                        let (out, locs) = skip_deleted(&out, unpack(base).1, n, deleted, file)
                            .map_err(|e| ReconError::arrow(&f.path, e))?;
                        each(&out, Locators::List(&locs))
                    }
                    // Deletes are positions in a run of rows: a format that
                    // lists its rows cannot have them, and keeping deleted
                    // rows would be a wrong answer.
                    (Some(_), Locators::List(_)) => Err(ReconError::Internal(format!(
                        "{}: deleted rows in a file whose format lists its rows",
                        f.path.display()
                    ))),
                }
            })
    }

    /// File `file` as its format reads it.
    fn reader(&self, file: usize) -> Box<dyn FormatReader<'_> + '_> {
        let f = &self.files[file];
        match &f.block {
            Some(meta) => Box::new(BlockReader {
                meta,
                path: &f.path,
                file,
            }),
            None => Box::new(TextReader {
                table: self.text(),
                file,
            }),
        }
    }

    /// Cuts text file `file` into chunks at record boundaries and passes each
    /// to `send` (returns false to stop). Records the file's decompressed size.
    pub fn feed_text(
        &self,
        file: usize,
        chunk_bytes: usize,
        send: &mut dyn FnMut(Unit) -> bool,
    ) -> Result<()> {
        reader::feed(self.text(), file, chunk_bytes, send)
    }

    /// The first records of a text table (up to about `max_bytes` of its
    /// first file), as text per file column (None for columns not read as
    /// text); for `--infer-types`.
    pub(crate) fn sample(&self, max_bytes: usize) -> Result<Vec<Vec<Option<String>>>> {
        reader::sample(self.text(), max_bytes)
    }

    /// What the text reader reads of this table.
    fn text(&self) -> TextTable<'_> {
        TextTable {
            files: &self.files,
            format: self.format,
            text: &self.text,
            schema: &self.schema,
            file_columns: self.file_columns,
            untyped: &self.untyped,
            text_columns: &self.text_columns,
            parse_errors: &self.parse_errors,
        }
    }
}

/// State kept across the fetches of one pass over a table's unmatched rows:
/// compressed text is read forward once instead of once per evidence range.
#[derive(Default)]
pub struct Fetcher<'t> {
    places: Vec<FetchPlace<'t>>,
}
