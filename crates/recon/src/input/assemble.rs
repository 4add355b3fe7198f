//! Assembling a table from its metadata: discovery's files, one format, the
//! CSV dialect sniffed, and one schema (block files' types unified, text
//! headers merged), with Hive partition columns after the file columns; a
//! spooled input's table; batches in memory as a table.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use arrow::datatypes::{DataType, Field, Schema, SchemaRef};

use super::discover::{classify, discover, sniff, Compression, Found};
use super::format::block::BlockMeta;
use super::format::file::{FileColumn, TableFile};
use super::format::text::reader;
use super::format::text::sniff;
use super::locator::{MAX_FILES, POS_BITS};
use super::source::BatchesSource;
use super::spool::Spool;
use super::table::Table;
use super::types;
use crate::config::{Dialect, Encoding, Format, InputOptions, Sniff, TextOptions};
use crate::error::{ReconError, Result};

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

/// The table of a spooled input, named `name` (what the caller gave),
/// keeping the spool for as long as the table lives.
pub(super) fn open_spool(spool: Spool, opts: &InputOptions, name: &Path) -> Result<Table> {
    // What is wrong with the header or the footer is wrong with the input.
    let mut table = open_files(spool.path(), opts).map_err(|e| renamed(e, spool.path(), name))?;
    table.path = name.to_path_buf();
    table.spool = Some(spool);
    Ok(table)
}

pub(super) fn open_files(path: &Path, opts: &InputOptions) -> Result<Table> {
    let found = discover(path, &opts.storage_options)?;
    if found.len() > MAX_FILES {
        return Err(ReconError::input(
            path,
            format!("more than {MAX_FILES} files in one table"),
        ));
    }
    let (format, mut files) = file_formats(path, &found, opts)?;
    let keys = partition_keys(&found, &mut files)?;
    let mut text = text_options(format, &files, opts);
    // What the user gave (or the format implies), for sniffing each file.
    let mut dialects = Dialects::new(&text);
    let many_files = files.len() > 1;
    let mut bytes_on_disk = 0u64;
    let mut schema: Option<SchemaRef> = None;
    let mut rows: Option<u64> = Some(0);
    for tf in files.iter_mut() {
        let len = open_file(tf, format)?;
        bytes_on_disk += len;
        match format {
            Format::Parquet | Format::Ipc => read_footer(tf, format, opts, &mut rows)?,
            // An empty part file (Spark and Hive write them) holds no rows
            // and no header; it takes the columns of the table's other files.
            Format::Csv | Format::Tsv | Format::Ndjson if len == 0 && many_files => {
                rows = None;
            }
            Format::Csv | Format::Tsv | Format::Ndjson => {
                let s = dialects.read_header(path, tf, format, &mut text)?;
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
    let fields = with_partition_columns(path, &file_schema, &keys)?;
    let dialect = describe_dialect(format, &text, dialects.to_sniff, &files);
    let untyped = untyped_columns(format, &file_schema, keys.len());
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
        database: None,
        pass_marks: Default::default(),
    };
    table.finish()
}

/// A table of record batches in memory: one "file" whose blocks are
/// the batches, read in place.
pub(super) fn in_memory(b: &BatchesSource, opts: &InputOptions) -> Result<Table> {
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
            remote: None,
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
        database: None,
        pass_marks: Default::default(),
    };
    table.finish()
}
/// Each found file's format (as given, by its name, or by its magic bytes)
/// and compression: one format per table, and only text compressed.
fn file_formats(
    path: &Path,
    found: &[Found],
    opts: &InputOptions,
) -> Result<(Format, Vec<TableFile>)> {
    // One format per table.
    let mut format = opts.format;
    let mut files = Vec::with_capacity(found.len());
    for f in found {
        let name = f.path.file_name().and_then(|n| n.to_str()).unwrap_or("");
        let (by_name, compression) = classify(name);
        let this = match (opts.format, by_name) {
            (Some(explicit), _) => explicit,
            (None, Some(fmt)) => fmt,
            // By magic bytes: read once (for an object, that is a request).
            (None, None) => match sniff(f) {
                Some(fmt) => fmt,
                None => {
                    return Err(ReconError::input(
                        &f.path,
                        "unknown file extension (expected .parquet, .arrow/.feather/.ipc, .csv, .tsv, .jsonl/.ndjson, optionally .gz/.zst); pass `--source-format`/`--target-format` to choose",
                    ))
                }
            },
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
            remote: f.remote.clone(),
        });
    }
    let format = format.ok_or_else(|| ReconError::input(path, "no data files"))?;
    Ok((format, files))
}

