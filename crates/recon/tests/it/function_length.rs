//! No function in `crates/*/src` is longer than [`LIMIT`] lines (issue 42):
//! a long function is where two jobs hide in one. The check reads the
//! sources and counts each `fn`'s lines from its signature to the brace
//! that closes its body; test code is counted too.

use std::path::Path;

use crate::layers::sources;

const LIMIT: usize = 150;

/// A line with its string and character literals emptied and its comment
/// dropped, so braces inside them are not counted.
fn code(line: &str) -> String {
    let mut out = String::with_capacity(line.len());
    let mut chars = line.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '"' => {
                while let Some(d) = chars.next() {
                    match d {
                        '\\' => {
                            chars.next();
                        }
                        '"' => break,
                        _ => {}
                    }
                }
                out.push_str("\"\"");
            }
            // A char literal ('{', '\'') but not a lifetime ('a): a literal
            // closes within three characters.
            '\'' => {
                let ahead: String = chars.clone().take(3).collect();
                let close = if let Some(escaped) = ahead.strip_prefix('\\') {
                    escaped.find('\'').map(|i| i + 2)
                } else {
                    ahead.chars().nth(1).filter(|&c| c == '\'').map(|_| 2)
                };
                match close {
                    Some(n) => {
                        for _ in 0..n {
                            chars.next();
                        }
                        out.push_str("''");
                    }
                    None => out.push('\''),
                }
            }
            '/' if chars.peek() == Some(&'/') => break,
            _ => out.push(c),
        }
    }
    out
}

/// Whether `line` starts a function: `fn name` after optional qualifiers.
fn starts_fn(line: &str) -> bool {
    let mut rest = line.trim_start();
    if let Some(r) = rest.strip_prefix("pub") {
        rest = r.trim_start();
        if rest.starts_with('(') {
            match rest.find(')') {
                Some(i) => rest = rest[i + 1..].trim_start(),
                None => return false,
            }
        }
    }
    for q in ["const ", "async ", "unsafe ", "extern \"C\" "] {
        if let Some(r) = rest.strip_prefix(q) {
            rest = r.trim_start();
        }
    }
    rest.starts_with("fn ")
}

/// The functions of `text` longer than `limit` lines, as (first line, length).
fn long_functions(text: &str, limit: usize) -> Vec<(usize, usize)> {
    let lines: Vec<String> = text.lines().map(code).collect();
    let mut found = Vec::new();
    for (start, line) in lines.iter().enumerate() {
        if !starts_fn(line) {
            continue;
        }
        let mut depth = 0i64;
        let mut opened = false;
        for (end, l) in lines.iter().enumerate().skip(start) {
            for c in l.chars() {
                match c {
                    '{' => {
                        depth += 1;
                        opened = true;
                    }
                    '}' => depth -= 1,
                    _ => {}
                }
            }
            if opened && depth <= 0 {
                let length = end - start + 1;
                if length > limit {
                    found.push((start + 1, length));
                }
                break;
            }
            // A declaration without a body (in a trait or `extern` block).
            if !opened && l.trim_end().ends_with(';') {
                break;
            }
        }
    }
    found
}

#[test]
fn no_function_is_longer_than_the_limit() {
    let crates = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let mut files = Vec::new();
    for entry in std::fs::read_dir(&crates).unwrap() {
        let src = entry.unwrap().path().join("src");
        if src.is_dir() {
            sources(&src, &mut files);
        }
    }
    assert!(files.len() > 50, "the sources were not found");
    let mut long = Vec::new();
    for file in files {
        let text = std::fs::read_to_string(&file).unwrap();
        for (line, length) in long_functions(&text, LIMIT) {
            long.push(format!("{}:{line}: {length} lines", file.display()));
        }
    }
    assert!(
        long.is_empty(),
        "functions over {LIMIT} lines:\n{}",
        long.join("\n")
    );
}

#[test]
fn the_checker_measures_a_function() {
    let text = "pub(crate) fn f(x: &str) -> char {\n    let s = \"}}\";\n    // }\n    let c = '}';\n    let l: &'static str = s;\n    c\n}\nfn g();\n";
    assert_eq!(long_functions(text, 6), vec![(1, 7)]);
    assert_eq!(long_functions(text, 7), vec![]);
}
