//! Fingerprints: a small, order-independent summary of a table that two
//! machines can compare without moving the table (`recon fingerprint`,
//! `recon compare-fingerprints`, `recon diff --quick`).
//!
//! A fingerprint holds the row count, the multiset digest of the rows (the
//! sum of their 128-bit row digests mod 2^128 and the sum of a nonlinear mix
//! of each), and per column the non-null count and the sum of its values'
//! 128-bit value digests; optionally the same per group of a `--by` column
//! (a business date). Sums, never XOR, so `{x, x}` is not `{}`; value
//! digests are the versioned canonical ones (docs/encoding.md), so a CSV
//! extract typed like its Parquet twin fingerprints alike. The file format
//! is specified in docs/fingerprint.md, with test vectors.
//!
//! Row digests here combine the columns in **name order**, so two tables
//! whose columns are in different orders fingerprint alike.

pub(crate) mod compare;
pub(crate) mod extract;
pub(crate) mod sketch;

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::Ordering;
use std::sync::Arc;

use serde::{Deserialize, Serialize};

use super::stages;
use crate::config::{default_threads, AlignOptions, InputOptions};
use crate::digest::iblt::Iblt;
use crate::digest::{mix, null_digest, DigestBuildHasher, Fingerprint, ValueSum, ENCODING_VERSION};
use crate::engine::scan::{scan, Batch, ColumnDigests, RowSink, ScanConfig, ScanSide};
use crate::engine::{CancelToken, Phase, Progress};
use crate::error::{ReconError, Result};
use crate::evidence::render_column;
use crate::input::{Source, Table};
use crate::plan::ComparePlan;
use crate::side::Side;

/// Version of the fingerprint file format (docs/fingerprint.md).
pub(crate) const FINGERPRINT_VERSION: u32 = 1;

/// The digest algorithm a file was made with; files with another are refused.
pub(crate) const ALGORITHM: &str = "recon-v2: canonical value digests (P bijection or XXH3-128), row digest Q(sum (V xor A_c) * B_c) over columns in name order, sums mod 2^128";

/// Options of one fingerprint run.
#[derive(Debug, Clone)]
pub struct FingerprintOptions {
    /// Worker threads (`--threads`).
    pub threads: usize,
    /// Rows per batch read (`--batch-size`).
    pub batch_size: usize,
    /// Conversions and normalization rules (as for a diff).
    pub align: AlignOptions,
    /// How the table is read (format, CSV dialect, object-store settings).
    pub inputs: InputOptions,
    /// Group by this column (any type), e.g. business_date.
    pub by: Option<String>,
    /// Type the text columns like this table's columns.
    pub schema_like: Option<PathBuf>,
    /// Where `-` and pipes are spooled (None: the system temp dir).
    pub temp_dir: Option<PathBuf>,
    /// Also keep a sketch of the row digests sized for this many differing
    /// distinct rows (docs/sketch.md): what names the differing rows later.
    pub sketch: Option<u64>,
    /// The run's live counters, for a progress display.
    pub progress: Arc<Progress>,
    /// Stops the run when cancelled.
    pub cancel: CancelToken,
}

impl Default for FingerprintOptions {
    fn default() -> Self {
        FingerprintOptions {
            threads: default_threads(),
            batch_size: 8192,
            align: AlignOptions::default(),
            inputs: InputOptions::default(),
            by: None,
            schema_like: None,
            temp_dir: None,
            sketch: None,
            progress: Arc::new(Progress::default()),
            cancel: CancelToken::new(),
        }
    }
}

/// A 128-bit value as 32 hex digits (JSON numbers cannot hold it).
mod hex128 {
    use serde::{Deserialize, Deserializer, Serializer};

    pub(super) fn serialize<S: Serializer>(v: &u128, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&format!("{v:032x}"))
    }

    pub(super) fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<u128, D::Error> {
        let text = String::deserialize(d)?;
        u128::from_str_radix(&text, 16).map_err(serde::de::Error::custom)
    }
}

/// A column of the fingerprint: its name, value class and rules.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ColumnSpec {
    pub name: String,
    /// The class values are compared in (`Decimal`, `String`, ...), after
    /// conversions: decimal(18,2) and decimal(38,6) are both `Decimal`.
    pub class: String,
    /// Conversions and normalization rules applied before hashing.
    pub rules: Vec<String>,
}

