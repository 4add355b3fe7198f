"""The package's functions: diff, schema, fingerprint,
compare_fingerprints and extract. What they return is in ``_results``; how keywords
become the engine's settings, in ``_settings``."""

from __future__ import annotations

import json
import shutil
import tempfile
from pathlib import Path
from typing import Any, Mapping, Optional, Sequence, Union

from . import _recon
from ._inputs import as_table
from ._progress import reporter
from ._results import Diff, Fingerprint, FingerprintComparison, PathLike, SchemaPlan
from ._settings import FINGERPRINT_OPTIONS, SCHEMA_OPTIONS, align_input, check_names, fspath, \
    settings

Columns = Union[str, Sequence[str]]


def _run(call, progress: Any, *args, **kwargs):
    report = reporter(progress)
    try:
        return call(*args, progress=report, **kwargs)
    finally:
        if report is not None and hasattr(report, "close"):
            report.close()


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
    output: Optional[PathLike] = None,
    memory_limit: Union[str, int, None] = None,
    threads: Optional[int] = None,
    passes: Union[str, int] = "auto",
    progress: Any = None,
    force: bool = False,
    temp_dir: Optional[PathLike] = None,
    diff_columns: Optional[str] = None,
    max_unmatched_rows: Optional[int] = None,
    max_unmatched_ratio: Optional[float] = None,
    max_changed: Optional[int] = None,
    max_missing: Optional[int] = None,
    by_position: bool = False,
    ignore_case_names: bool = False,
    ignore_extra_columns: bool = False,
    assume_tz: Union[str, Sequence[str], None] = None,
    round: Optional[Mapping[str, int]] = None,
    timestamp_precision: Optional[Mapping[str, str]] = None,
    trim: Optional[Columns] = None,
    case_insensitive: Optional[Columns] = None,
    empty_as_null: Optional[Columns] = None,
    include_index: bool = False,
    source_format: Optional[str] = None,
    target_format: Optional[str] = None,
    delimiter: Optional[str] = None,
    quote: Optional[str] = None,
    escape: Optional[str] = None,
    header: Optional[bool] = None,
    null_values: Optional[Columns] = None,
    encoding: Optional[str] = None,
    infer_types: bool = False,
    max_parse_errors: int = 0,
    int96_unit: Optional[str] = None,
    trailing_delimiter: bool = False,
    quoted_empty_as_null: bool = False,
    date_format: Optional[Mapping[str, str]] = None,
    timestamp_format: Optional[Mapping[str, str]] = None,
    skip_rows: Optional[int] = None,
    source_skip_rows: Optional[int] = None,
    target_skip_rows: Optional[int] = None,
    comment: Optional[str] = None,
    source_query: Optional[str] = None,
    target_query: Optional[str] = None,
    connections: Optional[int] = None,
    storage_options: Optional[Mapping[str, Any]] = None,
) -> Diff:
    """Compares two tables as multisets of rows (``EXCEPT ALL`` both ways),
    or by ``key``.

    ``source`` and ``target`` are each a path or table spec (a file, a
    directory, a glob, ``delta:PATH@VERSION``, ``iceberg:PATH``,
    ``postgres://USER@HOST/DB?table=SCHEMA.NAME``, ``s3://``, ``gs://``,
    ``az://`` and ``https://`` URLs with ``storage_options``), a pyarrow
    Table, RecordBatchReader or Dataset, a polars DataFrame or LazyFrame, a
    pandas DataFrame (its index only with ``include_index=True``), a DuckDB
    relation, or any object with ``__arrow_c_stream__``. Data in memory is
    read in place; streams are copied once to the temp directory, so tables
    larger than memory stay within ``memory_limit``.

    Every other argument is the command line's flag of the same name
    (``recon diff --help``): ``key="order_id"`` is ``--key order_id``,
    ``tolerance={"amount": 0.01}`` is ``--tolerance amount=0.01``,
    ``trim=["name"]`` is ``--trim name``, ``header=False`` is
    ``--no-header``. ``output`` keeps the evidence files in that directory;
    by default they go to a temp directory removed with the result.
    ``progress`` is True, False, None (on when stderr is a terminal) or a
    function called with a dict of counters.

    Raises a :class:`ReconError` subclass on bad arguments or input, and
    KeyboardInterrupt on Ctrl-C after the run has stopped and removed its
    temp files.
    """
    options = dict(
        threads=threads, memory_limit=memory_limit, temp_dir=temp_dir, passes=passes,
        sample=sample, max_unmatched_rows=max_unmatched_rows,
        max_unmatched_ratio=max_unmatched_ratio, max_changed=max_changed,
        max_missing=max_missing, key=key, tolerance=tolerance, columns=columns,
        exclude=exclude, map=map, cast=cast, by_position=by_position or None,
        ignore_case_names=ignore_case_names or None,
        ignore_extra_columns=ignore_extra_columns or None, assume_tz=assume_tz,
        round=round, timestamp_precision=timestamp_precision, trim=trim,
        case_insensitive=case_insensitive, empty_as_null=empty_as_null,
        source_format=source_format, target_format=target_format, delimiter=delimiter,
        quote=quote, escape=escape, header=header, null_values=null_values,
        encoding=encoding, infer_types=infer_types or None,
        max_parse_errors=max_parse_errors or None, int96_unit=int96_unit,
        trailing_delimiter=trailing_delimiter or None,
        quoted_empty_as_null=quoted_empty_as_null or None, date_format=date_format,
        timestamp_format=timestamp_format, skip_rows=skip_rows,
        source_skip_rows=source_skip_rows, target_skip_rows=target_skip_rows,
        comment=comment, source_query=source_query, target_query=target_query,
        connections=connections, storage_options=storage_options,
    )
    text = settings(options)
    own_dir = output is None
    out = Path(tempfile.mkdtemp(prefix="recon-evidence-")) if own_dir else Path(output)
    try:
        result = _run(
            _recon.diff, progress,
            as_table(source, "source", include_index), as_table(target, "target", include_index),
            text, rules=fspath(rules), output=str(out), force=force or own_dir, by=by,
            diff_columns=diff_columns,
        )
    except BaseException:
        if own_dir:
            shutil.rmtree(out, ignore_errors=True)
        raise
    keyed = json.loads(result.json()).get("keyed") is not None
    return Diff(result, out, keyed, own_dir)


