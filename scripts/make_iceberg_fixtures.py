#!/usr/bin/env python3
"""Writes the Iceberg fixtures under testdata/iceberg/ with a real writer.

Who wrote what:

- Every table except flink_eqdel/ is written by pyiceberg (the version pinned
  in scripts/requirements-fixtures.txt) through a SQLite SQL catalog
  (SqlCatalog, sqlite:///), format version 2, in a warehouse under
  /tmp/recon-iceberg-gen/. Its table directories (metadata/ and data/) are
  then copied to testdata/iceberg/<table>/; the SQLite catalog file is not.
  pyiceberg writes the data Parquet files, every manifest, every manifest
  list and every metadata JSON file. The absolute paths inside them stay as
  pyiceberg wrote them (/tmp/recon-iceberg-gen/warehouse/recon/<table>/…):
  a reader rebases any path under the table's recorded `location` onto the
  directory it was given.
- orders/: A append, B append, C `tbl.delete("order_id = 2")` (pyiceberg
  deletes copy-on-write: the rewritten file replaces the old one, which stays
  on disk), then a schema change (rename `status` -> `state`, add `channel
  string`; a new metadata file, no snapshot), then E append with the new
  schema. Old files keep the old column name (resolved by field id) and lack
  `channel` (read as NULL). Partitioned by identity(business_date), one NULL
  partition. It is the table with metadata/version-hint.text, which this
  script writes (the SQL catalog does not): it holds N, the version number
  that starts the current metadata file's name `0000N-<uuid>.metadata.json`.
- orders_like_delta_v3/ and orders_like_delta_v3_changed/: the rows of
  testdata/delta/expected/orders_v3.parquet (Delta orders at version 3),
  same column names and types, in two appends; the _changed table has order
  11's amount 2.00 -> 2.01 (one row each way). No version-hint.text.
- orders_posdel/ (merge-on-read position deletes): pyiceberg 0.12 cannot
  write position deletes (its delete() warns "Merge on read is not yet
  supported, falling back to copy-on-write"). So this script writes the
  position delete Parquet file itself with pyarrow (columns file_path string,
  field id 2147483546, and pos long, field id 2147483545, both required,
  sorted by file_path then pos, per the Iceberg spec) and commits it through
  pyiceberg's own snapshot producer (_FastAppendFiles with operation
  "delete") and manifest writer (ManifestWriterV2, subclassed only so that
  the manifest declares content=deletes: 1 in the manifest list, "deletes"
  in the Avro metadata). pyiceberg thus writes the delete manifest, the
  manifest list and the metadata, and reads the deletes back. Snapshots:
  A append (6 rows, one duplicated pair), B append (4 rows, a third copy of
  the duplicate), C position deletes of file A's pos 1 (order 2) and pos 3
  (one copy of the duplicated order 4), D append.
- orders_eqdel/ (equality deletes, a fixture for refusal): the same means
  with content=EQUALITY_DELETES, equality_ids [1] (order_id) and a Parquet
  file holding one column order_id (field id 1) = 4. Snapshots: A append,
  B append, C equality delete (operation "delete"), D append of a new
  order 4 (a later sequence number, so not deleted).
- flink_eqdel/: NOT written by this script. Apache Impala's test table
  testdata/data/iceberg_test/hadoop_catalog/ice/iceberg_v2_delete_equality
  (Apache-2.0; Impala commit 707f149c9, IMPALA-12407), copied unchanged by
  hand. Per Impala's testdata/data/README it was written by Flink SQL (an
  upsert table keyed on id: insert (1,'test_1_base'), (2,'test_2_base'),
  (2,'test_2_updated'); the snapshot summaries carry flink.job-id), each
  commit adding a data file and an equality delete file (content 2) on id.
  Impala's developers then replaced 'hdfs://localhost:20500/test-warehouse/'
  with '/test-warehouse/' in the metadata JSON and, through an Avro-JSON
  round trip, in the manifests and manifest lists (which is why those carry
  codec null and no Iceberg key-value metadata) and fixed manifest_length.
  Hadoop-catalog layout: v1..v4.metadata.json and a version-hint.txt (sic,
  not .text) holding "4". The script only writes its expected rows.
  No public table with position deletes written by a real engine was found
  clean enough to copy: Impala's (Spark/Hive/Impala-written) ones keep
  'hdfs://localhost:20500/…' in the delete files' file_path column while
  their manifests say '/test-warehouse/…', so readers disagree on them.
- impala_orc/, impala_orc_complex/, impala_orc_posdel/: Apache Impala's
  ORC tables (Apache-2.0) iceberg_v2_no_deletes_orc,
  complextypestbl_iceberg_orc and iceberg_v2_partitioned_position_deletes_orc
  from testdata/data/iceberg_test/hadoop_catalog/ice/, written by Hive with
  Iceberg's ORC writer (field ids as `iceberg.id` type attributes), copied
  by `--copy-impala IMPALA_CHECKOUT` (below). Copied unchanged, except
  impala_orc_posdel's three ORC position delete files: their file_path
  column says 'hdfs://localhost:20500/test-warehouse/…' where the manifests
  name the data files '/test-warehouse/…', so as Impala committed them they
  delete nothing for any other reader (pyiceberg and recon both read all 20
  rows; Impala, which maps the two, reads 10). The copy rewrites them with
  pyarrow's ORC writer, the same rows with file_path as the manifests say;
  the manifests' file_size_in_bytes of those three files is then stale
  (neither recon nor pyiceberg reads it). The script checks that pyiceberg
  then reads the 10 rows Impala's own expected results list
  (testdata/workloads/functional-query/queries/QueryTest/
  iceberg-v2-read-position-deletes-orc.test).

    python3 scripts/make_iceberg_fixtures.py --copy-impala IMPALA_CHECKOUT

copies Impala's ORC tables and writes only the copied tables' expected rows
and fixtures.json entries (the pyiceberg-written tables stay as they are).

Expected rows: testdata/iceberg/expected/<table>_<k>.parquet for the k-th
snapshot of the table's history (k = 0, 1, …), read back with
`tbl.scan(snapshot_id=…).to_arrow()` under that snapshot's schema. pyiceberg
0.12's scan refuses equality deletes, so for snapshots that have them the
script reads each live data file through pyiceberg's ArrowScan and drops
the rows whose key matches an equality delete file with a higher data
sequence number (the spec's rule).

testdata/iceberg/fixtures.json records, per table, the recorded location,
each metadata file (with its current snapshot and schema), and each snapshot
in order: id, sequence number, operation, row count, the metadata file
current right after it, and its expected file.

File names hold UUIDs and snapshot ids are random, so regenerating changes
every file; tests should take names and ids from fixtures.json.

Run from the repository root with the fixture venv:
  python3 -m venv scripts/.venv && scripts/.venv/bin/pip install -r scripts/requirements-fixtures.txt
  scripts/.venv/bin/python scripts/make_iceberg_fixtures.py
"""

