//! End-to-end tests through the `recon` binary on the committed fixtures in
//! testdata/ (described in testdata/README.md) and on small generated tables.

use crate::common;

use std::path::Path;

use common::*;
use serde_json::Value;

/// Runs `recon diff --json` and returns (exit code, report).
fn diff_json(source: &Path, target: &Path, extra: &[&str]) -> (i32, Value) {
    let run = Run::diff(source, target).json().args(extra).run();
    (run.code, run.report().clone())
}

fn counts(r: &Value) -> (u64, u64, u64, u64) {
    (
        r["source_rows"].as_u64().unwrap(),
        r["target_rows"].as_u64().unwrap(),
        r["source_only_rows"].as_u64().unwrap(),
        r["target_only_rows"].as_u64().unwrap(),
    )
}

#[test]
fn demo_pair_finds_one_row_each_way() {
    Run::diff(
        fixture("demo/source.parquet"),
        fixture("demo/target.parquet"),
    )
    .exits(1)
    .stdout_has("source_only_row_count   1")
    .stdout_has("target_only_row_count   1")
    .stdout_has("exact_match             false")
    .stdout_has("region=\"south\"  amount=200")
    .stdout_has("region=\"south\"  amount=201");
    let (code, r) = diff_json(
        &fixture("demo/source.parquet"),
        &fixture("demo/target.parquet"),
        &[],
    );
    assert_eq!(code, 1);
    assert_eq!(counts(&r), (4, 4, 1, 1));
    assert_eq!(r["exact_match"], false);
    // south 200 exists in the target too, once: multiplicity drift, not absence.
    assert_eq!(r["multiplicity"]["source_only"]["extra_copy_rows"], 1);
    assert_eq!(r["multiplicity"]["target_only"]["absent_rows"], 1);
    let s = &r["samples"]["source_only"][0];
    assert_eq!(s["row"]["region"], "south");
    assert_eq!(s["source_count"], 2);
    assert_eq!(s["target_count"], 1);
}

#[test]
fn duplicate_only_defect_is_found() {
    let (code, r) = diff_json(
        &fixture("demo/dups_source.parquet"),
        &fixture("demo/dups_target.parquet"),
        &[],
    );
    assert_eq!(code, 1);
    assert_eq!(counts(&r), (3, 3, 1, 1));
    assert_eq!(r["multiplicity"]["source_only"]["extra_copy_rows"], 1);
    assert_eq!(r["multiplicity"]["target_only"]["extra_copy_rows"], 1);
    assert_eq!(r["samples"]["source_only"][0]["row"]["v"], "B");
    assert_eq!(r["samples"]["target_only"][0]["row"]["v"], "A");
}

#[test]
fn null_and_empty_string_are_different_values() {
    let (code, r) = diff_json(
        &fixture("null_vs_empty/source.parquet"),
        &fixture("null_vs_empty/target.parquet"),
        &[],
    );
    assert_eq!(code, 1);
    assert_eq!(counts(&r), (5, 5, 1, 1));
    assert_eq!(r["samples"]["source_only"][0]["row"]["s"], Value::Null);
    assert_eq!(r["samples"]["target_only"][0]["row"]["s"], "");
}

#[test]
fn separator_collisions_do_not_match() {
    let (code, r) = diff_json(
        &fixture("separator/source.parquet"),
        &fixture("separator/target.parquet"),
        &[],
    );
    assert_eq!(code, 1);
    assert_eq!(counts(&r), (2, 2, 2, 2));
}

#[test]
fn nan_equals_nan_and_negative_zero_equals_zero() {
    Run::diff(
        fixture("float_semantics/source.parquet"),
        fixture("float_semantics/target.parquet"),
    )
    .exits(0)
    .stdout_has("exact_match             true");
}

#[test]
fn reordered_rows_and_storage_differences_match() {
    // Different row order, row-group sizes, compression, dictionary/plain,
    // Utf8/LargeUtf8, Int32/Int64 and column order.
    let (code, r) = diff_json(
        &fixture("layout/source.parquet"),
        &fixture("layout/target.parquet"),
        &[],
    );
    assert_eq!(code, 0, "{r}");
    assert_eq!(counts(&r), (1000, 1000, 0, 0));
}

#[test]
fn directory_input_matches_single_file() {
    let (code, r) = diff_json(
        &fixture("layout/source.parquet"),
        &fixture("layout/target_dir"),
        &[],
    );
    assert_eq!(code, 0, "{r}");
    assert_eq!(r["inputs"]["target"]["files"], 2);
}

#[test]
fn decimals_compare_by_value_across_scales() {
    let (code, _) = diff_json(
        &fixture("decimal/source.parquet"),
        &fixture("decimal/target.parquet"),
        &[],
    );
    assert_eq!(code, 0);
}

#[test]
fn lists_keep_their_order() {
    let (code, r) = diff_json(
        &fixture("nested/source.parquet"),
        &fixture("nested/target.parquet"),
        &[],
    );
    assert_eq!(code, 1);
    assert_eq!(counts(&r), (4, 4, 1, 1));
}

#[test]
fn empty_tables() {
    let empty = fixture("empty/empty.parquet");
    let (code, r) = diff_json(&empty, &empty, &[]);
    assert_eq!(code, 0);
    assert_eq!(counts(&r), (0, 0, 0, 0));
    let (code, r) = diff_json(&empty, &fixture("demo/source.parquet"), &[]);
    assert_eq!(code, 1);
    assert_eq!(counts(&r), (0, 4, 0, 4));
}

