#!/usr/bin/env python3
"""Writes the Delta Lake fixtures under testdata/delta/ with a real writer.

- testdata/delta/orders/: a partitioned Delta table written by delta-rs (the
  `deltalake` package) in four commits: create (v0), append (v1), delete one
  order (v2, which rewrites a file and leaves the old one on disk), and a
  full overwrite (v3, every earlier file dead but still in the folder).
- testdata/delta/expected/orders_vN.parquet: the rows of each version, as
  delta-rs reads them, written as plain Parquet.
- testdata/delta/orders_evolved/: a Delta table whose v1 appends with a
  new column (`schema_mode="merge"`), so v0's file lacks it and is read
  with NULLs there; expected/orders_evolved_vN.parquet hold both versions.
- testdata/delta/expected/dv_small_v0.parquet, dv_small_v1.parquet: the rows
  of delta-kernel-rs's `table-with-dv-small` test table (10 values, then a
  deletion vector removing 0 and 9), copied from that repository
  (Apache-2.0) into testdata/delta/table-with-dv-small/ by hand, since no
  Python writer writes deletion vectors.

Run from the repository root with the fixture venv:
  python3 -m venv scripts/.venv && scripts/.venv/bin/pip install -r scripts/requirements-fixtures.txt
  scripts/.venv/bin/python scripts/make_lake_fixtures.py
"""

import datetime
import decimal
import os
import shutil

import pyarrow as pa
import pyarrow.parquet as pq
from deltalake import DeltaTable, write_deltalake

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "testdata", "delta")
ORDERS = os.path.join(ROOT, "orders")
EXPECTED = os.path.join(ROOT, "expected")

SCHEMA = pa.schema(
    [
        ("order_id", pa.int64()),
        ("amount", pa.decimal128(10, 2)),
        ("status", pa.string()),
        ("business_date", pa.date32()),
    ]
)


def rows(*tuples):
    cols = list(zip(*tuples))
    return pa.table(
        [
            pa.array(cols[0], pa.int64()),
            pa.array([decimal.Decimal(a) if a is not None else None for a in cols[1]], pa.decimal128(10, 2)),
            pa.array(cols[2], pa.string()),
            pa.array(cols[3], pa.date32()),
        ],
        schema=SCHEMA,
    )


def main():
    shutil.rmtree(ORDERS, ignore_errors=True)
    shutil.rmtree(EXPECTED, ignore_errors=True)
    os.makedirs(EXPECTED)
    d1, d2 = datetime.date(2024, 1, 1), datetime.date(2024, 1, 2)
    v0 = rows(
        (1, "10.00", "NEW", d1),
        (2, "20.50", "NEW", d1),
        (3, "30.25", None, d1),
        (4, "40.00", "SHIPPED", d2),
        (4, "40.00", "SHIPPED", d2),
        (5, None, "CANCELLED", d2),
    )
    write_deltalake(ORDERS, v0, partition_by=["business_date"], mode="overwrite")
    write_deltalake(
        ORDERS,
        rows((6, "60.00", "NEW", d2), (7, "70.70", "NEW", d1), (8, "0.01", "NEW", None)),
        partition_by=["business_date"],
        mode="append",
    )
    DeltaTable(ORDERS).delete("order_id = 2")
    write_deltalake(
        ORDERS,
        rows((10, "1.00", "NEW", d1), (11, "2.00", "NEW", d2), (12, "3.00", None, d2), (12, "3.00", None, d2)),
        partition_by=["business_date"],
        mode="overwrite",
    )
    for v in range(4):
        t = DeltaTable(ORDERS, version=v).to_pyarrow_table()
        pq.write_table(t, os.path.join(EXPECTED, f"orders_v{v}.parquet"))
    # delta-kernel-rs's table-with-dv-small: values 0..9, then 0 and 9 deleted.
    for v, values in [(0, range(10)), (1, range(1, 9))]:
        pq.write_table(
            pa.table({"value": pa.array(list(values), pa.int32())}),
            os.path.join(EXPECTED, f"dv_small_v{v}.parquet"),
        )
    evolved()


def evolved():
    """A table whose second version adds a column: the first file lacks it."""
    path = os.path.join(ROOT, "orders_evolved")
    shutil.rmtree(path, ignore_errors=True)
    first = pa.table({"order_id": pa.array([1, 2, 2], pa.int64()), "status": pa.array(["NEW", None, None])})
    write_deltalake(path, first, mode="overwrite")
    second = pa.table(
        {
            "order_id": pa.array([3, 4], pa.int64()),
            "status": pa.array(["NEW", "SHIPPED"]),
            "channel": pa.array(["web", None]),
        }
    )
    write_deltalake(path, second, mode="append", schema_mode="merge")
    for v in range(2):
        t = DeltaTable(path, version=v).to_pyarrow_table()
        pq.write_table(t, os.path.join(EXPECTED, f"orders_evolved_v{v}.parquet"))


if __name__ == "__main__":
    main()
