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
from typing import Any, List, Optional, Sequence

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


def bucket_sums(df: Any, columns: Sequence[Any], bucket: Any, bits: int) -> List[bytes]:
    """Pass 1 of one side: its bucket sums (each row in its ``bucket``
    among ``2**bits``), computed by an aggregate in the JVM, as the bytes
    ``SparkPlan.compare`` takes (none for an empty side)."""
    from pyspark.sql import functions as F

    # The digests in a projection (compiled into the scan's code), the
    # sums in the aggregate, whose own inputs Spark evaluates interpreted.
    digested = df.select(_fn("row_digests", row(columns)).alias("d"), bucket.alias("b"))
    got = digested.agg(_fn("bucket_sums", F.col("d"), F.col("b"), F.lit(bits)).alias("s")) \
        .collect()
    sums = got[0]["s"] if got else None
    return [] if sums is None else [bytes(sums)]


def selected(digest_col: Any, bucket: Any, selector: bytes) -> Any:
    """Whether the second pass keeps a row of pass 1's ``bucket`` with
    this digest (the selector of ``SparkComparison.selector``: the decoded
    digests and the buckets that did not decode)."""
    from pyspark.sql import functions as F

    return _fn("selected", digest_col, bucket, F.lit(bytearray(selector)))
