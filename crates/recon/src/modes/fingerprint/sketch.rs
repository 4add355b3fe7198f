//! The sketch file beside a fingerprint (`recon fingerprint --sketch N`):
//! a table's [`Iblt`] at several sizes, smallest first, so that two
//! machines can name the rows that differ (docs/sketch.md, "Files").
//!
//! Levels are the same sketch folded in half again and again: a reader
//! decodes from the smallest level both files hold that suffices, and can
//! stop reading after it (the levels before it are a prefix of the file).

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::digest::adds_up;
use crate::digest::iblt::{peel, Iblt};
use crate::error::{ReconError, Result};

/// Sub-tables of a fingerprint's sketch.
const TABLES: u32 = 3;
/// The smallest level: 16 cells per sub-table.
const SMALLEST_LOG_CELLS: u32 = 4;
/// The sketch file's first bytes, naming its format version.
const MAGIC: &[u8; 8] = b"reconSK1";
/// The most differing rows a sketch can be sized for (2²⁸ cells per
/// sub-table, 24 GiB: more is a table to diff, not to sketch).
pub(crate) const MAX_SKETCH: u64 = 1 << 29;

/// The sketch a fingerprint file references.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SketchRef {
    /// The sketch file's name, in the fingerprint file's folder.
    pub file: String,
    /// SHA-256 of the sketch file, 64 lowercase hex digits.
    pub sha256: String,
    pub bytes: u64,
    /// What it was sized for: differing distinct rows.
    pub differences: u64,
    /// Sub-tables per level.
    pub tables: u32,
    /// Cells per sub-table of each level, as log2, smallest first.
    pub levels: Vec<u32>,
}

impl SketchRef {
    /// The reference of `levels` sized for `differences`, before they are
    /// written (which names the file and its SHA-256).
    pub fn unwritten(differences: u64, levels: &[Iblt]) -> SketchRef {
        SketchRef {
            file: String::new(),
            sha256: String::new(),
            bytes: 0,
            differences,
            tables: levels.last().map_or(0, |l| l.tables()),
            levels: levels.iter().map(|l| l.log_cells()).collect(),
        }
    }
}

/// A table's sketch sized for `differences` differing distinct rows.
pub(crate) fn new_sketch(differences: u64) -> Result<Iblt> {
    if !(1..=MAX_SKETCH).contains(&differences) {
        return Err(ReconError::Usage(format!(
            "--sketch {differences}: give a number of differing rows from 1 to {MAX_SKETCH}"
        )));
    }
    Ok(Iblt::sized_for(differences))
}

/// The levels of `sketch`, smallest first: it, folded down to 16 cells
/// per sub-table.
pub(crate) fn levels(sketch: &Iblt) -> Vec<Iblt> {
    let mut out = vec![sketch.clone()];
    while out[out.len() - 1].log_cells() > SMALLEST_LOG_CELLS {
        let Some(half) = out[out.len() - 1].fold() else {
            break;
        };
        out.push(half);
    }
    out.reverse();
    out
}

/// The sketch file's bytes: the magic, the sub-table count and the level
/// count (u32 each, little-endian), then per level, smallest first, its
/// log2 cells per sub-table (u32) and its cells (docs/sketch.md).
fn file_bytes(levels: &[Iblt]) -> Vec<u8> {
    let mut out = Vec::new();
    out.extend_from_slice(MAGIC);
    out.extend_from_slice(&TABLES.to_le_bytes());
    out.extend_from_slice(&(levels.len() as u32).to_le_bytes());
    for level in levels {
        out.extend_from_slice(&level.log_cells().to_le_bytes());
        out.extend_from_slice(&level.cell_bytes());
    }
    out
}

