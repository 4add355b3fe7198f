//! Inputs that can be read only once: `-` (stdin) and pipes or FIFOs
//! (`<(zcat x.csv.gz)`, `mkfifo`). recon reads a table more than once (the
//! header, the scan, then unmatched rows fetched back by byte offset or row
//! number), so such an input is first copied to a spool file in a run
//! directory under the temp dir. The [`Spool`] lives in its `Table` and is
//! removed with it, on interrupt, or by the next run after a kill.
//!
//! A pipe has no name to tell its format: it comes from `--source-format` /
//! `--target-format`, from the FIFO's own name (`mkfifo orders.csv`), or
//! for Parquet and Arrow IPC from their magic bytes; text is never guessed.
//! A gzip or zstd stream is recognized by its magic bytes.

use std::io::{ErrorKind, IsTerminal, Read, Write};
use std::path::{Path, PathBuf};

use super::discover::{classify, magic_format, Compression};
use crate::config::InputOptions;
use crate::error::{ReconError, Result};
use crate::side::Side;
use crate::tempspace::RunDir;

/// An input that can be read only once.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Stream {
    /// `-`
    Stdin,
    /// A named pipe, or a shell's `<(…)` (`/dev/fd/63`).
    Fifo,
}

/// Whether `path` names an input that must be spooled.
pub(crate) fn stream_kind(path: &Path) -> Option<Stream> {
    use std::os::unix::fs::FileTypeExt;
    if path.as_os_str() == "-" {
        return Some(Stream::Stdin);
    }
    let meta = std::fs::metadata(path).ok()?;
    meta.file_type().is_fifo().then_some(Stream::Fifo)
}

/// The copy of a stream, deleted (with its run directory) on drop.
pub struct Spool {
    file: PathBuf,
    _dir: RunDir,
}

impl Spool {
    pub fn path(&self) -> &Path {
        &self.file
    }

    /// A spool of several files: the run directory itself.
    #[cfg(feature = "postgres")]
    pub(crate) fn of_dir(dir: RunDir) -> Spool {
        Spool {
            file: dir.path().to_path_buf(),
            _dir: dir,
        }
    }
}

/// Copies the stream at `path` into a spool under `temp_dir` and returns it
/// with the options to open it by: the format decided, so that the spool
/// file is read as the stream would have been.
pub(crate) fn spool(
    path: &Path,
    kind: Stream,
    opts: &InputOptions,
    side: Side,
    temp_dir: &Path,
) -> Result<(Spool, InputOptions)> {
    let mut reader: Box<dyn Read> = match kind {
        Stream::Stdin => {
            let stdin = std::io::stdin();
            if stdin.is_terminal() {
                return Err(ReconError::input(
                    path,
                    "stdin is a terminal: pipe the table in (`zcat x.csv.gz | recon diff - …`)",
                ));
            }
            Box::new(stdin.lock())
        }
        Stream::Fifo => {
            Box::new(std::fs::File::open(path).map_err(|e| ReconError::input(path, e.to_string()))?)
        }
    };
    let mut head = [0u8; 8];
    let n = read_head(&mut reader, &mut head).map_err(|e| read_error(path, kind, e))?;
    let head = &head[..n];
    let name = match kind {
        Stream::Stdin => "stdin".to_string(),
        Stream::Fifo => format!(
            "pipe-{}",
            path.file_name()
                .map_or("input".into(), |n| n.to_string_lossy())
        ),
    };
    // The name's own .gz/.zst says nothing: the bytes do.
    let compression = compression_of(head);
    let (by_name, _) = classify(&name);
    let format = opts
        .format
        .or(by_name)
        .or_else(|| magic_format(head).filter(|_| compression == Compression::None))
        .ok_or_else(|| no_format(path, kind, side))?;
    if compression != Compression::None && !format.is_text() {
        return Err(ReconError::input(
            path,
            format!(
                "is a {} stream of {}: only CSV, TSV and NDJSON may be compressed",
                compression_name(compression),
                format.name()
            ),
        ));
    }
    let stem = without_compression_suffix(&name);
    let file_name = match compression {
        Compression::None => stem.to_string(),
        Compression::Gzip => format!("{stem}.gz"),
        Compression::Zstd => format!("{stem}.zst"),
    };
    let dir = RunDir::create(temp_dir)?;
    let file = dir.path().join(file_name);
    let mut out = std::fs::File::create(&file).map_err(|e| write_error(path, &file, e, 0))?;
    copy(head, &mut reader, &mut out, path, kind, &file)?;
    let mut opts = opts.clone();
    // A format taken from the FIFO's name is found again in the spool's
    // name, which keeps it, so a `.tbl` FIFO keeps its dialect.
    if opts.format.is_none() && by_name.is_none() {
        opts.format = Some(format);
    }
    Ok((Spool { file, _dir: dir }, opts))
}