def schema(
    source: Any,
    target: Any,
    *,
    rules: Optional[PathLike] = None,
    include_index: bool = False,
    **options: Any,
) -> SchemaPlan:
    """Plans a pair from metadata, reading no rows (``recon schema``): how
    the columns pair up, what each comparison converts, and whether the
    tables are compatible. Takes :func:`diff`'s column, type and input
    options (``columns=``, ``map=``, ``cast=``, ``header=``, ...)."""
    check_names(options, SCHEMA_OPTIONS, "schema")
    text = settings(align_input(options))
    plan_json, screen = _recon.schema(
        as_table(source, "source", include_index), as_table(target, "target", include_index),
        text, rules=fspath(rules),
    )
    return SchemaPlan(json.loads(plan_json), screen)


def fingerprint(
    table: Any,
    *,
    by: Optional[str] = None,
    schema_like: Optional[PathLike] = None,
    sketch: Optional[int] = None,
    rules: Optional[PathLike] = None,
    progress: Any = None,
    include_index: bool = False,
    **options: Any,
) -> Fingerprint:
    """Fingerprints one table (``recon fingerprint``), to compare with a
    fingerprint made elsewhere: by another machine, the command line, or
    ``recon.spark``. ``by`` fingerprints each group of a column too;
    ``schema_like`` types a text table like another table's columns;
    ``sketch=N`` also keeps a sketch that names up to N differing distinct
    rows when compared with another sketched fingerprint (``save`` writes
    it beside the file). Takes :func:`diff`'s column, type and input
    options (``format=`` is the table's format, ``query=`` a database
    table's SELECT)."""
    text, handed = _one_table(table, options, include_index, "fingerprint")
    out = _run(_recon.fingerprint, progress, handed, text, rules=fspath(rules), by=by,
               schema_like=fspath(schema_like), sketch=sketch)
    return Fingerprint(out, handed[2])


def _one_table(table: Any, options: dict, include_index: bool, what: str):
    """The settings and the handed table of a one-table call."""
    check_names(options, FINGERPRINT_OPTIONS, what)
    if "format" in options:
        options["source_format"] = options.pop("format")
    if "query" in options:
        options["source_query"] = options.pop("query")
    return settings(align_input(options)), as_table(table, "table", include_index)


def _as_fingerprint(fp: Union[Fingerprint, PathLike]) -> Fingerprint:
    return fp if isinstance(fp, Fingerprint) else Fingerprint.load(fp)


def compare_fingerprints(
    a: Union[Fingerprint, PathLike], b: Union[Fingerprint, PathLike]
) -> FingerprintComparison:
    """Compares two fingerprints (``recon compare-fingerprints``); each is a
    :class:`Fingerprint` or the path of a fingerprint file."""
    a, b = _as_fingerprint(a), _as_fingerprint(b)
    return FingerprintComparison(_recon.compare_fingerprints(a._native, b._native))


def extract(
    table: Any,
    digests: Union[FingerprintComparison, PathLike],
    like: Union[Fingerprint, PathLike],
    output: PathLike,
    *,
    schema_like: Optional[PathLike] = None,
    rules: Optional[PathLike] = None,
    progress: Any = None,
    include_index: bool = False,
    **options: Any,
) -> dict:
    """Writes to ``output`` (Parquet, the table's own columns) every row of
    ``table`` whose digest ``digests`` lists (``recon extract``): the
    comparison of two sketched fingerprints, or the digests file
    ``save_digests`` wrote. ``like`` is this table's fingerprint; give the
    options it was made with. ``recon.diff`` of two sides' extracts gives
    the answer of ``recon.diff`` of the two tables. Returns ``{"side",
    "rows", "digests"}``: which side of the comparison the table is, the
    rows written and the listed digests it holds."""
    if isinstance(digests, FingerprintComparison):
        name, text = "digests", digests._result.digests_json()
    else:
        name, text = fspath(digests), Path(digests).read_text()
    settings_text, handed = _one_table(table, options, include_index, "extract")
    side, rows, found = _run(_recon.extract, progress, handed, settings_text, name, text,
                             _as_fingerprint(like)._native, fspath(output),
                             rules=fspath(rules), schema_like=fspath(schema_like))
    return {"side": side, "rows": rows, "digests": found}
