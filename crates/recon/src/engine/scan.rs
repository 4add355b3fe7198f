//! The scan: stream both tables, digest every row, and hand each batch's
//! digests and locators to a [`RowSink`].
//!
//! Row groups (Parquet), record batches (IPC) and 2 MiB chunks of whole
//! records (text, cut by reader threads) are the units of work; workers pull
//! them from a queue, so there is no lock in the per-row path. The driver
//! owns the feeders, the units, conversion refusals, cancellation and
//! progress; what happens to the digests is the sink's business
//! (fingerprint buckets, partition records into spill, later per-column
//! fingerprints). Each worker owns its sink, and the caller merges them.

use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use arrow::array::ArrayRef;

use super::context::{CancelToken, Progress};
use crate::digest::{RowEncoder, ValueSum};
use crate::error::{guard, ReconError, Result};
use crate::input::{Locators, Table, Unit};
use crate::plan::{Prep, Refused};
use crate::side::Side;

/// Bytes of text handed to a worker at once.
const TEXT_CHUNK: usize = 2 << 20;

/// Row ranges (first position, rows; ascending, disjoint) to read, per
/// (file, block) unit.
pub(crate) type RowRanges = std::collections::HashMap<(usize, usize), Vec<(u64, u64)>>;

/// Everything the scan needs to know about one side.
#[derive(Clone)]
pub(crate) struct ScanSide<'a> {
    pub table: &'a Table,
    /// Top-level column indices of the compared columns, in plan order.
    pub columns: Vec<usize>,
    /// Per compared column: conversion and normalization before hashing.
    pub prep: Vec<Prep>,
    /// Read only these (file, block) units (a targeted second pass).
    pub only_units: Option<std::collections::HashSet<(usize, usize)>>,
    /// Of those units, read only these row ranges (first position, rows),
    /// ascending and disjoint; a unit not listed is read whole.
    pub only_rows: Option<Arc<RowRanges>>,
    /// Read nothing of this side (a mode that reads one table).
    pub skip: bool,
}

impl<'a> ScanSide<'a> {
    /// A value refused in a row fetched back by locator, as an error naming
    /// the file (the first message; the scan read those rows already).
    pub(crate) fn refused(&self, refused: Refused) -> ReconError {
        refusal_error(&self.table.path, refused)
    }

    /// The compared columns of a batch fetched back by locator (the
    /// table's full rows), after conversions and rules.
    pub(crate) fn prepare_fetched(
        &self,
        batch: &arrow::array::RecordBatch,
    ) -> Result<Vec<ArrayRef>> {
        let cols: Vec<ArrayRef> = self
            .columns
            .iter()
            .map(|&c| batch.column(c).clone())
            .collect();
        prepare(&self.prep, &cols).map_err(|r| self.refused(r))
    }

    /// The same side, reading only these (file, block) units.
    pub(crate) fn only(&self, units: std::collections::HashSet<(usize, usize)>) -> ScanSide<'a> {
        ScanSide {
            table: self.table,
            columns: self.columns.clone(),
            prep: self.prep.clone(),
            only_units: Some(units),
            only_rows: None,
            skip: self.skip,
        }
    }

    /// The same side, reading only these row ranges (first position, rows)
    /// of these (file, block) units.
    pub(crate) fn only_slices(&self, slices: RowRanges) -> ScanSide<'a> {
        let mut side = self.only(slices.keys().copied().collect());
        side.only_rows = Some(Arc::new(slices));
        side
    }
}

/// One scanned batch of one side, as a sink sees it.
pub(crate) struct Batch<'b> {
    /// The row digest of every row.
    pub digests: &'b [u128],
    /// Per compared column (plan order), every row's value digest; empty
    /// unless [`ScanConfig::per_column`] asked for [`ColumnDigests::Lists`].
    pub columns: &'b [Vec<u128>],
    /// Per compared column, the batch's count and sum of non-NULL value
    /// digests; empty unless asked for ([`ColumnDigests::Totals`]).
    pub totals: &'b [ValueSum],
    /// The compared columns after conversion and rules, in plan order.
    pub arrays: &'b [ArrayRef],
    pub locators: Locators<'b>,
}

impl Batch<'_> {
    pub(crate) fn len(&self) -> usize {
        self.digests.len()
    }
}

