//! Memory limits and how a limit is divided between the pipeline's stages.
//!
//! recon does not guess at memory: every large structure (scan staging
//! buffers, in-memory spill chunks, multiplicity maps, evidence ranges) is
//! sized from the limit up front, and a multiplicity map that would outgrow
//! its share is abandoned and its bucket split further instead. What is not
//! tracked (Parquet decoding of one batch per thread, the allocator, code)
//! must fit in the 64 MiB of headroom the limit promises on top.

use crate::size::{KIB, MIB};

/// Bytes one multiplicity-map slot costs: key (16) + counts and locators (32)
/// + hashbrown's control byte. Used to size maps against their budget.
pub(crate) const MAP_SLOT_BYTES: u64 = 49;

/// Peak resident set size of this process so far.
///
/// Read from `VmHWM` in /proc/self/status, which belongs to this program's
/// address space. `getrusage`'s `ru_maxrss` is only the fallback: Linux keeps it
/// across `execve`, so a process started by a large parent reports the
/// parent's peak.
pub(crate) fn peak_rss_bytes() -> u64 {
    let from_proc = std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|text| {
            let line = text.lines().find(|l| l.starts_with("VmHWM:"))?;
            line.split_whitespace().nth(1)?.parse::<u64>().ok()
        });
    if let Some(kib) = from_proc {
        return kib * KIB;
    }
    // SAFETY: rusage is a plain C struct of integers, for which all-zero
    // bytes are a valid value.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: getrusage writes one rusage into the valid, exclusively
    // borrowed struct it is given and keeps no pointer to it.
    if unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut usage) } != 0 {
        return 0;
    }
    usage.ru_maxrss as u64 * KIB
}

/// Pins glibc malloc's thresholds, once per process, so memory freed
/// between batches goes back to the system; and sets how much free memory
/// each arena keeps at its top (`top_pad` bytes), so a worker's arena does
/// not give back and fault in again the pages of every batch.
///
/// glibc raises its mmap threshold each time a block above it is freed, and
/// the heap's trim threshold with it (up to 32 and 64 MiB per arena). A run
/// that decodes whole record batches on several threads (an Arrow IPC file,
/// a spooled stream: 65,536-row batches are common) then keeps every freed
/// batch in its arenas: measured on a 4M-row IPC pair, peak RSS was 312 MiB
/// under `--memory-limit 32MiB`, and 42 MiB with the thresholds pinned.
/// Setting them turns the dynamic adjustment off (mallopt(3)); blocks of
/// 1 MiB and more are mapped and unmapped, and the heap is trimmed above
/// 8 MiB free. It applies to the whole process, which is why a library
/// does it: the memory limit is recon's promise, whatever the front end.
///
/// The top pad is [`Sizing::malloc_top_pad`]: at glibc's default (128 KiB)
/// the workers' arenas trimmed and grew again around each batch's decoding
/// buffers, 247,000 page faults in a diff of the 50M identical pair (-j 2,
/// 1 GiB) against 100,000 with a pad of 42 MiB: 0.97x the wall time of the
/// drift pair (farm-bench, 13 runs). Concurrent runs in one process share
/// it; the latest run's pad applies.
pub(crate) fn tune_malloc(top_pad: usize) {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    {
        static ONCE: std::sync::Once = std::sync::Once::new();
        ONCE.call_once(|| {
            // SAFETY: mallopt takes two integers and changes only malloc's
            // tuning; it is safe to call at any time, from any thread.
            unsafe {
                libc::mallopt(libc::M_MMAP_THRESHOLD, MIB as libc::c_int);
                libc::mallopt(libc::M_TRIM_THRESHOLD, (8 * MIB) as libc::c_int);
            }
        });
        let pad = top_pad.min(libc::c_int::MAX as usize) as libc::c_int;
        // SAFETY: as above.
        unsafe {
            libc::mallopt(libc::M_TOP_PAD, pad);
        }
    }
    #[cfg(not(all(target_os = "linux", target_env = "gnu")))]
    let _ = top_pad;
}

