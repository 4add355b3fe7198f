//! One line for a TOML error in a rules or batch file: the file, the line,
//! the key and what is wrong, with the closest expected key when a key or
//! value is unknown:
//!
//! ```text
//! rules.toml: line 2: unknown key 'exlcude': did you mean 'exclude'? (expected one of: by_position, …)
//! rules.toml: line 5, key 'round.amount': invalid type: string "x", expected u32
//! rules.toml: line 3, column 11: unclosed array, expected `]`
//! ```
//!
//! The `toml` crate reports a byte span and serde's message; the line comes
//! from the span over the text, and the key from the document's spanned
//! tree (the deepest key whose name or value holds the span).

use std::ops::Range;
use std::path::Path;

use toml::de::{DeTable, DeValue};
use toml::Spanned;

/// The message for `err`, raised while reading `text` from `path`.
pub(crate) fn describe(path: &Path, text: &str, err: &toml::de::Error) -> String {
    let file = path.display();
    let message = err.message().trim_end();
    let Some(span) = err.span() else {
        return format!("{file}: {message}");
    };
    let (line, column) = line_column(text, span.start);
    // A document that does not parse has no keys to name: point at the column.
    let Ok(doc) = DeTable::parse(text) else {
        let duplicate = (message == "duplicate key")
            .then(|| text.get(span.clone()))
            .flatten()
            .map(|k| format!(" '{k}'"))
            .unwrap_or_default();
        return format!("{file}: line {line}, column {column}: {message}{duplicate}");
    };
    let mut path = Vec::new();
    let found = key_at(doc.get_ref(), &span, &mut path);
    let key = found.then(|| dotted(&path));
    if let Some(unknown) = Unknown::parse(message) {
        // The span is the unknown key itself, so its table is the path's parent.
        let within = match path.split_last() {
            Some((_, table)) if found && !table.is_empty() => format!(" in {}", header(table)),
            _ => String::new(),
        };
        return match unknown.what {
            "field" => format!(
                "{file}: line {line}: unknown key '{}'{within}{}",
                unknown.name,
                unknown.hint()
            ),
            _ => format!(
                "{file}: line {line}, key '{}': unknown value '{}'{}",
                key.as_deref().unwrap_or("?"),
                unknown.name,
                unknown.hint()
            ),
        };
    }
    if let Some(missing) = backticked(message, "missing field ") {
        if found && !path.is_empty() {
            let table = header(&path);
            return format!("{file}: line {line}, in {table}: missing key '{missing}'");
        }
        return format!("{file}: line {line}: missing key '{missing}'");
    }
    match key {
        Some(k) => format!("{file}: line {line}, key '{k}': {message}"),
        None => format!("{file}: line {line}, column {column}: {message}"),
    }
}

/// One key of a path, and whether its value is an array (of tables).
struct Step {
    key: String,
    array: bool,
}

fn dotted(path: &[Step]) -> String {
    path.iter()
        .map(|s| s.key.as_str())
        .collect::<Vec<_>>()
        .join(".")
}

/// How the file spells the table at `path`: `[defaults.run]`, `[[pair]]`.
fn header(path: &[Step]) -> String {
    match path.last() {
        Some(last) if last.array => format!("[[{}]]", dotted(path)),
        _ => format!("[{}]", dotted(path)),
    }
}

/// 1-based line and column (in characters) of byte `at` of `text`.
fn line_column(text: &str, at: usize) -> (usize, usize) {
    let mut at = at.min(text.len());
    while !text.is_char_boundary(at) {
        at -= 1;
    }
    let before = &text[..at];
    let line = before.matches('\n').count() + 1;
    let start = before.rfind('\n').map_or(0, |i| i + 1);
    (line, before[start..].chars().count() + 1)
}

/// Pushes onto `path` the keys down to the deepest entry whose key or value
/// holds `span`; false when none does. Tables are searched whatever their
/// own span, since a TOML table's keys need not sit together.
fn key_at(table: &DeTable<'_>, span: &Range<usize>, path: &mut Vec<Step>) -> bool {
    for (k, v) in table {
        path.push(Step {
            key: k.get_ref().to_string(),
            array: matches!(v.get_ref(), DeValue::Array(_)),
        });
        if in_value(v, span, path) || holds(&k.span(), span) || holds(&v.span(), span) {
            return true;
        }
        path.pop();
    }
    false
}

