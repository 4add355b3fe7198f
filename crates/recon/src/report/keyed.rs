//! Keyed mode's part of the report: categories by key, per-column detail
//! and the changed keys side by side.

use std::collections::BTreeMap;

use serde::Serialize;

use super::text::display_value;
use super::{DirectionStats, Report, SampleReport};

/// Keyed categories; flattened into the report's top level.
#[derive(Debug, Clone, Serialize)]
pub struct KeyedReport {
    /// The key columns (source names), in key order.
    pub key: Vec<String>,
    /// Keys once on each side with equal rows (within tolerances).
    pub matched_keys: u64,
    /// Keys once on each side whose rows differ in at least one column.
    pub value_mismatch: u64,
    /// Keys once in the source and not in the target.
    pub missing_in_target: u64,
    /// Keys once in the target and not in the source.
    pub missing_in_source: u64,
    /// Keys more than once on either side (their rows are diffed as a multiset).
    pub duplicate_keys: u64,
    /// Rows with a NULL in any key column, both sides (diffed as a multiset).
    pub null_keys: u64,
    /// Per compared non-key column: the changed keys where it differs.
    pub column_mismatches: BTreeMap<String, u64>,
    /// Values that matched only thanks to a tolerance.
    pub tolerance_matches: u64,
    /// The rest of keyed mode's findings (the JSON's `keyed` object).
    pub keyed: KeyedDetail,
}

/// The rest of keyed mode's findings, under `keyed` in the JSON.
#[derive(Debug, Clone, Serialize)]
pub struct KeyedDetail {
    /// Per column with a tolerance: the tolerance as given.
    pub tolerances: BTreeMap<String, String>,
    /// Per column with a tolerance: the values that matched only thanks to it.
    pub tolerance_matches_by_column: BTreeMap<String, u64>,
    /// Keys whose rows differ only within tolerances (counted as matched).
    pub keys_matched_within_tolerance: u64,
    /// Per numeric column that changed: the largest absolute difference
    /// over the changed keys, exact for integers and decimals.
    pub max_abs_diff: BTreeMap<String, String>,
    /// Rows with a NULL in any key column, per side.
    pub null_key_rows: SideCounts,
    /// Unmatched rows of duplicated keys (EXCEPT ALL within those keys).
    pub duplicate_key_rows: SideStats,
    /// Unmatched rows with a NULL key (EXCEPT ALL among them).
    pub null_key_unmatched: SideStats,
    /// Changed keys whose column words could not name the column (a 64-bit
    /// collision; the rows still differ). Expected 0.
    pub unattributed_changes: u64,
    /// Which value columns changed.parquet fills: "changed" or "all".
    pub diff_columns: String,
    /// Up to `--sample` changed keys (those with the smallest key digests),
    /// in source row order.
    pub changed_samples: Vec<ChangedSample>,
    /// Duplicated keys, those whose copies differ in number first.
    pub duplicate_key_samples: Vec<DupSample>,
    /// Unmatched rows of duplicated keys.
    pub duplicate_key_row_samples: SideSamples,
    /// Unmatched rows with a NULL key.
    pub null_key_row_samples: SideSamples,
    /// With `--output`: the evidence files written.
    pub outputs: Option<KeyedOutputs>,
}

/// Sample rows per direction, with their copies on each side.
#[derive(Debug, Clone, Default, Serialize)]
pub struct SideSamples {
    /// Source-only rows, up to `--sample` (those with the smallest digests).
    pub source_only: Vec<SampleReport>,
    /// Target-only rows, up to `--sample` (those with the smallest digests).
    pub target_only: Vec<SampleReport>,
}

/// A count per side.
#[derive(Debug, Clone, Copy, Default, Serialize)]
pub struct SideCounts {
    /// The source's count.
    pub source: u64,
    /// The target's count.
    pub target: u64,
}

/// `EXCEPT ALL` counts of some of the rows (those of duplicated keys, or
/// with a NULL key), per direction.
#[derive(Debug, Clone, Copy, Default, Serialize)]
pub struct SideStats {
    /// Unmatched source rows among them (`EXCEPT ALL` within those rows).
    pub source_only: DirectionStats,
    /// Unmatched target rows among them.
    pub target_only: DirectionStats,
}