/// What a mode partitions, for sizing.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Records {
    /// Bytes per partition record.
    pub bytes: usize,
    /// Records per bucket to aim for when memory allows more buckets
    /// (smaller buckets keep larger map entries in cache).
    pub bucket_rows: u64,
    /// Percent of the limit for spill chunks kept in memory.
    pub in_memory_percent: u64,
}

impl Records {
    /// Keyless records: a quarter of the limit keeps spill chunks in memory
    /// (measured: a one-pass 10M pair takes 2.3 s instead of 2.6 s).
    pub(crate) fn keyless(bytes: usize) -> Records {
        Records {
            bytes,
            bucket_rows: TARGET_BUCKET_ROWS,
            in_memory_percent: 25,
        }
    }
}

/// How a memory limit is divided for one run.
#[derive(Debug, Clone)]
pub(crate) struct Sizing {
    /// Buckets at the first partitioning level are `1 << bucket_bits`.
    pub bucket_bits: u32,
    /// Size of one staging chunk in the partitioner.
    pub chunk_bytes: usize,
    /// Most entries a worker's multiplicity map may hold before its bucket is split.
    pub map_max_entries: usize,
    /// Bytes of spill chunks that may stay in memory instead of going to disk.
    pub in_memory_spill: usize,
    /// Evidence locators are grouped in ranges of `1 << range_bits` rows.
    pub range_bits: u32,
    /// Free bytes each malloc arena keeps at its top ([`tune_malloc`]): an
    /// eighth of the limit split over one arena per worker and the main
    /// thread's, at most [`MAX_TOP_PAD`]. What malloc keeps free this way
    /// is resident but unused: the headroom above the limit it may take.
    pub malloc_top_pad: usize,
}

/// The largest [`Sizing::malloc_top_pad`]: 64 MiB left as many page faults
/// as the whole run's resident memory (80,000 on the 50M identical pair).
const MAX_TOP_PAD: u64 = 64 * MIB;

const MAX_BUCKET_BITS: u32 = 12;
/// Records per bucket the sizing aims for when memory allows more.
pub(crate) const TARGET_BUCKET_ROWS: u64 = 1 << 19;
const MIN_CHUNK: u64 = 4 * KIB;
const MAX_CHUNK: u64 = MIB;

fn lcm(a: u64, b: u64) -> u64 {
    let gcd = |mut a: u64, mut b: u64| {
        while b != 0 {
            (a, b) = (b, a % b);
        }
        a
    };
    a / gcd(a, b) * b
}

fn prev_pow2(x: u64) -> u64 {
    if x == 0 {
        0
    } else {
        1 << (63 - x.leading_zeros())
    }
}

impl Sizing {
    /// [`Sizing::plan_for`] of keyless records of `record_bytes` bytes.
    #[cfg(test)]
    pub(crate) fn plan(limit: u64, threads: usize, rows: u64, record_bytes: usize) -> Sizing {
        Self::plan_for(limit, threads, rows, &Records::keyless(record_bytes))
    }

