//! The text reader: CSV/TSV and NDJSON files, plain or gzip/zstd-compressed,
//! read through a [`TextTable`], the view of its table a text file needs.
//!
//! One reader thread per text file cuts the (decompressed) bytes into chunks
//! of whole records; scan workers lex, type and digest the chunks in
//! parallel. A record's locator is its byte offset in the decompressed file.
//!
//! NULL policy for CSV: an empty unquoted field is NULL, a quoted empty field
//! `""` is the empty string, and `--null-value STR` makes unquoted fields
//! equal to STR NULL too (a quoted "NULL" stays the string NULL).

use std::io::{BufReader, Read, Seek, SeekFrom};
use std::path::Path;
use std::sync::atomic::Ordering;
use std::sync::Arc;

use arrow::array::{Array, ArrayRef, BooleanArray, RecordBatch};
use arrow::datatypes::{DataType, Field, Schema, SchemaRef};

use super::lex::{count_newlines, last_record_end, Dialect, LexError, Lexer, RecordBuf};
use super::values::{parse_lenient_as, BadValue, ParseErrors, TextColumn};
use crate::config::{Encoding, Format, TextOptions};
use crate::error::{quoted_value, ReconError, Result};
use crate::input::discover::Compression;
use crate::input::format::file::TableFile;
use crate::input::locator::{pack, TextChunk, Unit, POS_BITS};
use crate::input::store::{Blob, Object};

/// What the text reader reads of a table: its files, and how their text
/// becomes the table's columns (the options, the schema the plan typed,
/// each column's text rules, the parse-error count). The table lends it
/// (`Table::text`), so the reader is a format beside Parquet and IPC and
/// never reaches up into the table.
#[derive(Clone, Copy)]
pub(crate) struct TextTable<'t> {
    pub(crate) files: &'t [TableFile],
    pub(crate) format: Format,
    pub(crate) text: &'t TextOptions,
    pub(crate) schema: &'t SchemaRef,
    /// Columns stored in the files (the rest are partition columns).
    pub(crate) file_columns: usize,
    /// Per column: its type comes from text, not from storage.
    pub(crate) untyped: &'t [bool],
    pub(crate) text_columns: &'t [TextColumn],
    pub(crate) parse_errors: &'t ParseErrors,
}

fn open_reader(f: &TableFile) -> Result<Box<dyn Read + Send>> {
    let r = open_raw(&f.path, f.remote.as_ref(), f.compression)?;
    Ok(match f.decode {
        Some(enc) => Box::new(Transcode::new(r, enc)),
        None => r,
    })
}

/// The decompressed bytes of a file, before any decoding.
fn open_raw(
    path: &Path,
    remote: Option<&Arc<Object>>,
    compression: Compression,
) -> Result<Box<dyn Read + Send>> {
    let file = Blob::open(path, remote)?;
    Ok(match compression {
        Compression::None => Box::new(file),
        Compression::Gzip => Box::new(flate2::read::MultiGzDecoder::new(BufReader::with_capacity(
            1 << 16,
            file,
        ))),
        Compression::Zstd => Box::new(
            zstd::stream::read::Decoder::new(file)
                .map_err(|e| ReconError::input(path, format!("cannot start zstd decoding: {e}")))?,
        ),
    })
}

/// Decodes a byte stream in another encoding to UTF-8 as it is read,
/// refusing malformed input: encoding_rs_io and friends replace it with
/// U+FFFD, which would make two different byte sequences equal.
struct Transcode<R> {
    inner: R,
    decoder: encoding_rs::Decoder,
    name: &'static str,
    input: Vec<u8>,
    /// Unread part of `input`.
    at: usize,
    end: usize,
    output: Vec<u8>,
    out_at: usize,
    out_end: usize,
    /// Bytes of the input decoded so far, for messages.
    consumed: u64,
    eof: bool,
    done: bool,
}

impl<R: Read> Transcode<R> {
    fn new(inner: R, enc: &'static encoding_rs::Encoding) -> Self {
        Transcode {
            inner,
            // A byte-order mark of this encoding is removed, not read as text.
            decoder: enc.new_decoder_with_bom_removal(),
            name: enc.name(),
            input: vec![0; 1 << 16],
            at: 0,
            end: 0,
            output: vec![0; 1 << 17],
            out_at: 0,
            out_end: 0,
            consumed: 0,
            eof: false,
            done: false,
        }
    }
}

impl<R: Read> Read for Transcode<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        loop {
            if self.out_at < self.out_end {
                let n = buf.len().min(self.out_end - self.out_at);
                buf[..n].copy_from_slice(&self.output[self.out_at..self.out_at + n]);
                self.out_at += n;
                return Ok(n);
            }
            if self.done {
                return Ok(0);
            }
            if self.at == self.end && !self.eof {
                let n = self.inner.read(&mut self.input)?;
                self.at = 0;
                self.end = n;
                self.eof = n == 0;
            }
            let (result, read, written) = self.decoder.decode_to_utf8_without_replacement(
                &self.input[self.at..self.end],
                &mut self.output,
                self.eof,
            );
            self.at += read;
            self.consumed += read as u64;
            self.out_at = 0;
            self.out_end = written;
            match result {
                encoding_rs::DecoderResult::InputEmpty => self.done = self.eof,
                encoding_rs::DecoderResult::OutputFull => {}
                encoding_rs::DecoderResult::Malformed(_, _) => {
                    return Err(std::io::Error::new(
                        std::io::ErrorKind::InvalidData,
                        format!(
                            "bytes that are not valid {} near byte {} (pass the `--encoding` the file is written in)",
                            self.name,
                            self.consumed
                        ),
                    ));
                }
            }
        }
    }
}

/// The decoding a text file needs: its table's streamed encoding, or
/// UTF-16 when the file starts with a UTF-16 byte-order mark (no UTF-8
/// file can: FF and FE never occur in UTF-8).
pub(crate) fn file_decoding(
    path: &Path,
    remote: Option<&Arc<Object>>,
    compression: Compression,
    enc: Encoding,
) -> Result<Option<&'static encoding_rs::Encoding>> {
    let mut head = Vec::new();
    read_more(
        open_raw(path, remote, compression)?.as_mut(),
        &mut head,
        2,
        path,
        compression,
    )?;
    let bom = match head.as_slice() {
        [0xff, 0xfe, ..] => Some(encoding_rs::UTF_16LE),
        [0xfe, 0xff, ..] => Some(encoding_rs::UTF_16BE),
        _ => None,
    };
    match (enc, bom) {
        (Encoding::Stream(e), Some(b)) if e != b => Err(ReconError::input(
            path,
            format!(
                "starts with a {} byte-order mark, but `--encoding` says {}",
                b.name(),
                e.name()
            ),
        )),
        (Encoding::Stream(e), _) => Ok(Some(e)),
        (Encoding::Utf8, b) => Ok(b),
        (other, Some(b)) => Err(ReconError::input(
            path,
            format!(
                "starts with a {} byte-order mark, but `--encoding` says {}: pass `--encoding {}`",
                b.name(),
                other.name(),
                b.name().to_ascii_lowercase()
            ),
        )),
        (_, None) => Ok(None),
    }
}

