"""recon on Spark: the exact diff and fingerprints of Spark DataFrames,
with recon's own digests computed in Spark's JVM (the jar the wheel ships)
or inside ``mapInArrow``.

>>> import recon.spark
>>> d = recon.spark.diff(spark.table("old.orders"), spark.table("new.orders"))  # doctest: +SKIP
>>> d.exact_match, d.source_only_rows, d.target_only_rows                     # doctest: +SKIP
>>> d.source_only().show()                      # a Spark DataFrame          # doctest: +SKIP

How it runs (docs/spark.md):

1. **Pass 1.** Each partition digests its rows (the same 128-bit digests as
   the command line, docs/encoding.md) and adds them into per-bucket
   fingerprints. Only these small records, one per partition, go to the
   driver. If every bucket agrees the tables match, and no row was shuffled.
2. **Pass 2**, only when buckets differ. A differing bucket's single
   differing digest is decoded from its two fingerprints where possible;
   each side then keeps only the rows of the decoded digests and of the
   buckets that did not decode, and those rows alone are shuffled by
   digest to count each distinct row on both sides.

The digests run in the JVM when recon's jar can be loaded and the plan
converts no value (``digests="auto"``, reported as ``settings.digests``):
Spark's generated code digests its own values and an aggregate sums the
buckets, so no row crosses into Python. Otherwise they run in Python,
inside ``mapInArrow``, through the native module.

The evidence (``source_only()``, ``target_only()``) is a lazy DataFrame
over the second pass's result, which is cached on the executors; nothing
is collected to the driver except the counts and the report's sample rows.

The wheel holds everything, the jar included, so ``pip install`` (or a
cluster library) on the driver and the executors is the whole
installation.
"""

from __future__ import annotations

import os
import time
import warnings
import weakref
from pathlib import Path
from typing import Any, Mapping, Optional, Sequence, Tuple, Union

import pyarrow as pa

from . import _recon, _spark_jvm
from ._results import DiffReport, Fingerprint, FingerprintComparison, PathLike
from ._settings import settings as _settings

Columns = Union[str, Sequence[str]]

__all__ = ["diff", "fingerprint", "SparkDiff", "digest_schema"]

# What the passes append to each row (the table's own columns travel as
# c0, c1, ..., see _positional, so these never clash with them): the
# digest's halves (Python digests) or its 16 bytes (JVM digests).
_HI = "__recon_digest_hi"
_LO = "__recon_digest_lo"
_DIGEST = "__recon_digest"
_DIGESTS = ("auto", "jvm", "python")
# Each row's bucket, computed by Spark (see _bucketed).
_BUCKET = "__recon_bucket"
# An unmatched row's excess copies, after the table's columns.
_EXCESS = "__recon_excess"
_DEFAULT_BUCKETS = 4096


def _bits(buckets: int) -> int:
    if isinstance(buckets, bool) or not isinstance(buckets, int) or buckets < 2 \
            or buckets > (1 << 20) or buckets & (buckets - 1):
        raise _recon.UsageError(f"buckets= takes a power of two from 2 to 2**20, not {buckets!r}")
    return buckets.bit_length() - 1


def digest_schema(df: Any) -> pa.Schema:
    """The Arrow schema Spark hands ``mapInArrow`` for ``df``'s rows:
    strings as utf8, decimals as decimal128(p, s), ``timestamp`` as
    ``timestamp[us, tz=<session zone>]``, ``timestamp_ntz`` as
    ``timestamp[us]``."""
    from pyspark.sql.pandas.types import to_arrow_type

    tz = df.sparkSession.conf.get("spark.sql.session.timeZone")
    fields = []
    for f in df.schema.fields:
        kind = f.dataType.simpleString()
        if "variant" in kind:
            # A variant's binary form is not canonical (one value has several
            # encodings), so its bytes cannot be compared as a value.
            raise _recon.SchemaError(
                f"column {f.name!r} is a {kind}: recon cannot compare variant values by value; "
                f"compare their JSON text (F.to_json) instead")
        try:
            arrow = to_arrow_type(f.dataType, timezone=tz)
        except Exception as e:
            first = str(e).splitlines()[0] if str(e) else type(e).__name__
            raise _recon.SchemaError(
                f"column {f.name!r}: Spark's {kind} cannot be read as Arrow ({first})") from None
        fields.append(pa.field(f.name, arrow, nullable=f.nullable))
    return pa.schema(fields)


