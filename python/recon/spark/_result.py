"""The result of ``recon.spark.diff``: the verdict, counts and report every
diff result has (:class:`recon._results.DiffReport`), and the evidence as
Spark DataFrames."""

from __future__ import annotations

import weakref
from typing import Any

from .. import _recon
from .._results import DiffReport
from ._frames import _unpersist

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