fn read_more(
    r: &mut dyn Read,
    buf: &mut Vec<u8>,
    want: usize,
    path: &Path,
    compression: Compression,
) -> Result<bool> {
    // Returns true at end of input.
    while buf.len() < want {
        let len = buf.len();
        let step = (want - len).max(1 << 16);
        buf.resize(len + step, 0);
        let n = loop {
            match r.read(&mut buf[len..]) {
                Ok(n) => break n,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(e) => {
                    buf.truncate(len);
                    let what = match compression {
                        Compression::None => String::new(),
                        Compression::Gzip => "corrupt gzip data: ".into(),
                        Compression::Zstd => "corrupt zstd data: ".into(),
                    };
                    return Err(ReconError::input(path, format!("{what}{e}")));
                }
            }
        };
        buf.truncate(len + n);
        if n == 0 {
            return Ok(true);
        }
    }
    Ok(false)
}

const BOM: &[u8] = b"\xEF\xBB\xBF";

/// Field metadata key marking a column whose header name was blank or
/// repeated and was renamed (`column_7`, `name_2`).
pub(crate) const RENAMED_HEADER: &str = "recon.renamed_header";
/// Longest first record recon searches for a header.
const MAX_HEADER: usize = 64 << 20;
/// Longest record (or NDJSON line) recon buffers whole.
const MAX_RECORD: usize = 256 << 20;

/// A tokenizer error, with the way out when quotes may be plain data.
fn lex_message(e: &LexError, d: Dialect) -> String {
    match d.quote {
        Some(q) if e.message.contains("quote") => format!(
            "{} (if {:?} is plain data in this file, pass `--quote none`)",
            e.message, q as char
        ),
        _ => e.message.clone(),
    }
}

/// The message for a value that is not UTF-8, with the way out.
fn utf8_error(e: std::str::Utf8Error) -> String {
    format!(
        "invalid UTF-8 at byte {} of the value (pass the `--encoding` it is written in, e.g. windows-1252 or latin-1)",
        e.valid_up_to()
    )
}

fn decode_text(bytes: &[u8], enc: Encoding) -> std::result::Result<String, String> {
    let mut out = String::new();
    push_decoded(&mut out, bytes, enc)?;
    Ok(out)
}

/// Appends a value's text in `enc` to `out`; bytes the encoding does not
/// map are an error, never a replacement character.
fn push_decoded(out: &mut String, bytes: &[u8], enc: Encoding) -> std::result::Result<(), String> {
    match enc {
        // Streamed encodings arrive decoded to UTF-8.
        Encoding::Utf8 | Encoding::Stream(_) => {
            out.push_str(std::str::from_utf8(bytes).map_err(utf8_error)?)
        }
        Encoding::Latin1 => out.extend(bytes.iter().map(|&b| b as char)),
        Encoding::Bytes(e) => out.push_str(
            &e.decode_without_bom_handling_and_without_replacement(bytes)
                .ok_or_else(|| format!("bytes that are not valid {} in the value", e.name()))?,
        ),
    }
    Ok(())
}

fn is_blank(line: &[u8]) -> bool {
    line.iter().all(|b| b.is_ascii_whitespace())
}

/// Bytes at the start of `buf` before the header (or the first record):
/// `skip` physical lines (`--skip-rows`, or a sniffed preamble, counted as
/// `head -n` counts them), then comment lines and, when `blank`, blank lines
/// (only spaces, tabs or CR) in any order. Blank lines are skipped before a
/// header, as DuckDB does: a blank first line must not become a column named
/// "" (without a header a blank line can be a one-column row). None when
/// `buf` may end inside them.
fn before_header(
    buf: &[u8],
    eof: bool,
    skip: usize,
    comment: Option<u8>,
    blank: bool,
) -> Option<usize> {
    let mut at = 0;
    let next_line = |at: usize| match memchr::memchr(b'\n', &buf[at..]) {
        Some(i) => Some(Some(at + i + 1)),
        None if eof => Some(None),
        None => None,
    };
    for _ in 0..skip {
        match next_line(at)? {
            Some(next) => at = next,
            None => return Some(buf.len()),
        }
    }
    loop {
        let rest = &buf[at..];
        let line = &rest[..memchr::memchr(b'\n', rest).unwrap_or(rest.len())];
        let skipped = (blank && line.iter().all(|&b| matches!(b, b' ' | b'\t' | b'\r')))
            || (comment.is_some() && rest.first() == comment.as_ref());
        if !skipped {
            return Some(at);
        }
        match next_line(at)? {
            Some(next) => at = next,
            None => return Some(buf.len()),
        }
    }
}

/// Refuses a file whose lines end with a bare CR (classic Mac OS exports,
/// some mainframe transfers): read as LF-terminated text it would be one
/// huge header line and no rows, so a pair of them would "match" as empty.
fn refuse_cr_line_ends(head: &[u8], path: &Path) -> Result<()> {
    let bare_cr = head
        .iter()
        .enumerate()
        .any(|(i, &b)| b == b'\r' && head.get(i + 1) != Some(&b'\n'));
    if bare_cr && memchr::memchr(b'\n', head).is_none() {
        return Err(ReconError::input(
            path,
            "lines end with a bare CR (\\r, classic Mac OS line endings), which recon does not read; convert them to LF first, e.g. tr '\\r' '\\n' < IN > OUT",
        ));
    }
    Ok(())
}

/// Bytes of the start of a file sniffing reads.
const SNIFF_BYTES: usize = 256 << 10;

/// The start of a CSV file for sniffing its dialect: up to 256 KiB after
/// the byte-order mark and what comes before the header as `opts` say
/// (skipped lines, comment and blank lines); whether that is all of it; and
/// how many lines came before it.
pub(crate) fn sniff_head(f: &TableFile, opts: &TextOptions) -> Result<(Vec<u8>, bool, usize)> {
    let (path, compression) = (f.path.as_path(), f.compression);
    let mut r = open_reader(f)?;
    let mut buf = Vec::new();
    let eof = read_more(r.as_mut(), &mut buf, SNIFF_BYTES, path, compression)?;
    let body = buf.strip_prefix(BOM).unwrap_or(&buf);
    refuse_cr_line_ends(body, path)?;
    let skip = before_header(body, true, opts.skip_rows, opts.comment, true).unwrap_or(0);
    let lines = count_newlines(&body[..skip]) as usize;
    Ok((body[skip..].to_vec(), eof, lines))
}

