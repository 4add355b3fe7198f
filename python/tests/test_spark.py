"""recon.spark on a real local Spark (local[2], started once for the module):
the CLI's digests and answers, Spark's own types, no shuffle for a match,
with the digests in the JVM (recon's jar, which the installed wheel must
hold) and in Python (mapInArrow)."""

from __future__ import annotations

import datetime as dt
import decimal
import json
import os
import random
import sys
from collections import Counter
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from conftest import cli_report, run_cli

# Not an import-or-skip: pyspark is in requirements-test.txt, and these
# tests must run wherever the suite runs.
from pyspark.sql import SparkSession

import recon
import recon.spark
from recon.spark import _jvm as _spark_jvm

# RECON_SPARK_HIDE_JAR=1 (.ci/python's second run of the Spark tests)
# hides recon's jar, as a Databricks shared cluster or serverless does:
# every test then runs on the fallback path (digests in Python), the JVM
# cases of PATHS are not generated, and the tests that need the jar skip,
# saying so.
HIDE_JAR = os.environ.get("RECON_SPARK_HIDE_JAR") == "1"
PATHS = ["python"] if HIDE_JAR else ["jvm", "python"]
needs_jar = pytest.mark.skipif(HIDE_JAR, reason="needs recon's jar, which "
                               "RECON_SPARK_HIDE_JAR=1 hides")


@pytest.fixture(scope="module")
def spark():
    # Workers run this interpreter (the venv with the wheel and pyarrow).
    os.environ["PYSPARK_PYTHON"] = sys.executable
    session = (SparkSession.builder.master("local[2]")
               .appName("recon-tests")
               .config("spark.ui.enabled", "false")
               .config("spark.sql.shuffle.partitions", "4")
               .config("spark.driver.bindAddress", "127.0.0.1")
               .config("spark.driver.host", "127.0.0.1")
               .getOrCreate())
    session.sparkContext.setLogLevel("ERROR")
    hidden = (_spark_jvm.JAR, _spark_jvm.CATALOG)
    if HIDE_JAR:
        _spark_jvm.JAR = Path("/nonexistent/recon-spark.jar")
        _spark_jvm.CATALOG = "recon_jvm_hidden"
    yield session
    _spark_jvm.JAR, _spark_jvm.CATALOG = hidden
    session.stop()


def _rows(table: pa.Table) -> Counter:
    """A table's rows as a multiset (NaN made comparable)."""
    def norm(v):
        if isinstance(v, float) and v != v:
            return "NaN"
        return v
    return Counter(tuple(norm(v) for v in r.values()) for r in table.to_pylist())


def _shuffle_records(spark) -> int:
    """Shuffle records written by every stage this session has run
    (Spark's own metrics, from its status store)."""
    tracker = spark.sparkContext.statusTracker()
    store = spark.sparkContext._jsc.sc().statusStore()
    stages = set()
    for job in tracker.getJobIdsForGroup(None):
        info = tracker.getJobInfo(job)
        if info is not None:
            stages.update(info.stageIds)
    total = 0
    for stage in stages:
        try:
            total += store.lastStageAttempt(stage).shuffleWriteRecords()
        except Exception:  # a stage that was skipped never ran an attempt
            pass
    return total


# ---------------------------------------------------------------- fingerprints

