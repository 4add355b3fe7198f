//! Formats with stored types and row counts: Parquet (units are row groups),
//! Arrow IPC (units are record batches of a file; a stream is one unit) and
//! ORC (units are stripes; the data files of Iceberg tables, read in
//! [`super::orc`]).

use std::io::{BufReader, Read, Seek, SeekFrom};
use std::path::Path;
use std::sync::Arc;

use arrow::array::{ArrayRef, RecordBatch, UInt32Array};
use arrow::datatypes::{SchemaRef, TimeUnit};
use arrow::ipc::reader::{FileReader, StreamReader};
use parquet::arrow::arrow_reader::{
    ArrowReaderMetadata, ArrowReaderOptions, ParquetRecordBatchReaderBuilder, RowSelection,
    RowSelector,
};
use parquet::arrow::ProjectionMask;

use super::dictionary_pages::{self, DictionaryChunk};
use crate::config::Int96Unit;
use crate::error::{guard, ReconError, Result};
use crate::input::locator::{BlockSink, Unit, POS_BITS};
use crate::input::store::{Blob, Object, SharedBlob};

/// Metadata of one Parquet or IPC file.
pub(crate) struct BlockMeta {
    pub schema: SchemaRef,
    kind: Kind,
    /// The object, when the file is in an object store.
    pub(in crate::input) remote: Option<Arc<Object>>,
    /// Dictionary pages fetched for row selections of a remote file, by
    /// offset: the evidence reads a row group once per fetch, and each
    /// would fetch the same dictionaries again. All files together keep at
    /// most [`DICTIONARY_CACHE`] bytes.
    dictionaries: std::sync::Mutex<Vec<(u64, bytes::Bytes)>>,
}

/// Bytes of dictionary pages the remote files of a process keep between
/// selections, and what they keep now.
const DICTIONARY_CACHE: usize = 32 << 20;
static DICTIONARY_CACHED: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

impl Drop for BlockMeta {
    fn drop(&mut self) {
        let cache = self
            .dictionaries
            .get_mut()
            .unwrap_or_else(|e| e.into_inner());
        let held: usize = cache.iter().map(|(_, b)| b.len()).sum();
        DICTIONARY_CACHED.fetch_sub(held, std::sync::atomic::Ordering::Relaxed);
    }
}

enum Kind {
    Parquet {
        meta: ArrowReaderMetadata,
        /// INT96 leaves, whose values are checked against the unit they are read in.
        int96: Vec<Int96Leaf>,
        /// For scans: the same file with its dictionary-only string columns
        /// read as Arrow dictionaries, so each distinct value is decoded and
        /// encoded once per column chunk instead of once per row.
        scan_meta: Option<ArrowReaderMetadata>,
        /// Position of each row group's first row, plus the end.
        starts: Vec<u64>,
        /// For fetches by locator: `meta` with the offset index, loaded on
        /// the first fetch, so a row selection reads only the pages that
        /// hold the selected rows instead of whole column chunks.
        fetch_meta: std::sync::OnceLock<ArrowReaderMetadata>,
    },
    IpcFile {
        /// Position of each record batch's first row, plus the end.
        starts: Vec<u64>,
    },
    IpcStream,
    /// An ORC file (Iceberg's data and delete files).
    #[cfg(feature = "iceberg")]
    Orc(super::orc::OrcMeta),
    /// Record batches held in memory (a library caller's table): read in
    /// place, never copied; a unit is one batch.
    Memory {
        batches: Arc<[RecordBatch]>,
        /// Position of each batch's first row, plus the end.
        starts: Vec<u64>,
    },
}

fn starts_of(path: &Path, counts: impl Iterator<Item = i64>) -> Result<Vec<u64>> {
    let mut starts = vec![0u64];
    let mut next = 0u64;
    for n in counts {
        let n = u64::try_from(n)
            .map_err(|_| ReconError::input(path, "negative row count in metadata"))?;
        next = next
            .checked_add(n)
            .ok_or_else(|| ReconError::input(path, "row count in metadata overflows"))?;
        starts.push(next);
    }
    Ok(starts)
}

/// Reads the row count of every record batch of an IPC file from the
/// footer and the batches' message headers, without reading their bodies.
fn ipc_batch_rows(path: &Path, remote: Option<&Arc<Object>>) -> Result<Vec<i64>> {
    let bad = |m: String| ReconError::input(path, format!("not a readable Arrow IPC file: {m}"));
    let mut f = Blob::open(path, remote)?;
    let mut tail = [0u8; 10];
    f.seek(SeekFrom::End(-10)).map_err(|e| bad(e.to_string()))?;
    f.read_exact(&mut tail).map_err(|e| bad(e.to_string()))?;
    let footer_len =
        arrow::ipc::reader::read_footer_length(tail).map_err(|e| bad(e.to_string()))?;
    let mut footer = vec![0u8; footer_len];
    f.seek(SeekFrom::End(-10 - footer_len as i64))
        .map_err(|e| bad(e.to_string()))?;
    f.read_exact(&mut footer).map_err(|e| bad(e.to_string()))?;
    let footer = arrow::ipc::root_as_footer(&footer).map_err(|e| bad(e.to_string()))?;
    let mut rows = Vec::new();
    for block in footer.recordBatches().into_iter().flatten() {
        let len = usize::try_from(block.metaDataLength()).map_err(|_| bad("bad block".into()))?;
        let offset = u64::try_from(block.offset()).map_err(|_| bad("bad block".into()))?;
        let mut meta = vec![0u8; len];
        f.seek(SeekFrom::Start(offset))
            .map_err(|e| bad(e.to_string()))?;
        f.read_exact(&mut meta).map_err(|e| bad(e.to_string()))?;
        // Current files prefix a message with 0xFFFFFFFF and its length; old ones with the length only.
        let skip = if meta.starts_with(&[0xff; 4]) { 8 } else { 4 };
        let body = meta
            .get(skip..)
            .ok_or_else(|| bad("truncated block".into()))?;
        let message = arrow::ipc::root_as_message(body).map_err(|e| bad(e.to_string()))?;
        let batch = message
            .header_as_record_batch()
            .ok_or_else(|| bad("a record batch block holds another message".into()))?;
        rows.push(batch.length());
    }
    Ok(rows)
}