/// The column names (all Utf8) of a text file, from its header line (CSV) or
/// its first lines (NDJSON), plus the header's length in bytes.
pub(crate) fn header_schema(
    f: &TableFile,
    format: Format,
    opts: &TextOptions,
) -> Result<(SchemaRef, bool)> {
    let (path, compression) = (f.path.as_path(), f.compression);
    let enc = f.encoding(opts.encoding);
    let mut r = open_reader(f)?;
    let mut buf = Vec::new();
    let mut want = 1 << 16;
    let d = opts.dialect();
    // Bytes before the header (skipped, comment and blank lines), once the head is complete.
    let skip = loop {
        let eof = read_more(r.as_mut(), &mut buf, want, path, compression)?;
        let body = buf.strip_prefix(BOM).unwrap_or(&buf);
        refuse_cr_line_ends(body, path)?;
        let blank = if format != Format::Ndjson {
            before_header(body, eof, opts.skip_rows, d.comment, opts.header)
        } else {
            Some(0)
        };
        let body = &body[blank.unwrap_or(body.len())..];
        let complete = blank.is_some()
            && match format {
                // Up to 1000 lines, or the whole lines within 64 MiB when lines are long.
                Format::Ndjson => {
                    eof || count_newlines(body) >= 1000
                        || (want >= MAX_HEADER && count_newlines(body) > 0)
                }
                _ => eof || last_record_end(body, &d).is_some(),
            };
        if complete {
            break blank.unwrap_or(0);
        }
        if want >= MAX_HEADER {
            return Err(ReconError::input(
                path,
                if opts.skip_rows > 0 {
                    "the lines skipped at the top (`--skip-rows`) and the first record are longer than 64 MiB"
                } else {
                    "first record is longer than 64 MiB"
                },
            ));
        }
        want *= 2;
    };
    let whole = buf.strip_prefix(BOM).unwrap_or(&buf);
    // The header's line number, for messages: after the lines skipped.
    let line = 1 + count_newlines(&whole[..skip]);
    let body = &whole[skip..];
    if format == Format::Ndjson {
        // Only whole lines: the buffer may end inside one.
        let whole = match memchr::memrchr(b'\n', body) {
            Some(i) if buf.len() >= want => &body[..i],
            _ => body,
        };
        return Ok((ndjson_schema(whole, path)?, false));
    }
    if body.is_empty() {
        let what = if opts.header {
            "no header line"
        } else {
            "the column count is unknown"
        };
        return Err(ReconError::input(
            path,
            if opts.skip_rows > 0 {
                format!(
                    "nothing follows the {} lines skipped at the top (`--skip-rows {}`): {what}",
                    opts.skip_rows, opts.skip_rows
                )
            } else {
                format!("file is empty: {what}")
            },
        ));
    }
    let mut lex = Lexer::new(body, d);
    let mut rec = RecordBuf::default();
    lex.next_record(&mut rec)
        .map_err(|e| ReconError::input(path, format!("line {line}: {}", lex_message(&e, d))))?;
    let trailing = match opts.trailing_delimiter {
        Some(t) => t,
        None => detect_trailing(body, d),
    };
    let ncols = if trailing {
        let last = rec.len().saturating_sub(1);
        if rec.len() < 2 || rec.field(last).is_none_or(|(b, q)| !b.is_empty() || q) {
            return Err(ReconError::input(
                path,
                format!(
                    "line {line}: `--trailing-delimiter`, but the line does not end with a delimiter"
                ),
            ));
        }
        last
    } else {
        rec.len()
    };
    let fields = header_fields(&rec, ncols, opts.header, enc, line, path)?;
    Ok((Arc::new(Schema::new(fields)), trailing))
}

/// The columns of NDJSON lines (up to 1000 of `lines`, whole lines only):
/// scalars as text, typed later; nested values as arrow-json infers them.
fn ndjson_schema(lines: &[u8], path: &Path) -> Result<SchemaRef> {
    let lines: Vec<&[u8]> = lines
        .split(|&b| b == b'\n')
        .filter(|l| !is_blank(l))
        .take(1000)
        .collect();
    if lines.is_empty() {
        return Err(ReconError::input(
            path,
            "holds no JSON lines, so its columns are unknown",
        ));
    }
    let joined = lines.join(&b'\n');
    let (schema, _) = arrow::json::reader::infer_json_schema(std::io::Cursor::new(joined), None)
        .map_err(|e| {
            ReconError::input(path, format!("not valid NDJSON in its first lines: {e}"))
        })?;
    let fields: Vec<Field> = schema
        .fields()
        .iter()
        .map(|f| match f.data_type() {
            DataType::List(_)
            | DataType::Struct(_)
            | DataType::LargeList(_)
            | DataType::Map(..) => f.as_ref().clone().with_nullable(true),
            _ => Field::new(f.name(), DataType::Utf8, true),
        })
        .collect();
    Ok(Arc::new(Schema::new(fields)))
}

/// The first `ncols` fields of the header record `rec` (on line `line`) as
/// Utf8 columns, or `column_1`, `column_2`, ... without a header.
fn header_fields(
    rec: &RecordBuf,
    ncols: usize,
    header: bool,
    enc: Encoding,
    line: u64,
    path: &Path,
) -> Result<Vec<Field>> {
    let mut fields: Vec<Field> = Vec::with_capacity(ncols);
    for i in 0..ncols {
        let name = if header {
            let (bytes, _) = rec.field(i).unwrap_or((&[], false));
            decode_text(bytes, enc)
                .map_err(|m| ReconError::input(path, format!("line {line} (header): {m}")))?
        } else {
            format!("column_{}", i + 1)
        };
        // Blank or repeated header names get a name of their own (usable
        // with --by-position); the field remembers why, so pairing by name
        // can refuse them with that reason.
        let (name, renamed) = if name.trim().is_empty() {
            (format!("column_{}", i + 1), Some("blank"))
        } else if fields.iter().any(|f| f.name() == &name) {
            let mut k = 2;
            while fields.iter().any(|f| f.name() == &format!("{name}_{k}")) {
                k += 1;
            }
            (format!("{name}_{k}"), Some("repeated"))
        } else {
            (name, None)
        };
        let mut field = Field::new(&name, DataType::Utf8, true);
        if let Some(why) = renamed {
            let meta: std::collections::HashMap<String, String> = [(
                RENAMED_HEADER.to_string(),
                format!("{why} header name in {}", path.display()),
            )]
            .into_iter()
            .collect();
            field = field.with_metadata(meta);
        }
        fields.push(field);
    }
    Ok(fields)
}

/// Whether every complete record at the start of `body` (up to 100) ends
/// with an empty unquoted field after a delimiter: a trailing delimiter, as
/// legacy exports and TPC-H `.tbl` files write. A file whose real last
/// column is sometimes NULL has some non-empty last fields among 100
/// records; one whose last column is always NULL in the sample would be
/// misread as trailing, which a typed partner or the row's field count
/// then refuses (fewer columns), never a silent match.
fn detect_trailing(body: &[u8], d: Dialect) -> bool {
    let mut lex = Lexer::new(body, d);
    let mut rec = RecordBuf::default();
    let mut seen = 0;
    let end = last_record_end(body, &d).unwrap_or(body.len());
    while seen < 100 {
        match lex.next_record(&mut rec) {
            Ok(Some(start)) if start < end => {
                if rec.is_blank_line() {
                    continue;
                }
                let last = rec.len().saturating_sub(1);
                let empty_last =
                    rec.len() >= 2 && rec.field(last).is_some_and(|(b, q)| b.is_empty() && !q);
                if !empty_last {
                    return false;
                }
                seen += 1;
            }
            _ => break,
        }
    }
    seen >= 2
}