def _col(name: str) -> Any:
    """A column by its exact name (dots and backticks included)."""
    from pyspark.sql import functions as F

    return F.col("`" + name.replace("`", "``") + "`")


def _parallelism(df: Any) -> int:
    try:
        return int(df.sparkSession.sparkContext.defaultParallelism)
    except Exception:  # Spark Connect has no SparkContext
        return 0


def _rules(rules: Optional[PathLike]) -> Optional[Tuple[str, str]]:
    # The file is read here, on the driver: executors plan from its text.
    if rules is None:
        return None
    path = os.fspath(rules)
    try:
        with open(path, encoding="utf-8") as f:
            return (path, f.read())
    except OSError as e:
        raise _recon.UsageError(f"{path}: {e.strerror or e}") from None


_ERRORS = ("UsageError", "SchemaError", "InputError", "ResourceError", "CancelledError",
           "InternalError")


def _collect(df: Any) -> pa.Table:
    """``df.toArrow()``, with a recon error raised inside a Spark task
    raised again on the driver as the same recon exception (Spark wraps it
    in a PythonException holding the worker's traceback)."""
    from pyspark.errors import PythonException

    try:
        return df.toArrow()
    except PythonException as e:
        text = str(e)
        for line in reversed(text.splitlines()):
            for name in _ERRORS:
                marker = f"{name}: "
                at = line.find(marker)
                if at >= 0 and (at == 0 or not line[at - 1].isalnum()):
                    raise getattr(_recon, name)(line[at + len(marker):].strip()) from e
        raise


def _bucketed(df: Any, compared: Sequence[str], buckets: int) -> Any:
    """``df`` with each row's bucket appended, computed by Spark itself
    (xxhash64 of the compared columns), so the second pass filters rows in
    the JVM and only the differing buckets' rows reach Python.

    The bucket is only a place to add a row's recon digest: pass 1 sums
    recon's digests per bucket, so any bucketing gives the exact answer
    (equal multisets in every bucket are equal tables; a row the two sides
    bucket differently makes two buckets differ, and pass 2 still matches
    it by digest). The hash therefore only needs to send values recon
    calls equal to one bucket as often as it cheaply can: integers of any
    width as longs, floats and decimals as doubles with -0.0 as 0.0. Maps
    cannot be hashed by Spark and are left out of the hash."""
    named = [(df.schema[name].dataType, _col(name)) for name in compared]
    return df.select(*_positional(df), _bucket_of(named, buckets).alias(_BUCKET))


def _bucket_of(columns: Sequence[Tuple[Any, Any]], buckets: int) -> Any:
    """The bucket of a row from ``(Spark type, column)`` pairs (see
    :func:`_bucketed`)."""
    from pyspark.sql import functions as F
    from pyspark.sql import types as T

    parts = []
    for kind, col in columns:
        if isinstance(kind, (T.ByteType, T.ShortType, T.IntegerType, T.LongType)):
            parts.append(col.cast("long"))
        elif isinstance(kind, (T.FloatType, T.DoubleType, T.DecimalType)):
            x = col.cast("double")
            parts.append(F.when(x == 0, F.lit(0.0)).otherwise(x))
        elif "map<" in kind.simpleString():
            continue
        else:
            parts.append(col)
    row = F.xxhash64(*parts) if parts else F.lit(0).cast("long")
    return F.pmod(row, F.lit(buckets)).cast("int")


def _digest_path(asked: str, df: Any, plan: Any) -> str:
    """Where the digests run: "jvm" or "python" (see :func:`diff`)."""
    if asked == "python":
        return "python"
    converted = plan.converted()
    if converted:
        if asked == "jvm":
            raise _recon.UsageError(
                f"digests='jvm' digests values as Spark holds them, but the plan converts "
                f"{', '.join(map(repr, converted))}: use digests='python' or 'auto'")
        return "python"
    why = _spark_jvm.register(df.sparkSession)
    if why is None:
        return "jvm"
    if asked == "jvm":
        raise _recon.UsageError(f"digests='jvm': recon's jar cannot be used here: {why}")
    # Said once per call: the same answer, but every row crosses into Python.
    warnings.warn(f"recon.spark: digests run in Python (mapInArrow), not the JVM: {why}",
                  RuntimeWarning, stacklevel=3)
    return "python"