/// `meta` (with its schema hints) plus the file's offset index, when it has
/// one: without it a selection still works, reading whole column chunks.
fn with_offset_index(
    path: &Path,
    remote: Option<&Arc<Object>>,
    meta: &ArrowReaderMetadata,
) -> Result<ArrowReaderMetadata> {
    use parquet::file::metadata::{PageIndexPolicy, ParquetMetaDataReader};
    let file = Blob::open(path, remote)?;
    let pq = guard(path, || {
        ParquetMetaDataReader::new()
            .with_offset_index_policy(PageIndexPolicy::Optional)
            .parse_and_finish(&file)
            .map_err(|e| ReconError::parquet(path, e))
    })?;
    ArrowReaderMetadata::try_new(
        Arc::new(pq),
        ArrowReaderOptions::new().with_schema(meta.schema().clone()),
    )
    .map_err(|e| ReconError::parquet(path, e))
}

impl BlockMeta {
    pub(crate) fn parquet(
        path: &Path,
        remote: Option<&Arc<Object>>,
        int96_unit: Int96Unit,
    ) -> Result<BlockMeta> {
        let file = Blob::open(path, remote)?;
        let meta = guard(path, || {
            ArrowReaderMetadata::load(&file, ArrowReaderOptions::new())
                .map_err(|e| ReconError::parquet(path, e))
        })?;
        let (meta, int96) = int96_hints(path, meta, int96_unit)?;
        // String and binary views (what newer writers such as delta-rs and
        // Polars store) are read as plain strings and binaries: the same
        // values, so files of one table written by different writers share
        // one schema.
        let meta = with_field_hints(&meta, |_, f| match f.data_type() {
            arrow::datatypes::DataType::Utf8View => Some(arrow::datatypes::DataType::Utf8),
            arrow::datatypes::DataType::BinaryView => Some(arrow::datatypes::DataType::Binary),
            _ => None,
        })
        .map_err(|e| ReconError::parquet(path, e))?
        .unwrap_or(meta);
        let starts = starts_of(
            path,
            meta.metadata().row_groups().iter().map(|rg| rg.num_rows()),
        )?;
        let scan_meta = dictionary_hints(&meta);
        Ok(BlockMeta {
            schema: meta.schema().clone(),
            kind: Kind::Parquet {
                meta,
                int96,
                scan_meta,
                starts,
                fetch_meta: std::sync::OnceLock::new(),
            },
            remote: remote.cloned(),
            dictionaries: Default::default(),
        })
    }

    pub(crate) fn ipc(path: &Path, remote: Option<&Arc<Object>>) -> Result<BlockMeta> {
        let mut head = [0u8; 6];
        let n = Blob::open(path, remote)?
            .read(&mut head)
            .map_err(|e| ReconError::input(path, e.to_string()))?;
        guard(path, || {
            if n == 6 && &head == b"ARROW1" {
                let reader = FileReader::try_new(BufReader::new(Blob::open(path, remote)?), None)
                    .map_err(|e| {
                    ReconError::input(path, format!("not a readable Arrow IPC file: {e}"))
                })?;
                let starts = starts_of(path, ipc_batch_rows(path, remote)?.into_iter())?;
                Ok(BlockMeta {
                    schema: reader.schema(),
                    kind: Kind::IpcFile { starts },
                    remote: remote.cloned(),
                    dictionaries: Default::default(),
                })
            } else {
                let reader = StreamReader::try_new(BufReader::new(Blob::open(path, remote)?), None)
                    .map_err(|e| {
                        ReconError::input(
                            path,
                            format!("not a readable Arrow IPC file or stream: {e}"),
                        )
                    })?;
                Ok(BlockMeta {
                    schema: reader.schema(),
                    kind: Kind::IpcStream,
                    remote: remote.cloned(),
                    dictionaries: Default::default(),
                })
            }
        })
    }

    /// An ORC file.
    #[cfg(feature = "iceberg")]
    pub(crate) fn orc(path: &Path, remote: Option<&Arc<Object>>) -> Result<BlockMeta> {
        let orc = super::orc::OrcMeta::open(path, remote)?;
        Ok(BlockMeta {
            schema: orc.schema.clone(),
            kind: Kind::Orc(orc),
            remote: remote.cloned(),
            dictionaries: Default::default(),
        })
    }

    /// Batches in memory, all of `schema` (the caller checked it).
    pub(crate) fn memory(
        path: &Path,
        schema: SchemaRef,
        batches: Arc<[RecordBatch]>,
    ) -> Result<BlockMeta> {
        let counts = batches.iter().map(|b| b.num_rows() as i64);
        let starts = starts_of(path, counts)?;
        Ok(BlockMeta {
            schema,
            kind: Kind::Memory { batches, starts },
            remote: None,
            dictionaries: Default::default(),
        })
    }