    /// Divides `limit` for `threads` workers comparing `rows` rows in all,
    /// each partitioned as one record shaped as `records` says.
    ///
    /// Shares: 45% multiplicity maps, 25% spill chunks kept in memory, 15%
    /// scan staging buffers, 15% evidence ranges and slack.
    pub(crate) fn plan_for(limit: u64, threads: usize, rows: u64, records: &Records) -> Sizing {
        let (record_bytes, bucket_rows) = (records.bytes, records.bucket_rows);
        let threads = threads.max(1) as u64;
        let limit = limit.min(1 << 50); // "unlimited" is still finite arithmetic
        let map_budget = (limit / 100 * 45 / threads).max(MIB);
        let slots = prev_pow2(map_budget / MAP_SLOT_BYTES).max(1024);
        let map_max_entries = (slots / 8 * 7) as usize;

        // Enough buckets that one bucket's distinct digests fit a map with room to spare.
        // Also enough buckets to keep every thread busy and each map cache-friendly
        // (smaller maps miss the cache less), once the table is big enough to care.
        let for_memory = rows.saturating_mul(2) / map_max_entries as u64;
        let for_speed = if rows >= 1 << 20 {
            (rows / bucket_rows.max(1)).max(threads * 4)
        } else {
            1
        };
        let want = for_memory.max(for_speed).max(1);
        let mut bucket_bits = (64 - (want - 1).leading_zeros()).min(MAX_BUCKET_BITS);
        if want == 1 {
            bucket_bits = 0;
        }
        // Staging buffers for one side: threads × buckets × chunk must fit their share;
        // fewer buckets is fine, since an oversized bucket is split when reconciled.
        let staging = limit / 100 * 15;
        while bucket_bits > 0 && threads * (1 << bucket_bits) * MIN_CHUNK > staging {
            bucket_bits -= 1;
        }
        let chunk = (staging / (threads * (1 << bucket_bits))).clamp(MIN_CHUNK, MAX_CHUNK);
        // Whole records of both the partition layout and evidence records.
        let whole = lcm(
            record_bytes.max(1) as u64,
            super::record::EVIDENCE_BYTES as u64,
        );
        let chunk_bytes = (chunk / whole * whole).max(whole) as usize;

        let in_memory_spill = (limit / 100 * records.in_memory_percent) as usize;
        let range_rows = prev_pow2(limit / 100 * 10 / 16).clamp(1 << 12, 1 << 24);
        Sizing {
            bucket_bits,
            chunk_bytes,
            map_max_entries,
            in_memory_spill,
            range_bits: range_rows.trailing_zeros(),
            malloc_top_pad: (limit / 8 / (threads + 1)).min(MAX_TOP_PAD) as usize,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::size::GIB;

    #[test]
    fn malloc_keeps_at_most_an_eighth_of_the_limit_free_across_its_arenas() {
        for (limit, threads) in [(GIB, 2), (16 * MIB, 4), (16 * MIB, 1), (1 << 60, 8)] {
            let pad = Sizing::plan(limit, threads, 1 << 20, 16).malloc_top_pad as u64;
            assert!(
                pad * (threads as u64 + 1) <= limit / 8,
                "{limit} bytes, -j {threads}"
            );
            assert!(pad <= MAX_TOP_PAD);
        }
        assert_eq!(
            Sizing::plan(GIB, 2, 1 << 20, 16).malloc_top_pad as u64,
            GIB / 24
        );
        assert_eq!(
            Sizing::plan(u64::MAX, 2, 1 << 20, 16).malloc_top_pad as u64,
            MAX_TOP_PAD
        );
    }

    #[test]
    fn small_limits_use_few_buckets_and_small_chunks() {
        let s = Sizing::plan(16 * MIB, 4, 10_000_000, 24);
        assert!(
            4 * (1u64 << s.bucket_bits) * s.chunk_bytes as u64
                <= 16 * MIB / 100 * 15 + 4 * 4 * KIB * (1 << s.bucket_bits)
        );
        assert!(s.chunk_bytes >= 4000);
        let big = Sizing::plan(GIB, 2, 100_000_000, 24);
        assert!(big.bucket_bits >= 4, "{big:?}");
        assert!((big.map_max_entries as u64) * MAP_SLOT_BYTES * 2 <= GIB);
    }

    #[test]
    fn chunks_hold_whole_records_of_any_layout() {
        for record in [24, 40, 56, 100] {
            let s = Sizing::plan(64 * MIB, 2, 1_000_000, record);
            assert_eq!(s.chunk_bytes % record, 0, "{record}");
            assert_eq!(s.chunk_bytes % 16, 0, "{record}");
        }
    }

    #[test]
    fn tiny_tables_use_one_bucket() {
        let s = Sizing::plan(GIB, 2, 10, 24);
        assert_eq!(s.bucket_bits, 0);
    }
}
