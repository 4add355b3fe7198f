//! Where a table's files are read from: the local disk, or an object
//! store (`s3://`, `gs://`, `az://`, `https://`; see [`object`]). A
//! [`Blob`] is what the block and text readers open instead of a `File`.

use std::io::{Read, Seek, SeekFrom};
use std::ops::Range;
use std::path::Path;
use std::sync::Arc;

#[cfg(feature = "remote")]
use bytes::Buf;
use bytes::Bytes;
use parquet::file::reader::{ChunkReader, Length};

use crate::error::{ReconError, Result};

#[cfg(feature = "remote")]
pub(crate) mod object;
#[cfg(feature = "remote")]
use object::{block_on, runtime, FIRST_BLOCK, MAX_BLOCK};
#[cfg(feature = "remote")]
pub(crate) use object::{is_url, Object, Stores};

/// A remote object, where the build has no object stores: never made.
#[cfg(not(feature = "remote"))]
#[derive(Debug)]
pub(crate) enum Object {}

/// Without the `remote` feature no spec is a URL.
#[cfg(not(feature = "remote"))]
#[cfg_attr(not(any(feature = "delta", feature = "iceberg")), allow(dead_code))]
pub(crate) fn is_url(_spec: &str) -> bool {
    false
}

/// A file to read: local, or an object read by ranges.
pub(crate) enum Blob {
    Local(std::fs::File),
    #[cfg(feature = "remote")]
    Remote(Remote),
}

#[cfg(feature = "remote")]
/// A remote object being read: ranges prefetched for a Parquet row group,
/// and the state of a streamed read.
pub(crate) struct Remote {
    object: Arc<Object>,
    /// The ranges a Parquet read will ask for, each with the part of it
    /// held now (behind a lock: [`ChunkReader`] reads through `&self`).
    windows: std::sync::Mutex<Vec<Window>>,
    /// Bytes a window holds at most.
    window_bytes: u64,
    stream: Stream,
}

/// Bytes one Parquet read may hold in prefetched windows: a row group's
/// projected column chunks when they fit, else an equal window of each,
/// refilled as the reader moves through it. Set per run from the memory
/// limit ([`set_prefetch_budget`]).
static PREFETCH_BUDGET: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(32 << 20);

/// Gives each remote Parquet read 5% of `memory_limit` over the threads,
/// between 8 and 64 MiB: a whole row group's chunks in few requests when
/// memory allows, moving windows when it is tight. The engine's shares of
/// the limit take the other 95% (see `engine::memory`). Runs in one
/// process share the setting (the last run's holds).
pub(crate) fn set_prefetch_budget(memory_limit: u64, threads: usize) {
    let per_thread = memory_limit / 20 / threads.max(1) as u64;
    PREFETCH_BUDGET.store(
        per_thread.clamp(8 << 20, 64 << 20),
        std::sync::atomic::Ordering::Relaxed,
    );
}

#[cfg(feature = "remote")]
fn prefetch_budget() -> u64 {
    PREFETCH_BUDGET.load(std::sync::atomic::Ordering::Relaxed)
}

/// A range a read needs, and the part of it in memory.
#[cfg(feature = "remote")]
struct Window {
    range: Range<u64>,
    start: u64,
    bytes: Bytes,
}

#[cfg(feature = "remote")]
impl Window {
    fn holds(&self, start: u64, len: u64) -> bool {
        start >= self.start && start + len <= self.start + self.bytes.len() as u64
    }
}

#[cfg(feature = "remote")]
#[derive(Default)]
struct Stream {
    pos: u64,
    /// The block holding `pos`, starting at `block_start`.
    block: Bytes,
    block_start: u64,
    /// The next block, in flight.
    next: Option<(u64, tokio::task::JoinHandle<Result<Bytes>>)>,
}

impl Blob {
    /// Opens `path`, or reads `remote` when the file is an object.
    pub(crate) fn open(path: &Path, remote: Option<&Arc<Object>>) -> Result<Blob> {
        match remote {
            #[cfg(feature = "remote")]
            Some(o) => Ok(Blob::Remote(Remote::new(o.clone()))),
            #[cfg(not(feature = "remote"))]
            Some(o) => match **o {},
            None => std::fs::File::open(path)
                .map(Blob::Local)
                .map_err(|e| ReconError::input(path, e.to_string())),
        }
    }

    /// Fetches `ranges` now, concurrently, so the reads that follow are
    /// served from memory: all of them when they fit the prefetch budget,
    /// else the start of each, the rest as the reader gets there. `known`
    /// are ranges' bytes held from an earlier read (a column chunk's
    /// dictionary page). A local file needs nothing.
    pub(crate) fn prefetch(
        &mut self,
        ranges: &[Range<u64>],
        known: Vec<(u64, Bytes)>,
    ) -> Result<()> {
        #[cfg(not(feature = "remote"))]
        let _ = (ranges, known);
        #[cfg(feature = "remote")]
        if let Blob::Remote(r) = self {
            r.prefetch(ranges)?;
            let mut windows = r.windows.lock().unwrap_or_else(|e| e.into_inner());
            for (start, bytes) in known {
                windows.push(Window {
                    range: start..start + bytes.len() as u64,
                    start,
                    bytes,
                });
            }
        }
        Ok(())
    }