/// One changed key: its key values and, per changed column, old then new.
#[derive(Debug, Clone, Serialize)]
pub struct ChangedSample {
    /// The position of the key's source row, which orders the samples; not
    /// in the JSON.
    #[serde(skip)]
    pub order: u128,
    /// Key column (source name) -> value as text; NULL is JSON null.
    pub key: serde_json::Map<String, serde_json::Value>,
    /// Each changed column's source and target values, in column order.
    pub changed: Vec<ChangedValue>,
}

/// One column's two values, in a changed key or a keyless pair.
#[derive(Debug, Clone, Serialize)]
pub struct ChangedValue {
    /// The compared column (source name).
    pub column: String,
    /// The source row's value as text (None: NULL).
    pub source: Option<String>,
    /// The target row's value as text (None: NULL).
    pub target: Option<String>,
}

/// One duplicated key and its copies per side.
#[derive(Debug, Clone, Serialize)]
pub struct DupSample {
    /// Key column (source name) -> value as text.
    pub key: serde_json::Map<String, serde_json::Value>,
    /// Source rows with this key.
    pub source_count: u64,
    /// Target rows with this key.
    pub target_count: u64,
}

/// Keyless pairing: unmatched rows alike but for one or two columns.
#[derive(Debug, Clone, Serialize)]
pub struct PairsReport {
    /// Distinct source-only rows paired with a target-only row.
    pub paired: u64,
    /// Groups where a row had more than one candidate on the other side
    /// (left unpaired), and the rows in them.
    pub ambiguous_groups: u64,
    /// Distinct unmatched rows in those groups, both sides.
    pub ambiguous_rows: u64,
    /// Per compared column: the pairs in which it changed.
    pub by_column: BTreeMap<String, u64>,
    /// Why pairing did not run, when it did not.
    pub skipped: Option<String>,
    /// The first pairs, up to `--sample`, in source row order.
    pub samples: Vec<PairSample>,
}

/// One pair: the values they share, then each changed column old -> new.
#[derive(Debug, Clone, Serialize)]
pub struct PairSample {
    /// The compared columns the rows agree on (source names) -> the source
    /// row's value as text; NULL is JSON null.
    pub same: serde_json::Map<String, serde_json::Value>,
    /// The one or two columns that differ: source value, then target value.
    pub changed: Vec<ChangedValue>,
    /// Unmatched copies of the source row.
    pub source_count: u64,
    /// Unmatched copies of the target row.
    pub target_count: u64,
}

/// `--by COL`: the unmatched rows per value of COL.
#[derive(Debug, Clone, Serialize)]
pub struct ByGroupReport {
    /// The `--by` column, as given.
    pub column: String,
    /// Groups holding unmatched rows, in value order.
    pub groups: Vec<GroupCount>,
}

/// One value of the `--by` column, and its unmatched rows.
#[derive(Debug, Clone, Serialize)]
pub struct GroupCount {
    /// The value as compared (after normalization), as text (None: NULL).
    pub value: Option<String>,
    /// Source-only occurrences with this value.
    pub source_only: u64,
    /// Target-only occurrences with this value.
    pub target_only: u64,
}

/// Files keyed mode wrote.
#[derive(Debug, Clone, Serialize)]
pub struct KeyedOutputs {
    /// Path of `changed.parquet`: the changed keys, side by side.
    pub changed: String,
    /// Path of `missing_in_target.parquet`: the rows of source-only keys.
    pub missing_in_target: String,
    /// Path of `missing_in_source.parquet`: the rows of target-only keys.
    pub missing_in_source: String,
    /// Path of `duplicate_keys_source_only.parquet`: the source-only rows
    /// of duplicated keys.
    pub duplicate_keys_source_only: String,
    /// Path of `duplicate_keys_target_only.parquet`: the target-only rows
    /// of duplicated keys.
    pub duplicate_keys_target_only: String,
    /// Path of `null_keys_source_only.parquet`: the source-only rows with
    /// a NULL key.
    pub null_keys_source_only: String,
    /// Path of `null_keys_target_only.parquet`: the target-only rows with
    /// a NULL key.
    pub null_keys_target_only: String,
    /// Rows written to `changed.parquet`: one per changed key.
    pub changed_written: u64,
}

