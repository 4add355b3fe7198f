#!/usr/bin/env python3
"""Writes testdata/delta/expected/ files for the tables copied from delta-rs.

The tables under testdata/delta/ named below are delta-rs's own test tables
(crates/test/tests/data, Apache-2.0), copied as they are (less `.crc` files;
see testdata/README.md). For each version this writes the rows delta-rs's
DataFusion reader returns (`QueryBuilder ... select * from t`; its
`to_pyarrow_table` path drops the values of column-mapped tables) to
testdata/delta/expected/<table>_v<version>.parquet.

One table is written from what its writer recorded instead, because
delta-rs reads it wrongly: `table_with_edge_timestamps` holds Spark INT96
timestamps of 9999-12-31 and 9999-12-30 (its log's statistics say so),
which delta-rs decodes in nanoseconds, overflowing into 1816-03-29 and
1816-03-28. The script checks that delta-rs still returns the overflowed
values (so the difference is known, not new) and writes the true ones.

Run from the repository root with the fixture venv:
  scripts/.venv/bin/python scripts/make_delta_rs_expected.py
"""

import datetime
import os

import pyarrow as pa
import pyarrow.parquet as pq
from deltalake import DeltaTable, QueryBuilder

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "testdata", "delta")
EXPECTED = os.path.join(ROOT, "expected")

# table -> versions to write
TABLES = {
    "http_requests": [0, 1],
    "table_failed_last_checkpoint_update": [0, 1, 2, 3],
}

UTC = datetime.timezone.utc


def delta_rs_rows(table, version):
    dt = DeltaTable(os.path.join(ROOT, table), version=version)
    return pa.table(QueryBuilder().register("t", dt).execute("select * from t"))


def wrapped_ns(t):
    """The instant a reader decoding INT96 into wrapping i64 nanoseconds shows for `t`."""
    epoch = datetime.datetime(1970, 1, 1, tzinfo=UTC)
    d = t - epoch
    ns = (d.days * 86_400 + d.seconds) * 10**9 + d.microseconds * 1000
    ns = (ns + 2**63) % 2**64 - 2**63
    return ns


def trunc_div(a, b):
    q = abs(a) // b
    return q if a >= 0 else -q


def edge_timestamps():
    """table_with_edge_timestamps@0 as Spark wrote it (the log's stats)."""
    big = [datetime.datetime(9999, 12, 31, tzinfo=UTC), datetime.datetime(9999, 12, 30, tzinfo=UTC)]
    normal = [datetime.datetime(2022, 1, 1, tzinfo=UTC), datetime.datetime(2022, 2, 1, tzinfo=UTC)]
    got = delta_rs_rows("table_with_edge_timestamps", 0).sort_by("SOME_VALUE")
    # delta-rs's BIG_DATE is the nanosecond overflow of the true value, to the microsecond.
    seen = got.column("BIG_DATE").cast(pa.int64()).to_pylist()
    # (arrow's cast to microseconds divides towards zero)
    assert seen == [trunc_div(wrapped_ns(t), 1000) for t in big], seen
    assert got.column("NORMAL_DATE").to_pylist() == normal
    ts = pa.timestamp("us", tz="UTC")
    return pa.table(
        {
            "BIG_DATE": pa.array(big, ts),
            "NORMAL_DATE": pa.array(normal, ts),
            "SOME_VALUE": pa.array([1, 2], pa.int32()),
        }
    )


def main():
    os.makedirs(EXPECTED, exist_ok=True)
    for table, versions in TABLES.items():
        for v in versions:
            pq.write_table(delta_rs_rows(table, v), os.path.join(EXPECTED, f"{table}_v{v}.parquet"))
    pq.write_table(edge_timestamps(), os.path.join(EXPECTED, "table_with_edge_timestamps_v0.parquet"))


if __name__ == "__main__":
    main()
