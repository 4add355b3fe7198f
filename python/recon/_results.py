"""What the package's functions return: a diff's result, a schema plan, a
fingerprint and a fingerprint comparison, and how they are written."""

from __future__ import annotations

import json
import os
import shutil
import tempfile
import weakref
from pathlib import Path
from typing import Any, Dict, List, Optional, Tuple, Union

import pyarrow as pa

from . import _recon

PathLike = Union[str, "os.PathLike[str]"]


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


# Keyed mode's counts, at the top level of the JSON report.
_KEY_COUNTS = ("matched_keys", "value_mismatch", "missing_in_target", "missing_in_source",
               "duplicate_keys", "null_keys", "tolerance_matches")


class DiffReport:
    """What every diff result has, keyless or keyed, local or on Spark: the
    verdict, the counts and the report, and how they are written. The
    evidence is the subclass's (:class:`Diff`: files read as pyarrow
    Tables; ``recon.spark.SparkDiff``: Spark DataFrames)."""

    _result: Any
    _report: Optional[Dict[str, Any]]

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


class Diff(DiffReport):
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


def _side(side: str) -> str:
    if side not in ("source", "target"):
        raise ValueError(f"side is 'source' or 'target', not {side!r}")
    return side


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


class Fingerprint:
    """A table's fingerprint: its row count, an order-independent digest of
    its rows and of each column, optionally per group. The same JSON as
    ``recon fingerprint`` writes, in both directions."""

    def __init__(self, native: Any, name: str = "fingerprint") -> None:
        # The JSON text (a fingerprint assembled elsewhere), or the native
        # fingerprint with its sketch.
        if isinstance(native, str):
            native = _recon.parse_fingerprint(name, native)
        self._native = native
        self._text = native.json()
        self.name = name

    @classmethod
    def load(cls, path: PathLike) -> "Fingerprint":
        """Reads a fingerprint file and its sketch, if it has one (refusing
        other format or encoding versions, and a sketch file that is not the
        one the file references)."""
        return cls(_recon.load_fingerprint(os.fspath(path)), os.fspath(path))

    def save(self, path: PathLike) -> None:
        """Writes the fingerprint file, whole or not at all, and its sketch
        beside it (the same name with ``.sketch``)."""
        self._native.save(os.fspath(path))

    @property
    def has_sketch(self) -> bool:
        return self._native.has_sketch

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

    @property
    def digests(self) -> List[Tuple[int, int]]:
        """The differing rows' digests with their copies (source minus
        target), decoded from the two fingerprints' sketches; empty when
        they match. Raises :class:`recon.UsageError` saying why when the fingerprints
        have no sketches or theirs are too small (with an estimate)."""
        d = json.loads(self._result.digests_json())
        return [(int(x["digest"], 16), x["copies"]) for x in d["differences"]]

    def save_digests(self, path: PathLike) -> None:
        """Writes the digests file (``compare-fingerprints --digests``) that
        :func:`recon.extract` and ``recon extract`` read."""
        _write_atomic(path, self._result.digests_json())

    def __bool__(self) -> bool:
        raise TypeError("test .fingerprints_match, not the comparison itself")

    def __repr__(self) -> str:
        return self._result.text().rstrip("\n")

    def _repr_html_(self) -> str:
        return _framed(self._result.html(), height=420)