/// What a worker does with the digests of each batch it scans.
pub(crate) trait RowSink: Send {
    /// The worker starts reading `unit` of `side`; its batches follow.
    fn start_unit(&mut self, _side: Side, _unit: &Unit) -> Result<()> {
        Ok(())
    }
    /// One batch of `side`.
    fn rows(&mut self, side: Side, batch: &Batch<'_>) -> Result<()>;
    /// The worker has scanned its last unit.
    fn finish(&mut self) -> Result<()>;
}

/// What a scan hands its sinks per compared column.
pub(crate) enum ColumnDigests {
    /// Nothing: the row digests only.
    None,
    /// Every row's value digest of the marked columns (keyed mode; a
    /// fingerprint by group).
    Lists(std::sync::Arc<[bool]>),
    /// Per batch, each column's count and sum of non-NULL value digests
    /// (a whole-table fingerprint), added up as the digests are computed.
    Totals,
}

/// Settings shared by the scan workers.
pub(crate) struct ScanConfig<'a> {
    pub threads: usize,
    pub batch_size: usize,
    /// What the sinks get per column besides the row digests.
    pub per_column: ColumnDigests,
    pub cancel: &'a CancelToken,
    pub progress: &'a Progress,
}

/// What a scan read: each worker's sink, and the rows hashed per side.
pub(crate) struct Scanned<S> {
    pub sinks: Vec<S>,
    pub rows: [u64; 2],
}

struct Worker<'a, S> {
    cfg: &'a ScanConfig<'a>,
    sides: &'a [ScanSide<'a>; 2],
    sink: S,
    encoder: RowEncoder,
    digests: Vec<u128>,
    columns: Vec<Vec<u128>>,
    totals: Vec<ValueSum>,
    rows: [u64; 2],
}

impl<S: RowSink> Worker<'_, S> {
    fn run_unit(&mut self, side: Side, unit: &Unit) -> Result<()> {
        let cfg = self.cfg;
        let scan = &self.sides[side.index()];
        let table = scan.table;
        let path = table.file_path(unit.file()).to_path_buf();
        self.sink.start_unit(side, unit)?;
        let (sink, encoder, digests, per_column, totals) = (
            &mut self.sink,
            &mut self.encoder,
            &mut self.digests,
            &mut self.columns,
            &mut self.totals,
        );
        let mut hashed = 0u64;
        let read = table.read_unit(unit, &scan.columns, cfg.batch_size, &mut |cols, locs| {
            if cfg.cancel.is_cancelled() {
                return Err(ReconError::Interrupted);
            }
            let kept: Vec<u64>;
            let (columns, locs) = match prepare(&scan.prep, cols) {
                Ok(columns) => (columns, locs),
                Err(refused) => {
                    // Values a conversion refuses are errors, or with
                    // --max-parse-errors counted as drift like text that does
                    // not parse: their rows leave the comparison.
                    let rows = cols.first().map_or(0, |c| c.len());
                    let keep = count_refusals(table, &path, locs, rows, refused)?;
                    let mask = arrow::array::BooleanArray::from(keep.clone());
                    let filtered = cols
                        .iter()
                        .map(|c| {
                            arrow::compute::filter(c.as_ref(), &mask)
                                .map_err(|e| ReconError::arrow(&path, e))
                        })
                        .collect::<Result<Vec<_>>>()?;
                    kept = (0..keep.len())
                        .filter(|&i| keep[i])
                        .map(|i| locs.get(i))
                        .collect();
                    let columns = prepare(&scan.prep, &filtered).map_err(|r| {
                        ReconError::Internal(format!("a conversion refused a kept row: {r:?}"))
                    })?;
                    (columns, Locators::List(&kept))
                }
            };
            digests.clear();
            for c in per_column.iter_mut() {
                c.clear();
            }
            totals.clear();
            match cfg.per_column {
                ColumnDigests::None => encoder.digests(&columns, digests),
                ColumnDigests::Lists(_) => {
                    encoder.digests_with_columns(&columns, digests, Some(&mut *per_column))
                }
                ColumnDigests::Totals => encoder.digests_with_totals(&columns, digests, totals),
            }
            .map_err(|m| ReconError::input(&path, m))?;
            cfg.progress
                .rows_scanned
                .fetch_add(digests.len() as u64, Ordering::Relaxed);
            hashed += digests.len() as u64;
            sink.rows(
                side,
                &Batch {
                    digests,
                    columns: per_column,
                    totals,
                    arrays: &columns,
                    locators: locs,
                },
            )
        })?;
        if let Unit::Stream { file } = unit {
            table.files[*file].set_extent(read);
        }
        self.rows[side.index()] += hashed;
        Ok(())
    }
}

