//! Batch runs and thresholds: the shipped example config, bad config files,
//! thresholds at their boundaries, JUnit output and mixed exit codes.

use crate::common;
use crate::junit_schema;

use std::path::Path;

use common::*;
use serde_json::Value;

#[test]
fn the_shipped_nightly_batch_runs_every_pair_and_writes_junit() {
    let dir = tempfile::tempdir().unwrap();
    let (xml, json) = (dir.path().join("r.xml"), dir.path().join("b.json"));
    let run = recon(["batch"])
        .arg(fixture("batch/nightly.toml"))
        .arg("--junit")
        .arg(&xml)
        .report_file(&json)
        .exits(1);
    run.stdout_has("orders_keyed           pass_with_drift")
        .stdout_has("decimal_scales         pass ")
        .stdout_has("demo: DRIFT: 1 source-only and 1 target-only rows");
    let report = run.report();
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
            format!("[[pair]]\nname = \"a\"\nsource = \"{demo}\"\ntarget = \"{demo}\"\n[pair.run]\nmemory_limit = \"lots\"\n"),
            "pair \"a\": ",
        ),
        (
            format!("[[pair]]\nname = \"a\"\nsource = \"{demo}\"\ntarget = \"{demo}\"\n[pair.input]\ndelimiter = \"ab\"\n"),
            "pair \"a\": ",
        ),
        (
            format!("[[pair]]\nname = \"a\"\nsource = \"{demo}\"\ntarget = \"{demo}\"\n[[pair]]\nname = \"a\"\nsource = \"{demo}\"\ntarget = \"{demo}\"\n"),
            "pair name \"a\" is used twice",
        ),
        ("[defaults.run]\nthreads = 1\n".to_string(), "no [[pair]] to run"),
    ] {
        let f = write(dir.path(), "b.toml", &text);
        recon(["batch"]).arg(&f).fails_with(msg).one_line_error();
    }
}

/// A batch whose input is missing at run time used to exit 2 before any
/// pair ran, writing no JUnit and no JSON: a build server then showed "no
/// test results" instead of one red test case.
#[test]
fn a_missing_input_is_an_error_of_its_pair_with_junit_and_json() {
    let dir = tempfile::tempdir().unwrap();
    let text = format!(
        "[[pair]]\nname = \"gone\"\nsource = \"{}\"\ntarget = \"nope.parquet\"\n\
         [[pair]]\nname = \"no_rules\"\nsource = \"{s}\"\ntarget = \"{s}\"\nrules_file = \"missing.toml\"\n\
         [[pair]]\nname = \"fine\"\nsource = \"{s}\"\ntarget = \"{s}\"\n",
        fixture("demo/source.parquet").display(),
        s = fixture("decimal/source.parquet").display(),
    );
    let f = write(dir.path(), "b.toml", &text);
    let (code, xml, pairs) = junit_of(&f, &[]);
    assert_eq!(code, 2);
    let verdicts: Vec<(&str, &str)> = pairs
        .iter()
        .map(|p| (p["name"].as_str().unwrap(), p["verdict"].as_str().unwrap()))
        .collect();
    assert_eq!(
        verdicts,
        [("gone", "error"), ("no_rules", "error"), ("fine", "pass")]
    );
    let summary = pairs[0]["summary"].as_str().unwrap();
    assert!(summary.contains("nope.parquet"), "{summary}");
    assert!(pairs[1]["summary"]
        .as_str()
        .unwrap()
        .contains("missing.toml"));
    let root = junit_schema::parse(&xml).unwrap();
    assert_eq!(
        junit_schema().validate(&root),
        Vec::<String>::new(),
        "{xml}"
    );
    let cases = root.all("testsuite")[0].all("testcase");
    let kinds: Vec<(Option<&str>, Vec<String>)> = cases
        .iter()
        .map(|c| {
            (
                c.attr("name"),
                c.children.iter().map(|e| e.name.clone()).collect(),
            )
        })
        .collect();
    assert_eq!(kinds[0].0, Some("gone"));
    assert!(kinds[0].1.contains(&"error".to_string()), "{xml}");
    assert!(kinds[1].1.contains(&"error".to_string()), "{xml}");
    assert!(
        !kinds[2].1.iter().any(|k| k == "error" || k == "failure"),
        "{xml}"
    );
    assert!(xml.contains("nope.parquet"), "{xml}");
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
    recon(["batch"])
        .arg(&f)
        .exits(2)
        .stdout_has("broken  error")
        .stdout_has("fine    pass");
    recon(["batch"])
        .arg(&f)
        .arg("--fail-fast")
        .exits(2)
        .stdout_has("fine    skipped");
    // --only picks pairs by glob.
    recon(["batch"])
        .arg(&f)
        .args(["--only", "fi*"])
        .exits(0)
        .stdout_lacks("broken");
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
        Run::diff(&s, &t).args(&args).arg("-q").exits(code);
    }
    let out = Run::diff(&s, &t)
        .args(["--max-unmatched-rows", "1"])
        .json()
        .run();
    let r = out.report();
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
        Run::diff(&ks, &kt)
            .args([
                "--key",
                "order_id,line_no",
                "--max-unmatched-rows",
                "100",
                "--max-changed",
                limit,
                "-q",
            ])
            .exits(code);
    }
    Run::diff(&s, &t)
        .args(["--max-unmatched-ratio", "2"])
        .fails_with("between 0 and 1");
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
    Run::diff(&s, &t)
        .arg("--html")
        .arg(&page)
        .arg("-q")
        .exits(1);
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
    recon(["batch"])
        .arg(fixture("batch/nightly.toml"))
        .arg("--html")
        .arg(&batch)
        .arg("-q")
        .exits(1);
    let html = std::fs::read_to_string(&batch).unwrap();
    assert_eq!(html.matches("<section id=\"pair-").count(), 12);
    assert!(html.contains("<a href=\"#pair-3\">orders_keyed</a>"));
}

