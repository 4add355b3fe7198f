"""What recon accepts as a table, and how each kind crosses into the engine.

Three kinds cross (see crates/recon-python/src/inputs.rs):

- ``spec``: a path or table spec, read as the command line reads it;
- ``batches``: data already in memory (pyarrow Tables, polars and pandas
  DataFrames), imported through the Arrow C stream interface without
  copying its buffers, and read where it is;
- ``stream``: data produced as it is read (RecordBatchReaders, Datasets,
  polars LazyFrames, DuckDB relations, any ``__arrow_c_stream__`` object),
  copied once by the engine to its temp directory as Arrow IPC, so a table
  larger than memory stays within ``memory_limit``.
"""

from __future__ import annotations

import os
import sys
import weakref
from typing import Any, Tuple

import pyarrow as pa

Table = Tuple[str, Any, str]

# Rows per batch pulled from a DuckDB relation or a polars LazyFrame.
STREAM_BATCH_ROWS = 65536


# Readers already handed to a run. A consumed pyarrow reader exports an
# empty stream without complaint, and two of them would compare as an
# exact match of nothing: a second use is refused instead.
_READ = weakref.WeakSet()


def _once(reader: Any, role: str) -> Any:
    if reader in _READ:
        from ._recon import UsageError

        raise UsageError(
            f"{role}: this RecordBatchReader was read by an earlier call; a stream can be "
            "read once (pass a pyarrow Table, a Dataset or a path to compare it again)"
        )
    _READ.add(reader)
    return reader


def _module_of(obj: Any) -> str:
    return type(obj).__module__.split(".")[0]


def _is(obj: Any, module: str, name: str) -> bool:
    """isinstance without importing the module: only if the user has."""
    mod = sys.modules.get(module)
    cls = getattr(mod, name, None) if mod is not None else None
    return cls is not None and isinstance(obj, cls)


def _lazyframe_reader(lf: Any) -> pa.RecordBatchReader:
    """A polars LazyFrame as a stream of batches, computed as they are read."""
    if hasattr(lf, "collect_batches"):
        frames = lf.collect_batches(chunk_size=STREAM_BATCH_ROWS)
    else:  # polars before collect_batches: the streaming engine, then slices
        frames = lf.collect(engine="streaming").iter_slices(STREAM_BATCH_ROWS)
    schema = pa.schema(lf.limit(0).collect().to_arrow().schema)

    def batches():
        for frame in frames:
            for batch in frame.to_arrow().to_batches():
                yield batch.cast(schema) if batch.schema != schema else batch

    return pa.RecordBatchReader.from_batches(schema, batches())


def _duckdb_reader(rel: Any) -> pa.RecordBatchReader:
    for method in ("to_arrow_reader", "fetch_arrow_reader", "record_batch"):
        fn = getattr(rel, method, None)
        if fn is not None:
            return fn(STREAM_BATCH_ROWS)
    raise TypeError("this DuckDB relation has no Arrow reader; upgrade duckdb")


def as_table(obj: Any, role: str, include_index: bool = False) -> Table:
    """``(kind, object, name)`` for the engine; ``role`` is "source",
    "target" or "table", and names in-memory data in reports and messages."""
    if isinstance(obj, (str, os.PathLike)):
        spec = os.fspath(obj)
        return ("spec", spec, spec)
    if isinstance(obj, pa.Table):
        return ("batches", obj, f"{role} (pyarrow.Table)")
    if isinstance(obj, pa.RecordBatch):
        return ("batches", pa.Table.from_batches([obj]), f"{role} (pyarrow.RecordBatch)")
    if isinstance(obj, pa.RecordBatchReader):
        return ("stream", _once(obj, role), f"{role} (pyarrow.RecordBatchReader)")
    if _is(obj, "pyarrow.dataset", "Dataset"):
        return ("stream", obj.scanner().to_reader(), f"{role} (pyarrow.dataset)")
    if _is(obj, "polars", "LazyFrame"):
        return ("stream", _lazyframe_reader(obj), f"{role} (polars.LazyFrame)")
    if _is(obj, "polars", "DataFrame"):
        return ("batches", obj, f"{role} (polars.DataFrame)")
    if _is(obj, "pandas", "DataFrame"):
        table = pa.Table.from_pandas(obj, preserve_index=bool(include_index))
        return ("batches", table, f"{role} (pandas.DataFrame)")
    if _module_of(obj) in ("duckdb", "_duckdb"):
        return ("stream", _duckdb_reader(obj), f"{role} (DuckDB relation)")
    if hasattr(obj, "__arrow_c_stream__"):
        return ("stream", obj, f"{role} ({type(obj).__name__})")
    raise TypeError(
        f"{role}: cannot read a {type(obj).__module__}.{type(obj).__qualname__}; "
        "give a path, a pyarrow Table, RecordBatchReader or Dataset, a polars "
        "DataFrame or LazyFrame, a pandas DataFrame, a DuckDB relation, or an "
        "object with __arrow_c_stream__"
    )
