"""recon's JVM digest (jvm/, python/recon/jars/recon-spark.jar) against the
Rust digest, on a real local Spark: every supported type, random rows, three
session time zones, ANSI on and off. The oracle is the Rust extension's own
second pass (the digests ``recon.spark.diff`` computes inside mapInArrow).

The jar is built by this session (scripts/build-jar.sh) unless it exists and
is newer than its sources."""

from __future__ import annotations

import datetime as dt
import decimal
import os
import random
import struct
import subprocess
import sys
from pathlib import Path

import pyarrow as pa
import pytest

# Not an import-or-skip: pyspark and xxhash are in requirements-test.txt.
import xxhash
from pyspark.errors import AnalysisException
from pyspark.sql import SparkSession
from pyspark.sql import functions as F
from pyspark.sql import types as T

import recon
import recon.spark
from recon import _recon
from recon._settings import settings as _settings

REPO = Path(__file__).resolve().parents[2]
JAR = REPO / "python" / "recon" / "jars" / "recon-spark.jar"
SOURCES = [*sorted((REPO / "jvm" / "src").rglob("*.java")), REPO / "scripts" / "build-jar.sh"]
M64 = (1 << 64) - 1

# The digest's name among the functions a query may show, and the magic
# method's call in the generated code.
DIGEST_CLASS = "dev.recon.spark.DigestFunction"


@pytest.fixture(scope="session")
def recon_jar() -> Path:
    newest = max(p.stat().st_mtime for p in SOURCES)
    if not JAR.exists() or JAR.stat().st_mtime < newest:
        env = dict(os.environ, PYTHON=sys.executable)
        p = subprocess.run(["bash", str(REPO / "scripts" / "build-jar.sh")], cwd=REPO, env=env,
                           capture_output=True, text=True)
        assert p.returncode == 0, f"scripts/build-jar.sh failed:\n{p.stdout}\n{p.stderr}"
    assert JAR.exists() and JAR.stat().st_mtime >= newest
    return JAR


@pytest.fixture(scope="module")
def spark(recon_jar):
    os.environ["PYSPARK_PYTHON"] = sys.executable
    session = (SparkSession.builder.master("local[2]")
               .appName("recon-jvm-tests")
               .config("spark.ui.enabled", "false")
               .config("spark.sql.shuffle.partitions", "4")
               .config("spark.driver.bindAddress", "127.0.0.1")
               .config("spark.driver.host", "127.0.0.1")
               # A whole-stage codegen compile failure is an error here, not
               # a silent fallback to interpreted evaluation.
               .config("spark.sql.codegen.fallback", "false")
               # TIME columns (off by default in Spark 4.3), to test them too.
               .config("spark.sql.timeType.enabled", "true")
               .getOrCreate())
    session.sparkContext.setLogLevel("ERROR")
    session.sql(f"ADD JAR '{recon_jar}'")
    session.conf.set("spark.sql.catalog.recon", "dev.recon.spark.ReconCatalog")
    yield session
    session.stop()


@pytest.fixture()
def session_conf(spark):
    """Sets session options for one test, and unsets them after it."""
    changed = []

    def put(key: str, value: str) -> None:
        spark.conf.set(key, value)
        changed.append(key)

    yield put
    for key in changed:
        spark.conf.unset(key)


def jvm_digest(*cols):
    return F.call_function("recon.digest", F.struct(*cols))


def _le(b: bytes) -> int:
    assert len(b) == 16
    return int.from_bytes(b, "little")


# ---------------------------------------------------------------- the oracle

