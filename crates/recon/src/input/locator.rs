//! Locators: where each row of a table lives, as one `u64` (file index and
//! position within the file), and the units of work a scan reads rows in.

/// Bits of a locator that hold the position within a file.
pub(crate) const POS_BITS: u32 = 44;
/// Most files one table may have (the locator's file bits).
pub(crate) const MAX_FILES: usize = 1 << (64 - POS_BITS);

#[inline]
pub(crate) fn pack(file: usize, pos: u64) -> u64 {
    ((file as u64) << POS_BITS) | pos
}

#[inline]
pub(crate) fn unpack(locator: u64) -> (usize, u64) {
    (
        (locator >> POS_BITS) as usize,
        locator & ((1u64 << POS_BITS) - 1),
    )
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

/// Whole records of one text file.
pub struct TextChunk {
    pub file: usize,
    /// Offset of `bytes[0]` in the decompressed file.
    pub base: u64,
    /// Line number (from 1) of `bytes[0]`.
    pub first_line: u64,
    pub bytes: Vec<u8>,
}

/// A unit of scan work.
pub enum Unit {
    /// A Parquet row group or an IPC file's record batch.
    Block {
        /// The file's index in the table.
        file: usize,
        /// The row group's or batch's index in the file.
        block: usize,
        /// Position of the block's first row in its file.
        first: u64,
        /// Rows in the block.
        rows: u64,
    },
    /// A whole IPC stream, read in order.
    Stream {
        /// The file's index in the table.
        file: usize,
    },
    /// A text file, before the feeder cuts it into chunks.
    TextFile {
        /// The file's index in the table.
        file: usize,
    },
    /// Whole records of a text file.
    Text(TextChunk),
}

impl Unit {
    /// The index in the table of the file the unit reads.
    pub fn file(&self) -> usize {
        match self {
            Unit::Block { file, .. } | Unit::Stream { file } | Unit::TextFile { file } => *file,
            Unit::Text(c) => c.file,
        }
    }
}

/// Receives a batch of a block format's unit: its columns, its first row's
/// position and its row count (the columns may be none).
pub(in crate::input) type BlockSink<'a> =
    dyn FnMut(&[arrow::array::ArrayRef], u64, usize) -> crate::error::Result<()> + 'a;