import datetime
import decimal
import glob
import json
import os
import re
import shutil
import sys
import uuid
import warnings

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
from pyiceberg.catalog.sql import SqlCatalog
from pyiceberg.expressions import AlwaysTrue
from pyiceberg.io.pyarrow import (
    ArrowScan,
    PyArrowFileIO,
    compute_statistics_plan,
    data_file_statistics_from_parquet_metadata,
    parquet_path_to_id_mapping,
)
from pyiceberg.manifest import DataFile, DataFileContent, FileFormat, ManifestContent, ManifestWriterV2
from pyiceberg.partitioning import PartitionField, PartitionSpec
from pyiceberg.schema import Schema
from pyiceberg.table import FileScanTask, StaticTable
from pyiceberg.table.snapshots import Operation
from pyiceberg.table.update.snapshot import _FastAppendFiles
from pyiceberg.transforms import IdentityTransform
from pyiceberg.typedef import Record
from pyiceberg.types import DateType, DecimalType, DoubleType, FloatType, IntegerType, LongType, NestedField, StringType

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", "testdata", "iceberg"))
EXPECTED = os.path.join(ROOT, "expected")
DELTA_V3 = os.path.normpath(os.path.join(HERE, "..", "testdata", "delta", "expected", "orders_v3.parquet"))
GEN = "/tmp/recon-iceberg-gen"
WAREHOUSE = os.path.join(GEN, "warehouse")
NAMESPACE = "recon"
GENERATED = ["orders", "orders_like_delta_v3", "orders_like_delta_v3_changed", "orders_posdel", "orders_eqdel", "orders_promoted"]
# Copied, not written here (only their expected rows are): table -> writer.
COPIED = {
    "flink_eqdel": "Flink (Apache Impala's test data, copied by hand)",
    "impala_orc": "Hive, ORC (Apache Impala's test data, --copy-impala)",
    "impala_orc_complex": "Hive, ORC (Apache Impala's test data, --copy-impala)",
    "impala_orc_posdel": "Hive, ORC (Apache Impala's test data, --copy-impala; delete files' file_path rewritten)",
}
# Impala's tables --copy-impala copies: ours -> theirs, under IMPALA_ICE.
IMPALA_ORC = {
    "impala_orc": "iceberg_v2_no_deletes_orc",
    "impala_orc_complex": "complextypestbl_iceberg_orc",
    "impala_orc_posdel": "iceberg_v2_partitioned_position_deletes_orc",
}
IMPALA_ICE = os.path.join("testdata", "data", "iceberg_test", "hadoop_catalog", "ice")
# The rows Impala's own test expects of iceberg_v2_partitioned_position_deletes_orc
# (id, user, action, hour of event_time on 2020-01-01).
IMPALA_POSDEL_ROWS = sorted(
    [(i, "Alex", "view", 9) for i in (6, 20, 4)]
    + [(i, "Alan", "click", 10) for i in (18, 12, 10)]
    + [(i, "Lisa", "download", 11) for i in (2, 14, 8, 16)]
)

