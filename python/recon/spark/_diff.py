"""``recon.spark.diff``: its options, then the plan and pass 1
(:mod:`._run`), then the keyless (:mod:`._keyless`) or keyed
(:mod:`._keyed`) rest."""

from __future__ import annotations

from typing import Any, Mapping, Optional, Sequence, Union

from .. import _recon
from .._results import PathLike
from ._frames import _DEFAULT_BUCKETS, _check_digests, Columns, _bits
from ._keyed import keyed_diff
from ._keyless import keyless_diff
from ._result import SparkDiff
from ._run import Run


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
    bits = _bits(buckets)
    _check_digests(digests)
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
    run = Run.make(source, target, (source_name, target_name), opts, rules, by, digests, bits)
    cmp = run.pass1()
    if keyed:
        return keyed_diff(run, cmp, dict(opts, rules=rules, diff_columns=diff_columns))
    return keyless_diff(run, cmp)
