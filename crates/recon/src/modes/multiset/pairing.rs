//! Keyless pairing: among the unmatched rows, a source-only row and a
//! target-only row that agree on every compared column but one (or two)
//! are shown as one changed row, `region="south": amount 200 -> 201`.
//!
//! Rows are grouped by the digests of every column except the ones allowed
//! to differ; a group holding exactly one source row and one target row that
//! differ in all of those columns is a pair. A group with more rows on a side
//! is ambiguous: it is counted and left unpaired, never guessed. Pairs
//! differing in one column are found first, and their rows are not paired
//! again. The pairing is a reading aid beside the EXCEPT ALL counts, which
//! it never changes.

use std::collections::{BTreeMap, HashMap};

use crate::digest::encode::column_constants;
use crate::error::Result;
use crate::evidence::UnmatchedRow;
use crate::report::{ChangedValue, PairSample, PairsReport};
use crate::side::Side;

/// Distinct unmatched rows per side up to which pairing runs.
pub const PAIR_MOST: usize = 20_000;

/// Most columns a pair may differ in.
pub(crate) const MOST_CHANGED: usize = 2;

/// A source-only row and a target-only row alike but for `columns`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Pair {
    /// Indices into the source's and the target's unmatched rows.
    pub source: usize,
    pub target: usize,
    /// Compared columns (plan order) whose values differ.
    pub columns: Vec<usize>,
}

/// What pairing found.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Pairing {
    pub pairs: Vec<Pair>,
    /// Groups that matched more than one row on a side, and their rows.
    pub ambiguous_groups: u64,
    pub ambiguous_rows: u64,
}

/// Every combination of `k` of `n` columns, in lexicographic order.
fn combinations(n: usize, k: usize) -> Vec<Vec<usize>> {
    fn go(start: usize, n: usize, k: usize, cur: &mut Vec<usize>, out: &mut Vec<Vec<usize>>) {
        if cur.len() == k {
            out.push(cur.clone());
            return;
        }
        for c in start..n {
            cur.push(c);
            go(c + 1, n, k, cur, out);
            cur.pop();
        }
    }
    let mut out = Vec::new();
    go(0, n, k, &mut Vec::new(), &mut out);
    out
}

/// Columns up to which pairs differing in two columns are looked for
/// (C(n, 2) groupings; one-column pairs are always looked for).
const TWO_COLUMNS_MOST: usize = 64;

/// Pairs the unmatched rows of the two sides (`columns` compared columns).
pub(crate) fn pair(source: &[UnmatchedRow], target: &[UnmatchedRow], columns: usize) -> Pairing {
    let mut out = Pairing::default();
    let mut used = [vec![false; source.len()], vec![false; target.len()]];
    // A grouping key: a weighted sum of the column digests (odd weights
    // per column), computed once per row; leaving columns out subtracts
    // their terms. Candidates are verified digest by digest, so a key
    // collision can only cost a pair, never make a wrong one.
    let weights: Vec<u128> = (0..columns).map(|c| column_constants(c).1).collect();
    let key_all = |r: &UnmatchedRow| {
        r.digests
            .iter()
            .zip(&weights)
            .fold(0u128, |acc, (&d, &w)| acc.wrapping_add(d.wrapping_mul(w)))
    };
    let sums = [
        source.iter().map(key_all).collect::<Vec<_>>(),
        target.iter().map(key_all).collect::<Vec<_>>(),
    ];
    let most = if columns > TWO_COLUMNS_MOST {
        1
    } else {
        MOST_CHANGED
    };
    // At least one column must agree, or "pairs" would be arbitrary.
    for k in 1..=most.min(columns.saturating_sub(1)) {
        for changed in combinations(columns, k) {
            let key = |side: usize, i: usize, r: &UnmatchedRow| {
                changed.iter().fold(sums[side][i], |acc, &c| {
                    acc.wrapping_sub(r.digests[c].wrapping_mul(weights[c]))
                })
            };
            let mut groups: HashMap<u128, (Vec<usize>, Vec<usize>)> = HashMap::new();
            for (i, r) in source.iter().enumerate().filter(|(i, _)| !used[0][*i]) {
                groups.entry(key(0, i, r)).or_default().0.push(i);
            }
            for (i, r) in target.iter().enumerate().filter(|(i, _)| !used[1][*i]) {
                if let Some(g) = groups.get_mut(&key(1, i, r)) {
                    g.1.push(i);
                }
            }
            let mut found: Vec<(Vec<usize>, Vec<usize>)> = groups
                .into_values()
                .filter(|(s, t)| !s.is_empty() && !t.is_empty())
                .collect();
            found.sort();
            for (s, t) in found {
                let same = |a: &UnmatchedRow, b: &UnmatchedRow| {
                    (0..columns).all(|c| changed.contains(&c) || a.digests[c] == b.digests[c])
                };
                let all_differ = |a: &UnmatchedRow, b: &UnmatchedRow| {
                    changed.iter().all(|&c| a.digests[c] != b.digests[c])
                };
                if s.len() == 1 && t.len() == 1 {
                    let (a, b) = (&source[s[0]], &target[t[0]]);
                    if same(a, b) && all_differ(a, b) {
                        used[0][s[0]] = true;
                        used[1][t[0]] = true;
                        out.pairs.push(Pair {
                            source: s[0],
                            target: t[0],
                            columns: changed.clone(),
                        });
                    }
                    continue;
                }
                out.ambiguous_groups += 1;
                out.ambiguous_rows += (s.len() + t.len()) as u64;
                for &i in &s {
                    used[0][i] = true;
                }
                for &i in &t {
                    used[1][i] = true;
                }
            }
        }
    }
    out.pairs
        .sort_by_key(|p| (source[p.source].locator, target[p.target].locator));
    out
}