def _positional(df: Any) -> list:
    """``df``'s columns renamed c0, c1, ...: PySpark's mapInArrow cannot
    refer to a column whose name holds a backtick, and the digests read
    columns by position (the plan was made from the real names)."""
    return [_col(c).alias(f"c{i}") for i, c in enumerate(df.columns)]


class SparkDiff(DiffReport):
    """The result of :func:`diff`: the same verdict, counts, report, text
    summary and HTML as :func:`recon.diff`'s ``recon.Diff``; the evidence as
    Spark DataFrames, computed when used and never collected to the driver
    unless you collect them (keyed diffs: built from the differing keys'
    evidence, which the driver holds)."""

    def __init__(self, result: Any, unmatched: Any, cached: Any, source: Any,
                 target: Any, local: Any = None) -> None:
        self._result = result
        self._keyed = local is not None
        # Keyed: recon.diff's result on the kept rows (its evidence files).
        self._local = local
        self._report = None
        self._unmatched = unmatched
        self._frames = (source, target)
        if cached is not None:
            self._cleanup = weakref.finalize(self, _unpersist, cached)

    def _side(self, side: int, counts: bool) -> Any:
        from pyspark.sql import functions as F

        if self._local is not None:
            name = "source_only" if side == 0 else "target_only"
            fix = "use missing_in_target() and changed()" if side == 0 else \
                "use missing_in_source() and changed()"
            raise _recon.UsageError(f"{name}: evidence of a keyless diff, and this diff is "
                                    f"keyed; {fix}")
        df = self._frames[side]
        if self._unmatched is None:
            empty = df.limit(0)
            if counts:
                empty = empty.withColumn("source_count", F.lit(0).cast("long")) \
                             .withColumn("target_count", F.lit(0).cast("long"))
            return empty
        row = "source_row" if side == 0 else "target_row"
        mine, theirs = ("source_count", "target_count") if side == 0 else \
            ("target_count", "source_count")
        rows = self._unmatched.where(F.col(mine) > F.col(theirs))
        if counts:
            return rows.select(f"{row}.*", "source_count", "target_count")
        # One row per unmatched occurrence: what EXCEPT ALL returns.
        copies = F.explode(F.sequence(F.lit(1), (F.col(mine) - F.col(theirs)).cast("int")))
        return rows.select(f"{row}.*", copies.alias("__recon_copy")).drop("__recon_copy")

    def source_only(self, counts: bool = False) -> Any:
        """Rows in the source and not the target, as ``EXCEPT ALL`` returns
        them (one row per unmatched occurrence, the source's columns); with
        ``counts=True`` one row per distinct unmatched row with its
        ``source_count`` and ``target_count``. Keyless diffs only."""
        return self._side(0, counts)

    def target_only(self, counts: bool = False) -> Any:
        """Rows in the target and not the source (see :meth:`source_only`)."""
        return self._side(1, counts)

    def _keyed_frame(self, name: str, table: Any) -> Any:
        if self._local is None:
            raise _recon.UsageError(f"{name}: evidence of a keyed diff, and this diff is "
                                    f"keyless; pass key= for rows by key")
        return self._frames[0].sparkSession.createDataFrame(table())

    def changed(self) -> Any:
        """Keyed: the keys whose values changed, source and target values
        side by side (the columns of :meth:`recon.Diff.changed`)."""
        return self._keyed_frame("changed", lambda: self._local.changed())

    def missing_in_target(self) -> Any:
        """Keyed: rows whose key the target lacks."""
        return self._keyed_frame("missing_in_target", lambda: self._local.missing_in_target())

    def missing_in_source(self) -> Any:
        """Keyed: rows whose key the source lacks."""
        return self._keyed_frame("missing_in_source", lambda: self._local.missing_in_source())

    def duplicate_keys(self, side: str = "source") -> Any:
        """Keyed: unmatched rows of keys duplicated on a side, diffed as
        multisets."""
        return self._keyed_frame("duplicate_keys", lambda: self._local.duplicate_keys(side))

    def null_keys(self, side: str = "source") -> Any:
        """Keyed: unmatched rows with a NULL in the key, diffed as multisets."""
        return self._keyed_frame("null_keys", lambda: self._local.null_keys(side))

    def unpersist(self) -> None:
        """Frees the second pass's cached result on the executors (also
        done when this object is garbage collected)."""
        if self._unmatched is not None:
            self._cleanup()


def _unpersist(df: Any) -> None:
    try:
        df.unpersist()
    except Exception:  # the session may be gone at interpreter exit
        pass


