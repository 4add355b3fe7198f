"""``recon.spark.fingerprint`` and ``recon.spark.extract``: one
DataFrame's fingerprint, and the rows of the digests a comparison of two
sketched fingerprints names."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Mapping, Optional

import pyarrow as pa

from .. import _recon
from .._results import Fingerprint, FingerprintComparison, PathLike
from .._settings import settings as _settings
from . import _jvm
from ._frames import _check_digests, Columns, _collect, _digest_path, _positional, _rules, digest_schema


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
    digests: str = "auto",
) -> Fingerprint:
    """The fingerprint of a Spark DataFrame: the same file ``recon
    fingerprint`` writes for the same rows (``.save(path)`` writes it), so a
    cluster table and a workstation extract compare with ``recon
    compare-fingerprints`` without moving either. ``sketch=N`` adds the
    sketch that names up to N differing rows (each partition sketches its
    rows; the sketches add up). ``name`` is recorded as the table (for
    people; not compared).

    ``digests`` chooses where rows are digested, as for :func:`diff`:
    ``"auto"`` digests in the JVM (recon's jar; one aggregate, no row enters
    Python) when the jar loads, the plan converts no value and there is no
    ``by`` or ``sketch``, else in Python (``mapInArrow``). Both give the
    same file."""
    _check_digests(digests)
    if digests == "jvm" and (by is not None or sketch is not None):
        raise _recon.UsageError("digests='jvm' makes fingerprints without by= or sketch=: "
                                "use digests='python' or 'auto' for those")
    table, js, rules_arg, plan = _table_plan(df, by, name, dict(
        columns=columns, exclude=exclude, map=map, cast=cast, round=round,
        timestamp_precision=timestamp_precision, trim=trim,
        case_insensitive=case_insensitive, empty_as_null=empty_as_null), rules)
    asked = "python" if by is not None or sketch is not None else digests
    if _digest_path(asked, df, plan, stacklevel=3) == "jvm":
        from pyspark.sql import functions as F

        # The whole table in one bucket: a fingerprint file holds the
        # table's sums (and its columns'), not per-bucket ones.
        names = df.columns
        compared = [F.col(f"c{names.index(c)}") for c in plan.compared("source")]
        sums = _jvm.bucket_sums({"source": (df.select(*_positional(df)), compared, F.lit(0))}, 1)
        return Fingerprint(plan.fingerprint_from_sums(name, sums["source"], 1), name)

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
