"""Keyed recon.spark.diff on a real local Spark: the CLI's keyed answer
(categories, duplicate and NULL keys, tolerances, the evidence) on random
pairs with the digests in the JVM and in Python, and seed 004's hash-diff
job shown wrong where recon is right."""

from __future__ import annotations

import decimal
import random
from collections import Counter
from functools import reduce

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from conftest import cli_report
from test_spark import PATHS, spark  # noqa: F401 (the module's Spark session)

import recon
import recon.spark

# What the keyed report says, top level and under "keyed", that must be
# the CLI's exactly.
TOP = ("exact_match", "source_rows", "target_rows", "source_only_rows", "target_only_rows",
       "matched_keys", "value_mismatch", "missing_in_target", "missing_in_source",
       "duplicate_keys", "null_keys", "column_mismatches", "tolerance_matches")
DETAIL = ("null_key_rows", "duplicate_key_rows", "null_key_unmatched",
          "keys_matched_within_tolerance", "tolerance_matches_by_column", "max_abs_diff",
          "unattributed_changes")
EVIDENCE = ("changed", "missing_in_target", "missing_in_source")


def _rows(table: pa.Table) -> Counter:
    def norm(v):
        if isinstance(v, float) and v != v:
            return "NaN"
        if isinstance(v, list):
            return tuple(norm(x) for x in v)
        if isinstance(v, dict):
            return tuple((k, norm(x)) for k, x in v.items())
        return v
    return Counter(tuple((k, norm(v)) for k, v in r.items()) for r in table.to_pylist())


def _keyed_pair(seed: int):
    """A random keyed pair: keys from a small range (so some repeat) with
    NULLs, then planted deletes, inserts, changed values, small numeric
    changes (for tolerances) and extra copies."""
    rng = random.Random(seed)
    n = rng.randrange(0, 200)

    def row():
        return (
            rng.choice([None] + list(range(60))),
            rng.choice([None, "", "a", "b", "a longer string value"]),
            rng.choice([None, 0.0, 1.5, 2.25, 100.0]),
        )

    src = [row() for _ in range(n)]
    tgt = list(src)
    for _ in range(rng.randrange(0, 8)):
        what = rng.randrange(5)
        if what == 0 and tgt:
            tgt.pop(rng.randrange(len(tgt)))
        elif what == 1:
            tgt.append(row())
        elif what == 2 and tgt:
            i = rng.randrange(len(tgt))
            tgt[i] = (tgt[i][0], rng.choice(["changed", None, "a"]), tgt[i][2])
        elif what == 3 and tgt:
            i = rng.randrange(len(tgt))
            x = tgt[i][2]
            tgt[i] = (tgt[i][0], tgt[i][1], None if x is None else x + rng.choice([0.005, 3.0]))
        elif what == 4 and src:
            tgt.append(rng.choice(src))
    rng.shuffle(tgt)
    schema = pa.schema([("k", pa.int64()), ("s", pa.string()), ("x", pa.float64())])

    def table(rows):
        return pa.table({name: [r[i] for r in rows] for i, name in enumerate(schema.names)},
                        schema=schema)
    return table(src), table(tgt)


def _check_keyed_against_cli(spark, tmp_path, a: pa.Table, b: pa.Table, flags, **kw):
    sp, tp = tmp_path / "s.parquet", tmp_path / "t.parquet"
    pq.write_table(a, sp, row_group_size=50)
    pq.write_table(b, tp, row_group_size=50)
    want, out = cli_report(sp, tp, *flags, out_dir=tmp_path)
    d = recon.spark.diff(spark.read.parquet(str(sp)), spark.read.parquet(str(tp)), **kw)
    got = d.report
    for field in TOP:
        assert got.get(field) == want.get(field), field
    for field in DETAIL:
        assert got["keyed"][field] == want["keyed"][field], field
    assert d.exact_match == want["exact_match"]
    for name in EVIDENCE:
        spark_rows = _rows(getattr(d, name)().toArrow())
        cli_rows = _rows(pq.read_table(out / f"{name}.parquet"))
        assert spark_rows == cli_rows, name
    for side in ("source", "target"):
        for kind in ("duplicate_keys", "null_keys"):
            spark_rows = _rows(getattr(d, kind)(side).toArrow())
            cli_rows = _rows(pq.read_table(out / f"{kind}_{side}_only.parquet"))
            assert spark_rows == cli_rows, (kind, side)
    return d


@pytest.mark.parametrize("digests", PATHS)
@pytest.mark.parametrize("seed", range(10))
def test_keyed_random_pairs_give_the_clis_answer(spark, tmp_path, seed, digests):
    a, b = _keyed_pair(seed)
    flags, kw = ["--key", "k"], {"key": "k"}
    if seed % 2:
        flags += ["--tolerance", "x=0.01"]
        kw["tolerance"] = {"x": 0.01}
    # Few buckets: agreeing and differing buckets both hold duplicated
    # and NULL keys.
    d = _check_keyed_against_cli(spark, tmp_path, a, b, flags, digests=digests,
                                 buckets=[2, 16, 4096][seed % 3], **kw)
    assert d.report["settings"]["digests"] == digests


