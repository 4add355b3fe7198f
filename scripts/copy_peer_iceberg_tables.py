#!/usr/bin/env python3
"""Copies Iceberg tables that another project committed as test data into
testdata/iceberg/peers/, with the rows an independent reader gives for each
snapshot as the expected rows.

    python3 scripts/copy_peer_iceberg_tables.py DUCKDB_ICEBERG_CHECKOUT

DUCKDB_ICEBERG_CHECKOUT is a work tree of github.com/duckdb/duckdb-iceberg
(MIT licence; the tables were written by Spark with Iceberg's runtime and by
pyiceberg, per that repository's scripts/persistent/*.py). The copy keeps
every data, manifest, manifest list and metadata file byte for byte and
leaves out the Hadoop `.crc` side files and the SQLite catalogs.

The referee is pyiceberg (the version in scripts/requirements-fixtures.txt):
`StaticTable.from_metadata(...).scan(snapshot_id=...).to_arrow()` for every
snapshot, written to testdata/iceberg/expected/peer_<table>_<i>.parquet.
pyiceberg applies the spec's column projection (an identity partition value
read from the manifest where the data file lacks the column). The rows are
also checked against DuckDB's own expected results where its tests list
them (test/sql/local/partitioning/identity/*.test): the script fails if the
two referees disagree on the number of rows. Where pyiceberg refuses a
table's current snapshot (0.12 cannot project a required fixed, time or
timestamp partition column) and DuckDB's test lists its rows, those rows,
typed by the table's schema, are the expected rows. Any other snapshot
pyiceberg refuses (equality deletes) is recorded with the refusal and no
expected file.

The tables' metadata holds locations relative to the checkout's root
(`data/persistent/...`), so pyiceberg reads them from there; recon rebases
any location under the recorded `location` onto the folder it is given.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import shutil
import sys
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
from pyiceberg.table import StaticTable

REPO = Path(__file__).resolve().parents[1]
OUT = REPO / "testdata" / "iceberg" / "peers"
EXPECTED = REPO / "testdata" / "iceberg" / "expected"

# Table name -> (table root under the checkout, metadata file under its
# metadata/ folder, DuckDB's test listing its rows or None).
TABLES = {
    name: (f"data/persistent/{name}", meta, test)
    for name, meta, test in [
        ("partition_bigint", "v2.metadata.json", "identity_bigint"),
        ("partition_binary", "v2.metadata.json", "identity_binary"),
        ("partition_bool", "v2.metadata.json", "identity_bool"),
        ("partition_decimal_bigint", "v2.metadata.json", "identity_decimal_bigint"),
        ("partition_decimal_hugeint", "v2.metadata.json", "identity_decimal_hugeint"),
        ("partition_decimal_integer", "v2.metadata.json", "identity_decimal_integer"),
        ("partition_decimal_smallint", "v2.metadata.json", "identity_decimal_smallint"),
        ("partition_double", "v2.metadata.json", "identity_double"),
        ("partition_float", "v2.metadata.json", "identity_float"),
        ("partition_integer", "v2.metadata.json", "identity_integer"),
    ]
}
for name, meta in [
    ("partition_fixed_length_binary", "00001-b4b3d6d2-cac2-4480-952e-0e4b3b88b5d7.metadata.json"),
    ("partition_time", "00001-44546aa6-1ee5-48c5-9e3b-bc6c0bc0a60c.metadata.json"),
    ("partition_timestamp", "00001-0c9938a5-103e-4185-b46d-331368ae4db7.metadata.json"),
    ("partition_timestamptz", "00001-ffeadb58-2a9e-46ba-8b4f-f363f05de68c.metadata.json"),
]:
    TABLES[name] = (f"data/persistent/{name}/default.db/{name}", meta,
                    "identity_" + name.removeprefix("partition_"))
# Format 3 initial-default on 14 columns of every primitive type, added
# after the first file was written.
TABLES["add_columns_with_defaults"] = (
    "data/persistent/add_columns_with_defaults/default.db/add_columns_with_defaults",
    "00003-3f1801a5-7dfb-4072-b14a-39cd12f9279b.metadata.json", None)
# A map<string,string> column whose files hold pyarrow's large_string
# keys and values; three snapshots.
TABLES["map_stats"] = (
    "data/persistent/map_stats/default.db/map_stats",
    "00002-0e059d4b-e5e8-41af-a763-76cbf3a3d0bc.metadata.json", None)
# current-snapshot-id 9876543210123456789, above the signed 64-bit range.
TABLES["equality_delete_extra_column"] = (
    "data/persistent/equality_delete_extra_column/warehouse/ns/t", "vfinal.metadata.json", None)


def duckdb_listing(checkout: Path, test: str | None) -> list[list[str]] | None:
    """The rows DuckDB's test lists for its first `select *`, as text."""
    if test is None:
        return None
    path = checkout / "test/sql/local/partitioning/identity" / f"{test}.test"
    lines = path.read_text().splitlines()
    start = next(i for i, l in enumerate(lines) if l.startswith("query")) + 3
    rows = []
    while start < len(lines) and lines[start].strip():
        rows.append(lines[start].split("\t"))
        start += 1
    return rows