fn key_text(key: &serde_json::Map<String, serde_json::Value>) -> String {
    key.iter()
        .map(|(k, v)| match v {
            serde_json::Value::String(s) => format!("{k}={s}"),
            _ => format!("{k}=NULL"),
        })
        .collect::<Vec<_>>()
        .join(" ")
}

impl Report {
    /// The keyed summary: categories, the per-column table, then the
    /// changed keys side by side, missing rows and duplicated keys.
    pub(super) fn render_keyed(&self, k: &KeyedReport, quoted: &[Vec<bool>; 2]) -> String {
        let mut out = self.keyed_counts(k);
        out.push_str(&keyed_columns(k));
        out.push_str(&self.keyed_samples(k, quoted));
        out
    }

    /// One line per category of keys and rows.
    fn keyed_counts(&self, k: &KeyedReport) -> String {
        let mut out = String::new();
        let line =
            |out: &mut String, name: &str, v: String| out.push_str(&format!("{name:<24}{v}\n"));
        let d = &k.keyed;
        line(&mut out, "source_row_count", self.source_rows.to_string());
        line(&mut out, "target_row_count", self.target_rows.to_string());
        line(&mut out, "key", k.key.join(", "));
        let within = if d.keys_matched_within_tolerance > 0 {
            format!("  ({} within tolerance)", d.keys_matched_within_tolerance)
        } else {
            String::new()
        };
        line(
            &mut out,
            "matched_keys",
            format!("{}{within}", k.matched_keys),
        );
        line(&mut out, "value_mismatch", k.value_mismatch.to_string());
        line(
            &mut out,
            "missing_in_target",
            k.missing_in_target.to_string(),
        );
        line(
            &mut out,
            "missing_in_source",
            k.missing_in_source.to_string(),
        );
        let dr = &d.duplicate_key_rows;
        let dup_note = if dr.source_only.rows + dr.target_only.rows > 0 {
            format!(
                "  (unmatched rows: {} source-only, {} target-only)",
                dr.source_only.rows, dr.target_only.rows
            )
        } else if k.duplicate_keys > 0 {
            "  (their rows match)".into()
        } else {
            String::new()
        };
        line(
            &mut out,
            "duplicate_keys",
            format!("{}{dup_note}", k.duplicate_keys),
        );
        let nr = &d.null_key_unmatched;
        let null_note = if k.null_keys > 0 {
            format!(
                "  (source {}, target {}; unmatched: {} source-only, {} target-only)",
                d.null_key_rows.source,
                d.null_key_rows.target,
                nr.source_only.rows,
                nr.target_only.rows
            )
        } else {
            String::new()
        };
        line(&mut out, "null_keys", format!("{}{null_note}", k.null_keys));
        if k.tolerance_matches > 0 {
            line(
                &mut out,
                "tolerance_matches",
                format!(
                    "{} {}",
                    k.tolerance_matches,
                    if k.tolerance_matches == 1 {
                        "value"
                    } else {
                        "values"
                    }
                ),
            );
        }
        line(
            &mut out,
            "unmatched_rows",
            format!(
                "source-only {}, target-only {} (EXCEPT ALL, after tolerances)",
                self.source_only_rows, self.target_only_rows
            ),
        );
        let pe = &self.parse_errors;
        if pe.source + pe.target > 0 {
            line(
                &mut out,
                "parse_errors",
                format!(
                    "{}  (source {}, target {}; those rows were not compared)",
                    pe.source + pe.target,
                    pe.source,
                    pe.target
                ),
            );
        }
        line(&mut out, "exact_match", self.exact_match.to_string());
        out
    }