    /// Rows in the file, when its metadata says.
    pub(crate) fn rows(&self) -> Option<u64> {
        match &self.kind {
            Kind::Parquet { starts, .. }
            | Kind::IpcFile { starts }
            | Kind::Memory { starts, .. } => starts.last().copied(),
            #[cfg(feature = "iceberg")]
            Kind::Orc(o) => o.starts.last().copied(),
            Kind::IpcStream => None,
        }
    }

    pub(crate) fn units(&self, file: usize) -> Vec<Unit> {
        let starts = match &self.kind {
            Kind::Parquet { starts, .. }
            | Kind::IpcFile { starts }
            | Kind::Memory { starts, .. } => starts,
            #[cfg(feature = "iceberg")]
            Kind::Orc(o) => &o.starts,
            Kind::IpcStream => return vec![Unit::Stream { file }],
        };
        starts
            .windows(2)
            .enumerate()
            .filter(|(_, w)| w[1] > w[0])
            .map(|(block, w)| Unit::Block {
                file,
                block,
                first: w[0],
                rows: w[1] - w[0],
            })
            .collect()
    }

    /// Reads a unit's `projected` file columns (ascending), calling `each`
    /// with each batch's columns, its first row's position and its row count
    /// (which no column gives when only partition columns are wanted). Returns rows read.
    ///
    /// A block unit may name a slice of its block (`first`, `rows` inside
    /// it: a targeted second pass); then only that slice is read, and with
    /// the file's offset index only the pages that hold it.
    pub(crate) fn read(
        &self,
        path: &Path,
        unit: &Unit,
        projected: &[usize],
        batch_size: usize,
        each: &mut BlockSink<'_>,
    ) -> Result<u64> {
        let mut pos = 0u64;
        let (first, expect) = match unit {
            Unit::Block { first, rows, .. } => (*first, Some(*rows)),
            _ => (0, None),
        };
        match (&self.kind, unit) {
            (Kind::Parquet { .. }, Unit::Block { block, rows, .. }) => {
                pos =
                    self.read_parquet(path, *block, (first, *rows), projected, batch_size, each)?;
            }
            (Kind::IpcFile { starts }, Unit::Block { block, rows, .. }) => {
                let mut reader = FileReader::try_new(
                    BufReader::new(Blob::open(path, self.remote.as_ref())?),
                    Some(projected.to_vec()),
                )
                .map_err(|e| ReconError::arrow(path, e))?;
                reader
                    .set_index(*block)
                    .map_err(|e| ReconError::arrow(path, e))?;
                if let Some(batch) = reader.next() {
                    let batch = batch.map_err(|e| ReconError::arrow(path, e))?;
                    // A slice of the record batch (a targeted second pass).
                    let offset = first.saturating_sub(starts[*block]) as usize;
                    let n = (*rows as usize).min(batch.num_rows().saturating_sub(offset));
                    let batch = batch.slice(offset, n);
                    each(batch.columns(), first, batch.num_rows())?;
                    pos += batch.num_rows() as u64;
                }
            }
            (Kind::Memory { batches, starts }, Unit::Block { block, rows, .. }) => {
                let batch = batches
                    .get(*block)
                    .ok_or_else(|| ReconError::Internal("batch beyond the table".into()))?;
                // A slice of the batch (a targeted second pass), and the
                // projected columns: both are views, nothing is copied.
                let offset = first.saturating_sub(starts[*block]) as usize;
                let n = (*rows as usize).min(batch.num_rows().saturating_sub(offset));
                let cols: Vec<ArrayRef> = projected
                    .iter()
                    .map(|&c| batch.column(c).slice(offset, n))
                    .collect();
                each(&cols, first, n)?;
                pos += n as u64;
            }
            #[cfg(feature = "iceberg")]
            (Kind::Orc(o), Unit::Block { block, rows, .. }) => {
                let remote = self.remote.as_ref();
                pos = o.read(
                    path,
                    remote,
                    *block,
                    (first, *rows),
                    projected,
                    batch_size,
                    each,
                )?;
            }
            (Kind::IpcStream, Unit::Stream { .. }) => {
                let reader = StreamReader::try_new(
                    BufReader::new(Blob::open(path, self.remote.as_ref())?),
                    Some(projected.to_vec()),
                )
                .map_err(|e| ReconError::arrow(path, e))?;
                for batch in reader {
                    let batch = batch.map_err(|e| ReconError::arrow(path, e))?;
                    if pos + batch.num_rows() as u64 >= 1 << POS_BITS {
                        return Err(ReconError::input(path, "more than 2^44 rows in one file"));
                    }
                    each(batch.columns(), pos, batch.num_rows())?;
                    pos += batch.num_rows() as u64;
                }
            }
            _ => return Err(ReconError::Internal("unit does not match its file".into())),
        }
        if let (Some(expect), Unit::Block { block, .. }) = (expect, unit) {
            if pos != expect {
                return Err(ReconError::input(
                    path,
                    format!("block {block} holds {pos} rows but its metadata says {expect}"),
                ));
            }
        }
        Ok(pos)
    }

