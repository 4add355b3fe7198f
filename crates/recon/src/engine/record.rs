//! Record layouts: what the scan writes per row and reconciliation reads back.
//!
//! Every partition record starts with a 16-byte partition key (a 128-bit
//! digest, little-endian): its top bits choose the first-level bucket and,
//! when a bucket is split, the next bits choose the part. The rest is a
//! payload that spill and partition never look at. Keyless mode carries
//! (row digest, locator), the row digest being the key; keyed mode will
//! carry (key digest, row digest, column digests, locator).
//!
//! Records of a layout are only ever produced by [`RecordLayout::records`],
//! which cuts a chunk into slices of exactly the layout's size (and refuses a
//! chunk that is not a whole number of them), so decoding cannot read a short
//! slice.

use crate::error::{ReconError, Result};

/// Bytes of the partition key at the start of every record.
pub(crate) const KEY_BYTES: usize = 16;

/// Bytes of one evidence record: locator (u64 LE) then excess copies (u64 LE).
pub(crate) const EVIDENCE_BYTES: usize = 16;

/// The size of one partition record: the key, then an opaque payload.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RecordLayout {
    bytes: usize,
}

impl RecordLayout {
    /// A layout with `payload` bytes after the key.
    pub const fn with_payload(payload: usize) -> RecordLayout {
        RecordLayout {
            bytes: KEY_BYTES + payload,
        }
    }

    /// Bytes per record (memory sizing and spill volume use this).
    pub const fn bytes(&self) -> usize {
        self.bytes
    }

    /// The records of a chunk. A chunk is always written as whole records;
    /// one that is not is a bug, reported rather than half-read.
    pub fn records<'a>(&self, chunk: &'a [u8]) -> Result<std::slice::ChunksExact<'a, u8>> {
        if !chunk.len().is_multiple_of(self.bytes) {
            return Err(ReconError::Internal(format!(
                "a spill chunk of {} bytes is not a whole number of {}-byte records",
                chunk.len(),
                self.bytes
            )));
        }
        Ok(chunk.chunks_exact(self.bytes))
    }

    /// The partition key of a record from [`RecordLayout::records`] (at
    /// least [`KEY_BYTES`] long by construction).
    #[inline]
    pub fn key(record: &[u8]) -> u128 {
        let mut k = [0u8; KEY_BYTES];
        k.copy_from_slice(&record[..KEY_BYTES]);
        u128::from_le_bytes(k)
    }
}

/// Keyless (multiset) records: the row digest as the key, then the locator
/// of the row.
pub struct Keyless;

impl Keyless {
    /// A 16-byte digest key and an 8-byte locator.
    pub const LAYOUT: RecordLayout = RecordLayout::with_payload(8);
    /// Bytes of one record.
    pub const BYTES: usize = Self::LAYOUT.bytes();

    /// The record of a row: its digest (little-endian), then its locator.
    #[inline]
    pub fn encode(digest: u128, locator: u64) -> [u8; Self::BYTES] {
        let mut r = [0u8; Self::BYTES];
        r[..KEY_BYTES].copy_from_slice(&digest.to_le_bytes());
        r[KEY_BYTES..].copy_from_slice(&locator.to_le_bytes());
        r
    }

    /// (digest, locator) of a record cut by `Keyless::LAYOUT.records`.
    #[inline]
    pub fn decode(record: &[u8]) -> (u128, u64) {
        let mut l = [0u8; 8];
        l.copy_from_slice(&record[KEY_BYTES..Self::BYTES]);
        (RecordLayout::key(record), u64::from_le_bytes(l))
    }
}

/// Evidence records: (locator, excess copies).
pub(crate) struct Evidence;

impl Evidence {
    #[inline]
    pub(crate) fn encode(locator: u64, excess: u64) -> [u8; EVIDENCE_BYTES] {
        let mut r = [0u8; EVIDENCE_BYTES];
        r[..8].copy_from_slice(&locator.to_le_bytes());
        r[8..].copy_from_slice(&excess.to_le_bytes());
        r
    }

    /// Every (locator, excess) of a chunk of evidence records.
    pub(crate) fn decode_all(chunk: &[u8], out: &mut Vec<(u64, u64)>) -> Result<()> {
        if !chunk.len().is_multiple_of(EVIDENCE_BYTES) {
            return Err(ReconError::Internal(format!(
                "an evidence chunk of {} bytes is not a whole number of records",
                chunk.len()
            )));
        }
        for rec in chunk.chunks_exact(EVIDENCE_BYTES) {
            let (mut l, mut e) = ([0u8; 8], [0u8; 8]);
            l.copy_from_slice(&rec[..8]);
            e.copy_from_slice(&rec[8..]);
            out.push((u64::from_le_bytes(l), u64::from_le_bytes(e)));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keyless_records_round_trip() {
        let d = 0x0123_4567_89ab_cdef_fedc_ba98_7654_3210u128;
        let rec = Keyless::encode(d, 42);
        assert_eq!(rec.len(), Keyless::LAYOUT.bytes());
        let mut chunk = rec.to_vec();
        chunk.extend_from_slice(&Keyless::encode(7, u64::MAX));
        let got: Vec<_> = Keyless::LAYOUT
            .records(&chunk)
            .unwrap()
            .map(Keyless::decode)
            .collect();
        assert_eq!(got, vec![(d, 42), (7, u64::MAX)]);
        assert_eq!(RecordLayout::key(&rec), d);
    }

    #[test]
    fn a_short_chunk_is_an_error_not_zeros() {
        let rec = Keyless::encode(1, 2);
        assert!(Keyless::LAYOUT.records(&rec[..20]).is_err());
        let mut out = Vec::new();
        assert!(Evidence::decode_all(&[0u8; 15], &mut out).is_err());
        Evidence::decode_all(&Evidence::encode(5, 3), &mut out).unwrap();
        assert_eq!(out, vec![(5, 3)]);
    }

    #[test]
    fn payloads_of_any_size_keep_the_key_first() {
        let wide = RecordLayout::with_payload(40);
        assert_eq!(wide.bytes(), 56);
        let mut rec = vec![0u8; 56];
        rec[..16].copy_from_slice(&9u128.to_le_bytes());
        let keys: Vec<u128> = wide.records(&rec).unwrap().map(RecordLayout::key).collect();
        assert_eq!(keys, vec![9]);
    }
}