def _typed_table() -> pa.Table:
    utc = dt.timezone.utc
    return pa.table({
        "i32": pa.array([1, -2, None, 2**31 - 1], pa.int32()),
        "i64": pa.array([2**40, None, -1, 0], pa.int64()),
        "d": pa.array([decimal.Decimal("1.50"), decimal.Decimal("-0.01"), None,
                       decimal.Decimal("99999999.99")], pa.decimal128(10, 2)),
        "wide": pa.array([decimal.Decimal("0.3333333333"), None, decimal.Decimal("1"),
                          decimal.Decimal("-12345678901234567890.0000000001")],
                         pa.decimal128(38, 10)),
        "f": pa.array([1.5, float("nan"), -0.0, None], pa.float64()),
        "s": pa.array(["ab", "", None, "a longer string value"], pa.string()),
        "b": pa.array([b"\x00\x01", b"", None, b"xyz"], pa.binary()),
        "flag": pa.array([True, False, None, True], pa.bool_()),
        "day": pa.array([dt.date(2024, 1, 1), dt.date(1969, 12, 31), None, dt.date(2000, 2, 29)],
                        pa.date32()),
        "ts": pa.array([dt.datetime(2024, 3, 10, 7, 30, tzinfo=utc),
                        dt.datetime(1969, 12, 31, 23, 59, 59, 999999, tzinfo=utc), None,
                        dt.datetime(2024, 11, 3, 6, 0, 0, 1, tzinfo=utc)],
                       pa.timestamp("us", tz="UTC")),
        "naive": pa.array([dt.datetime(2024, 3, 10, 2, 30), None, dt.datetime(1900, 1, 1),
                           dt.datetime(2024, 1, 1, 0, 0, 0, 5)], pa.timestamp("us")),
        "nums": pa.array([[1, None, 3], [], None, [4]], pa.list_(pa.int64())),
        "st": pa.array([{"x": 1, "y": "a"}, {"x": None, "y": None}, None, {"x": 2, "y": "b"}],
                       pa.struct([("x", pa.int32()), ("y", pa.string())])),
    })


def _cli_fingerprint(path: Path) -> dict:
    p = run_cli("fingerprint", str(path))
    assert p.returncode == 0, p.stderr
    return json.loads(p.stdout)


def _digests(fp: dict) -> dict:
    """What must be equal bit for bit: everything but the table's name."""
    return {k: v for k, v in fp.items() if k != "table"}


@pytest.mark.parametrize("zone", ["UTC", "America/New_York", "Asia/Kolkata"])
@pytest.mark.parametrize("ansi", ["true", "false"])
@pytest.mark.parametrize("digests", PATHS)
def test_spark_fingerprint_equals_the_clis_bit_for_bit(spark, tmp_path, zone, ansi, digests):
    path = tmp_path / "typed.parquet"
    pq.write_table(_typed_table(), path)
    spark.conf.set("spark.sql.session.timeZone", zone)
    spark.conf.set("spark.sql.ansi.enabled", ansi)
    try:
        got = recon.spark.fingerprint(spark.read.parquet(str(path)), digests=digests).to_dict()
    finally:
        spark.conf.unset("spark.sql.session.timeZone")
        spark.conf.unset("spark.sql.ansi.enabled")
    want = _cli_fingerprint(path)
    assert _digests(got) == _digests(want)
    assert got["total"]["rows"] == 4


@needs_jar
def test_spark_fingerprint_of_an_empty_table_is_the_same_either_way(spark, tmp_path):
    path = tmp_path / "empty.parquet"
    pq.write_table(_typed_table().slice(0, 0), path)
    df = spark.read.parquet(str(path))
    jvm = recon.spark.fingerprint(df, digests="jvm").to_dict()
    python = recon.spark.fingerprint(df, digests="python").to_dict()
    assert _digests(jvm) == _digests(python) == _digests(_cli_fingerprint(path))
    assert jvm["total"]["rows"] == 0


def test_spark_fingerprint_in_the_jvm_has_no_groups_or_sketch(spark):
    df = spark.range(3)
    for kw in ({"by": "id"}, {"sketch": 10}):
        with pytest.raises(recon.UsageError, match="without by= or sketch="):
            recon.spark.fingerprint(df, digests="jvm", **kw)
    with pytest.raises(recon.UsageError, match="digests= takes one of"):
        recon.spark.fingerprint(df, digests="gpu")