/// One column's values in a group.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ColumnDigest {
    pub non_null: u64,
    /// Sum of the non-NULL values' 128-bit value digests, mod 2^128.
    #[serde(with = "hex128")]
    pub sum: u128,
}

impl ColumnDigest {
    /// Adds a column's value digests; `null` (NULL's digest) is counted out.
    pub(crate) fn add_values(&mut self, values: &[u128], null: u128) {
        let mut t = ValueSum::default();
        t.add_values(values, null);
        self.add_total(&t);
    }

    /// Adds a batch's total of the column's non-NULL value digests.
    pub(crate) fn add_total(&mut self, t: &ValueSum) {
        self.non_null += t.non_null;
        self.sum = self.sum.wrapping_add(t.sum);
    }

    pub fn merge(&mut self, o: &ColumnDigest) {
        self.non_null += o.non_null;
        self.sum = self.sum.wrapping_add(o.sum);
    }
}

/// The fingerprint of a set of rows (a table or one group of it).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct GroupDigest {
    /// The `--by` value as text (None: NULL, or the whole table).
    pub value: Option<String>,
    /// The value digest of the `--by` value, which identifies the group.
    #[serde(with = "hex128")]
    pub key: u128,
    pub rows: u64,
    /// Sum of the row digests mod 2^128.
    #[serde(with = "hex128")]
    pub row_sum: u128,
    /// Sum of a nonlinear 64-bit mix of each row digest, mod 2^64.
    pub row_mix: u64,
    /// Per column, in `columns` order.
    pub columns: Vec<ColumnDigest>,
}

/// A fingerprint file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FingerprintFile {
    /// Version of this file's layout (docs/fingerprint.md).
    pub recon_fingerprint_version: u32,
    /// The row encoding's version (docs/encoding.md).
    pub encoding_version: u32,
    /// The digest algorithm, spelled out.
    pub algorithm: String,
    /// What was fingerprinted (for people; not compared, may be left out).
    #[serde(default)]
    pub table: String,
    /// Columns in name order.
    pub columns: Vec<ColumnSpec>,
    /// The `--by` column, if any.
    pub by: Option<String>,
    /// The whole table.
    pub total: GroupDigest,
    /// With `by`: one entry per group, in key order.
    pub groups: Vec<GroupDigest>,
    /// The sketch file beside this one, when made with a sketch.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sketch: Option<sketch::SketchRef>,
    /// The sketch's levels, smallest first: from the scan, or read with
    /// the file ([`FingerprintFile::load`]). Empty without a sketch.
    #[serde(skip)]
    pub sketch_levels: Vec<Iblt>,
}

impl FingerprintFile {
    /// The file as pretty JSON, as written.
    pub fn to_json(&self) -> String {
        let mut s = serde_json::to_string_pretty(self).unwrap_or_else(|_| "{}".into());
        s.push('\n');
        s
    }

    /// Writes the fingerprint file to `path` and, when it has a sketch,
    /// the sketch file beside it (first, so the file never references a
    /// sketch that is not there).
    pub fn write(&mut self, path: &Path) -> Result<()> {
        if self.sketch_levels.is_empty() {
            // Parsed without its sketch: never reference one not written.
            self.sketch = None;
        } else {
            let differences = self.sketch.as_ref().map_or(0, |r| r.differences);
            self.sketch = Some(sketch::write(path, &self.sketch_levels, differences)?);
        }
        crate::evidence::write_atomic(path, self.to_json().as_bytes())
    }

    /// Reads a fingerprint file (and the sketch it references), refusing
    /// other versions and algorithms.
    pub fn load(path: &Path) -> Result<FingerprintFile> {
        let text = std::fs::read_to_string(path).map_err(|e| ReconError::io(path, e))?;
        let mut file = FingerprintFile::parse(path, &text)?;
        if let Some(r) = &file.sketch {
            file.sketch_levels = sketch::read(path, r)?;
        }
        Ok(file)
    }

