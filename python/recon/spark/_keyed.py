"""A keyed diff on Spark after pass 1 (docs/spark.md "Keyed diffs"):
only the rows of keys that differ reach the driver, where recon's keyed
diff judges them."""

from __future__ import annotations

import time
from typing import Any, Mapping, Sequence

import pyarrow as pa

from .. import _recon
from . import _jvm
from ._frames import (
    _BUCKET,
    _DIGEST,
    _HI,
    _LO,
    _collect,
    _parallelism,
    _unpersist,
    digest_schema,
)
from ._result import SparkDiff
from ._run import Run


def keyed_diff(run: Run, cmp: Any, local: Mapping[str, Any]) -> SparkDiff:
    """A keyed diff after pass 1 (rows bucketed by their key, docs/spark.md
    "Keyed diffs"): the agreeing buckets' keys are counted by grouping the
    source by key; in the differing buckets, each key's copies and digests
    are compared per side, and only the rows of the keys that differ go to
    the driver, where recon's keyed diff judges them.

    An agreeing bucket holds the same rows on both sides, so each of its
    keys is once on each side with equal rows (matched), duplicated with
    as many equal copies on each side, or NULL. In a differing bucket, a
    key once on each side with the same digest is matched too; every other
    key (missing, changed, duplicated, NULL) is judged by recon."""
    from functools import reduce

    from pyspark import StorageLevel
    from pyspark.sql import functions as F

    from .._api import diff as local_diff

    source, frames, plan = run.source, run.frames, run.plan
    pass1_seconds = time.perf_counter() - run.started
    differing = cmp.differing
    differs = F.col(_BUCKET).isin(differing)

    def key_cols(side: str) -> list:
        df = run.frame(side)
        return [F.col(f"c{df.columns.index(c)}") for c in plan.key(side)]

    def all_of(conditions: Sequence[Any]) -> Any:
        return reduce(lambda a, b: a & b, conditions)

    src_key = key_cols("source")
    null_key = reduce(lambda a, b: a | b, [c.isNull() for c in src_key])
    # Keys more than once on the source and rows with a NULL key, with
    # their bucket: few rows, cached for the samples below. The grouping
    # shuffles the key columns alone; the bucket, a function of the key, is
    # computed for the few groups kept.
    groups = frames["source"].groupBy(*src_key).agg(F.count(F.lit(1)).alias("n"))
    special = groups.where((F.col("n") > 1) | null_key) \
        .select("*", run.key_bucket("source", src_key).alias(_BUCKET)) \
        .persist(StorageLevel.MEMORY_AND_DISK)
    try:
        counts = _collect(special.where(~differs).agg(
            F.coalesce(F.sum(F.when(null_key, F.col("n"))), F.lit(0)).alias("null_rows"),
            F.count(F.when(~null_key, F.lit(1))).alias("dup_keys"),
            F.coalesce(F.sum(F.when(~null_key, F.col("n"))), F.lit(0)).alias("dup_rows"),
        )).to_pylist()[0]
        # The duplicated keys shown as samples are kept (both sides) for
        # recon's diff to describe; the rest are counted. Through Arrow, so
        # every value comes back exactly (a timestamp as its instant).
        shown = None
        if plan.sample > 0 and counts["dup_keys"] > 0:
            shown = _collect(special.where(~differs & ~null_key).select(
                _BUCKET, *[c.alias(f"__recon_k{i}") for i, c in enumerate(src_key)], "n")
                .limit(plan.sample))
    finally:
        _unpersist(special)
    dup_keys, dup_rows = counts["dup_keys"], counts["dup_rows"]
    read_again = list(differing)
    if shown is not None:
        dup_keys -= shown.num_rows
        dup_rows -= sum(shown.column("n").to_pylist())
        read_again = sorted(set(read_again) | set(shown.column(_BUCKET).to_pylist()))
        shown = source.sparkSession.createDataFrame(shown.drop_columns(["n", _BUCKET]))

    cached = []
    try:
        if read_again:
            # Pass 2: the differing buckets' rows (and the shown keys'
            # buckets), digested once and cached for the steps below.
            rows = {side: _digested(run, cmp, frames[side].where(F.col(_BUCKET).isin(read_again)),
                                   side)
                    .persist(StorageLevel.MEMORY_AND_DISK) for side in ("source", "target")}
            cached.extend(rows.values())

            def per_key(side: str) -> Any:
                # Each key's copies and digest range on one side: a key
                # once on each side with one digest is matched.
                k = [c.alias(f"__recon_k{i}") for i, c in enumerate(key_cols(side))]
                return rows[side].where(differs).groupBy(*k).agg(
                    F.count(F.lit(1)).alias("n"), F.min(_DIGEST).alias("lo"),
                    F.max(_DIGEST).alias("hi"))

            a, b = per_key("source"), per_key("target")
            names = [f"__recon_k{i}" for i in range(len(src_key))]
            joined = a.join(b, all_of([a[k].eqNullSafe(b[k]) for k in names]), "full_outer")
            matched = F.coalesce(all_of(
                [a["n"] == 1, b["n"] == 1, a["lo"] == b["lo"]]
                + [a[k].isNotNull() for k in names]), F.lit(False))
            differ = joined.where(~matched).select(
                *[F.coalesce(a[k], b[k]).alias(k) for k in names]) \
                .persist(StorageLevel.MEMORY_AND_DISK)
            cached.append(differ)

        def kept(side: str) -> pa.Table:
            df = run.frame(side)
            if not read_again:
                return digest_schema(df).empty_table()
            keys = key_cols(side)

            def having(these: Any) -> Any:
                on = all_of([c.eqNullSafe(these[f"__recon_k{i}"]) for i, c in enumerate(keys)])
                return rows[side].join(F.broadcast(these) if these is shown else these, on,
                                       "left_semi")
            picked = having(differ)
            if shown is not None:
                picked = picked.unionByName(having(shown))
            names = [F.col(f"c{i}").alias(c) for i, c in enumerate(df.columns)]
            return _collect(picked.select(*names))

        kept_source, kept_target = kept("source"), kept("target")
    finally:
        for df in cached:
            _unpersist(df)
    result = local_diff(kept_source, kept_target, **local)
    done = plan.complete_keyed(
        result._result, cmp.rows, dup_keys, dup_rows, counts["null_rows"], run.bits,
        len(differing), _parallelism(source), pass1_seconds,
        time.perf_counter() - run.started - pass1_seconds, run.path)
    return SparkDiff(done, None, None, source, run.target, local=result)


