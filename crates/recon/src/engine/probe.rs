//! Heavy drift, proven while pass 1 reads the target, so the target's
//! remaining rows are spilled as they are read instead of read again.
//!
//! Two passes pay off when drift is rare: pass 1 only fingerprints, and a
//! match ends there. When most rows differ, every bucket differs and the
//! second pass reads both tables again in full; `--passes 1` reads them
//! once. Pass 1 hands out the source's units before the target's. A sample
//! of the source's digests (those with some bits zero, about 64Ki of them
//! whatever the table's size) is counted; once the source's last unit
//! ended, each sampled target digest takes one copy off its count, and one
//! that finds none is a target row with more copies than the source
//! holds: an unmatched row, proven, not guessed. Once [`MIN_CHECKED`] sampled target rows were checked and
//! more than half of them were unmatched, every target unit started after
//! that is partitioned (spilled) as well as fingerprinted, and the second
//! pass reads only the source and the target units read before the switch.
//!
//! A matching pair never switches (no sampled target row can be unmatched
//! there), so it pays only the sampling: one mask test per row. The probe
//! only decides how the tables are read: every row is still partitioned
//! and reconciled, so the answer is the same whichever way it decides.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

use super::partition::{FingerprintSink, PartitionConfig, PartitionSink};
use super::scan::{Batch, RowSink};
use crate::digest::DigestBuildHasher;
use crate::error::{ReconError, Result};
use crate::input::Unit;
use crate::side::Side;

/// Sampled target rows checked before the probe may decide.
pub(crate) const MIN_CHECKED: u64 = 1024;

/// About this many source digests are sampled, whatever the table's size
/// (a few MiB of map).
const SAMPLE_BITS: u32 = 16;

/// The source's sampled digests, counted, and what the target's sampled
/// rows found so far.
pub(crate) struct DriftProbe {
    mask: u64,
    /// Source units not yet finished; the sample is complete at zero.
    source_left: AtomicUsize,
    /// The workers' counts, added as each source unit ends.
    gathering: Mutex<HashMap<u128, u32, DigestBuildHasher>>,
    /// The whole source's counts, once its last unit ended: the target's
    /// rows are checked from then on (those read earlier are not).
    counts: OnceLock<HashMap<u128, AtomicU32, DigestBuildHasher>>,
    checked: AtomicU64,
    unmatched: AtomicU64,
    switched: AtomicBool,
}

impl DriftProbe {
    /// A probe sampling about 2^16 of `source_rows` digests (all of them
    /// for smaller tables) read in `source_units` units.
    pub(crate) fn new(source_rows: u64, source_units: usize) -> DriftProbe {
        let shift = (64 - source_rows.leading_zeros()).saturating_sub(SAMPLE_BITS);
        let probe = DriftProbe {
            mask: (1u64 << shift) - 1,
            source_left: AtomicUsize::new(source_units),
            gathering: Mutex::new(HashMap::default()),
            counts: OnceLock::new(),
            checked: AtomicU64::new(0),
            unmatched: AtomicU64::new(0),
            switched: AtomicBool::new(false),
        };
        if source_units == 0 {
            probe.freeze();
        }
        probe
    }

    /// Whether `digest` is in the sample: the low bits of its high half.
    /// Partitions and fingerprint buckets are chosen by the top bits, and
    /// the map hashes the low half (`DigestHasher`), so the sample is
    /// independent of both.
    pub(crate) fn sampled(&self, digest: u128) -> bool {
        ((digest >> 64) as u64) & self.mask == 0
    }

    /// Adds one finished source unit's sampled digests, counted; after the
    /// last unit, the counts are complete and target rows are checked.
    pub(crate) fn source_unit_done(&self, sampled: &mut HashMap<u128, u32, DigestBuildHasher>) {
        {
            let mut all = self.gathering.lock().unwrap_or_else(|e| e.into_inner());
            for (d, n) in sampled.drain() {
                let count = all.entry(d).or_insert(0);
                *count = count.saturating_add(n);
            }
        }
        if self.source_left.fetch_sub(1, Ordering::AcqRel) == 1 {
            self.freeze();
        }
    }

    fn freeze(&self) {
        let all = std::mem::take(&mut *self.gathering.lock().unwrap_or_else(|e| e.into_inner()));
        let _ = self.counts.set(
            all.into_iter()
                .map(|(d, n)| (d, AtomicU32::new(n)))
                .collect(),
        );
    }

    /// Checks a batch of target digests against the source's sample, and
    /// switches once more than half of at least [`MIN_CHECKED`] were
    /// unmatched.
    fn check(&self, digests: &[u128]) {
        let Some(counts) = self.counts.get() else {
            return;
        };
        let (mut checked, mut unmatched) = (0u64, 0u64);
        for &d in digests.iter().filter(|&&d| self.sampled(d)) {
            checked += 1;
            let matched = counts.get(&d).is_some_and(|n| {
                n.fetch_update(Ordering::Relaxed, Ordering::Relaxed, |c| c.checked_sub(1))
                    .is_ok()
            });
            unmatched += u64::from(!matched);
        }
        if checked == 0 {
            return;
        }
        let checked = self.checked.fetch_add(checked, Ordering::Relaxed) + checked;
        let unmatched = self.unmatched.fetch_add(unmatched, Ordering::Relaxed) + unmatched;
        if checked >= MIN_CHECKED && unmatched * 2 > checked {
            self.switched.store(true, Ordering::Relaxed);
        }
    }

    /// Whether target units started from now on are spilled.
    pub(crate) fn switched(&self) -> bool {
        self.switched.load(Ordering::Relaxed)
    }