    /// Reads a fingerprint file's text (`path` names it in messages),
    /// refusing other versions and algorithms.
    pub fn parse(path: &Path, text: &str) -> Result<FingerprintFile> {
        let head: serde_json::Value = serde_json::from_str(text)
            .map_err(|e| ReconError::input(path, format!("not a fingerprint file: {e}")))?;
        let version = head["recon_fingerprint_version"].as_u64();
        if version != Some(FINGERPRINT_VERSION as u64) {
            return Err(ReconError::input(
                path,
                format!(
                    "fingerprint format version {} is not {FINGERPRINT_VERSION}, the one this recon reads; make both files with the same recon version",
                    version.map_or("missing".to_string(), |v| v.to_string())
                ),
            ));
        }
        let encoding = head["encoding_version"].as_u64();
        if encoding != Some(ENCODING_VERSION as u64) {
            return Err(ReconError::input(
                path,
                format!(
                    "made with encoding version {}, this recon digests with version {ENCODING_VERSION}: digests of different versions never agree; fingerprint both sides with the same recon version",
                    encoding.map_or("missing".to_string(), |v| v.to_string())
                ),
            ));
        }
        let file: FingerprintFile = serde_json::from_value(head)
            .map_err(|e| ReconError::input(path, format!("not a fingerprint file: {e}")))?;
        if file.algorithm != ALGORITHM {
            return Err(ReconError::input(
                path,
                format!("made with another digest algorithm ({:?})", file.algorithm),
            ));
        }
        Ok(file)
    }
}

/// What the sink needs: the scan hands it columns in name order, so its
/// row digests are the fingerprint's.
struct Layout {
    columns: usize,
    /// Position (in name order) of the `--by` column.
    by: Option<usize>,
    null: u128,
}

/// Accumulates fingerprints per group, per side.
struct GroupSink {
    layout: Arc<Layout>,
    groups: [HashMap<u128, GroupDigest, DigestBuildHasher>; 2],
    /// The side's sketch of every row digest (with `--sketch`, which
    /// fingerprints one table: the source side).
    sketches: [Option<Iblt>; 2],
    /// Per row of a batch: its group's key (reused buffer).
    keys: Vec<u128>,
    /// Per row of a batch: the mix of its digest (reused buffer).
    mixes: Vec<u64>,
}

impl GroupSink {
    fn new(layout: Arc<Layout>, sketch: Option<&Iblt>) -> GroupSink {
        GroupSink {
            layout,
            groups: Default::default(),
            sketches: [sketch.cloned(), None],
            keys: Vec::new(),
            mixes: Vec::new(),
        }
    }
}

fn empty_group(key: u128, value: Option<String>, columns: usize) -> GroupDigest {
    GroupDigest {
        value,
        key,
        rows: 0,
        row_sum: 0,
        row_mix: 0,
        columns: vec![ColumnDigest::default(); columns],
    }
}

fn add(into: &mut GroupDigest, from: &GroupDigest) {
    into.rows += from.rows;
    into.row_sum = into.row_sum.wrapping_add(from.row_sum);
    into.row_mix = into.row_mix.wrapping_add(from.row_mix);
    for (a, b) in into.columns.iter_mut().zip(&from.columns) {
        a.merge(b);
    }
}

/// Adds rows `range` of a batch (all of one group) to `g`, column by column:
/// from the batch's column totals when the range is the whole batch and the
/// scan added them up, else from its lists of value digests.
/// `mixes` holds the [`crate::digest::mix`] of each of the batch's digests.
fn add_rows(
    g: &mut GroupDigest,
    batch: &Batch<'_>,
    mixes: &[u64],
    rows: std::ops::Range<usize>,
    null: u128,
) {
    let mut fp = Fingerprint {
        count: g.rows,
        sum: g.row_sum,
        mix: g.row_mix,
    };
    for (&d, &m) in batch.digests[rows.clone()].iter().zip(&mixes[rows.clone()]) {
        fp.add_mixed(d, m);
    }
    (g.rows, g.row_sum, g.row_mix) = (fp.count, fp.sum, fp.mix);
    if !batch.totals.is_empty() && rows == (0..batch.len()) {
        for (col, t) in g.columns.iter_mut().zip(batch.totals) {
            col.add_total(t);
        }
        return;
    }
    for (col, values) in g.columns.iter_mut().zip(batch.columns) {
        col.add_values(&values[rows.clone()], null);
    }
}