/// Where a record boundary-cut may go: after the last complete record.
fn cut_point(format: Format, buf: &[u8], d: &Dialect) -> Option<usize> {
    match format {
        Format::Ndjson => memchr::memrchr(b'\n', buf).map(|i| i + 1),
        _ => last_record_end(buf, d),
    }
}

/// Cuts one text file into chunks of whole records, on demand.
pub(crate) struct ChunkReader<'t> {
    table: TextTable<'t>,
    file: usize,
    r: Box<dyn Read + Send>,
    buf: Vec<u8>,
    /// Offset of `buf[0]` in the decompressed file.
    base: u64,
    /// Line number of `buf[0]`.
    line: u64,
    first: bool,
    /// The byte-order mark and the lines before the header are behind.
    skipped: bool,
    done: bool,
    chunk_bytes: usize,
}

impl<'t> ChunkReader<'t> {
    pub(crate) fn new(table: TextTable<'t>, file: usize, chunk_bytes: usize) -> Result<Self> {
        let f = &table.files[file];
        Ok(ChunkReader {
            table,
            file,
            r: open_reader(f)?,
            buf: Vec::new(),
            base: 0,
            line: 1,
            first: true,
            skipped: false,
            done: false,
            chunk_bytes: chunk_bytes.max(1 << 16),
        })
    }

    /// The next chunk, or None at the end (then the file's extent is recorded).
    pub(crate) fn next_chunk(&mut self) -> Result<Option<TextChunk>> {
        if self.done {
            return Ok(None);
        }
        let table = self.table;
        let f = &table.files[self.file];
        let path = f.path.as_path();
        let d = table.text.dialect();
        let mut want = self.chunk_bytes;
        loop {
            let eof = read_more(self.r.as_mut(), &mut self.buf, want, path, f.compression)?;
            let buf = &mut self.buf;
            if self.first && !self.skipped {
                if buf.len() < BOM.len() && !eof {
                    continue;
                }
                if buf.starts_with(BOM) {
                    buf.drain(..BOM.len());
                    self.base += BOM.len() as u64;
                }
                if table.format != Format::Ndjson {
                    let text = &table.text;
                    let Some(skip) =
                        before_header(buf, eof, text.skip_rows, d.comment, text.header)
                    else {
                        if want >= MAX_HEADER {
                            return Err(ReconError::input(
                                path,
                                "the lines before the header (skipped, comment or blank lines) are longer than 64 MiB",
                            ));
                        }
                        want *= 2;
                        continue;
                    };
                    // Locators stay byte offsets in the file and line numbers
                    // count the skipped lines: both still point at the line.
                    self.line += count_newlines(&buf[..skip]);
                    buf.drain(..skip);
                    self.base += skip as u64;
                }
                // Once: reading more for the header must not skip lines again.
                self.skipped = true;
            }
            if self.first {
                if table.text.header && table.format != Format::Ndjson {
                    let end = match cut_point(table.format, buf, &d) {
                        Some(_) => {
                            let mut lex = Lexer::new(buf, d);
                            let mut rec = RecordBuf::default();
                            let line = self.line;
                            lex.next_record(&mut rec).map_err(|e| {
                                ReconError::input(
                                    path,
                                    format!("line {line}: {}", lex_message(&e, d)),
                                )
                            })?;
                            lex.position()
                        }
                        None if eof => buf.len(),
                        None => {
                            want *= 2;
                            continue;
                        }
                    };
                    self.line += count_newlines(&buf[..end]);
                    buf.drain(..end);
                    self.base += end as u64;
                }
                self.first = false;
            }
            let cut = if eof {
                buf.len()
            } else {
                match cut_point(table.format, buf, &d) {
                    Some(c) => c,
                    None => {
                        // One record longer than the chunk: read more before cutting,
                        // up to a bound (an unterminated quote would swallow the file).
                        if buf.len() >= MAX_RECORD {
                            return Err(ReconError::input(
                                path,
                                format!(
                                    "line {}: a record longer than {} MiB (an unterminated quote?)",
                                    self.line,
                                    MAX_RECORD >> 20
                                ),
                            ));
                        }
                        want = buf.len() * 2;
                        continue;
                    }
                }
            };
            if cut == 0 {
                // Only reached at the end of the input with nothing left.
                self.done = true;
                f.extent.store(self.base, Ordering::Relaxed);
                return Ok(None);
            }
            if self.base + cut as u64 >= 1 << POS_BITS {
                return Err(ReconError::input(
                    path,
                    "file is larger than 16 TiB (decompressed)",
                ));
            }
            let rest = buf.split_off(cut);
            let bytes = std::mem::replace(buf, rest);
            let lines = count_newlines(&bytes);
            let chunk = TextChunk {
                file: self.file,
                base: self.base,
                first_line: self.line,
                bytes,
            };
            self.base += cut as u64;
            self.line += lines;
            if eof && self.buf.is_empty() {
                self.done = true;
                f.extent.store(self.base, Ordering::Relaxed);
            }
            return Ok(Some(chunk));
        }
    }
}

/// Reads text file `file` and passes chunks of whole records to `send`
/// (returns false to stop). Records the file's decompressed size.
pub(crate) fn feed(
    table: TextTable<'_>,
    file: usize,
    chunk_bytes: usize,
    send: &mut dyn FnMut(Unit) -> bool,
) -> Result<()> {
    let mut reader = ChunkReader::new(table, file, chunk_bytes)?;
    while let Some(chunk) = reader.next_chunk()? {
        if !send(Unit::Text(chunk)) {
            break;
        }
    }
    Ok(())
}

/// A forward-only position in a compressed text file, kept between evidence
/// ranges so the file is decompressed once, not once per range.
pub(crate) struct TextCursor<'t> {
    reader: ChunkReader<'t>,
    chunk: Option<TextChunk>,
}

/// Receives typed columns and their rows' locators.
pub(crate) type BatchSink<'a> = dyn FnMut(Vec<ArrayRef>, &[u64]) -> Result<()> + 'a;

/// Text of one column for a batch of records.
#[derive(Default)]
struct ColText {
    data: String,
    /// End of each value in `data`; None for NULL.
    ends: Vec<Option<usize>>,
}

impl ColText {
    fn values(&self) -> Vec<Option<&str>> {
        let mut start = 0;
        self.ends
            .iter()
            .map(|e| {
                e.map(|end| {
                    let s = self.data.get(start..end).unwrap_or("");
                    start = end;
                    s
                })
            })
            .collect()
    }
    fn clear(&mut self) {
        self.data.clear();
        self.ends.clear();
    }
}