    /// The changed keys, missing rows, duplicated keys and the rows of
    /// duplicated and NULL keys left unmatched, with their samples; then
    /// the values that failed to parse.
    fn keyed_samples(&self, k: &KeyedReport, quoted: &[Vec<bool>; 2]) -> String {
        let mut out = String::new();
        let d = &k.keyed;
        let pe = &self.parse_errors;
        if k.value_mismatch > 0 {
            out.push_str(&format!("\nchanged keys: {}", k.value_mismatch));
            if (d.changed_samples.len() as u64) < k.value_mismatch {
                out.push_str(&format!(" (showing {})", d.changed_samples.len()));
            }
            out.push('\n');
            for s in &d.changed_samples {
                out.push_str(&format!("  {}\n", key_text(&s.key)));
                let width = s.changed.iter().map(|c| c.column.len()).max().unwrap_or(0);
                for c in &s.changed {
                    let q = self
                        .columns
                        .iter()
                        .position(|col| col.name == c.column)
                        .map(|i| self.columns[i].source_type.contains("Utf8"))
                        .unwrap_or(false);
                    out.push_str(&format!(
                        "    {:<width$}  {} -> {}\n",
                        c.column,
                        display_value(&c.source, q),
                        display_value(&c.target, q)
                    ));
                }
            }
        }
        for (title, n, samples, quoted) in [
            (
                "missing in target (source rows)",
                k.missing_in_target,
                &self.samples.source_only,
                &quoted[0],
            ),
            (
                "missing in source (target rows)",
                k.missing_in_source,
                &self.samples.target_only,
                &quoted[1],
            ),
        ] {
            if n == 0 {
                continue;
            }
            out.push_str(&format!("\n{title}: {n}"));
            if (samples.len() as u64) < n {
                out.push_str(&format!(" (showing {})", samples.len()));
            }
            out.push('\n');
            for s in samples {
                out.push_str(&format!("  {}\n", s.render(quoted)));
            }
        }
        if k.duplicate_keys > 0 {
            out.push_str(&format!("\nduplicate keys: {}", k.duplicate_keys));
            if (d.duplicate_key_samples.len() as u64) < k.duplicate_keys {
                out.push_str(&format!(" (showing {})", d.duplicate_key_samples.len()));
            }
            out.push('\n');
            for s in &d.duplicate_key_samples {
                out.push_str(&format!(
                    "  source x{:<3} target x{:<3} {}\n",
                    s.source_count,
                    s.target_count,
                    key_text(&s.key)
                ));
            }
        }
        for (title, samples) in [
            (
                "unmatched rows of duplicated keys",
                &d.duplicate_key_row_samples,
            ),
            ("unmatched rows with a NULL key", &d.null_key_row_samples),
        ] {
            if samples.source_only.is_empty() && samples.target_only.is_empty() {
                continue;
            }
            out.push_str(&format!("\n{title}:\n"));
            for (side, rows, quoted) in [
                ("source-only", &samples.source_only, &quoted[0]),
                ("target-only", &samples.target_only, &quoted[1]),
            ] {
                for s in rows.iter() {
                    out.push_str(&format!(
                        "  {side} source x{:<3} target x{:<3} {}\n",
                        s.source_count,
                        s.target_count,
                        s.render(quoted)
                    ));
                }
            }
        }
        if !pe.examples.is_empty() {
            out.push_str("\nvalues that failed to parse:\n");
            for e in &pe.examples {
                out.push_str(&format!("  {e}\n"));
            }
        }
        out
    }
}

/// The per-column table: changed keys, largest difference and values
/// matched within a tolerance, for the columns with any.
fn keyed_columns(k: &KeyedReport) -> String {
    let mut out = String::new();
    let d = &k.keyed;
    let changed: Vec<(&String, &u64)> = k
        .column_mismatches
        .iter()
        .filter(|(_, n)| **n > 0)
        .collect();
    let tol: Vec<(&String, &u64)> = d
        .tolerance_matches_by_column
        .iter()
        .filter(|(_, n)| **n > 0)
        .collect();
    if !changed.is_empty() || !tol.is_empty() {
        let mut cols: Vec<&String> = changed.iter().map(|c| c.0).collect();
        for (c, _) in &tol {
            if !cols.contains(c) {
                cols.push(c);
            }
        }
        cols.sort();
        let width = cols.iter().map(|c| c.len()).max().unwrap_or(6).max(6);
        out.push_str(&format!(
            "\n{:<width$}  {:>12}  {:>14}  {:>16}\n",
            "column", "changed_keys", "max_abs_diff", "within_tolerance"
        ));
        for c in cols {
            let n = k.column_mismatches.get(c).copied().unwrap_or(0);
            let m = d.max_abs_diff.get(c).cloned().unwrap_or_else(|| "-".into());
            let t = d
                .tolerance_matches_by_column
                .get(c)
                .map_or("-".to_string(), |n| n.to_string());
            out.push_str(&format!("{c:<width$}  {n:>12}  {m:>14}  {t:>16}\n"));
        }
    }
    out
}