impl RowSink for GroupSink {
    fn rows(&mut self, side: Side, batch: &Batch<'_>) -> Result<()> {
        // Each digest's mix once, for the fingerprint and the sketch.
        self.mixes.clear();
        self.mixes.extend(batch.digests.iter().map(|&d| mix(d)));
        if let Some(sketch) = self.sketches[side.index()].as_mut() {
            sketch.add_all(batch.digests, &self.mixes);
        }
        let layout = self.layout.clone();
        let groups = &mut self.groups[side.index()];
        let Some(by) = layout.by else {
            let g = groups
                .entry(0)
                .or_insert_with(|| empty_group(0, None, layout.columns));
            add_rows(g, batch, &self.mixes, 0..batch.len(), layout.null);
            return Ok(());
        };
        // Runs of rows in one group (a business date usually comes in long
        // runs) are added at once.
        self.keys.clear();
        self.keys.extend_from_slice(&batch.columns[by]);
        let mut start = 0;
        while start < batch.len() {
            let key = self.keys[start];
            let end = start
                + self.keys[start..]
                    .iter()
                    .position(|&k| k != key)
                    .unwrap_or(batch.len() - start);
            let g = match groups.entry(key) {
                std::collections::hash_map::Entry::Occupied(o) => o.into_mut(),
                std::collections::hash_map::Entry::Vacant(v) => {
                    let value = render_column(&batch.arrays[by].slice(start, 1))?
                        .into_iter()
                        .next()
                        .flatten();
                    v.insert(empty_group(key, value, layout.columns))
                }
            };
            add_rows(g, batch, &self.mixes, start..end, layout.null);
            start = end;
        }
        Ok(())
    }

    fn finish(&mut self) -> Result<()> {
        Ok(())
    }
}

/// One side's columns, whole-table digest, groups and sketch.
type SideFingerprint = (Vec<ColumnSpec>, GroupDigest, Vec<GroupDigest>, Option<Iblt>);

/// The fingerprints of the sides a scan read.
fn run_scan(
    sides: &[ScanSide<'_>; 2],
    plan: &ComparePlan,
    opts: &FingerprintOptions,
    sketch: Option<&Iblt>,
) -> Result<[Option<SideFingerprint>; 2]> {
    let by_pos = by_position(plan, opts.by.as_deref())?;
    let progress = &opts.progress;
    let layout = Arc::new(Layout {
        columns: plan.columns.len(),
        by: by_pos,
        null: null_digest(),
    });
    let cfg = ScanConfig {
        threads: opts.threads,
        batch_size: opts.batch_size,
        // Groups need each row's value digests; the whole table only the
        // columns' totals, added up as the digests are computed.
        per_column: match by_pos {
            Some(_) => ColumnDigests::Lists(vec![true; plan.columns.len()].into()),
            None => ColumnDigests::Totals,
        },
        cancel: &opts.cancel,
        progress,
    };
    // One read, reported like the first pass of a diff.
    progress.start_pass(1, 1, Phase::Fingerprint);
    let scanned = scan(sides, &cfg, || GroupSink::new(layout.clone(), sketch))?;
    progress.set_phase(Phase::Done);
    let specs = column_specs(plan);
    let mut out: [Option<_>; 2] = [None, None];
    for side in Side::BOTH {
        if sides[side.index()].skip {
            continue;
        }
        let parts = scanned
            .sinks
            .iter()
            .map(|s| s.groups[side.index()].values());
        let (total, groups) = merge_groups(parts, layout.columns, by_pos.is_some());
        let mut sketches = scanned.sinks.iter().map(|s| &s.sketches[side.index()]);
        let merged = match sketches.next().cloned().flatten() {
            Some(mut all) => {
                for one in sketches.flatten() {
                    all.merge(one)?;
                }
                Some(all)
            }
            None => None,
        };
        out[side.index()] = Some((specs.clone(), total, groups, merged));
    }
    Ok(out)
}

/// The position of the `--by` column among the compared columns (`plan`
/// lists them in name order, see [`name_order`]).
pub(crate) fn by_position(plan: &ComparePlan, by: Option<&str>) -> Result<Option<usize>> {
    let Some(name) = by else { return Ok(None) };
    plan.columns
        .iter()
        .position(|c| c.source_name == name)
        .map(Some)
        .ok_or_else(|| ReconError::Usage(format!("`--by {name}`: not a compared column")))
}

/// The file's column list: names, value classes and rules, in plan order.
pub(crate) fn column_specs(plan: &ComparePlan) -> Vec<ColumnSpec> {
    plan.columns
        .iter()
        .map(|col| {
            // Normalization rules change what is compared, so they must
            // agree; conversions only reach the value class (a CSV side
            // parsed into decimals), which `class` records.
            let rules: Vec<String> = col.normalize.iter().map(|r| r.describe()).collect();
            ColumnSpec {
                name: col.source_name.clone(),
                class: format!("{:?}", col.class()),
                rules,
            }
        })
        .collect()
}

/// Adds up the groups of every part (worker, partition) of one table: the
/// whole table's digest, and with `grouped` the groups in value order.
fn merge_groups<'g, P, I>(
    parts: P,
    columns: usize,
    grouped: bool,
) -> (GroupDigest, Vec<GroupDigest>)
where
    P: IntoIterator<Item = I>,
    I: IntoIterator<Item = &'g GroupDigest>,
{
    let mut merged: HashMap<u128, GroupDigest> = HashMap::new();
    for part in parts {
        for g in part {
            match merged.get_mut(&g.key) {
                Some(m) => add(m, g),
                None => {
                    merged.insert(g.key, g.clone());
                }
            }
        }
    }
    let mut total = empty_group(0, None, columns);
    for g in merged.values() {
        add(&mut total, g);
    }
    let mut groups: Vec<GroupDigest> = if grouped {
        merged.into_values().collect()
    } else {
        Vec::new()
    };
    groups.sort_by(|a, b| (&a.value, a.key).cmp(&(&b.value, b.key)));
    (total, groups)
}