/// Turns collected text columns into typed arrays, dropping (and counting)
/// rows with bad values when `--max-parse-errors` allows, else failing.
struct Batcher<'a> {
    table: TextTable<'a>,
    file: usize,
    bytes: &'a [u8],
    first_line: u64,
    /// Per collected column: its table column index.
    columns: Vec<usize>,
    texts: Vec<ColText>,
    /// Per record: (locator, start offset in `bytes`).
    rows: Vec<(u64, usize)>,
}

impl Batcher<'_> {
    fn line_of(&self, offset: usize) -> u64 {
        self.first_line + count_newlines(&self.bytes[..offset.min(self.bytes.len())])
    }

    fn flush(&mut self, each: &mut BatchSink<'_>) -> Result<()> {
        if self.rows.is_empty() {
            return Ok(());
        }
        let path = &self.table.files[self.file].path;
        let allowed = self.table.text.max_parse_errors;
        let mut arrays = Vec::with_capacity(self.columns.len());
        let mut drop_rows: Vec<usize> = Vec::new();
        for (k, &c) in self.columns.iter().enumerate() {
            let field = self.table.schema.field(c);
            if !self.table.untyped[c] {
                // Decoded already (nested NDJSON values); the caller splices it in.
                arrays.push(arrow::array::new_null_array(
                    field.data_type(),
                    self.rows.len(),
                ));
                continue;
            }
            let spec = &self.table.text_columns[c];
            let mut values = self.texts[k].values();
            if !spec.is_plain() {
                for v in &mut values {
                    *v = spec.prepare(*v);
                }
            }
            let mut bad: Vec<BadValue> = Vec::new();
            let keep = if allowed == 0 { 1 } else { usize::MAX };
            let arr = parse_lenient_as(field.data_type(), &values, &mut bad, keep, spec);
            for (row, msg) in bad {
                let (loc, start) = self.rows.get(row).copied().unwrap_or((0, 0));
                let value = quoted_value(values.get(row).copied().flatten().unwrap_or(""));
                let message = format!(
                    "line {}, column '{}': cannot parse {value} as {}: {msg}",
                    self.line_of(start),
                    field.name(),
                    field.data_type()
                );
                let raw = values.get(row).copied().flatten().unwrap_or("");
                self.table.parse_errors.count(
                    allowed,
                    path,
                    loc,
                    message,
                    &parse_hint(raw, field, self.table.format),
                )?;
                drop_rows.push(row);
            }
            arrays.push(arr);
        }
        let mut locs: Vec<u64> = self.rows.iter().map(|r| r.0).collect();
        if !drop_rows.is_empty() {
            let mut keep = vec![true; locs.len()];
            for r in drop_rows {
                keep[r] = false;
            }
            let mask = BooleanArray::from(keep.clone());
            arrays = arrays
                .iter()
                .map(|a| {
                    arrow::compute::filter(a.as_ref(), &mask)
                        .map_err(|e| ReconError::arrow(path, e))
                })
                .collect::<Result<_>>()?;
            let mut i = 0;
            locs.retain(|_| {
                i += 1;
                keep[i - 1]
            });
        }
        each(arrays, &locs)?;
        self.rows.clear();
        for t in &mut self.texts {
            t.clear();
        }
        Ok(())
    }
}

/// Whether field `i` is quoted though nothing in it needs quotes: no
/// delimiter, line break or quote inside, not empty, no edge spaces. Writers
/// that quote only where needed never do that; a file whose quote bytes are
/// plain data does, which is why a sniffed quote with no evidence in the
/// sample refuses such a field instead of guessing.
fn needless_quotes(rec: &RecordBuf, i: usize, d: Dialect) -> bool {
    let Some((b, true)) = rec.field(i) else {
        return false;
    };
    let special = |c: &u8| *c == d.delimiter || *c == b'\n' || *c == b'\r' || Some(*c) == d.quote;
    !b.is_empty()
        && !b.iter().any(special)
        && !b.first().is_some_and(u8::is_ascii_whitespace)
        && !b.last().is_some_and(u8::is_ascii_whitespace)
}

/// The way out of a value that does not parse, by what the value looks
/// like: padding calls for `--trim`, a quoted empty field for
/// `--quoted-empty-as-null`; otherwise `--cast` or counting it as drift.
fn parse_hint(value: &str, field: &Field, format: Format) -> String {
    let column = field.name();
    let rest = "or `--max-parse-errors N` to count such values as drift";
    if value.is_empty() {
        let flag = if format == Format::Ndjson {
            format!("`--empty-as-null {column}`")
        } else {
            "`--quoted-empty-as-null`".to_string()
        };
        format!(" (if \"\" means NULL here, pass {flag}; {rest})")
    } else if value.trim() != value {
        format!(" (pass `--trim {column}` to strip the spaces before parsing, {rest})")
    } else {
        let flag = match field.data_type() {
            DataType::Date32 | DataType::Date64 => format!("`--date-format {column}=FMT`"),
            DataType::Timestamp(..) => format!("`--timestamp-format {column}=FMT`"),
            _ => "`--cast`".to_string(),
        };
        format!(" (use {flag}, {rest})")
    }
}

/// The way out of a record with the wrong number of fields at `line` that
/// starts with `record`, when lines at the top look like a preamble (see
/// `sniff`) or this one looks like a comment.
fn uneven_hint(text: &TextOptions, line: u64, record: &[u8]) -> String {
    match &text.preamble_hint {
        // The header was read from the preamble: the first record after it that
        // disagrees is at most one line past it.
        Some((lines, hint)) if line <= *lines as u64 + 1 => format!("; {hint}"),
        _ if text.comment.is_none() && record.first() == Some(&b'#') => {
            "; if lines starting with '#' are comments, pass `--comment '#'`".to_string()
        }
        _ => String::new(),
    }
}