POS_FILE_PATH_ID = 2147483546
POS_POS_ID = 2147483545

SCHEMA = Schema(
    NestedField(1, "order_id", LongType(), required=False),
    NestedField(2, "amount", DecimalType(10, 2), required=False),
    NestedField(3, "status", StringType(), required=False),
    NestedField(4, "business_date", DateType(), required=False),
)
ARROW = pa.schema(
    [
        ("order_id", pa.int64()),
        ("amount", pa.decimal128(10, 2)),
        ("status", pa.string()),
        ("business_date", pa.date32()),
    ]
)
D1, D2 = datetime.date(2024, 1, 1), datetime.date(2024, 1, 2)


def rows(*tuples, schema=ARROW):
    cols = list(zip(*tuples))
    arrays = []
    for field, col in zip(schema, cols):
        if pa.types.is_decimal(field.type):
            col = [decimal.Decimal(v) if v is not None else None for v in col]
        arrays.append(pa.array(col, field.type))
    return pa.table(arrays, schema=schema)


class DeleteManifestWriter(ManifestWriterV2):
    """pyiceberg's v2 manifest writer, declaring content=deletes."""

    def content(self):
        return ManifestContent.DELETES

    @property
    def _meta(self):
        return {**super()._meta, "content": "deletes"}


class RowDelta(_FastAppendFiles):
    """pyiceberg's fast-append snapshot producer, adding delete files to a delete manifest.

    The parent's manifests are kept; the new delete files go into one new
    manifest that the manifest list marks content=1 (deletes).
    """

    def new_manifest_writer(self, spec):
        return DeleteManifestWriter(spec, self.schema(), self.new_manifest_output(), self._snapshot_id, self._compression)


def commit_delete_file(tbl, data_file):
    with tbl.transaction() as tx:
        with RowDelta(operation=Operation.DELETE, transaction=tx, io=tbl.io) as producer:
            producer.append_data_file(data_file)


def local(path):
    return path[len("file://") :] if path.startswith("file://") else path


def write_delete_parquet(tbl, table, iceberg_schema, content, equality_ids=None):
    """Writes `table` as a delete file in the table's data folder and returns its DataFile."""
    name = f"{uuid.uuid4()}-{'pos' if content == DataFileContent.POSITION_DELETES else 'eq'}-deletes.parquet"
    path = tbl.location_provider().new_data_location(name)
    pq.write_table(table, local(path))
    meta = pq.read_metadata(local(path))
    stats = data_file_statistics_from_parquet_metadata(
        parquet_metadata=meta,
        stats_columns=compute_statistics_plan(iceberg_schema, tbl.metadata.properties),
        parquet_column_mapping=parquet_path_to_id_mapping(iceberg_schema),
    )
    return DataFile.from_args(
        content=content,
        file_path=path,
        file_format=FileFormat.PARQUET,
        partition=Record(),
        file_size_in_bytes=os.path.getsize(local(path)),
        sort_order_id=None,
        spec_id=tbl.metadata.default_spec_id,
        equality_ids=equality_ids,
        key_metadata=None,
        **stats.to_serialized_dict(),
    )