def test_spark_values_built_in_spark_digest_like_the_parquet_rows(spark, tmp_path):
    """Rows Spark builds itself (its own decimal and timestamp types, a
    session zone that is not UTC) digest like the same rows from Parquet."""
    spark.conf.set("spark.sql.session.timeZone", "America/Los_Angeles")
    try:
        df = spark.sql("""
            SELECT * FROM VALUES
              (CAST(1 AS INT), CAST('1.50' AS DECIMAL(12, 4)), 'x',
               TIMESTAMP '2024-03-10 01:30:00', TIMESTAMP_NTZ '2024-03-10 02:30:00'),
              (CAST(NULL AS INT), CAST('-7' AS DECIMAL(12, 4)), NULL,
               TIMESTAMP '2024-11-03 01:30:00', NULL)
            AS t(i, d, s, ts, naive)""")
        got = recon.spark.fingerprint(df).to_dict()
    finally:
        spark.conf.unset("spark.sql.session.timeZone")
    # The same values written independently: instants in UTC, decimals by value.
    la = dt.timezone(dt.timedelta(hours=-8))
    pdt = dt.timezone(dt.timedelta(hours=-7))
    table = pa.table({
        "i": pa.array([1, None], pa.int64()),
        "d": pa.array([decimal.Decimal("1.5"), decimal.Decimal("-7")], pa.decimal128(20, 1)),
        "s": pa.array(["x", None], pa.large_string()),
        "ts": pa.array([dt.datetime(2024, 3, 10, 1, 30, tzinfo=la),
                        dt.datetime(2024, 11, 3, 1, 30, tzinfo=pdt)], pa.timestamp("ms", "UTC")),
        "naive": pa.array([dt.datetime(2024, 3, 10, 2, 30), None], pa.timestamp("ns")),
    })
    path = tmp_path / "same.parquet"
    pq.write_table(table, path)
    want = _cli_fingerprint(path)
    assert got["total"] == want["total"]


def test_grouped_fingerprint_equals_the_clis(spark, tmp_path):
    rng = random.Random(7)
    table = pa.table({
        "day": pa.array([dt.date(2024, 1, 1 + rng.randrange(5)) if rng.random() > 0.1 else None
                         for _ in range(500)], pa.date32()),
        "v": pa.array([rng.randrange(50) for _ in range(500)], pa.int64()),
    })
    path = tmp_path / "g.parquet"
    pq.write_table(table, path, row_group_size=64)
    got = recon.spark.fingerprint(spark.read.parquet(str(path)).repartition(7), by="day")
    p = run_cli("fingerprint", str(path), "--by", "day")
    assert p.returncode == 0, p.stderr
    assert _digests(got.to_dict()) == _digests(json.loads(p.stdout))
    # And the files compare with the CLI, both ways.
    saved = tmp_path / "spark.json"
    got.save(saved)
    (tmp_path / "cli.json").write_text(p.stdout)
    c = run_cli("compare-fingerprints", str(saved), str(tmp_path / "cli.json"))
    assert c.returncode == 0, c.stdout + c.stderr


def test_a_cluster_table_and_a_local_file_name_their_differing_rows(spark, tmp_path):
    # The source is a file on a workstation, the target a DataFrame on the
    # cluster: sketched fingerprints name the differing rows, each side
    # extracts its own, and the extracts diff like the two tables.
    rng = random.Random(11)
    n = 4_000
    src = pa.table({"k": pa.array([rng.randrange(900) for _ in range(n)], pa.int64()),
                    "s": pa.array([f"s{rng.randrange(30)}" if rng.random() > 0.05 else None
                                   for _ in range(n)])})
    rows = list(zip(src.column("k").to_pylist(), src.column("s").to_pylist()))
    tgt_rows = rows[:-7] + [rows[3]] * 5 + [(k + 1, s) for k, s in rows[100:140]]
    tgt = pa.table({"k": pa.array([r[0] for r in tgt_rows], pa.int64()),
                    "s": pa.array([r[1] for r in tgt_rows])})
    local, remote = tmp_path / "local.parquet", tmp_path / "remote.parquet"
    pq.write_table(src, local, row_group_size=500)
    pq.write_table(tgt, remote, row_group_size=500)
    df = spark.read.parquet(str(remote)).repartition(5)
    sketched = recon.spark.fingerprint(df, sketch=300)
    assert sketched.has_sketch
    sketched.save(tmp_path / "cluster.fp.json")
    p = run_cli("fingerprint", str(local), "--sketch", "300", "-o", str(tmp_path / "ws.fp.json"))
    assert p.returncode == 0, p.stderr
    cmp = recon.compare_fingerprints(tmp_path / "ws.fp.json", tmp_path / "cluster.fp.json")
    assert cmp.to_dict()["sketch"]["decoded"] is True
    cmp.save_digests(tmp_path / "d.json")
    got = recon.spark.extract(df, cmp)
    assert got.columns == df.columns
    (tmp_path / "x_cluster").mkdir()
    pq.write_table(got.toArrow(), tmp_path / "x_cluster" / "x.parquet")
    p = run_cli("extract", str(local), "--digests", str(tmp_path / "d.json"),
                "--like", str(tmp_path / "ws.fp.json"), "-o", str(tmp_path / "x_ws.parquet"))
    assert p.returncode == 0, p.stderr
    small = recon.diff(tmp_path / "x_ws.parquet", tmp_path / "x_cluster" / "x.parquet")
    direct = recon.diff(local, remote)
    assert (small.source_only_rows, small.target_only_rows) == \
        (direct.source_only_rows, direct.target_only_rows) != (0, 0)
    key = lambda t: sorted(zip(t.column("k").to_pylist(), t.column("s").to_pylist()),
                           key=repr)
    assert key(small.source_only()) == key(direct.source_only())
    assert key(small.target_only()) == key(direct.target_only())