def rust_digests(df) -> dict:
    """Rust's digest of every row of ``df`` (its first column a unique row
    id, compared like any other column), as ``{id: digest}``: the extension
    plans ``df`` against an empty target, so every bucket differs and its
    second pass keeps every row with its digest."""
    name = df.columns[0]
    schema = recon.spark.digest_schema(df)
    js = _settings({})
    src, tgt = ("source", schema), ("target", schema)
    bits = 1
    with_bucket = df.select("*", F.lit(0).cast("int").alias("__recon_bucket"))

    def pass1(batches):
        plan = _recon.spark_plan_pair(src, tgt, js, None)
        sums = plan.bucket_sums("source", batches, bits)
        yield pa.RecordBatch.from_pydict({"sums": pa.array([sums], pa.binary())})

    plan = _recon.spark_plan_pair(src, tgt, js, None)
    sums = with_bucket.mapInArrow(pass1, "sums binary").toArrow().column("sums").to_pylist()
    cmp = plan.compare(sums, [], bits)
    selector = cmp.selector()

    def pass2(batches):
        plan = _recon.spark_plan_pair(src, tgt, js, None)
        d = plan.digester("source", selector)
        for batch in batches:
            kept = d.select(batch)
            if kept is not None:
                yield pa.RecordBatch.from_arrays(
                    [kept.column(0), kept.column("__recon_digest_hi"), kept.column("__recon_digest_lo")],
                    names=["id", "hi", "lo"])

    id_type = df.schema[name].dataType.simpleString()
    rows = with_bucket.mapInArrow(pass2, f"id {id_type}, hi bigint, lo bigint").toArrow().to_pylist()
    out = {r["id"]: ((r["hi"] & M64) << 64) | (r["lo"] & M64) for r in rows}
    assert len(out) == len(rows) == df.count(), "the oracle must digest every row once"
    return out


def jvm_digests(df) -> dict:
    rows = df.select(df.columns[0], jvm_digest(*df.columns).alias("d")).collect()
    return {r[0]: _le(r[1]) for r in rows}


def assert_same_digests(df) -> int:
    want = rust_digests(df)
    got = jvm_digests(df)
    assert got.keys() == want.keys()
    bad = [k for k in want if got[k] != want[k]]
    if bad:
        first = df.where(F.col(df.columns[0]).isin(bad[:3])).collect()
        pytest.fail(f"{len(bad)} of {len(want)} rows digest differently in the JVM; first: {first}")
    return len(want)


# ---------------------------------------------------------------- random tables

def _nan(bits: int) -> float:
    return struct.unpack("<d", struct.pack("<Q", bits))[0]


NAN_PAYLOADS = [float("nan"), _nan(0x7ff0000000000001), _nan(0xfff8000000000123),
                _nan(0x7ff80000deadbeef), _nan(0xffffffffffffffff)]
STRINGS = ["", "a", "ab", "north", "é", "日本語テキスト", "🎉 party", "a\x00b", "x" * 14, "y" * 15,
           "a longer string value", "ü" * 130, "long " * 60, "z" * 241]


def _string(rng):
    r = rng.random()
    if r < 0.5:
        return rng.choice(STRINGS)
    n = rng.choice([0, 1, 5, 13, 14, 15, 16, 30, 200, 239, 240, 241, 500, 1500])
    alphabet = "abcXYZ019 -_é日🎉\u0301"
    return "".join(rng.choice(alphabet) for _ in range(n))