/// The Hive partition keys of a table's files, which must be the same on
/// every file; each file gets its values.
fn partition_keys(found: &[Found], files: &mut [TableFile]) -> Result<Vec<String>> {
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
    Ok(keys)
}

/// The text options a table's files are read with: what was given, with
/// what the format implies (TSV's tab, `.tbl`'s '|' and no header, no
/// CSV-only options for NDJSON).
fn text_options(format: Format, files: &[TableFile], opts: &InputOptions) -> TextOptions {
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
    text
}

/// The size of a table's file on disk, once it is known to open for
/// reading; an empty file is refused unless it is text.
fn open_file(tf: &TableFile, format: Format) -> Result<u64> {
    let len = match &tf.remote {
        // An object's size came with its listing or HEAD request.
        #[cfg(feature = "remote")]
        Some(o) => o.size,
        #[cfg(not(feature = "remote"))]
        Some(o) => match **o {},
        None => {
            let meta = std::fs::metadata(&tf.path)
                .map_err(|e| ReconError::input(&tf.path, e.to_string()))?;
            // Open for reading up front, so permission problems surface before any work.
            std::fs::File::open(&tf.path)
                .map_err(|e| ReconError::input(&tf.path, e.to_string()))?;
            meta.len()
        }
    };
    if len == 0 && !format.is_text() {
        return Err(ReconError::input(
            &tf.path,
            format!("file is empty (0 bytes), not {}", format.name()),
        ));
    }
    Ok(len)
}

