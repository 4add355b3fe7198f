//! The text summary for people.

use arrow::datatypes::DataType;

use super::{Report, SampleReport};

/// Renders `value` for people: strings are quoted so '' and ' ' are visible.
pub(crate) fn display_value(v: &Option<String>, quoted: bool) -> String {
    match v {
        None => "NULL".into(),
        Some(s) if quoted => format!("{s:?}"),
        Some(s) => s.clone(),
    }
}

/// Whether a column's values should be quoted when shown.
pub(crate) fn is_text(dt: &DataType) -> bool {
    match dt {
        DataType::Utf8 | DataType::LargeUtf8 | DataType::Utf8View => true,
        DataType::Dictionary(_, v) => is_text(v),
        _ => false,
    }
}

fn plural(n: u64, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

impl SampleReport {
    pub(super) fn render(&self, quoted: &[bool]) -> String {
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

impl Report {
    /// The human summary, shaped like the SQL verdict query's result.
    /// `quoted[side][i]` says whether column `i` of that side's sample rows is text.
    pub fn render_text(&self, quoted: &[Vec<bool>; 2]) -> String {
        let mut out = format!("{}\n", self.verdict_line());
        if let Some(k) = &self.keyed {
            out.push_str(&self.render_keyed(k, quoted));
            return out;
        }
        self.render_counts(&mut out);
        self.render_unmatched(&mut out, quoted);
        self.render_pair_samples(&mut out);
        self.render_groups_and_parse_errors(&mut out);
        out
    }

    /// The keyless counts, one `name  value` line each.
    fn render_counts(&self, out: &mut String) {
        let m = &self.multiplicity;
        let line = |out: &mut String, k: &str, v: String| out.push_str(&format!("{k:<24}{v}\n"));
        line(out, "source_row_count", self.source_rows.to_string());
        line(out, "target_row_count", self.target_rows.to_string());
        line(
            out,
            "source_only_row_count",
            format!(
                "{}  ({} absent from target, {} of rows the target also has)",
                self.source_only_rows,
                m.source_only.absent_rows,
                plural(m.source_only.extra_copy_rows, "extra copy", "extra copies")
            ),
        );
        line(
            out,
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
                out,
                "parse_errors",
                format!(
                    "{}  (source {}, target {}; those rows were not compared)",
                    pe.source + pe.target,
                    pe.source,
                    pe.target
                ),
            );
        }
        line(out, "exact_match", self.exact_match.to_string());
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
            line(out, "columns_differing", what);
        }
        if let Some(p) = &self.pairs {
            let what = if let Some(why) = &p.skipped {
                format!("not paired: {why}")
            } else {
                let cols: Vec<String> = p
                    .by_column
                    .iter()
                    .map(|(c, n)| format!("{c} in {n}"))
                    .collect();
                let mut w = format!(
                    "{}  (unmatched rows alike but for 1 or 2 columns: {})",
                    p.paired,
                    if cols.is_empty() {
                        "none".to_string()
                    } else {
                        cols.join(", ")
                    }
                );
                if p.ambiguous_groups > 0 {
                    w.push_str(&format!(
                        "; {} ambiguous, left unpaired",
                        plural(p.ambiguous_rows, "row", "rows")
                    ));
                }
                w
            };
            line(out, "changed_pairs", what);
        }
    }

    /// The unmatched rows of each direction, with their copies.
    fn render_unmatched(&self, out: &mut String, quoted: &[Vec<bool>; 2]) {
        let m = &self.multiplicity;
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
    }

    /// The changed pairs shown, each as its common values and its changes.
    fn render_pair_samples(&self, out: &mut String) {
        if let Some(p) = self.pairs.as_ref().filter(|p| !p.samples.is_empty()) {
            out.push_str(&format!("\nchanged pairs: {}", p.paired));
            if (p.samples.len() as u64) < p.paired {
                out.push_str(&format!(" (showing {})", p.samples.len()));
            }
            out.push('\n');
            let text_col = |name: &str| {
                self.columns
                    .iter()
                    .find(|c| c.name == name)
                    .is_some_and(|c| c.source_type.contains("Utf8"))
            };
            for s in &p.samples {
                let same: Vec<String> = s
                    .same
                    .iter()
                    .map(|(k, v)| {
                        let v = v.as_str().map(str::to_string);
                        format!("{k}={}", display_value(&v, text_col(k)))
                    })
                    .collect();
                let changed: Vec<String> = s
                    .changed
                    .iter()
                    .map(|c| {
                        let q = text_col(&c.column);
                        format!(
                            "{} {} -> {}",
                            c.column,
                            display_value(&c.source, q),
                            display_value(&c.target, q)
                        )
                    })
                    .collect();
                out.push_str(&format!("  {}: {}\n", same.join("  "), changed.join(", ")));
            }
        }
    }

    /// `--by` groups and the values that failed to parse.
    fn render_groups_and_parse_errors(&self, out: &mut String) {
        let pe = &self.parse_errors;
        if let Some(b) = self.by_group.as_ref().filter(|b| !b.groups.is_empty()) {
            out.push_str(&format!("\nunmatched rows by {}:\n", b.column));
            for g in &b.groups {
                out.push_str(&format!(
                    "  {}={}: {} source-only, {} target-only\n",
                    b.column,
                    g.value.as_deref().unwrap_or("NULL"),
                    g.source_only,
                    g.target_only
                ));
            }
        }
        if !pe.examples.is_empty() {
            out.push_str("\nvalues that failed to parse:\n");
            for e in &pe.examples {
                out.push_str(&format!("  {e}\n"));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_is_quoted_so_empty_and_blank_values_show() {
        assert_eq!(display_value(&None, true), "NULL");
        assert_eq!(display_value(&Some(String::new()), true), "\"\"");
        assert_eq!(display_value(&Some(" ".into()), true), "\" \"");
        assert_eq!(display_value(&Some("NULL".into()), true), "\"NULL\"");
        assert_eq!(display_value(&Some("12.50".into()), false), "12.50");
    }

    #[test]
    fn dictionaries_of_strings_are_text() {
        let dict = DataType::Dictionary(Box::new(DataType::Int32), Box::new(DataType::Utf8));
        assert!(is_text(&dict) && is_text(&DataType::Utf8View));
        assert!(!is_text(&DataType::Binary) && !is_text(&DataType::Int64));
        assert_eq!(plural(1, "row", "rows"), "1 row");
        assert_eq!(plural(0, "row", "rows"), "0 rows");
    }
}