/// One part's share of a table's fingerprint, for an engine that reads a
/// table in parts on many machines (`recon.spark.fingerprint`): each part
/// adds its batches' digests, sends [`PartialFingerprint::to_bytes`] to
/// one place, and [`assemble`] adds the parts up into the file the CLI
/// would write for the whole table.
pub struct PartialFingerprint {
    sink: GroupSink,
}

/// A part's groups and, with a sketch, its sketch of the part's rows.
pub struct FingerprintPart {
    pub groups: Vec<GroupDigest>,
    pub sketch: Option<Iblt>,
}

impl PartialFingerprint {
    /// `columns` compared columns (name order); `by`: the position of the
    /// grouping column among them; `sketch`: the differing rows the
    /// table's sketch is sized for (every part sizes it alike, so the
    /// parts' sketches add up).
    pub fn new(
        columns: usize,
        by: Option<usize>,
        sketch: Option<u64>,
    ) -> Result<PartialFingerprint> {
        let sketch = sketch.map(sketch::new_sketch).transpose()?;
        Ok(PartialFingerprint {
            sink: GroupSink::new(
                Arc::new(Layout {
                    columns,
                    by,
                    null: null_digest(),
                }),
                sketch.as_ref(),
            ),
        })
    }

    /// Adds a batch: its row digests, every column's value digests and
    /// the prepared columns (the `--by` group's value is rendered from them).
    pub fn add(
        &mut self,
        digests: &[u128],
        values: &[Vec<u128>],
        arrays: &[arrow::array::ArrayRef],
    ) -> Result<()> {
        let batch = Batch {
            digests,
            columns: values,
            totals: &[],
            arrays,
            locators: crate::input::Locators::Run(0),
        };
        self.sink.rows(Side::Source, &batch)
    }

    /// The part's groups (JSON, its length first as a u64, little-endian)
    /// and its sketch's shape and cells, to send to where the parts are
    /// added up.
    pub fn to_bytes(&self) -> Vec<u8> {
        let groups: Vec<&GroupDigest> = self.sink.groups[0].values().collect();
        let json = serde_json::to_vec(&groups).unwrap_or_default();
        let mut out = (json.len() as u64).to_le_bytes().to_vec();
        out.extend_from_slice(&json);
        if let Some(s) = &self.sink.sketches[0] {
            out.extend_from_slice(&s.tables().to_le_bytes());
            out.extend_from_slice(&s.log_cells().to_le_bytes());
            out.extend_from_slice(&s.cell_bytes());
        }
        out
    }