def position_deletes(tbl, data_path, positions):
    arrow = pa.schema(
        [
            pa.field("file_path", pa.string(), nullable=False, metadata={"PARQUET:field_id": str(POS_FILE_PATH_ID)}),
            pa.field("pos", pa.int64(), nullable=False, metadata={"PARQUET:field_id": str(POS_POS_ID)}),
        ]
    )
    table = pa.table([pa.array([data_path] * len(positions)), pa.array(sorted(positions), pa.int64())], schema=arrow)
    schema = Schema(
        NestedField(POS_FILE_PATH_ID, "file_path", StringType(), required=True),
        NestedField(POS_POS_ID, "pos", LongType(), required=True),
    )
    return write_delete_parquet(tbl, table, schema, DataFileContent.POSITION_DELETES)


def equality_deletes(tbl, order_ids):
    arrow = pa.schema([pa.field("order_id", pa.int64(), metadata={"PARQUET:field_id": "1"})])
    table = pa.table([pa.array(order_ids, pa.int64())], schema=arrow)
    schema = Schema(NestedField(1, "order_id", LongType(), required=False))
    return write_delete_parquet(tbl, table, schema, DataFileContent.EQUALITY_DELETES, equality_ids=[1])


def data_files(tbl, snapshot):
    """The live data files of a snapshot, in manifest order."""
    out = []
    for manifest in snapshot.manifests(tbl.io):
        if manifest.content == ManifestContent.DATA:
            out += [e.data_file for e in manifest.fetch_manifest_entry(tbl.io, discard_deleted=True)]
    return out


def make_orders(catalog):
    tbl = catalog.create_table(
        f"{NAMESPACE}.orders",
        schema=SCHEMA,
        partition_spec=PartitionSpec(PartitionField(4, 1000, IdentityTransform(), "business_date")),
    )
    tbl.append(
        rows(
            (1, "10.00", "NEW", D1),
            (2, "20.50", "NEW", D1),
            (3, "30.25", None, D1),
            (4, "40.00", "SHIPPED", D2),
            (4, "40.00", "SHIPPED", D2),
            (5, None, "CANCELLED", D2),
        )
    )
    tbl.append(rows((6, "60.00", "NEW", D2), (7, "70.70", "NEW", D1), (8, "0.01", "NEW", None)))
    tbl.delete("order_id = 2")
    with tbl.update_schema() as update:
        update.rename_column("status", "state")
        update.add_column("channel", StringType())
    tbl = catalog.load_table(f"{NAMESPACE}.orders")
    new = pa.schema(
        [
            ("order_id", pa.int64()),
            ("amount", pa.decimal128(10, 2)),
            ("state", pa.string()),
            ("business_date", pa.date32()),
            ("channel", pa.string()),
        ]
    )
    tbl.append(
        rows(
            (9, "9.90", "NEW", D2, "web"),
            (10, None, None, D1, None),
            (7, "70.70", "NEW", D1, None),  # the same row as order 7 of B, read with channel NULL
            (11, "11.00", "SHIPPED", None, ""),
            schema=new,
        )
    )
    return catalog.load_table(f"{NAMESPACE}.orders")


def make_like_delta(catalog, name, change):
    v3 = pq.read_table(DELTA_V3)
    assert v3.schema.equals(ARROW), v3.schema
    if change:
        amounts = [
            decimal.Decimal("2.01") if oid == 11 else a
            for oid, a in zip(v3.column("order_id").to_pylist(), v3.column("amount").to_pylist())
        ]
        v3 = v3.set_column(1, "amount", pa.array(amounts, pa.decimal128(10, 2)))
    tbl = catalog.create_table(f"{NAMESPACE}.{name}", schema=SCHEMA)
    tbl.append(v3.slice(0, 2))
    tbl.append(v3.slice(2))
    return catalog.load_table(f"{NAMESPACE}.{name}")