def _digested(run: Run, cmp: Any, rows: Any, side: str) -> Any:
    """``rows`` (a side's positional columns and bucket) with each row's
    digest as one comparable column."""
    from pyspark.sql import functions as F

    if run.path == "jvm":
        return rows.select("*", _jvm.digest(run.compared(side)).alias(_DIGEST))
    from pyspark.sql.types import LongType, StructField, StructType

    df = run.frame(side)
    fields = [StructField(f"c{i}", f.dataType, f.nullable)
              for i, f in enumerate(df.schema.fields)]
    shape = StructType(fields + [StructField(_HI, LongType(), False),
                                 StructField(_LO, LongType(), False)])
    keep = cmp.keep_all()
    # Plain values only: the task closure is pickled to the executors.
    src, tgt, js, rules_arg = run.src, run.tgt, run.js, run.rules

    def task(batches):
        d = _recon.spark_plan_keyed(src, tgt, js, rules_arg).digester(side, keep)
        for batch in batches:
            out = d.select(batch)
            if out is not None:
                yield out
    out = rows.mapInArrow(task, shape)
    # The bucket again, by the same expression (mapInArrow drops it).
    keys = [F.col(f"c{df.columns.index(k)}") for k in run.plan.key(side)]
    return out.select(*[f"c{i}" for i in range(len(fields))],
                      run.key_bucket(side, keys).alias(_BUCKET),
                      F.struct(_HI, _LO).alias(_DIGEST))