/// Values a conversion refused, as an error naming `path` (the first
/// message).
pub(crate) fn refusal_error(path: &Path, refused: Refused) -> ReconError {
    let m = refused.into_iter().next().map(|r| r.1).unwrap_or_default();
    ReconError::input(path, m)
}

/// Applies each column's conversion and rules.
pub(crate) fn prepare(
    preps: &[Prep],
    cols: &[ArrayRef],
) -> std::result::Result<Vec<ArrayRef>, Refused> {
    cols.iter()
        .zip(preps)
        .map(|(c, p)| {
            if p.is_noop() {
                Ok(c.clone())
            } else {
                p.apply(c)
            }
        })
        .collect()
}

/// Counts the rows holding refused values against `--max-parse-errors`
/// (an error past it), records them in the table's parse errors, and
/// returns which rows of the batch to keep.
fn count_refusals(
    table: &Table,
    path: &Path,
    locs: Locators<'_>,
    rows: usize,
    refused: Refused,
) -> Result<Vec<bool>> {
    let allowed = table.text.max_parse_errors;
    let mut keep = vec![true; rows];
    for (row, msg) in refused {
        if keep.get(row) != Some(&true) {
            continue;
        }
        keep[row] = false;
        let message = format!("{}: {msg}", table.position(locs.get(row)));
        table.parse_errors.count(
            allowed,
            path,
            locs.get(row),
            message,
            " (or `--max-parse-errors N` to count such values as drift)",
        )?;
    }
    Ok(keep)
}