fn assert_one_line_error(source: &Path, target: &Path, needle: &str) {
    let run = Run::diff(source, target).exits(2);
    let stderr = run.one_line_error();
    assert!(stderr.contains(needle), "{stderr} lacks {needle}");
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert!(run.stdout.is_empty());
}

#[test]
fn missing_file_is_a_clear_error() {
    assert_one_line_error(
        Path::new("no/such/file.parquet"),
        &fixture("demo/target.parquet"),
        "no/such/file.parquet",
    );
}

#[test]
fn corrupt_files_are_clear_errors() {
    for bad in [
        "bad/garbage.parquet",
        "bad/truncated.parquet",
        "bad/zero.parquet",
    ] {
        assert_one_line_error(&fixture(bad), &fixture("demo/target.parquet"), bad);
        assert_one_line_error(&fixture("demo/source.parquet"), &fixture(bad), bad);
    }
}

#[test]
fn schema_mismatch_fails_before_scanning() {
    // Tables that share no column name get one short message naming the
    // first columns of each side, not a hint per column.
    assert_one_line_error(
        &fixture("demo/source.parquet"),
        &fixture("demo/dups_target.parquet"),
        "these tables share no column names (source: 'region', 'amount'; target: 'v')",
    );
    assert_one_line_error(
        &fixture("demo/source.parquet"),
        &fixture("migration/spark.parquet"),
        "column 'region' is only in the source",
    );
    assert_one_line_error(
        &fixture("demo/source.parquet"),
        &fixture("decimal/source.parquet"),
        "column 'amount' is Int64 in source but Decimal128(10, 2) in target",
    );
}

#[test]
fn output_dir_holds_complete_evidence() {
    let tmp = tempfile::tempdir().unwrap();
    let src = tmp.path().join("s.parquet");
    let tgt = tmp.path().join("t.parquet");
    // a: 3 copies vs 1 -> 2 source-only occurrences; b: absent from source; c matches.
    write_parquet(
        &src,
        &kv_batch(&[
            (Some("a"), Some(1)),
            (Some("c"), None),
            (Some("a"), Some(1)),
            (Some("a"), Some(1)),
        ]),
        2,
    );
    write_parquet(
        &tgt,
        &kv_batch(&[
            (Some("b"), Some(2)),
            (Some("a"), Some(1)),
            (Some("c"), None),
        ]),
        2,
    );
    let out = tmp.path().join("out");
    let (code, r) = diff_json(&src, &tgt, &["--output", out.to_str().unwrap()]);
    assert_eq!(code, 1);
    assert_eq!(counts(&r), (4, 3, 2, 1));
    let so = read_parquet(&out.join("source_only.parquet"));
    let rows: usize = so.iter().map(|b| b.num_rows()).sum();
    assert_eq!(rows, 2, "one row per unmatched occurrence");
    assert_eq!(so[0].schema().field(0).name(), "k");
    assert_eq!(parquet_rows(&out.join("target_only.parquet")), 1);
    assert_eq!(
        read_json(&out.join("report.json"))["recon_report_version"],
        1
    );
    // Nothing but the three results is left in the directory.
    let mut names: Vec<String> = std::fs::read_dir(&out)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert_eq!(
        names,
        ["report.json", "source_only.parquet", "target_only.parquet"]
    );

    // Existing results are not overwritten without --force.
    Run::diff(&src, &tgt).output_dir(&out).fails_with("--force");
    Run::diff(&src, &tgt)
        .output_dir(&out)
        .arg("--force")
        .exits(1);
}

#[test]
fn report_has_the_documented_keys() {
    let tmp = tempfile::tempdir().unwrap();
    let path = tmp.path().join("r.json");
    let run = Run::diff(
        fixture("demo/source.parquet"),
        fixture("demo/target.parquet"),
    )
    .report_file(&path)
    .arg("-q")
    .exits(1);
    assert_eq!(run.stdout, "");
    let r = run.report();
    for key in [
        "recon_report_version",
        "exact_match",
        "source_rows",
        "target_rows",
        "source_only_rows",
        "target_only_rows",
        "multiplicity",
        "columns",
        "inputs",
        "settings",
        "elapsed_seconds",
        "spilled_bytes",
    ] {
        assert!(r.get(key).is_some(), "report lacks {key}");
    }
    assert_eq!(r["columns"][0]["name"], "region");
    assert_eq!(r["inputs"]["source"]["files"], 1);
    assert!(r["settings"]["threads"].as_u64().unwrap() >= 1);
}

/// A table big enough to spill: `n` rows with many duplicates and NULLs.
fn spill_pair(dir: &Path, n: usize) -> (std::path::PathBuf, std::path::PathBuf) {
    let src_rows: Vec<(Option<String>, Option<i64>)> = (0..n)
        .map(|i| {
            (
                (i % 11 != 0).then(|| format!("key-{}", i % 50_000)),
                Some((i % 7) as i64),
            )
        })
        .collect();
    let mut tgt_rows = src_rows.clone();
    tgt_rows.reverse();
    tgt_rows[10].1 = Some(999); // one changed cell
    tgt_rows.pop(); // one deleted row
    tgt_rows.push(tgt_rows[0].clone()); // one extra copy
    let as_ref = |v: &Vec<(Option<String>, Option<i64>)>| -> Vec<(Option<String>, Option<i64>)> {
        v.clone()
    };
    let to_batch = |v: Vec<(Option<String>, Option<i64>)>| {
        let refs: Vec<(Option<&str>, Option<i64>)> =
            v.iter().map(|(s, n)| (s.as_deref(), *n)).collect();
        kv_batch(&refs)
    };
    let s = dir.join("s.parquet");
    let t = dir.join("t.parquet");
    write_parquet(&s, &to_batch(as_ref(&src_rows)), 20_000);
    write_parquet(&t, &to_batch(as_ref(&tgt_rows)), 7_000);
    (s, t)
}

