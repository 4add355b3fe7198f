//! Batch runs and thresholds: the shipped example config, bad config files,
//! thresholds at their boundaries, JUnit output and mixed exit codes.

mod common;

use std::path::Path;

use assert_cmd::Command;
use common::*;
use predicates::prelude::*;
use serde_json::Value;

fn recon() -> Command {
    Command::cargo_bin("recon").unwrap()
}

#[test]
fn the_shipped_nightly_batch_runs_every_pair_and_writes_junit() {
    let dir = tempfile::tempdir().unwrap();
    let (xml, json) = (dir.path().join("r.xml"), dir.path().join("b.json"));
    recon()
        .arg("batch")
        .arg(fixture("batch/nightly.toml"))
        .arg("--junit")
        .arg(&xml)
        .arg("--report")
        .arg(&json)
        .assert()
        .code(1)
        .stdout(predicate::str::contains(
            "orders_keyed           pass_with_drift",
        ))
        .stdout(predicate::str::contains("decimal_scales         pass "))
        .stdout(predicate::str::contains(
            "demo: DRIFT: 1 source-only and 1 target-only rows",
        ));
    let report: Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    assert_eq!(report["recon_batch_version"], 1);
    let pairs = report["pairs"].as_array().unwrap();
    assert_eq!(pairs.len(), 12);
    let verdict = |name: &str| {
        pairs.iter().find(|p| p["name"] == name).unwrap()["verdict"]
            .as_str()
            .unwrap()
            .to_string()
    };
    assert_eq!(verdict("demo"), "fail");
    assert_eq!(verdict("extract_vs_lake_quick"), "pass");
    assert_eq!(verdict("extract_drift_vs_lake"), "pass_with_drift");
    assert_eq!(verdict("migration_rules"), "pass");
    let xml = std::fs::read_to_string(&xml).unwrap();
    assert!(xml.starts_with("<?xml"));
    assert_eq!(xml.matches("<testcase ").count(), 12);
    let failures = pairs.iter().filter(|p| p["verdict"] == "fail").count();
    assert_eq!(xml.matches("<failure ").count(), failures);
    assert!(xml.contains(&format!(
        "<testsuites name=\"recon\" tests=\"12\" failures=\"{failures}\" errors=\"0\">"
    )));
    assert!(xml.contains("region=&quot;south&quot;: amount 200 -&gt; 201"));
}

fn write(dir: &Path, name: &str, text: &str) -> std::path::PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, text).unwrap();
    p
}

#[test]
fn bad_batch_files_are_one_line_errors_naming_the_line_and_key() {
    let dir = tempfile::tempdir().unwrap();
    let demo = fixture("demo/source.parquet");
    let demo = demo.to_str().unwrap();
    for (text, msg) in [
        (
            format!("[[pair]]\nname = \"a\"\nsource = \"{demo}\"\ntarget = \"{demo}\"\ncolour = 1\n"),
            "line 5: unknown key 'colour' in [[pair]] (expected one of: name, source,",
        ),
        (
            format!("[defaults.run]\nthreads = \"two\"\n[[pair]]\nname = \"a\"\nsource = \"{demo}\"\ntarget = \"{demo}\"\n"),
            "line 2, key 'defaults.run.threads': invalid type",
        ),
        (
            format!("[[pair]]\nname = \"a\"\nsource = \"{demo}\"\ntarget = \"nope.parquet\"\n"),
            "nope.parquet does not exist",
        ),
        (
            format!("[[pair]]\nname = \"a\"\nsource = \"{demo}\"\ntarget = \"{demo}\"\n[[pair]]\nname = \"a\"\nsource = \"{demo}\"\ntarget = \"{demo}\"\n"),
            "pair name \"a\" is used twice",
        ),
        ("[defaults.run]\nthreads = 1\n".to_string(), "no [[pair]] to run"),
    ] {
        let f = write(dir.path(), "b.toml", &text);
        recon()
            .arg("batch")
            .arg(&f)
            .assert()
            .code(2)
            .stderr(predicate::str::contains(msg))
            .stderr(predicate::function(|e: &str| e.lines().count() == 1));
    }
}

#[test]
fn an_erroring_pair_does_not_stop_the_others_unless_fail_fast() {
    let dir = tempfile::tempdir().unwrap();
    let (good, bad) = (
        fixture("decimal/source.parquet"),
        fixture("bad/garbage.parquet"),
    );
    let text = format!(
        "[[pair]]\nname = \"broken\"\nsource = \"{}\"\ntarget = \"{}\"\n[[pair]]\nname = \"fine\"\nsource = \"{}\"\ntarget = \"{}\"\n",
        bad.display(),
        good.display(),
        good.display(),
        fixture("decimal/target.parquet").display()
    );
    let f = write(dir.path(), "b.toml", &text);
    recon()
        .arg("batch")
        .arg(&f)
        .assert()
        .code(2)
        .stdout(predicate::str::contains("broken  error"))
        .stdout(predicate::str::contains("fine    pass"));
    recon()
        .arg("batch")
        .arg(&f)
        .arg("--fail-fast")
        .assert()
        .code(2)
        .stdout(predicate::str::contains("fine    skipped"));
    // --only picks pairs by glob.
    recon()
        .arg("batch")
        .arg(&f)
        .args(["--only", "fi*"])
        .assert()
        .code(0)
        .stdout(predicate::str::contains("broken").not());
}