/// Scans both sides, source first, on `cfg.threads` workers, each with its
/// own sink from `make_sink`.
pub(crate) fn scan<S, F>(
    sides: &[ScanSide<'_>; 2],
    cfg: &ScanConfig<'_>,
    make_sink: F,
) -> Result<Scanned<S>>
where
    S: RowSink,
    F: Fn() -> S + Sync,
{
    let threads = cfg.threads.max(1);
    let make_sink = &make_sink;
    // One feeder hands out units in order, source first, then target, so a
    // worker switches side at most once or twice and one set of staging
    // buffers per worker suffices. Text files are cut into chunks of whole
    // records here; everything else is one unit per row group or batch.
    let (tx, rx) = crossbeam_channel::bounded::<(Side, Unit)>(threads);
    let stop = AtomicBool::new(false);
    // Units in order, source first. Text files need a reader thread each
    // while they are cut into chunks; with several text files, up to
    // `threads` readers work at once (each on its own file), so a directory
    // of gzip parts decompresses in parallel.
    let units = units_in_order(sides);
    let text_files = units
        .iter()
        .filter(|(_, u)| matches!(u, Unit::TextFile { .. }))
        .count();
    let feeders = text_files.clamp(1, threads);
    // A queue of the units in order; feeders take the next one as they free up.
    let (queue, pending) = crossbeam_channel::unbounded();
    for u in units {
        let _ = queue.send(u);
    }
    drop(queue);
    let (feeder, results) = std::thread::scope(|s| {
        let feed = |tx: crossbeam_channel::Sender<(Side, Unit)>| -> Result<()> {
            loop {
                if stop.load(Ordering::Relaxed) {
                    return Ok(());
                }
                let Ok((side, unit)) = pending.try_recv() else {
                    return Ok(());
                };
                let table = sides[side.index()].table;
                let ok = match unit {
                    Unit::TextFile { file } => {
                        let mut sent = true;
                        let fed = guard(table.file_path(file), || {
                            table.feed_text(file, TEXT_CHUNK, &mut |u| {
                                sent = !stop.load(Ordering::Relaxed) && tx.send((side, u)).is_ok();
                                sent
                            })
                        });
                        if fed.is_err() {
                            // Unreadable text: stop the workers instead of finishing other units.
                            stop.store(true, Ordering::Relaxed);
                        }
                        fed?;
                        sent
                    }
                    other => tx.send((side, other)).is_ok(),
                };
                if !ok {
                    return Ok(());
                }
            }
        };
        let feeder_handles: Vec<_> = (0..feeders)
            .map(|_| {
                let tx = tx.clone();
                s.spawn(move || feed(tx))
            })
            .collect();
        // The channel closes when the last feeder's sender is gone.
        drop(tx);
        let handles: Vec<_> = (0..threads)
            .map(|_| {
                let rx = rx.clone();
                let stop = &stop;
                s.spawn(move || -> Result<(S, [u64; 2])> {
                    let mut w = Worker {
                        cfg,
                        sides,
                        sink: make_sink(),
                        encoder: match &cfg.per_column {
                            ColumnDigests::Lists(keep) => RowEncoder::keeping(keep.clone()),
                            _ => RowEncoder::new(),
                        },
                        digests: Vec::new(),
                        columns: Vec::new(),
                        totals: Vec::new(),
                        rows: [0, 0],
                    };
                    for (side, unit) in rx.iter() {
                        let path = sides[side.index()]
                            .table
                            .file_path(unit.file())
                            .to_path_buf();
                        if let Err(e) = guard(&path, || w.run_unit(side, &unit)) {
                            // Stop the feeder and the other workers early; the first error wins.
                            stop.store(true, Ordering::Relaxed);
                            return Err(e);
                        }
                        if stop.load(Ordering::Relaxed) {
                            return Err(ReconError::Interrupted);
                        }
                    }
                    w.sink.finish()?;
                    Ok((w.sink, w.rows))
                })
            })
            .collect();
        drop(rx);
        let results: Vec<Result<(S, [u64; 2])>> = handles
            .into_iter()
            .map(|h| {
                h.join()
                    .unwrap_or_else(|_| Err(ReconError::Internal("scan worker panicked".into())))
            })
            .collect();
        let feeder = feeder_handles
            .into_iter()
            .map(|h| {
                h.join()
                    .unwrap_or_else(|_| Err(ReconError::Internal("scan feeder panicked".into())))
            })
            .collect::<Result<Vec<()>>>()
            .map(|_| ());
        (feeder, results)
    });
    gather(feeder, results)
}

/// The units to scan, source first, narrowed to `only_units` and cut to
/// `only_rows` where a targeted pass asks for them.
fn units_in_order(sides: &[ScanSide<'_>; 2]) -> Vec<(Side, Unit)> {
    Side::BOTH
        .into_iter()
        .filter(|side| !sides[side.index()].skip)
        .flat_map(|side| {
            let only = sides[side.index()].only_units.as_ref();
            let rows = sides[side.index()].only_rows.clone();
            sides[side.index()]
                .table
                .scan_units()
                .into_iter()
                .filter(move |u| match (only, u) {
                    (None, _) => true,
                    (Some(set), Unit::Block { file, block, .. }) => set.contains(&(*file, *block)),
                    (Some(_), _) => true,
                })
                .flat_map(move |u| match (&rows, u) {
                    (Some(rows), Unit::Block { file, block, .. })
                        if rows.contains_key(&(file, block)) =>
                    {
                        rows[&(file, block)]
                            .iter()
                            .map(|&(first, rows)| Unit::Block {
                                file,
                                block,
                                first,
                                rows,
                            })
                            .collect::<Vec<_>>()
                    }
                    (_, u) => vec![u],
                })
                .map(move |u| (side, u))
        })
        .collect()
}

/// The scan's result from its feeders' and workers' outcomes.
fn gather<S>(feeder: Result<()>, results: Vec<Result<(S, [u64; 2])>>) -> Result<Scanned<S>> {
    // A feeder error (unreadable or corrupt text) explains worker stops, so it comes first;
    // among workers, a real error beats the "interrupted" of those stopped by it.
    feeder?;
    let mut sinks = Vec::with_capacity(results.len());
    let mut rows = [0u64; 2];
    let mut failed = None;
    for r in results {
        match r {
            Ok((sink, n)) => {
                sinks.push(sink);
                rows[0] += n[0];
                rows[1] += n[1];
            }
            Err(ReconError::Interrupted) => {
                failed.get_or_insert(ReconError::Interrupted);
            }
            Err(e) => {
                if matches!(failed, None | Some(ReconError::Interrupted)) {
                    failed = Some(e);
                }
            }
        }
    }
    if let Some(e) = failed {
        return Err(e);
    }
    Ok(Scanned { sinks, rows })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::{InputOptions, Sniff};
    use crate::digest::encode::encode_value;
    use crate::digest::encode::{reference_digest, value_digest};
    use crate::input::locator::pack;
    use crate::input::Source;
    use arrow::array::{Int64Array, RecordBatch, StringArray};
    use arrow::datatypes::{DataType, Field, Schema};

    type Rows = &'static [(i64, Option<&'static str>)];

    fn columns(rows: Rows) -> Vec<ArrayRef> {
        vec![
            Arc::new(Int64Array::from_iter_values(rows.iter().map(|r| r.0))),
            Arc::new(StringArray::from_iter(rows.iter().map(|r| r.1))),
        ]
    }

    /// A table of `batches` in memory: (id, name) rows.
    fn memory_table(batches: &[Rows]) -> Table {
        let schema = Arc::new(Schema::new(vec![
            Field::new("id", DataType::Int64, false),
            Field::new("name", DataType::Utf8, true),
        ]));
        let batches: Vec<RecordBatch> = batches
            .iter()
            .map(|rows| RecordBatch::try_new(schema.clone(), columns(rows)).unwrap())
            .collect();
        let source = Source::batches("memory", schema, batches).unwrap();
        crate::input::open_table(
            &source,
            &InputOptions::default(),
            Side::Source,
            Path::new("."),
        )
        .unwrap()
    }

    /// A CSV table of (id, name) rows, `id` read as Int64.
    fn csv_table(dir: &Path, text: &str) -> Table {
        let path = dir.join("t.csv");
        std::fs::write(&path, text).unwrap();
        let mut opts = InputOptions::default();
        opts.text.delimiter = Some(b',');
        opts.text.sniff = Sniff {
            delimiter: false,
            quote: false,
            escape: false,
            header: false,
            preamble: false,
        };
        let mut t =
            crate::input::open_table(&Source::Spec(path), &opts, Side::Target, dir).unwrap();
        t.set_types(&[(0, DataType::Int64)]).unwrap();
        t
    }

    fn side(table: &Table) -> ScanSide<'_> {
        ScanSide {
            table,
            columns: vec![0, 1],
            prep: vec![Prep::default(), Prep::default()],
            only_units: None,
            only_rows: None,
            skip: false,
        }
    }

    /// Every row a worker saw: side, locator, row digest, value digests
    /// (None where a column's were not asked for).
    #[derive(Default)]
    struct Collect {
        rows: Vec<(Side, u64, u128, Vec<Option<u128>>)>,
        /// The batches' column totals, added up.
        totals: Vec<ValueSum>,
        units: usize,
        finished: bool,
    }

    impl RowSink for Collect {
        fn start_unit(&mut self, _: Side, _: &Unit) -> Result<()> {
            self.units += 1;
            Ok(())
        }
        fn rows(&mut self, side: Side, batch: &Batch<'_>) -> Result<()> {
            assert_eq!(batch.arrays.len(), 2);
            for i in 0..batch.len() {
                let values = batch.columns.iter().map(|c| c.get(i).copied()).collect();
                self.rows
                    .push((side, batch.locators.get(i), batch.digests[i], values));
            }
            self.totals.resize(batch.totals.len(), ValueSum::default());
            add_totals(&mut self.totals, batch.totals);
            Ok(())
        }
        fn finish(&mut self) -> Result<()> {
            self.finished = true;
            Ok(())
        }
    }

    fn add_totals(into: &mut [ValueSum], from: &[ValueSum]) {
        for (a, b) in into.iter_mut().zip(from) {
            a.non_null += b.non_null;
            a.sum = a.sum.wrapping_add(b.sum);
        }
    }

    fn run(
        sides: &[ScanSide<'_>; 2],
        per_column: ColumnDigests,
        cancel: &CancelToken,
    ) -> Result<(Scanned<Collect>, u64)> {
        let progress = Progress::default();
        let cfg = ScanConfig {
            threads: 2,
            batch_size: 2,
            per_column,
            cancel,
            progress: &progress,
        };
        let scanned = scan(sides, &cfg, Collect::default)?;
        Ok((scanned, progress.rows_scanned.load(Ordering::Relaxed)))
    }

    /// The rows of all sinks, in side and locator order.
    fn all_rows(scanned: &Scanned<Collect>) -> Vec<(Side, u64, u128, Vec<Option<u128>>)> {
        let mut rows: Vec<_> = scanned
            .sinks
            .iter()
            .flat_map(|s| s.rows.iter().cloned())
            .collect();
        rows.sort_by_key(|r| (r.0.index(), r.1));
        rows
    }

    #[test]
    fn every_row_of_both_sides_is_digested_once_with_its_locator() {
        const FIRST: Rows = &[(1, Some("a")), (2, Some("b")), (3, None)];
        const SECOND: Rows = &[(4, Some("d"))];
        let source = memory_table(&[FIRST, SECOND]);
        let dir = tempfile::tempdir().unwrap();
        // The same first two rows as text: the same digests, located by byte offset.
        let target = csv_table(dir.path(), "id,name\n1,a\n2,b\n");
        let (scanned, counted) = run(
            &[side(&source), side(&target)],
            ColumnDigests::None,
            &CancelToken::new(),
        )
        .unwrap();
        assert_eq!(scanned.rows, [4, 2]);
        assert_eq!(counted, 6);
        assert_eq!(scanned.sinks.len(), 2);
        assert!(scanned.sinks.iter().all(|s| s.finished));
        // Two record batches and one text chunk.
        assert_eq!(scanned.sinks.iter().map(|s| s.units).sum::<usize>(), 3);
        let digest = |rows: Rows, i: usize| reference_digest(&columns(rows), i).unwrap();
        let rows: Vec<(Side, u64, u128)> = all_rows(&scanned)
            .into_iter()
            .map(|(side, loc, digest, values)| {
                assert!(values.is_empty());
                (side, loc, digest)
            })
            .collect();
        assert_eq!(
            rows,
            [
                (Side::Source, pack(0, 0), digest(FIRST, 0)),
                (Side::Source, pack(0, 1), digest(FIRST, 1)),
                (Side::Source, pack(0, 2), digest(FIRST, 2)),
                (Side::Source, pack(0, 3), digest(SECOND, 0)),
                (Side::Target, pack(0, 8), digest(FIRST, 0)),
                (Side::Target, pack(0, 12), digest(FIRST, 1)),
            ]
        );
    }

    #[test]
    fn value_digests_come_for_the_columns_asked_and_units_can_be_picked() {
        const FIRST: Rows = &[(1, Some("a")), (2, Some("b"))];
        const SECOND: Rows = &[(7, Some("x")), (8, None)];
        let table = memory_table(&[FIRST, SECOND]);
        let mut source = side(&table).only([(0, 1)].into_iter().collect());
        source.only_rows = Some(Arc::new([((0, 1), vec![(3, 1)])].into_iter().collect()));
        let mut target = side(&table);
        target.skip = true;
        let keep: Arc<[bool]> = Arc::new([true, false]);
        let (scanned, _) = run(
            &[source, target],
            ColumnDigests::Lists(keep),
            &CancelToken::new(),
        )
        .unwrap();
        assert_eq!(scanned.rows, [1, 0]);
        let id_digest = {
            let mut e = Vec::new();
            encode_value(&Int64Array::from(vec![8]), 0, &mut e).unwrap();
            value_digest(&e)
        };
        assert_eq!(
            all_rows(&scanned),
            [(
                Side::Source,
                pack(0, 3),
                reference_digest(&columns(SECOND), 1).unwrap(),
                vec![Some(id_digest), None]
            )]
        );
    }

    #[test]
    fn column_totals_add_up_the_value_digests_lists_would_hold() {
        const FIRST: Rows = &[(1, Some("a")), (2, None), (3, Some("a long enough string"))];
        const SECOND: Rows = &[(4, None)];
        let table = memory_table(&[FIRST, SECOND]);
        let sides = || [side(&table), side(&table)];
        let all: Arc<[bool]> = Arc::new([true, true]);
        let (lists, _) = run(&sides(), ColumnDigests::Lists(all), &CancelToken::new()).unwrap();
        let (totals, _) = run(&sides(), ColumnDigests::Totals, &CancelToken::new()).unwrap();
        let null = crate::digest::null_digest();
        let mut expected = vec![ValueSum::default(); 2];
        for (_, _, _, values) in all_rows(&lists) {
            for (e, v) in expected.iter_mut().zip(values) {
                e.add_values(&[v.unwrap()], null);
            }
        }
        // Two non-NULL names per side.
        assert_eq!(expected[1].non_null, 2 * 2);
        let mut got = vec![ValueSum::default(); 2];
        for s in &totals.sinks {
            add_totals(&mut got, &s.totals);
        }
        assert_eq!(got, expected);
        // The same row digests either way, and no lists with totals.
        let digests = |s: &Scanned<Collect>| {
            all_rows(s)
                .into_iter()
                .map(|r| (r.0, r.1, r.2))
                .collect::<Vec<_>>()
        };
        assert_eq!(digests(&totals), digests(&lists));
        assert!(all_rows(&totals).iter().all(|r| r.3.is_empty()));
    }

    #[test]
    fn a_cancelled_scan_stops_as_interrupted() {
        let table = memory_table(&[&[(1, Some("a"))]]);
        let cancel = CancelToken::new();
        cancel.cancel();
        let r = run(&[side(&table), side(&table)], ColumnDigests::None, &cancel);
        assert!(matches!(r, Err(ReconError::Interrupted)), "{:?}", r.err());
    }
}