fn without_run_fields(mut r: Value) -> Value {
    let o = r.as_object_mut().unwrap();
    for k in [
        "settings",
        "elapsed_seconds",
        "phase_seconds",
        "spilled_bytes",
        "bucket_splits",
        "peak_rss_bytes",
    ] {
        o.remove(k);
    }
    r
}

#[test]
fn tiny_memory_limit_spills_and_gives_the_same_answer() {
    let tmp = tempfile::tempdir().unwrap();
    let (s, t) = spill_pair(tmp.path(), 200_000);
    let spill_dir = tmp.path().join("spill");
    std::fs::create_dir(&spill_dir).unwrap();
    let (code, unlimited) = diff_json(
        &s,
        &t,
        &["--memory-limit", "unlimited", "-j", "2", "--passes", "1"],
    );
    assert_eq!(code, 1);
    assert_eq!(
        unlimited["spilled_bytes"], 0,
        "an unlimited run keeps everything in memory"
    );
    let spill_arg = spill_dir.to_str().unwrap();
    for extra in [
        vec![
            "--memory-limit",
            "8MiB",
            "-j",
            "1",
            "--temp-dir",
            spill_arg,
            "--passes",
            "1",
        ],
        vec![
            "--memory-limit",
            "8MiB",
            "--passes",
            "1",
            "-j",
            "3",
            "--temp-dir",
            spill_arg,
            "--debug-single-bucket",
        ],
    ] {
        let (code, small) = diff_json(&s, &t, &extra);
        assert_eq!(code, 1);
        assert!(
            small["spilled_bytes"].as_u64().unwrap() > 0,
            "{extra:?}: nothing spilled"
        );
        assert_eq!(
            without_run_fields(small.clone()),
            without_run_fields(unlimited.clone()),
            "{extra:?}"
        );
        if extra.contains(&"--debug-single-bucket") {
            assert!(
                small["bucket_splits"].as_u64().unwrap() > 0,
                "the one bucket must be split"
            );
        }
    }
    assert_eq!(
        std::fs::read_dir(&spill_dir).unwrap().count(),
        0,
        "temp files left behind"
    );
    assert_eq!(counts(&unlimited), (200_000, 200_000, 2, 2));
}

#[test]
fn peak_rss_stays_within_the_limit_plus_headroom() {
    let tmp = tempfile::tempdir().unwrap();
    let (s, t) = spill_pair(tmp.path(), 400_000);
    for threads in ["1", "4"] {
        let (code, r) = diff_json(&s, &t, &["--memory-limit", "16MiB", "-j", threads]);
        assert_eq!(code, 1);
        let peak = r["peak_rss_bytes"].as_u64().unwrap();
        assert!(peak > 0);
        assert!(
            peak <= (16 + 64) << 20,
            "peak RSS {peak} bytes over 16MiB + 64MiB with -j {threads}"
        );
    }
}

/// Arrow IPC inputs (and the spool of a library caller's stream) decode
/// whole record batches; glibc malloc used to keep every freed batch in its
/// arenas, and peak RSS grew with the table (312 MiB for a 4M-row pair under
/// a 32 MiB limit) until the library pinned its thresholds.
#[test]
fn peak_rss_stays_within_the_limit_on_ipc_files_of_large_batches() {
    use arrow::array::{ArrayRef, Int64Array, RecordBatch, StringArray};
    use arrow::datatypes::{DataType, Field, Schema};
    use std::sync::Arc;
    let tmp = tempfile::tempdir().unwrap();
    let schema = Arc::new(Schema::new(vec![
        Field::new("a", DataType::Int64, false),
        Field::new("b", DataType::Int64, false),
        Field::new("s", DataType::Utf8, false),
    ]));
    let write = |name: &str, changed: i64| {
        let path = tmp.path().join(name);
        let file = std::fs::File::create(&path).unwrap();
        let mut w = arrow::ipc::writer::FileWriter::try_new(file, &schema).unwrap();
        let step = 65_536i64;
        for start in (0..2_000_000i64).step_by(step as usize) {
            let ids: Vec<i64> = (start..start + step).collect();
            let first: Vec<i64> = ids
                .iter()
                .map(|&i| if i == 0 { changed } else { i })
                .collect();
            let text: Vec<String> = ids.iter().map(|i| format!("row {i:012}")).collect();
            let batch = RecordBatch::try_new(
                schema.clone(),
                vec![
                    Arc::new(Int64Array::from(first)) as ArrayRef,
                    Arc::new(Int64Array::from(ids)),
                    Arc::new(StringArray::from(text)),
                ],
            )
            .unwrap();
            w.write(&batch).unwrap();
        }
        w.finish().unwrap();
        path
    };
    let (s, t) = (write("s.arrow", 0), write("t.arrow", -1));
    assert!(std::fs::metadata(&s).unwrap().len() > 64 << 20);
    let (code, r) = diff_json(&s, &t, &["--memory-limit", "16MiB", "-j", "2"]);
    assert_eq!(code, 1);
    assert_eq!(
        (
            r["source_only_rows"].as_u64(),
            r["target_only_rows"].as_u64()
        ),
        (Some(1), Some(1))
    );
    let peak = r["peak_rss_bytes"].as_u64().unwrap();
    assert!(
        peak <= (16 + 64) << 20,
        "peak RSS {} MiB over 16MiB + 64MiB on IPC inputs",
        peak >> 20
    );
}

#[test]
fn sigint_removes_temp_files_and_leaves_no_partial_output() {
    interrupt_removes_temp_files(libc::SIGINT);
}

