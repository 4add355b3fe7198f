//! The rows two tables on two machines differ in: the digests file that
//! `recon compare-fingerprints --digests` writes from two sketches, and
//! `recon extract`, which reads one table and writes every row whose digest
//! the file lists. `recon diff` of the two extracts then gives the answer of
//! `recon diff` of the two tables: every row whose digest has the same
//! count on both sides is left out of both, and the others are all there.

use std::collections::{HashMap, HashSet};
use std::path::Path;
use std::sync::atomic::Ordering;
use std::sync::Arc;

use serde::{Deserialize, Serialize};

use super::{
    column_specs, hex128, plan_one, sides_of, ColumnSpec, FingerprintFile, FingerprintOptions,
    ALGORITHM,
};
use crate::digest::{adds_up, DigestBuildHasher, Fingerprint, ENCODING_VERSION};
use crate::engine::scan::{scan, Batch, ColumnDigests, RowSink, ScanConfig};
use crate::engine::Phase;
use crate::error::{ReconError, Result};
use crate::input::{Fetcher, Source};
use crate::side::Side;

/// Version of the digests file format (docs/sketch.md).
pub(crate) const DIGESTS_VERSION: u32 = 1;

/// One table's whole-table fingerprint, as the digests file names it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TableTotal {
    /// What was fingerprinted (for people).
    pub table: String,
    pub rows: u64,
    #[serde(with = "hex128")]
    pub row_sum: u128,
    pub row_mix: u64,
}

impl TableTotal {
    fn of(f: &FingerprintFile) -> TableTotal {
        TableTotal {
            table: f.table.clone(),
            rows: f.total.rows,
            row_sum: f.total.row_sum,
            row_mix: f.total.row_mix,
        }
    }

    fn same_rows(&self, o: &TableTotal) -> bool {
        (self.rows, self.row_sum, self.row_mix) == (o.rows, o.row_sum, o.row_mix)
    }
}

/// A differing row digest and its copies, source − target.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct DigestCount {
    #[serde(with = "hex128")]
    pub digest: u128,
    pub copies: i64,
}

/// The digests file: every row digest whose count differs between two
/// fingerprinted tables, with the two tables' totals it adds up to.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DigestsFile {
    /// Version of this file's layout.
    pub recon_digests_version: u32,
    /// The row encoding's version (docs/encoding.md).
    pub encoding_version: u32,
    /// The digest algorithm, as the fingerprints name it.
    pub algorithm: String,
    /// The columns (name order), value classes and rules of both fingerprints.
    pub columns: Vec<ColumnSpec>,
    /// The source table's rows and digest sum.
    pub source: TableTotal,
    /// The target table's.
    pub target: TableTotal,
    /// By digest.
    pub differences: Vec<DigestCount>,
}

impl DigestsFile {
    /// The file for fingerprints `a` (source) and `b` (target) whose
    /// sketches decoded to `differences`.
    pub fn new(a: &FingerprintFile, b: &FingerprintFile, differences: &[(u128, i64)]) -> Self {
        DigestsFile {
            recon_digests_version: DIGESTS_VERSION,
            encoding_version: ENCODING_VERSION,
            algorithm: ALGORITHM.into(),
            columns: a.columns.clone(),
            source: TableTotal::of(a),
            target: TableTotal::of(b),
            differences: differences
                .iter()
                .map(|&(digest, copies)| DigestCount { digest, copies })
                .collect(),
        }
    }

    /// The file as pretty JSON.
    pub fn to_json(&self) -> String {
        let mut s = serde_json::to_string_pretty(self).unwrap_or_else(|_| "{}".into());
        s.push('\n');
        s
    }

    /// Reads a digests file, refusing other versions, and lists that do
    /// not add up to the two tables' differences (a file cut short or edited).
    pub fn load(path: &Path) -> Result<DigestsFile> {
        let text = std::fs::read_to_string(path).map_err(|e| ReconError::io(path, e))?;
        DigestsFile::parse(path, &text)
    }

    /// [`DigestsFile::load`] of a file's text (`path` names it in messages).
    pub fn parse(path: &Path, text: &str) -> Result<DigestsFile> {
        let file: DigestsFile = serde_json::from_str(text)
            .map_err(|e| ReconError::input(path, format!("not a recon digests file: {e}")))?;
        if file.recon_digests_version != DIGESTS_VERSION
            || file.encoding_version != ENCODING_VERSION
            || file.algorithm != ALGORITHM
        {
            return Err(ReconError::input(
                path,
                format!(
                    "digests file version {} (encoding {}) is not the one this recon reads ({DIGESTS_VERSION}, encoding {ENCODING_VERSION}); make it with the same recon version",
                    file.recon_digests_version, file.encoding_version
                ),
            ));
        }
        let expected = (
            (file.source.rows as i64).wrapping_sub(file.target.rows as i64),
            file.source.row_sum.wrapping_sub(file.target.row_sum),
            file.source.row_mix.wrapping_sub(file.target.row_mix),
        );
        if !adds_up(
            file.differences.iter().map(|d| (d.digest, d.copies)),
            expected,
        ) {
            return Err(ReconError::input(
                path,
                "its digests do not add up to the difference of the two tables it names (cut short or edited)",
            ));
        }
        Ok(file)
    }
}

/// What [`extract`] wrote.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Extracted {
    /// Which side of the digests file the table is.
    pub side: Side,
    /// Rows written: every copy of every listed digest the table holds.
    pub rows: u64,
    /// Listed digests the table holds at least one copy of.
    pub digests: usize,
}