def diff(
    source: Any,
    target: Any,
    *,
    key: Optional[Columns] = None,
    tolerance: Optional[Mapping[str, Any]] = None,
    columns: Optional[Columns] = None,
    exclude: Optional[Columns] = None,
    map: Optional[Mapping[str, str]] = None,
    cast: Optional[Mapping[str, str]] = None,
    rules: Optional[PathLike] = None,
    by: Optional[str] = None,
    sample: int = 20,
    buckets: int = _DEFAULT_BUCKETS,
    max_unmatched_rows: Optional[int] = None,
    max_unmatched_ratio: Optional[float] = None,
    max_changed: Optional[int] = None,
    max_missing: Optional[int] = None,
    diff_columns: Optional[str] = None,
    by_position: bool = False,
    ignore_case_names: bool = False,
    ignore_extra_columns: bool = False,
    assume_tz: Union[str, Sequence[str], None] = None,
    round: Optional[Mapping[str, int]] = None,
    timestamp_precision: Optional[Mapping[str, str]] = None,
    trim: Optional[Columns] = None,
    case_insensitive: Optional[Columns] = None,
    empty_as_null: Optional[Columns] = None,
    source_name: str = "source",
    target_name: str = "target",
    digests: str = "auto",
) -> SparkDiff:
    """Compares two Spark DataFrames as multisets of rows (``EXCEPT ALL``
    both ways) with the command line's semantics and report.

    The options are :func:`recon.diff`'s, with the same names and meanings.
    ``buckets`` (a power of two) sets the fingerprint pass's buckets: more
    buckets decode more differences without a shuffle but send more bytes
    per partition to the driver. ``source_name`` and ``target_name`` name
    the tables in the report.

    ``by`` breaks the unmatched rows down per value of a compared column
    (the report's ``by_group``), as ``recon diff --by`` does; keyless
    diffs only. The report's ``pairs`` (changed rows paired by the one or
    two columns they differ in) are the CLI's too: the distinct unmatched
    rows are paired on the driver when each side has at most 20,000.

    ``digests`` chooses where rows are digested: ``"jvm"`` (recon's jar,
    inside Spark's generated code; no row enters Python), ``"python"``
    (``mapInArrow`` and the native module), or ``"auto"``: the JVM when
    the jar loads and the plan converts no value (no ``cast``, ``round``,
    ``trim`` and the like), else Python. The report says which ran
    (``settings.digests``); both give the same bits and the same answer.

    With ``key=`` (and optionally ``tolerance=``, ``max_changed``,
    ``max_missing``, ``diff_columns``) the diff is keyed, with the command
    line's categories: rows are bucketed by their key, pass 1 finds the
    buckets that differ, and only their rows (and a few duplicated keys
    shown as samples) are collected to the driver, where recon's keyed
    diff judges them; the agreeing buckets' keys are counted in Spark. A
    key column must be compared as it is (no cast or rule on it).
    """
    started = time.perf_counter()
    bits = _bits(buckets)
    if digests not in _DIGESTS:
        # (`map` is a parameter here.)
        raise _recon.UsageError(f"digests= takes one of {', '.join(repr(d) for d in _DIGESTS)}, "
                                f"not {digests!r}")
    opts = dict(
        key=key, tolerance=tolerance, columns=columns, exclude=exclude, map=map, cast=cast,
        sample=sample, max_unmatched_rows=max_unmatched_rows,
        max_unmatched_ratio=max_unmatched_ratio, max_changed=max_changed,
        max_missing=max_missing, by_position=by_position or None,
        ignore_case_names=ignore_case_names or None,
        ignore_extra_columns=ignore_extra_columns or None, assume_tz=assume_tz, round=round,
        timestamp_precision=timestamp_precision, trim=trim, case_insensitive=case_insensitive,
        empty_as_null=empty_as_null,
    )
    keyed = key is not None
    if not keyed:
        for name, given in (("tolerance", tolerance), ("max_changed", max_changed),
                            ("max_missing", max_missing), ("diff_columns", diff_columns)):
            if given is not None:
                raise _recon.UsageError(f"{name}= applies to keyed diffs: pass key= too")
    js = _settings(opts)
    rules_arg = _rules(rules)
    src = (source_name, digest_schema(source))
    tgt = (target_name, digest_schema(target))
    planner = _recon.spark_plan_keyed if keyed else _recon.spark_plan_pair
    plan = planner(src, tgt, js, rules_arg, by)
    if keyed:
        _refuse_collated_keys(plan, {"source": source, "target": target})
    path = _digest_path(digests, source, plan)
    nb = 1 << bits

    def compared(side: str) -> list:
        # The compared columns in plan order, by their positional names.
        names = (source if side == "source" else target).columns
        return [F.col(f"c{names.index(c)}") for c in plan.compared(side)]

    from pyspark.sql import functions as F

    # Each row's bucket is Spark's own hash of it (see _bucketed), so the
    # second pass drops the agreeing buckets' rows before digesting them.
    # Keyed: the hash of its key, so all rows of a key share a bucket.
    hashed = {side: plan.key(side) if keyed else plan.compared(side)
              for side in ("source", "target")}
    frames = {"source": _bucketed(source, hashed["source"], nb),
              "target": _bucketed(target, hashed["target"], nb)}
    if path == "jvm":
        # Pass 1 in the JVM: one aggregate per side sums the buckets.
        by_side = {side: _spark_jvm.bucket_sums(frames[side], compared(side), F.col(_BUCKET),
                                                bits)
                   for side in ("source", "target")}
    else:
        # Pass 1 in Python: per-partition bucket sums, collected to the driver.
        def pass1(side: str):
            def run(batches):
                p = planner(src, tgt, js, rules_arg)
                sums = p.bucket_sums(side, batches, bits)
                yield pa.RecordBatch.from_pydict(
                    {"side": pa.array([side], pa.string()),
                     "sums": pa.array([sums], pa.binary())})
            return run

        shape = "side string, sums binary"
        parts = _collect(frames["source"].mapInArrow(pass1("source"), shape)
                         .unionAll(frames["target"].mapInArrow(pass1("target"), shape)))
        by_side = {"source": [], "target": []}
        for side, sums in zip(parts.column("side").to_pylist(),
                              parts.column("sums").to_pylist()):
            by_side[side].append(sums)
    cmp = plan.compare(by_side["source"], by_side["target"], bits)
    if keyed:
        def digested(rows: Any, side: str) -> Any:
            """``rows`` (a side's positional columns and bucket) with each
            row's digest as one comparable column."""
            if path == "jvm":
                return rows.select("*", _spark_jvm.digest(compared(side)).alias(_DIGEST))
            from pyspark.sql.types import LongType, StructField, StructType

            df = source if side == "source" else target
            fields = [StructField(f"c{i}", f.dataType, f.nullable)
                      for i, f in enumerate(df.schema.fields)]
            shape = StructType(fields + [StructField(_HI, LongType(), False),
                                         StructField(_LO, LongType(), False)])
            keep = cmp.keep_all()

            def run(batches):
                d = planner(src, tgt, js, rules_arg).digester(side, keep)
                for batch in batches:
                    out = d.select(batch)
                    if out is not None:
                        yield out
            out = rows.mapInArrow(run, shape)
            # The bucket again, by the same expression (mapInArrow drops it).
            named = [(df.schema[k].dataType, F.col(f"c{df.columns.index(k)}"))
                     for k in plan.key(side)]
            return out.select(*[f"c{i}" for i in range(len(fields))],
                              _bucket_of(named, nb).alias(_BUCKET),
                              F.struct(_HI, _LO).alias(_DIGEST))

        local = dict(opts, rules=rules, diff_columns=diff_columns)
        return _keyed(source, target, frames, plan, cmp, bits, path, local, started, digested)
    pass1_seconds = time.perf_counter() - started
    threads = _parallelism(source)
    if cmp.all_agree:
        empty = _empty_samples()
        result = plan.report(cmp, [(0, 0, 0, 0), (0, 0, 0, 0)], empty, empty, threads, None,
                             pass1_seconds, 0.0, path,
                             by_groups=None if by is None else ([], []))
        return SparkDiff(result, None, None, source, target)

    # Pass 2: the rows of the decoded digests and the undecoded buckets,
    # counted per distinct row on each side.
    from pyspark import StorageLevel
    from pyspark.sql.types import LongType, StructField, StructType

    selector = cmp.selector()

    def pass2(side: str):
        def run(batches):
            p = _recon.spark_plan_pair(src, tgt, js, rules_arg)
            d = p.digester(side, selector)
            for batch in batches:
                kept = d.select(batch)
                if kept is not None:
                    yield kept
        return run

    differing = cmp.differing
    keys = [_DIGEST] if path == "jvm" else [_HI, _LO]

    def kept(df: Any, side: str) -> Any:
        if path == "jvm":
            # Only the differing buckets' rows are digested again, and only
            # the selected ones leave the scan; nothing enters Python.
            d = _spark_jvm.digest(compared(side)).alias(_DIGEST)
            rows = frames[side].where(F.col(_BUCKET).isin(differing)).select("*", d) \
                .where(_spark_jvm.selected(F.col(_DIGEST), F.col(_BUCKET), selector))
        else:
            fields = [StructField(f"c{i}", f.dataType, f.nullable)
                      for i, f in enumerate(df.schema.fields)]
            shape = StructType(fields + [StructField(_HI, LongType(), False),
                                         StructField(_LO, LongType(), False)])
            # Only the differing buckets' rows leave the JVM.
            rows = frames[side].where(F.col(_BUCKET).isin(differing)) \
                .mapInArrow(pass2(side), shape)
        whole = F.struct(*[F.col(f"c{i}").alias(c) for i, c in enumerate(df.columns)])
        return rows.groupBy(*keys).agg(
            F.count(F.lit(1)).alias(f"{side}_count"), F.first(whole).alias(f"{side}_row"))

    joined = kept(source, "source").join(kept(target, "target"), keys, "full_outer")
    counted = joined.select(
        *keys,
        F.coalesce("source_count", F.lit(0)).alias("source_count"),
        F.coalesce("target_count", F.lit(0)).alias("target_count"),
        "source_row", "target_row",
    )
    # Cached: the totals below compute it once, the samples and the
    # evidence read it back. It holds only the differing buckets' rows.
    counted = counted.persist(StorageLevel.MEMORY_AND_DISK)
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
    limit = plan.sample

    def unmatched_rows(side: str, mine, theirs) -> Any:
        # The distinct rows `side` holds more copies of, and how many more:
        # the table's columns, then the count.
        return unmatched.where(mine > theirs) \
            .select(f"{side}_row.*", (mine - theirs).alias(_EXCESS))

    by_groups = None
    if by is not None:
        def grouped(side: str, mine, theirs) -> list:
            # Each unmatched row's `by` value rendered by recon (the compared
            # value, as the CLI groups it), then summed per value by Spark.
            def run(batches):
                p = _recon.spark_plan_pair(src, tgt, js, rules_arg, by)
                for b in batches:
                    rows = pa.RecordBatch.from_arrays(b.columns[:-1],
                                                      schema=pa.schema(list(b.schema)[:-1]))
                    yield pa.RecordBatch.from_arrays(
                        [p.by_values(side, rows), b.column(b.num_columns - 1)],
                        names=["value", "n"])
            rows = unmatched_rows(side, mine, theirs).mapInArrow(run, "value string, n long")
            got = _collect(rows.groupBy("value").agg(F.sum("n").alias("n")))
            return list(zip(got.column("value").to_pylist(), got.column("n").to_pylist()))
        by_groups = (grouped("source", sc, tc), grouped("target", tc, sc))

    # The sample rows and the pairing of changed rows (the CLI's, on the
    # driver). When each side has at most the CLI's pairing limit of
    # distinct unmatched rows, one collect serves both, in digest order on
    # the driver: the samples are then the CLI's own (the smallest
    # digests). Past it, the samples are the first Spark finds and the
    # pairing is skipped, as the CLI's is.
    distinct = (totals[3], totals[7])
    pairs_skipped = max(distinct) > plan.pair_most
    unmatched_pair = None
    if pairs_skipped:
        def samples(side: str, mine, theirs) -> pa.RecordBatch:
            if limit == 0:
                return _empty_samples()
            rows = unmatched.where(mine > theirs) \
                .select(f"{side}_row.*", "source_count", "target_count").limit(limit)
            rows = _collect(rows)
            return rows.combine_chunks().to_batches()[0] if rows.num_rows else \
                pa.RecordBatch.from_pylist([], schema=rows.schema)
        shown = (samples("source", sc, tc), samples("target", tc, sc))
    else:
        got = _collect(unmatched.select(*keys, "source_count", "target_count", "source_row",
                                        "target_row"))
        got = got.take(pa.array(_digest_order(got, keys), pa.int64()))
        rows = (_side_rows(got, "source"), _side_rows(got, "target"))
        shown = tuple(_empty_samples() if limit == 0 else r.slice(0, limit) for r in rows)
        if min(distinct) > 0:
            unmatched_pair = tuple(_with_excess(r) for r in rows)

    result = plan.report(cmp, stats, shown[0], shown[1],
                         threads, kept_rows[0] + kept_rows[1], pass1_seconds,
                         time.perf_counter() - started - pass1_seconds, path,
                         by_groups=by_groups, unmatched=unmatched_pair,
                         pairs_skipped=pairs_skipped)
    return SparkDiff(result, unmatched, counted, source, target)