    /// [`read`](Self::read) for a Parquet row group `block`: the `rows`
    /// rows from position `first` (the whole group, or a slice of it),
    /// dictionary-encoded columns read here, the rest through arrow-rs.
    fn read_parquet(
        &self,
        path: &Path,
        block: usize,
        (first, rows): (u64, u64),
        projected: &[usize],
        batch_size: usize,
        each: &mut BlockSink<'_>,
    ) -> Result<u64> {
        let Kind::Parquet {
            meta,
            scan_meta,
            int96,
            starts,
            fetch_meta,
        } = &self.kind
        else {
            return Err(ReconError::Internal("not a Parquet file".into()));
        };
        let mut pos = 0u64;
        let (start, end) = match starts.get(block..block + 2) {
            Some(w) => (w[0], w[1]),
            None => return Err(ReconError::Internal("block beyond the file".into())),
        };
        if first < start || first + rows > end {
            return Err(ReconError::Internal("slice outside its block".into()));
        }
        let slice = first > start || first + rows < end;
        let leaves: Vec<&Int96Leaf> = int96
            .iter()
            .filter(|l| projected.contains(&l.root))
            .collect();
        if !leaves.is_empty() {
            check_int96(path, self.remote.as_ref(), meta, block, start, &leaves)?;
        }
        let meta = if slice {
            match fetch_meta.get() {
                Some(m) => m,
                None => {
                    let loaded = with_offset_index(path, self.remote.as_ref(), meta)?;
                    fetch_meta.get_or_init(|| loaded)
                }
            }
        } else {
            scan_meta.as_ref().unwrap_or(meta)
        };
        // The columns in the order arrow-rs hands them out (by
        // root), and which of them are read as dictionaries here.
        let mut roots = projected.to_vec();
        roots.sort_unstable();
        roots.dedup();
        // A row selection (a slice) goes through arrow-rs whole.
        let leaves: Vec<Option<usize>> = roots
            .iter()
            .map(|&root| {
                (!slice)
                    .then(|| dictionary_leaf(meta, block, root))
                    .flatten()
            })
            .collect();
        let mask = ProjectionMask::roots(
            meta.metadata().file_metadata().schema_descr(),
            roots
                .iter()
                .zip(&leaves)
                .filter(|(_, leaf)| leaf.is_none())
                .map(|(r, _)| *r),
        );
        let mut blob = Blob::open(path, self.remote.as_ref())?;
        if blob.is_remote() {
            let selection = slice.then(|| skip_select(first - start, rows));
            let needed = needed_ranges(meta, block, Some(projected), selection.as_ref());
            self.prefetch(&mut blob, needed)?;
        }
        let blob = Arc::new(blob);
        let mut dictionaries = roots
            .iter()
            .zip(&leaves)
            .filter_map(|(&root, leaf)| leaf.map(|leaf| (root, leaf)))
            .map(|(root, leaf)| {
                DictionaryChunk::new(
                    path,
                    blob.clone(),
                    meta.metadata(),
                    block,
                    leaf,
                    meta.schema().field(root),
                )
            })
            .collect::<Result<Vec<_>>>()?;
        let mut assemble = |plain: &[ArrayRef], n: usize| -> Result<Vec<ArrayRef>> {
            let (mut plain, mut dict) = (plain.iter(), dictionaries.iter_mut());
            leaves
                .iter()
                .map(|leaf| {
                    let column = match leaf {
                        Some(_) => dict.next().map(|r| r.read(n)).transpose()?,
                        None => plain.next().cloned(),
                    };
                    column
                        .ok_or_else(|| ReconError::Internal("fewer columns than projected".into()))
                })
                .collect()
        };
        if !leaves.is_empty() && leaves.iter().all(Option::is_some) {
            // Every column is read here: batches of the same size
            // as arrow-rs's.
            while pos < rows {
                let n = (rows - pos).min(batch_size as u64) as usize;
                each(&assemble(&[], n)?, first + pos, n)?;
                pos += n as u64;
            }
        } else {
            let mut builder = ParquetRecordBatchReaderBuilder::new_with_metadata(
                SharedBlob(blob.clone()),
                meta.clone(),
            )
            .with_row_groups(vec![block])
            .with_batch_size(batch_size)
            .with_projection(mask);
            if slice {
                builder = builder.with_row_selection(skip_select(first - start, rows));
            }
            let reader = builder.build().map_err(|e| ReconError::parquet(path, e))?;
            for batch in reader {
                let batch = batch.map_err(|e| ReconError::arrow(path, e))?;
                let n = batch.num_rows();
                each(&assemble(batch.columns(), n)?, first + pos, n)?;
                pos += n as u64;
            }
        }
        Ok(pos)
    }

