//! A batch's results: the summary table, the batch JSON and JUnit XML.

use serde::Serialize;

/// Version of the batch JSON (`--report`).
pub const BATCH_REPORT_VERSION: u32 = 1;

/// How one pair of a batch ended.
#[derive(Debug, Clone, Serialize)]
pub struct PairOutcome {
    pub name: String,
    /// `diff` or `quick`.
    pub mode: &'static str,
    /// `pass`, `pass_with_drift`, `fail`, `error` or `skipped` (after
    /// `--fail-fast` stopped the batch).
    pub verdict: &'static str,
    pub seconds: f64,
    pub source_rows: Option<u64>,
    pub target_rows: Option<u64>,
    pub unmatched: Option<u64>,
    /// The verdict in words (the failure message in JUnit).
    pub summary: String,
    /// The pair's text summary (JUnit system-out).
    #[serde(skip)]
    pub text: String,
    /// The pair's full report (a diff report or a fingerprint comparison).
    pub report: Option<serde_json::Value>,
}

/// The batch JSON.
#[derive(Debug, Clone, Serialize)]
pub struct BatchReport<'a> {
    pub recon_batch_version: u32,
    pub pairs: &'a [PairOutcome],
}

/// The batch's exit code: 2 if any pair errored, else 1 if any failed, else 0.
pub fn exit_code(outcomes: &[PairOutcome]) -> u8 {
    if outcomes.iter().any(|o| o.verdict == "error") {
        2
    } else if outcomes.iter().any(|o| o.verdict == "fail") {
        1
    } else {
        0
    }
}

/// The summary table for people.
pub fn summary_table(outcomes: &[PairOutcome]) -> String {
    let width = outcomes
        .iter()
        .map(|o| o.name.len())
        .max()
        .unwrap_or(4)
        .max(4);
    let num = |v: Option<u64>| v.map_or("-".to_string(), |n| n.to_string());
    let mut out = format!(
        "{:<width$}  {:<15}  {:>12}  {:>12}  {:>10}  {:>8}\n",
        "pair", "verdict", "source_rows", "target_rows", "unmatched", "seconds"
    );
    for o in outcomes {
        out.push_str(&format!(
            "{:<width$}  {:<15}  {:>12}  {:>12}  {:>10}  {:>8.2}\n",
            o.name,
            o.verdict,
            num(o.source_rows),
            num(o.target_rows),
            num(o.unmatched),
            o.seconds
        ));
    }
    for o in outcomes.iter().filter(|o| o.verdict != "pass") {
        out.push_str(&format!("\n{}: {}\n", o.name, o.summary));
    }
    out
}

/// JUnit XML: one test case per pair; drift beyond the thresholds is a
/// failure whose message is the verdict line and whose system-out is the
/// pair's summary (samples included); an error is an error.
pub fn junit(outcomes: &[PairOutcome]) -> Result<String, String> {
    use quick_junit::{NonSuccessKind, Report, TestCase, TestCaseStatus, TestSuite};
    let mut suite = TestSuite::new("recon batch");
    for o in outcomes {
        let status = match o.verdict {
            "pass" | "pass_with_drift" => TestCaseStatus::success(),
            "skipped" => {
                let mut s = TestCaseStatus::skipped();
                s.set_message(o.summary.clone());
                s
            }
            kind => {
                let mut s = TestCaseStatus::non_success(if kind == "error" {
                    NonSuccessKind::Error
                } else {
                    NonSuccessKind::Failure
                });
                s.set_message(o.summary.clone());
                s
            }
        };
        let mut case = TestCase::new(o.name.clone(), status);
        case.set_classname(format!("recon.{}", o.mode));
        case.set_time(std::time::Duration::from_secs_f64(o.seconds.max(0.0)));
        if !o.text.is_empty() {
            case.set_system_out(o.text.clone());
        }
        suite.add_test_case(case);
    }
    let mut report = Report::new("recon");
    report.add_test_suite(suite);
    report.to_string().map_err(|e| e.to_string())
}