/// Reads the footer of a Parquet or IPC file into `tf`, adding its rows to
/// the table's `rows` (None once some file does not say).
fn read_footer(
    tf: &mut TableFile,
    format: Format,
    opts: &InputOptions,
    rows: &mut Option<u64>,
) -> Result<()> {
    let b = if format == Format::Parquet {
        BlockMeta::parquet(&tf.path, tf.remote.as_ref(), opts.int96_unit)?
    } else {
        BlockMeta::ipc(&tf.path, tf.remote.as_ref())?
    };
    *rows = match (*rows, b.rows()) {
        (Some(a), Some(n)) => Some(
            a.checked_add(n)
                .ok_or_else(|| ReconError::input(&tf.path, "row count in metadata overflows"))?,
        ),
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
    Ok(())
}

/// The CSV dialect of a table's text files: what the user gave (or the
/// format implies), and the first sniffed file's reading, which the
/// table's other files must agree with.
struct Dialects {
    given: Dialect,
    given_header: bool,
    to_sniff: Sniff,
    sniffed: Option<(sniff::Sniffed, PathBuf)>,
}

impl Dialects {
    fn new(text: &TextOptions) -> Dialects {
        Dialects {
            given: text.dialect(),
            given_header: text.header,
            to_sniff: text.sniff,
            sniffed: None,
        }
    }

    /// Reads the header of text file `tf` of table `path`: its decoding,
    /// its dialect (sniffed into `text` when asked), and the schema it gives.
    fn read_header(
        &mut self,
        path: &Path,
        tf: &mut TableFile,
        format: Format,
        text: &mut TextOptions,
    ) -> Result<SchemaRef> {
        // NDJSON is decoded whole: arrow-json reads UTF-8 only.
        let enc = match text.encoding {
            Encoding::Bytes(e) if format == Format::Ndjson => Encoding::Stream(e),
            e => e,
        };
        tf.decode = reader::file_decoding(&tf.path, tf.remote.as_ref(), tf.compression, enc)?;
        self.sniff_file(tf, text)?;
        let (s, trailing) = reader::header_schema(tf, format, text)?;
        // The files of one table agree on the dialect.
        match text.trailing_delimiter {
            None => text.trailing_delimiter = Some(trailing),
            Some(t) if t != trailing => {
                return Err(ReconError::input(
                    &tf.path,
                    format!(
                        "{} a trailing delimiter on every line but other files of {} {}: one table holds one dialect (pass `--trailing-delimiter` if it is right)",
                        if trailing { "has" } else { "does not have" },
                        path.display(),
                        if t { "do" } else { "do not" }
                    ),
                ))
            }
            Some(_) => {}
        }
        Ok(s)
    }

    /// Sniffs text file `tf`'s dialect when asked: the first file's sets
    /// the table's, and every other file must read alike.
    fn sniff_file(&mut self, tf: &TableFile, text: &mut TextOptions) -> Result<()> {
        let head = if self.to_sniff.any() {
            Some(reader::sniff_head(tf, text)?)
        } else {
            None
        };
        // An empty file has nothing to sniff; reading it says it is empty.
        if let Some((head, eof, before)) = head.filter(|(h, _, _)| !h.is_empty()) {
            let found = sniff::sniff(
                &head,
                eof,
                self.given,
                self.given_header,
                self.to_sniff,
                before,
            )
            .map_err(|m| ReconError::input(&tf.path, m))?;
            match &self.sniffed {
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
                    self.sniffed = Some((found, tf.path.clone()));
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
        Ok(())
    }
}

/// The table's fields: the files' columns, then one text column per Hive
/// partition key (which no file may hold as a column too).
fn with_partition_columns(
    path: &Path,
    file_schema: &Schema,
    keys: &[String],
) -> Result<Vec<Field>> {
    let mut fields: Vec<Field> = file_schema
        .fields()
        .iter()
        .map(|f| f.as_ref().clone())
        .collect();
    for k in keys {
        if fields.iter().any(|f| f.name() == k) {
            return Err(ReconError::input(
                path,
                format!("partition key '{k}' is also a column inside the files"),
            ));
        }
        fields.push(Field::new(k, DataType::Utf8, true));
    }
    Ok(fields)
}

/// A CSV/TSV table's dialect in words, noting what was sniffed and the
/// encoding (None for other formats).
fn describe_dialect(
    format: Format,
    text: &TextOptions,
    to_sniff: Sniff,
    files: &[TableFile],
) -> Option<String> {
    matches!(format, Format::Csv | Format::Tsv).then(|| {
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
    })
}

/// Per column, whether its type comes from text (so it may take the other
/// side's type): text files' columns but NDJSON's nested values, and every
/// partition column.
fn untyped_columns(format: Format, file_schema: &Schema, partition_keys: usize) -> Vec<bool> {
    let mut untyped = vec![format.is_text(); file_schema.fields().len()];
    if format == Format::Ndjson {
        // Nested JSON values keep the types the header scan found.
        for (u, f) in untyped.iter_mut().zip(file_schema.fields()) {
            *u = matches!(f.data_type(), DataType::Utf8);
        }
    }
    untyped.extend(std::iter::repeat_n(true, partition_keys));
    untyped
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::input::source::Source;
    use crate::side::Side;

    fn write(root: &Path, rel: &str, text: &str) {
        let path = root.join(rel);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }

    /// Opens `path` sniffing everything, as the CLI does by default.
    fn open(path: &Path) -> Result<Table> {
        let source = Source::Spec(path.to_path_buf());
        let mut opts = InputOptions::default();
        opts.text.sniff = Sniff {
            delimiter: true,
            quote: true,
            escape: true,
            header: true,
            preamble: true,
        };
        crate::input::open_table(&source, &opts, Side::Source, path)
    }

    #[test]
    fn a_hive_partitioned_folder_of_csv_is_one_table() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        write(root, "year=2024/b.csv", "id;name\n3;c\n");
        write(root, "year=2024/a.csv", "id;name\n1;a\n2;b\n");
        write(root, "year=2023/a.csv", "id;name\n0;z\n");
        // An empty part file takes the other files' columns.
        write(root, "year=2025/part-0.csv", "");
        write(root, "year=2024/_SUCCESS", "");
        let t = open(root).unwrap();
        assert_eq!(t.format, Format::Csv);
        let names: Vec<&str> = t.files.iter().map(|f| f.path.to_str().unwrap()).collect();
        let rel: Vec<&str> = names
            .iter()
            .map(|n| &n[root.to_str().unwrap().len() + 1..])
            .collect();
        assert_eq!(
            rel,
            [
                "year=2023/a.csv",
                "year=2024/a.csv",
                "year=2024/b.csv",
                "year=2025/part-0.csv"
            ]
        );
        let columns: Vec<(&str, &DataType)> = t
            .schema
            .fields()
            .iter()
            .map(|f| (f.name().as_str(), f.data_type()))
            .collect();
        assert_eq!(
            columns,
            [
                ("id", &DataType::Utf8),
                ("name", &DataType::Utf8),
                ("year", &DataType::Utf8)
            ]
        );
        assert_eq!(
            (t.file_columns, t.partition_keys.clone()),
            (2, vec!["year".to_string()])
        );
        assert_eq!(t.untyped, [true, true, true]);
        // Text stores no row count; the dialect was sniffed from the first file.
        assert_eq!(t.rows, None);
        assert_eq!(t.text.delimiter, Some(b';'));
        assert!(t
            .dialect
            .as_deref()
            .unwrap()
            .contains("delimiter ';' (sniffed)"));
        assert_eq!(t.bytes_on_disk, 12 + 16 + 12);
    }

    #[test]
    fn one_table_holds_one_format_one_dialect_and_one_set_of_partition_keys() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        write(root, "formats/a.csv", "x\n1\n");
        write(root, "formats/b.jsonl", "{\"x\": 1}\n");
        let e = open(&root.join("formats")).map(|_| ()).unwrap_err();
        let m = e.to_string();
        assert!(m.contains("is ndjson but other files of "), "{m}");
        assert!(m.contains("are csv: one table holds one format"), "{m}");
        write(root, "keys/k=1/a.csv", "x\n1\n");
        write(root, "keys/k=2/j=3/a.csv", "x\n1\n");
        let e = open(&root.join("keys")).map(|_| ()).unwrap_err();
        assert!(
            e.to_string()
                .contains("partition directories (k/j) differ from the table's first file (k)"),
            "{e}"
        );
        write(root, "dialects/a.csv", "x,y\n1,2\n3,4\n");
        write(root, "dialects/b.csv", "x;y\n1;2\n3;4\n");
        let e = open(&root.join("dialects")).map(|_| ()).unwrap_err();
        assert!(e.to_string().contains("one table holds one dialect"), "{e}");
        write(root, "clash/x=1/a.csv", "x\n1\n");
        let e = open(&root.join("clash")).map(|_| ()).unwrap_err();
        assert!(
            e.to_string()
                .contains("partition key 'x' is also a column inside the files"),
            "{e}"
        );
    }

    #[test]
    fn compressed_block_files_and_empty_parquet_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        write(root, "a.parquet.gz", "x");
        let e = open(&root.join("a.parquet.gz")).map(|_| ()).unwrap_err();
        assert!(
            e.to_string()
                .contains("compressed parquet files are not supported"),
            "{e}"
        );
        write(root, "empty.parquet", "");
        let e = open(&root.join("empty.parquet")).map(|_| ()).unwrap_err();
        assert!(
            e.to_string()
                .contains("file is empty (0 bytes), not parquet"),
            "{e}"
        );
    }
}