    /// Reads the rows at `positions` (ascending, unique) with all file columns.
    pub(crate) fn fetch(
        &self,
        path: &Path,
        positions: &[u64],
        emit: &mut dyn FnMut(Vec<ArrayRef>) -> Result<()>,
    ) -> Result<()> {
        match &self.kind {
            Kind::Parquet {
                meta,
                starts,
                fetch_meta,
                ..
            } => {
                let meta = match fetch_meta.get() {
                    Some(m) => m,
                    None => {
                        let loaded = with_offset_index(path, self.remote.as_ref(), meta)?;
                        fetch_meta.get_or_init(|| loaded)
                    }
                };
                for (block, picks) in group(starts, positions) {
                    let total = (starts[block + 1] - starts[block]) as usize;
                    let sel = RowSelection::from_consecutive_ranges(
                        picks.iter().map(|&r| r..r + 1),
                        total,
                    );
                    let mut blob = Blob::open(path, self.remote.as_ref())?;
                    if blob.is_remote() {
                        self.prefetch(&mut blob, needed_ranges(meta, block, None, Some(&sel)))?;
                    }
                    let reader =
                        ParquetRecordBatchReaderBuilder::new_with_metadata(blob, meta.clone())
                            .with_row_groups(vec![block])
                            .with_batch_size(8192)
                            .with_row_selection(sel)
                            .build()
                            .map_err(|e| ReconError::parquet(path, e))?;
                    for batch in reader {
                        let batch = batch.map_err(|e| ReconError::arrow(path, e))?;
                        emit(batch.columns().to_vec())?;
                    }
                }
            }
            Kind::IpcFile { starts } => {
                let mut reader = FileReader::try_new(
                    BufReader::new(Blob::open(path, self.remote.as_ref())?),
                    None,
                )
                .map_err(|e| ReconError::arrow(path, e))?;
                for (block, picks) in group(starts, positions) {
                    reader
                        .set_index(block)
                        .map_err(|e| ReconError::arrow(path, e))?;
                    let batch = reader
                        .next()
                        .ok_or_else(|| {
                            ReconError::input(path, format!("record batch {block} is missing"))
                        })?
                        .map_err(|e| ReconError::arrow(path, e))?;
                    emit(take_rows(
                        path,
                        batch.columns(),
                        picks.iter().map(|&r| r as u32),
                    )?)?;
                }
            }
            #[cfg(feature = "iceberg")]
            Kind::Orc(o) => {
                for (block, picks) in group(&o.starts, positions) {
                    let batch = o.stripe(path, self.remote.as_ref(), block)?;
                    emit(take_rows(
                        path,
                        batch.columns(),
                        picks.iter().map(|&r| r as u32),
                    )?)?;
                }
            }
            Kind::Memory { batches, starts } => {
                for (block, picks) in group(starts, positions) {
                    let batch = batches.get(block).ok_or_else(|| {
                        ReconError::Internal("position beyond the in-memory table".into())
                    })?;
                    emit(take_rows(
                        path,
                        batch.columns(),
                        picks.iter().map(|&r| r as u32),
                    )?)?;
                }
            }
            Kind::IpcStream => {
                let reader = StreamReader::try_new(
                    BufReader::new(Blob::open(path, self.remote.as_ref())?),
                    None,
                )
                .map_err(|e| ReconError::arrow(path, e))?;
                let mut pos = 0u64;
                let mut next = 0usize;
                for batch in reader {
                    if next == positions.len() {
                        break;
                    }
                    let batch = batch.map_err(|e| ReconError::arrow(path, e))?;
                    let end = pos + batch.num_rows() as u64;
                    let stop = next + positions[next..].partition_point(|&p| p < end);
                    if stop > next {
                        let rows = positions[next..stop].iter().map(|&p| (p - pos) as u32);
                        emit(take_rows(path, batch.columns(), rows)?)?;
                        next = stop;
                    }
                    pos = end;
                }
                if next != positions.len() {
                    return Err(ReconError::input(
                        path,
                        "stream ended before the rows recon read earlier",
                    ));
                }
            }
        }
        Ok(())
    }
}

/// Skips `skip` rows of a row group, then selects `rows`.
fn skip_select(skip: u64, rows: u64) -> RowSelection {
    RowSelection::from(vec![
        RowSelector::skip(skip as usize),
        RowSelector::select(rows as usize),
    ])
}

/// What a read of one row group of a remote file fetches.
struct Needed {
    ranges: Vec<std::ops::Range<u64>>,
    /// What precedes each column chunk's first data page: its dictionary.
    dictionaries: Vec<std::ops::Range<u64>>,
}

impl BlockMeta {
    /// Fetches what a read needs into `blob`, taking dictionary pages from
    /// (and adding them to) this file's cache.
    fn prefetch(&self, blob: &mut Blob, needed: Needed) -> Result<()> {
        let mut known = Vec::new();
        let mut ranges = needed.ranges;
        let mut missing = Vec::new();
        {
            let cache = self.dictionaries.lock().unwrap_or_else(|e| e.into_inner());
            for d in needed.dictionaries {
                let len = (d.end - d.start) as usize;
                match cache.iter().find(|(s, b)| *s == d.start && b.len() == len) {
                    Some((s, b)) => known.push((*s, b.clone())),
                    None => {
                        ranges.push(d.clone());
                        missing.push(d);
                    }
                }
            }
        }
        // Not under the lock: other threads' selections of this file fetch
        // at the same time.
        blob.prefetch(&ranges, known)?;
        let mut cache = self.dictionaries.lock().unwrap_or_else(|e| e.into_inner());
        for d in missing {
            if cache.iter().any(|(s, _)| *s == d.start) {
                continue; // another thread cached it meanwhile
            }
            use std::sync::atomic::Ordering::Relaxed;
            let Some(b) = blob.held(&d) else { continue };
            // Full: later selections fetch their dictionaries again.
            if DICTIONARY_CACHED.fetch_add(b.len(), Relaxed) + b.len() > DICTIONARY_CACHE {
                DICTIONARY_CACHED.fetch_sub(b.len(), Relaxed);
                continue;
            }
            // A copy: a slice would keep the whole fetched request alive.
            cache.push((d.start, bytes::Bytes::copy_from_slice(&b)));
        }
        Ok(())
    }
}

