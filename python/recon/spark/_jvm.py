"""recon's digests inside Spark's JVM: registering the jar the wheel ships
(``recon/jars/recon-spark.jar``, built from ``jvm/`` by
``scripts/build-jar.sh``) and the expressions the two passes run with it.

With the jar, Spark computes each row's digest in its own generated code,
on its internal values, and sums the buckets in an aggregate: no row
crosses into Python. docs/spark.md ("Which digests run where") says when
``recon.spark`` uses it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Dict, List, Mapping, Optional, Sequence, Tuple

# The jar sits beside the package root (recon/jars/), not in recon/spark/.
JAR = Path(__file__).resolve().parent.parent / "jars" / "recon-spark.jar"
# The catalog name recon's functions are registered under. Not "recon", so
# it cannot shadow a catalog of the user's called that.
CATALOG = "recon_jvm"
_CLASS = "dev.recon.spark.ReconCatalog"


def _first_line(e: BaseException) -> str:
    text = str(e).strip()
    return text.splitlines()[0] if text else type(e).__name__


def _is_connect(spark: Any) -> bool:
    return type(spark).__module__.startswith("pyspark.sql.connect")


def _fn(name: str, *cols: Any) -> Any:
    from pyspark.sql import functions as F

    return F.call_function(f"{CATALOG}.{name}", *cols)


def _use_jar_loader(spark: Any) -> None:
    """Points this thread's JVM context class loader at the session's jar
    class loader. ``ADD JAR`` sets it only for the thread that ran it; a
    query planned from another thread (PySpark pins each Python thread to
    a JVM thread) then loads the functions interpreted, without codegen,
    silently several times slower."""
    if _is_connect(spark):
        return  # the server plans Connect queries, in its own threads
    loader = spark._jsparkSession.sharedState().jarClassLoader()
    spark._jvm.java.lang.Thread.currentThread().setContextClassLoader(loader)


def _probe(spark: Any) -> None:
    from pyspark.sql import functions as F

    spark.range(1).select(_fn("digest", F.struct(F.lit(1)))).collect()


def register(spark: Any) -> Optional[str]:
    """Makes recon's JVM functions callable in ``spark``: None when they
    are, else why not (one line, for the report and the fallback)."""
    if not JAR.is_file():
        return f"this installation has no recon-spark.jar ({JAR})"
    key = f"spark.sql.catalog.{CATALOG}"
    try:
        if spark.conf.get(key, None) == _CLASS:
            _use_jar_loader(spark)
            try:
                _probe(spark)
                return None
            except Exception:
                pass  # registered by name only (another session): add the jar
        if _is_connect(spark):
            spark.addArtifacts(str(JAR))
        else:
            path = str(JAR).replace("\\", "\\\\").replace("'", "\\'")
            spark.sql(f"ADD JAR '{path}'")
        spark.conf.set(key, _CLASS)
        _use_jar_loader(spark)
        _probe(spark)
        return None
    except Exception as e:  # a cluster that forbids jars, an old Spark, ...
        return _first_line(e)


def row(columns: Sequence[Any]) -> Any:
    """The struct whose fields are a row's compared columns, in plan order
    (the row digest's columns 0, 1, ...)."""
    from pyspark.sql import functions as F

    return F.struct(*columns)


def digest(columns: Sequence[Any]) -> Any:
    """Each row's 128-bit digest, 16 bytes little-endian, computed where it
    is projected: a filter on it then reads the column instead of
    digesting the row again (``digest_once``)."""
    return _fn("digest_once", row(columns))


def bucket_sums(sides: Mapping[str, Tuple[Any, Sequence[Any], Optional[Any]]],
                bits: int) -> Dict[str, List[bytes]]:
    """Pass 1: each side's bucket sums, computed in the JVM, as the bytes
    ``SparkPlan.compare`` takes (none for an empty side). ``sides`` maps a
    side to its DataFrame, its compared columns and each row's bucket
    among ``2**bits``: a column, or None for the top bits of the row's own
    digest (as the command line buckets).

    Both sides are one Spark job: each partition sends one state per side,
    and the two tables' tasks share the cores (two jobs of 3 tasks each
    leave one of 2 cores idle at the end of each)."""
    from pyspark.sql import functions as F

    parts = []
    for i, (df, columns, bucket) in enumerate(sides.values()):
        # The digests in a projection (compiled into the scan's code), the
        # sums in the aggregate, whose own inputs Spark evaluates
        # interpreted. A NULL bucket is the digest's own (its top bits),
        # which the aggregate takes from the digest it already reads.
        b = F.lit(None).cast("int") if bucket is None else bucket
        parts.append(df.select(F.lit(i).alias("s"),
                               _fn("row_digests", row(columns)).alias("d"), b.alias("b")))
    both = parts[0]
    for p in parts[1:]:
        both = both.unionAll(p)
    summed = _fn("bucket_sums", F.col("d"), F.col("b"), F.lit(bits)).alias("sums")
    # One side (a fingerprint) needs no grouping, and without it Spark
    # sends the partitions' states straight to the final aggregate, with no
    # shuffle stage between.
    got = (both.agg(F.lit(0).alias("s"), summed) if len(parts) == 1
           else both.groupBy("s").agg(summed)).collect()
    by_index = {r["s"]: r["sums"] for r in got}
    return {side: [] if by_index.get(i) is None else [bytes(by_index[i])]
            for i, side in enumerate(sides)}


def key_bucket(columns: Sequence[Any], bits: int) -> Any:
    """The bucket among ``2**bits`` of a keyed row: the top bits of the
    digest of its key ``columns``. Deterministic to the optimizer (unlike
    :func:`digest`), so a query that does not use the bucket never
    computes it, and a filter on it is evaluated before the row is
    digested."""
    from pyspark.sql import functions as F

    return _fn("bucket", _fn("digest", row(columns)), F.lit(bits))


def bucket(digest_col: Any, bits: int) -> Any:
    """The bucket among ``2**bits`` of a 16-byte digest: its top bits (the
    bucket ``bucket_sums`` gives a row without a bucket column)."""
    from pyspark.sql import functions as F

    return _fn("bucket", digest_col, F.lit(bits))


def selected(digest_col: Any, bucket: Any, selector: bytes) -> Any:
    """Whether the second pass keeps a row of pass 1's ``bucket`` with
    this digest (the selector of ``SparkComparison.selector``: the decoded
    digests and the buckets that did not decode)."""
    from pyspark.sql import functions as F

    return _fn("selected", digest_col, bucket, F.lit(bytearray(selector)))