def _refuse_collated_keys(plan: Any, frames: Mapping[str, Any]) -> None:
    """Spark groups and joins a collated string (``UTF8_LCASE``, ...) by its
    collation, recon by its bytes: such a key column would be split or
    merged differently by the two, so it is refused."""
    for side, df in frames.items():
        for name in plan.key(side):
            kind = df.schema[name].dataType.simpleString()
            if "collate" in kind.lower():
                raise _recon.UsageError(
                    f"key column {name!r} of the {side} is a {kind}: Spark matches it by its "
                    f"collation and recon by its bytes, so it cannot be a key on Spark; "
                    f"pass it as plain text (F.col({name!r}).cast('string'))")


def _keyed(source: Any, target: Any, frames: Mapping[str, Any], plan: Any, cmp: Any,
           bits: int, path: str, local: Mapping[str, Any], started: float,
           digested: Any) -> SparkDiff:
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

    from ._api import diff as local_diff

    pass1_seconds = time.perf_counter() - started
    differing = cmp.differing
    differs = F.col(_BUCKET).isin(differing)
    frame_of = {"source": source, "target": target}

    def key_cols(side: str) -> list:
        df = frame_of[side]
        return [F.col(f"c{df.columns.index(c)}") for c in plan.key(side)]

    def all_of(conditions: Sequence[Any]) -> Any:
        return reduce(lambda a, b: a & b, conditions)

    src_key = key_cols("source")
    null_key = reduce(lambda a, b: a | b, [c.isNull() for c in src_key])
    # Keys more than once on the source and rows with a NULL key, per
    # bucket: few rows, cached for the samples below.
    groups = frames["source"].groupBy(_BUCKET, *src_key).agg(F.count(F.lit(1)).alias("n"))
    special = groups.where((F.col("n") > 1) | null_key).persist(StorageLevel.MEMORY_AND_DISK)
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
            rows = {side: digested(frames[side].where(F.col(_BUCKET).isin(read_again)), side)
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
            df = frame_of[side]
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
        result._result, cmp.rows, dup_keys, dup_rows, counts["null_rows"], bits,
        len(differing), _parallelism(source), pass1_seconds,
        time.perf_counter() - started - pass1_seconds, path)
    return SparkDiff(done, None, None, source, target, local=result)