/// The byte ranges a read of row group `rg` needs, for a file read by
/// ranges: each column chunk of the projected columns (`None`: all), or,
/// under a row selection with the file's offset index, only the pages that
/// hold the selected rows plus what precedes the first data page (the
/// dictionary). Whatever a reader asks for beyond these is fetched then.
fn needed_ranges(
    meta: &ArrowReaderMetadata,
    rg: usize,
    projected: Option<&[usize]>,
    selection: Option<&RowSelection>,
) -> Needed {
    let pq = meta.metadata();
    let descr = pq.file_metadata().schema_descr();
    let group = pq.row_group(rg);
    let pages = pq.page_index_for_row_group(rg);
    let mut ranges = Vec::new();
    let mut dictionaries = Vec::new();
    for (leaf, chunk) in group.columns().iter().enumerate() {
        if projected.is_some_and(|p| !p.contains(&descr.get_column_root_idx(leaf))) {
            continue;
        }
        let (start, len) = chunk.byte_range();
        let locations = pages.offset_index(leaf).map(|o| o.page_locations());
        match (selection, locations) {
            (Some(sel), Some(locs)) if !locs.is_empty() => {
                let first_page = locs[0].offset as u64;
                if first_page > start {
                    dictionaries.push(start..first_page);
                }
                ranges.extend(sel.scan_ranges(locs));
            }
            _ => ranges.push(start..start + len),
        }
    }
    Needed {
        ranges,
        dictionaries,
    }
}

/// One INT96 leaf column of a Parquet file.
#[derive(Debug, Clone)]
struct Int96Leaf {
    /// Leaf (column chunk) index.
    leaf: usize,
    /// Top-level field holding it.
    root: usize,
    /// Dotted path, for messages.
    name: String,
    /// The leaf is the top-level field itself, so a level is a row.
    top_level: bool,
    /// The unit its values are decoded into.
    unit: TimeUnit,
}

/// INT96 is a legacy timestamp (nanoseconds of the day and a Julian day)
/// that arrow-rs decodes into an i64 of the requested unit with wrapping
/// arithmetic: Spark's 9999-12-31 comes out as 1816 at nanosecond precision.
/// recon reads top-level INT96 columns in `unit` (microseconds by default,
/// which holds every date Spark can write) and nested ones in nanoseconds
/// (the reader's default), and [`check_int96`] proves, per row group, that
/// every value converted exactly before any of them is hashed.
fn int96_hints(
    path: &Path,
    meta: ArrowReaderMetadata,
    unit: Int96Unit,
) -> Result<(ArrowReaderMetadata, Vec<Int96Leaf>)> {
    use arrow::datatypes::DataType;
    use parquet::basic::Type as Physical;
    let descr = meta.metadata().file_metadata().schema_descr_ptr();
    let mut leaves = Vec::new();
    for (leaf, col) in descr.columns().iter().enumerate() {
        if col.physical_type() != Physical::INT96 {
            continue;
        }
        let parts = col.path().parts();
        leaves.push(Int96Leaf {
            leaf,
            root: descr.get_column_root_idx(leaf),
            name: parts.join("."),
            top_level: parts.len() == 1,
            unit: TimeUnit::Nanosecond,
        });
    }
    if leaves.is_empty() {
        return Ok((meta, leaves));
    }
    let hinted = with_field_hints(&meta, |i, f| {
        let leaf = leaves.iter_mut().find(|l| l.top_level && l.root == i)?;
        // The unit is recon's choice, whatever an embedded Arrow schema says
        // (pyarrow records the unit it wrote from); the zone is kept.
        let DataType::Timestamp(was, tz) = f.data_type() else {
            return None;
        };
        leaf.unit = unit.time_unit();
        (leaf.unit != *was).then(|| DataType::Timestamp(leaf.unit, tz.clone()))
    })
    .map_err(|e| ReconError::parquet(path, e))?;
    Ok((hinted.unwrap_or(meta), leaves))
}

/// The metadata read with some top-level fields' types replaced: `hint`
/// gives the new type of field `i`, or None to keep it. None when no field
/// changes.
fn with_field_hints(
    meta: &ArrowReaderMetadata,
    mut hint: impl FnMut(usize, &arrow::datatypes::Field) -> Option<arrow::datatypes::DataType>,
) -> parquet::errors::Result<Option<ArrowReaderMetadata>> {
    use arrow::datatypes::{Field, Schema};
    let schema = meta.schema();
    let mut changed = false;
    let fields: Vec<Field> = schema
        .fields()
        .iter()
        .enumerate()
        .map(|(i, f)| match hint(i, f) {
            Some(dt) => {
                changed = true;
                f.as_ref().clone().with_data_type(dt)
            }
            None => f.as_ref().clone(),
        })
        .collect();
    if !changed {
        return Ok(None);
    }
    let hinted = Arc::new(Schema::new_with_metadata(fields, schema.metadata().clone()));
    ArrowReaderMetadata::try_new(
        meta.metadata().clone(),
        ArrowReaderOptions::new().with_schema(hinted),
    )
    .map(Some)
}