/// Lexes and types whole records in `bytes`, collecting table columns
/// `columns` (file columns only), and calls `each` per batch. `locator`
/// gives a record's locator from (start offset, record index).
#[allow(clippy::too_many_arguments)]
fn parse_records(
    table: TextTable<'_>,
    file: usize,
    bytes: &[u8],
    first_line: u64,
    columns: &[usize],
    batch_size: usize,
    locator: &dyn Fn(usize, usize) -> u64,
    each: &mut BatchSink<'_>,
) -> Result<u64> {
    let path = &table.files[file].path;
    let mut b = Batcher {
        table,
        file,
        bytes,
        first_line,
        columns: columns.to_vec(),
        texts: columns.iter().map(|_| ColText::default()).collect(),
        rows: Vec::with_capacity(batch_size),
    };
    let mut records = 0u64;
    if table.format == Format::Ndjson {
        return parse_json(&mut b, batch_size, locator, each);
    }
    let ncols = table.file_columns;
    let nulls: Vec<&[u8]> = table
        .text
        .null_values
        .iter()
        .map(|s| s.as_bytes())
        .collect();
    let enc = table.files[file].encoding(table.text.encoding);
    // With a trailing delimiter every record has one more, empty, field.
    let trailing = table.text.trailing_delimiter == Some(true);
    let want = ncols + usize::from(trailing);
    let d = table.text.dialect();
    // A chunk without the quote byte quotes nothing: one scan of the chunk
    // instead of a look at every field of every record.
    let check_quotes =
        table.text.quote_unproven && d.quote.is_some_and(|q| memchr::memchr(q, bytes).is_some());
    let mut lex = Lexer::new(bytes, d);
    let mut rec = RecordBuf::default();
    loop {
        let start = match lex.next_record(&mut rec) {
            Ok(Some(s)) => s,
            Ok(None) => break,
            Err(e) => {
                return Err(ReconError::input(
                    path,
                    format!(
                        "line {}: {}",
                        b.line_of(e.offset),
                        lex_message(&e, table.text.dialect())
                    ),
                ));
            }
        };
        // A blank line is a one-NULL row of a one-column table, and nothing otherwise.
        if rec.is_blank_line() && ncols != 1 {
            continue;
        }
        if rec.len() != want
            || (trailing && rec.field(ncols).is_none_or(|(b, q)| !b.is_empty() || q))
        {
            return Err(ReconError::input(
                path,
                if rec.len() != want {
                    let line = b.line_of(start);
                    format!(
                        "line {line}: expected {want} fields{}, found {}{}",
                        if trailing {
                            " (the last one empty: a trailing delimiter)"
                        } else {
                            ""
                        },
                        rec.len(),
                        uneven_hint(table.text, line, &bytes[start..])
                    )
                } else {
                    format!(
                        "line {}: the other lines end with a delimiter, this one with a value",
                        b.line_of(start)
                    )
                },
            ));
        }
        if check_quotes && (0..rec.len()).any(|i| needless_quotes(&rec, i, d)) {
            let q = table.text.quote.map(|q| q as char).unwrap_or('"');
            return Err(ReconError::input(
                path,
                format!(
                    "line {}: a quoted field, but the first lines quote none, so whether {q:?} quotes or is data here cannot be sniffed: pass `--quote '{q}'` or `--quote none`",
                    b.line_of(start)
                ),
            ));
        }
        for (k, &c) in columns.iter().enumerate() {
            let (raw, quoted) = rec.field(c).unwrap_or((&[], false));
            let t = &mut b.texts[k];
            let null = if quoted {
                raw.is_empty() && table.text.quoted_empty_as_null
            } else {
                raw.is_empty() || nulls.contains(&raw)
            };
            if null {
                t.ends.push(None);
                continue;
            }
            if let Err(m) = push_decoded(&mut t.data, raw, enc) {
                return Err(ReconError::input(
                    path,
                    format!(
                        "line {}, column '{}': {m}",
                        b.line_of(start),
                        table.schema.field(c).name(),
                    ),
                ));
            }
            t.ends.push(Some(t.data.len()));
        }
        b.rows.push((locator(start, records as usize), start));
        records += 1;
        if b.rows.len() >= batch_size {
            b.flush(each)?;
        }
    }
    b.flush(each)?;
    Ok(records)
}

/// NDJSON: arrow-json decodes each line; scalar values arrive as their JSON
/// text and are typed like CSV fields.
fn parse_json(
    b: &mut Batcher<'_>,
    batch_size: usize,
    locator: &dyn Fn(usize, usize) -> u64,
    each: &mut BatchSink<'_>,
) -> Result<u64> {
    let table = b.table;
    let path = &table.files[b.file].path;
    let bytes = b.bytes;
    // Decode with every file column so that an unknown key is an error (strict mode).
    let file_schema = Arc::new(Schema::new(
        table.schema.fields()[..table.file_columns]
            .iter()
            .enumerate()
            .map(|(i, f)| {
                if table.untyped[i] {
                    Field::new(f.name(), DataType::Utf8, true)
                } else {
                    f.as_ref().clone()
                }
            })
            .collect::<Vec<_>>(),
    ));
    let mut starts = Vec::new();
    let mut pos = 0;
    for line in bytes.split_inclusive(|&c| c == b'\n') {
        if !is_blank(line) {
            starts.push(pos);
        }
        pos += line.len();
    }
    let mut records = 0u64;
    for group in starts.chunks(batch_size.max(1)) {
        let (lo, hi) = (
            group[0],
            starts
                .get(records as usize + group.len())
                .copied()
                .unwrap_or(bytes.len()),
        );
        let mut decoder = arrow::json::ReaderBuilder::new(file_schema.clone())
            // One more than the lines, so a line holding two objects shows as an extra row.
            .with_batch_size(group.len() + 1)
            .with_coerce_primitive(true)
            .with_strict_mode(true)
            .build_decoder()
            .map_err(|e| ReconError::arrow(path, e))?;
        let text = &bytes[lo..hi];
        let result = decoder.decode(text).and_then(|n| {
            if n != text.len() {
                Err(arrow::error::ArrowError::JsonError(
                    "more values than lines".into(),
                ))
            } else {
                decoder.flush()
            }
        });
        let batch: RecordBatch = match result {
            Ok(Some(batch)) if batch.num_rows() == group.len() => batch,
            Ok(_) => {
                return Err(ReconError::input(
                    path,
                    format!(
                        "line {}: a line does not hold exactly one JSON object",
                        b.line_of(lo)
                    ),
                ))
            }
            Err(_) => {
                // Find the first line that fails, for the message.
                for &s in group {
                    let end = memchr::memchr(b'\n', &bytes[s..]).map_or(bytes.len(), |i| s + i + 1);
                    let mut one = arrow::json::ReaderBuilder::new(file_schema.clone())
                        .with_coerce_primitive(true)
                        .with_strict_mode(true)
                        .build_decoder()
                        .map_err(|e| ReconError::arrow(path, e))?;
                    if let Err(e) = one.decode(&bytes[s..end]).and_then(|_| one.flush()) {
                        return Err(ReconError::input(
                            path,
                            format!("line {}: {e}", b.line_of(s)),
                        ));
                    }
                }
                return Err(ReconError::input(
                    path,
                    format!("line {}: invalid JSON", b.line_of(lo)),
                ));
            }
        };
        for (k, &c) in b.columns.iter().enumerate() {
            let col = batch.column(c);
            let t = &mut b.texts[k];
            if let Some(s) = col.as_any().downcast_ref::<arrow::array::StringArray>() {
                for v in s.iter() {
                    match v {
                        None => t.ends.push(None),
                        Some(v) => {
                            t.data.push_str(v);
                            t.ends.push(Some(t.data.len()));
                        }
                    }
                }
            }
        }
        let nested: Vec<(usize, ArrayRef)> = b
            .columns
            .iter()
            .enumerate()
            .filter(|(_, &c)| !table.untyped[c])
            .map(|(k, &c)| (k, batch.column(c).clone()))
            .collect();
        for (i, &s) in group.iter().enumerate() {
            b.rows.push((locator(s, records as usize + i), s));
        }
        records += group.len() as u64;
        if nested.is_empty() {
            b.flush(each)?;
        } else {
            // Nested columns come decoded already; splice them in after typing.
            let mut inner = |mut arrays: Vec<ArrayRef>, locs: &[u64]| -> Result<()> {
                if locs.len() != group.len() {
                    return Err(ReconError::input(
                        path,
                        "`--max-parse-errors` cannot skip rows of NDJSON with nested columns",
                    ));
                }
                for (k, arr) in &nested {
                    arrays[*k] = arr.clone();
                }
                each(arrays, locs)
            };
            b.flush(&mut inner)?;
        }
    }
    Ok(records)
}

