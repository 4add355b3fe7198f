//! Comparing two fingerprints: which columns and which groups differ.

use std::collections::BTreeMap;

use serde::Serialize;

use super::extract::DigestsFile;
use super::sketch::{self, Decoded, Totals};
use super::{FingerprintFile, GroupDigest};
use crate::error::{ReconError, Result};

/// A group's digest in each file, if present.
type Pair<'a> = (Option<&'a GroupDigest>, Option<&'a GroupDigest>);

/// How one group (or the whole table) compares.
#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct GroupComparison {
    /// The `--by` value (None: NULL or the whole table).
    pub value: Option<String>,
    pub source_rows: Option<u64>,
    pub target_rows: Option<u64>,
    /// The row multisets' digests agree.
    pub rows_match: bool,
    /// Columns whose value multisets differ (by non-null count or digest).
    pub columns_differing: Vec<String>,
}

/// The comparison of two fingerprints.
#[derive(Debug, Clone, Serialize)]
pub struct Comparison {
    /// Version of this JSON's layout.
    pub recon_fingerprint_comparison_version: u32,
    /// Everything agrees: strong evidence that the tables hold the same rows
    /// (not a proof: see docs/fingerprint.md).
    pub fingerprints_match: bool,
    /// The source fingerprint's table, as it was named when fingerprinted.
    pub source: String,
    /// The target fingerprint's table.
    pub target: String,
    /// The column the fingerprints are grouped by, if any.
    pub by: Option<String>,
    /// The two whole tables compared.
    pub total: GroupComparison,
    /// Groups that differ or are on one side only, in group order.
    pub groups_differing: Vec<GroupComparison>,
    /// Groups compared (on either side).
    pub groups_compared: usize,
    /// When both files have sketches and the tables differ: what they decoded to.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sketch: Option<SketchOutcome>,
    /// The differing row digests with their copies (source − target),
    /// when the sketches decoded.
    #[serde(skip)]
    pub differences: Option<Differences>,
}

/// Differing row digests with their copies, source − target.
pub(crate) type Differences = Vec<(u128, i64)>;

/// What two fingerprints' sketches said.
#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct SketchOutcome {
    /// Every differing row was named (checked against the row counts, sums
    /// and mixes of the two tables).
    pub decoded: bool,
    /// The level that decoded: cells per sub-table.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cells: Option<u64>,
    /// Distinct differing rows, and their copies on the side that has more.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub differing_rows: Option<usize>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub source_only_copies: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub target_only_copies: Option<u64>,
    /// Not decoded: about how many distinct rows differ (with
    /// `estimate_is_lower_bound`, at least that many), and the largest
    /// `--sketch` both hold.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub estimate: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub estimate_is_lower_bound: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sized_for: Option<u64>,
}

/// Decodes the sketches of two fingerprints whose tables differ.
fn decode_sketches(
    a: &FingerprintFile,
    b: &FingerprintFile,
) -> Option<(SketchOutcome, Option<Differences>)> {
    if a.sketch_levels.is_empty() || b.sketch_levels.is_empty() {
        return None;
    }
    let totals: Totals = (
        (a.total.rows as i64).wrapping_sub(b.total.rows as i64),
        a.total.row_sum.wrapping_sub(b.total.row_sum),
        a.total.row_mix.wrapping_sub(b.total.row_mix),
    );
    let sized_for = |f: &FingerprintFile| f.sketch.as_ref().map_or(0, |r| r.differences);
    Some(
        match sketch::decode(&a.sketch_levels, &b.sketch_levels, totals) {
            Decoded::Complete {
                log_cells,
                differences,
            } => {
                let copies = |positive: bool| {
                    differences
                        .iter()
                        .filter(|(_, c)| (*c > 0) == positive)
                        .map(|(_, c)| c.unsigned_abs())
                        .sum()
                };
                (
                    SketchOutcome {
                        decoded: true,
                        cells: Some(1 << log_cells),
                        differing_rows: Some(differences.len()),
                        source_only_copies: Some(copies(true)),
                        target_only_copies: Some(copies(false)),
                        estimate: None,
                        estimate_is_lower_bound: None,
                        sized_for: None,
                    },
                    Some(differences),
                )
            }
            Decoded::TooSmall { estimate, at_least } => (
                SketchOutcome {
                    decoded: false,
                    cells: None,
                    differing_rows: None,
                    source_only_copies: None,
                    target_only_copies: None,
                    estimate: Some(estimate),
                    estimate_is_lower_bound: Some(at_least),
                    sized_for: Some(sized_for(a).min(sized_for(b))),
                },
                None,
            ),
        },
    )
}