@pytest.mark.parametrize("digests", PATHS)
def test_keyed_pair_with_a_two_column_key_and_samples_of_agreeing_duplicates(
        spark, tmp_path, digests):
    rows = [(i % 7, i % 3, f"v{i % 5}") for i in range(120)] + [(None, 1, "n")] * 3
    a = pa.table({"a": [r[0] for r in rows], "b": [r[1] for r in rows],
                  "v": [r[2] for r in rows]})
    changed = [(r[0], r[1], "x" if i == 10 else r[2]) for i, r in enumerate(rows)]
    b = pa.table({"a": [r[0] for r in changed], "b": [r[1] for r in changed],
                  "v": [r[2] for r in changed]})
    d = _check_keyed_against_cli(spark, tmp_path, a, b, ["--key", "a,b", "--sample", "3"],
                                 key=["a", "b"], sample=3, buckets=64, digests=digests)
    assert d.report["duplicate_keys"] > 3
    assert len(d.report["keyed"]["duplicate_key_samples"]) == 3


@pytest.mark.parametrize("digests", PATHS)
def test_a_matching_keyed_pair_keeps_no_rows(spark, tmp_path, digests):
    a, _ = _keyed_pair(7)
    path = tmp_path / "same.parquet"
    pq.write_table(a, path)
    df = spark.read.parquet(str(path))
    want, _ = cli_report(path, path, "--key", "k", out_dir=tmp_path)
    # Without samples of duplicated keys to show, nothing is read again.
    d = recon.spark.diff(df, df, key="k", sample=0, digests=digests)
    assert d.exact_match
    assert d.report["settings"]["passes"] == 1
    assert d.report["settings"]["second_pass"] is None
    for field in ("matched_keys", "duplicate_keys", "null_keys"):
        assert d.report[field] == want[field], field
    assert want["duplicate_keys"] > 0 and want["null_keys"] > 0
    # With them, only their rows are.
    d = recon.spark.diff(df, df, key="k", sample=2, digests=digests)
    shown = d.report["keyed"]["duplicate_key_samples"]
    assert len(shown) == 2
    assert d.report["settings"]["second_pass"]["rows_read"] == \
        sum(s["source_count"] + s["target_count"] for s in shown)


@pytest.mark.parametrize("digests", PATHS)
def test_only_the_differing_keys_rows_reach_the_driver(spark, tmp_path, digests):
    # Two buckets, so each differing bucket holds ~1000 keys: only the
    # changed key's two rows, the missing key's and the new key's are kept.
    n = 2000
    a = pa.table({"k": list(range(n)), "v": [f"v{i}" for i in range(n)]})
    b = pa.table({"k": list(range(1, n)) + [n + 5],
                  "v": ["changed" if i == 7 else f"v{i}" for i in range(1, n)] + ["new"]})
    d = _check_keyed_against_cli(spark, tmp_path, a, b, ["--key", "k"], key="k", buckets=2,
                                 digests=digests)
    assert (d.report["value_mismatch"], d.report["missing_in_target"],
            d.report["missing_in_source"], d.report["matched_keys"]) == (1, 1, 1, n - 2)
    assert d.report["settings"]["second_pass"]["rows_read"] == 4


@pytest.mark.parametrize("digests", PATHS)
def test_a_key_widened_between_the_sides_shares_a_bucket(spark, tmp_path, digests):
    # The key is an int on one side and a bigint on the other (a widening
    # the plan accepts without a cast): the same values to recon. Both
    # bucketings send a key to one bucket whatever its width (recon's key
    # digest in the JVM, Spark's hash of the value as a long in Python), so
    # the buckets agree and nothing is read again.
    n = 300
    a = pa.table({"k": pa.array(range(n), pa.int32()), "v": [f"v{i}" for i in range(n)]})
    b = pa.table({"k": pa.array(range(n), pa.int64()), "v": [f"v{i}" for i in range(n)]})
    d = _check_keyed_against_cli(spark, tmp_path, a, b, ["--key", "k"], key="k", sample=0,
                                 buckets=64, digests=digests)
    assert d.exact_match and d.report["matched_keys"] == n
    assert d.report["settings"]["passes"] == 1


def test_keyed_refusals_name_the_key_column(spark):
    a = spark.sql("SELECT 1 AS id, ' x' AS s, named_struct('p', 1) AS st")
    with pytest.raises(recon.UsageError, match='key column "s" is converted'):
        recon.spark.diff(a, a, key="s", trim="s")
    with pytest.raises(recon.UsageError, match='key column "st" is nested'):
        recon.spark.diff(a, a, key="st")
    with pytest.raises(recon.UsageError, match="not a compared column"):
        recon.spark.diff(a, a, key="nope")
    collated = spark.sql("SELECT 'a' COLLATE UTF8_LCASE AS c, 1 AS v")
    with pytest.raises(recon.UsageError, match="'c' of the source is a string collate"):
        recon.spark.diff(collated, collated, key="c")
    with pytest.raises(recon.UsageError, match="pass key="):
        recon.spark.diff(a, a, tolerance={"id": 1})
    with pytest.raises(recon.UsageError, match="keyed"):
        recon.spark.diff(a, a, key="id").source_only()


