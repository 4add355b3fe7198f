"""What both diffs and the fingerprints do to a Spark DataFrame: its
Arrow schema, positional columns, the bucket Spark computes for each row,
where the digests run, collecting results to the driver, and the shapes
the report's samples take."""

from __future__ import annotations

import os
import warnings
from typing import Any, Optional, Sequence, Tuple, Union

import pyarrow as pa

from .. import _recon
from .._results import PathLike
from . import _jvm

Columns = Union[str, Sequence[str]]

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


def _check_digests(digests: str) -> None:
    """Refuses a ``digests=`` that is none of "auto", "jvm", "python"."""
    if digests not in _DIGESTS:
        raise _recon.UsageError(f"digests= takes one of {', '.join(repr(d) for d in _DIGESTS)}, "
                                f"not {digests!r}")


def _digest_path(asked: str, df: Any, plan: Any, stacklevel: int = 4) -> str:
    """Where the digests run: "jvm" or "python" (see ``recon.spark.diff``);
    ``stacklevel`` points the fallback's warning at the user's call."""
    if asked == "python":
        return "python"
    converted = plan.converted()
    if converted:
        if asked == "jvm":
            raise _recon.UsageError(
                f"digests='jvm' digests values as Spark holds them, but the plan converts "
                f"{', '.join(map(repr, converted))}: use digests='python' or 'auto'")
        return "python"
    why = _jvm.register(df.sparkSession)
    if why is None:
        return "jvm"
    if asked == "jvm":
        raise _recon.UsageError(f"digests='jvm': recon's jar cannot be used here: {why}")
    # Said once per call: the same answer, but every row crosses into Python.
    warnings.warn(f"recon.spark: digests run in Python (mapInArrow), not the JVM: {why}",
                  RuntimeWarning, stacklevel=stacklevel)
    return "python"


def _positional(df: Any) -> list:
    """``df``'s columns renamed c0, c1, ...: PySpark's mapInArrow cannot
    refer to a column whose name holds a backtick, and the digests read
    columns by position (the plan was made from the real names)."""
    return [_col(c).alias(f"c{i}") for i, c in enumerate(df.columns)]


def _unpersist(df: Any) -> None:
    try:
        df.unpersist()
    except Exception:  # the session may be gone at interpreter exit
        pass


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