/// Reads one chunk, calling `each` per batch with the file columns
/// `projected` (sorted, unique) and the rows' locators.
pub(crate) fn read_chunk(
    table: TextTable<'_>,
    chunk: &TextChunk,
    projected: &[usize],
    batch_size: usize,
    each: &mut BatchSink<'_>,
) -> Result<u64> {
    let file = chunk.file;
    let base = chunk.base;
    parse_records(
        table,
        file,
        &chunk.bytes,
        chunk.first_line,
        projected,
        batch_size,
        &|start, _| pack(file, base + start as u64),
        each,
    )
}

/// The end of the record starting at `buf[0]`, if `buf` holds all of it.
fn record_end(format: Format, buf: &[u8], d: Dialect, eof: bool) -> Option<usize> {
    match format {
        Format::Ndjson => memchr::memchr(b'\n', buf)
            .map(|i| i + 1)
            .or(eof.then_some(buf.len())),
        _ => {
            let mut lex = Lexer::new(buf, d);
            let mut rec = RecordBuf::default();
            match lex.next_record(&mut rec) {
                Ok(Some(_)) if lex.position() < buf.len() || eof => Some(lex.position()),
                _ if eof => Some(buf.len()),
                _ => None,
            }
        }
    }
}

/// Fetches the records at byte `positions` (ascending) of text file `file`,
/// with every file column, in `positions` order.
pub(crate) fn fetch<'t>(
    table: TextTable<'t>,
    file: usize,
    positions: &[u64],
    cursor: &mut Option<TextCursor<'t>>,
    emit: &mut dyn FnMut(Vec<ArrayRef>) -> Result<()>,
) -> Result<()> {
    let f = &table.files[file];
    let path = f.path.as_path();
    let d = table.text.dialect();
    // The wanted records, copied one after another, each ending with a newline.
    let mut picked: Vec<u8> = Vec::new();
    let mut push = |rec: &[u8]| {
        picked.extend_from_slice(rec);
        if !rec.ends_with(b"\n") {
            picked.push(b'\n');
        }
    };
    if f.compression == Compression::None && f.decode.is_none() {
        // Seekable: read a window at each record.
        let mut file_handle = Blob::open(path, f.remote.as_ref())?;
        let mut window: Vec<u8> = Vec::new();
        let mut wstart = 0u64;
        let mut weof = false;
        for &p in positions {
            let mut size = 1usize << 16;
            loop {
                let in_window = p >= wstart && (p - wstart) as usize <= window.len();
                let found = if in_window {
                    let off = (p - wstart) as usize;
                    record_end(table.format, &window[off..], d, weof).map(|e| (off, e))
                } else {
                    None
                };
                if let Some((off, e)) = found {
                    push(&window[off..off + e]);
                    break;
                }
                if in_window && window.len() >= size {
                    size = window.len() * 2;
                }
                file_handle
                    .seek(SeekFrom::Start(p))
                    .map_err(|e| ReconError::input(path, e.to_string()))?;
                window.clear();
                weof = read_more(&mut file_handle, &mut window, size, path, f.compression)?;
                wstart = p;
                if window.is_empty() {
                    return Err(ReconError::input(
                        path,
                        "file is shorter than when recon read it",
                    ));
                }
            }
        }
    } else {
        // Compressed: continue from where the previous range stopped (the
        // ranges come in locator order), decompressing each byte once.
        for &p in positions {
            loop {
                let restart = match cursor.as_ref() {
                    None => true,
                    Some(c) => c.chunk.as_ref().is_some_and(|ch| p < ch.base),
                };
                if restart {
                    *cursor = Some(TextCursor {
                        reader: ChunkReader::new(table, file, 4 << 20)?,
                        chunk: None,
                    });
                }
                let Some(c) = cursor.as_mut() else {
                    return Err(ReconError::Internal("text cursor missing".into()));
                };
                if let Some(ch) = &c.chunk {
                    let end = ch.base + ch.bytes.len() as u64;
                    if p < end {
                        let off = (p - ch.base) as usize;
                        let e = record_end(table.format, &ch.bytes[off..], d, true)
                            .ok_or_else(|| ReconError::input(path, "record not found again"))?;
                        push(&ch.bytes[off..off + e]);
                        break;
                    }
                }
                match c.reader.next_chunk()? {
                    Some(ch) => c.chunk = Some(ch),
                    None => {
                        return Err(ReconError::input(
                            path,
                            "file is shorter than when recon read it",
                        ))
                    }
                }
            }
        }
    }
    let all: Vec<usize> = (0..table.file_columns).collect();
    parse_records(
        table,
        file,
        &picked,
        0,
        &all,
        8192,
        &|_, i| positions.get(i).copied().unwrap_or(0),
        &mut |cols, _| emit(cols),
    )?;
    Ok(())
}