# ---------------------------------------------------------------- diffs

def _random_pair(seed: int):
    """A random pair as the CLI's oracle builds them: few distinct values (so
    duplicates), NULLs, NaN and -0.0, then planted deletes, inserts,
    changes and moved copies."""
    rng = random.Random(seed)
    n = rng.randrange(0, 300)

    def row():
        return (
            rng.choice([None, 0, 1, 2, -5, 2**40]),
            rng.choice([None, "", "a", "b", "ab", "a longer string value"]),
            rng.choice([None, 0.0, -0.0, 1.5, float("nan")]),
        )

    src = [row() for _ in range(n)]
    tgt = list(src)
    for _ in range(rng.randrange(0, 6)):
        what = rng.randrange(4)
        if what == 0 and tgt:
            tgt.pop(rng.randrange(len(tgt)))
        elif what == 1:
            tgt.append(row())
        elif what == 2 and tgt:
            i = rng.randrange(len(tgt))
            tgt[i] = (tgt[i][0], rng.choice(["changed", None, "a"]), tgt[i][2])
        elif what == 3 and src:
            tgt.append(rng.choice(src))  # an extra copy of an existing row
    rng.shuffle(tgt)
    schema = pa.schema([("k", pa.int64()), ("s", pa.string()), ("x", pa.float64())])

    def table(rows):
        return pa.table({name: [r[i] for r in rows] for i, name in enumerate(schema.names)},
                        schema=schema)
    return table(src), table(tgt)


def _shown(report_part):
    """A part of a report with -0.0 shown as 0.0: recon calls the two equal,
    so a distinct row's copies may hold either, and Spark and the CLI may
    show different copies of it."""
    return json.loads(json.dumps(report_part).replace('"-0.0"', '"0.0"'))


def _sorted_samples(pairs):
    """A pairs report with its samples in a fixed order (Spark holds no row
    order, so which pairs come first may differ from the CLI's), -0.0 shown
    as 0.0."""
    if pairs is None:
        return None
    key = lambda p: json.dumps(p, sort_keys=True)  # noqa: E731
    return _shown({**pairs, "samples": sorted(pairs["samples"], key=key)})