#[test]
fn sigterm_removes_temp_files_and_leaves_no_partial_output() {
    interrupt_removes_temp_files(libc::SIGTERM);
}

fn interrupt_removes_temp_files(signal: i32) {
    let tmp = tempfile::tempdir().unwrap();
    let (s, t) = spill_pair(tmp.path(), 1_000_000);
    let spill = tmp.path().join("spill");
    let out = tmp.path().join("out");
    std::fs::create_dir(&spill).unwrap();
    // By hand, not with Run: the test signals the process mid-run.
    let bin = assert_cmd::cargo::cargo_bin("recon");
    let mut child = std::process::Command::new(bin)
        .arg("diff")
        .arg(&s)
        .arg(&t)
        .args([
            "-m",
            "8MiB",
            "-j",
            "1",
            "--debug-single-bucket",
            "-q",
            "--passes",
            "1",
        ])
        .arg("--temp-dir")
        .arg(&spill)
        .arg("--output")
        .arg(&out)
        .spawn()
        .unwrap();
    // Wait until the run directory exists, i.e. the run is under way.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    while std::fs::read_dir(&spill).unwrap().count() == 0 && std::time::Instant::now() < deadline {
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
    unsafe { libc::kill(child.id() as i32, signal) };
    let status = child.wait().unwrap();
    if status.code() == Some(130) {
        assert!(
            !out.exists(),
            "the output directory this run created was left behind"
        );
    }
    // Whether the signal landed mid-run or the run had finished, nothing stays behind.
    assert_eq!(
        std::fs::read_dir(&spill).unwrap().count(),
        0,
        "temp files left behind"
    );
}

#[test]
fn stale_run_directories_of_dead_processes_are_removed() {
    let tmp = tempfile::tempdir().unwrap();
    // PID 0x7ffffffe is above any real pid_max default: a dead process.
    let stale = tmp.path().join("recon-2147483646-abc123");
    std::fs::create_dir(&stale).unwrap();
    std::fs::write(stale.join(".recon-run"), b"").unwrap();
    std::fs::write(stale.join("spill-00000.bin"), b"left by a killed run").unwrap();
    // Directories that are not recon's are never touched.
    let foreign = tmp.path().join("recon-2147483646-notours");
    std::fs::create_dir(&foreign).unwrap();
    Run::diff(
        fixture("demo/source.parquet"),
        fixture("demo/source.parquet"),
    )
    .arg("--temp-dir")
    .arg(tmp.path())
    .exits(0);
    assert!(!stale.exists(), "stale run directory survived");
    assert!(
        foreign.exists(),
        "a directory without recon's marker was removed"
    );
}

#[test]
fn report_is_deterministic_across_threads_limits_row_order_and_file_splits() {
    let tmp = tempfile::tempdir().unwrap();
    let (s, t) = spill_pair(tmp.path(), 60_000);
    // The same target, rows reversed and split over three files.
    let batches = read_parquet(&t);
    let all = arrow::compute::concat_batches(&batches[0].schema(), &batches).unwrap();
    let n = all.num_rows();
    let rev: Vec<u32> = (0..n as u32).rev().collect();
    let reversed =
        arrow::compute::take_record_batch(&all, &arrow::array::UInt32Array::from(rev)).unwrap();
    let split = tmp.path().join("split");
    std::fs::create_dir(&split).unwrap();
    for (i, (from, len)) in [(0, 1000), (1000, 25_000), (26_000, n - 26_000)]
        .into_iter()
        .enumerate()
    {
        write_parquet(
            &split.join(format!("part-{i}.parquet")),
            &reversed.slice(from, len),
            3000,
        );
    }
    let strip = |mut r: Value| {
        r.as_object_mut().unwrap().remove("inputs");
        without_run_fields(r)
    };
    let (_, base) = diff_json(&s, &t, &["-j", "1", "--memory-limit", "unlimited"]);
    let base = strip(base);
    for (target, extra) in [
        (&t, vec!["-j", "3", "--memory-limit", "8MiB"]),
        (&split, vec!["-j", "2", "--memory-limit", "unlimited"]),
        (
            &split,
            vec!["-j", "4", "--memory-limit", "8MiB", "--debug-single-bucket"],
        ),
    ] {
        let (code, r) = diff_json(&s, target, &extra);
        assert_eq!(code, 1);
        assert_eq!(
            serde_json::to_string_pretty(&strip(r)).unwrap(),
            serde_json::to_string_pretty(&base).unwrap(),
            "{extra:?} on {}",
            target.display()
        );
    }
}

/// A tiny tmpfs mounted for one test (needs root).
struct TinyFs(std::path::PathBuf);

impl TinyFs {
    /// Mounts it, or fails the test saying why: a test that cannot run
    /// must not pass.
    fn mount(dir: &Path, size: &str) -> TinyFs {
        assert_eq!(
            unsafe { libc::geteuid() },
            0,
            "this test mounts a tmpfs and needs root: run it as root (.ci/run does) or leave it ignored"
        );
        let status = std::process::Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={size}"), "tmpfs"])
            .arg(dir)
            .status();
        assert!(
            status.as_ref().is_ok_and(|s| s.success()),
            "mount -t tmpfs failed ({status:?}): this test needs a machine where root may mount"
        );
        TinyFs(dir.to_path_buf())
    }
}

impl Drop for TinyFs {
    fn drop(&mut self) {
        let _ = std::process::Command::new("umount").arg(&self.0).status();
    }
}

