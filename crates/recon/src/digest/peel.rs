//! The peeling decode shared by the sketch's sub-tables ([`super::iblt`])
//! and the fingerprint buckets beside them ([`super::multiset`]): take
//! out every digest a cell gives away, until none does.

/// A table a peeling decode takes digests out of.
pub(crate) trait Peelable {
    /// Number of cells.
    fn cells(&self) -> usize;
    /// Whether cell `i` holds nothing.
    fn is_zero_at(&self, i: usize) -> bool;
    /// The digest and count that cell `i` holds when it holds exactly one
    /// digest, which indexes it.
    fn pure_at(&self, i: usize) -> Option<(u128, i64)>;
    /// Takes `c` copies of `d` out of the cells it indexes, pushing them.
    fn take(&mut self, d: u128, c: i64, changed: &mut Vec<usize>);
}

/// What a peeling decode found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Peeled {
    /// Digests with their copy-count difference (source − target), by digest.
    pub differences: Vec<(u128, i64)>,
    /// Every cell of every table was emptied: the differences are the whole
    /// difference. Otherwise they are a part of it, to be used only as such.
    pub complete: bool,
}

/// Peels pure cells out of `tables` (which index the same digests, each
/// by its own bits) until none is left.
pub(crate) fn peel(tables: &mut [&mut dyn Peelable]) -> Peeled {
    let mut queue: Vec<(usize, usize)> = Vec::new();
    for (t, table) in tables.iter().enumerate() {
        queue.extend(
            (0..table.cells())
                .filter(|&i| !table.is_zero_at(i))
                .map(|i| (t, i)),
        );
    }
    // A false pure cell (a 2⁻⁶⁴ chance per test) could in principle make
    // peeling cycle; a bound on the steps ends it as a failed decode.
    let mut budget: usize = 4 * tables.iter().map(|t| t.cells()).sum::<usize>() + 64;
    let mut found: Vec<(u128, i64)> = Vec::new();
    let mut changed = Vec::new();
    while let Some((t, i)) = queue.pop() {
        let Some((d, c)) = tables[t].pure_at(i) else {
            continue;
        };
        if budget == 0 {
            break;
        }
        budget -= 1;
        found.push((d, c));
        for (u, table) in tables.iter_mut().enumerate() {
            changed.clear();
            table.take(d, c, &mut changed);
            queue.extend(changed.iter().map(|&j| (u, j)));
        }
    }
    let complete = tables
        .iter()
        .all(|t| (0..t.cells()).all(|i| t.is_zero_at(i)));
    found.sort_unstable();
    let mut differences: Vec<(u128, i64)> = Vec::with_capacity(found.len());
    for (d, c) in found {
        match differences.last_mut() {
            Some(last) if last.0 == d => last.1 = last.1.wrapping_add(c),
            _ => differences.push((d, c)),
        }
    }
    differences.retain(|&(_, c)| c != 0);
    Peeled {
        differences,
        complete,
    }
}
