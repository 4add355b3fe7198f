//! The driver's comparison of the two sides' bucket sums, and the
//! selector of the rows a second pass keeps.

use std::collections::HashSet;

use super::plan::DistributedPlan;
use super::sums::{bucket_of, BucketSums, Reader};
use crate::digest::{bucket_difference, DigestBuildHasher};
use crate::error::{ReconError, Result};

/// What pass 1 found: the two sides' bucket fingerprints compared.
#[derive(Debug, Clone)]
pub struct BucketComparison {
    /// Bucket bits: the comparison covers `1 << bits` buckets.
    pub bits: u32,
    /// Rows of the source and of the target, every bucket.
    pub rows: [u64; 2],
    /// Buckets whose fingerprints differ, ascending.
    pub differing: Vec<u32>,
    /// Differing digests decoded from a bucket's two fingerprints, with
    /// their count difference (source − target).
    pub decoded: Vec<(u128, i64)>,
    /// Differing buckets that did not decode: every row of theirs goes to
    /// the second pass.
    pub undecoded: Vec<u32>,
    /// Compared columns (source names) whose multiset of values differs.
    pub differing_columns: Vec<String>,
}

impl BucketComparison {
    /// Every bucket agrees: the tables hold the same multiset of rows.
    pub fn all_agree(&self) -> bool {
        self.differing.is_empty()
    }

    /// Which rows the second pass keeps.
    pub fn selector(&self) -> Selector {
        let mut full = vec![false; 1 << self.bits];
        for &b in &self.undecoded {
            full[b as usize] = true;
        }
        Selector {
            bits: self.bits,
            full,
            digests: self.decoded.iter().map(|&(d, _)| d).collect(),
        }
    }

    /// A selector that keeps every row: a keyed second pass judges whole
    /// keys, so it needs every row the engine hands it, with its digest.
    pub fn keep_all(&self) -> Selector {
        Selector {
            bits: self.bits,
            full: vec![true; 1 << self.bits],
            digests: HashSet::default(),
        }
    }
}

/// How pass 1 placed each row in a bucket.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Bucketing {
    /// By the top bits of the row's own digest ([`bucket_of`]), as the
    /// command line does: a bucket's index is then its digests' top bits,
    /// so a difference of an even number of copies decodes too.
    DigestPrefix,
    /// By the engine's own hash of the row (Spark's `xxhash64`): the index
    /// says nothing of the digest.
    Engine,
}

/// Compares the two sides' added-up bucket sums.
pub fn compare_buckets(
    plan: &DistributedPlan,
    source: &BucketSums,
    target: &BucketSums,
    bucketing: Bucketing,
) -> Result<BucketComparison> {
    if source.bits != target.bits {
        return Err(ReconError::Internal(
            "the sides were bucketed differently".into(),
        ));
    }
    let mut cmp = BucketComparison {
        bits: source.bits,
        rows: [source.rows(), target.rows()],
        differing: Vec::new(),
        decoded: Vec::new(),
        undecoded: Vec::new(),
        differing_columns: Vec::new(),
    };
    for (i, (s, t)) in source.buckets.iter().zip(&target.buckets).enumerate() {
        if s == t {
            continue;
        }
        cmp.differing.push(i as u32);
        // Engine-chosen buckets say nothing of the digest: bits = 0, and
        // only odd copy-count differences decode there.
        let known_bits = match bucketing {
            Bucketing::DigestPrefix => source.bits,
            Bucketing::Engine => 0,
        };
        match bucket_difference(s, t, i, known_bits) {
            Some(d) => cmp.decoded.push(d),
            None => cmp.undecoded.push(i as u32),
        }
    }
    // A column's multiset of values differs between the tables exactly
    // when it differs between their unmatched rows (the matched rows are
    // the same on both sides), so whole-table sums name the drifting columns.
    for ((col, s), t) in plan
        .plan
        .columns
        .iter()
        .zip(&source.columns)
        .zip(&target.columns)
    {
        if s != t {
            cmp.differing_columns.push(col.source_name.clone());
        }
    }
    Ok(cmp)
}

/// Which rows of a side the second pass keeps: those whose digest was
/// decoded, and every row of a bucket that did not decode.
#[derive(Debug, Clone)]
pub struct Selector {
    bits: u32,
    full: Vec<bool>,
    digests: HashSet<u128, DigestBuildHasher>,
}

impl Selector {
    /// The positions of the rows of `digests` to keep; `buckets` as given
    /// to [`BucketSums::add`] in pass 1.
    pub fn select(&self, digests: &[u128], buckets: Option<&[u32]>) -> Result<Vec<u32>> {
        let bucket = |i: usize| -> Result<usize> {
            match buckets {
                None => Ok(bucket_of(digests[i], self.bits)),
                Some(b) => b
                    .get(i)
                    .map(|&b| b as usize)
                    .filter(|&b| b < self.full.len())
                    .ok_or_else(|| ReconError::Internal("a row's bucket is out of range".into())),
            }
        };
        let mut keep = Vec::new();
        for (i, d) in digests.iter().enumerate() {
            if self.full[bucket(i)?] || self.digests.contains(d) {
                keep.push(i as u32);
            }
        }
        Ok(keep)
    }

    /// The selector as bytes, to send to the engine's workers: the bucket
    /// bits, the buckets read whole, then the decoded digests (little-endian).
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut out = Vec::new();
        out.extend_from_slice(&self.bits.to_le_bytes());
        let full: Vec<u32> = (0..self.full.len() as u32)
            .filter(|&b| self.full[b as usize])
            .collect();
        out.extend_from_slice(&(full.len() as u32).to_le_bytes());
        for b in full {
            out.extend_from_slice(&b.to_le_bytes());
        }
        for d in &self.digests {
            out.extend_from_slice(&d.to_le_bytes());
        }
        out
    }

    /// A selector from [`Selector::to_bytes`]; bytes that do not parse are
    /// an internal error.
    pub fn from_bytes(bytes: &[u8]) -> Result<Selector> {
        let bad = || ReconError::Internal("a row selector does not parse".into());
        let mut r = Reader(bytes);
        let bits = r.u32().ok_or_else(bad)?;
        if !(1..=20).contains(&bits) {
            return Err(bad());
        }
        let mut full = vec![false; 1 << bits];
        for _ in 0..r.u32().ok_or_else(bad)? {
            *full
                .get_mut(r.u32().ok_or_else(bad)? as usize)
                .ok_or_else(bad)? = true;
        }
        let mut digests = HashSet::default();
        while !r.0.is_empty() {
            digests.insert(r.u128().ok_or_else(bad)?);
        }
        Ok(Selector {
            bits,
            full,
            digests,
        })
    }
}