def _check_against_cli(spark, tmp_path, a: pa.Table, b: pa.Table, partitions=None, by=None,
                       **kw):
    sp, tp = tmp_path / "s.parquet", tmp_path / "t.parquet"
    pq.write_table(a, sp, row_group_size=50)
    pq.write_table(b, tp, row_group_size=50)
    want, out = cli_report(sp, tp, *(["--by", by] if by else []), out_dir=tmp_path)
    sdf, tdf = spark.read.parquet(str(sp)), spark.read.parquet(str(tp))
    if partitions:
        sdf, tdf = sdf.repartition(partitions), tdf.repartition(partitions)
    d = recon.spark.diff(sdf, tdf, by=by, **kw)
    got = d.report
    for field in ("exact_match", "source_rows", "target_rows", "source_only_rows",
                  "target_only_rows", "multiplicity", "column_drift", "encoding_version",
                  "by_group"):
        assert got[field] == want[field], field
    # Every pair is shown here (fewer than `sample`), so the sets agree.
    assert _sorted_samples(got["pairs"]) == _sorted_samples(want["pairs"])
    # The sample rows are the CLI's: the smallest digests, in that order.
    assert _shown(got["samples"]) == _shown(want["samples"])
    assert d.exact_match == want["exact_match"]
    for side, name in ((d.source_only, "source_only"), (d.target_only, "target_only")):
        spark_rows = _rows(side().toArrow())
        cli_rows = _rows(pq.read_table(out / f"{name}.parquet"))
        assert spark_rows == cli_rows, name
    # Counts per distinct row agree with the rows themselves.
    counted = d.source_only(counts=True).toArrow().to_pylist()
    assert sum(r["source_count"] - r["target_count"] for r in counted) == got["source_only_rows"]
    return d


@pytest.mark.parametrize("digests", PATHS)
@pytest.mark.parametrize("seed", range(12))
def test_random_pairs_give_the_clis_answer(spark, tmp_path, seed, digests):
    a, b = _random_pair(seed)
    # Few buckets: differences share buckets, so both the decoded and the
    # shuffled second pass run.
    d = _check_against_cli(spark, tmp_path, a, b, buckets=[2, 4096, 16][seed % 3],
                           digests=digests, by=[None, "s", "x", "k"][seed % 4])
    assert d.report["settings"]["digests"] == digests


@pytest.mark.parametrize("digests", PATHS)
def test_many_partitions_give_the_same_answer(spark, tmp_path, digests):
    a, b = _random_pair(1234)
    _check_against_cli(spark, tmp_path, a, b, partitions=37, buckets=8, digests=digests)


@pytest.mark.parametrize("digests", PATHS)
def test_only_moved_duplicate_copies_is_drift(spark, tmp_path, digests):
    # {x, x, y} against {x, y, y}: the same distinct rows, different counts.
    schema = pa.schema([("v", pa.string())])
    a = pa.table({"v": ["x", "x", "y"]}, schema=schema)
    b = pa.table({"v": ["x", "y", "y"]}, schema=schema)
    d = _check_against_cli(spark, tmp_path, a, b, digests=digests)
    assert not d.exact_match
    assert d.source_only().toArrow().column("v").to_pylist() == ["x"]


@pytest.mark.parametrize("digests", PATHS)
def test_a_matching_pair_shuffles_no_rows(spark, tmp_path, digests):
    a, _ = _random_pair(99)
    a = pa.concat_tables([a] * 20)
    path = tmp_path / "same.parquet"
    pq.write_table(a, path, row_group_size=500)
    df = spark.read.parquet(str(path))
    d = recon.spark.diff(df, spark.read.parquet(str(path)).repartition(3, "k").select("x", "s", "k"),
                         digests=digests)
    assert d.exact_match
    assert d.report["settings"]["passes"] == 1
    # The repartition above shuffles the target once, in pass 1 (it is
    # part of that DataFrame); a pair read as it is shuffles no row. The
    # JVM's pass 1 is an aggregate, which sends one state (its bucket
    # sums) per partition to be added up: at most that many records.
    states = df.rdd.getNumPartitions() * 2 if digests == "jvm" else 0
    before = _shuffle_records(spark)
    d = recon.spark.diff(df, spark.read.parquet(str(path)), digests=digests)
    assert d.exact_match
    assert _shuffle_records(spark) - before <= states, "a matching pair shuffled rows"
    # The metric is live: a drifting pair's second pass does shuffle.
    drifted = spark.read.parquet(str(path)).where("k IS NULL OR k != 2")
    d = recon.spark.diff(df, drifted, buckets=2, digests=digests)
    assert not d.exact_match
    assert _shuffle_records(spark) - before > states