/// Collects the locators of the rows whose digest is wanted, and the
/// whole table's fingerprint (to prove it is the table fingerprinted).
struct ExtractSink {
    wanted: Arc<HashSet<u128, DigestBuildHasher>>,
    total: Fingerprint,
    found: Vec<(u64, u128)>,
}

impl RowSink for ExtractSink {
    fn rows(&mut self, _side: Side, batch: &Batch<'_>) -> Result<()> {
        for (i, &d) in batch.digests.iter().enumerate() {
            self.total.add(d);
            if self.wanted.contains(&d) {
                self.found.push((batch.locators.get(i), d));
            }
        }
        Ok(())
    }

    fn finish(&mut self) -> Result<()> {
        Ok(())
    }
}

/// Writes to `dest` (Parquet, the table's own columns) every row of `table`
/// whose digest `digests` lists. `like` is the fingerprint file made of
/// this table: its columns and rules must be those `opts` give, and its
/// whole-table fingerprint that of the rows read now (else the table
/// changed since, and the list would not be its differences); it also
/// says which side of the digests file the table is.
pub fn extract(
    table: impl Into<Source>,
    digests: &DigestsFile,
    like: &FingerprintFile,
    opts: &FingerprintOptions,
    dest: &Path,
) -> Result<Extracted> {
    let mismatch = |m: String| Err(ReconError::Usage(m));
    let like_total = TableTotal::of(like);
    let side = if like_total.same_rows(&digests.source) {
        Side::Source
    } else if like_total.same_rows(&digests.target) {
        Side::Target
    } else {
        return mismatch(format!(
            "the fingerprint of {} is neither table the digests file names ({} and {})",
            like.table, digests.source.table, digests.target.table
        ));
    };
    if like.columns != digests.columns {
        return mismatch("the fingerprint's columns or rules are not the digests file's".into());
    }
    let (src, tgt, plan) = plan_one(table.into(), opts)?;
    let specs = column_specs(&plan);
    if specs != like.columns {
        let names = |c: &[ColumnSpec]| c.iter().map(|c| c.name.clone()).collect::<Vec<_>>();
        let why = match specs.iter().zip(&like.columns).find(|(a, b)| a != b) {
            _ if names(&specs) != names(&like.columns) => format!(
                "the columns are [{}] here and [{}] in the fingerprint",
                names(&specs).join(", "),
                names(&like.columns).join(", ")
            ),
            Some((a, b)) => format!(
                "column {} is {} with rules [{}] here, {} with rules [{}] in the fingerprint",
                a.name,
                a.class,
                a.rules.join(", "),
                b.class,
                b.rules.join(", ")
            ),
            None => "the columns differ".into(),
        };
        return mismatch(format!(
            "{} is not read as its fingerprint was: {why}; give extract the options fingerprint had",
            src.path.display()
        ));
    }
    let wanted: Arc<HashSet<u128, DigestBuildHasher>> =
        Arc::new(digests.differences.iter().map(|d| d.digest).collect());
    let sides = sides_of(&src, &tgt, &plan, true);
    opts.progress.rows_total.store(
        crate::modes::stages::estimated_rows(&src),
        Ordering::Relaxed,
    );
    opts.progress.start_pass(1, 1, Phase::Fingerprint);
    let cfg = ScanConfig {
        threads: opts.threads,
        batch_size: opts.batch_size,
        per_column: ColumnDigests::None,
        cancel: &opts.cancel,
        progress: &opts.progress,
    };
    let scanned = scan(&sides, &cfg, || ExtractSink {
        wanted: wanted.clone(),
        total: Fingerprint::default(),
        found: Vec::new(),
    })?;
    opts.progress.set_phase(Phase::Done);
    let mut total = Fingerprint::default();
    let mut found = Vec::new();
    for s in scanned.sinks {
        total.merge(&s.total);
        found.extend(s.found);
    }
    if (total.count, total.sum, total.mix)
        != (like.total.rows, like.total.row_sum, like.total.row_mix)
    {
        return Err(ReconError::input(
            &src.path,
            format!(
                "the table changed since its fingerprint was made ({} rows now, {} then, or other rows): fingerprint and compare again",
                total.count, like.total.rows
            ),
        ));
    }
    // Every copy the other side lacks must be here (the table is the one
    // fingerprinted, so this holds unless the decode was wrong).
    let mut held: HashMap<u128, i64, DigestBuildHasher> = HashMap::default();
    for (_, d) in &found {
        *held.entry(*d).or_default() += 1;
    }
    for d in &digests.differences {
        let needed = match side {
            Side::Source => d.copies.max(0),
            Side::Target => (-d.copies).max(0),
        };
        if held.get(&d.digest).copied().unwrap_or(0) < needed {
            return Err(ReconError::Internal(format!(
                "{}: digest {:032x} should have at least {needed} copies here, and has {}",
                src.path.display(),
                d.digest,
                held.get(&d.digest).copied().unwrap_or(0)
            )));
        }
    }
    found.sort_unstable();
    let locators: Vec<u64> = found.iter().map(|(l, _)| *l).collect();
    let (af, mut writer) = crate::evidence::rows_writer(dest, &src)?;
    let mut rows = 0u64;
    let mut fetcher = Fetcher::default();
    src.fetch(&mut fetcher, &locators, |batch| {
        rows += batch.num_rows() as u64;
        writer
            .write(&batch)
            .map_err(|e| ReconError::parquet(dest, e))
    })?;
    if rows != locators.len() as u64 {
        return Err(ReconError::Internal(format!(
            "{}: fetched {rows} of {} rows",
            src.path.display(),
            locators.len()
        )));
    }
    writer.close().map_err(|e| ReconError::parquet(dest, e))?;
    af.commit()?;
    Ok(Extracted {
        side,
        rows,
        digests: held.len(),
    })
}
