//! Chunked spill storage.
//!
//! Each worker thread owns a [`SpillWriter`] and appends whole chunks of
//! fixed-size records tagged with a key (a side and bucket, or a side and a
//! locator range). Chunks stay in memory while a shared allowance lasts and
//! go to the worker's own file after that, so no lock is taken on the hot
//! path and a run that fits in memory touches no disk. After a phase, the
//! writers are merged into a [`SpillIndex`] that lists every chunk of a key.
//!
//! Spill files are read with positioned reads (`pread`) into a reused buffer
//! rather than memory-mapped: pages of a mapping count toward the process's
//! resident set, which `--memory-limit` bounds.

use std::fs::File;
use std::io::Write;
use std::os::unix::fs::FileExt;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::Arc;

use crate::error::{ReconError, Result};

/// Shared accounting for one run: the in-memory allowance and bytes spilled to disk.
#[derive(Debug, Default)]
pub struct SpillBudget {
    allowance: usize,
    in_memory: AtomicUsize,
    spilled: AtomicU64,
    next_file: AtomicUsize,
    /// Estimate of the bytes the run will spill in all, for error messages.
    expected: AtomicU64,
}

impl SpillBudget {
    /// A budget of `allowance` bytes of spill files.
    pub fn new(allowance: usize) -> Arc<Self> {
        Arc::new(SpillBudget {
            allowance,
            ..Default::default()
        })
    }

    /// Records the run's estimated spill volume, quoted if the disk fills up.
    pub fn set_expected(&self, bytes: u64) {
        self.expected.store(bytes, Ordering::Relaxed);
    }

    /// Bytes written to spill files so far.
    pub fn spilled_bytes(&self) -> u64 {
        self.spilled.load(Ordering::Relaxed)
    }

    fn try_hold(&self, bytes: usize) -> bool {
        let prev = self.in_memory.fetch_add(bytes, Ordering::Relaxed);
        if prev + bytes <= self.allowance {
            true
        } else {
            self.in_memory.fetch_sub(bytes, Ordering::Relaxed);
            false
        }
    }

    fn release(&self, bytes: usize) {
        self.in_memory.fetch_sub(bytes, Ordering::Relaxed);
    }
}

/// Where one chunk lives.
#[derive(Debug)]
enum ChunkData {
    Memory(Vec<u8>),
    Disk {
        file: usize,
        offset: u64,
        len: usize,
    },
}

/// A worker's append-only chunk store.
pub struct SpillWriter {
    dir: PathBuf,
    budget: Arc<SpillBudget>,
    file: Option<(usize, PathBuf, File, u64)>,
    chunks: Vec<(u32, ChunkData)>,
    held: usize,
}

impl SpillWriter {
    /// A writer of spill files under `dir`, charged to `budget`.
    pub fn new(dir: PathBuf, budget: Arc<SpillBudget>) -> Self {
        SpillWriter {
            dir,
            budget,
            file: None,
            chunks: Vec::new(),
            held: 0,
        }
    }

    /// Appends one chunk of records under `key`. Empty chunks are ignored.
    pub fn push(&mut self, key: u32, bytes: Vec<u8>) -> Result<()> {
        if bytes.is_empty() {
            return Ok(());
        }
        if self.budget.try_hold(bytes.len()) {
            self.held += bytes.len();
            self.chunks.push((key, ChunkData::Memory(bytes)));
            return Ok(());
        }
        self.push_to_disk(key, &bytes)
    }

    fn push_to_disk(&mut self, key: u32, bytes: &[u8]) -> Result<()> {
        if self.file.is_none() {
            let id = self.budget.next_file.fetch_add(1, Ordering::Relaxed);
            let path = self.dir.join(format!("spill-{id:05}.bin"));
            let file = File::options()
                .create_new(true)
                .read(true)
                .write(true)
                .open(&path)
                .map_err(|e| ReconError::io(&path, e))?;
            self.file = Some((id, path, file, 0));
        }
        let Some((id, path, file, offset)) = self.file.as_mut() else {
            return Err(ReconError::Internal("spill file missing".into()));
        };
        if let Err(e) = file.write_all(bytes) {
            if e.raw_os_error() == Some(libc::ENOSPC) {
                return Err(ReconError::DiskFull {
                    path: self.dir.parent().unwrap_or(&self.dir).to_path_buf(),
                    written: self.budget.spilled_bytes(),
                    needed: Some(self.budget.expected.load(Ordering::Relaxed)),
                    spilling: true,
                });
            }
            return Err(ReconError::io(path, e));
        }
        self.chunks.push((
            key,
            ChunkData::Disk {
                file: *id,
                offset: *offset,
                len: bytes.len(),
            },
        ));
        *offset += bytes.len() as u64;
        self.budget
            .spilled
            .fetch_add(bytes.len() as u64, Ordering::Relaxed);
        Ok(())
    }
}