#[test]
#[ignore = "needs root to mount a tmpfs; .ci/run runs it with --ignored"]
fn a_full_temp_disk_is_a_clear_error_and_leaves_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    let (s, t) = spill_pair(tmp.path(), 200_000);
    let small = tmp.path().join("small");
    std::fs::create_dir(&small).unwrap();
    let _fs = TinyFs::mount(&small, "1m");
    let out = Run::diff(&s, &t)
        .args(["--memory-limit", "8MiB", "--passes", "1", "--temp-dir"])
        .arg(&small)
        .exits(2);
    let err = out.one_line_error();
    assert!(err.contains(small.to_str().unwrap()), "{err}");
    assert!(
        err.contains("no space left") && err.contains("needs about"),
        "{err}"
    );
    assert_eq!(
        std::fs::read_dir(&small).unwrap().count(),
        0,
        "spill files left behind"
    );
}

#[test]
fn two_runs_share_one_temp_dir() {
    let tmp = tempfile::tempdir().unwrap();
    let (s, t) = spill_pair(tmp.path(), 200_000);
    let shared = tmp.path().join("shared");
    std::fs::create_dir(&shared).unwrap();
    // By hand, not with Run: the two runs go at once.
    let bin = assert_cmd::cargo::cargo_bin("recon");
    let spawn = |report: &Path| {
        std::process::Command::new(&bin)
            .arg("diff")
            .arg(&s)
            .arg(&t)
            .args(["--memory-limit", "8MiB", "-q", "--temp-dir"])
            .arg(&shared)
            .arg("--report")
            .arg(report)
            .spawn()
            .unwrap()
    };
    let (ra, rb) = (tmp.path().join("a.json"), tmp.path().join("b.json"));
    let (mut a, mut b) = (spawn(&ra), spawn(&rb));
    assert_eq!(a.wait().unwrap().code(), Some(1));
    assert_eq!(b.wait().unwrap().code(), Some(1));
    let read = |p: &Path| {
        without_run_fields(serde_json::from_str(&std::fs::read_to_string(p).unwrap()).unwrap())
    };
    assert_eq!(read(&ra), read(&rb));
    assert_eq!(std::fs::read_dir(&shared).unwrap().count(), 0);
}

#[test]
fn a_stray_file_in_a_table_directory_is_an_error_not_skipped() {
    // Hive writes data files without an extension; silently skipping them
    // would silently drop rows.
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("table");
    std::fs::create_dir(&dir).unwrap();
    std::fs::copy(fixture("demo/source.parquet"), dir.join("part-0.parquet")).unwrap();
    std::fs::write(dir.join("_SUCCESS"), b"").unwrap();
    assert_eq!(diff_json(&dir, &fixture("demo/source.parquet"), &[]).0, 0);
    std::fs::write(dir.join("000000_0"), b"data").unwrap();
    assert_one_line_error(&dir, &fixture("demo/source.parquet"), "000000_0");
}

#[test]
fn two_passes_spill_nothing_on_a_match_and_only_differing_buckets_on_drift() {
    let tmp = tempfile::tempdir().unwrap();
    let (s, t) = spill_pair(tmp.path(), 200_000);
    // A match: one read per side, nothing spilled even at a tiny limit.
    let (code, same) = diff_json(&s, &s, &["--memory-limit", "8MiB", "--passes", "2"]);
    assert_eq!(code, 0);
    assert_eq!(same["spilled_bytes"], 0);
    assert_eq!(same["settings"]["passes"], 2);
    assert_eq!(same["settings"]["fingerprint_buckets_differing"], 0);
    // Drift: the same report as one pass, with far less spilled.
    let (c1, one) = diff_json(&s, &t, &["--memory-limit", "8MiB", "--passes", "1"]);
    let (c2, two) = diff_json(&s, &t, &["--memory-limit", "8MiB", "--passes", "2"]);
    assert_eq!((c1, c2), (1, 1));
    assert_eq!(
        without_run_fields(one.clone()),
        without_run_fields(two.clone())
    );
    let differing = two["settings"]["fingerprint_buckets_differing"]
        .as_u64()
        .unwrap();
    assert!(differing > 0 && differing < 16384, "{differing}");
    assert!(
        two["spilled_bytes"].as_u64().unwrap() < one["spilled_bytes"].as_u64().unwrap(),
        "two passes spilled {} vs {}",
        two["spilled_bytes"],
        one["spilled_bytes"]
    );
}

