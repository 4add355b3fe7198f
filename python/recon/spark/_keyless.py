"""A keyless diff after pass 1 (docs/spark.md): the differing buckets'
selected rows counted per distinct row on each side, the totals checked
against pass 1, and the report's breakdowns, samples and pairs."""

from __future__ import annotations

import time
from typing import Any, List, Optional, Tuple

import pyarrow as pa

from .. import _recon
from . import _jvm
from ._frames import (
    _BUCKET,
    _DIGEST,
    _EXCESS,
    _HI,
    _LO,
    _collect,
    _digest_order,
    _empty_samples,
    _parallelism,
    _side_rows,
    _unpersist,
    _with_excess,
)
from ._result import SparkDiff
from ._run import Run


def keyless_diff(run: Run, cmp: Any) -> SparkDiff:
    """The diff's result from pass 1's bucket comparison ``cmp``."""
    from pyspark.sql import functions as F

    plan = run.plan
    pass1_seconds = time.perf_counter() - run.started
    threads = _parallelism(run.source)
    if cmp.all_agree:
        empty = _empty_samples()
        result = plan.report(cmp, [(0, 0, 0, 0), (0, 0, 0, 0)], empty, empty, threads, None,
                             pass1_seconds, 0.0, run.path,
                             by_groups=None if run.by is None else ([], []))
        return SparkDiff(result, None, None, run.source, run.target)

    keys = [_DIGEST] if run.path == "jvm" else [_HI, _LO]
    counted = _counted(run, cmp, keys)
    unmatched = counted.where(F.col("source_count") != F.col("target_count"))
    sc, tc = F.col("source_count"), F.col("target_count")

    def excess(a, b, only_absent: bool, name: str):
        cond = (a > b) & (b == 0) if only_absent else (a > b)
        return (F.coalesce(F.sum(F.when(cond, a - b)), F.lit(0)).alias(f"{name}_rows"),
                F.count(F.when(cond, F.lit(1))).alias(f"{name}_distinct"))

    totals = _collect(counted.agg(
        F.coalesce(F.sum(sc), F.lit(0)).alias("source_kept"),
        F.coalesce(F.sum(tc), F.lit(0)).alias("target_kept"),
        *excess(sc, tc, False, "source_only"), *excess(sc, tc, True, "source_absent"),
        *excess(tc, sc, False, "target_only"), *excess(tc, sc, True, "target_absent"),
    )).to_pylist()[0]
    totals = list(totals.values())
    kept_rows = (totals[0], totals[1])
    rows = cmp.rows
    # Agreeing buckets hold as many rows on each side, so the rows kept
    # must differ by exactly the tables' difference. They do not when a
    # table changed between the passes (a table being written, a
    # nondeterministic query): an error, never a mixed answer.
    if kept_rows[0] - kept_rows[1] != rows[0] - rows[1]:
        _unpersist(counted)
        raise _recon.InputError(
            "the tables changed while recon read them: the second pass found other rows "
            "in the differing buckets than the first (read a pinned snapshot, or cache the "
            "DataFrames first)")
    stats = [(totals[2], totals[3], totals[4], totals[5]),
             (totals[6], totals[7], totals[8], totals[9])]
    by_groups = None
    if run.by is not None:
        by_groups = (_grouped(run, unmatched, "source", sc, tc),
                     _grouped(run, unmatched, "target", tc, sc))
    distinct = (totals[3], totals[7])
    shown, unmatched_pair, pairs_skipped = _samples(plan, unmatched, keys, distinct)
    result = plan.report(cmp, stats, shown[0], shown[1],
                         threads, kept_rows[0] + kept_rows[1], pass1_seconds,
                         time.perf_counter() - run.started - pass1_seconds, run.path,
                         by_groups=by_groups, unmatched=unmatched_pair,
                         pairs_skipped=pairs_skipped)
    return SparkDiff(result, unmatched, counted, run.source, run.target)


