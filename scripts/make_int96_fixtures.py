#!/usr/bin/env python3
"""Writes testdata/int96/: Parquet files whose timestamps are stored as INT96,
the legacy type Spark writes by default (pyarrow's use_deprecated_int96_timestamps).

Run: pip install -r scripts/requirements-fixtures.txt && python3 scripts/make_int96_fixtures.py
The outputs are committed; CI does not run this script.
"""
import datetime as dt
import pathlib

import pyarrow as pa
import pyarrow.parquet as pq

OUT = pathlib.Path(__file__).resolve().parent.parent / "testdata" / "int96"
OUT.mkdir(parents=True, exist_ok=True)

# Spark's placeholders and the edges of the 64-bit nanosecond range, plus the
# six values of parquet-testing's int96_from_spark.parquet (as microseconds).
us = [
    -62135596800000000,  # 0001-01-01T00:00:00
    -9223372036854775,  # 1677-09-21T00:12:43.145225: just inside i64 nanoseconds
    -9223372036854776,  # one microsecond earlier: just outside
    9223372036854776,  # 2262-04-11T23:47:16.854776: just outside
    253402214400000000,  # 9999-12-31T00:00:00
    253402225200000000,  # 9999-12-31T03:00:00
    1704141296123456,
    1704070800000000,
    1735599600000000,
    None,
    9089380393200000000,  # year 290000
]
ids = list(range(len(us)))

def table(values, unit="us"):
    return pa.table({
        "id": pa.array(ids[: len(values)], pa.int64()),
        "ts": pa.array(values, pa.timestamp(unit)),
    })

# The source as Spark writes it: INT96.
pq.write_table(table(us), OUT / "spark_int96.parquet", use_deprecated_int96_timestamps=True,
               compression="none")
# The same values as a modern microsecond INT64 column: must match.
pq.write_table(table(us), OUT / "micros.parquet", compression="none")
# One value a second later: must differ.
changed = list(us)
changed[4] += 1_000_000
pq.write_table(table(changed), OUT / "micros_changed.parquet", compression="none")

# The trap: a nanosecond target holding the values an INT96 reader that wraps
# produces. Reading INT96 as wrapping nanoseconds would call it a match.
def wrap_ns(v):
    if v is None:
        return None
    x = (v * 1000) % (1 << 64)
    return x - (1 << 64) if x >= (1 << 63) else x
wrapped = pa.table({
    "id": pa.array(ids, pa.int64()),
    "ts": pa.array([wrap_ns(v) for v in us], pa.timestamp("ns")),
})
pq.write_table(wrapped, OUT / "wrapped_ns.parquet", compression="none")

# Impala-style INT96 with sub-microsecond digits (inside the ns range).
ns = [1704141296123456789, 0, None, -1]
nst = pa.table({"id": pa.array(range(4), pa.int64()), "ts": pa.array(ns, pa.timestamp("ns"))})
pq.write_table(nst, OUT / "impala_ns_int96.parquet", use_deprecated_int96_timestamps=True,
               compression="none")
pq.write_table(nst, OUT / "nanos.parquet", compression="none")
print("wrote", sorted(p.name for p in OUT.iterdir()))