def make_posdel(catalog):
    tbl = catalog.create_table(f"{NAMESPACE}.orders_posdel", schema=SCHEMA, properties={"write.delete.mode": "merge-on-read"})
    tbl.append(
        rows(
            (1, "10.00", "NEW", D1),
            (2, "20.50", "NEW", D1),
            (4, "40.00", "SHIPPED", D2),
            (4, "40.00", "SHIPPED", D2),
            (3, "30.25", None, D1),
            (5, None, "CANCELLED", D2),
        )
    )
    (file_a,) = data_files(tbl, tbl.current_snapshot())
    tbl.append(rows((6, "60.00", "NEW", D2), (7, "70.70", "NEW", D1), (8, "0.01", "NEW", None), (4, "40.00", "SHIPPED", D2)))
    assert len(data_files(tbl, tbl.current_snapshot())) == 2
    # pos 1 is order 2; pos 3 is the second copy of order 4 (pos 2 stays, as does B's copy).
    commit_delete_file(tbl, position_deletes(tbl, file_a.file_path, [1, 3]))
    tbl = catalog.load_table(f"{NAMESPACE}.orders_posdel")
    tbl.append(rows((9, "9.90", "NEW", D2)))
    return catalog.load_table(f"{NAMESPACE}.orders_posdel")


def make_eqdel(catalog):
    tbl = catalog.create_table(f"{NAMESPACE}.orders_eqdel", schema=SCHEMA, properties={"write.delete.mode": "merge-on-read"})
    tbl.append(rows((1, "10.00", "NEW", D1), (4, "40.00", "SHIPPED", D2), (4, "40.00", "SHIPPED", D2)))
    tbl.append(rows((5, None, "CANCELLED", D2), (4, "40.00", "SHIPPED", D2)))
    commit_delete_file(tbl, equality_deletes(tbl, [4]))
    tbl = catalog.load_table(f"{NAMESPACE}.orders_eqdel")
    tbl.append(rows((4, "44.00", "NEW", D1)))
    return catalog.load_table(f"{NAMESPACE}.orders_eqdel")


def make_promoted(catalog):
    """Type promotions: int -> long, decimal(9,2) -> decimal(12,2), float -> double.

    The first file keeps the narrow types; the reader widens them exactly.
    """
    schema = Schema(
        NestedField(1, "order_id", LongType(), required=False),
        NestedField(2, "qty", IntegerType(), required=False),
        NestedField(3, "amount", DecimalType(9, 2), required=False),
        NestedField(4, "weight", FloatType(), required=False),
    )
    narrow = pa.schema([("order_id", pa.int64()), ("qty", pa.int32()), ("amount", pa.decimal128(9, 2)), ("weight", pa.float32())])
    tbl = catalog.create_table(f"{NAMESPACE}.orders_promoted", schema=schema)
    tbl.append(rows((1, 2147483647, "9999999.99", 0.1), (2, None, "-1.50", None), (2, None, "-1.50", None), schema=narrow))
    with tbl.update_schema() as update:
        update.update_column("qty", field_type=LongType())
        update.update_column("amount", field_type=DecimalType(12, 2))
        update.update_column("weight", field_type=DoubleType())
    tbl = catalog.load_table(f"{NAMESPACE}.orders_promoted")
    wide = pa.schema([("order_id", pa.int64()), ("qty", pa.int64()), ("amount", pa.decimal128(12, 2)), ("weight", pa.float64())])
    tbl.append(rows((3, 2147483648, "1234567890.12", 0.1), schema=wide))
    return catalog.load_table(f"{NAMESPACE}.orders_promoted")


def read_snapshot(tbl, snapshot):
    """A snapshot's rows under its own schema; equality deletes applied by hand where present."""
    schema = tbl.metadata.schema_by_id(snapshot.schema_id)
    entries = []
    for manifest in snapshot.manifests(tbl.io):
        for e in manifest.fetch_manifest_entry(tbl.io, discard_deleted=True):
            entries.append(e)
    eq = [e for e in entries if e.data_file.content == DataFileContent.EQUALITY_DELETES]
    if not eq:
        return tbl.scan(snapshot_id=snapshot.snapshot_id).to_arrow(), False
    assert not any(e.data_file.content == DataFileContent.POSITION_DELETES for e in entries)
    parts = []
    for e in entries:
        if e.data_file.content != DataFileContent.DATA:
            continue
        part = ArrowScan(tbl.metadata, tbl.io, schema, AlwaysTrue()).to_table([FileScanTask(e.data_file)])
        arrow_schema = part.schema
        for d in eq:
            if d.sequence_number <= e.sequence_number:
                continue
            names = [schema.find_field(i).name for i in d.data_file.equality_ids]
            keys = pq.read_table(tbl.io.new_input(d.data_file.file_path).open())
            id_to_col = {int(f.metadata[b"PARQUET:field_id"]): f.name for f in keys.schema}
            keys = keys.select([id_to_col[i] for i in d.data_file.equality_ids]).rename_columns(names)
            # Equality deletes match NULL to NULL; anti-join on the key columns.
            part = part.join(keys, keys=names, join_type="left anti", use_threads=False).cast(arrow_schema)
        parts.append(part)
    return pa.concat_tables(parts).select([f.name for f in schema.fields]), True