/// Copies an Arrow stream given by a library caller into a spool (an Arrow
/// IPC file, so blocks can be entered again by position) under `temp_dir`.
pub(crate) fn spool_arrow(
    name: &Path,
    reader: Box<dyn arrow::array::RecordBatchReader + Send>,
    temp_dir: &Path,
) -> Result<Spool> {
    use arrow::error::ArrowError;
    let dir = RunDir::create(temp_dir)?;
    let file = dir.path().join("stream.arrow");
    let out = std::fs::File::create(&file).map_err(|e| write_error(name, &file, e, 0))?;
    let schema = reader.schema();
    // Bytes written so far, for a full disk's message: what the file holds.
    let failed = |e: ArrowError| match e {
        ArrowError::IoError(_, io) => {
            let written = std::fs::metadata(&file).map_or(0, |m| m.len());
            write_error(name, &file, io, written)
        }
        other => ReconError::input(name, format!("writing its spool: {other}")),
    };
    let mut w = arrow::ipc::writer::FileWriter::try_new(std::io::BufWriter::new(out), &schema)
        .map_err(failed)?;
    for batch in reader {
        let batch =
            batch.map_err(|e| ReconError::input(name, format!("reading the stream: {e}")))?;
        w.write(&batch).map_err(failed)?;
    }
    w.finish().map_err(failed)?;
    Ok(Spool { file, _dir: dir })
}

/// `name` without a `.gz` or `.zst` ending.
fn without_compression_suffix(name: &str) -> &str {
    for ext in [".gz", ".zst"] {
        let cut = name.len().saturating_sub(ext.len());
        if cut > 0 && name.get(cut..).is_some_and(|t| t.eq_ignore_ascii_case(ext)) {
            return &name[..cut];
        }
    }
    name
}

