//! Every output file option against destinations that are not regular
//! files: a FIFO, stdout by name and (as root) a character device made in
//! a temp dir (never the machine's own /dev/null: a regression would
//! break it). They are
//! written in place; a rename would replace the device or FIFO with a
//! regular file (as root, `--report /dev/null` once broke `/dev/null` for
//! the whole machine) and a FIFO's reader would get nothing. A regular
//! file is still replaced whole (the atomic rename).

use std::ffi::CString;
use std::io::Read;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::FileTypeExt;
use std::path::{Path, PathBuf};

use crate::common;
use common::{fixture, recon, Run};
use tempfile::TempDir;

/// Each output option, as the arguments of one run writing to `dest`, and
/// what the bytes written start with.
fn runs(dest: &Path, scratch: &Path) -> Vec<(&'static str, Run, &'static str)> {
    let (s, t) = (
        fixture("demo/source.parquet"),
        fixture("demo/target.parquet"),
    );
    let fp = scratch.join("source.fp.json");
    if !fp.exists() {
        recon(["fingerprint"]).arg(&s).arg("-o").arg(&fp).exits(0);
    }
    let batch = fixture("batch/nightly.toml");
    vec![
        (
            "diff --report",
            Run::diff(&s, &t).arg("--report").arg(dest),
            "{",
        ),
        (
            "diff --html",
            Run::diff(&s, &t).arg("--html").arg(dest),
            "<!",
        ),
        (
            "diff --quick --report",
            Run::diff(&s, &t).args(["--quick", "--report"]).arg(dest),
            "{",
        ),
        (
            "diff --quick --html",
            Run::diff(&s, &t).args(["--quick", "--html"]).arg(dest),
            "<!",
        ),
        (
            "fingerprint -o",
            recon(["fingerprint"]).arg(&s).arg("-o").arg(dest),
            "{",
        ),
        (
            "batch --report",
            recon(["batch"]).arg(&batch).arg("--report").arg(dest),
            "{",
        ),
        (
            "batch --junit",
            recon(["batch"]).arg(&batch).arg("--junit").arg(dest),
            "<?xml",
        ),
        (
            "batch --html",
            recon(["batch"]).arg(&batch).arg("--html").arg(dest),
            "<!",
        ),
    ]
}

fn mkfifo(path: &Path) {
    let c = CString::new(path.as_os_str().as_bytes()).unwrap();
    assert_eq!(
        unsafe { libc::mkfifo(c.as_ptr(), 0o644) },
        0,
        "mkfifo {path:?}"
    );
}

fn exit_of(name: &str) -> i32 {
    // The demo pair drifts; the batch's demo pair fails its threshold.
    if name.starts_with("fingerprint") {
        0
    } else {
        1
    }
}

#[test]
fn outputs_to_a_fifo_are_written_in_place_for_its_reader() {
    let tmp = TempDir::new().unwrap();
    let fifo = tmp.path().join("out.fifo");
    mkfifo(&fifo);
    // A second name for the same FIFO: if a run renamed a file over
    // out.fifo, the reader (blocked opening the FIFO) is released through
    // it and gets nothing, and the test fails instead of hanging.
    let keep = tmp.path().join("keep.fifo");
    std::fs::hard_link(&fifo, &keep).unwrap();
    for (name, run, starts) in runs(&fifo, tmp.path()) {
        let reader = {
            let fifo = fifo.clone();
            std::thread::spawn(move || {
                let mut text = String::new();
                std::fs::File::open(&fifo)
                    .unwrap()
                    .read_to_string(&mut text)
                    .unwrap();
                text
            })
        };
        run.exits(exit_of(name));
        // Wait for the reader; if it is still blocked, release it.
        for _ in 0..200 {
            if reader.is_finished() {
                break;
            }
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
        if !reader.is_finished() {
            use std::os::unix::fs::OpenOptionsExt;
            let _ = std::fs::OpenOptions::new()
                .write(true)
                .custom_flags(libc::O_NONBLOCK)
                .open(&keep);
        }
        let text = reader.join().unwrap();
        let kind = std::fs::symlink_metadata(&fifo).unwrap().file_type();
        assert!(kind.is_fifo(), "{name}: the FIFO was replaced by {kind:?}");
        assert!(
            text.starts_with(starts),
            "{name}: the reader got {text:.80?}"
        );
    }
}

#[test]
fn a_report_to_stdout_by_name_is_written_to_the_pipe() {
    // /proc/self/fd/1 is what /dev/stdout links to. The test names it, not
    // /dev/stdout: a regression would rename a file over /dev/stdout and
    // break it for the whole machine (as it did once while this test was
    // written), where /proc refuses the rename.
    let s = fixture("demo/source.parquet");
    let out = Run::diff(&s, &s)
        .args(["--quiet", "--report", "/proc/self/fd/1"])
        .exits(0);
    assert!(out.stdout.starts_with("{"), "{}", out.stdout);
    assert!(
        out.stdout.contains("\"exact_match\": true"),
        "{}",
        out.stdout
    );
}

#[test]
fn a_regular_file_is_still_replaced_whole_and_a_symlink_keeps_its_link() {
    let tmp = TempDir::new().unwrap();
    let real = tmp.path().join("real.json");
    std::fs::write(&real, "old contents that are longer than nothing").unwrap();
    let link = tmp.path().join("link.json");
    std::os::unix::fs::symlink(&real, &link).unwrap();
    let s = fixture("demo/source.parquet");
    Run::diff(&s, &s).arg("--report").arg(&link).exits(0);
    assert!(std::fs::symlink_metadata(&link)
        .unwrap()
        .file_type()
        .is_symlink());
    let text = std::fs::read_to_string(&real).unwrap();
    assert!(
        text.starts_with('{') && text.contains("\"exact_match\": true"),
        "{text}"
    );
    // No temporary file is left beside either.
    let names: Vec<PathBuf> = std::fs::read_dir(tmp.path())
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    assert_eq!(names.len(), 2, "{names:?}");
}

/// Needs root (mknod); `.ci/test` runs it by name as root.
#[test]
#[ignore = "needs root: makes a character device with mknod"]
fn outputs_to_a_device_node_leave_it_a_device() {
    let tmp = TempDir::new().unwrap();
    let null = tmp.path().join("null");
    let c = CString::new(null.as_os_str().as_bytes()).unwrap();
    // The same device as /dev/null (major 1, minor 3).
    let made = unsafe { libc::mknod(c.as_ptr(), libc::S_IFCHR | 0o666, libc::makedev(1, 3)) };
    assert_eq!(
        made,
        0,
        "mknod needs root: {}",
        std::io::Error::last_os_error()
    );
    for (name, run, _) in runs(&null, tmp.path()) {
        run.exits(exit_of(name));
        let kind = std::fs::symlink_metadata(&null).unwrap().file_type();
        assert!(
            kind.is_char_device(),
            "{name}: the device was replaced by {kind:?}"
        );
    }
}
