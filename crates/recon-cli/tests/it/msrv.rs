//! The declared minimum Rust version is the one the locked dependencies
//! really need: a user on the declared version must not fail on the first
//! `cargo install --locked`. The workspace declares one rust-version for
//! both crates; recon-cli's build includes the library's.

use std::collections::{HashMap, HashSet};

use serde_json::Value;

/// The highest `rust-version` among the packages a normal build of recon
/// compiles (dependencies reached through normal and build edges from the
/// root, for this platform, with the default features), and recon's own.
#[test]
fn rust_version_is_what_the_locked_dependencies_need() {
    let host = rustc_host();
    let out = std::process::Command::new(env!("CARGO"))
        .args(["metadata", "--format-version", "1", "--locked"])
        .args(["--filter-platform", &host])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .expect("cargo metadata runs");
    assert!(
        out.status.success(),
        "cargo metadata failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let meta: Value = serde_json::from_slice(&out.stdout).unwrap();
    let versions: HashMap<&str, Option<&str>> = meta["packages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| (p["id"].as_str().unwrap(), p["rust_version"].as_str()))
        .collect();
    let nodes: HashMap<&str, &Value> = meta["resolve"]["nodes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| (n["id"].as_str().unwrap(), n))
        .collect();
    // The workspace is virtual: the build a user installs is recon-cli's.
    let root = meta["packages"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["name"] == env!("CARGO_PKG_NAME"))
        .and_then(|p| p["id"].as_str())
        .expect("recon-cli is in the metadata");
    let (mut seen, mut todo) = (HashSet::new(), vec![root]);
    while let Some(id) = todo.pop() {
        if !seen.insert(id) {
            continue;
        }
        for dep in nodes[id]["deps"].as_array().unwrap() {
            let built = dep["dep_kinds"]
                .as_array()
                .unwrap()
                .iter()
                .any(|k| k["kind"].is_null() || k["kind"] == "build");
            if built {
                todo.push(dep["pkg"].as_str().unwrap());
            }
        }
    }
    let needed = seen
        .iter()
        .filter(|&&id| id != root)
        .filter_map(|id| versions[id].map(|v| (parse(v), *id)))
        .max()
        .expect("some dependency declares a rust-version");
    let declared = parse(env!("CARGO_PKG_RUST_VERSION"));
    assert_eq!(
        declared, needed.0,
        "Cargo.toml says rust-version {declared:?}, but {} needs {:?}",
        needed.1, needed.0
    );
}

fn parse(v: &str) -> (u32, u32) {
    let mut parts = v.split('.').map(|p| p.parse::<u32>().unwrap());
    (parts.next().unwrap(), parts.next().unwrap_or(0))
}

fn rustc_host() -> String {
    let out = std::process::Command::new("rustc")
        .arg("-vV")
        .output()
        .expect("rustc -vV runs");
    String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .find_map(|l| l.strip_prefix("host: ").map(str::to_string))
        .expect("rustc -vV names the host")
}