/// The report of a pairing that did not run: a side had more than
/// [`PAIR_MOST`] distinct unmatched rows.
pub(crate) fn skipped() -> PairsReport {
    PairsReport {
        paired: 0,
        ambiguous_groups: 0,
        ambiguous_rows: 0,
        by_column: Default::default(),
        skipped: Some(format!(
            "more than {PAIR_MOST} distinct unmatched rows on a side"
        )),
        samples: Vec::new(),
    }
}

/// The report of what [`pair`] found, with the first `sample` pairs'
/// values: `render(side, rows)` renders the given rows of a side (indices
/// into `rows[side]`) as samples show them, each as its table's columns;
/// `columns[side][c]` is compared column `c`'s position among those.
/// `names` are the compared columns' names, in plan order.
pub(crate) fn report(
    names: &[String],
    rows: [&[UnmatchedRow]; 2],
    found: &Pairing,
    sample: usize,
    columns: [&[usize]; 2],
    mut render: impl FnMut(Side, Vec<usize>) -> Result<Vec<Vec<Option<String>>>>,
) -> Result<PairsReport> {
    let mut by_column: BTreeMap<String, u64> = Default::default();
    for p in &found.pairs {
        for &c in &p.columns {
            *by_column.entry(names[c].clone()).or_default() += 1;
        }
    }
    let shown = &found.pairs[..found.pairs.len().min(sample)];
    let s_vals = render(Side::Source, shown.iter().map(|p| p.source).collect())?;
    let t_vals = render(Side::Target, shown.iter().map(|p| p.target).collect())?;
    let samples = shown
        .iter()
        .zip(s_vals.into_iter().zip(t_vals))
        .map(|(p, (sv, tv))| {
            let mut same = serde_json::Map::new();
            let mut changed = Vec::new();
            for (c, name) in names.iter().enumerate() {
                let s = sv.get(columns[0][c]).cloned().flatten();
                if p.columns.contains(&c) {
                    changed.push(ChangedValue {
                        column: name.clone(),
                        source: s,
                        target: tv.get(columns[1][c]).cloned().flatten(),
                    });
                } else {
                    let value = s.map_or(serde_json::Value::Null, serde_json::Value::String);
                    same.insert(name.clone(), value);
                }
            }
            PairSample {
                same,
                changed,
                source_count: rows[0][p.source].excess,
                target_count: rows[1][p.target].excess,
            }
        })
        .collect();
    Ok(PairsReport {
        paired: found.pairs.len() as u64,
        ambiguous_groups: found.ambiguous_groups,
        ambiguous_rows: found.ambiguous_rows,
        by_column,
        skipped: None,
        samples,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(locator: u64, digests: &[u128]) -> UnmatchedRow {
        UnmatchedRow {
            locator,
            excess: 1,
            digests: digests.to_vec(),
        }
    }

    #[test]
    fn one_changed_column_pairs_two_rows() {
        let s = [row(0, &[1, 2, 3]), row(1, &[7, 8, 9])];
        let t = [row(5, &[1, 2, 4])];
        let p = pair(&s, &t, 3);
        assert_eq!(
            p.pairs,
            vec![Pair {
                source: 0,
                target: 0,
                columns: vec![2]
            }]
        );
        assert_eq!(p.ambiguous_groups, 0);
    }

    #[test]
    fn two_changed_columns_pair_only_after_one_column_pairs() {
        let s = [row(0, &[1, 2, 3]), row(1, &[10, 20, 30])];
        let t = [row(5, &[1, 5, 6]), row(6, &[10, 20, 31])];
        let p = pair(&s, &t, 3);
        assert_eq!(p.pairs.len(), 2);
        assert_eq!(p.pairs[0].columns, vec![1, 2]);
        assert_eq!(p.pairs[1].columns, vec![2]);
    }

    #[test]
    fn an_ambiguous_group_is_counted_not_guessed() {
        // Two target rows differ from the one source row in the same column.
        let s = [row(0, &[1, 2])];
        let t = [row(5, &[1, 3]), row(6, &[1, 4])];
        let p = pair(&s, &t, 2);
        assert!(p.pairs.is_empty());
        assert_eq!((p.ambiguous_groups, p.ambiguous_rows), (1, 3));
        // A single column cannot pair anything: no column would agree.
        assert!(pair(&[row(0, &[1])], &[row(1, &[2])], 1).pairs.is_empty());
    }
}
