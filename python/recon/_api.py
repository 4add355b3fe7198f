"""The API: diff, schema, fingerprint, compare_fingerprints, and their results."""

from __future__ import annotations

import json
import os
import shutil
import tempfile
import weakref
from pathlib import Path
from typing import Any, Dict, List, Mapping, Optional, Sequence, Union

import pyarrow as pa

from . import _recon
from ._inputs import as_table
from ._progress import reporter
from ._settings import fspath, settings

PathLike = Union[str, "os.PathLike[str]"]
Columns = Union[str, Sequence[str]]


def _write_atomic(path: PathLike, text: str) -> None:
    """Writes `text` to `path` whole or not at all.

    An existing path that is not a regular file (`/dev/null`, `/dev/stdout`,
    a FIFO, a character device) is written in place: a rename would replace
    the device with a regular file, as the CLI's writer also refuses to. A
    symlink keeps its link; the file it points at is replaced."""
    path = Path(path)
    if path.exists() and not path.is_file() and not path.is_dir():
        with open(path, "w", encoding="utf-8") as f:
            f.write(text)
        return
    real = Path(os.path.realpath(path))
    fd, tmp = tempfile.mkstemp(dir=real.parent, prefix=f".{real.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
        os.replace(tmp, real)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def _framed(page: str, height: int = 640) -> str:
    """A whole HTML page for a notebook cell: in an iframe, so the report's
    page styles (body, table, th) do not restyle the notebook around it."""
    import html

    return (f'<iframe srcdoc="{html.escape(page, quote=True)}" '
            f'style="width: 100%; height: {height}px; border: 1px solid #d0d7de;"></iframe>')


def _run(call, progress: Any, *args, **kwargs):
    report = reporter(progress)
    try:
        return call(*args, progress=report, **kwargs)
    finally:
        if report is not None and hasattr(report, "close"):
            report.close()


# Keyed mode's counts, at the top level of the JSON report.
_KEY_COUNTS = ("matched_keys", "value_mismatch", "missing_in_target", "missing_in_source",
               "duplicate_keys", "null_keys", "tolerance_matches")


class Diff:
    """The result of :func:`diff`.

    The verdict and counts are attributes; ``report`` is the JSON report as
    a dict; the evidence methods return ``pyarrow.Table``\\ s read from the
    evidence files when called (``pl.from_arrow(t)`` and ``t.to_pandas()``
    convert them). In Jupyter the HTML report renders inline.
    """

    def __init__(self, result: Any, output: Path, keyed: bool, own_dir: bool) -> None:
        self._result = result
        self._keyed = keyed
        self.output = output
        """The directory holding the evidence files (a temp directory
        removed with this object unless ``output=`` named one)."""
        self._report: Optional[Dict[str, Any]] = None
        if own_dir:
            self._cleanup = weakref.finalize(self, shutil.rmtree, str(output), True)

    @property
    def report(self) -> Dict[str, Any]:
        """The JSON report (what ``recon diff --report`` writes) as a dict."""
        if self._report is None:
            self._report = json.loads(self._result.json())
        return self._report

    @property
    def exact_match(self) -> bool:
        """True when the tables hold exactly the same rows, duplicates counted."""
        return self._result.exact_match

    @property
    def passes(self) -> bool:
        """True on an exact match, or drift within the thresholds given."""
        return self._result.passes

    @property
    def verdict(self) -> str:
        """The verdict line of the text summary."""
        return self._result.verdict

    @property
    def source_rows(self) -> int:
        return self.report["source_rows"]

    @property
    def target_rows(self) -> int:
        return self.report["target_rows"]

    @property
    def source_only_rows(self) -> int:
        """Rows (occurrences) in the source that the target lacks."""
        return self.report["source_only_rows"]

    @property
    def target_only_rows(self) -> int:
        """Rows (occurrences) in the target that the source lacks."""
        return self.report["target_only_rows"]

    @property
    def unmatched_rows(self) -> int:
        return self.source_only_rows + self.target_only_rows

    @property
    def keyed(self) -> Optional[Dict[str, Any]]:
        """Keyed mode's counts (``matched_keys``, ``value_mismatch``,
        ``missing_in_target``, ``missing_in_source``, ``duplicate_keys``,
        ``null_keys``, ``tolerance_matches``) and details (the report's
        ``keyed`` object), or None for a keyless diff."""
        details = self.report.get("keyed")
        if details is None:
            return None
        counts = {k: self.report[k] for k in _KEY_COUNTS if k in self.report}
        return {**counts, **details}

    def _evidence(self, name: str, *, keyed: Optional[bool], instead: str) -> pa.Table:
        if keyed is not None and keyed != self._keyed:
            mode = "keyed" if self._keyed else "keyless"
            raise _recon.UsageError(f"{name}: not written by a {mode} diff; {instead}")
        path = self.output / f"{name}.parquet"
        if not path.exists():
            raise _recon.InputError(f"{path}: the evidence file is gone")
        import pyarrow.parquet as pq

        return pq.read_table(path)

    def source_only(self) -> pa.Table:
        """Rows in the source and not the target, with a ``source_count``
        column (occurrences); keyed diffs: :meth:`missing_in_target` and
        :meth:`changed`."""
        return self._evidence("source_only", keyed=False,
                              instead="use missing_in_target() and changed()")

    def target_only(self) -> pa.Table:
        """Rows in the target and not the source, with their counts."""
        return self._evidence("target_only", keyed=False,
                              instead="use missing_in_source() and changed()")

    def changed(self) -> pa.Table:
        """Keyed: the keys whose values changed, source and target values
        side by side."""
        return self._evidence("changed", keyed=True, instead="pass key= for changed rows by key")

    def missing_in_target(self) -> pa.Table:
        """Keyed: rows whose key the target lacks."""
        return self._evidence("missing_in_target", keyed=True, instead="pass key= for rows by key")

    def missing_in_source(self) -> pa.Table:
        """Keyed: rows whose key the source lacks."""
        return self._evidence("missing_in_source", keyed=True, instead="pass key= for rows by key")

    def duplicate_keys(self, side: str = "source") -> pa.Table:
        """Keyed: unmatched rows of keys duplicated on a side ("source" or
        "target"), diffed as multisets."""
        return self._evidence(f"duplicate_keys_{_side(side)}_only", keyed=True,
                              instead="pass key= for rows by key")

    def null_keys(self, side: str = "source") -> pa.Table:
        """Keyed: unmatched rows with a NULL in the key, diffed as multisets."""
        return self._evidence(f"null_keys_{_side(side)}_only", keyed=True,
                              instead="pass key= for rows by key")

    def to_json(self, path: PathLike) -> None:
        """Writes the JSON report."""
        _write_atomic(path, self._result.json())

    def to_html(self, path: PathLike) -> None:
        """Writes the self-contained HTML report."""
        _write_atomic(path, self._result.html())

    def to_junit(self, path: PathLike, name: str = "recon diff") -> None:
        """Writes JUnit XML with this diff as one test case: it fails when
        the diff does not pass its thresholds."""
        _write_atomic(path, self._result.junit(name))

    def __bool__(self) -> bool:
        raise TypeError("a Diff is not a truth value: test .exact_match or .passes")

    def __repr__(self) -> str:
        return self._result.text().rstrip("\n")

    def _repr_html_(self) -> str:
        return _framed(self._result.html())


def _side(side: str) -> str:
    if side not in ("source", "target"):
        raise ValueError(f"side is 'source' or 'target', not {side!r}")
    return side


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


class SchemaPlan(list):
    """How the columns of two tables pair up and compare: a list of one
    dict per compared column (as in the diff report), with the verdict."""

    def __init__(self, plan: Dict[str, Any], text: str) -> None:
        super().__init__(plan["columns"])
        self.compatible: bool = plan["compatible"]
        """Whether the tables can be compared as they stand."""
        self.not_compared: List[Dict[str, Any]] = plan["not_compared"]
        self.problems: List[str] = plan["problems"]
        self._text = text

    def __repr__(self) -> str:
        return self._text.rstrip("\n")


def _align_input(kwargs: Dict[str, Any]) -> Dict[str, Any]:
    for flag in ("by_position", "ignore_case_names", "ignore_extra_columns", "infer_types",
                 "trailing_delimiter", "quoted_empty_as_null"):
        if kwargs.get(flag) is False:
            kwargs[flag] = None
    return kwargs


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
    _check_names(options, _SCHEMA_OPTIONS, "schema")
    text = settings(_align_input(options))
    plan_json, screen = _recon.schema(
        as_table(source, "source", include_index), as_table(target, "target", include_index),
        text, rules=fspath(rules),
    )
    return SchemaPlan(json.loads(plan_json), screen)


_SCHEMA_OPTIONS = {
    "columns", "exclude", "map", "cast", "by_position", "ignore_case_names",
    "ignore_extra_columns", "assume_tz", "round", "timestamp_precision", "trim",
    "case_insensitive", "empty_as_null", "source_format", "target_format", "delimiter",
    "quote", "escape", "header", "null_values", "encoding", "infer_types",
    "max_parse_errors", "int96_unit", "trailing_delimiter", "quoted_empty_as_null",
    "date_format", "timestamp_format", "skip_rows", "source_skip_rows",
    "target_skip_rows", "comment", "source_query", "target_query", "connections",
    "storage_options",
}
_FINGERPRINT_OPTIONS = (_SCHEMA_OPTIONS - {"source_format", "target_format", "source_skip_rows",
                                           "target_skip_rows", "source_query", "target_query"}
                        ) | {"threads", "temp_dir", "format", "query"}


def _check_names(options: Mapping[str, Any], allowed: set, fn: str) -> None:
    for name in options:
        if name not in allowed:
            raise TypeError(f"{fn}() got an unexpected keyword argument {name!r}")


class Fingerprint:
    """A table's fingerprint: its row count, an order-independent digest of
    its rows and of each column, optionally per group. The same JSON as
    ``recon fingerprint`` writes, in both directions."""

    def __init__(self, text: str, name: str = "fingerprint") -> None:
        self._text = text
        self.name = name

    @classmethod
    def load(cls, path: PathLike) -> "Fingerprint":
        """Reads a fingerprint file (refusing other format or encoding versions)."""
        return cls(_recon.load_fingerprint(os.fspath(path)), os.fspath(path))

    def save(self, path: PathLike) -> None:
        """Writes the fingerprint file, whole or not at all."""
        _write_atomic(path, self._text)

    def to_dict(self) -> Dict[str, Any]:
        return json.loads(self._text)

    def to_json(self) -> str:
        return self._text

    @property
    def rows(self) -> int:
        return self.to_dict()["total"]["rows"]

    def __repr__(self) -> str:
        d = self.to_dict()
        groups = f", {len(d['groups'])} groups by {d['by']}" if d.get("by") else ""
        return f"<recon.Fingerprint of {d['table']}: {d['total']['rows']:,} rows{groups}>"


def fingerprint(
    table: Any,
    *,
    by: Optional[str] = None,
    schema_like: Optional[PathLike] = None,
    rules: Optional[PathLike] = None,
    progress: Any = None,
    include_index: bool = False,
    **options: Any,
) -> Fingerprint:
    """Fingerprints one table (``recon fingerprint``), to compare with a
    fingerprint made elsewhere: by another machine, the command line, or
    ``recon.spark``. ``by`` fingerprints each group of a column too;
    ``schema_like`` types a text table like another table's columns. Takes
    :func:`diff`'s column, type and input options (``format=`` is the
    table's format, ``query=`` a database table's SELECT)."""
    _check_names(options, _FINGERPRINT_OPTIONS, "fingerprint")
    if "format" in options:
        options["source_format"] = options.pop("format")
    if "query" in options:
        options["source_query"] = options.pop("query")
    text = settings(_align_input(options))
    handed = as_table(table, "table", include_index)
    out = _run(_recon.fingerprint, progress, handed, text, rules=fspath(rules), by=by,
               schema_like=fspath(schema_like))
    return Fingerprint(out, handed[2])


class FingerprintComparison:
    """Two fingerprints compared: whether they match, and which columns and
    groups differ."""

    def __init__(self, result: Any) -> None:
        self._result = result

    @property
    def fingerprints_match(self) -> bool:
        return self._result.fingerprints_match

    @property
    def verdict(self) -> str:
        return self._result.verdict

    def to_dict(self) -> Dict[str, Any]:
        return json.loads(self._result.json())

    def __bool__(self) -> bool:
        raise TypeError("test .fingerprints_match, not the comparison itself")

    def __repr__(self) -> str:
        return self._result.text().rstrip("\n")

    def _repr_html_(self) -> str:
        return _framed(self._result.html(), height=420)


def _as_fingerprint(fp: Union[Fingerprint, PathLike]) -> Fingerprint:
    return fp if isinstance(fp, Fingerprint) else Fingerprint.load(fp)


def compare_fingerprints(
    a: Union[Fingerprint, PathLike], b: Union[Fingerprint, PathLike]
) -> FingerprintComparison:
    """Compares two fingerprints (``recon compare-fingerprints``); each is a
    :class:`Fingerprint` or the path of a fingerprint file."""
    a, b = _as_fingerprint(a), _as_fingerprint(b)
    return FingerprintComparison(
        _recon.compare_fingerprints((a.name, a.to_json()), (b.name, b.to_json()))
    )
