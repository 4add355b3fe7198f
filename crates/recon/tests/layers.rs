//! The library's modules are layered: each may use only modules of lower
//! layers (see docs/architecture.md). This test reads the sources and fails
//! on any `crate::` path that reaches up or sideways, so an import cycle
//! cannot come back unnoticed.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// Top-level modules, lowest first. Modules of one rank may not use each other.
const LAYERS: &[(&str, u32)] = &[
    ("units", 0),
    ("size", 0),
    ("side", 0),
    ("error", 1),
    ("config", 2),
    ("tempspace", 2),
    ("digest", 3),
    ("input", 4),
    ("plan", 5),
    ("engine", 6),
    ("evidence", 7),
    ("report", 8),
    ("modes", 9),
];

fn rank(module: &str) -> Option<u32> {
    LAYERS.iter().find(|(m, _)| *m == module).map(|(_, r)| *r)
}

fn sources(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            sources(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// The top-level modules a source file names with `crate::`, outside comments.
fn uses(text: &str) -> Vec<String> {
    let mut found = Vec::new();
    for line in text.lines() {
        let code = line.split("//").next().unwrap_or("");
        let mut rest = code;
        while let Some(i) = rest.find("crate::") {
            let after = &rest[i + "crate::".len()..];
            // A grouped `crate::{a, b}` is reported as "{": name each path.
            let name: String = if after.starts_with('{') {
                "{".into()
            } else {
                after
                    .chars()
                    .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                    .collect()
            };
            if !name.is_empty() {
                found.push(name);
            }
            rest = after;
        }
    }
    found
}

#[test]
fn modules_only_use_lower_layers() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    sources(&src, &mut files);
    let mut problems = Vec::new();
    let mut seen: BTreeMap<String, usize> = BTreeMap::new();
    for file in &files {
        let rel = file.strip_prefix(&src).unwrap();
        let first = rel
            .components()
            .next()
            .unwrap()
            .as_os_str()
            .to_string_lossy();
        let module = first.trim_end_matches(".rs").to_string();
        if module == "lib" || module == "main" {
            continue;
        }
        let Some(own) = rank(&module) else {
            problems.push(format!(
                "{}: top-level module '{module}' has no layer in tests/layers.rs",
                rel.display()
            ));
            continue;
        };
        *seen.entry(module.clone()).or_default() += 1;
        let text = std::fs::read_to_string(file).unwrap();
        for used in uses(&text) {
            if used == module {
                continue;
            }
            match rank(&used) {
                Some(r) if r < own => {}
                Some(_) => problems.push(format!(
                    "{}: '{module}' uses crate::{used}, which is not in a lower layer",
                    rel.display()
                )),
                None => problems.push(format!(
                    "{}: crate::{used} is not a known top-level module",
                    rel.display()
                )),
            }
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
    // The test must have looked at something: every layer has sources.
    for (m, _) in LAYERS {
        assert!(seen.contains_key(*m), "no sources found for module '{m}'");
    }
}

#[test]
fn the_checker_sees_an_upward_use() {
    assert_eq!(
        uses("use crate::engine::spill;\n// crate::modes"),
        ["engine"]
    );
    assert_eq!(
        uses("let x = crate::plan::Prep::new(); /// crate::x"),
        ["plan"]
    );
    assert_eq!(uses("use crate::{engine, plan};"), ["{"]);
}