    /// The bytes of `range` when a prefetch holds them, without fetching.
    pub(crate) fn held(&self, range: &Range<u64>) -> Option<Bytes> {
        #[cfg(feature = "remote")]
        if let Blob::Remote(r) = self {
            let windows = r.windows.lock().unwrap_or_else(|e| e.into_inner());
            let len = range.end - range.start;
            return windows.iter().find(|w| w.holds(range.start, len)).map(|w| {
                let off = (range.start - w.start) as usize;
                w.bytes.slice(off..off + len as usize)
            });
        }
        let _ = range;
        None
    }

    pub(crate) fn is_remote(&self) -> bool {
        #[cfg(feature = "remote")]
        return matches!(self, Blob::Remote(_));
        #[cfg(not(feature = "remote"))]
        false
    }
}

#[cfg(feature = "remote")]
impl Remote {
    fn new(object: Arc<Object>) -> Remote {
        Remote {
            object,
            windows: Default::default(),
            window_bytes: 0,
            stream: Stream::default(),
        }
    }

    fn prefetch(&mut self, ranges: &[Range<u64>]) -> Result<()> {
        // Only overlaps are joined: adjacent column chunks are read side by
        // side, so each keeps a window of its own.
        let merged = object::merge_ranges(ranges, |last, r| r.start < last.end);
        let total: u64 = merged.iter().map(|r| r.end - r.start).sum();
        let budget = prefetch_budget();
        self.window_bytes = if total <= budget || merged.is_empty() {
            total.max(1)
        } else {
            (budget / merged.len() as u64).max(FIRST_BLOCK)
        };
        let first: Vec<Range<u64>> = merged
            .iter()
            .map(|r| r.start..r.end.min(r.start + self.window_bytes))
            .collect();
        // Fetched coalesced: a chunk may span several windows, which then
        // share its buffer.
        let chunks = self.object.fetch_many(&first)?;
        let windows = merged
            .into_iter()
            .zip(first)
            .map(|(range, want)| {
                let i = chunks.partition_point(|(s, _)| *s <= want.start);
                let (s, b) = i
                    .checked_sub(1)
                    .and_then(|i| chunks.get(i))
                    .ok_or_else(|| {
                        ReconError::Internal("a prefetched range was not fetched".into())
                    })?;
                let off = (want.start - s) as usize;
                Ok(Window {
                    range,
                    start: want.start,
                    bytes: b.slice(off..off + (want.end - want.start) as usize),
                })
            })
            .collect::<Result<Vec<_>>>()?;
        *self.windows.lock().unwrap_or_else(|e| e.into_inner()) = windows;
        Ok(())
    }

    /// `len` bytes from `start` out of the window of the range holding
    /// them, moving the window forward (one request) when they are past
    /// it; None when no prefetched range holds them.
    fn windowed(&self, start: u64, len: u64) -> Result<Option<Bytes>> {
        let mut windows = self.windows.lock().unwrap_or_else(|e| e.into_inner());
        let Some(w) = windows
            .iter_mut()
            .find(|w| start >= w.range.start && start + len <= w.range.end)
        else {
            return Ok(None);
        };
        if !w.holds(start, len) {
            let end = (start + len.max(self.window_bytes)).min(w.range.end);
            w.bytes = Bytes::new(); // dropped before the next window arrives
            w.bytes = self.object.fetch(start..end)?;
            w.start = start;
        }
        let off = (start - w.start) as usize;
        Ok(Some(w.bytes.slice(off..off + len as usize)))
    }

    /// What follows `start` in its window, when a prefetched range holds it.
    fn window_tail(&self, start: u64) -> Result<Option<Bytes>> {
        let held = {
            let windows = self.windows.lock().unwrap_or_else(|e| e.into_inner());
            windows
                .iter()
                .find(|w| start >= w.range.start && start < w.range.end)
                .map(|w| {
                    (
                        w.holds(start, 1),
                        w.start + w.bytes.len() as u64,
                        w.range.end,
                    )
                })
        };
        match held {
            None => Ok(None),
            Some((true, end, _)) => self.windowed(start, end - start),
            Some((false, _, range_end)) => {
                let len = self.window_bytes.min(range_end - start);
                self.windowed(start, len)
            }
        }
    }
}

impl Length for Blob {
    fn len(&self) -> u64 {
        match self {
            Blob::Local(f) => f.len(),
            #[cfg(feature = "remote")]
            Blob::Remote(r) => r.object.size,
        }
    }
}

impl ChunkReader for Blob {
    type T = Box<dyn Read + Send>;