class RebasingFileIO(PyArrowFileIO):
    """PyArrowFileIO that reads paths under `recon.rebase-from` from `recon.rebase-to`."""

    def _map(self, location):
        src, dst = self.properties["recon.rebase-from"], self.properties["recon.rebase-to"]
        return dst + location[len(src) :] if location.startswith(src) else location

    def new_input(self, location):
        return super().new_input(self._map(location))


def copied_table(name):
    metadata = sorted(
        glob.glob(os.path.join(ROOT, name, "metadata", "*.metadata.json")),
        key=lambda p: int(re.match(r"v?(\d+)", os.path.basename(p)).group(1)),
    )[-1]
    location = json.load(open(metadata))["location"]
    return StaticTable.from_metadata(
        metadata,
        properties={
            "py-io-impl": f"{__name__}.RebasingFileIO",
            "recon.rebase-from": location,
            "recon.rebase-to": os.path.join(ROOT, name),
        },
    )


def orc_rows(tbl, snapshot):
    """A snapshot of a table without deletes read by Apache ORC's C++ reader
    (pyarrow.orc), file by file: pyiceberg reads a NULL map inside a struct
    of an ORC file as an empty map (impala_orc_complex rows 4 and 7)."""
    import pyarrow.orc as orc

    # Snapshots written before schema ids (as Hive's here) read with the table's schema.
    schema = tbl.metadata.schema_by_id(snapshot.schema_id) if snapshot.schema_id is not None else tbl.schema()
    parts = []
    for manifest in snapshot.manifests(tbl.io):
        for e in manifest.fetch_manifest_entry(tbl.io, discard_deleted=True):
            assert e.data_file.content == DataFileContent.DATA, "orc_rows reads tables without deletes"
            with tbl.io.new_input(e.data_file.file_path).open() as f:
                parts.append(orc.ORCFile(f).read())
    names = [f.name for f in schema.fields]
    return pa.concat_tables(parts).select(names).replace_schema_metadata(None), False


def copy_impala(checkout):
    """Copies Impala's ORC tables (IMPALA_ORC) into ROOT; see the docstring."""
    import pyarrow.orc as orc

    for ours, theirs in IMPALA_ORC.items():
        dst = os.path.join(ROOT, ours)
        shutil.rmtree(dst, ignore_errors=True)
        shutil.copytree(os.path.join(checkout, IMPALA_ICE, theirs), dst, ignore=shutil.ignore_patterns("*.crc"))
    for path in glob.glob(os.path.join(ROOT, "impala_orc_posdel", "data", "*", "*-delete-*.orc")):
        t = orc.read_table(path)
        fixed = pa.array([p.replace("hdfs://localhost:20500/", "/") for p in t.column("file_path").to_pylist()])
        orc.write_table(t.set_column(t.schema.get_field_index("file_path"), "file_path", fixed), path)
    rows = copied_table("impala_orc_posdel").scan().to_arrow().to_pylist()
    got = sorted((r["id"], r["user"], r["action"], r["event_time"].hour) for r in rows)
    assert got == IMPALA_POSDEL_ROWS, got