#[test]
fn a_targeted_second_pass_reads_only_the_row_groups_that_differ_and_gives_the_one_pass_answer() {
    let tmp = tempfile::tempdir().unwrap();
    let n = 100_000i64;
    let rows = |changed: &[(usize, i64)], extra: &[i64]| -> Vec<(Option<String>, Option<i64>)> {
        let mut v: Vec<(Option<String>, Option<i64>)> = (0..n)
            .map(|i| (Some(format!("k{}", i % 30_000)), Some(i)))
            .collect();
        for &(at, value) in changed {
            v[at].1 = Some(value);
        }
        for &e in extra {
            v.push((Some("dup".into()), Some(e)));
        }
        v
    };
    let write = |name: &str, r: &[(Option<String>, Option<i64>)]| {
        let p = tmp.path().join(name);
        let refs: Vec<(Option<&str>, Option<i64>)> =
            r.iter().map(|(k, n)| (k.as_deref(), *n)).collect();
        common::write_parquet(&p, &common::kv_batch(&refs), 5_000);
        p
    };
    let s = write("s.parquet", &rows(&[], &[7]));
    // Three changed values and a moved duplicate: each differing bucket
    // holds one differing digest, which its two fingerprints give away, so
    // only the row groups holding them are read again.
    let t = write(
        "t.parquet",
        &rows(&[(10, -1), (50_000, -2), (99_999, -3)], &[8]),
    );
    let (c1, one) = diff_json(&s, &t, &["--passes", "1"]);
    let (c2, two) = diff_json(&s, &t, &["--passes", "2"]);
    assert_eq!((c1, c2), (1, 1));
    assert_eq!(
        without_run_fields(one.clone()),
        without_run_fields(two.clone())
    );
    let pass = &two["settings"]["second_pass"];
    assert_eq!(pass["strategy"], "targeted", "{pass}");
    assert_eq!(pass["units_total"], 42);
    let read = pass["units_read"].as_u64().unwrap();
    assert!((2..=10).contains(&read), "read {read} of 42 row groups");
    assert_eq!(pass["decoded_digests"], 8);
    // Within a row group, only the batches (8192 rows) whose filters may
    // hold a decoded digest are read again.
    let one_group = |name: &str, r: &[(Option<String>, Option<i64>)]| {
        let p = tmp.path().join(name);
        let refs: Vec<(Option<&str>, Option<i64>)> =
            r.iter().map(|(k, n)| (k.as_deref(), *n)).collect();
        common::write_parquet(&p, &common::kv_batch(&refs), 200_000);
        p
    };
    let (sb, tb) = (
        one_group("sb.parquet", &rows(&[], &[7])),
        one_group("tb.parquet", &rows(&[(10, -1), (99_999, -3)], &[8])),
    );
    let (c1, one) = diff_json(&sb, &tb, &["--passes", "1"]);
    let (c2, two) = diff_json(&sb, &tb, &["--passes", "2"]);
    assert_eq!((c1, c2), (1, 1));
    assert_eq!(without_run_fields(one), without_run_fields(two.clone()));
    let pass = &two["settings"]["second_pass"];
    assert_eq!(pass["strategy"], "targeted", "{pass}");
    assert_eq!(
        (pass["units_read"].as_u64(), pass["units_total"].as_u64()),
        (Some(2), Some(2))
    );
    let rows_read = pass["rows_read"].as_u64().unwrap();
    assert!(rows_read <= 6 * 8192, "read {rows_read} of 200002 rows");
    // Any copy-count difference decodes, even ones: two, three, twenty
    // extra copies of one row.
    for copies in [2usize, 3, 20] {
        let extra = vec![7; copies + 1];
        let t = write(&format!("t{copies}.parquet"), &rows(&[], &extra));
        let (c1, one) = diff_json(&s, &t, &["--passes", "1"]);
        let (c2, two) = diff_json(&s, &t, &["--passes", "2"]);
        assert_eq!((c1, c2), (1, 1));
        assert_eq!(
            without_run_fields(one.clone()),
            without_run_fields(two.clone())
        );
        assert_eq!(two["target_only_rows"], copies, "{copies}");
        let pass = &two["settings"]["second_pass"];
        assert_eq!(pass["strategy"], "targeted", "{copies}: {pass}");
        assert_eq!(pass["decoded_digests"], 1);
    }
    // A match needs no second pass at all.
    let (c, same) = diff_json(&s, &s, &["--passes", "2"]);
    assert_eq!(c, 0);
    assert!(same["settings"]["second_pass"].is_null());
}

#[test]
fn a_twenty_copy_drift_decodes_in_run_and_a_sketch_too_small_says_why_the_pass_was_full() {
    let tmp = tempfile::tempdir().unwrap();
    let write = |name: &str, r: &[(Option<String>, Option<i64>)]| {
        let p = tmp.path().join(name);
        let refs: Vec<(Option<&str>, Option<i64>)> =
            r.iter().map(|(k, n)| (k.as_deref(), *n)).collect();
        common::write_parquet(&p, &common::kv_batch(&refs), 10_000);
        p
    };
    let base: Vec<(Option<String>, Option<i64>)> = (0..200_000i64)
        .map(|i| (Some(format!("k{}", i % 40_000)), Some(i)))
        .collect();
    let s = write("s.parquet", &base);
    // 400 rows (all in the first batch) with 20 more copies each in the
    // target: a few buckets hold two of them, and every count is even.
    // Only the batches holding them are read again.
    let mut drifted = base.clone();
    for r in base.iter().take(400) {
        drifted.extend(std::iter::repeat_n(r.clone(), 20));
    }
    let t = write("t.parquet", &drifted);
    let (c1, one) = diff_json(&s, &t, &["--passes", "1"]);
    let (c2, two) = diff_json(&s, &t, &["--passes", "2"]);
    assert_eq!((c1, c2), (1, 1));
    assert_eq!(without_run_fields(one), without_run_fields(two.clone()));
    assert_eq!(two["target_only_rows"], 8_000);
    let pass = &two["settings"]["second_pass"];
    assert_eq!(pass["strategy"], "targeted", "{pass}");
    assert_eq!(pass["decoded_digests"], 400);
    assert!(pass["rows_read"].as_u64().unwrap() < 120_000, "{pass}");
    // The same drift spread over the whole table: every batch may hold a
    // decoded digest, and reading them all by selection is slower than
    // reading everything.
    let mut spread = base.clone();
    for r in base.iter().step_by(100) {
        spread.extend(std::iter::repeat_n(r.clone(), 20));
    }
    let t = write("spread.parquet", &spread);
    let (c1, one) = diff_json(&s, &t, &["--passes", "1"]);
    let (c2, two) = diff_json(&s, &t, &["--passes", "2"]);
    assert_eq!((c1, c2), (1, 1));
    assert_eq!(without_run_fields(one), without_run_fields(two.clone()));
    let pass = &two["settings"]["second_pass"];
    assert_eq!(pass["strategy"], "full", "{pass}");
    assert!(
        pass["full_because"]
            .as_str()
            .unwrap()
            .contains("more than a quarter of the rows"),
        "{pass}"
    );
    assert_eq!(pass["decoded_digests"], 2_000, "{pass}");
    assert_eq!(pass["undecoded_buckets"], 0, "{pass}");
    // 40,000 differing digests are more than the in-run sketch holds: the
    // second pass reads everything, says why, and the answer is the same.
    // (A tenth of the rows changed: too few for the drift probe to spill.)
    let mut changed = base.clone();
    for r in changed.iter_mut().step_by(10) {
        r.1 = r.1.map(|v| -v - 1);
    }
    let t = write("changed.parquet", &changed);
    let (c1, one) = diff_json(&s, &t, &["--passes", "1"]);
    let (c2, two) = diff_json(&s, &t, &["--passes", "2"]);
    assert_eq!((c1, c2), (1, 1));
    assert_eq!(without_run_fields(one), without_run_fields(two.clone()));
    let pass = &two["settings"]["second_pass"];
    assert_eq!(pass["strategy"], "full", "{pass}");
    assert!(
        pass["full_because"]
            .as_str()
            .unwrap()
            .contains("did not all decode"),
        "{pass}"
    );
    assert!(pass["undecoded_buckets"].as_u64().unwrap() > 0, "{pass}");
}