def _digest_order(got: pa.Table, keys: Sequence[str]) -> list:
    """The row positions of ``got`` in ascending order of the 128-bit row
    digest its ``keys`` hold: 16 bytes little-endian (JVM digests), or the
    high and low halves as signed longs (Python digests)."""
    if len(keys) == 1:
        digests = [int.from_bytes(d, "little") for d in got[keys[0]].to_pylist()]
    else:
        mask = (1 << 64) - 1
        digests = [((hi & mask) << 64) | (lo & mask)
                   for hi, lo in zip(got[keys[0]].to_pylist(), got[keys[1]].to_pylist())]
    return sorted(range(len(digests)), key=digests.__getitem__)


def _side_rows(got: pa.Table, side: str) -> pa.RecordBatch:
    """The rows of ``got`` (the unmatched distinct rows, with both sides'
    counts and rows) that ``side`` holds more copies of: the table's
    columns (its ``{side}_row`` flattened), then ``source_count`` and
    ``target_count``, as the report's samples take them."""
    import pyarrow.compute as pc

    other = "target" if side == "source" else "source"
    kept = got.filter(pc.greater(got[f"{side}_count"], got[f"{other}_count"]))
    row = kept[f"{side}_row"].combine_chunks()
    counts = [kept[c].combine_chunks() for c in ("source_count", "target_count")]
    return pa.RecordBatch.from_arrays(row.flatten() + counts,
                                      names=[f.name for f in row.type] + ["source_count",
                                                                          "target_count"])


