//! The HTML report (`--html FILE`): one self-contained page, no network
//! fetches, charts as inline SVG, rendered with a template (minijinja) from
//! the same JSON the report writes.

use serde_json::{json, Value};

use super::batch::PairOutcome;
use super::{Report, Verdict};
use crate::error::{ReconError, Result};
use crate::size::format_size;

const TEMPLATE: &str = include_str!("report.html");

/// Width in pixels of the longest bar.
const BAR: f64 = 300.0;

fn class_of(verdict: Verdict) -> &'static str {
    match verdict {
        Verdict::Pass => "pass",
        Verdict::PassWithDrift => "drift",
        _ => "fail",
    }
}

fn width(v: u64, max: u64) -> u64 {
    if v == 0 || max == 0 {
        0
    } else {
        ((v as f64 / max as f64) * BAR).round().max(1.0) as u64
    }
}

/// One section: a pair's (or the run's) verdict, report and chart data.
fn section(name: &str, verdict: Verdict, summary: &str, report: Option<&Value>) -> Value {
    let mut bars = Vec::new();
    let mut groups = Vec::new();
    let mut elapsed = String::new();
    let mut sizes = Value::Null;
    if let Some(r) = report.filter(|r| r.get("recon_report_version").is_some()) {
        let n = |path: &[&str]| {
            let mut v = r;
            for p in path {
                v = &v[*p];
            }
            v.as_u64().unwrap_or(0)
        };
        let rows = [
            ("source rows", n(&["source_rows"]), "#8c959f"),
            ("target rows", n(&["target_rows"]), "#8c959f"),
            ("source-only rows", n(&["source_only_rows"]), "#cf222e"),
            ("target-only rows", n(&["target_only_rows"]), "#0969da"),
            (
                "  of them extra copies",
                n(&["multiplicity", "source_only", "extra_copy_rows"]),
                "#ff8182",
            ),
            (
                "  of them extra copies",
                n(&["multiplicity", "target_only", "extra_copy_rows"]),
                "#54aeff",
            ),
        ];
        let max = rows.iter().map(|r| r.1).max().unwrap_or(0);
        bars = rows
            .iter()
            .map(|(label, value, color)| {
                json!({"label": label, "value": value, "width": width(*value, max), "color": color})
            })
            .collect();
        if let Some(g) = r["by_group"]["groups"].as_array() {
            let max = g
                .iter()
                .map(|x| {
                    x["source_only"].as_u64().unwrap_or(0) + x["target_only"].as_u64().unwrap_or(0)
                })
                .max()
                .unwrap_or(0);
            groups = g
                .iter()
                .map(|x| {
                    let (s, t) = (
                        x["source_only"].as_u64().unwrap_or(0),
                        x["target_only"].as_u64().unwrap_or(0),
                    );
                    json!({
                        "label": x["value"].as_str().unwrap_or("NULL"),
                        "source_only": s,
                        "target_only": t,
                        "source_width": width(s, max),
                        "target_width": width(t, max),
                    })
                })
                .collect();
        }
        elapsed = format!("{:.2}", r["elapsed_seconds"].as_f64().unwrap_or(0.0));
        // Sizes in the units --memory-limit takes, not raw bytes.
        let size = |v: &Value| v.as_u64().map_or("unlimited".into(), format_size);
        sizes = json!({
            "memory_limit": size(&r["settings"]["memory_limit_bytes"]),
            "spilled": size(&r["spilled_bytes"]),
            "peak_rss": size(&r["peak_rss_bytes"]),
        });
    }
    json!({
        "name": name,
        "summary": summary,
        "class": class_of(verdict),
        "report": report.cloned().unwrap_or(Value::Null),
        "bars": bars,
        "groups": groups,
        "elapsed_text": elapsed,
        "sizes": sizes,
    })
}

fn render(ctx: Value) -> Result<String> {
    let mut env = minijinja::Environment::new();
    let failed = |e: minijinja::Error| ReconError::Internal(format!("HTML report: {e}"));
    env.add_template("report.html", TEMPLATE).map_err(failed)?;
    env.get_template("report.html")
        .and_then(|t| t.render(ctx))
        .map_err(failed)
}

/// The HTML page of one diff.
pub fn diff_html(report: &Report) -> Result<String> {
    let value = serde_json::to_value(report)
        .map_err(|e| ReconError::Internal(format!("HTML report: {e}")))?;
    let verdict = report.verdict_kind();
    let title = format!(
        "recon: {} vs {}",
        report.inputs.source.path, report.inputs.target.path
    );
    render(json!({
        "title": title,
        "batch": Value::Null,
        "sections": [section("", verdict, &report.verdict_line(), Some(&value))],
        "version": env!("CARGO_PKG_VERSION"),
    }))
}

/// The HTML page of a fingerprint comparison (`recon diff --quick`), from
/// its JSON (report sits below modes, so it takes the serialized form).
pub fn quick_html(comparison: &Value, summary: &str) -> Result<String> {
    let text = |k: &str| comparison[k].as_str().unwrap_or("").to_string();
    let verdict = if comparison["fingerprints_match"] == Value::Bool(true) {
        Verdict::Pass
    } else {
        Verdict::Fail
    };
    render(json!({
        "title": format!("recon --quick: {} vs {}", text("source"), text("target")),
        "batch": Value::Null,
        "sections": [section("", verdict, summary, Some(comparison))],
        "version": env!("CARGO_PKG_VERSION"),
    }))
}

/// The HTML page of a batch: a summary table linking to each pair.
pub fn batch_html(outcomes: &[PairOutcome]) -> Result<String> {
    let batch: Vec<Value> = outcomes
        .iter()
        .map(|o| {
            json!({
                "name": o.name,
                "verdict": o.verdict,
                "class": class_of(o.verdict),
                "source_rows": o.source_rows,
                "target_rows": o.target_rows,
                "unmatched": o.unmatched,
                "seconds_text": format!("{:.2}", o.seconds),
            })
        })
        .collect();
    let sections: Vec<Value> = outcomes
        .iter()
        .map(|o| section(&o.name, o.verdict, &o.summary, o.report.as_ref()))
        .collect();
    render(json!({
        "title": format!("recon batch: {} pairs", outcomes.len()),
        "batch": batch,
        "sections": sections,
        "version": env!("CARGO_PKG_VERSION"),
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn verdicts_map_to_their_styles_and_bars_scale_to_the_longest() {
        assert_eq!(class_of(Verdict::Pass), "pass");
        assert_eq!(class_of(Verdict::PassWithDrift), "drift");
        assert_eq!(class_of(Verdict::Fail), "fail");
        assert_eq!(class_of(Verdict::Error), "fail");
        assert_eq!(width(0, 10), 0);
        assert_eq!(width(10, 10), BAR as u64);
        // A count far below the longest still shows.
        assert_eq!(width(1, 1_000_000), 1);
    }

    #[test]
    fn a_quick_page_escapes_what_the_tables_hold() {
        let page = quick_html(
            &serde_json::json!({
                "source": "<s>.csv",
                "target": "t.csv",
                "fingerprints_match": false,
                "total": {"source_rows": 3, "target_rows": 4, "columns_differing": ["<b>"]},
                "groups_differing": [],
            }),
            "fingerprints differ",
        )
        .unwrap();
        assert!(page.contains("fingerprints differ"));
        assert!(page.contains("3 vs 4 rows"));
        assert!(!page.contains("<s>.csv"), "unescaped table name");
        assert!(!page.contains("<b>"), "unescaped column name");
    }
}