def _counted(run: Run, cmp: Any, keys: List[str]) -> Any:
    """Pass 2: the rows of the decoded digests and the undecoded buckets,
    counted per distinct row on each side (``source_count``,
    ``target_count``, ``source_row``, ``target_row`` by digest), cached."""
    from pyspark import StorageLevel
    from pyspark.sql import functions as F
    from pyspark.sql.types import LongType, StructField, StructType

    selector = cmp.selector()
    differing = cmp.differing
    # Plain values only: the task closures are pickled to the executors.
    src, tgt, js, rules_arg = run.src, run.tgt, run.js, run.rules

    def pass2(side: str):
        def task(batches):
            p = _recon.spark_plan_pair(src, tgt, js, rules_arg)
            d = p.digester(side, selector)
            for batch in batches:
                kept = d.select(batch)
                if kept is not None:
                    yield kept
        return task

    def kept(side: str) -> Any:
        df = run.frame(side)
        if run.path == "jvm":
            # Each row is digested again (its bucket is its digest's top
            # bits) and only the selected ones leave the scan; nothing
            # enters Python.
            d = _jvm.digest(run.compared(side)).alias(_DIGEST)
            rows = run.frames[side].select("*", d).where(_jvm.selected(
                F.col(_DIGEST), _jvm.bucket(F.col(_DIGEST), run.bits), selector))
        else:
            fields = [StructField(f"c{i}", f.dataType, f.nullable)
                      for i, f in enumerate(df.schema.fields)]
            shape = StructType(fields + [StructField(_HI, LongType(), False),
                                         StructField(_LO, LongType(), False)])
            # Only the differing buckets' rows leave the JVM.
            rows = run.frames[side].where(F.col(_BUCKET).isin(differing)) \
                .mapInArrow(pass2(side), shape)
        whole = F.struct(*[F.col(f"c{i}").alias(c) for i, c in enumerate(df.columns)])
        return rows.groupBy(*keys).agg(
            F.count(F.lit(1)).alias(f"{side}_count"), F.first(whole).alias(f"{side}_row"))

    joined = kept("source").join(kept("target"), keys, "full_outer")
    counted = joined.select(
        *keys,
        F.coalesce("source_count", F.lit(0)).alias("source_count"),
        F.coalesce("target_count", F.lit(0)).alias("target_count"),
        "source_row", "target_row",
    )
    # Cached: the totals compute it once, the samples and the evidence read
    # it back. It holds only the differing buckets' rows.
    return counted.persist(StorageLevel.MEMORY_AND_DISK)


def _unmatched_rows(unmatched: Any, side: str, mine: Any, theirs: Any) -> Any:
    """The distinct rows ``side`` holds more copies of, and how many more:
    the table's columns, then the count."""
    return unmatched.where(mine > theirs) \
        .select(f"{side}_row.*", (mine - theirs).alias(_EXCESS))


def _grouped(run: Run, unmatched: Any, side: str, mine: Any, theirs: Any) -> list:
    """``by=``: each unmatched row's ``by`` value rendered by recon (the
    compared value, as the CLI groups it), then summed per value by Spark."""
    from pyspark.sql import functions as F

    src, tgt, js, rules_arg, by = run.src, run.tgt, run.js, run.rules, run.by

    def task(batches):
        p = _recon.spark_plan_pair(src, tgt, js, rules_arg, by)
        for b in batches:
            rows = pa.RecordBatch.from_arrays(b.columns[:-1],
                                              schema=pa.schema(list(b.schema)[:-1]))
            yield pa.RecordBatch.from_arrays(
                [p.by_values(side, rows), b.column(b.num_columns - 1)],
                names=["value", "n"])
    rows = _unmatched_rows(unmatched, side, mine, theirs).mapInArrow(task, "value string, n long")
    got = _collect(rows.groupBy("value").agg(F.sum("n").alias("n")))
    return list(zip(got.column("value").to_pylist(), got.column("n").to_pylist()))


def _samples(plan: Any, unmatched: Any, keys: List[str], distinct: Tuple[int, int]) -> \
        Tuple[Tuple[pa.RecordBatch, pa.RecordBatch], Optional[tuple], bool]:
    """The report's sample rows of each side, the unmatched rows to pair
    (None when not paired) and whether the pairing was skipped.

    When each side has at most the CLI's pairing limit of distinct
    unmatched rows, one collect serves both, in digest order on the
    driver: the samples are then the CLI's own (the smallest digests).
    Past it, the samples are the first Spark finds and the pairing is
    skipped, as the CLI's is."""
    from pyspark.sql import functions as F

    limit = plan.sample
    sc, tc = F.col("source_count"), F.col("target_count")
    pairs_skipped = max(distinct) > plan.pair_most
    if pairs_skipped:
        def samples(side: str, mine, theirs) -> pa.RecordBatch:
            if limit == 0:
                return _empty_samples()
            rows = unmatched.where(mine > theirs) \
                .select(f"{side}_row.*", "source_count", "target_count").limit(limit)
            rows = _collect(rows)
            return rows.combine_chunks().to_batches()[0] if rows.num_rows else \
                pa.RecordBatch.from_pylist([], schema=rows.schema)
        return (samples("source", sc, tc), samples("target", tc, sc)), None, True
    got = _collect(unmatched.select(*keys, "source_count", "target_count", "source_row",
                                    "target_row"))
    got = got.take(pa.array(_digest_order(got, keys), pa.int64()))
    rows = (_side_rows(got, "source"), _side_rows(got, "target"))
    shown = (_empty_samples() if limit == 0 else rows[0].slice(0, limit),
             _empty_samples() if limit == 0 else rows[1].slice(0, limit))
    unmatched_pair = tuple(_with_excess(r) for r in rows) if min(distinct) > 0 else None
    return shown, unmatched_pair, False
