//! Pass 1's per-bucket fingerprints, and their wire format between the
//! workers and the driver (`reconBS1`, little-endian; docs/spark.md).

use super::digester::SideDigester;
use crate::digest::{null_digest, Fingerprint};
use crate::error::{ReconError, Result};
use crate::modes::fingerprint::{ColumnDigest, FingerprintPart, GroupDigest};

/// The bucket of a digest among `1 << bits`: its top bits, as the CLI's
/// fingerprint pass chooses.
#[inline]
pub fn bucket_of(digest: u128, bits: u32) -> usize {
    (digest >> (128 - bits)) as usize
}

/// One partition's (or a whole side's) per-bucket fingerprints, with each
/// compared column's non-NULL count and value-digest sum.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BucketSums {
    pub(super) bits: u32,
    pub(super) buckets: Vec<Fingerprint>,
    pub(super) columns: Vec<ColumnDigest>,
}

const SUMS_MAGIC: &[u8; 8] = b"reconBS1";

impl BucketSums {
    /// Empty sums over `1 << bits` buckets (1 ≤ bits ≤ 20) and `columns`
    /// compared columns.
    pub fn new(bits: u32, columns: usize) -> Result<BucketSums> {
        if !(1..=20).contains(&bits) {
            return Err(ReconError::Usage(format!(
                "buckets: 2^{bits} is out of range (2 to 2^20)"
            )));
        }
        Ok(BucketSums {
            bits,
            buckets: vec![Fingerprint::default(); 1 << bits],
            columns: vec![ColumnDigest::default(); columns],
        })
    }

    /// Adds the digests of the batch `d` last digested (with `per_column`),
    /// each row into its bucket: `buckets[row]` when the engine chose them
    /// (its own hash of the row, which lets it filter a second pass before
    /// digesting), else the digest's top bits ([`bucket_of`]).
    ///
    /// Any choice is exact: each bucket's fingerprint sums recon's digests,
    /// so buckets that all agree mean equal multisets of rows, and a row
    /// the two sides bucket differently only makes both buckets differ.
    pub fn add(&mut self, d: &SideDigester, buckets: Option<&[u32]>) -> Result<()> {
        match buckets {
            None => {
                for &x in &d.digests {
                    self.buckets[bucket_of(x, self.bits)].add(x);
                }
            }
            Some(buckets) => {
                if buckets.len() != d.digests.len() {
                    return Err(ReconError::Internal("a bucket per row is missing".into()));
                }
                for (&x, &b) in d.digests.iter().zip(buckets) {
                    let f = self.buckets.get_mut(b as usize).ok_or_else(|| {
                        ReconError::Internal(format!("bucket {b} is out of range"))
                    })?;
                    f.add(x);
                }
            }
        }
        let null = null_digest();
        for (col, values) in self.columns.iter_mut().zip(&d.values) {
            col.add_values(values, null);
        }
        Ok(())
    }

    /// Adds another part's sums (of the same bucket bits and columns) into
    /// these, modulo 2^128 and 2^64 as the sums are defined.
    pub fn merge(&mut self, o: &BucketSums) -> Result<()> {
        if o.bits != self.bits || o.columns.len() != self.columns.len() {
            return Err(ReconError::Internal(
                "bucket sums of different shapes".into(),
            ));
        }
        for (a, b) in self.buckets.iter_mut().zip(&o.buckets) {
            a.merge(b);
        }
        for (a, b) in self.columns.iter_mut().zip(&o.columns) {
            a.merge(b);
        }
        Ok(())
    }

    /// Rows added.
    pub fn rows(&self) -> u64 {
        self.buckets.iter().map(|f| f.count).sum()
    }

    /// The sums as one part of a fingerprint file (every bucket added up:
    /// the rows' count, digest sum and mix sum, and each column's), for an
    /// engine that summed a table's rows in buckets instead of digesting
    /// them through [`crate::fingerprint::PartialFingerprint`] (recon.spark's
    /// JVM path). A fingerprint without `--by` groups or a sketch.
    pub fn fingerprint_part(&self) -> FingerprintPart {
        let mut whole = GroupDigest {
            value: None,
            key: 0,
            rows: 0,
            row_sum: 0,
            row_mix: 0,
            columns: self.columns.clone(),
        };
        for f in &self.buckets {
            whole.rows += f.count;
            whole.row_sum = whole.row_sum.wrapping_add(f.sum);
            whole.row_mix = whole.row_mix.wrapping_add(f.mix);
        }
        FingerprintPart {
            groups: vec![whole],
            sketch: None,
        }
    }

    /// Compact bytes to send to the driver: the non-empty buckets only.
    /// (Not persisted: the same wheel writes and reads them in one run.)
    pub fn to_bytes(&self) -> Vec<u8> {
        let used = self.buckets.iter().filter(|f| f.count > 0).count();
        let mut out = Vec::with_capacity(24 + self.columns.len() * 24 + used * 36);
        out.extend_from_slice(SUMS_MAGIC);
        out.extend_from_slice(&self.bits.to_le_bytes());
        out.extend_from_slice(&(self.columns.len() as u32).to_le_bytes());
        for c in &self.columns {
            out.extend_from_slice(&c.non_null.to_le_bytes());
            out.extend_from_slice(&c.sum.to_le_bytes());
        }
        for (i, f) in self.buckets.iter().enumerate().filter(|(_, f)| f.count > 0) {
            out.extend_from_slice(&(i as u32).to_le_bytes());
            out.extend_from_slice(&f.count.to_le_bytes());
            out.extend_from_slice(&f.sum.to_le_bytes());
            out.extend_from_slice(&f.mix.to_le_bytes());
        }
        out
    }

    /// Sums from their wire format ([`BucketSums::to_bytes`]); bytes that do
    /// not parse are an internal error.
    pub fn from_bytes(bytes: &[u8]) -> Result<BucketSums> {
        let bad = || ReconError::Internal("bucket sums do not parse".into());
        let mut r = Reader(bytes);
        if r.take(8).ok_or_else(bad)? != SUMS_MAGIC {
            return Err(bad());
        }
        let bits = r.u32().ok_or_else(bad)?;
        let columns = r.u32().ok_or_else(bad)? as usize;
        let mut sums = BucketSums::new(bits, columns)?;
        for c in sums.columns.iter_mut() {
            c.non_null = r.u64().ok_or_else(bad)?;
            c.sum = r.u128().ok_or_else(bad)?;
        }
        while !r.0.is_empty() {
            let i = r.u32().ok_or_else(bad)? as usize;
            let f = sums.buckets.get_mut(i).ok_or_else(bad)?;
            f.count = r.u64().ok_or_else(bad)?;
            f.sum = r.u128().ok_or_else(bad)?;
            f.mix = r.u64().ok_or_else(bad)?;
        }
        Ok(sums)
    }
}

pub(super) struct Reader<'a>(pub(super) &'a [u8]);

impl<'a> Reader<'a> {
    pub(super) fn take(&mut self, n: usize) -> Option<&'a [u8]> {
        let (head, rest) = (self.0.get(..n)?, self.0.get(n..)?);
        self.0 = rest;
        Some(head)
    }
    pub(super) fn u32(&mut self) -> Option<u32> {
        Some(u32::from_le_bytes(self.take(4)?.try_into().ok()?))
    }
    pub(super) fn u64(&mut self) -> Option<u64> {
        Some(u64::from_le_bytes(self.take(8)?.try_into().ok()?))
    }
    pub(super) fn u128(&mut self) -> Option<u128> {
        Some(u128::from_le_bytes(self.take(16)?.try_into().ok()?))
    }
}