/// The first records of a text table (up to about `max_bytes` of its first
/// file), as text per file column (None for columns not read as text); for
/// `--infer-types`.
pub(crate) fn sample(table: TextTable<'_>, max_bytes: usize) -> Result<Vec<Vec<Option<String>>>> {
    let mut columns: Vec<Vec<Option<String>>> = vec![Vec::new(); table.file_columns];
    if !table.format.is_text() {
        return Ok(columns);
    }
    let mut first: Option<TextChunk> = None;
    if !table.files.is_empty() {
        feed(table, 0, max_bytes, &mut |unit| {
            if let Unit::Text(c) = unit {
                first = Some(c);
            }
            false
        })?;
    }
    let Some(chunk) = first else {
        return Ok(columns);
    };
    let all: Vec<usize> = (0..table.file_columns).collect();
    // Called before typing, while text columns are still Utf8.
    parse_records(
        table,
        0,
        &chunk.bytes,
        chunk.first_line,
        &all,
        8192,
        &|_, _| 0,
        &mut |cols, _| {
            for (k, c) in cols.iter().enumerate() {
                if let Some(s) = c.as_any().downcast_ref::<arrow::array::StringArray>() {
                    columns[k].extend(s.iter().map(|v| v.map(str::to_string)));
                }
            }
            Ok(())
        },
    )?;
    Ok(columns)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::{InputOptions, Sniff};
    use crate::input::Table;
    use crate::input::{Fetcher, Source};
    use crate::side::Side;
    use arrow::array::{Int64Array, StringArray};

    /// Comma-delimited with a header, nothing sniffed.
    fn csv_options() -> InputOptions {
        let mut opts = InputOptions::default();
        opts.text.delimiter = Some(b',');
        opts.text.sniff = Sniff {
            delimiter: false,
            quote: false,
            escape: false,
            header: false,
            preamble: false,
        };
        opts
    }

    fn table(dir: &Path, name: &str, bytes: &[u8], opts: &InputOptions) -> Table {
        let path = dir.join(name);
        std::fs::write(&path, bytes).unwrap();
        crate::input::open_table(&Source::Spec(path), opts, Side::Source, dir).unwrap()
    }

    /// File 0 cut into chunks of about `chunk` bytes, each read with the
    /// table columns `wanted`: the chunks, and per batch its columns and
    /// its rows' locators.
    type Batches = Vec<(Vec<ArrayRef>, Vec<u64>)>;
    fn read_all(t: &Table, wanted: &[usize], chunk: usize) -> Result<(usize, Batches)> {
        let mut units = Vec::new();
        t.feed_text(0, chunk, &mut |u| {
            units.push(u);
            true
        })?;
        let mut out = Vec::new();
        for u in &units {
            t.read_unit(u, wanted, 1024, &mut |cols, locs| {
                let n = cols.first().map_or(0, |c| c.len());
                out.push((cols.to_vec(), (0..n).map(|i| locs.get(i)).collect()));
                Ok(())
            })?;
        }
        Ok((units.len(), out))
    }

    fn strings(a: &ArrayRef) -> Vec<Option<&str>> {
        a.as_any()
            .downcast_ref::<StringArray>()
            .unwrap()
            .iter()
            .collect()
    }

    fn ints(a: &ArrayRef) -> Vec<Option<i64>> {
        a.as_any()
            .downcast_ref::<Int64Array>()
            .unwrap()
            .iter()
            .collect()
    }

    #[test]
    fn a_csv_reads_into_typed_batches_located_by_byte_offset() {
        let dir = tempfile::tempdir().unwrap();
        let mut t = table(
            dir.path(),
            "t.csv",
            b"id,name\n1,a\n2,\"\"\n3,\n",
            &csv_options(),
        );
        assert_eq!(t.schema.field(0).data_type(), &DataType::Utf8);
        t.set_types(&[(0, DataType::Int64)]).unwrap();
        // Columns come in the order asked for.
        let (_, batches) = read_all(&t, &[1, 0], 1 << 20).unwrap();
        assert_eq!(batches.len(), 1);
        let (cols, locs) = &batches[0];
        // An unquoted empty field is NULL, a quoted one the empty string.
        assert_eq!(strings(&cols[0]), [Some("a"), Some(""), None]);
        assert_eq!(ints(&cols[1]), [Some(1), Some(2), Some(3)]);
        // Locators: file 0, the byte offset of each record.
        assert_eq!(locs, &[8, 12, 17]);
        assert_eq!(t.files[0].extent(), 20);
        assert_eq!(t.position(17), "record at byte 17");
    }

    #[test]
    fn chunks_end_at_record_boundaries_even_inside_quotes() {
        let dir = tempfile::tempdir().unwrap();
        // Records with line breaks, delimiters and quotes inside quotes, over
        // several chunks (of at least 64 KiB).
        let mut text = String::from("id,note\n");
        let mut expected = Vec::new();
        for i in 0..6000 {
            let note = format!("line {i}\n\"{}\", and more", "x".repeat(i % 7));
            expected.push((text.len() as u64, note.clone()));
            text.push_str(&format!("{i},\"{}\"\n", note.replace('"', "\"\"")));
        }
        assert!(text.len() > 3 << 16);
        let t = table(dir.path(), "t.csv", text.as_bytes(), &csv_options());
        let (chunks, batches) = read_all(&t, &[1], 1 << 16).unwrap();
        assert!(chunks >= 3, "{chunks} chunk(s)");
        let mut read = Vec::new();
        for (cols, locs) in &batches {
            let notes = strings(&cols[0]);
            read.extend(
                locs.iter()
                    .zip(notes)
                    .map(|(&l, n)| (l, n.unwrap().to_string())),
            );
        }
        assert_eq!(read, expected);
        assert_eq!(t.files[0].extent(), text.len() as u64);
    }

    #[test]
    fn rows_come_back_by_locator_from_plain_and_gzip_files() {
        use std::io::Write;
        let dir = tempfile::tempdir().unwrap();
        let text = b"id,name\n1,a\n2,b\n3,c\n";
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
        gz.write_all(text).unwrap();
        let gz = gz.finish().unwrap();
        for (name, bytes) in [("t.csv", &text[..]), ("t.csv.gz", &gz[..])] {
            let t = table(dir.path(), name, bytes, &csv_options());
            let mut fetcher = Fetcher::default();
            let mut rows = Vec::new();
            t.fetch(&mut fetcher, &[12, 16], |batch| {
                let ids = strings(batch.column(0));
                let names = strings(batch.column(1));
                for (i, n) in ids.into_iter().zip(names) {
                    rows.push(format!("{}:{}", i.unwrap(), n.unwrap()));
                }
                Ok(())
            })
            .unwrap();
            assert_eq!(rows, ["2:b", "3:c"], "{name}");
        }
    }

    #[test]
    fn values_that_do_not_parse_are_errors_or_counted_and_dropped() {
        let dir = tempfile::tempdir().unwrap();
        let mut opts = csv_options();
        let mut t = table(dir.path(), "strict.csv", b"id\n1\nx\n3\n", &opts);
        t.set_types(&[(0, DataType::Int64)]).unwrap();
        let e = read_all(&t, &[0], 1 << 20).map(|_| ()).unwrap_err();
        assert!(
            e.to_string().contains("line 3, column 'id': cannot parse"),
            "{e}"
        );

        opts.text.max_parse_errors = 1;
        let mut t = table(dir.path(), "counted.csv", b"id\n1\nx\n3\n", &opts);
        t.set_types(&[(0, DataType::Int64)]).unwrap();
        let (_, batches) = read_all(&t, &[0], 1 << 20).unwrap();
        assert_eq!(ints(&batches[0].0[0]), [Some(1), Some(3)]);
        assert_eq!(batches[0].1, [3, 7]);
        assert_eq!(t.parse_errors.count.load(Ordering::Relaxed), 1);
        let examples = t.parse_errors.examples();
        assert_eq!(examples.len(), 1);
        assert!(
            examples[0].contains("counted.csv: line 3, column 'id'"),
            "{examples:?}"
        );
    }

    #[test]
    fn the_sample_is_the_first_records_as_text() {
        let dir = tempfile::tempdir().unwrap();
        let t = table(dir.path(), "t.csv", b"id,name\n1,a\n2,\n", &csv_options());
        assert_eq!(
            t.sample(1 << 20).unwrap(),
            [
                vec![Some("1".to_string()), Some("2".to_string())],
                vec![Some("a".to_string()), None]
            ]
        );
    }
}