/// Searches inside a value (tables, and the tables of arrays).
fn in_value(v: &Spanned<DeValue<'_>>, span: &Range<usize>, path: &mut Vec<Step>) -> bool {
    match v.get_ref() {
        DeValue::Table(t) => key_at(t, span, path),
        DeValue::Array(items) => items.into_iter().any(|item| in_value(item, span, path)),
        _ => false,
    }
}

fn holds(outer: &Range<usize>, inner: &Range<usize>) -> bool {
    outer.start <= inner.start && inner.end <= outer.end && outer.start < outer.end
}

/// The first `` `name` `` after `prefix` in `message`.
fn backticked<'m>(message: &'m str, prefix: &str) -> Option<&'m str> {
    let rest = message.strip_prefix(prefix)?.strip_prefix('`')?;
    rest.split_once('`').map(|(name, _)| name)
}

/// Serde's "unknown field `x`, expected one of `a`, `b`" (or "unknown variant").
struct Unknown<'m> {
    what: &'m str,
    name: &'m str,
    expected: Vec<&'m str>,
}

impl<'m> Unknown<'m> {
    fn parse(message: &'m str) -> Option<Unknown<'m>> {
        let rest = message.strip_prefix("unknown ")?;
        let (what, rest) = rest.split_once(' ')?;
        if what != "field" && what != "variant" {
            return None;
        }
        let name = backticked(rest, "")?;
        let after = &rest[name.len() + 2..];
        // The names are every other piece between backticks.
        let expected = after.split('`').skip(1).step_by(2).collect();
        Some(Unknown {
            what,
            name,
            expected,
        })
    }

    /// ": did you mean 'x'? (expected one of: a, b)", or as much as is known.
    fn hint(&self) -> String {
        if self.expected.is_empty() {
            return String::new();
        }
        let closest = self
            .expected
            .iter()
            .map(|e| (edit_distance(self.name, e), *e))
            .min()
            .filter(|(d, _)| *d <= (self.name.chars().count() / 3).max(1));
        let mean = closest
            .map(|(_, e)| format!(": did you mean '{e}'?"))
            .unwrap_or_default();
        format!("{mean} (expected one of: {})", self.expected.join(", "))
    }
}

/// Edits (insertions, deletions, substitutions, swaps of neighbours) from `a` to `b`.
fn edit_distance(a: &str, b: &str) -> usize {
    let (a, b): (Vec<char>, Vec<char>) = (a.chars().collect(), b.chars().collect());
    let mut d = vec![vec![0usize; b.len() + 1]; a.len() + 1];
    for (i, row) in d.iter_mut().enumerate() {
        row[0] = i;
    }
    d[0] = (0..=b.len()).collect();
    for i in 1..=a.len() {
        for j in 1..=b.len() {
            let cost = usize::from(a[i - 1] != b[j - 1]);
            let mut best = (d[i - 1][j] + 1)
                .min(d[i][j - 1] + 1)
                .min(d[i - 1][j - 1] + cost);
            if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                best = best.min(d[i - 2][j - 2] + 1);
            }
            d[i][j] = best;
        }
    }
    d[a.len()][b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn distances_count_a_swap_as_one_edit() {
        assert_eq!(edit_distance("exlcude", "exclude"), 1);
        assert_eq!(edit_distance("trim", "trim"), 0);
        assert_eq!(edit_distance("tim", "trim"), 1);
        assert_eq!(edit_distance("map", "key"), 3);
    }

    #[test]
    fn lines_and_columns_count_from_one_in_characters() {
        let text = "a = 1\nbé = 2\n";
        assert_eq!(line_column(text, 0), (1, 1));
        assert_eq!(line_column(text, 6), (2, 1));
        assert_eq!(line_column(text, 10), (2, 4));
        assert_eq!(line_column(text, 999), (3, 1));
    }

    #[test]
    fn serde_unknown_messages_are_read() {
        let u = Unknown::parse("unknown field `exlcude`, expected one of `by_position`, `exclude`")
            .unwrap();
        assert_eq!((u.what, u.name), ("field", "exlcude"));
        assert_eq!(u.expected, ["by_position", "exclude"]);
        assert_eq!(
            u.hint(),
            ": did you mean 'exclude'? (expected one of: by_position, exclude)"
        );
        let v = Unknown::parse("unknown variant `zzz`, expected `diff` or `quick`").unwrap();
        assert_eq!(v.expected, ["diff", "quick"]);
        assert_eq!(v.hint(), " (expected one of: diff, quick)");
        assert!(Unknown::parse("invalid type: string \"x\", expected u32").is_none());
    }
}
