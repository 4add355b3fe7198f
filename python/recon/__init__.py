"""recon: prove whether two tables hold exactly the same rows.

recon answers what SQL's ``EXCEPT ALL`` answers in both directions: each
table is a multiset of rows, order is ignored, every duplicate counts, and
NULL matches NULL. It reads files, pyarrow, polars, pandas and DuckDB data,
out of core: tables larger than memory stay within ``memory_limit``.

>>> import recon
>>> d = recon.diff("old/orders.parquet", new_orders_df, key="order_id")  # doctest: +SKIP
>>> d.exact_match, d.source_only_rows, d.target_only_rows                # doctest: +SKIP
>>> d.changed()                                   # a pyarrow.Table   # doctest: +SKIP

The functions take the command line's options as keyword arguments, with
the same names and meanings (``--skip-rows 3`` is ``skip_rows=3``).
"""

from __future__ import annotations

from ._api import compare_fingerprints, diff, extract, fingerprint, schema
from ._results import Diff, Fingerprint, FingerprintComparison, SchemaPlan
from ._recon import (
    ENCODING_VERSION,
    CancelledError,
    InputError,
    InternalError,
    ReconError,
    ResourceError,
    SchemaError,
    UsageError,
    __version__,
)

__all__ = [
    "diff",
    "schema",
    "fingerprint",
    "compare_fingerprints",
    "extract",
    "Diff",
    "Fingerprint",
    "FingerprintComparison",
    "SchemaPlan",
    "ReconError",
    "UsageError",
    "SchemaError",
    "InputError",
    "ResourceError",
    "CancelledError",
    "InternalError",
    "ENCODING_VERSION",
    "__version__",
]
