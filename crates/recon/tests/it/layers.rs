//! The library's modules are layered: each may use only modules of lower
//! layers (see docs/architecture.md). This test reads the sources and fails
//! on any `crate::` path that reaches up or sideways, so an import cycle
//! cannot come back unnoticed. Inside a module, its sub-modules are layered
//! the same way ([`check_sub_layers`]; `input/` so far).

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
    ("distributed", 10),
];

fn rank(module: &str) -> Option<u32> {
    LAYERS.iter().find(|(m, _)| *m == module).map(|(_, r)| *r)
}

/// The `.rs` files below `dir`, recursively (also the function-length test's).
pub(crate) fn sources(dir: &Path, out: &mut Vec<PathBuf>) {
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
                "{}: top-level module '{module}' has no layer in tests/it/layers.rs",
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

/// Sub-modules of `input`, lowest first. A sub-module is a file or folder of
/// src/input/ (`table`, `lakehouse`), or a file of one of its folders
/// (`text::lex`) when that folder's files sit at different layers. Modules
/// of one rank may not use each other.
const INPUT_LAYERS: &[(&str, u32)] = &[
    // Locators and scan units; exact type unification; what a caller
    // passes; object stores; the CSV lexer; the exact text parsers;
    // dictionary-encoded Parquet column chunks read as Arrow dictionaries.
    ("locator", 0),
    ("types", 0),
    ("source", 0),
    ("store", 0),
    ("format::dictionary_pages", 0),
    ("format::text::lex", 0),
    ("format::text::parse", 0),
    // A table's files and formats; ORC stripes (orc-rust); text columns
    // into typed arrays; CSV dialect sniffing.
    ("discover", 1),
    ("format::orc", 1),
    ("format::text::values", 1),
    ("format::text::sniff", 1),
    // Parquet/IPC/ORC/in-memory blocks; inputs read only once, copied to a
    // spool file.
    ("format::block", 2),
    ("spool", 2),
    // One file of a table as the formats read it.
    ("format::file", 3),
    // The text reader, which sees a table's text files through a view of
    // the table (TextTable), not the Table.
    ("format::text::reader", 4),
    // The one seam through which a table reads any file's format.
    ("format::reading", 5),
    // The Table and all its methods.
    ("table", 6),
    // A table from files, a spool, or batches in memory.
    ("assemble", 7),
    // Delta and Iceberg tables as of a version; PostgreSQL tables.
    ("catalog::lakehouse", 8),
    ("catalog::postgres", 8),
    // What the user named, opened by the reader that knows it.
    ("open", 9),
];

/// Sub-modules of `modes`, lowest first.
const MODES_LAYERS: &[(&str, u32)] = &[
    // What a diff takes and gives.
    ("options", 0),
    // The stages every mode runs.
    ("stages", 1),
    // The keyless diff (whose matcher keyed mode reuses) and fingerprints.
    ("multiset", 2),
    ("fingerprint", 2),
    // The keyed diff: its own records, plus the multiset matcher for the
    // rows of duplicated and NULL keys.
    ("keyed", 3),
    // Keyed or keyless, by the options.
    ("diff", 4),
    // Many pairs of either mode.
    ("batch", 5),
];

/// Sub-modules of `distributed` (what an outside engine runs), lowest first.
const DISTRIBUTED_LAYERS: &[(&str, u32)] = &[
    // One side's digests of a batch.
    ("digester", 0),
    // The plan from schemas (which makes digesters); bucket sums of digests.
    ("plan", 1),
    ("sums", 1),
    // The driver's comparison of the sums, and the second pass's selector;
    // the `--by` breakdown and the pairing of the engine's unmatched rows.
    ("compare", 2),
    ("evidence", 2),
    // The report from what the engine counted.
    ("report", 3),
    ("tests", 4),
];

#[test]
fn distributed_sub_modules_only_use_lower_layers() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let problems = check_sub_layers(&src, "distributed", DISTRIBUTED_LAYERS);
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn modes_sub_modules_only_use_lower_layers() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let problems = check_sub_layers(&src, "modes", MODES_LAYERS);
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn input_sub_modules_only_use_lower_layers() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let problems = check_sub_layers(&src, "input", INPUT_LAYERS);
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

/// Checks the sub-modules of module `module` (the folder `src/<module>/`)
/// against `layers`, lowest first: each may use only sub-modules of lower
/// ranks. Uses are the `super::`, `self::` and `crate::<module>::` paths of
/// its code, outside comments and test modules (from `#[cfg(test)]` on, as
/// this crate places them: tests may build fixtures from any layer).
///
/// A source file belongs to the sub-module with the longest name in
/// `layers` that its module path starts with; a folder's `mod.rs` with no
/// rank of its own only declares and re-exports, and is not checked. A
/// path through the module's root resolves to what the root re-exports
/// (`pub use table::Table`); a path that resolves to no ranked sub-module
/// (a glob of the root, an item the root defines itself) is reported, as
/// is a file with no rank and a rank with no files. Returns the problems.
fn check_sub_layers(src: &Path, module: &str, layers: &[(&str, u32)]) -> Vec<String> {
    let dir = src.join(module);
    let layers: Vec<(Vec<String>, u32)> = layers
        .iter()
        .map(|(name, rank)| (name.split("::").map(String::from).collect(), *rank))
        .collect();
    let unit_of = |path: &[String]| -> Option<(String, u32)> {
        layers
            .iter()
            .filter(|(key, _)| path.starts_with(key))
            .max_by_key(|(key, _)| key.len())
            .map(|(key, rank)| (key.join("::"), *rank))
    };
    let exports = root_exports(&dir, module);
    let mut files = Vec::new();
    sources(&dir, &mut files);
    files.sort();
    let mut problems = Vec::new();
    let mut seen = std::collections::BTreeSet::new();
    for file in &files {
        let rel = file.strip_prefix(&dir).unwrap();
        let at = module_path(rel);
        let shown = format!("src/{module}/{}", rel.display());
        let is_root = rel.file_name().is_some_and(|n| n == "mod.rs");
        let Some((own, own_rank)) = unit_of(&at) else {
            if !is_root {
                problems.push(format!(
                    "{shown}: {module}::{} has no rank in tests/it/layers.rs",
                    at.join("::")
                ));
            }
            continue;
        };
        seen.insert(own.clone());
        let text = std::fs::read_to_string(file).unwrap();
        for path in local_paths(&code_of(&text), module, &at) {
            // Through the root: what it re-exports.
            let path = match path.first().and_then(|first| exports.get(first)) {
                Some(None) => continue, // re-exported from outside the module
                Some(Some(source)) => source.iter().chain(&path[1..]).cloned().collect(),
                None => path,
            };
            let named = format!("{module}::{}", path.join("::"));
            match unit_of(&path) {
                Some((used, _)) if used == own => {}
                Some((_, rank)) if rank < own_rank => {}
                Some((used, _)) => problems.push(format!(
                    "{shown}: '{own}' uses {named} ('{used}'), which is not in a lower layer"
                )),
                None => problems.push(format!(
                    "{shown}: {named} is no sub-module with a rank in tests/it/layers.rs (name the sub-module, not the root)"
                )),
            }
        }
    }
    for (key, _) in &layers {
        let key = key.join("::");
        if !seen.contains(&key) {
            problems.push(format!("no sources found for {module}::{key}"));
        }
    }
    problems
}

/// The module path of a source file below its module's folder:
/// `table.rs` is `[table]`, `text/mod.rs` is `[text]`, `mod.rs` is `[]`.
fn module_path(rel: &Path) -> Vec<String> {
    let mut path: Vec<String> = rel
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    let file = path.pop().unwrap_or_default();
    if file != "mod.rs" {
        path.push(file.trim_end_matches(".rs").to_string());
    }
    path
}

/// A source file's code: comments dropped, and test modules (from the
/// first `#[cfg(test)]` on).
fn code_of(text: &str) -> String {
    let text = text.split("#[cfg(test)]").next().unwrap_or("");
    text.lines()
        .map(|line| line.split("//").next().unwrap_or(""))
        .collect::<Vec<_>>()
        .join("\n")
}

/// What the root (`mod.rs`) of `dir` re-exports: by name, the path below
/// `module` it comes from, or None for an item from outside the module.
fn root_exports(dir: &Path, module: &str) -> BTreeMap<String, Option<Vec<String>>> {
    let text = std::fs::read_to_string(dir.join("mod.rs")).unwrap_or_default();
    let code = code_of(&text);
    let mut exports = BTreeMap::new();
    for statement in code.split(';') {
        // Attributes (`#[cfg(...)]`) may come first.
        let Some(at) = statement.find("pub use ") else {
            continue;
        };
        let tree = statement[at + "pub use ".len()..].trim();
        let mut paths = Vec::new();
        let outside = match tree.strip_prefix(&format!("crate::{module}::")) {
            Some(inner) => {
                use_tree(inner, &[], &mut paths);
                false
            }
            None => {
                use_tree(tree, &[], &mut paths);
                tree.starts_with("crate::")
            }
        };
        for path in paths {
            if let Some(name) = path.last() {
                exports.insert(name.clone(), (!outside).then_some(path));
            }
        }
    }
    exports
}

fn is_ident(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_'
}

/// The paths below `module` that `code` names with `crate::<module>::`,
/// `super::` or `self::`, for a file at module path `at`. A group
/// (`super::{a, b::C}`) gives one path per member, a glob a path ending
/// in `*`.
fn local_paths(code: &str, module: &str, at: &[String]) -> Vec<Vec<String>> {
    let absolute = format!("crate::{module}::");
    let mut out = Vec::new();
    let mut rest = code;
    let mut before: Option<char> = None;
    while let Some(c) = rest.chars().next() {
        // A path's start, not a segment inside another path.
        if before.is_none_or(|b| !is_ident(b) && b != ':') {
            let mut base = at.to_vec();
            let mut tail = None;
            if let Some(t) = rest.strip_prefix(absolute.as_str()) {
                base.clear();
                tail = Some(t);
            } else if let Some(t) = rest.strip_prefix("self::") {
                tail = Some(t);
            } else if rest.starts_with("super::") {
                let mut t = rest;
                while let Some(u) = t.strip_prefix("super::") {
                    base.pop();
                    t = u;
                }
                tail = Some(t);
            }
            if let Some(t) = tail {
                use_tree(t, &base, &mut out);
                before = Some(':');
                rest = t;
                continue;
            }
        }
        before = Some(c);
        rest = &rest[c.len_utf8()..];
    }
    out
}

/// The paths a use tree (what follows `prefix::`) names, each after `base`.
fn use_tree(tree: &str, base: &[String], out: &mut Vec<Vec<String>>) {
    let tree = tree.trim_start();
    if let Some(inner) = tree.strip_prefix('{') {
        let (mut depth, mut start) = (0, 0);
        let mut members = Vec::new();
        for (i, c) in inner.char_indices() {
            match c {
                '{' => depth += 1,
                '}' if depth == 0 => {
                    members.push(&inner[start..i]);
                    break;
                }
                '}' => depth -= 1,
                ',' if depth == 0 => {
                    members.push(&inner[start..i]);
                    start = i + 1;
                }
                _ => {}
            }
        }
        for m in members.iter().map(|m| m.trim()).filter(|m| !m.is_empty()) {
            if m == "self" || m.starts_with("self ") {
                out.push(base.to_vec());
            } else {
                use_tree(m, base, out);
            }
        }
        return;
    }
    let mut path = base.to_vec();
    if tree.starts_with('*') {
        path.push("*".into());
        out.push(path);
        return;
    }
    let name: String = tree.chars().take_while(|&c| is_ident(c)).collect();
    if name.is_empty() {
        out.push(path);
        return;
    }
    path.push(name.clone());
    match tree[name.len()..].strip_prefix("::") {
        Some(rest) => use_tree(rest, &path, out),
        None => out.push(path),
    }
}

#[test]
fn the_sub_module_checker_resolves_paths() {
    let at = |p: &str| -> Vec<String> { p.split("::").map(String::from).collect() };
    let paths = |code: &str, file: &str| -> Vec<String> {
        local_paths(code, "input", &at(file))
            .iter()
            .map(|p| p.join("::"))
            .collect()
    };
    assert_eq!(
        paths("use super::lex::{Dialect, Lexer};", "text::reader"),
        ["text::lex::Dialect", "text::lex::Lexer"]
    );
    assert_eq!(
        paths(
            "use super::{table::Table, text::{self, reader}};\nlet x = super::super::y::Z;",
            "open"
        ),
        ["table::Table", "text", "text::reader", "y::Z"]
    );
    assert_eq!(
        paths(
            "use crate::input::discover::Compression; crate::config::X; pub(super) fn f() {}",
            "text::reader"
        ),
        ["discover::Compression"]
    );
    assert_eq!(
        paths("use super::*; self::a::b(); Self::c()", "table"),
        ["*", "table::a::b"]
    );
}

#[test]
fn the_sub_module_checker_fails_on_an_upward_use() {
    let src = tempfile::tempdir().unwrap();
    let m = src.path().join("m");
    std::fs::create_dir_all(m.join("c")).unwrap();
    let write = |f: &str, code: &str| std::fs::write(m.join(f), code).unwrap();
    write(
        "mod.rs",
        "mod a;\nmod b;\nmod c;\npub use b::Thing;\npub use crate::x::Y;\n",
    );
    write("a.rs", "use super::b::Thing;\nuse super::Y;\n");
    write("b.rs", "pub struct Thing;\nfn f() { crate::m::a::g() }\n");
    write("c/mod.rs", "pub mod d;\n");
    write(
        "c/d.rs",
        "use super::super::Thing; // b, lower\nuse super::*;\n#[cfg(test)]\nuse crate::m::a::g;\n",
    );
    let layers = [("b", 0), ("a", 1), ("c::d", 2), ("gone", 3)];
    assert_eq!(
        check_sub_layers(src.path(), "m", &layers),
        [
            "src/m/b.rs: 'b' uses m::a::g ('a'), which is not in a lower layer",
            "src/m/c/d.rs: m::c::* is no sub-module with a rank in tests/it/layers.rs (name the sub-module, not the root)",
            "no sources found for m::gone",
        ]
    );
}
