//! The `recon schema` screen: how the columns pair and compare, as text
//! for people or as versioned JSON.

use crate::config::{AlignOptions, InputOptions};
use crate::error::hint::as_flags;
use crate::error::Result;
use crate::input::{Source, Table};
use crate::plan::align::render_plan;
use crate::plan::{preflight, ComparePlan};

use super::ColumnReport;

/// Version of the schema JSON's layout.
pub(crate) const SCHEMA_VERSION: u32 = 1;

/// How a pair's columns pair and compare, planned from the two tables'
/// schemas without reading their rows: what `recon schema` prints.
#[derive(Debug, Clone)]
pub struct SchemaScreen {
    /// Whether every column pairs and compares (`recon schema`'s exit 0).
    pub compatible: bool,
    /// The versioned JSON (`recon schema --json`).
    pub json: String,
    /// The text screen for people.
    pub text: String,
}

/// Plans `source` against `target` with the alignment options and each
/// side's reader options, reading only what the schemas need (a CSV's
/// sample, a Parquet footer). Refusals of the inputs themselves are errors;
/// columns that cannot be compared are problems in the screen.
pub fn schema(
    source: impl Into<Source>,
    target: impl Into<Source>,
    align: &AlignOptions,
    inputs: &[InputOptions; 2],
) -> Result<SchemaScreen> {
    let (src, tgt, plan) = preflight(source, target, align, inputs)?;
    Ok(SchemaScreen {
        compatible: plan.is_compatible(),
        json: schema_json(&plan),
        text: schema_text(&plan, [&src, &tgt]),
    })
}

/// The plan as JSON: `{"recon_schema_version", "compatible", "columns",
/// "not_compared", "problems"}`, with the diff report's column objects.
pub(crate) fn schema_json(plan: &ComparePlan) -> String {
    let columns: Vec<ColumnReport> = plan.columns.iter().map(ColumnReport::from_pair).collect();
    let mut s = serde_json::to_string_pretty(&serde_json::json!({
        "recon_schema_version": SCHEMA_VERSION,
        "compatible": plan.is_compatible(),
        "columns": columns,
        "not_compared": plan.skipped.iter().map(|k| serde_json::json!({
            "side": k.side, "name": k.field.name(), "why": k.why,
        })).collect::<Vec<_>>(),
        "problems": plan.problems.iter().map(|p| as_flags(p)).collect::<Vec<_>>(),
    }))
    .unwrap_or_default();
    s.push('\n');
    s
}

/// The plan as the text screen, then a line per text side naming the
/// columns it parses and their types, so "Decimal128" on a CSV side is not
/// a surprise.
pub(crate) fn schema_text(plan: &ComparePlan, tables: [&Table; 2]) -> String {
    let mut out = render_plan(plan);
    for (side, t) in [("source", tables[0]), ("target", tables[1])] {
        if let Some(snap) = &t.snapshot {
            out.push_str(&format!("{side}: {}\n", snap.describe()));
        }
        if let Some(d) = &t.dialect {
            out.push_str(&format!("{side} ({}): {d}\n", t.format_name()));
        }
        let parsed: Vec<String> = t
            .schema
            .fields()
            .iter()
            .zip(&t.untyped)
            .filter(|(f, u)| **u && f.data_type() != &arrow::datatypes::DataType::Utf8)
            .map(|(f, _)| format!("{} as {}", f.name(), f.data_type()))
            .collect();
        if !parsed.is_empty() {
            out.push_str(&format!(
                "{side} ({}): text parsed exactly into {}\n",
                t.format_name(),
                parsed.join(", ")
            ));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::AlignOptions;
    use crate::plan::align::plan;
    use arrow::datatypes::{DataType, Field, Schema};

    #[test]
    fn the_schema_json_shows_problems_with_flags_and_the_verdict() {
        let s = Schema::new(vec![
            Field::new("id", DataType::Int64, false),
            Field::new("note", DataType::Utf8, true),
        ]);
        let t = Schema::new(vec![Field::new("id", DataType::Int64, false)]);
        let p = plan(&s, &t, &AlignOptions::default());
        let v: serde_json::Value = serde_json::from_str(&schema_json(&p)).unwrap();
        assert_eq!(v["recon_schema_version"], SCHEMA_VERSION);
        assert_eq!(v["compatible"], false);
        assert_eq!(v["columns"].as_array().unwrap().len(), 1);
        let problem = v["problems"][0].as_str().unwrap();
        // Option hints are spelled as flags here, never left in backquotes.
        assert!(problem.contains("--exclude note"), "{problem}");
        assert!(!problem.contains('`'), "{problem}");
    }
}
