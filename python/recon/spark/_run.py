"""One ``recon.spark.diff`` call's plan, and its first pass: each side's
rows bucketed by Spark, digested (in the JVM or in Python) and summed per
bucket, then the buckets compared on the driver."""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any, Dict, List, Mapping, Optional, Sequence, Tuple

import pyarrow as pa

from .. import _recon
from .._results import PathLike
from .._settings import settings as _settings
from . import _jvm
from ._frames import (
    _BUCKET,
    _bucket_of,
    _bucketed,
    _col,
    _collect,
    _digest_path,
    _positional,
    _rules,
    digest_schema,
)

SIDES = ("source", "target")


@dataclass
class Run:
    """What a diff's steps share: the two DataFrames, the plan made on the
    driver, and what a Spark task needs to make that plan again (each
    table's name and Arrow schema, the settings' JSON and the rules file's
    text). Tasks are given those plain values, never this object: it holds
    the DataFrames and the plan, which do not pickle."""

    source: Any
    target: Any
    src: Tuple[str, pa.Schema]
    tgt: Tuple[str, pa.Schema]
    js: str
    rules: Optional[Tuple[str, str]]
    by: Optional[str]
    keyed: bool
    plan: Any
    # Where the digests run: "jvm" or "python".
    path: str
    bits: int
    # Each side's columns as c0, c1, ... and, unless the buckets are the
    # digests' top bits (prefix), the row's bucket. Where each row is
    # bucketed: keyless in the JVM, by the top bits of its own digest, as
    # the command line buckets (no hash beside the digest; an even count of
    # lost copies decodes too); keyed, by its key (key_bucket), so all rows
    # of a key share a bucket; keyless in Python, by Spark's own hash of
    # the row (_bucketed), which the second pass evaluates before anything
    # is digested, so the agreeing buckets' rows never reach Python.
    frames: Dict[str, Any]
    started: float

    @staticmethod
    def make(source: Any, target: Any, names: Tuple[str, str], opts: Mapping[str, Any],
             rules: Optional[PathLike], by: Optional[str], digests: str, bits: int) -> "Run":
        """The plan of comparing ``source`` with ``target`` (refused here
        when it cannot be run) and each side's bucketed frame."""
        started = time.perf_counter()
        keyed = opts.get("key") is not None
        js = _settings(dict(opts))
        rules_arg = _rules(rules)
        src = (names[0], digest_schema(source))
        tgt = (names[1], digest_schema(target))
        planner = _recon.spark_plan_keyed if keyed else _recon.spark_plan_pair
        plan = planner(src, tgt, js, rules_arg, by)
        if keyed:
            _refuse_collated_keys(plan, {"source": source, "target": target})
        path = _digest_path(digests, source, plan)
        run = Run(source, target, src, tgt, js, rules_arg, by, keyed, plan, path, bits, {},
                  started)
        for side, df in zip(SIDES, (source, target)):
            if run.prefix:
                run.frames[side] = df.select(*_positional(df))
            elif keyed:
                key = run.key_bucket(side, [_col(k) for k in plan.key(side)])
                run.frames[side] = df.select(*_positional(df), key.alias(_BUCKET))
            else:
                run.frames[side] = _bucketed(df, plan.compared(side), 1 << bits)
        return run

    @property
    def prefix(self) -> bool:
        """Rows are bucketed by their digests' top bits (keyless, in the
        JVM), not by Spark's hash: the frames have no bucket column."""
        return self.path == "jvm" and not self.keyed

    def key_bucket(self, side: str, keys: Sequence[Any]) -> Any:
        """The bucket of a keyed row from its key columns ``keys`` (the
        side's key, in plan order). In the JVM: the top bits of recon's own
        digest of the key, so the bucket depends on the key's value as
        recon sees it, not on how Spark hashes its type. In Python: Spark's
        hash of the key (see _bucketed), which the second pass evaluates in
        the JVM before any row reaches Python."""
        if self.path == "jvm":
            return _jvm.key_bucket(keys, self.bits)
        df = self.frame(side)
        named = [(df.schema[k].dataType, c) for k, c in zip(self.plan.key(side), keys)]
        return _bucket_of(named, 1 << self.bits)

    def frame(self, side: str) -> Any:
        """The side's DataFrame as the user gave it."""
        return self.source if side == "source" else self.target

    def compared(self, side: str) -> List[Any]:
        """The side's compared columns in plan order, by their positional
        names (c0, c1, ...)."""
        from pyspark.sql import functions as F

        names = self.frame(side).columns
        return [F.col(f"c{names.index(c)}") for c in self.plan.compared(side)]

    def pass1(self) -> Any:
        """Pass 1: the buckets' sums on both sides, compared (a
        ``BucketComparison``: which buckets differ and what they decode
        to)."""
        from pyspark.sql import functions as F

        if self.path == "jvm":
            # One aggregate sums the buckets; nothing enters Python.
            bucket = None if self.prefix else F.col(_BUCKET)
            by_side = _jvm.bucket_sums({side: (self.frames[side], self.compared(side), bucket)
                                        for side in SIDES}, self.bits)
        else:
            by_side = self._python_sums()
        return self.plan.compare(by_side["source"], by_side["target"], self.bits,
                                 prefix=self.prefix)

    def _python_sums(self) -> Dict[str, list]:
        """Per-partition bucket sums made in Python (``mapInArrow``),
        collected to the driver."""
        # Plain values only: the task closures are pickled to the executors.
        planner = _recon.spark_plan_keyed if self.keyed else _recon.spark_plan_pair
        src, tgt, js, rules_arg, bits = self.src, self.tgt, self.js, self.rules, self.bits

        def pass1(side: str):
            def run(batches):
                p = planner(src, tgt, js, rules_arg)
                sums = p.bucket_sums(side, batches, bits)
                yield pa.RecordBatch.from_pydict(
                    {"side": pa.array([side], pa.string()),
                     "sums": pa.array([sums], pa.binary())})
            return run

        shape = "side string, sums binary"
        parts = _collect(self.frames["source"].mapInArrow(pass1("source"), shape)
                         .unionAll(self.frames["target"].mapInArrow(pass1("target"), shape)))
        by_side: Dict[str, list] = {"source": [], "target": []}
        for side, sums in zip(parts.column("side").to_pylist(),
                              parts.column("sums").to_pylist()):
            by_side[side].append(sums)
        return by_side


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