fn sha256_hex(bytes: &[u8]) -> String {
    Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// Where the sketch of the fingerprint file `json` goes: beside it, with
/// the extension `.sketch` (`a.fp.json` → `a.fp.sketch`).
pub(crate) fn sketch_path(json: &Path) -> PathBuf {
    json.with_extension("sketch")
}

/// Writes `levels` ([`levels`]) beside the fingerprint file `json`
/// (atomically), returning the reference the JSON file holds.
pub(crate) fn write(json: &Path, levels: &[Iblt], differences: u64) -> Result<SketchRef> {
    let bytes = file_bytes(levels);
    let path = sketch_path(json);
    crate::evidence::write_atomic(&path, &bytes)?;
    Ok(SketchRef {
        file: path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default(),
        sha256: sha256_hex(&bytes),
        bytes: bytes.len() as u64,
        differences,
        tables: TABLES,
        levels: levels.iter().map(|l| l.log_cells()).collect(),
    })
}

/// Reads the sketch the fingerprint file `json` references, refusing a
/// file whose SHA-256 or layout is not the one referenced.
pub(crate) fn read(json: &Path, r: &SketchRef) -> Result<Vec<Iblt>> {
    if r.file.contains(['/', '\\']) || r.file.is_empty() || r.file.starts_with('.') {
        return Err(ReconError::input(
            json,
            format!("the sketch file name {:?} is not a plain file name", r.file),
        ));
    }
    // The name it was written under, else the fingerprint file's own name
    // with `.sketch` (the two files renamed alike); the SHA-256 decides.
    let mut path = json.with_file_name(&r.file);
    if !path.exists() && sketch_path(json).exists() {
        path = sketch_path(json);
    }
    let bytes = std::fs::read(&path).map_err(|e| ReconError::io(&path, e))?;
    if sha256_hex(&bytes) != r.sha256 {
        return Err(ReconError::input(
            &path,
            format!(
                "its SHA-256 is not the one {} references: it was changed or belongs to another fingerprint",
                json.display()
            ),
        ));
    }
    parse(&bytes).ok_or_else(|| ReconError::input(&path, "not a recon sketch file (reconSK1)"))
}

fn parse(bytes: &[u8]) -> Option<Vec<Iblt>> {
    let u32_at = |at: usize| -> Option<u32> {
        Some(u32::from_le_bytes(bytes.get(at..at + 4)?.try_into().ok()?))
    };
    if bytes.get(..8)? != MAGIC {
        return None;
    }
    let tables = u32_at(8)?;
    let count = u32_at(12)? as usize;
    let mut at = 16;
    let mut out = Vec::with_capacity(count.min(64));
    for _ in 0..count {
        let log = u32_at(at)?;
        at += 4;
        let len = 32usize.checked_mul((tables as usize).checked_shl(log)?)?;
        let cells = bytes.get(at..at.checked_add(len)?)?;
        out.push(Iblt::from_cell_bytes(tables, log, cells)?);
        at += len;
    }
    (at == bytes.len() && !out.is_empty()).then_some(out)
}

/// What the sketches of two fingerprints decoded to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Decoded {
    /// Every differing digest with its copies (source − target), from
    /// the level of `2^log_cells` cells per sub-table, checked against the
    /// tables' row counts, row sums and row mixes.
    Complete {
        log_cells: u32,
        differences: Vec<(u128, i64)>,
    },
    /// No level both files hold decoded. `estimate`: about how many
    /// differing distinct rows there are; `at_least`: the largest level
    /// had no empty cell, and the estimate is only a lower bound.
    TooSmall { estimate: u64, at_least: bool },
}

/// The differences of the whole tables (rows, row sum, row mix:
/// source − target) a decode must add up to.
pub(crate) type Totals = (i64, u128, u64);

/// Decodes the difference of two tables' sketch levels (source − target),
/// from the smallest level both hold, upward.
pub(crate) fn decode(source: &[Iblt], target: &[Iblt], totals: Totals) -> Decoded {
    let mut estimate = (0, true);
    for s in source {
        let Some(t) = target.iter().find(|t| t.log_cells() == s.log_cells()) else {
            continue;
        };
        let mut diff = s.clone();
        if diff.subtract(t).is_err() {
            continue;
        }
        // With no cell of m empty, more than about m · ln m digests
        // (the coupon collector's count) were added.
        let m = (1u64 << diff.log_cells()) as f64;
        estimate = match diff.estimate() {
            Some(n) => (n, false),
            None => ((m * m.ln()).round() as u64, true),
        };
        let peeled = peel(&mut [&mut diff]);
        if peeled.complete && adds_up(peeled.differences.iter().copied(), totals) {
            return Decoded::Complete {
                log_cells: s.log_cells(),
                differences: peeled.differences,
            };
        }
    }
    Decoded::TooSmall {
        estimate: estimate.0,
        at_least: estimate.1,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn levels_round_trip_through_the_file_format() {
        let mut s = Iblt::sized_for(100);
        for d in 1..300u128 {
            s.add(d.wrapping_mul(0x9e37_79b9_7f4a_7c15_f39c_c060_5ced_c835), 1);
        }
        let levels = levels(&s);
        assert_eq!(levels.first().unwrap().log_cells(), SMALLEST_LOG_CELLS);
        assert_eq!(levels.last().unwrap(), &s);
        assert_eq!(parse(&file_bytes(&levels)).unwrap(), levels);
        let bytes = file_bytes(&levels);
        assert!(parse(&bytes[..bytes.len() - 1]).is_none());
        assert!(parse(b"reconSK1").is_none());
    }
}