#[test]
fn jobs_run_pairs_at_once_within_a_split_memory_limit() {
    let dir = tempfile::tempdir().unwrap();
    let run = |jobs: &str| {
        let json = dir.path().join(format!("b{jobs}.json"));
        let run = recon(["batch"])
            .arg(fixture("batch/nightly.toml"))
            .args(["--jobs", jobs, "-q"])
            .report_file(&json)
            .exits(1);
        run.report()["pairs"].as_array().unwrap().clone()
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

/// A batch file of `pairs` (name, source, target, extra TOML lines) in `dir`.
fn batch_file(dir: &Path, pairs: &[(&str, &Path, &Path, &str)]) -> std::path::PathBuf {
    let mut text = String::new();
    for (name, s, t, extra) in pairs {
        text.push_str(&format!(
            "[[pair]]\nname = \"{name}\"\nsource = \"{}\"\ntarget = \"{}\"\n{extra}",
            s.display(),
            t.display()
        ));
    }
    write(dir, "b.toml", &text)
}

/// A FIFO `slow.csv` in `dir` whose writer holds the reader for `hold`
/// before writing a small (k, n) CSV, and the Parquet table it matches: a
/// pair that is still running (in preflight, spooling the pipe) for as long
/// as the test needs. Join the writer only after checking recon's output: it
/// blocks until a reader opens the pipe.
fn slow_pair(
    dir: &Path,
    hold: std::time::Duration,
) -> (
    std::path::PathBuf,
    std::path::PathBuf,
    std::thread::JoinHandle<()>,
) {
    use std::io::Write;
    let fifo = dir.join("slow.csv");
    let made = std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap();
    assert!(made.success());
    let twin = dir.join("slow_twin.parquet");
    write_parquet(
        &twin,
        &kv_batch(&[(Some("a"), Some(1)), (Some("b"), Some(2))]),
        10,
    );
    let path = fifo.clone();
    let writer = std::thread::spawn(move || {
        // Opening blocks until recon opens the pipe to read it.
        let mut w = std::fs::OpenOptions::new().write(true).open(&path).unwrap();
        std::thread::sleep(hold);
        w.write_all(b"k,n\na,1\nb,2\n").unwrap();
    });
    (fifo, twin, writer)
}

/// What indicatif writes to redraw a line: erase it.
#[cfg(target_os = "linux")]
const BAR_REDRAW: &str = "\x1b[2K";

fn has_bar_codes(text: &str) -> bool {
    text.contains('\r') || text.contains('\x1b')
}

#[test]
fn progress_is_off_without_a_terminal_and_always_gives_plain_lines() {
    // Under the test harness stderr is a pipe: `auto` prints nothing.
    let quiet_runs: [&[&str]; 3] = [
        &[],
        &["--progress", "never"],
        &["--progress", "always", "-q"],
    ];
    for args in quiet_runs {
        let run = recon(["batch"])
            .arg(fixture("batch/nightly.toml"))
            .args(["--jobs", "3"])
            .args(args)
            .exits(1);
        assert_eq!(run.stderr, "");
    }
    // `always` in a log: one plain line per finished pair, never a bar.
    let out = recon(["batch"])
        .arg(fixture("batch/nightly.toml"))
        .args(["--jobs", "3", "--progress", "always"])
        .exits(1);
    let err = out.stderr;
    assert!(!has_bar_codes(&err), "bar codes in a log: {err:?}");
    assert_eq!(err.lines().count(), 12, "{err}");
    for n in 1..=12 {
        assert!(err.contains(&format!("recon: [{n}] ")), "{err}");
    }
    assert!(err.contains("orders_keyed: pass_with_drift ("), "{err}");
    assert!(err.contains("demo: fail ("), "{err}");
}

#[test]
fn always_in_a_log_names_each_running_pair_every_two_seconds() {
    let dir = tempfile::tempdir().unwrap();
    let (fifo, twin, writer) = slow_pair(dir.path(), std::time::Duration::from_millis(4500));
    let f = batch_file(
        dir.path(),
        &[
            ("slow", &fifo, &twin, ""),
            (
                "demo",
                &fixture("demo/source.parquet"),
                &fixture("demo/target.parquet"),
                "",
            ),
        ],
    );
    let out = recon(["batch"])
        .arg(&f)
        .args(["--jobs", "2", "--progress", "always"])
        .exits(1);
    let err = out.stderr;
    assert!(!has_bar_codes(&err), "bar codes in a log: {err:?}");
    let lines: Vec<&str> = err.lines().collect();
    // demo finishes at once; slow is reported while it waits on its pipe,
    // at 2 s and 4 s, then finishes.
    assert!(lines[0].starts_with("recon: [1] demo: fail ("), "{err}");
    let running: Vec<&&str> = lines
        .iter()
        .filter(|l| l.ends_with("s slow: preflight"))
        .collect();
    assert!(running.len() >= 2, "{err}");
    assert!(
        running[0].starts_with("recon: 2s ") || running[0].starts_with("recon: 1s "),
        "{err}"
    );
    assert!(
        lines.last().unwrap().starts_with("recon: [2] slow: pass ("),
        "{err}"
    );
    assert!(!err.contains("demo: preflight"), "{err}");
    writer.join().unwrap();
}

/// Runs `recon ARGS` under a pseudo-terminal 150 columns wide with util-linux
/// `script`, and returns what the terminal received (stdout and stderr).
#[cfg(target_os = "linux")]
fn on_a_terminal(args: &[&str]) -> (Option<i32>, String) {
    on_a_terminal_of("xterm", args)
}

/// [`on_a_terminal`] with `TERM` set to `term`.
#[cfg(target_os = "linux")]
fn on_a_terminal_of(term: &str, args: &[&str]) -> (Option<i32>, String) {
    // By hand, not with Run: recon runs under `script`'s pseudo-terminal.
    let quote = |s: &str| format!("'{}'", s.replace('\'', r"'\''"));
    let bin = assert_cmd::cargo::cargo_bin("recon");
    let mut cmd = format!(
        "stty cols 150 rows 40; exec {}",
        quote(bin.to_str().unwrap())
    );
    for a in args {
        cmd.push(' ');
        cmd.push_str(&quote(a));
    }
    let out = std::process::Command::new("script")
        .args(["-qec", &cmd, "/dev/null"])
        .env_remove("NO_COLOR")
        .env("TERM", term)
        .stdin(std::process::Stdio::null())
        .output()
        .expect("util-linux `script` (Debian: bsdutils) runs recon under a pseudo-terminal");
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
    )
}

#[test]
#[cfg(target_os = "linux")]
fn on_a_terminal_each_running_pair_has_a_bar_above_the_overall_bar() {
    let dir = tempfile::tempdir().unwrap();
    let (fifo, twin, writer) = slow_pair(dir.path(), std::time::Duration::from_millis(1500));
    let broken = fixture("bad/garbage.parquet");
    let f = batch_file(
        dir.path(),
        &[
            (
                "demo",
                &fixture("demo/source.parquet"),
                &fixture("demo/target.parquet"),
                "",
            ),
            ("slow_extract", &fifo, &twin, ""),
            ("broken", &broken, &broken, ""),
            (
                "decimal_scales",
                &fixture("decimal/source.parquet"),
                &fixture("decimal/target.parquet"),
                "",
            ),
        ],
    );
    let (code, screen) = on_a_terminal(&["batch", f.to_str().unwrap(), "--jobs", "2"]);
    assert_eq!(code, Some(2), "{screen}");
    // The bars are drawn and redrawn in place (the terminal's own line
    // ends are \r\n, so a carriage return alone proves nothing).
    assert!(screen.contains(BAR_REDRAW), "{screen:?}");
    // The running pair's bar: its name, phase and rate.
    let running =
        regex::Regex::new(r"slow_extract +preflight +\[ *\] +0% 0/1 0 rows/s ETA").unwrap();
    assert!(running.is_match(&screen), "{screen:?}");
    // The overall bar, before and after pairs finished, with the counts.
    assert!(screen.contains("/4 pairs ["), "{screen:?}");
    assert!(
        screen.contains("1 pass, 0 pass_with_drift, 1 fail, 1 error"),
        "{screen:?}"
    );
    // Finished pairs turn into their one-line results, then the summary.
    for name in [
        "demo: fail",
        "broken: error",
        "decimal_scales: pass",
        "slow_extract: pass",
    ] {
        assert!(
            screen.contains(&format!("] {name} (")),
            "{name}: {screen:?}"
        );
    }
    assert!(
        screen.contains("recon: [4] slow_extract: pass ("),
        "{screen:?}"
    );
    writer.join().unwrap();
    assert!(
        regex::Regex::new(r"pair +verdict +source_rows")
            .unwrap()
            .is_match(&screen),
        "{screen:?}"
    );
    // `never` and `--quiet` draw nothing, on a terminal too.
    let (code, screen) = on_a_terminal(&[
        "batch",
        fixture("batch/nightly.toml").to_str().unwrap(),
        "--progress",
        "never",
    ]);
    assert_eq!(code, Some(1), "{screen}");
    assert!(
        !screen.contains('\x1b') && !screen.contains("recon: ["),
        "{screen:?}"
    );
    assert!(
        screen.contains("orders_keyed           pass_with_drift"),
        "{screen:?}"
    );
    let (code, screen) = on_a_terminal(&[
        "batch",
        fixture("batch/nightly.toml").to_str().unwrap(),
        "-q",
    ]);
    assert_eq!(code, Some(1), "{screen}");
    assert_eq!(screen, "");
    // A dumb terminal cannot redraw a line: it is treated as a log.
    let nightly = fixture("batch/nightly.toml");
    let (code, screen) = on_a_terminal_of("dumb", &["batch", nightly.to_str().unwrap()]);
    assert_eq!(code, Some(1), "{screen}");
    assert!(
        !screen.contains('\x1b') && !screen.contains("recon: ["),
        "{screen:?}"
    );
    let (code, screen) = on_a_terminal_of(
        "dumb",
        &["batch", nightly.to_str().unwrap(), "--progress", "always"],
    );
    assert_eq!(code, Some(1), "{screen}");
    assert!(!screen.contains('\x1b'), "{screen:?}");
    assert_eq!(screen.matches("recon: [").count(), 12, "{screen:?}");
}

fn junit_schema() -> junit_schema::Schema {
    junit_schema::Schema::load(&fixture("schemas/junit-10.xsd"))
}

/// A batch of every outcome: pass, pass with drift, fail (drift), error,
/// and a quick pair.
fn mixed_batch(dir: &Path) -> std::path::PathBuf {
    let broken = fixture("bad/garbage.parquet");
    let text = format!(
        "[defaults.run]\nsample = 5\n[defaults.thresholds]\nmax_unmatched_rows = 0\n\
         [[pair]]\nname = \"decimal_scales\"\nsource = \"{}\"\ntarget = \"{}\"\n\
         [[pair]]\nname = \"broken\"\nsource = \"{b}\"\ntarget = \"{b}\"\n\
         [[pair]]\nname = \"demo\"\nsource = \"{}\"\ntarget = \"{}\"\n\
         [[pair]]\nname = \"orders_keyed\"\nsource = \"{}\"\ntarget = \"{}\"\n\
         [pair.align]\nkey = [\"order_id\", \"line_no\"]\n[pair.align.tolerance]\namount = \"0.01\"\n\
         [pair.thresholds]\nmax_unmatched_rows = 20\nmax_changed = 5\n\
         [[pair]]\nname = \"lake_quick\"\nsource = \"{}\"\ntarget = \"{}\"\nmode = \"quick\"\n",
        fixture("decimal/source.parquet").display(),
        fixture("decimal/target.parquet").display(),
        fixture("demo/source.parquet").display(),
        fixture("demo/target.parquet").display(),
        fixture("keyed/orders_source.parquet").display(),
        fixture("keyed/orders_target.parquet").display(),
        fixture("demo/extract.csv.gz").display(),
        fixture("lake/orders").display(),
        b = broken.display(),
    );
    write(dir, "mixed.toml", &text)
}

/// Runs a batch with `--junit` and `--report`: (exit code, the XML, the pairs of the JSON).
fn junit_of(file: &Path, extra: &[&str]) -> (i32, String, Vec<Value>) {
    let dir = tempfile::tempdir().unwrap();
    let (xml, json) = (dir.path().join("r.xml"), dir.path().join("b.json"));
    let out = recon(["batch"])
        .arg(file)
        .args(extra)
        .arg("--junit")
        .arg(&xml)
        .report_file(&json)
        .arg("-q")
        .run();
    (
        out.code,
        std::fs::read_to_string(&xml).unwrap(),
        out.report()["pairs"].as_array().unwrap().clone(),
    )
}

/// Beyond the schema, which types every count and time as a string: the
/// counts are integers that match the test cases, and each case's time is
/// an xs:decimal, as the Ant schema (windyroad's JUnit.xsd) types them and
/// as build servers read them.
fn counts_and_times_are_numbers(root: &junit_schema::Element) -> Vec<String> {
    let mut problems = Vec::new();
    let decimal = regex::Regex::new(r"^[+-]?([0-9]+(\.[0-9]*)?|\.[0-9]+)$").unwrap();
    let int = |e: &junit_schema::Element, a: &str, problems: &mut Vec<String>| {
        let v = e.attr(a).unwrap_or("");
        v.parse::<u64>().unwrap_or_else(|_| {
            problems.push(format!("<{}> {a}={v:?} is not a count", e.name));
            u64::MAX
        })
    };
    let cases: Vec<&junit_schema::Element> = root
        .all("testsuite")
        .into_iter()
        .flat_map(|s| s.all("testcase"))
        .collect();
    let with = |cases: &[&junit_schema::Element], child: &str| {
        cases.iter().filter(|c| c.child(child).is_some()).count() as u64
    };
    for (a, want) in [
        ("tests", cases.len() as u64),
        ("failures", with(&cases, "failure")),
        ("errors", with(&cases, "error")),
    ] {
        let got = int(root, a, &mut problems);
        if got != want {
            problems.push(format!("<testsuites> {a}={got}, but {want} cases"));
        }
    }
    for suite in root.all("testsuite") {
        let cases = suite.all("testcase");
        for (a, want) in [
            ("tests", cases.len() as u64),
            ("failures", with(&cases, "failure")),
            ("errors", with(&cases, "error")),
            ("skipped", with(&cases, "skipped")),
        ] {
            let got = int(suite, a, &mut problems);
            if got != want {
                problems.push(format!("<testsuite> {a}={got}, but {want} cases"));
            }
        }
        // recon times each case; the suite's time is optional in both schemas.
        for (e, required) in std::iter::once((suite, false)).chain(cases.iter().map(|c| (*c, true)))
        {
            match e.attr("time") {
                Some(t) if decimal.is_match(t) => {}
                None if !required => {}
                t => problems.push(format!("<{}> time={t:?} is not a decimal", e.name)),
            }
        }
    }
    problems
}

#[test]
fn junit_of_a_mixed_batch_is_valid_against_the_junit_schema() {
    let dir = tempfile::tempdir().unwrap();
    let file = mixed_batch(dir.path());
    let (code, xml, pairs) = junit_of(&file, &["--jobs", "2"]);
    assert_eq!(code, 2);
    let schema = junit_schema();
    let root = junit_schema::parse(&xml).unwrap();
    assert_eq!(root.name, "testsuites");
    assert_eq!(schema.validate(&root), Vec::<String>::new(), "{xml}");
    assert_eq!(
        counts_and_times_are_numbers(&root),
        Vec::<String>::new(),
        "{xml}"
    );
    let suite = &root.all("testsuite")[0];
    let case = |name: &str| {
        *suite
            .all("testcase")
            .iter()
            .find(|c| c.attr("name") == Some(name))
            .unwrap_or_else(|| panic!("no test case {name}: {xml}"))
    };
    let pair = |name: &str| pairs.iter().find(|p| p["name"] == name).unwrap();
    let kinds = |c: &junit_schema::Element| {
        c.children
            .iter()
            .map(|e| e.name.clone())
            .collect::<Vec<_>>()
    };
    // A drift beyond the thresholds: a failure whose message is the
    // verdict line, and whose system-out is the pair's summary with its
    // sample rows (the very text `recon diff` prints for the pair).
    let demo = case("demo");
    assert_eq!(kinds(demo), ["failure", "system-out"]);
    let failure = demo.child("failure").unwrap();
    let summary = pair("demo")["summary"].as_str().unwrap();
    assert!(summary.starts_with("DRIFT: 1 source-only and 1 target-only rows"));
    assert_eq!(failure.attr("message"), Some(summary));
    let out = &demo.child("system-out").unwrap().text;
    let diff = Run::diff(
        fixture("demo/source.parquet"),
        fixture("demo/target.parquet"),
    )
    .args(["--sample", "5", "--max-unmatched-rows", "0"])
    .run();
    assert_eq!(out, &diff.stdout);
    assert!(out.contains("region=\"south\"  amount=200"), "{out}");
    assert!(out.contains("region=\"south\"  amount=201"), "{out}");
    // An error is an <error> with the one-line message, and nothing else.
    let broken = case("broken");
    assert_eq!(kinds(broken), ["error"]);
    let message = broken.child("error").unwrap().attr("message").unwrap();
    assert_eq!(message, pair("broken")["summary"].as_str().unwrap());
    assert!(message.starts_with("ERROR: ") && message.contains("garbage.parquet"));
    // Passes, with drift or without, are successes that keep their summary.
    for name in ["decimal_scales", "orders_keyed", "lake_quick"] {
        assert_eq!(kinds(case(name)), ["system-out"], "{name}");
    }
    assert_eq!(pair("orders_keyed")["verdict"], "pass_with_drift");
    assert_eq!(case("lake_quick").attr("classname"), Some("recon.quick"));
    // --fail-fast: the pairs not run are <skipped>, still valid.
    let (code, xml, _) = junit_of(&file, &["--fail-fast"]);
    assert_eq!(code, 2);
    let root = junit_schema::parse(&xml).unwrap();
    assert_eq!(schema.validate(&root), Vec::<String>::new(), "{xml}");
    assert_eq!(
        counts_and_times_are_numbers(&root),
        Vec::<String>::new(),
        "{xml}"
    );
    let skipped: Vec<_> = root.all("testsuite")[0]
        .all("testcase")
        .into_iter()
        .filter_map(|c| c.child("skipped"))
        .collect();
    assert_eq!(skipped.len(), 3, "{xml}");
    assert_eq!(
        skipped[0].attr("message"),
        Some("not run: --fail-fast stopped the batch")
    );
}

#[test]
fn the_junit_schema_check_rejects_what_the_schema_forbids() {
    let dir = tempfile::tempdir().unwrap();
    let (_, xml, _) = junit_of(&mixed_batch(dir.path()), &[]);
    let schema = junit_schema();
    let problems = |doc: &str| schema.validate(&junit_schema::parse(doc).unwrap());
    assert!(problems(&xml).is_empty());
    // Each edit breaks one rule of junit-10.xsd, and is named.
    let first_case = xml.find("<testcase ").unwrap();
    let with = |at: usize, insert: &str| format!("{}{insert}{}", &xml[..at], &xml[at..]);
    let suites_end = xml.find("<testsuite ").unwrap();
    for (doc, expected) in [
        (
            xml.replacen("<testcase name=\"decimal_scales\"", "<testcase", 1),
            "required attribute name is missing",
        ),
        (
            xml.replacen("<testcase ", "<testcase colour=\"red\" ", 1),
            "attribute colour is not declared",
        ),
        (with(suites_end, "stray text"), "in element-only content"),
        (
            xml.replacen("<testsuite ", "<testsuite time=\"1.2.3\" ", 1),
            "does not match SUREFIRE_TIME",
        ),
        (
            xml.replacen("<error ", "<error><testcase name=\"x\"/></error><error ", 1),
            "do not fit the content model",
        ),
        (with(first_case, "<testrun/>"), "<testrun> is not declared"),
        (
            with(suites_end, "<testcase name=\"loose\"/>"),
            "do not fit the content model",
        ),
        (
            xml.replacen("<system-out>", "<system-out kind=\"x\">", 1),
            "attribute kind not allowed",
        ),
    ] {
        let found = problems(&doc);
        assert!(
            found.iter().any(|p| p.contains(expected)),
            "expected {expected:?}, found {found:?}"
        );
    }
    // The time pattern allows what Surefire writes, thousands separators included.
    for time in ["0.012", "1,234.5", "12"] {
        let doc = xml.replacen("<testsuite ", &format!("<testsuite time=\"{time}\" "), 1);
        assert!(problems(&doc).is_empty(), "{time}");
    }
}

#[test]
fn batch_pairs_take_skip_rows_and_comment_from_their_input_tables() {
    let dir = tempfile::tempdir().unwrap();
    let fx = |n: &str| fixture(&format!("csv_preamble/{n}"));
    let (titled, plain) = (fx("customers_title.csv"), fx("customers.csv"));
    let (commented, orders) = (fx("orders_comments.csv"), fx("orders.csv"));
    let f = batch_file(
        dir.path(),
        &[
            (
                "titled",
                &titled,
                &plain,
                "[pair.input]\nsource_skip_rows = 1\n",
            ),
            ("commented", &commented, &orders, ""),
            (
                "unclear",
                &titled,
                &plain,
                "[pair.input]\ncomment = \"#\"\n",
            ),
        ],
    );
    // [defaults.input] reaches the pairs without an [pair.input] of their own.
    let mut text = std::fs::read_to_string(&f).unwrap();
    text.insert_str(0, "[defaults.input]\ncomment = \"#\"\n");
    std::fs::write(&f, text).unwrap();
    recon(["batch"])
        .arg(&f)
        .exits(2)
        .stdout_has("titled     pass")
        .stdout_has("commented  pass")
        .stdout_has("unclear    error")
        .stdout_has("pass --skip-rows 1");
    let bad = write(
        dir.path(),
        "bad.toml",
        &format!(
            "[[pair]]\nname = \"a\"\nsource = \"{}\"\ntarget = \"{}\"\n[pair.input]\nskip_row = 1\n",
            titled.display(),
            plain.display()
        ),
    );
    recon(["batch"])
        .arg(&bad)
        .fails_with("unknown key 'skip_row'")
        .stderr_has("did you mean 'skip_rows'?");
}