#[test]
fn thresholds_hold_at_their_boundaries() {
    let (s, t) = (
        fixture("demo/source.parquet"),
        fixture("demo/target.parquet"),
    );
    // The demo has 2 unmatched rows out of 4.
    for (args, code) in [
        (vec!["--max-unmatched-rows", "2"], 0),
        (vec!["--max-unmatched-rows", "1"], 1),
        (vec!["--max-unmatched-ratio", "0.5"], 0),
        (vec!["--max-unmatched-ratio", "0.49"], 1),
        (
            vec!["--max-unmatched-rows", "5", "--max-unmatched-ratio", "0.1"],
            1,
        ),
    ] {
        recon()
            .arg("diff")
            .arg(&s)
            .arg(&t)
            .args(&args)
            .arg("-q")
            .assert()
            .code(code);
    }
    let out = recon()
        .arg("diff")
        .arg(&s)
        .arg(&t)
        .args(["--max-unmatched-rows", "1", "--json"])
        .output()
        .unwrap();
    let r: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(r["thresholds"]["verdict"], "fail");
    assert_eq!(
        r["thresholds"]["decided_by"],
        "max_unmatched_rows = 1 (found 2)"
    );
    // Keyed categories: 3 changed keys in the orders fixture.
    let (ks, kt) = (
        fixture("keyed/orders_source.parquet"),
        fixture("keyed/orders_target.parquet"),
    );
    for (limit, code) in [("3", 0), ("2", 1)] {
        recon()
            .arg("diff")
            .arg(&ks)
            .arg(&kt)
            .args([
                "--key",
                "order_id,line_no",
                "--max-unmatched-rows",
                "100",
                "--max-changed",
                limit,
                "-q",
            ])
            .assert()
            .code(code);
    }
    recon()
        .arg("diff")
        .arg(&s)
        .arg(&t)
        .args(["--max-unmatched-ratio", "2"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("between 0 and 1"));
}

#[test]
fn html_reports_are_self_contained_and_escape_values() {
    let dir = tempfile::tempdir().unwrap();
    let (s, t) = (dir.path().join("s.parquet"), dir.path().join("t.parquet"));
    write_parquet(
        &s,
        &kv_batch(&[(Some("<b>x</b>"), Some(1)), (Some("a"), Some(2))]),
        10,
    );
    write_parquet(
        &t,
        &kv_batch(&[(Some("<b>x</b>"), Some(9)), (Some("a"), Some(2))]),
        10,
    );
    let page = dir.path().join("r.html");
    recon()
        .arg("diff")
        .arg(&s)
        .arg(&t)
        .arg("--html")
        .arg(&page)
        .arg("-q")
        .assert()
        .code(1);
    let html = std::fs::read_to_string(&page).unwrap();
    assert!(html.starts_with("<!DOCTYPE html>"));
    for fetch in ["http://", "https://", "<script", "<link", "src="] {
        assert!(!html.contains(fetch), "the page fetches something: {fetch}");
    }
    assert!(html.contains("&lt;b&gt;x&lt;&#x2f;b&gt;") || html.contains("&lt;b&gt;x&lt;/b&gt;"));
    assert!(!html.contains("<b>x</b>"));
    assert!(html.contains("DRIFT: 1 source-only and 1 target-only rows"));
    assert!(html.contains("<svg"));
    // The batch page links each pair's section from the summary table.
    let batch = dir.path().join("b.html");
    recon()
        .arg("batch")
        .arg(fixture("batch/nightly.toml"))
        .arg("--html")
        .arg(&batch)
        .arg("-q")
        .assert()
        .code(1);
    let html = std::fs::read_to_string(&batch).unwrap();
    assert_eq!(html.matches("<section id=\"pair-").count(), 12);
    assert!(html.contains("<a href=\"#pair-3\">orders_keyed</a>"));
}

#[test]
fn jobs_run_pairs_at_once_within_a_split_memory_limit() {
    let dir = tempfile::tempdir().unwrap();
    let run = |jobs: &str| {
        let json = dir.path().join(format!("b{jobs}.json"));
        recon()
            .arg("batch")
            .arg(fixture("batch/nightly.toml"))
            .args(["--jobs", jobs, "-q", "--report"])
            .arg(&json)
            .assert()
            .code(1);
        let r: Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
        r["pairs"].as_array().unwrap().clone()
    };
    let (one, three) = (run("1"), run("3"));
    let verdicts = |v: &[Value]| {
        v.iter()
            .map(|p| (p["name"].to_string(), p["verdict"].to_string()))
            .collect::<Vec<_>>()
    };
    // Same verdicts, in file order.
    assert_eq!(verdicts(&one), verdicts(&three));
    // The example's 512MiB limit is split three ways.
    let demo = &three[0]["report"]["settings"]["memory_limit_bytes"];
    assert_eq!(demo.as_u64(), Some((512u64 << 20) / 3));
}