def _with_excess(rows: pa.RecordBatch) -> pa.RecordBatch:
    """:func:`_side_rows`' batch with the two counts replaced by the side's
    excess copies (what the pairing takes)."""
    import pyarrow.compute as pc

    n = rows.num_columns
    s, t = rows.column(n - 2), rows.column(n - 1)
    excess = pc.abs(pc.subtract(s, t))
    return pa.RecordBatch.from_arrays(rows.columns[:n - 2] + [excess],
                                      names=rows.schema.names[:n - 2] + [_EXCESS])


def _empty_samples() -> pa.RecordBatch:
    return pa.RecordBatch.from_pydict({"source_count": pa.array([], pa.int64()),
                                       "target_count": pa.array([], pa.int64())})


def fingerprint(
    df: Any,
    *,
    by: Optional[str] = None,
    sketch: Optional[int] = None,
    columns: Optional[Columns] = None,
    exclude: Optional[Columns] = None,
    map: Optional[Mapping[str, str]] = None,
    cast: Optional[Mapping[str, str]] = None,
    rules: Optional[PathLike] = None,
    round: Optional[Mapping[str, int]] = None,
    timestamp_precision: Optional[Mapping[str, str]] = None,
    trim: Optional[Columns] = None,
    case_insensitive: Optional[Columns] = None,
    empty_as_null: Optional[Columns] = None,
    name: str = "spark",
) -> Fingerprint:
    """The fingerprint of a Spark DataFrame: the same file ``recon
    fingerprint`` writes for the same rows (``.save(path)`` writes it), so a
    cluster table and a workstation extract compare with ``recon
    compare-fingerprints`` without moving either. ``sketch=N`` adds the
    sketch that names up to N differing rows (each partition sketches its
    rows; the sketches add up). ``name`` is recorded as the table (for
    people; not compared)."""
    table, js, rules_arg, plan = _table_plan(df, by, name, dict(
        columns=columns, exclude=exclude, map=map, cast=cast, round=round,
        timestamp_precision=timestamp_precision, trim=trim,
        case_insensitive=case_insensitive, empty_as_null=empty_as_null), rules)

    def part(batches):
        p = _recon.spark_plan_table(table, js, rules_arg, by)
        yield pa.RecordBatch.from_pydict({"part": pa.array([p.fingerprint_part(batches, sketch)],
                                                           pa.binary())})

    parts = _collect(df.select(*_positional(df)).mapInArrow(part, "part binary"))
    parts = parts.column("part").to_pylist()
    return Fingerprint(plan.assemble_fingerprint(name, parts, by, sketch), name)


