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
pub mod object;
#[cfg(feature = "remote")]
use object::{block_on, runtime, FIRST_BLOCK, MAX_BLOCK};
#[cfg(feature = "remote")]
pub use object::{is_url, Fetched, Object, Stores};

/// A remote object, where the build has no object stores: never made.
#[cfg(not(feature = "remote"))]
#[derive(Debug)]
pub enum Object {}

/// Without the `remote` feature no spec is a URL.
#[cfg(not(feature = "remote"))]
pub fn is_url(_spec: &str) -> bool {
    false
}

/// A file to read: local, or an object read by ranges.
pub enum Blob {
    Local(std::fs::File),
    #[cfg(feature = "remote")]
    Remote(Remote),
}

#[cfg(feature = "remote")]
/// A remote object being read: ranges prefetched for a Parquet row group,
/// and the state of a streamed read.
pub struct Remote {
    object: Arc<Object>,
    /// Prefetched ranges (start, bytes), sorted by start.
    chunks: Vec<(u64, Bytes)>,
    stream: Stream,
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
    size: u64,
}

impl Blob {
    /// Opens `path`, or reads `remote` when the file is an object.
    pub fn open(path: &Path, remote: Option<&Arc<Object>>) -> Result<Blob> {
        match remote {
            #[cfg(feature = "remote")]
            Some(o) => Ok(Blob::Remote(Remote {
                object: o.clone(),
                chunks: Vec::new(),
                stream: Stream::default(),
            })),
            #[cfg(not(feature = "remote"))]
            Some(o) => match **o {},
            None => std::fs::File::open(path)
                .map(Blob::Local)
                .map_err(|e| ReconError::input(path, e.to_string())),
        }
    }

    /// Fetches `ranges` now, concurrently, so the reads that follow are
    /// served from memory. A local file needs nothing.
    pub fn prefetch(&mut self, ranges: &[Range<u64>]) -> Result<()> {
        #[cfg(feature = "remote")]
        if let Blob::Remote(r) = self {
            r.chunks = r.object.fetch_many(ranges)?;
        }
        let _ = ranges;
        Ok(())
    }

    pub fn is_remote(&self) -> bool {
        #[cfg(feature = "remote")]
        return matches!(self, Blob::Remote(_));
        #[cfg(not(feature = "remote"))]
        false
    }
}

#[cfg(feature = "remote")]
impl Remote {
    fn cached(&self, start: u64, len: u64) -> Option<Bytes> {
        let i = self.chunks.partition_point(|(s, _)| *s <= start);
        let (s, b) = self.chunks.get(i.checked_sub(1)?)?;
        let off = (start - s) as usize;
        (off as u64 + len <= b.len() as u64).then(|| b.slice(off..off + len as usize))
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
                // A page header: inside a prefetched column chunk when the
                // caller prefetched; else read forward from `start`.
                let i = r.chunks.partition_point(|(s, _)| *s <= start);
                if let Some((s, b)) = i.checked_sub(1).and_then(|i| r.chunks.get(i)) {
                    if start < s + b.len() as u64 {
                        return Ok(Box::new(b.slice((start - s) as usize..).reader()));
                    }
                }
                let mut stream = Blob::Remote(Remote {
                    object: r.object.clone(),
                    chunks: Vec::new(),
                    stream: Stream::default(),
                });
                stream
                    .seek(SeekFrom::Start(start))
                    .map_err(|e| parquet::errors::ParquetError::External(Box::new(e)))?;
                Ok(Box::new(stream))
            }
        }
    }

    fn get_bytes(&self, start: u64, length: usize) -> parquet::errors::Result<Bytes> {
        match self {
            Blob::Local(f) => f.get_bytes(start, length),
            #[cfg(feature = "remote")]
            Blob::Remote(r) => match r.cached(start, length as u64) {
                Some(b) => Ok(b),
                None => r
                    .object
                    .fetch(start..start + length as u64)
                    .map_err(|e| parquet::errors::ParquetError::External(Box::new(e))),
            },
        }
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
        let r = self;
        let s = &mut r.stream;
        s.size = r.object.size;
        if s.pos >= s.size || out.is_empty() {
            return Ok(0);
        }
        let in_block = s.pos >= s.block_start && s.pos < s.block_start + s.block.len() as u64;
        if !in_block {
            // Take the block in flight if it starts here, else fetch one.
            let len = (s.block.len() as u64 * 2).clamp(FIRST_BLOCK, MAX_BLOCK);
            let block = match s.next.take() {
                Some((start, h)) if start == s.pos => block_on(h)
                    .map_err(std::io::Error::other)?
                    .map_err(std::io::Error::other)?
                    .map_err(std::io::Error::other)?,
                _ => {
                    let end = (s.pos + FIRST_BLOCK.min(len)).min(s.size);
                    r.object.fetch(s.pos..end).map_err(std::io::Error::other)?
                }
            };
            s.block_start = s.pos;
            s.block = block;
            let next_start = s.block_start + s.block.len() as u64;
            if next_start < s.size {
                let next_len = (s.block.len() as u64 * 2).clamp(FIRST_BLOCK, MAX_BLOCK);
                let spawned = {
                    let o = r.object.clone();
                    let end = (next_start + next_len).min(o.size);
                    (
                        next_start,
                        runtime()
                            .map_err(std::io::Error::other)?
                            .spawn(o.get(next_start..end)),
                    )
                };
                s.next = Some(spawned);
            }
        }
        let off = (s.pos - s.block_start) as usize;
        let n = out.len().min(s.block.len() - off);
        out[..n].copy_from_slice(&s.block[off..off + n]);
        s.pos += n as u64;
        Ok(n)
    }

    fn seek_to(&mut self, to: SeekFrom) -> std::io::Result<u64> {
        let r = self;
        let size = r.object.size as i128;
        let pos = match to {
            SeekFrom::Start(p) => p as i128,
            SeekFrom::End(d) => size + d as i128,
            SeekFrom::Current(d) => r.stream.pos as i128 + d as i128,
        };
        if pos < 0 {
            return Err(std::io::Error::new(
                std::io::ErrorKind::InvalidInput,
                "seek before the start of the object",
            ));
        }
        r.stream.pos = pos as u64;
        // A jump starts small blocks again: a fetch by locator reads a
        // record or two, not 8 MiB.
        let s = &mut r.stream;
        if !(s.pos >= s.block_start && s.pos <= s.block_start + s.block.len() as u64) {
            s.block = Bytes::new();
            s.block_start = s.pos;
        }
        Ok(s.pos)
    }
}