# ------------------------------------------------------ seed 004's hash-diff job

def _seed004(source, target, cols, key):
    """Seed 004's job exactly as written there: sha2 over concat_ws("|")
    of each column cast to string with a "<NULL>" sentinel, a full outer
    join on the key, and the three categories."""
    from pyspark.sql import functions as F

    def add_row_hash(df, cols, key_col):
        concat_expr = F.concat_ws(
            "|", *[F.coalesce(F.col(c).cast("string"), F.lit("<NULL>")) for c in cols]
        )
        return df.select(key_col, F.sha2(concat_expr, 256).alias("row_hash"))

    source_h = add_row_hash(source, cols, key)
    target_h = add_row_hash(target, cols, key)
    return (
        source_h.withColumnRenamed("row_hash", "source_hash")
        .join(target_h.withColumnRenamed("row_hash", "target_hash"), on=key, how="full_outer")
        .withColumn(
            "diff_type",
            F.when(F.col("source_hash").isNull(), "missing_in_source")
            .when(F.col("target_hash").isNull(), "missing_in_target")
            .when(F.col("source_hash") != F.col("target_hash"), "value_mismatch")
            .otherwise("match"),
        )
        .filter(F.col("diff_type") != "match")
    )


@pytest.mark.parametrize("digests", PATHS)
def test_seed_004s_four_defects_are_recons_right_answers(spark, tmp_path, digests):
    schema = pa.schema([("id", pa.int64()), ("a", pa.string()), ("b", pa.string())])
    source = pa.table({"id": [1, 2, 3, 3, 4], "a": [None, "x|y", "c", "c", "d"],
                       "b": ["q", "z", "c", "c", "d"]}, schema=schema)
    target = pa.table({"id": [1, 2, 3, 4], "a": ["<NULL>", "x", "c", "d"],
                       "b": ["q", "y|z", "c", "d"]}, schema=schema)
    src, tgt = spark.createDataFrame(source), spark.createDataFrame(target)
    # Seed 004 finds nothing: the NULL sentinel equals the string, the
    # separator moves between columns, and the duplicated key's two source
    # rows both join the target's one.
    assert _seed004(src, tgt, ["a", "b"], "id").count() == 0
    d = _check_keyed_against_cli(spark, tmp_path, source, target, ["--key", "id"], key="id",
                                 digests=digests)
    assert not d.exact_match
    assert d.report["value_mismatch"] == 2
    assert d.report["column_mismatches"] == {"a": 2, "b": 1}
    assert sorted(r["id"] for r in d.changed().collect()) == [1, 2]
    # The lost copy of key 3: one source row the target lacks.
    assert d.report["duplicate_keys"] == 1
    assert d.report["keyed"]["duplicate_key_rows"]["source_only"]["rows"] == 1
    assert d.report["keyed"]["duplicate_key_rows"]["target_only"]["rows"] == 0
    assert [r["id"] for r in d.duplicate_keys("source").collect()] == [3]

    # A migration that changed a decimal's scale: seed 004 casts to text,
    # so 1.10 is not 1.1 and every row mismatches; the values are equal.
    s = pa.table({"id": [1, 2], "amount": pa.array([decimal.Decimal("1.10"),
                                                    decimal.Decimal("2.00")],
                                                   pa.decimal128(10, 2))})
    t = pa.table({"id": [1, 2], "amount": pa.array([decimal.Decimal("1.1"),
                                                    decimal.Decimal("2.0")],
                                                   pa.decimal128(10, 1))})
    src, tgt = spark.createDataFrame(s), spark.createDataFrame(t)
    assert _seed004(src, tgt, ["amount"], "id").count() == 2
    d = recon.spark.diff(src, tgt, key="id", digests=digests)
    assert d.exact_match
    assert d.report["matched_keys"] == 2


def test_seed_004s_job_and_recon_agree_where_the_job_is_right(spark):
    # Guards the copy of the job above: on a plain drift it reports what
    # recon reports.
    src = spark.sql("SELECT * FROM VALUES (1, 'a'), (2, 'b'), (3, 'c') AS t(id, v)")
    tgt = spark.sql("SELECT * FROM VALUES (1, 'a'), (2, 'B'), (4, 'd') AS t(id, v)")
    job = {r["id"]: r["diff_type"] for r in _seed004(src, tgt, ["v"], "id").collect()}
    assert job == {2: "value_mismatch", 3: "missing_in_target", 4: "missing_in_source"}
    d = recon.spark.diff(src, tgt, key="id")
    assert (d.report["value_mismatch"], d.report["missing_in_target"],
            d.report["missing_in_source"]) == (1, 1, 1)
    assert reduce(lambda n, _: n + 1, d.changed().collect(), 0) == 1