    /// Sampled target rows checked, and of those unmatched.
    #[cfg(test)]
    fn tally(&self) -> (u64, u64) {
        (
            self.checked.load(Ordering::Relaxed),
            self.unmatched.load(Ordering::Relaxed),
        )
    }
}

/// Pass 1's sink when the probe runs: a fingerprint sink, plus the source's
/// sampled digests (while the source is read) or the checks against them
/// and, after the switch, the spill of whole target units.
pub(crate) struct ProbeSink {
    pub fingerprint: FingerprintSink,
    probe: Arc<DriftProbe>,
    /// The current source unit's sampled digests, counted (a table of one
    /// row repeated is one entry, not a vector as long as the table).
    sampled: HashMap<u128, u32, DigestBuildHasher>,
    /// Records of the target units read after the switch.
    pub spill: PartitionSink,
    /// The current unit is spilled.
    spilling: bool,
    /// Target (file, block) units spilled.
    pub spilled: Vec<(usize, usize)>,
    /// The current unit is the source's.
    in_source: bool,
}

impl ProbeSink {
    pub(crate) fn new(
        filter_bits: u32,
        probe: Arc<DriftProbe>,
        spill: PartitionConfig,
    ) -> ProbeSink {
        ProbeSink {
            fingerprint: FingerprintSink::new(filter_bits).with_sketch(),
            probe,
            sampled: HashMap::default(),
            spill: PartitionSink::new(spill),
            spilling: false,
            spilled: Vec::new(),
            in_source: false,
        }
    }
}

impl ProbeSink {
    fn end_unit(&mut self) {
        if std::mem::take(&mut self.in_source) {
            self.probe.source_unit_done(&mut self.sampled);
        }
    }
}

impl RowSink for ProbeSink {
    fn start_unit(&mut self, side: Side, unit: &Unit) -> Result<()> {
        self.end_unit();
        self.in_source = side == Side::Source;
        self.spilling = side == Side::Target && self.probe.switched();
        if self.spilling {
            let Unit::Block { file, block, .. } = unit else {
                return Err(ReconError::Internal(
                    "the drift probe met a target unit that is not a row group".into(),
                ));
            };
            self.spilled.push((*file, *block));
            // After the switch the second pass reads whole units: no
            // targeted pass needs the per-batch filters, so their memory
            // goes to the spill.
            self.fingerprint.drop_filters();
        }
        self.fingerprint.start_unit(side, unit)
    }

    fn rows(&mut self, side: Side, batch: &Batch<'_>) -> Result<()> {
        self.fingerprint.rows(side, batch)?;
        match side {
            Side::Source => {
                for &d in batch.digests.iter().filter(|&&d| self.probe.sampled(d)) {
                    let n = self.sampled.entry(d).or_insert(0);
                    *n = n.saturating_add(1);
                }
                Ok(())
            }
            Side::Target if self.spilling => self.spill.rows(side, batch),
            Side::Target => {
                self.probe.check(batch.digests);
                Ok(())
            }
        }
    }

    fn finish(&mut self) -> Result<()> {
        self.end_unit();
        self.fingerprint.finish()?;
        self.spill.finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A probe whose one source unit held `digests`.
    fn probe(source_rows: u64, digests: impl IntoIterator<Item = u128>) -> DriftProbe {
        let probe = DriftProbe::new(source_rows, 1);
        let mut sampled = HashMap::default();
        for d in digests {
            *sampled.entry(d).or_insert(0) += 1;
        }
        probe.source_unit_done(&mut sampled);
        probe
    }

    #[test]
    fn every_sampled_copy_beyond_the_sources_is_unmatched() {
        let probe = probe(10, [1, 1, 2]); // small: every digest sampled
        assert!(probe.sampled(u128::MAX));
        probe.check(&[1, 1, 1, 2, 3]);
        assert_eq!(probe.tally(), (5, 2));
        assert!(!probe.switched(), "fewer than MIN_CHECKED checked");
    }

    #[test]
    fn target_rows_are_checked_only_once_the_source_is_complete() {
        let probe = DriftProbe::new(10, 2);
        let mut sampled = HashMap::default();
        sampled.insert(7, 1);
        probe.source_unit_done(&mut sampled);
        probe.check(&[8; 2000]);
        assert_eq!(probe.tally(), (0, 0));
        probe.source_unit_done(&mut HashMap::default());
        probe.check(&[7, 7]);
        assert_eq!(probe.tally(), (2, 1));
    }

    #[test]
    fn switches_only_when_most_of_enough_sampled_rows_are_unmatched() {
        let all = probe(4096, 0..4096);
        // Every row matched: never.
        all.check(&(0..4096).collect::<Vec<u128>>());
        assert!(!all.switched());
        // Half unmatched is not more than half.
        let half = probe(4096, 0..1024);
        half.check(&(0..2048).collect::<Vec<u128>>());
        assert_eq!(half.tally(), (2048, 1024));
        assert!(!half.switched());
        half.check(&[5000]);
        assert!(half.switched());
    }

    #[test]
    fn large_tables_sample_about_64ki_digests() {
        let probe = DriftProbe::new(50_000_000, 1);
        let sampled = (0..1u128 << 20)
            .map(|i| i.wrapping_mul(0x9e37_79b9_7f4a_7c15_f39c_c060_5ced_c835) << 64)
            .filter(|&d| probe.sampled(d))
            .count();
        // 2^20 uniform digests at 1/2^10 of the space: about 1024.
        assert!((800..1300).contains(&sampled), "{sampled}");
    }
}
