//! A whole diff of an arbitrary CSV file against itself: recon either
//! refuses the file with an error, or finds an exact match. It never panics
//! and never reports drift between a file and itself.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("f.csv");
    std::fs::write(&path, data).unwrap();
    let opts = recon::DiffOptions {
        threads: 2,
        memory_limit: 16 << 20,
        temp_dir: Some(dir.path().to_path_buf()),
        batch_size: 7,
        ..recon::DiffOptions::default()
    };
    if let Ok(outcome) = recon::diff(&path, &path, &opts) {
        assert!(outcome.report.exact_match, "a file differs from itself");
    }
});