/// The exact value of an INT96 timestamp in `unit`, or why it has none:
/// it does not fit an i64 of that unit, or it has digits below the unit.
///
/// The value recon hashes is what the Parquet reader computes (Julian day
/// and nanoseconds of the day combined with wrapping i64 arithmetic); this
/// accepts it only when it is provably the value that was written:
/// - the exact sum, computed in i128, fits the unit with nothing below it; or
/// - in microseconds, the value re-encodes to the same bits under Spark's
///   writer (`DateTimeUtils.toJulianDay`), whose Java arithmetic wraps for
///   years beyond about 290,000: Spark reads those back with the same
///   wrapping arithmetic, so this is the microsecond value Spark wrote.
pub(crate) fn int96_exact(
    value: &parquet::data_type::Int96,
    unit: TimeUnit,
) -> Result<i64, &'static str> {
    const JULIAN_DAY_OF_EPOCH: i64 = 2_440_588;
    const NANOS_PER_DAY: i128 = 86_400_000_000_000;
    const MICROS_PER_DAY: i64 = 86_400_000_000;
    let d = value.data();
    let nanos_of_day = ((d[1] as i64) << 32).wrapping_add(d[0] as i64);
    let day = d[2] as i32;
    let nanos = (day as i128 - JULIAN_DAY_OF_EPOCH as i128) * NANOS_PER_DAY + nanos_of_day as i128;
    let per = crate::units::nanos_per(unit);
    if nanos % per as i128 == 0 {
        if let Ok(v) = i64::try_from(nanos / per as i128) {
            return Ok(v);
        }
    }
    if unit == TimeUnit::Microsecond && nanos_of_day % 1_000 == 0 {
        let read = (day as i64 - JULIAN_DAY_OF_EPOCH)
            .wrapping_mul(MICROS_PER_DAY)
            .wrapping_add(nanos_of_day / 1_000);
        let julian_us = read.wrapping_add(JULIAN_DAY_OF_EPOCH * MICROS_PER_DAY);
        let (spark_day, spark_us) = (julian_us / MICROS_PER_DAY, julian_us % MICROS_PER_DAY);
        if spark_day as i32 == day && spark_us.wrapping_mul(1_000) == nanos_of_day {
            return Ok(read);
        }
    }
    if nanos % per as i128 != 0 {
        Err("has digits below the unit")
    } else {
        Err("is out of range")
    }
}

/// Human form of an INT96 value, exact to the nanosecond, for messages.
fn int96_display(value: &parquet::data_type::Int96) -> String {
    let d = value.data();
    let nanos_of_day = ((d[1] as i64) << 32).wrapping_add(d[0] as i64);
    let day = d[2] as i32 as i64 - 2_440_588;
    let date = chrono::NaiveDate::from_num_days_from_ce_opt(719_163i64.saturating_add(day) as i32)
        .filter(|_| (0..86_400_000_000_000).contains(&nanos_of_day) && day.abs() < 1 << 31);
    match date {
        Some(date) => {
            let secs = nanos_of_day / 1_000_000_000;
            format!(
                "{date}T{:02}:{:02}:{:02}.{:09}",
                secs / 3600,
                secs / 60 % 60,
                secs % 60,
                nanos_of_day % 1_000_000_000
            )
        }
        None => format!("(Julian day {}, {nanos_of_day} ns of the day)", d[2] as i32),
    }
}

/// Decodes one row group's INT96 leaf with the low-level column reader and
/// refuses the first value that the Arrow reader would not hold exactly.
fn check_int96(
    path: &Path,
    remote: Option<&Arc<Object>>,
    meta: &ArrowReaderMetadata,
    block: usize,
    first_row: u64,
    leaves: &[&Int96Leaf],
) -> Result<()> {
    use parquet::file::properties::ReaderProperties;
    use parquet::file::serialized_reader::SerializedRowGroupReader;
    // The footer is already parsed: read the row group from its metadata.
    let pq = meta.metadata();
    let group = SerializedRowGroupReader::new(
        Arc::new(Blob::open(path, remote)?),
        pq.row_group(block),
        pq.page_index_for_row_group(block),
        Arc::new(ReaderProperties::builder().build()),
    )
    .map_err(|e| ReconError::parquet(path, e))?;
    for leaf in leaves {
        check_int96_leaf(path, meta, &group, block, first_row, leaf)?;
    }
    Ok(())
}

fn check_int96_leaf(
    path: &Path,
    meta: &ArrowReaderMetadata,
    group: &dyn parquet::file::reader::RowGroupReader,
    block: usize,
    first_row: u64,
    leaf: &Int96Leaf,
) -> Result<()> {
    use parquet::column::reader::ColumnReader;
    let pq = |e| ReconError::parquet(path, e);
    let ColumnReader::Int96ColumnReader(mut column) =
        group.get_column_reader(leaf.leaf).map_err(pq)?
    else {
        return Err(ReconError::Internal(format!(
            "column {} is not INT96",
            leaf.name
        )));
    };
    let max_def = meta
        .metadata()
        .file_metadata()
        .schema_descr()
        .column(leaf.leaf)
        .max_def_level();
    let refuse = |v: &parquet::data_type::Int96, why: &str, row: u64| {
        let at = if leaf.top_level {
            format!("row {row}")
        } else {
            format!("row group {block}")
        };
        let fix = match (leaf.unit, leaf.top_level) {
            (TimeUnit::Microsecond, true) if why.starts_with("has digits") => {
                "; pass `--int96-unit ns` to read INT96 in nanoseconds"
            }
            (TimeUnit::Nanosecond, true) => {
                "; pass `--int96-unit us` to read INT96 in microseconds (nanoseconds hold 1677-09-21 to 2262-04-11 only)"
            }
            _ => "",
        };
        ReconError::input(
            path,
            format!(
                "{at}, column '{}': INT96 timestamp {} {why} for Timestamp({:?}){fix}",
                leaf.name,
                int96_display(v),
                leaf.unit
            ),
        )
    };
    let (mut defs, mut values) = (Vec::new(), Vec::new());
    let mut row = first_row;
    loop {
        defs.clear();
        values.clear();
        let (records, _, levels) = column
            .read_records(8192, Some(&mut defs), None, &mut values)
            .map_err(pq)?;
        if records == 0 && levels == 0 {
            return Ok(());
        }
        // The row of each value: for a top-level column a level is a row, and
        // without definition levels (a required column) so is a value.
        let rows: Vec<u64> = if max_def == 0 {
            (0..values.len() as u64).map(|i| row + i).collect()
        } else {
            defs.iter()
                .enumerate()
                .filter(|(_, &d)| d == max_def)
                .map(|(i, _)| row + i as u64)
                .collect()
        };
        for (v, &r) in values.iter().zip(&rows) {
            int96_exact(v, leaf.unit).map_err(|why| refuse(v, why, r))?;
        }
        row += records as u64;
    }
}