/// Every chunk of a phase, grouped by key, with the files to read them from.
pub struct SpillIndex {
    files: Vec<Option<File>>,
    paths: Vec<PathBuf>,
    by_key: Vec<Vec<ChunkData>>,
    budget: Arc<SpillBudget>,
    held: usize,
}

/// A handle to one chunk inside a [`SpillIndex`].
#[derive(Clone, Copy)]
pub struct ChunkRef<'a> {
    index: &'a SpillIndex,
    data: &'a ChunkData,
}

impl SpillIndex {
    /// Merges writers; keys must be below `keys`.
    pub fn merge(writers: Vec<SpillWriter>, keys: usize) -> Result<SpillIndex> {
        let mut by_key: Vec<Vec<ChunkData>> = (0..keys).map(|_| Vec::new()).collect();
        let mut files: Vec<Option<File>> = Vec::new();
        let mut paths: Vec<PathBuf> = Vec::new();
        let mut held = 0;
        let mut budget = None;
        for w in writers {
            held += w.held;
            budget.get_or_insert_with(|| w.budget.clone());
            if let Some((id, path, mut file, _)) = w.file {
                file.flush().map_err(|e| ReconError::io(&path, e))?;
                if files.len() <= id {
                    files.resize_with(id + 1, || None);
                    paths.resize_with(id + 1, PathBuf::new);
                }
                files[id] = Some(file);
                paths[id] = path;
            }
            for (key, data) in w.chunks {
                let slot = by_key
                    .get_mut(key as usize)
                    .ok_or_else(|| ReconError::Internal(format!("spill key {key} out of range")))?;
                slot.push(data);
            }
        }
        Ok(SpillIndex {
            files,
            paths,
            by_key,
            budget: budget.unwrap_or_else(|| SpillBudget::new(0)),
            held,
        })
    }

    /// The chunks stored under `key`.
    pub fn chunks(&self, key: u32) -> impl Iterator<Item = ChunkRef<'_>> + '_ {
        self.by_key
            .get(key as usize)
            .into_iter()
            .flatten()
            .map(move |data| ChunkRef { index: self, data })
    }

    /// Total bytes stored under `key`.
    pub fn key_bytes(&self, key: u32) -> usize {
        self.by_key.get(key as usize).map_or(0, |c| {
            c.iter()
                .map(|d| match d {
                    ChunkData::Memory(v) => v.len(),
                    ChunkData::Disk { len, .. } => *len,
                })
                .sum()
        })
    }
}

impl Drop for SpillIndex {
    fn drop(&mut self) {
        self.budget.release(self.held);
    }
}

impl<'a> ChunkRef<'a> {
    /// Length of the chunk in bytes.
    pub fn len(&self) -> usize {
        match self.data {
            ChunkData::Memory(v) => v.len(),
            ChunkData::Disk { len, .. } => *len,
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The chunk's bytes: borrowed when in memory, read into `buf` when on disk.
    pub fn bytes<'b>(&self, buf: &'b mut Vec<u8>) -> Result<&'b [u8]>
    where
        'a: 'b,
    {
        match self.data {
            ChunkData::Memory(v) => Ok(v.as_slice()),
            ChunkData::Disk { file, offset, len } => {
                let (Some(Some(f)), Some(path)) =
                    (self.index.files.get(*file), self.index.paths.get(*file))
                else {
                    return Err(ReconError::Internal("spill file not open".into()));
                };
                buf.resize(*len, 0);
                f.read_exact_at(buf, *offset)
                    .map_err(|e| ReconError::io(path, e))?;
                Ok(buf.as_slice())
            }
        }
    }
}

/// Per-key staging buffers that cut records into chunks for a [`SpillWriter`].
pub struct Partitioner {
    buffers: Vec<Vec<u8>>,
    chunk_bytes: usize,
    key_base: u32,
}

impl Partitioner {
    /// `keys` buffers, flushed to keys `key_base..key_base + keys` once `chunk_bytes` full.
    pub fn new(keys: usize, chunk_bytes: usize, key_base: u32) -> Self {
        Partitioner {
            buffers: (0..keys).map(|_| Vec::new()).collect(),
            chunk_bytes,
            key_base,
        }
    }