def _table_plan(df: Any, by: Optional[str], name: str, opts: dict, rules: Optional[PathLike]):
    """The plan of one DataFrame read alone, and what a task needs to
    make it again."""
    js = _settings(opts)
    rules_arg = _rules(rules)
    table = (name, digest_schema(df))
    return table, js, rules_arg, _recon.spark_plan_table(table, js, rules_arg, by)


def extract(
    df: Any,
    digests: Any,
    *,
    columns: Optional[Columns] = None,
    exclude: Optional[Columns] = None,
    map: Optional[Mapping[str, str]] = None,
    cast: Optional[Mapping[str, str]] = None,
    rules: Optional[PathLike] = None,
    round: Optional[Mapping[str, int]] = None,
    timestamp_precision: Optional[Mapping[str, str]] = None,
    trim: Optional[Columns] = None,
    case_insensitive: Optional[Columns] = None,
    empty_as_null: Optional[Columns] = None,
) -> Any:
    """The rows of a Spark DataFrame whose digests ``digests`` lists (a
    :class:`recon.FingerprintComparison` of two sketched fingerprints, or
    the path of a digests file), every copy, with the DataFrame's own
    columns: ``recon extract`` on a cluster. Give the options the
    DataFrame's fingerprint was made with. Lazy: a DataFrame to write or
    collect; diffing the two sides' extracts gives the tables' answer."""
    if isinstance(digests, FingerprintComparison):
        text = digests._result.digests_json()
    else:
        text = Path(digests).read_text()
    table, js, rules_arg, _ = _table_plan(df, None, "spark", dict(
        columns=columns, exclude=exclude, map=map, cast=cast, round=round,
        timestamp_precision=timestamp_precision, trim=trim,
        case_insensitive=case_insensitive, empty_as_null=empty_as_null), rules)

    def part(batches):
        p = _recon.spark_plan_table(table, js, rules_arg, None)
        yield from p.extract_part(batches, text)

    positional = df.select(*_positional(df))
    return positional.mapInArrow(part, positional.schema).toDF(*df.columns)