    /// A part from [`PartialFingerprint::to_bytes`].
    pub fn parse(bytes: &[u8]) -> Result<FingerprintPart> {
        let bad =
            |m: &str| ReconError::Internal(format!("a partial fingerprint does not parse: {m}"));
        let len = bytes
            .get(..8)
            .and_then(|b| b.try_into().ok())
            .map(u64::from_le_bytes)
            .ok_or_else(|| bad("too short"))? as usize;
        let json = bytes.get(8..8 + len).ok_or_else(|| bad("too short"))?;
        let groups = serde_json::from_slice(json).map_err(|e| bad(&e.to_string()))?;
        let rest = &bytes[8 + len..];
        let sketch = match rest.len() {
            0 => None,
            _ => {
                let word = |at: usize| -> Option<u32> {
                    Some(u32::from_le_bytes(rest.get(at..at + 4)?.try_into().ok()?))
                };
                let (tables, log) = word(0).zip(word(4)).ok_or_else(|| bad("sketch shape"))?;
                Some(
                    Iblt::from_cell_bytes(tables, log, &rest[8..])
                        .ok_or_else(|| bad("sketch cells"))?,
                )
            }
        };
        Ok(FingerprintPart { groups, sketch })
    }
}

/// The fingerprint file of a table read in parts: `plan` lists its columns
/// in name order (as `name_order` leaves them), `parts` are each part's
/// groups and sketch ([`PartialFingerprint::parse`]); `sketch` is what the
/// parts' sketches were sized for (all or none have one).
pub fn assemble(
    table: &str,
    plan: &ComparePlan,
    by: Option<String>,
    parts: &[FingerprintPart],
    sketch: Option<u64>,
) -> Result<FingerprintFile> {
    let (total, groups) = merge_groups(
        parts.iter().map(|p| &p.groups),
        plan.columns.len(),
        by.is_some(),
    );
    let mut file = FingerprintFile {
        recon_fingerprint_version: FINGERPRINT_VERSION,
        encoding_version: ENCODING_VERSION,
        algorithm: ALGORITHM.into(),
        table: table.to_string(),
        columns: column_specs(plan),
        by,
        total,
        groups,
        sketch: None,
        sketch_levels: Vec::new(),
    };
    if let Some(n) = sketch {
        let mut all = sketch::new_sketch(n)?;
        for p in parts {
            let one = p
                .sketch
                .as_ref()
                .ok_or_else(|| ReconError::Internal("a part of the table has no sketch".into()))?;
            all.merge(one)?;
        }
        file.sketch_levels = sketch::levels(&all);
        file.sketch = Some(sketch::SketchRef::unwritten(n, &file.sketch_levels));
    }
    Ok(file)
}

/// A fingerprint sums whole rows: a key or a tolerance (from flags or a
/// rules file) cannot apply, and dropping it silently would change what a
/// match means.
pub(crate) fn refuse_keyed(align: &AlignOptions) -> Result<()> {
    let what = if align.key.is_some() {
        "a key"
    } else if !align.tolerances.is_empty() {
        "a tolerance"
    } else {
        return Ok(());
    };
    Err(ReconError::Usage(format!(
        "fingerprints compare whole rows, so {what} (from a flag or a rules file) cannot apply; run the exact diff for keyed comparisons and tolerances"
    )))
}

/// Fingerprints one table: per compared column, an order-independent
/// digest of its values, and the row count, so two tables far apart can be
/// compared by their small fingerprint files ([`compare::compare`]).
///
/// ```
/// use recon::fingerprint::{compare, fingerprint, FingerprintOptions};
///
/// let root = concat!(env!("CARGO_MANIFEST_DIR"), "/../../testdata/demo");
/// let opts = FingerprintOptions::default();
/// let a = fingerprint(format!("{root}/source.parquet"), &opts)?;
/// let b = fingerprint(format!("{root}/target.parquet"), &opts)?;
/// let cmp = compare(&a, &b)?;
/// // The demo pair differs in one amount: the fingerprints say which column.
/// assert!(!cmp.fingerprints_match);
/// # Ok::<(), recon::ReconError>(())
/// ```
pub fn fingerprint(table: impl Into<Source>, opts: &FingerprintOptions) -> Result<FingerprintFile> {
    let sketch = opts.sketch.map(sketch::new_sketch).transpose()?;
    let (src, tgt, plan) = plan_one(table.into(), opts)?;
    let sides = sides_of(&src, &tgt, &plan, true);
    opts.progress
        .rows_total
        .store(stages::estimated_rows(&src), Ordering::Relaxed);
    let [one, _] = run_scan(&sides, &plan, opts, sketch.as_ref())?;
    let mut file = file_of(&src, opts.by.clone(), one)?;
    if let Some(n) = opts.sketch {
        file.sketch = Some(sketch::SketchRef::unwritten(n, &file.sketch_levels));
    }
    Ok(file)
}