@needs_jar
def test_the_installed_package_holds_the_jar_and_auto_uses_it(spark, tmp_path):
    # CI builds the jar into the wheel (scripts/build-jar.sh before pip
    # install): without it every "jvm" test above would fail, and "auto"
    # would fall back silently.
    assert _spark_jvm.JAR.is_file(), _spark_jvm.JAR
    a, b = _random_pair(7)
    d = _check_against_cli(spark, tmp_path, a, b)
    assert d.report["settings"]["digests"] == "jvm"
    # A plan that converts values digests in Python, where the rules run.
    sp, tp = tmp_path / "s.parquet", tmp_path / "t.parquet"
    d = recon.spark.diff(spark.read.parquet(str(sp)), spark.read.parquet(str(tp)), trim="s")
    assert d.report["settings"]["digests"] == "python"
    with pytest.raises(recon.UsageError, match="converts 's'"):
        recon.spark.diff(spark.read.parquet(str(sp)), spark.read.parquet(str(tp)), trim="s",
                         digests="jvm")
    with pytest.raises(recon.UsageError, match="digests="):
        recon.spark.diff(spark.read.parquet(str(sp)), spark.read.parquet(str(tp)),
                         digests="scala")


def test_without_the_jar_auto_falls_back_to_python_and_says_why(spark, tmp_path, monkeypatch):
    # A cluster where the jar cannot load (Databricks standard access,
    # serverless without an allowlist) looks like this to recon.spark.
    monkeypatch.setattr(_spark_jvm, "JAR", tmp_path / "absent.jar")
    monkeypatch.setattr(_spark_jvm, "CATALOG", "recon_jvm_absent")
    a, b = _random_pair(8)
    with pytest.warns(RuntimeWarning, match="absent.jar"):
        d = _check_against_cli(spark, tmp_path, a, b)
    assert d.report["settings"]["digests"] == "python"
    sp, tp = tmp_path / "s.parquet", tmp_path / "t.parquet"
    with pytest.raises(recon.UsageError, match="absent.jar"):
        recon.spark.diff(spark.read.parquet(str(sp)), spark.read.parquet(str(tp)),
                         digests="jvm")


def test_the_result_renders_like_a_local_diff(spark, tmp_path):
    a, b = _random_pair(5)
    d = _check_against_cli(spark, tmp_path, a, b)
    local = recon.diff(a, b)
    assert d.verdict == local.verdict
    assert "<html" in d._result.html().lower()
    assert repr(d).splitlines()[0] == repr(local).splitlines()[0]
    d.to_json(tmp_path / "r.json")
    assert json.loads((tmp_path / "r.json").read_text())["inputs"]["source"]["format"] == "spark"


def test_options_apply_as_in_the_cli(spark, tmp_path):
    schema = pa.schema([("id", pa.int64()), ("name", pa.string()), ("noise", pa.int64())])
    a = pa.table({"id": [1, 2], "name": ["ann ", "bob"], "noise": [1, 2]}, schema=schema)
    b = pa.table({"id": [1, 2], "name": ["ann", "bob"], "noise": [7, 8]}, schema=schema)
    _check_against_cli(spark, tmp_path, a, b)  # drift as it stands
    sp, tp = tmp_path / "s.parquet", tmp_path / "t.parquet"
    d = recon.spark.diff(spark.read.parquet(str(sp)), spark.read.parquet(str(tp)),
                         exclude="noise", trim="name")
    assert d.exact_match
    assert d.report["not_compared"] == [{"side": "source", "name": "noise",
                                         "why": d.report["not_compared"][0]["why"]},
                                        {"side": "target", "name": "noise",
                                         "why": d.report["not_compared"][1]["why"]}]


