//! The JSON report (versioned, for machines) and the text summary (for people).

use serde::Serialize;

use crate::align::ColumnPair;
use crate::evidence::{display_value, SampleRow};
use crate::reconcile::DirectionStats;

/// Version of the report's JSON layout. Bumped on any incompatible change.
pub const REPORT_VERSION: u32 = 1;

/// Unmatched rows broken down by cause, per direction.
#[derive(Debug, Clone, Serialize)]
pub struct Multiplicity {
    pub source_only: DirectionStats,
    pub target_only: DirectionStats,
}

/// One compared column pair: how it was aligned, typed and normalized.
#[derive(Debug, Clone, Serialize)]
pub struct ColumnReport {
    pub name: String,
    pub target_name: String,
    pub source_type: String,
    pub target_type: String,
    /// How the pair was formed: name, name (case-insensitive), --map, position.
    pub pairing: String,
    /// How values are compared, including any conversion.
    pub rule: String,
    /// Normalization rules applied before hashing.
    pub normalize: Vec<String>,
}

impl ColumnReport {
    pub fn from_pair(c: &ColumnPair) -> ColumnReport {
        ColumnReport {
            name: c.source_name.clone(),
            target_name: c.target_name.clone(),
            source_type: c.source_field.data_type().to_string(),
            target_type: c.target_field.data_type().to_string(),
            pairing: c.pairing.clone(),
            rule: c.rule.clone(),
            normalize: c.normalize.iter().map(|n| n.describe()).collect(),
        }
    }
}

/// A column left out of the comparison.
#[derive(Debug, Clone, Serialize)]
pub struct SkippedReport {
    pub side: String,
    pub name: String,
    pub why: String,
}

/// Which compared columns hold different values between the sides (as
/// multisets of that column's values; see README "Which columns drifted").
#[derive(Debug, Clone, Serialize)]
pub struct ColumnDrift {
    pub differing: Vec<String>,
    pub same: usize,
}

/// One input table.
#[derive(Debug, Clone, Serialize)]
pub struct InputReport {
    pub path: String,
    pub format: String,
    pub files: usize,
    pub rows: u64,
}

#[derive(Debug, Clone, Serialize)]
pub struct Inputs {
    pub source: InputReport,
    pub target: InputReport,
}

/// A sample row as it appears in the report.
#[derive(Debug, Clone, Serialize)]
pub struct SampleReport {
    pub source_count: u64,
    pub target_count: u64,
    /// Column name → value as text; NULL is JSON null.
    pub row: serde_json::Map<String, serde_json::Value>,
}

#[derive(Debug, Clone, Serialize)]
pub struct Samples {
    /// At most this many distinct rows per direction: those with the smallest digests.
    pub limit: usize,
    pub source_only: Vec<SampleReport>,
    pub target_only: Vec<SampleReport>,
}

/// Run settings.
#[derive(Debug, Clone, Serialize)]
pub struct Settings {
    pub threads: usize,
    /// Bytes; null when unlimited.
    pub memory_limit_bytes: Option<u64>,
    pub temp_dir: String,
    pub buckets: usize,
    /// 2 when buckets were fingerprinted first and only differing ones spilled.
    pub passes: u8,
    /// Of the 16384 fingerprint buckets, how many differed (two passes only).
    pub fingerprint_buckets_differing: Option<usize>,
}

/// Output files written, if any.
#[derive(Debug, Clone, Serialize)]
pub struct Outputs {
    pub dir: String,
    pub source_only: String,
    pub target_only: String,
    pub source_only_written: u64,
    pub target_only_written: u64,
}

/// Wall time of each pipeline phase. Scan includes preflight and partitioning.
#[derive(Debug, Clone, Serialize)]
pub struct PhaseSeconds {
    pub scan: f64,
    pub reconcile: f64,
    pub evidence: f64,
}

/// The full result of a diff.
#[derive(Debug, Clone, Serialize)]
pub struct Report {
    pub recon_report_version: u32,
    pub exact_match: bool,
    pub source_rows: u64,
    pub target_rows: u64,
    pub source_only_rows: u64,
    pub target_only_rows: u64,
    pub multiplicity: Multiplicity,
    pub columns: Vec<ColumnReport>,
    pub not_compared: Vec<SkippedReport>,
    pub column_drift: ColumnDrift,
    /// Text values that could not be parsed into their column's type and
    /// were counted as drift (`--max-parse-errors`); their rows were not compared.
    pub parse_errors: ParseErrorsReport,
    pub inputs: Inputs,
    pub samples: Samples,
    pub encoding_version: u32,
    pub outputs: Option<Outputs>,
    pub settings: Settings,
    pub elapsed_seconds: f64,
    pub phase_seconds: PhaseSeconds,
    pub spilled_bytes: u64,
    pub bucket_splits: u64,
    pub peak_rss_bytes: u64,
}