#[test]
fn heavy_drift_spills_the_targets_rest_in_pass_1_and_gives_the_one_pass_answer() {
    let tmp = tempfile::tempdir().unwrap();
    let src: Vec<(Option<String>, Option<i64>)> = (0..60_000i64)
        .map(|i| {
            (
                (i % 13 != 0).then(|| format!("k{}", i % 20_000)),
                Some(i % 1_000),
            )
        })
        .collect();
    // The target reversed, 70% of its rows changed, and extra copies of a
    // row the source holds (duplicates, NULL keys and matching rows stay).
    let mut tgt: Vec<(Option<String>, Option<i64>)> = src
        .iter()
        .rev()
        .enumerate()
        .map(|(j, (k, v))| match j % 10 < 7 {
            true => (k.clone(), v.map(|x| x + 1_000_000)),
            false => (k.clone(), *v),
        })
        .collect();
    tgt.extend(std::iter::repeat_n(src[1].clone(), 500));
    let write = |name: &str, r: &[(Option<String>, Option<i64>)]| {
        let p = tmp.path().join(name);
        let refs: Vec<(Option<&str>, Option<i64>)> =
            r.iter().map(|(k, n)| (k.as_deref(), *n)).collect();
        write_parquet(&p, &kv_batch(&refs), 4_000);
        p
    };
    let (s, t) = (write("s.parquet", &src), write("t.parquet", &tgt));
    // Each evidence file's rows, sorted.
    let evidence = |dir: &Path, file: &str| -> Vec<(Option<String>, Option<i64>)> {
        use arrow::array::{Array, AsArray, Int64Array};
        let mut rows = Vec::new();
        for b in read_parquet(&dir.join(file)) {
            let k = arrow::compute::cast(b.column(0), &arrow::datatypes::DataType::Utf8).unwrap();
            let n: &Int64Array = b.column(1).as_primitive();
            for i in 0..b.num_rows() {
                let key = (!k.is_null(i)).then(|| k.as_string::<i32>().value(i).to_string());
                rows.push((key, (!n.is_null(i)).then(|| n.value(i))));
            }
        }
        rows.sort();
        rows
    };
    for extra in [&["-j", "1"][..], &["-j", "3"], &["-j", "2", "-m", "16MiB"]] {
        let run = |passes: &str, out: &str| {
            let dir = tmp.path().join(out);
            let r = Run::diff(&s, &t)
                .json()
                .args(extra)
                .args(["--passes", passes, "--force", "-o"])
                .arg(&dir)
                .run();
            (r.code, r.report().clone(), dir)
        };
        let (c1, one, d1) = run("1", "one");
        let (c2, two, d2) = run("2", "two");
        assert_eq!((c1, c2), (1, 1), "{extra:?}");
        assert_eq!(two["target_only_rows"], 42_500, "{extra:?}");
        // The same report but for where the files went.
        let answer = |r: &Value| {
            let mut r = without_run_fields(r.clone());
            r.as_object_mut().unwrap().remove("outputs");
            r
        };
        assert_eq!(answer(&one), answer(&two), "{extra:?}");
        assert_eq!(one["outputs"]["target_only_written"], 42_500);
        assert_eq!(two["outputs"]["target_only_written"], 42_500);
        for file in ["source_only.parquet", "target_only.parquet"] {
            assert_eq!(evidence(&d1, file), evidence(&d2, file), "{extra:?} {file}");
        }
        let pass = &two["settings"]["second_pass"];
        assert_eq!(pass["units_total"], 31);
        // 15 row groups of source, 16 of target. Target row groups started
        // before the source's last one ended, or before the first checked
        // one proved the drift, are read again: with one thread, only that
        // first one. With more, how many depends on timing (these row groups
        // are tiny); if none was left to spill, the second pass is "full".
        if extra[1] == "1" {
            assert_eq!(pass["strategy"], "adaptive", "{pass}");
            assert_eq!(pass["spilled_in_pass_1"], 15, "{pass}");
        }
        if pass["strategy"] == "adaptive" {
            let spilled = pass["spilled_in_pass_1"].as_u64().unwrap();
            assert!((1..=15).contains(&spilled), "{extra:?} {pass}");
            assert_eq!(pass["units_read"].as_u64().unwrap(), 31 - spilled, "{pass}");
        } else {
            assert_eq!(pass["strategy"], "full", "{extra:?} {pass}");
        }
    }
    // Light drift and a match never switch.
    let mut light = src.clone();
    light[5].1 = Some(-5);
    let l = write("l.parquet", &light);
    let (_, r) = diff_json(&s, &l, &["--passes", "2"]);
    assert_eq!(r["settings"]["second_pass"]["strategy"], "targeted");
    let (c, same) = diff_json(&s, &s, &["--passes", "2"]);
    assert_eq!(c, 0);
    assert!(same["settings"]["second_pass"].is_null());
}