/// Reads up to `buf.len()` bytes (fewer only at the end of the stream).
fn read_head(r: &mut dyn Read, buf: &mut [u8]) -> std::io::Result<usize> {
    let mut n = 0;
    while n < buf.len() {
        match r.read(&mut buf[n..]) {
            Ok(0) => break,
            Ok(k) => n += k,
            Err(e) if e.kind() == ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(n)
}

fn compression_of(head: &[u8]) -> Compression {
    match head {
        [0x1f, 0x8b, ..] => Compression::Gzip,
        [0x28, 0xb5, 0x2f, 0xfd, ..] => Compression::Zstd,
        _ => Compression::None,
    }
}

fn compression_name(c: Compression) -> &'static str {
    match c {
        Compression::None => "plain",
        Compression::Gzip => "gzip",
        Compression::Zstd => "zstd",
    }
}

fn no_format(path: &Path, kind: Stream, side: Side) -> ReconError {
    let flag = match side {
        Side::Source => "source_format",
        Side::Target => "target_format",
    };
    let what = match kind {
        Stream::Stdin => "stdin has no file name to tell its format",
        Stream::Fifo => "is a pipe whose name tells no format",
    };
    ReconError::input(
        path,
        format!(
            "{what}: pass {} (or tsv, ndjson, parquet, ipc); gzip and zstd streams are recognized by themselves",
            crate::error::hint::option(flag, "csv")
        ),
    )
}

fn read_error(path: &Path, kind: Stream, e: std::io::Error) -> ReconError {
    let what = match kind {
        Stream::Stdin => "reading stdin",
        Stream::Fifo => "reading the pipe",
    };
    ReconError::input(path, format!("{what}: {e}"))
}

/// A failed write to the spool, named by the input it copies.
fn write_error(input: &Path, spool: &Path, e: std::io::Error, written: u64) -> ReconError {
    let full = match e.raw_os_error() {
        Some(libc::ENOSPC) => Some("no space left on device"),
        Some(libc::EDQUOT) => Some("disk quota exceeded"),
        _ => None,
    };
    let at = spool.display();
    match full {
        Some(why) => ReconError::input(
            input,
            format!(
                "copying it to {at} (recon reads an input more than once, a pipe only once): {why} after {}; free space there or point `--temp-dir` at a larger disk",
                crate::size::format_size(written)
            ),
        ),
        None => ReconError::input(input, format!("copying it to {at}: {e}")),
    }
}

/// Writes `head`, then the rest of `from`, to `to`.
fn copy(
    head: &[u8],
    from: &mut dyn Read,
    to: &mut dyn Write,
    input: &Path,
    kind: Stream,
    spool: &Path,
) -> Result<u64> {
    to.write_all(head)
        .map_err(|e| write_error(input, spool, e, 0))?;
    let mut written = head.len() as u64;
    let mut buf = vec![0u8; 1 << 20];
    loop {
        let n = match from.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) if e.kind() == ErrorKind::Interrupted => continue,
            Err(e) => return Err(read_error(input, kind, e)),
        };
        to.write_all(&buf[..n])
            .map_err(|e| write_error(input, spool, e, written))?;
        written += n as u64;
    }
    to.flush()
        .map_err(|e| write_error(input, spool, e, written))?;
    Ok(written)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A disk that fills after `room` bytes.
    struct Full {
        room: usize,
    }

    impl Write for Full {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            if self.room == 0 {
                return Err(std::io::Error::from_raw_os_error(libc::ENOSPC));
            }
            let n = buf.len().min(self.room);
            self.room -= n;
            Ok(n)
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    #[test]
    fn a_full_disk_is_one_line_naming_the_input() {
        let data = vec![b'x'; 3 << 20];
        let e = copy(
            b"a,b\n",
            &mut &data[..],
            &mut Full { room: 2 << 20 },
            Path::new("-"),
            Stream::Stdin,
            Path::new("/tmp/recon-1-x/stdin"),
        )
        .unwrap_err()
        .to_string();
        assert!(
            e.starts_with("-: copying it to /tmp/recon-1-x/stdin (recon reads an input more than once, a pipe only once): no space left on device after "),
            "{e}"
        );
        assert!(e.ends_with("point --temp-dir at a larger disk"), "{e}");
        assert!(!e.contains('\n'));
    }

    #[test]
    fn the_spool_name_keeps_the_format_and_drops_the_compression() {
        assert_eq!(without_compression_suffix("pipe-x.csv.GZ"), "pipe-x.csv");
        assert_eq!(without_compression_suffix("pipe-x.tbl.zst"), "pipe-x.tbl");
        assert_eq!(without_compression_suffix("stdin"), "stdin");
        assert_eq!(without_compression_suffix(".gz"), ".gz");
        assert_eq!(without_compression_suffix("pipe-é"), "pipe-é");
    }

    #[test]
    fn compression_is_told_by_magic_bytes() {
        assert_eq!(compression_of(&[0x1f, 0x8b, 8, 0]), Compression::Gzip);
        assert_eq!(compression_of(&[0x28, 0xb5, 0x2f, 0xfd]), Compression::Zstd);
        assert_eq!(compression_of(b"a,b\n"), Compression::None);
        assert_eq!(compression_of(b""), Compression::None);
    }

    #[test]
    fn a_missing_format_names_the_sides_flag() {
        let e = no_format(Path::new("-"), Stream::Stdin, Side::Target).to_string();
        assert!(
            e.starts_with("-: stdin has no file name to tell its format: pass --target-format csv"),
            "{e}"
        );
    }
}