/// Values that failed to parse, per side, with the first messages.
#[derive(Debug, Clone, Serialize, Default)]
pub struct ParseErrorsReport {
    pub source: u64,
    pub target: u64,
    pub examples: Vec<String>,
}

impl SampleReport {
    pub fn new(columns: &[String], row: SampleRow) -> SampleReport {
        let map = columns
            .iter()
            .cloned()
            .zip(row.values.into_iter().map(|v| match v {
                None => serde_json::Value::Null,
                Some(s) => serde_json::Value::String(s),
            }))
            .collect();
        SampleReport {
            source_count: row.source_count,
            target_count: row.target_count,
            row: map,
        }
    }

    fn render(&self, quoted: &[bool]) -> String {
        self.row
            .iter()
            .zip(quoted)
            .map(|((name, v), &q)| {
                let v = v.as_str().map(str::to_string);
                format!("{name}={}", display_value(&v, q))
            })
            .collect::<Vec<_>>()
            .join("  ")
    }
}

fn plural(n: u64, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

impl Report {
    /// Pretty JSON with a trailing newline.
    pub fn to_json(&self) -> String {
        let mut s = serde_json::to_string_pretty(self).unwrap_or_else(|_| "{}".into());
        s.push('\n');
        s
    }

    /// The human summary, shaped like the SQL verdict query's result.
    /// `quoted[side][i]` says whether column `i` of that side's sample rows is text.
    pub fn render_text(&self, quoted: &[Vec<bool>; 2]) -> String {
        let mut out = String::new();
        let m = &self.multiplicity;
        let line = |out: &mut String, k: &str, v: String| out.push_str(&format!("{k:<24}{v}\n"));
        line(&mut out, "source_row_count", self.source_rows.to_string());
        line(&mut out, "target_row_count", self.target_rows.to_string());
        line(
            &mut out,
            "source_only_row_count",
            format!(
                "{}  ({} absent from target, {} of rows the target also has)",
                self.source_only_rows,
                m.source_only.absent_rows,
                plural(m.source_only.extra_copy_rows, "extra copy", "extra copies")
            ),
        );
        line(
            &mut out,
            "target_only_row_count",
            format!(
                "{}  ({} absent from source, {} of rows the source also has)",
                self.target_only_rows,
                m.target_only.absent_rows,
                plural(m.target_only.extra_copy_rows, "extra copy", "extra copies")
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
        let d = &self.column_drift;
        if !self.exact_match {
            let what = if d.same == 0 && d.differing.len() > 1 {
                format!(
                    "all {} columns (as when whole rows are added or removed)",
                    d.differing.len()
                )
            } else if d.differing.is_empty() {
                "none: every column holds the same values; rows differ only in how values combine or repeat".to_string()
            } else {
                let rest = match d.same {
                    0 => String::new(),
                    1 => "; the other column holds the same values".into(),
                    n => format!("; the other {n} columns hold the same values"),
                };
                format!("{}{rest}", d.differing.join(", "))
            };
            line(&mut out, "columns_differing", what);
        }
        for (title, stats, samples, quoted) in [
            (
                "source-only",
                &m.source_only,
                &self.samples.source_only,
                &quoted[0],
            ),
            (
                "target-only",
                &m.target_only,
                &self.samples.target_only,
                &quoted[1],
            ),
        ] {
            if stats.rows == 0 {
                continue;
            }
            out.push_str(&format!(
                "\n{title} rows: {}, {}",
                plural(stats.distinct_rows, "distinct value", "distinct values"),
                plural(stats.rows, "occurrence", "occurrences")
            ));
            if samples.len() < stats.distinct_rows as usize {
                out.push_str(&format!(" (showing {})", samples.len()));
            }
            out.push('\n');
            for s in samples {
                out.push_str(&format!(
                    "  source x{:<3} target x{:<3} {}\n",
                    s.source_count,
                    s.target_count,
                    s.render(quoted)
                ));
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