/// The plan of one table fingerprinted (or extracted) alone: paired with
/// the table lending its types, the one `schema_like` names, else itself
/// (a stream, read once, lends its schema through an empty twin); columns
/// in name order.
pub(crate) fn plan_one(
    table: Source,
    opts: &FingerprintOptions,
) -> Result<(Table, Table, ComparePlan)> {
    refuse_keyed(&opts.align)?;
    let like = match (&opts.schema_like, &table) {
        (Some(like), _) => Source::from(like),
        (None, Source::Spec(p)) => Source::from(p),
        (None, Source::Batches(b)) => Source::Batches(b.clone()),
        (None, Source::Stream(s)) => {
            Source::batches(s.name.display().to_string(), s.schema()?, Vec::new())?
        }
    };
    let mut align = opts.align.clone();
    // Another table only lends its types: its extra or missing columns do
    // not matter.
    align.ignore_extra_columns |= opts.schema_like.is_some();
    // The table lends its own types with its own options (an object
    // store's settings, its format); another table, with the store settings.
    let lender = match &opts.schema_like {
        None => opts.inputs.clone(),
        Some(_) => InputOptions {
            storage_options: opts.inputs.storage_options.clone(),
            ..InputOptions::default()
        },
    };
    let inputs = [opts.inputs.clone(), lender];
    let (src, tgt, plan) = stages::plan(&table, &like, &align, &inputs, opts.temp_dir.as_deref())?;
    Ok((src, tgt, name_order(plan)))
}

/// Fingerprints two local tables in one scan (`recon diff --quick`): the
/// columns are those the plan pairs, named by their source names.
pub fn fingerprint_pair(
    source: impl Into<Source>,
    target: impl Into<Source>,
    opts: &FingerprintOptions,
    inputs: &[InputOptions; 2],
) -> Result<[FingerprintFile; 2]> {
    refuse_keyed(&opts.align)?;
    let (src, tgt, plan) = stages::plan(
        &source.into(),
        &target.into(),
        &opts.align,
        inputs,
        opts.temp_dir.as_deref(),
    )?;
    let plan = name_order(plan);
    let sides = sides_of(&src, &tgt, &plan, false);
    let rows = stages::estimated_rows(&src).saturating_add(stages::estimated_rows(&tgt));
    opts.progress.rows_total.store(rows, Ordering::Relaxed);
    let [a, b] = run_scan(&sides, &plan, opts, None)?;
    Ok([
        file_of(&src, opts.by.clone(), a)?,
        file_of(&tgt, opts.by.clone(), b)?,
    ])
}

/// The fingerprint file of one side a scan read.
fn file_of(
    t: &Table,
    by: Option<String>,
    side: Option<SideFingerprint>,
) -> Result<FingerprintFile> {
    let (columns, total, groups, sketch) =
        side.ok_or_else(|| ReconError::Internal("the fingerprint scan read nothing".into()))?;
    Ok(FingerprintFile {
        recon_fingerprint_version: FINGERPRINT_VERSION,
        encoding_version: ENCODING_VERSION,
        algorithm: ALGORITHM.into(),
        table: t.path.display().to_string(),
        columns,
        by,
        total,
        groups,
        sketch: None,
        sketch_levels: sketch.as_ref().map(sketch::levels).unwrap_or_default(),
    })
}

/// The plan with its columns in name order: the scan then digests rows in
/// the fingerprint's column order, so its row digests are used as they are.
pub(crate) fn name_order(mut plan: ComparePlan) -> ComparePlan {
    plan.columns
        .sort_by(|a, b| a.source_name.cmp(&b.source_name));
    plan
}

pub(crate) fn sides_of<'a>(
    src: &'a Table,
    tgt: &'a Table,
    plan: &ComparePlan,
    only_source: bool,
) -> [ScanSide<'a>; 2] {
    let mut sides = stages::scan_sides(src, tgt, plan);
    sides[1].skip = only_source;
    sides
}