def duckdb_table(listing: list[list[str]], schema) -> pa.Table:
    """DuckDB's listed rows typed by the Iceberg schema (the referee where
    pyiceberg refuses a table): each text is DuckDB's rendering of a value."""
    from pyiceberg.io.pyarrow import schema_to_pyarrow
    from pyiceberg.types import (BinaryType, BooleanType, FixedType, TimestampType,
                                 TimestamptzType, TimeType)

    arrow_schema = schema_to_pyarrow(schema)
    columns = []
    for j, field in enumerate(schema.fields):
        texts = [r[j] for r in listing]
        t = field.field_type
        if isinstance(t, (FixedType, BinaryType)):
            values = [x.encode("latin-1").decode("unicode_escape").encode("latin-1") for x in texts]
        elif isinstance(t, BooleanType):
            values = [x in ("1", "true") for x in texts]
        elif isinstance(t, TimeType):
            values = [dt.time.fromisoformat(x) for x in texts]
        elif isinstance(t, TimestamptzType):
            values = [dt.datetime.fromisoformat(x + (":00" if x[-3] in "+-" else "")) for x in texts]
        elif isinstance(t, TimestampType):
            values = [dt.datetime.fromisoformat(x) for x in texts]
        else:
            values = texts
        columns.append(pa.array(values).cast(arrow_schema.field(j).type)
                       if not isinstance(t, (FixedType, BinaryType, TimeType, TimestampType, TimestamptzType, BooleanType))
                       else pa.array(values, arrow_schema.field(j).type))
    return pa.Table.from_arrays(columns, schema=arrow_schema)


def copy_table(checkout: Path, name: str, root: str) -> None:
    src = checkout / root
    dest = OUT / "duckdb" / name
    if dest.exists():
        shutil.rmtree(dest)
    for path in sorted(src.rglob("*")):
        rel = path.relative_to(src)
        if path.is_dir() or path.name.startswith(".") or path.suffix in (".db", ".sqlite"):
            continue
        (dest / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(path, dest / rel)


def main() -> None:
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    checkout = Path(sys.argv[1]).resolve()
    EXPECTED.mkdir(parents=True, exist_ok=True)
    manifest: dict = {}
    for name, (root, meta, test) in TABLES.items():
        copy_table(checkout, name, root)
        os.chdir(checkout)
        table = StaticTable.from_metadata(f"{root}/metadata/{meta}")
        snaps = []
        current = table.metadata.current_snapshot_id
        listing = duckdb_listing(checkout, test)
        for i, snap in enumerate(table.metadata.snapshots):
            entry = {"snapshot_id": str(snap.snapshot_id)}
            try:
                rows = table.scan(snapshot_id=snap.snapshot_id).to_arrow()
                entry["referee"] = "pyiceberg"
            except Exception as e:  # noqa: BLE001 - recorded, not hidden
                entry["pyiceberg_refuses"] = f"{type(e).__name__}: {e}"[:300]
                if listing is None or snap.snapshot_id != current:
                    snaps.append(entry)
                    continue
                rows = duckdb_table(listing, table.schema())
                entry["referee"] = "duckdb test listing"
            out = EXPECTED / f"peer_{name}_{i}.parquet"
            pq.write_table(rows, out)
            entry["expected"] = out.name
            entry["rows"] = rows.num_rows
            snaps.append(entry)
        listed = None if listing is None else len(listing)
        last = next((s for s in snaps if s["snapshot_id"] == str(current)), None)
        if listed is not None and (last is None or last.get("rows") != listed):
            sys.exit(f"{name}: the referee reads {last and last.get('rows')} rows, DuckDB's test lists {listed}")
        manifest[name] = {
            "source": f"duckdb/duckdb-iceberg {root}",
            "metadata": f"metadata/{meta}",
            "current_snapshot_id": str(current),
            "duckdb_test_rows": listed,
            "licence": "MIT (duckdb/duckdb-iceberg LICENSE)",
            "snapshots": snaps,
        }
        print(name, [(s["snapshot_id"], s.get("rows", s.get("pyiceberg_refuses"))) for s in snaps])
    (OUT / "peers.json").write_text(json.dumps(manifest, indent=2) + "\n")


if __name__ == "__main__":
    main()