    /// Stages one record of the run's layout. Inlined, so a caller passing
    /// a fixed-size array gets a copy of a few moves instead of a `memcpy`
    /// call per row; chunks hold whole records because `chunk_bytes` is a
    /// multiple of the record size (see `Sizing::plan`).
    #[inline]
    pub fn push(&mut self, slot: usize, record: &[u8], out: &mut SpillWriter) -> Result<()> {
        let buf = &mut self.buffers[slot];
        if buf.capacity() == 0 {
            buf.reserve_exact(self.chunk_bytes);
        }
        buf.extend_from_slice(record);
        if buf.len() + record.len() > self.chunk_bytes {
            let full = std::mem::replace(buf, Vec::with_capacity(self.chunk_bytes));
            out.push(self.key_base + slot as u32, full)?;
        }
        Ok(())
    }

    /// Flushes every partial buffer and frees the staging memory.
    pub fn finish(&mut self, out: &mut SpillWriter) -> Result<()> {
        for (slot, buf) in self.buffers.iter_mut().enumerate() {
            let full = std::mem::take(buf);
            out.push(self.key_base + slot as u32, full)?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read_all(index: &SpillIndex, key: u32) -> Vec<u8> {
        let mut buf = Vec::new();
        let mut out = Vec::new();
        for c in index.chunks(key) {
            out.extend_from_slice(c.bytes(&mut buf).unwrap());
        }
        out
    }

    #[test]
    fn chunks_stay_in_memory_while_the_allowance_lasts_then_go_to_disk() {
        let dir = tempfile::tempdir().unwrap();
        // Room for two 100-byte chunks in memory; the third spills.
        let budget = SpillBudget::new(200);
        let mut w = SpillWriter::new(dir.path().to_path_buf(), budget.clone());
        w.push(0, vec![1; 100]).unwrap();
        w.push(1, vec![2; 100]).unwrap();
        w.push(0, vec![3; 100]).unwrap();
        w.push(1, Vec::new()).unwrap(); // ignored
        assert_eq!(budget.spilled_bytes(), 100);
        let index = SpillIndex::merge(vec![w], 2).unwrap();
        let key0 = read_all(&index, 0);
        assert_eq!(key0.len(), 200);
        assert!(key0[..100].iter().all(|&b| b == 1) && key0[100..].iter().all(|&b| b == 3));
        assert_eq!(read_all(&index, 1), vec![2; 100]);
        assert_eq!(index.key_bytes(0), 200);
        // Dropping the index gives the memory allowance back.
        drop(index);
        assert!(budget.try_hold(200));
    }

    #[test]
    fn a_key_out_of_range_is_an_error() {
        let dir = tempfile::tempdir().unwrap();
        let mut w = SpillWriter::new(dir.path().to_path_buf(), SpillBudget::new(1 << 20));
        w.push(5, vec![0; 8]).unwrap();
        assert!(SpillIndex::merge(vec![w], 2).is_err());
    }

    #[test]
    fn the_partitioner_cuts_whole_records_per_slot() {
        let dir = tempfile::tempdir().unwrap();
        let mut w = SpillWriter::new(dir.path().to_path_buf(), SpillBudget::new(0));
        let mut p = Partitioner::new(2, 48, 10);
        for i in 0..5u8 {
            p.push((i % 2) as usize, &[i; 24], &mut w).unwrap();
        }
        p.finish(&mut w).unwrap();
        let index = SpillIndex::merge(vec![w], 12).unwrap();
        let even = read_all(&index, 10);
        assert_eq!(even.len(), 3 * 24);
        assert!(index.chunks(10).all(|c| c.len() % 24 == 0 && c.len() <= 48));
        assert_eq!(read_all(&index, 11).len(), 2 * 24);
    }
}
