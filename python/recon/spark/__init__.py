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

from ._diff import diff
from ._fingerprint import extract, fingerprint
from ._frames import digest_schema
from ._result import SparkDiff

__all__ = ["diff", "fingerprint", "extract", "SparkDiff", "digest_schema"]