def describe(name, tbl, metadata_dir, reader=None):
    """fixtures.json entry; writes the expected Parquet files."""
    metadata_files = []
    for path in sorted(glob.glob(os.path.join(metadata_dir, "*.metadata.json"))):
        m = json.load(open(path))
        metadata_files.append(
            {
                "file": os.path.basename(path),
                "current_snapshot_id": m.get("current-snapshot-id"),
                "current_schema_id": m.get("current-schema-id"),
                "last_sequence_number": m.get("last-sequence-number"),
            }
        )
    metadata_files.sort(key=lambda f: int(re.match(r"v?(\d+)", f["file"]).group(1)))
    snapshots = []
    for k, entry in enumerate(tbl.metadata.snapshot_log):
        snapshot = tbl.metadata.snapshot_by_id(entry.snapshot_id)
        table, by_hand = (reader or read_snapshot)(tbl, snapshot)
        expected = f"{name}_{k}.parquet"
        pq.write_table(table, os.path.join(EXPECTED, expected))
        after = next(f["file"] for f in metadata_files if f["current_snapshot_id"] == snapshot.snapshot_id)
        item = {
            "snapshot_id": snapshot.snapshot_id,
            "sequence_number": snapshot.sequence_number,
            "operation": snapshot.summary.operation.value,
            "schema_id": snapshot.schema_id,
            "columns": table.column_names,
            "rows": table.num_rows,
            "metadata_file": after,
            "expected": expected,
        }
        if by_hand:
            item["expected_note"] = "equality deletes applied by this script; pyiceberg's scan refuses them"
        snapshots.append(item)
    hints = {os.path.basename(p): open(p).read() for p in sorted(glob.glob(os.path.join(metadata_dir, "version-hint.*")))}
    return {
        "location": tbl.metadata.location,
        "format_version": tbl.metadata.format_version,
        "version_hint_files": hints,
        "metadata_files": metadata_files,
        "current_metadata_file": metadata_files[-1]["file"],
        "snapshots": snapshots,
    }


def describe_copied(fixtures, names):
    for name in names:
        writer = COPIED[name]
        if os.path.isdir(os.path.join(ROOT, name)):
            reader = orc_rows if name == "impala_orc_complex" else None
            fixtures[name] = describe(name, copied_table(name), os.path.join(ROOT, name, "metadata"), reader)
            fixtures[name]["writer"] = writer
            if reader is orc_rows:
                fixtures[name]["expected_note"] = "read by Apache ORC's C++ reader (pyarrow.orc); pyiceberg reads its NULL maps in a struct as empty maps"


def main():
    warnings.simplefilter("ignore")
    if sys.argv[1:2] == ["--copy-impala"]:
        copy_impala(sys.argv[2])
        with open(os.path.join(ROOT, "fixtures.json")) as f:
            fixtures = json.load(f)
        describe_copied(fixtures, IMPALA_ORC)
        with open(os.path.join(ROOT, "fixtures.json"), "w") as f:
            json.dump(fixtures, f, indent=2)
            f.write("\n")
        return
    shutil.rmtree(GEN, ignore_errors=True)
    os.makedirs(WAREHOUSE)
    for name in GENERATED:
        shutil.rmtree(os.path.join(ROOT, name), ignore_errors=True)
    shutil.rmtree(EXPECTED, ignore_errors=True)
    os.makedirs(EXPECTED)
    catalog = SqlCatalog("recon", uri=f"sqlite:///{GEN}/catalog.db", warehouse=WAREHOUSE)
    catalog.create_namespace(NAMESPACE)
    tables = {
        "orders": make_orders(catalog),
        "orders_like_delta_v3": make_like_delta(catalog, "orders_like_delta_v3", change=False),
        "orders_like_delta_v3_changed": make_like_delta(catalog, "orders_like_delta_v3_changed", change=True),
        "orders_posdel": make_posdel(catalog),
        "orders_eqdel": make_eqdel(catalog),
        "orders_promoted": make_promoted(catalog),
    }
    # Hadoop-catalog style hint for orders only: the number N of the current 0000N-<uuid>.metadata.json.
    current = os.path.basename(local(tables["orders"].metadata_location))
    with open(os.path.join(local(tables["orders"].metadata.location), "metadata", "version-hint.text"), "w") as f:
        f.write(str(int(current.split("-")[0])))
    fixtures = {}
    for name, tbl in tables.items():
        src = local(tbl.metadata.location)
        for sub in ("metadata", "data"):
            shutil.copytree(os.path.join(src, sub), os.path.join(ROOT, name, sub))
        fixtures[name] = describe(name, tbl, os.path.join(src, "metadata"))
        fixtures[name]["writer"] = "pyiceberg"
    describe_copied(fixtures, COPIED)
    with open(os.path.join(ROOT, "fixtures.json"), "w") as f:
        json.dump(fixtures, f, indent=2)
        f.write("\n")


if __name__ == "__main__":
    main()