/// The metadata to scan `meta` with when some top-level string columns are
/// dictionary-encoded on every data page of every row group (a column whose
/// writer fell back to plain pages is read as plain strings).
fn dictionary_hints(meta: &ArrowReaderMetadata) -> Option<ArrowReaderMetadata> {
    use arrow::datatypes::DataType;
    let pq = meta.metadata();
    let fields = meta.schema().fields().len();
    let columns = pq.file_metadata().schema_descr().columns();
    with_field_hints(meta, |i, f| {
        let stringy = matches!(f.data_type(), DataType::Utf8 | DataType::LargeUtf8);
        // Top-level primitive columns only: leaf index equals field index then.
        let leaf_matches = columns.len() == fields && columns[i].path().parts().len() == 1;
        let dictionary_only = stringy
            && leaf_matches
            && pq.num_row_groups() > 0
            && pq
                .row_groups()
                .iter()
                .all(|rg| dictionary_pages::dictionary_only_chunk(rg.column(i)));
        dictionary_only.then(|| {
            DataType::Dictionary(Box::new(DataType::Int32), Box::new(f.data_type().clone()))
        })
    })
    .ok()
    .flatten()
}

/// The leaf column of top-level field `root` when [`dictionary_pages`]
/// reads it in row group `group`: a primitive column whose every data page
/// is dictionary-encoded, of a type whose values it can hand on exactly.
fn dictionary_leaf(meta: &ArrowReaderMetadata, group: usize, root: usize) -> Option<usize> {
    let descr = meta.metadata().file_metadata().schema_descr();
    let mut leaves = (0..descr.num_columns()).filter(|&l| descr.get_column_root_idx(l) == root);
    let leaf = leaves.next()?;
    if leaves.next().is_some() {
        return None;
    }
    let field = meta.schema().fields().get(root)?;
    dictionary_pages::readable(meta.metadata(), group, leaf, field).then_some(leaf)
}

/// Groups ascending positions by the block (given by `starts`) holding them,
/// as (block, rows within the block).
fn group(starts: &[u64], positions: &[u64]) -> Vec<(usize, Vec<usize>)> {
    let mut out: Vec<(usize, Vec<usize>)> = Vec::new();
    for &p in positions {
        let block = starts.partition_point(|&s| s <= p).saturating_sub(1);
        let row = (p - starts[block]) as usize;
        match out.last_mut() {
            Some((b, rows)) if *b == block => rows.push(row),
            _ => out.push((block, vec![row])),
        }
    }
    out
}

fn take_rows(
    path: &Path,
    cols: &[ArrayRef],
    rows: impl Iterator<Item = u32>,
) -> Result<Vec<ArrayRef>> {
    let idx = UInt32Array::from_iter_values(rows);
    cols.iter()
        .map(|c| {
            arrow::compute::take(c.as_ref(), &idx, None).map_err(|e| ReconError::arrow(path, e))
        })
        .collect()
}

#[cfg(test)]
mod dictionary_hint_tests {
    use super::*;
    use arrow::array::StringArray;
    use arrow::datatypes::{DataType, Field, Schema};
    use parquet::arrow::ArrowWriter;
    use parquet::file::properties::WriterProperties;

    /// The scan schema of a one-string-column file written with or without
    /// dictionary encoding, as `BlockMeta::parquet` would choose it.
    fn scan_type(dictionary: bool) -> Option<DataType> {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.parquet");
        let schema = Arc::new(Schema::new(vec![Field::new("s", DataType::Utf8, true)]));
        let values: StringArray = (0..1000)
            .map(|i| (i % 7 != 0).then(|| format!("v{}", i % 10)))
            .collect();
        let batch = RecordBatch::try_new(schema.clone(), vec![Arc::new(values)]).unwrap();
        let props = WriterProperties::builder()
            .set_dictionary_enabled(dictionary)
            .build();
        let mut w =
            ArrowWriter::try_new(std::fs::File::create(&path).unwrap(), schema, Some(props))
                .unwrap();
        w.write(&batch).unwrap();
        w.close().unwrap();
        let file = std::fs::File::open(&path).unwrap();
        let meta = ArrowReaderMetadata::load(&file, ArrowReaderOptions::new()).unwrap();
        dictionary_hints(&meta).map(|m| m.schema().field(0).data_type().clone())
    }

    #[test]
    fn dictionary_only_string_columns_are_scanned_as_dictionaries() {
        // With the parquet crate's default metadata options (encoding
        // statistics as a mask); this once silently stopped applying.
        assert_eq!(
            scan_type(true),
            Some(DataType::Dictionary(
                Box::new(DataType::Int32),
                Box::new(DataType::Utf8)
            ))
        );
        assert_eq!(scan_type(false), None);
    }
}