#[test]
fn columns_pick_each_sides_columns_before_by_position_pairs_them() {
    let tmp = tempfile::tempdir().unwrap();
    // A wide extract with other names (and a column the target lacks)...
    let csv = tmp.path().join("extract.csv");
    std::fs::write(&csv, "name,load_ts,qty\na,2024-01-01,1\nb,2024-01-02,2\n").unwrap();
    // ... against a narrow table with its own names.
    let pq = tmp.path().join("table.parquet");
    write_parquet(
        &pq,
        &kv_batch(&[(Some("b"), Some(2)), (Some("a"), Some(1))]),
        10,
    );
    let diff = |columns: &str| Run::diff(&csv, &pq).args(["--by-position", "--columns", columns]);
    diff("name,qty,k,n").exits(0);
    // --exclude composes too (load_ts is outside --columns anyway).
    let (code, r) = diff_json(
        &csv,
        &pq,
        &[
            "--by-position",
            "--columns",
            "name,qty,k,n",
            "--exclude",
            "load_ts",
        ],
    );
    assert_eq!((code, counts(&r)), (0, (2, 2, 0, 0)));
    // A changed value in a compared column is drift.
    let changed = tmp.path().join("changed.csv");
    std::fs::write(
        &changed,
        "name,load_ts,qty\na,2024-01-01,1\nb,2024-01-02,3\n",
    )
    .unwrap();
    let (code, r) = diff_json(
        &changed,
        &pq,
        &["--by-position", "--columns", "name,qty,k,n"],
    );
    assert_eq!((code, counts(&r)), (1, (2, 2, 1, 1)));
    // A wrong name is one line naming it.
    diff("name,qyt,k,n")
        .fails_with("--columns: no column named 'qyt' in source or target")
        .one_line_error();
    // So is a different number of named columns per side.
    diff("name,qty,n").fails_with("the source has 2 of them (name, qty) and the target 1 (n)");
    // A header-less side with none of the names follows the other by position.
    let tbl = tmp.path().join("extract.tbl");
    std::fs::write(&tbl, "a|2024-01-01|1|\nb|2024-01-02|2|\n").unwrap();
    let narrow = tmp.path().join("three.parquet");
    let k: arrow::array::ArrayRef =
        std::sync::Arc::new(arrow::array::StringArray::from(vec!["b", "a"]));
    let d: arrow::array::ArrayRef =
        std::sync::Arc::new(arrow::array::StringArray::from(vec!["x", "y"]));
    let n: arrow::array::ArrayRef = std::sync::Arc::new(arrow::array::Int64Array::from(vec![2, 1]));
    let batch = arrow::array::RecordBatch::try_from_iter([("k", k), ("day", d), ("n", n)]).unwrap();
    write_parquet(&narrow, &batch, 10);
    Run::diff(&tbl, &narrow)
        .args(["--by-position", "--columns", "k,n"])
        .exits(0);
}

/// `--color` beside NO_COLOR: `always` colours the verdict even into a
/// pipe and with NO_COLOR set (the flag wins, as no-color.org asks);
/// `never` and `auto` into a pipe do not.
#[test]
fn color_flag_colours_the_verdict_line_or_not() {
    let (s, t) = (
        fixture("demo/source.parquet"),
        fixture("demo/target.parquet"),
    );
    let run = |args: &[&str], no_color: bool| {
        let run = Run::diff(&s, &t).args(args);
        let run = if no_color {
            run.env("NO_COLOR", "1")
        } else {
            run.env_remove("NO_COLOR")
        };
        run.exits(1).stdout
    };
    assert!(run(&["--color", "always"], false).starts_with("\x1b[1;31m"));
    assert!(run(&["--color", "always"], true).starts_with("\x1b[1;31m"));
    assert!(!run(&["--color", "never"], false).contains('\x1b'));
    assert!(!run(&["--color", "auto"], false).contains('\x1b'));
    assert!(!run(&[], false).contains('\x1b'));
    // A global flag: before the subcommand too.
    let o = recon(["--color", "always", "diff"]).arg(&s).arg(&t).run();
    assert!(o.stdout.starts_with("\x1b[1;31m"));
    Run::diff(&s, &t).args(["--color", "sometimes"]).exits(2);
}

/// The HTML report printed the memory limit as raw bytes ("memory limit
/// 12638251008 bytes"): sizes are in the units --memory-limit takes.
#[test]
fn html_report_gives_sizes_in_memory_limit_units() {
    let dir = tempfile::tempdir().unwrap();
    let html = dir.path().join("r.html");
    Run::diff(
        fixture("demo/source.parquet"),
        fixture("demo/target.parquet"),
    )
    .args(["-m", "12GiB", "--html"])
    .arg(&html)
    .exits(1);
    let page = std::fs::read_to_string(&html).unwrap();
    assert!(
        page.contains("<tr><th>memory limit</th><td>12.0 GiB</td></tr>"),
        "{page}"
    );
    assert!(!page.contains(" bytes</td>"), "{page}");
    assert!(page.contains("<tr><th>peak memory (RSS)</th><td>"));
}