fn compare_group(
    value: Option<String>,
    a: Option<&GroupDigest>,
    b: Option<&GroupDigest>,
    names: &[String],
) -> GroupComparison {
    let columns_differing = match (a, b) {
        (Some(a), Some(b)) => names
            .iter()
            .zip(a.columns.iter().zip(&b.columns))
            .filter(|(_, (x, y))| x != y)
            .map(|(n, _)| n.clone())
            .collect(),
        _ => Vec::new(),
    };
    GroupComparison {
        value,
        source_rows: a.map(|g| g.rows),
        target_rows: b.map(|g| g.rows),
        rows_match: match (a, b) {
            (Some(a), Some(b)) => (a.rows, a.row_sum, a.row_mix) == (b.rows, b.row_sum, b.row_mix),
            _ => false,
        },
        columns_differing,
    }
}

/// Compares two fingerprints, refusing (with the reason) ones made with
/// different columns, rules or `--by` columns.
pub fn compare(a: &FingerprintFile, b: &FingerprintFile) -> Result<Comparison> {
    let refuse = |m: String| {
        Err(ReconError::Usage(format!(
            "cannot compare these fingerprints: {m}"
        )))
    };
    if a.by != b.by {
        return refuse(format!(
            "grouped by {} and by {}; fingerprint both with the same `--by`",
            a.by.as_deref().unwrap_or("nothing"),
            b.by.as_deref().unwrap_or("nothing")
        ));
    }
    let names = |f: &FingerprintFile| f.columns.iter().map(|c| c.name.clone()).collect::<Vec<_>>();
    if names(a) != names(b) {
        let only = |x: &FingerprintFile, y: &FingerprintFile| {
            names(x)
                .into_iter()
                .filter(|n| !names(y).contains(n))
                .collect::<Vec<_>>()
                .join(", ")
        };
        return refuse(format!(
            "the columns differ (only in the first: [{}]; only in the second: [{}]); fingerprint the same columns (`--columns`, `--exclude`, `--map`)",
            only(a, b),
            only(b, a)
        ));
    }
    for (x, y) in a.columns.iter().zip(&b.columns) {
        if x.class != y.class {
            return refuse(format!(
                "column {} holds {} values in one and {} in the other; type the text side with `--cast` or `--schema-like`",
                x.name, x.class, y.class
            ));
        }
        if x.rules != y.rules {
            return refuse(format!(
                "column {} was normalized differently ([{}] vs [{}])",
                x.name,
                x.rules.join(", "),
                y.rules.join(", ")
            ));
        }
    }
    let names = names(a);
    let total = compare_group(None, Some(&a.total), Some(&b.total), &names);
    // Groups pair by the value digest of their `--by` value (1.50 as
    // decimal(18,2) and 1.500000 as decimal(38,6) are one group); the text
    // is for display, the first file's when both have it.
    let mut groups: BTreeMap<u128, Pair<'_>> = BTreeMap::new();
    for g in &a.groups {
        groups.entry(g.key).or_default().0 = Some(g);
    }
    for g in &b.groups {
        groups.entry(g.key).or_default().1 = Some(g);
    }
    let groups_compared = groups.len();
    let mut ordered: Vec<(Option<String>, Pair<'_>)> = groups
        .into_values()
        .map(|(x, y)| (x.or(y).and_then(|g| g.value.clone()), (x, y)))
        .collect();
    ordered.sort_by(|p, q| p.0.cmp(&q.0));
    let groups_differing: Vec<GroupComparison> = ordered
        .into_iter()
        .map(|(value, (x, y))| compare_group(value, x, y, &names))
        .filter(|g| !(g.rows_match && g.columns_differing.is_empty()))
        .collect();
    let fingerprints_match =
        total.rows_match && total.columns_differing.is_empty() && groups_differing.is_empty();
    let (sketch, differences) = match fingerprints_match {
        true => (None, None),
        false => decode_sketches(a, b).map_or((None, None), |(o, d)| (Some(o), d)),
    };
    Ok(Comparison {
        recon_fingerprint_comparison_version: 1,
        fingerprints_match,
        source: a.table.clone(),
        target: b.table.clone(),
        by: a.by.clone(),
        total,
        groups_differing,
        groups_compared,
        sketch,
        differences,
    })
}

fn thousands(n: u64) -> String {
    let s = n.to_string();
    let mut out = String::new();
    for (i, c) in s.chars().enumerate() {
        if i > 0 && (s.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

impl Comparison {
    /// The digests file of this comparison of `a` (source) and `b`
    /// (target): the differing rows' digests its sketches decoded to (none
    /// when the tables match), or why there are none to give.
    pub fn digests_file(&self, a: &FingerprintFile, b: &FingerprintFile) -> Result<DigestsFile> {
        let differences = match (&self.differences, &self.sketch) {
            (Some(d), _) => d.as_slice(),
            (None, _) if self.fingerprints_match => &[],
            (None, Some(sk)) => {
                return Err(ReconError::Usage(format!(
                    "the sketches are too small to name the differing rows ({} {} distinct rows differ, and they were made for {}); fingerprint both tables again with a larger sketch",
                    if sk.estimate_is_lower_bound == Some(true) {
                        "more than about"
                    } else {
                        "about"
                    },
                    sk.estimate.unwrap_or(0),
                    sk.sized_for.unwrap_or(0)
                )))
            }
            (None, None) => {
                return Err(ReconError::Usage(
                    "naming the differing rows needs both fingerprints made with a sketch (--sketch)"
                        .into(),
                ))
            }
        };
        Ok(DigestsFile::new(a, b, differences))
    }

    /// The comparison as pretty JSON (`recon compare --json`).
    pub fn to_json(&self) -> String {
        let mut s = serde_json::to_string_pretty(self).unwrap_or_else(|_| "{}".into());
        s.push('\n');
        s
    }

    /// The verdict in one line, as a batch summary and the HTML page show it.
    pub fn verdict_line(&self) -> String {
        if self.fingerprints_match {
            return "MATCH (fingerprints): strong evidence the tables hold the same rows".into();
        }
        let cols = &self.total.columns_differing;
        format!(
            "DRIFT (fingerprints): {} vs {} rows; columns differing: {}",
            self.total.source_rows.unwrap_or(0),
            self.total.target_rows.unwrap_or(0),
            if cols.is_empty() {
                "none".to_string()
            } else {
                cols.join(", ")
            }
        )
    }

    /// The summary for people.
    pub fn render_text(&self) -> String {
        let mut out = String::new();
        let line = |out: &mut String, k: &str, v: String| out.push_str(&format!("{k:<24}{v}\n"));
        let t = &self.total;
        let rows = |x: Option<u64>| x.map_or("-".into(), thousands);
        line(&mut out, "source_row_count", rows(t.source_rows));
        line(&mut out, "target_row_count", rows(t.target_rows));
        line(
            &mut out,
            "rows",
            if t.rows_match {
                "same multiset digest".into()
            } else {
                "differ".into()
            },
        );
        let cols = if t.columns_differing.is_empty() {
            if t.rows_match {
                "none".to_string()
            } else {
                "none: every column holds the same values; rows differ in how values combine (e.g. two values swapped between rows)".into()
            }
        } else {
            t.columns_differing.join(", ")
        };
        line(&mut out, "columns_differing", cols);
        if let Some(by) = &self.by {
            line(
                &mut out,
                "groups_differing",
                format!(
                    "{} of {} ({by})",
                    self.groups_differing.len(),
                    self.groups_compared
                ),
            );
        }
        line(
            &mut out,
            "fingerprints_match",
            format!(
                "{}{}",
                self.fingerprints_match,
                if self.fingerprints_match {
                    "  (strong evidence, not a proof; `recon diff` proves it and lists the rows)"
                } else {
                    "  (the tables differ)"
                }
            ),
        );
        if let Some(sk) = &self.sketch {
            let what = match (sk.decoded, sk.differing_rows) {
                (true, Some(n)) => format!(
                    "{} differing rows named: {} copies only in source, {} only in target (`--digests FILE` writes them)",
                    thousands(n as u64),
                    thousands(sk.source_only_copies.unwrap_or(0)),
                    thousands(sk.target_only_copies.unwrap_or(0)),
                ),
                _ => format!(
                    "too small to name the differing rows: {}; fingerprint both again with a larger `--sketch` (now {})",
                    match (sk.estimate, sk.estimate_is_lower_bound) {
                        (Some(e), Some(true)) => format!("more than about {} distinct rows differ", thousands(e)),
                        (Some(e), _) => format!("about {} distinct rows differ", thousands(e)),
                        (None, _) => "many distinct rows differ".into(),
                    },
                    thousands(sk.sized_for.unwrap_or(0)),
                ),
            };
            line(&mut out, "sketch", what);
        }
        if let Some(by) = &self.by {
            for g in &self.groups_differing {
                let v = g.value.as_deref().unwrap_or("NULL");
                let what = match (g.source_rows, g.target_rows) {
                    (Some(n), None) => format!("only in source ({} rows)", thousands(n)),
                    (None, Some(n)) => format!("only in target ({} rows)", thousands(n)),
                    (Some(s), Some(t)) => {
                        let cols = match g.columns_differing.len() {
                            0 => "rows differ, every column holds the same values".to_string(),
                            1 => format!("1 column differs ({})", g.columns_differing[0]),
                            n => format!("{n} columns differ ({})", g.columns_differing.join(", ")),
                        };
                        format!("{cols}, rows {} vs {}", thousands(s), thousands(t))
                    }
                    (None, None) => String::new(),
                };
                out.push_str(&format!("  {by}={v}: {what}\n"));
            }
        }
        out
    }
}