def test_by_groups_the_converted_value_as_the_cli_does(spark, tmp_path):
    """`by` on a column a rule normalizes: groups hold the compared value
    ("ann" for "ann " and " ANN"), as `recon diff --trim --case-insensitive
    --by` groups them; the pairs show the values as stored."""
    schema = pa.schema([("id", pa.int64()), ("name", pa.string()), ("amount", pa.int64())])
    a = pa.table({"id": [1, 2, 3, 4], "name": ["ann ", "bob", None, "cy"],
                  "amount": [10, 20, 30, 40]}, schema=schema)
    b = pa.table({"id": [1, 2, 3, 5], "name": [" ANN", "bob", None, "cy"],
                  "amount": [11, 20, 31, 40]}, schema=schema)
    sp, tp = tmp_path / "s.parquet", tmp_path / "t.parquet"
    pq.write_table(a, sp)
    pq.write_table(b, tp)
    want, _ = cli_report(sp, tp, "--trim", "name", "--case-insensitive", "name", "--by", "name",
                         out_dir=tmp_path)
    got = recon.spark.diff(spark.read.parquet(str(sp)), spark.read.parquet(str(tp)),
                           trim=["name"], case_insensitive=["name"], by="name").report
    assert got["settings"]["digests"] == "python"  # a rule: the JVM cannot run it
    assert got["by_group"] == want["by_group"]
    assert [g["value"] for g in got["by_group"]["groups"]] == [None, "ann", "cy"]
    assert _sorted_samples(got["pairs"]) == _sorted_samples(want["pairs"])
    assert got["pairs"]["paired"] == 3


def test_pairing_is_skipped_past_the_clis_limit_as_the_cli_says(spark, tmp_path):
    n = 20_001
    schema = pa.schema([("id", pa.int64()), ("v", pa.int64())])
    a = pa.table({"id": list(range(n)), "v": [0] * n}, schema=schema)
    b = pa.table({"id": list(range(n)), "v": [1] * n}, schema=schema)
    sp, tp = tmp_path / "s.parquet", tmp_path / "t.parquet"
    pq.write_table(a, sp)
    pq.write_table(b, tp)
    want, _ = cli_report(sp, tp, "--by", "v", out_dir=tmp_path)
    got = recon.spark.diff(spark.read.parquet(str(sp)), spark.read.parquet(str(tp)),
                           by="v").report
    assert want["pairs"]["skipped"], want["pairs"]
    assert got["pairs"] == want["pairs"]
    assert got["by_group"] == want["by_group"]


def test_by_is_refused_with_a_key_or_an_uncompared_column(spark):
    a = spark.sql("SELECT 1 AS id, 'x' AS s")
    with pytest.raises(recon.UsageError, match="with key="):
        recon.spark.diff(a, a, key="id", by="s")
    with pytest.raises(recon.UsageError, match="not a compared column"):
        recon.spark.diff(a, a, by="nope")
    with pytest.raises(recon.UsageError, match="not a compared column"):
        recon.spark.diff(a, a, by="s", exclude="s")


def test_refusals_are_typed_errors(spark):
    a = spark.sql("SELECT 1 AS id, 'x' AS s")
    b = spark.sql("SELECT 1 AS id, DATE '2024-01-01' AS s")
    with pytest.raises(recon.SchemaError):
        recon.spark.diff(a, b)
    with pytest.raises(recon.UsageError, match="power of two"):
        recon.spark.diff(a, a, buckets=1000)
    with pytest.raises(recon.UsageError, match="keyed"):
        recon.spark.diff(a, a).changed()


def test_a_value_a_conversion_refuses_is_an_input_error_on_the_driver(spark):
    a = spark.sql("SELECT * FROM VALUES ('1'), ('x') AS t(n)")
    b = spark.sql("SELECT * FROM VALUES (1), (2) AS t(n)")
    with pytest.raises(recon.InputError, match="x"):
        recon.spark.diff(a, b, cast={"n": "int64"})


def test_column_names_with_dots_backticks_and_spaces(spark, tmp_path):
    a, b = _random_pair(21)
    names = ["a.b", "we`ird", "with space"]
    _check_against_cli(spark, tmp_path, a.rename_columns(names), b.rename_columns(names),
                       buckets=4)


def test_types_without_a_value_form_are_refused_naming_the_column(spark):
    # A year-month interval has no Arrow form in Spark; a variant's bytes
    # are not canonical. Both are schema errors before any data is read.
    months = spark.sql("SELECT 1 AS id, INTERVAL '1' YEAR AS span")
    with pytest.raises(recon.SchemaError, match="'span'"):
        recon.spark.fingerprint(months)
    variant = spark.sql("""SELECT 1 AS id, parse_json('{"a": 1}') AS doc""")
    with pytest.raises(recon.SchemaError, match="'doc'.*to_json"):
        recon.spark.diff(variant, variant)