def _decimal(rng, precision: int, scale: int):
    digits = rng.randrange(0, precision + 1)
    m = rng.randrange(0, 10 ** digits) if digits else 0
    if rng.random() < 0.3:  # trailing zeros
        zeros = rng.randrange(0, min(scale, precision) + 1)
        m = (m // 10 ** zeros) * 10 ** zeros
    if rng.random() < 0.1:
        m = 10 ** precision - 1  # the largest value
    if rng.random() < 0.5:
        m = -m
    # Exactly: the default context would round to 28 digits.
    return decimal.Decimal(m).scaleb(-scale, context=decimal.Context(prec=100))


def _micros_datetime(rng, naive: bool):
    seconds = rng.randrange(-5_000_000_000, 5_000_000_000)  # about 1811..2128
    if rng.random() < 0.2:
        seconds = rng.randrange(-86400 * 3, 86400 * 3)  # around the epoch
    micros = rng.choice([0, 1, 999_999, 500_000, rng.randrange(1_000_000)])
    base = dt.datetime(1970, 1, 1) + dt.timedelta(seconds=seconds, microseconds=micros)
    return base if naive else base.replace(tzinfo=dt.timezone.utc)


SCHEMA = T.StructType([
    T.StructField("id", T.LongType(), False),
    T.StructField("b", T.ByteType()),
    T.StructField("sh", T.ShortType()),
    T.StructField("i", T.IntegerType()),
    T.StructField("l", T.LongType()),
    T.StructField("f", T.FloatType()),
    T.StructField("d", T.DoubleType()),
    T.StructField("dec_s", T.DecimalType(10, 2)),
    T.StructField("dec_18", T.DecimalType(18, 6)),
    T.StructField("dec_38", T.DecimalType(38, 10)),
    T.StructField("dec_38_0", T.DecimalType(38, 0)),
    T.StructField("dec_19", T.DecimalType(19, 19)),
    T.StructField("s", T.StringType()),
    T.StructField("bin", T.BinaryType()),
    T.StructField("flag", T.BooleanType()),
    T.StructField("day", T.DateType()),
    T.StructField("ts", T.TimestampType()),
    T.StructField("ntz", T.TimestampNTZType()),
    T.StructField("span", T.DayTimeIntervalType()),
    T.StructField("span_hm", T.DayTimeIntervalType(T.DayTimeIntervalType.HOUR,
                                                    T.DayTimeIntervalType.SECOND)),
    T.StructField("tod", T.TimeType(6)),
    T.StructField("ints", T.ArrayType(T.IntegerType())),
    T.StructField("strs", T.ArrayType(T.StringType())),
    T.StructField("nested", T.ArrayType(T.ArrayType(T.LongType()))),
    T.StructField("st", T.StructType([
        T.StructField("z", T.StringType()),
        T.StructField("a", T.IntegerType()),
        T.StructField("É", T.DoubleType()),
        # UTF-8 byte order, not Java's UTF-16 order: U+FF21 sorts first in UTF-8.
        T.StructField("\U0001F600", T.IntegerType()),
        T.StructField("\uFF21", T.IntegerType()),
        T.StructField("m", T.ArrayType(T.DecimalType(38, 4))),
        T.StructField("B", T.StructType([T.StructField("y", T.DateType()),
                                         T.StructField("x", T.BooleanType())])),
    ])),
    T.StructField("mp", T.MapType(T.StringType(), T.IntegerType())),
    T.StructField("mp_arr", T.MapType(T.IntegerType(), T.ArrayType(T.StringType()))),
    T.StructField("structs", T.ArrayType(T.StructType([T.StructField("k", T.StringType()),
                                                         T.StructField("v", T.DoubleType())]))),
])


def _random_row(rng, rid: int) -> tuple:
    def maybe(v, p=0.12):
        return None if rng.random() < p else v

    def dbl():
        return rng.choice(NAN_PAYLOADS + [0.0, -0.0, float("inf"), float("-inf"), 1.5, 0.1,
                                          5e-324, 1.7976931348623157e308,
                                          rng.uniform(-1e6, 1e6), rng.random()])

    def ints():
        return [maybe(rng.randrange(-2**31, 2**31), 0.2) for _ in range(rng.randrange(0, 6))]

    def mp():
        keys = rng.sample(["a", "b", "c", "d", "é", "long key " * 5], rng.randrange(0, 6))
        return {k: maybe(rng.randrange(-1000, 1000), 0.2) for k in keys}

    return (
        rid,
        maybe(rng.randrange(-128, 128)),
        maybe(rng.choice([-32768, 32767, rng.randrange(-32768, 32768)])),
        maybe(rng.choice([-2**31, 2**31 - 1, -2, 0, rng.randrange(-2**31, 2**31)])),
        maybe(rng.choice([-2**63, 2**63 - 1, -1, rng.randrange(-2**63, 2**63)])),
        maybe(dbl()),
        maybe(dbl()),
        maybe(_decimal(rng, 10, 2)),
        maybe(_decimal(rng, 18, 6)),
        maybe(_decimal(rng, 38, 10)),
        maybe(_decimal(rng, 38, 0)),
        maybe(_decimal(rng, 19, 19)),
        maybe(_string(rng)),
        maybe(bytes(rng.randrange(256) for _ in range(rng.choice([0, 1, 13, 14, 15, 40, 300])))),
        maybe(rng.random() < 0.5),
        maybe(dt.date(1970, 1, 1) + dt.timedelta(days=rng.randrange(-80000, 80000))),
        maybe(_micros_datetime(rng, naive=False)),
        maybe(_micros_datetime(rng, naive=True)),
        maybe(dt.timedelta(microseconds=rng.randrange(-10**14, 10**14))),
        maybe(dt.timedelta(microseconds=rng.randrange(-10**11, 10**11))),
        maybe(dt.time(rng.randrange(24), rng.randrange(60), rng.randrange(60),
                      rng.choice([0, 1, 999999, rng.randrange(1000000)]))),
        maybe(ints()),
        maybe([maybe(_string(rng), 0.2) for _ in range(rng.randrange(0, 4))]),
        maybe([maybe([maybe(rng.randrange(-2**63, 2**63), 0.2) for _ in range(rng.randrange(0, 3))], 0.2)
               for _ in range(rng.randrange(0, 3))]),
        maybe((maybe(_string(rng)), maybe(rng.randrange(-100, 100)), maybe(dbl()),
               maybe(rng.randrange(-9, 9)), maybe(rng.randrange(-9, 9)),
               maybe([maybe(_decimal(rng, 38, 4), 0.2) for _ in range(rng.randrange(0, 3))]),
               maybe((maybe(dt.date(1969, 12, 31)), maybe(True))))),
        maybe(mp()),
        maybe({rng.randrange(-5, 5): maybe([maybe(_string(rng), 0.2)], 0.2)
               for _ in range(rng.randrange(0, 4))}),
        maybe([maybe((maybe(_string(rng)), maybe(dbl())), 0.2) for _ in range(rng.randrange(0, 3))]),
    )


def random_frame(spark, seed: int, n: int = 300, partitions: int = 3):
    rng = random.Random(seed)
    rows = [_random_row(rng, i) for i in range(n)]
    # Fixed rows: all-NULL, all-NULL inside, and the extremes together.
    rows.append((n,) + (None,) * (len(SCHEMA) - 1))
    df = spark.createDataFrame(rows, SCHEMA)
    return df.repartition(partitions) if partitions > 1 else df


# ---------------------------------------------------------------- tests

@pytest.mark.parametrize("zone", ["UTC", "America/Los_Angeles", "Asia/Kolkata"])
@pytest.mark.parametrize("ansi", ["true", "false"])
def test_jvm_digests_equal_the_rust_digests_row_by_row(spark, session_conf, zone, ansi):
    session_conf("spark.sql.session.timeZone", zone)
    session_conf("spark.sql.ansi.enabled", ansi)
    seed = ["UTC", "America/Los_Angeles", "Asia/Kolkata"].index(zone) * 2 + (ansi == "true")
    df = random_frame(spark, seed)
    assert assert_same_digests(df) == 301


def test_values_spark_computes_itself(spark, session_conf):
    """Values made by Spark's own expressions (casts, literals, collations,
    a NULL column) rather than converted from Python."""
    session_conf("spark.sql.session.timeZone", "America/Los_Angeles")
    df = spark.range(0, 200).select(
        F.col("id"),
        (F.col("id") * 7919 % 1000 - 500).cast("decimal(12,4)").alias("dec"),
        (F.col("id") / 7).cast("decimal(38,18)").alias("wide"),
        F.expr("timestamp_millis(id * 86400123 - 9000000000000)").alias("ts"),
        F.expr("cast(timestamp_millis(id * 3600001 - 100000000) as timestamp_ntz)").alias("ntz"),
        F.expr("date_add(date'1901-02-03', cast(id * 271 as int))").alias("day"),
        F.expr("make_dt_interval(cast(id as int) - 100, 3, 4, id * 1.000001)").alias("span"),
        F.expr("repeat(concat('ü', cast(id as string)), cast(id % 40 as int))").alias("s"),
        F.expr("collate(concat('Ab', cast(id as string)), 'UTF8_LCASE')").alias("collated"),
        F.expr("map_from_arrays(array('k', concat('x', cast(id as string))), array(id, null))").alias("mp"),
        F.expr("case id % 3 when 0 then cast('NaN' as float) when 1 then cast('-Infinity' as double)"
               " else -cast(0 as double) end").alias("special"),
        F.expr("named_struct('b', id, 'a', cast(null as string))").alias("st"),
        F.lit(None).alias("nothing"),
        F.expr("make_time(cast(id % 24 as int), 59, id * 0.000001)").alias("tod"),
    )
    assert assert_same_digests(df) == 200


def test_maps_in_another_storage_order_digest_alike(spark):
    """Spark keeps a map's entries in the order they were built (Python
    dicts arrive through a hash map, so they are built here in SQL)."""
    long_key = "'long key over sixteen bytes'"
    df = spark.sql(f"""
        SELECT 0 AS id, map_from_arrays(array('a', 'b', {long_key}, 'c'), array(1, 2, NULL, -3)) AS m
        UNION ALL
        SELECT 1, map_from_arrays(array('c', {long_key}, 'b', 'a'), array(-3, NULL, 2, 1))
        UNION ALL
        SELECT 2, map_concat(map('b', 2), map('a', 1, 'c', -3), map({long_key}, NULL))
        UNION ALL
        SELECT 3, map_from_arrays(array('a', 'b', {long_key}, 'c'), array(1, 2, NULL, 3))""")
    stored = [r[0] for r in df.orderBy("id").select(F.map_keys("m")).collect()]
    assert stored[0] != stored[1] != stored[2]  # really stored in other orders
    assert assert_same_digests(df) == 4
    words = [r[0] for r in df.orderBy("id").select(
        F.call_function("recon.value_words", F.struct("m"))).collect()]
    assert words[0] == words[1] == words[2] != words[3]


def test_binary_values_of_every_length_up_to_2100(spark):
    """Encodings from 2 to 2103 bytes: the permutation path up to 16 bytes,
    then XXH3-128 over every length class (17-128, 129-240, several
    stripes and 1 KiB blocks)."""
    rng = random.Random(2100)
    rows = [(n, bytes(rng.randrange(256) for _ in range(n)),
             "".join(rng.choice("aé日") for _ in range(n // 3))) for n in range(2101)]
    df = spark.createDataFrame(rows, "id bigint, b binary, s string")
    assert assert_same_digests(df) == 2101


def test_xxh3_equals_pythons_xxhash_for_every_length_up_to_2100(recon_jar, tmp_path):
    """The port itself, on raw inputs (recon never hashes fewer than 17
    bytes, but the port must be the whole function): the self-test class
    compiled against the jar, checking a file of Python xxhash vectors."""
    rng = random.Random(3)
    lines = []
    for n in range(2101):
        data = bytes(rng.randrange(256) for _ in range(n))
        lines.append(f"x{data.hex()} {xxhash.xxh3_128(data).hexdigest()}")
    vectors = tmp_path / "xxh3.txt"
    vectors.write_text("\n".join(lines) + "\n")
    jars = Path(__import__("pyspark").__file__).parent / "jars"
    classes = tmp_path / "classes"
    javac = subprocess.run(
        ["javac", "--release", "11", "-encoding", "UTF-8", "-cp", f"{recon_jar}:{jars}/*",
         "-d", str(classes), str(REPO / "jvm/src/test/java/dev/recon/spark/VectorsTest.java")],
        capture_output=True, text=True)
    assert javac.returncode == 0, javac.stderr
    run = subprocess.run(["java", "-cp", f"{classes}:{recon_jar}:{jars}/*",
                          "dev.recon.spark.VectorsTest", "--xxh3", str(vectors)],
                         capture_output=True, text=True)
    assert run.returncode == 0, run.stdout + run.stderr
    assert "0 mismatches" in run.stdout
    # Every one of the 2101 random inputs was checked.
    assert f"2101 xxh3 vectors from {vectors}" in run.stdout, run.stdout


def _q_inverse(d: int) -> int:
    """docs/encoding.md's Q undone: each step is invertible."""
    mod = 1 << 128
    m1 = 0xff51afd7ed558ccdc4ceb9fe1a85ec53
    m2 = 0xd6e8feb86659fd93a0761d6478bd642f
    x = d ^ (d >> 64)
    x = (x * pow(m2, -1, mod)) % mod
    x ^= x >> 64
    x = (x * pow(m1, -1, mod)) % mod
    x ^= x >> 64
    return x ^ 0xa4093822299f31d0082efa98ec4e6c89


def _splitmix(state: int):
    state = (state + 0x9e3779b97f4a7c15) & M64
    z = state
    z = ((z ^ (z >> 30)) * 0xbf58476d1ce4e5b9) & M64
    z = ((z ^ (z >> 27)) * 0x94d049bb133111eb) & M64
    return state, z ^ (z >> 31)


def _column0_value(d: int) -> int:
    """V_0 of a one-column row digest D = Q(T_0(V_0))."""
    acc = _q_inverse(d)
    s, a_hi = _splitmix(0x6a09e667f3bcc908)
    _, a_lo = _splitmix(s)
    s, b_hi = _splitmix(0xbb67ae8584caa73b)
    _, b_lo = _splitmix(s)
    b_hi, b_lo = b_hi | 1, b_lo | 1
    lo = ((acc & M64) * pow(b_lo, -1, 1 << 64) & M64) ^ a_lo
    hi = ((acc >> 64) * pow(b_hi, -1, 1 << 64) & M64) ^ a_hi
    return (hi << 64) | lo


def test_value_words_are_the_low_words_of_each_columns_value_digest(spark, session_conf):
    session_conf("spark.sql.session.timeZone", "Asia/Kolkata")
    df = random_frame(spark, 11, n=120)
    cols = df.columns[1:]
    singles = [jvm_digest(c).alias(f"d{k}") for k, c in enumerate(cols)]
    rows = df.select(F.call_function("recon.value_words", F.struct(*cols)).alias("w"),
                     *singles).collect()
    assert len(rows) == 121
    for r in rows:
        words = r["w"]
        assert len(words) == len(cols)
        for k in range(len(cols)):
            # Position-free: column k's word is its value digest's low half,
            # the same as when it is a table's only column.
            assert words[k] & M64 == _column0_value(_le(r[f"d{k}"])) & M64, cols[k]
    # The one-column digests are Rust's too, so the words rest on the oracle.
    assert assert_same_digests(df.select("id", "st")) == 121


def _name_order(names):
    return sorted(names, key=lambda n: n.encode("utf-8"))


@pytest.mark.parametrize("ansi", ["true", "false"])
def test_fingerprint_aggregate_equals_the_python_paths(spark, session_conf, ansi):
    session_conf("spark.sql.ansi.enabled", ansi)
    session_conf("spark.sql.session.timeZone", "America/Los_Angeles")
    df = random_frame(spark, 40 + (ansi == "true"), n=400).drop("id")
    # Duplicates count twice.
    df = df.unionAll(df.limit(50))
    want = recon.spark.fingerprint(df).to_dict()["total"]
    digest = jvm_digest(*_name_order(df.columns))
    got = df.select(F.call_function("recon.fingerprint", digest).alias("fp")).first()["fp"]
    assert got["rows"] == want["rows"] == 451
    assert f"{_le(got['sum']):032x}" == want["row_sum"]
    assert got["mix"] & M64 == want["row_mix"]
    # Grouped by bucket, then summed: the merge of partial fingerprints.
    parts = df.groupBy(F.call_function("recon.bucket", digest, F.lit(3)).alias("b")) \
        .agg(F.call_function("recon.fingerprint", digest).alias("fp")).collect()
    assert sum(p["fp"]["rows"] for p in parts) == 451
    assert f"{sum(_le(p['fp']['sum']) for p in parts) % (1 << 128):032x}" == want["row_sum"]
    assert sum(p["fp"]["mix"] for p in parts) & M64 == want["row_mix"]


def test_fingerprint_of_the_spec_demo(spark):
    df = spark.createDataFrame([("north", 100), ("south", 200), ("south", 200), (None, 50)],
                               "region string, amount bigint")
    fp = df.select(F.call_function("recon.fingerprint", jvm_digest("amount", "region"))).first()[0]
    assert fp["rows"] == 4
    assert f"{_le(fp['sum']):032x}" == "84708a5dfc250ab4c5770b5645e4ec10"
    assert fp["mix"] & M64 == 2252679656846208895
    # An empty table: zero rows, zero sums.
    empty = df.limit(0).select(F.call_function("recon.fingerprint", jvm_digest("amount", "region")))
    assert empty.first()[0] == (0, bytes(16), 0)


def test_bucket_is_the_top_bits_of_the_high_half(spark):
    df = random_frame(spark, 5, n=100)
    want = rust_digests(df)
    d = jvm_digest(*df.columns)
    rows = df.select("id", *[F.call_function("recon.bucket", d, F.lit(b)).alias(f"b{b}")
                             for b in (1, 12, 20)]).collect()
    for r in rows:
        hi = want[r["id"]] >> 64
        for b in (1, 12, 20):
            assert r[f"b{b}"] == hi >> (64 - b)
    for bits in (0, 21):
        with pytest.raises(Exception, match="bits must be 1 to 20"):
            df.select(F.call_function("recon.bucket", d, F.lit(bits))).collect()


def test_bucket_sums_of_a_null_bucket_use_the_digests_top_bits(spark):
    # recon.spark's keyless pass 1 passes a NULL bucket: the same sums as
    # each row placed in recon.bucket of its digest.
    df = random_frame(spark, 6, n=300)
    digests = F.call_function("recon.row_digests", F.struct(*df.columns)).alias("d")

    def sums(bucket):
        return df.select(digests, bucket.alias("b")).agg(F.call_function(
            "recon.bucket_sums", F.col("d"), F.col("b"), F.lit(5))).first()[0]
    got = sums(F.lit(None).cast("int"))
    assert got is not None
    assert got == sums(F.call_function("recon.bucket", jvm_digest(*df.columns), F.lit(5)))
    assert got != sums(F.lit(0))


@pytest.mark.parametrize("expr, kind", [
    ("interval '1' year", "interval year"),
    ("interval '1-2' year to month", "interval year to month"),
    ("make_interval(1, 2, 3, 4, 5, 6, 7.5)", "interval"),
    ("parse_json('{\"a\": 1}')", "variant"),
    ("array(interval '3' month)", "interval month"),
    ("map('k', parse_json('1'))", "variant"),
    ("named_struct('x', 1, 'y', make_interval(0, 1))", "interval"),
])
def test_types_the_rust_path_refuses_are_refused_at_bind_time(spark, expr, kind):
    df = spark.sql(f"SELECT 1 AS id, {expr} AS v")
    # The Python path refuses them too.
    with pytest.raises(recon.SchemaError):
        recon.spark.digest_schema(df)
    with pytest.raises(AnalysisException) as e:
        df.select(jvm_digest("id", "v")).collect()
    message = str(e.value).splitlines()[0]
    assert "recon cannot digest" in message and kind in message and "`v`" in message, message
    with pytest.raises(AnalysisException, match="recon cannot digest"):
        df.select(F.call_function("recon.value_words", F.struct("v"))).collect()


def test_wrong_arguments_are_refused(spark):
    df = spark.sql("SELECT 1 AS a, 'x' AS s")
    with pytest.raises(AnalysisException, match=r"recon\.digest\(struct\) cannot take"):
        df.select(F.call_function("recon.digest", F.col("a"))).collect()
    with pytest.raises(AnalysisException, match=r"recon\.fingerprint\(digest binary\) cannot take"):
        df.select(F.call_function("recon.fingerprint", F.col("s"))).collect()
    with pytest.raises(AnalysisException):
        df.select(F.call_function("recon.no_such_function", F.col("a"))).collect()


def _codegen(df) -> str:
    jvm = df.sparkSession._jvm
    return jvm.PythonSQLUtils.explainString(df._jdf.queryExecution(), "codegen")


def test_digest_runs_inside_whole_stage_codegen(spark):
    """The scalar functions compile into the stage's generated code as a
    direct call of their `invoke` method (Spark's magic method), not as an
    interpreted ApplyFunctionExpression; and with codegen fallback off (the
    module's session) a compile failure would fail the query."""
    # No shuffle, so the plan is not adaptive and its stages are known before it runs.
    df = random_frame(spark, 9, n=50, partitions=1)
    d = jvm_digest(*df.columns)
    q = df.select(d.alias("d"), F.call_function("recon.value_words", F.struct(*df.columns)).alias("w"),
                  F.call_function("recon.bucket", d, F.lit(12)).alias("b"))
    code = _codegen(q)
    assert "WholeStageCodegen" in code
    assert f"(({DIGEST_CLASS}) references[" in code and ").invoke(" in code, code[:3000]
    assert "((dev.recon.spark.ValueWordsFunction) references[" in code
    assert "((dev.recon.spark.BucketFunction) references[" in code
    assert "ApplyFunctionExpression" not in code
    assert "ApplyFunctionExpression" not in q._jdf.queryExecution().executedPlan().toString()
    assert len(q.collect()) == 51


def test_a_query_from_another_python_thread_needs_the_jar_class_loader(spark):
    """After ADD JAR only the thread that ran it sees the jar: a query from
    another Python thread (another JVM thread, PySpark pins them) fails to
    load the catalog or to compile its generated code (an error here, as
    codegen fallback is off; by default Spark silently runs it interpreted)
    until that thread's context class loader is the session's jar loader."""
    import threading

    results = {}

    def run(fix: bool, k: int):
        try:
            if fix:
                loader = spark._jsparkSession.sharedState().jarClassLoader()
                spark._jvm.java.lang.Thread.currentThread().setContextClassLoader(loader)
            # A query no other test compiled, so its code is generated here.
            df = spark.range(5 + k).select(jvm_digest(F.col("id") * (k + 17)).alias("d"))
            results[fix] = len(df.collect())
        except Exception as e:  # noqa: BLE001 - the error is the result
            results[fix] = e

    for k, fix in enumerate((False, True)):
        t = threading.Thread(target=run, args=(fix, k))
        t.start()
        t.join()
    assert isinstance(results[False], Exception), results
    assert results[True] == 6
