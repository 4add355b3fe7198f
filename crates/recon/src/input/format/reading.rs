//! The one seam between a table and its files' formats. A
//! [`FormatReader`] lists a file's units of scan work, reads a unit's stored
//! columns into batches with their rows' locators, and fetches rows back by
//! position. Parquet, Arrow IPC and in-memory batches ([`BlockReader`], over
//! `block::BlockMeta`) and CSV/TSV and NDJSON ([`TextReader`], over the text
//! reader) implement it. The table picks a file's reader (by whether the
//! file has block metadata) and then reads, conforms and fetches every
//! format alike. One step is text's own: a text file is cut into chunks of
//! whole records by a reader thread while it is read (`Table::feed_text`,
//! which the scan calls for a [`Unit::TextFile`]), and the chunks are the
//! units [`FormatReader::read`] takes.

use std::path::Path;

use arrow::array::ArrayRef;

use super::block::BlockMeta;
use super::text::reader::{self, TextCursor, TextTable};
use crate::error::{ReconError, Result};
use crate::input::locator::{pack, Locators, Unit};

/// Receives a unit's stored columns batch by batch: the columns, the
/// batch's row count (the columns may be none) and the rows' locators.
pub(crate) type UnitSink<'a> = dyn FnMut(&[ArrayRef], usize, Locators<'_>) -> Result<()> + 'a;

/// Receives fetched rows: every stored column, in the order asked for.
pub(crate) type RowsSink<'a> = dyn FnMut(Vec<ArrayRef>) -> Result<()> + 'a;

/// What a format keeps of one file between the fetches of a pass: a
/// compressed text file cannot be entered in the middle, so it is read
/// forward once across the pass instead of from its start for each range.
#[derive(Default)]
pub(crate) struct FetchPlace<'t> {
    text: Option<TextCursor<'t>>,
}

/// One file of a table as its format reads it.
pub(crate) trait FormatReader<'t> {
    /// The units of work a scan cuts the file into. A text file is one
    /// unit, [`Unit::TextFile`], which the scan cuts into chunks of whole
    /// records ([`Unit::Text`]) as it reads the file.
    fn units(&self) -> Vec<Unit>;

    /// Reads `unit`'s stored columns `stored` (ascending), calling `each`
    /// per batch; returns the rows read.
    fn read(
        &self,
        unit: &Unit,
        stored: &[usize],
        batch_size: usize,
        each: &mut UnitSink<'_>,
    ) -> Result<u64>;

    /// Reads the rows at `positions` (ascending) with every stored column,
    /// in `positions` order.
    fn fetch(
        &self,
        positions: &[u64],
        place: &mut FetchPlace<'t>,
        emit: &mut RowsSink<'_>,
    ) -> Result<()>;
}

/// A Parquet, Arrow IPC or in-memory file, read by blocks (row groups,
/// record batches); a row's position is its ordinal in the file.
pub(crate) struct BlockReader<'t> {
    pub(crate) meta: &'t BlockMeta,
    pub(crate) path: &'t Path,
    /// The file's index in its table, for locators.
    pub(crate) file: usize,
}

impl<'t> FormatReader<'t> for BlockReader<'t> {
    fn units(&self) -> Vec<Unit> {
        self.meta.units(self.file)
    }

    fn read(
        &self,
        unit: &Unit,
        stored: &[usize],
        batch_size: usize,
        each: &mut UnitSink<'_>,
    ) -> Result<u64> {
        let file = self.file;
        self.meta.read(
            self.path,
            unit,
            stored,
            batch_size,
            &mut |cols, first, n| each(cols, n, Locators::Run(pack(file, first))),
        )
    }

    fn fetch(
        &self,
        positions: &[u64],
        _place: &mut FetchPlace<'t>,
        emit: &mut RowsSink<'_>,
    ) -> Result<()> {
        self.meta.fetch(self.path, positions, emit)
    }
}

/// A CSV/TSV or NDJSON file, read in chunks of whole records; a row's
/// position is the byte offset of its record in the decompressed text.
pub(crate) struct TextReader<'t> {
    pub(crate) table: TextTable<'t>,
    /// The file's index in its table.
    pub(crate) file: usize,
}

impl<'t> FormatReader<'t> for TextReader<'t> {
    fn units(&self) -> Vec<Unit> {
        vec![Unit::TextFile { file: self.file }]
    }

    fn read(
        &self,
        unit: &Unit,
        stored: &[usize],
        batch_size: usize,
        each: &mut UnitSink<'_>,
    ) -> Result<u64> {
        let Unit::Text(chunk) = unit else {
            return Err(ReconError::Internal(
                "a text file is read in chunks of records".into(),
            ));
        };
        reader::read_chunk(self.table, chunk, stored, batch_size, &mut |cols, locs| {
            each(&cols, locs.len(), Locators::List(locs))
        })
    }

    fn fetch(
        &self,
        positions: &[u64],
        place: &mut FetchPlace<'t>,
        emit: &mut RowsSink<'_>,
    ) -> Result<()> {
        reader::fetch(self.table, self.file, positions, &mut place.text, emit)
    }
}