    fn get_read(&self, start: u64) -> parquet::errors::Result<Self::T> {
        match self {
            Blob::Local(f) => Ok(Box::new(f.get_read(start)?)),
            #[cfg(feature = "remote")]
            Blob::Remote(r) => {
                // A page header: read from the window of its column chunk,
                // and on from the object should it run past the window.
                let external = |e| parquet::errors::ParquetError::External(Box::new(e));
                let tail = r.window_tail(start).map_err(external)?;
                let from = start + tail.as_ref().map_or(0, |t| t.len() as u64);
                let mut rest = Blob::Remote(Remote::new(r.object.clone()));
                rest.seek(SeekFrom::Start(from))
                    .map_err(|e| parquet::errors::ParquetError::External(Box::new(e)))?;
                Ok(match tail {
                    Some(t) => Box::new(t.reader().chain(rest)),
                    None => Box::new(rest),
                })
            }
        }
    }

    fn get_bytes(&self, start: u64, length: usize) -> parquet::errors::Result<Bytes> {
        match self {
            Blob::Local(f) => f.get_bytes(start, length),
            #[cfg(feature = "remote")]
            Blob::Remote(r) => {
                let external = |e| parquet::errors::ParquetError::External(Box::new(e));
                match r.windowed(start, length as u64).map_err(external)? {
                    Some(b) => Ok(b),
                    None => r
                        .object
                        .fetch(start..start + length as u64)
                        .map_err(external),
                }
            }
        }
    }
}

/// One blob read by several readers of a row group: arrow-rs's record
/// batch reader takes its [`ChunkReader`] by value, Parquet's page readers
/// take theirs by `Arc`, and a remote blob's prefetched ranges must serve
/// both.
pub(crate) struct SharedBlob(pub(crate) Arc<Blob>);

impl Length for SharedBlob {
    fn len(&self) -> u64 {
        self.0.len()
    }
}

impl ChunkReader for SharedBlob {
    type T = Box<dyn Read + Send>;

    fn get_read(&self, start: u64) -> parquet::errors::Result<Self::T> {
        self.0.get_read(start)
    }

    fn get_bytes(&self, start: u64, length: usize) -> parquet::errors::Result<Bytes> {
        self.0.get_bytes(start, length)
    }
}

impl Read for Blob {
    fn read(&mut self, out: &mut [u8]) -> std::io::Result<usize> {
        match self {
            Blob::Local(f) => f.read(out),
            #[cfg(feature = "remote")]
            Blob::Remote(r) => r.read_forward(out),
        }
    }
}

impl Seek for Blob {
    fn seek(&mut self, to: SeekFrom) -> std::io::Result<u64> {
        match self {
            Blob::Local(f) => f.seek(to),
            #[cfg(feature = "remote")]
            Blob::Remote(r) => r.seek_to(to),
        }
    }
}

#[cfg(feature = "remote")]
impl Remote {
    /// Reads on from the stream position: blocks double from 256 KiB to
    /// 8 MiB while the reads go forward, and the next block is always in
    /// flight.
    fn read_forward(&mut self, out: &mut [u8]) -> std::io::Result<usize> {
        let size = self.object.size;
        let s = &mut self.stream;
        if s.pos >= size || out.is_empty() {
            return Ok(0);
        }
        let in_block = s.pos >= s.block_start && s.pos < s.block_start + s.block.len() as u64;
        if !in_block {
            // Take the block in flight if it starts here, else fetch a first
            // (small) one.
            let block = match s.next.take() {
                Some((start, h)) if start == s.pos => block_on(h)
                    .map_err(std::io::Error::other)?
                    .map_err(std::io::Error::other)?
                    .map_err(std::io::Error::other)?,
                _ => {
                    let end = (s.pos + FIRST_BLOCK).min(size);
                    self.object
                        .fetch(s.pos..end)
                        .map_err(std::io::Error::other)?
                }
            };
            s.block_start = s.pos;
            s.block = block;
            let next_start = s.block_start + s.block.len() as u64;
            if next_start < size {
                let next_len = (s.block.len() as u64 * 2).clamp(FIRST_BLOCK, MAX_BLOCK);
                let end = (next_start + next_len).min(size);
                let fetch = self.object.clone().get(next_start..end);
                let handle = runtime().map_err(std::io::Error::other)?.spawn(fetch);
                s.next = Some((next_start, handle));
            }
        }
        let off = (s.pos - s.block_start) as usize;
        let n = out.len().min(s.block.len() - off);
        out[..n].copy_from_slice(&s.block[off..off + n]);
        s.pos += n as u64;
        Ok(n)
    }

    fn seek_to(&mut self, to: SeekFrom) -> std::io::Result<u64> {
        let size = self.object.size as i128;
        let pos = match to {
            SeekFrom::Start(p) => p as i128,
            SeekFrom::End(d) => size + d as i128,
            SeekFrom::Current(d) => self.stream.pos as i128 + d as i128,
        };
        if pos < 0 {
            return Err(std::io::Error::new(
                std::io::ErrorKind::InvalidInput,
                "seek before the start of the object",
            ));
        }
        self.stream.pos = pos as u64;
        // A jump starts small blocks again: a fetch by locator reads a
        // record or two, not 8 MiB.
        let s = &mut self.stream;
        if !(s.pos >= s.block_start && s.pos <= s.block_start + s.block.len() as u64) {
            s.block = Bytes::new();
            s.block_start = s.pos;
        }
        Ok(s.pos)
    }
}
