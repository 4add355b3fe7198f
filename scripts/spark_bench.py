"""Times recon.spark against Spark's own ways of diffing, on one local
Spark session, with alternating runs: the figures in docs/spark.md.

    python scripts/spark_bench.py bench-data/10000000 [--rounds 2] [--datacompy KEY]
        [--keyed KEY[,KEY...]] [--only keyed|keyless] [--skip TEXT]

Needs a venv with pyspark and a release build of the package with its jar
(scripts/build-jar.sh, then pip install ./python). Each case runs on
freshly read DataFrames (no caching between cases), on local[2] unless
--master says otherwise; recon.spark.diff runs with each digest path.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("pair", help="a directory with source.parquet and target.parquet")
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--master", default="local[2]")
    ap.add_argument("--datacompy", metavar="KEY", help="also time datacompy's Spark compare")
    ap.add_argument("--keyed", metavar="KEYS",
                    help="also time keyed diffs on these columns: recon.spark.diff(key=...) "
                         "against seed 004's hash-diff job and a null-safe full outer join")
    ap.add_argument("--only", choices=["keyed", "keyless"], help="time only these cases")
    ap.add_argument("--skip", action="append", default=[], metavar="TEXT",
                    help="leave out the cases whose name holds TEXT (repeatable), such as "
                         "'Python digests' with a dev-profile wheel, whose Rust is unoptimised")
    args = ap.parse_args()

    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    from pyspark.sql import SparkSession

    import recon.spark

    spark = (SparkSession.builder.master(args.master)
             .config("spark.ui.enabled", "false")
             .config("spark.driver.memory", "8g")
             .config("spark.sql.shuffle.partitions", "8")
             .getOrCreate())
    spark.sparkContext.setLogLevel("ERROR")
    src = os.path.join(args.pair, "source.parquet")
    tgt = os.path.join(args.pair, "target.parquet")

    def read(path):
        return spark.read.parquet(path)

    def scan_both():
        # The floor of a matching pair: both tables through mapInArrow,
        # doing nothing with the batches.
        def nothing(batches):
            import pyarrow as pa
            n = 0
            for b in batches:
                n += b.num_rows
            yield pa.RecordBatch.from_pydict({"n": [n]})
        return sum(r.n for df in (read(src), read(tgt))
                   for r in df.mapInArrow(nothing, "n long").collect())

    def jvm_scan_hash():
        # What Spark alone pays to read and hash both tables (no Python).
        from pyspark.sql import functions as F
        return sum(df.select(F.sum(F.xxhash64(*df.columns) % 1000)).collect()[0][0]
                   for df in (read(src), read(tgt)))

    def recon_drift(digests):
        def run():
            d = recon.spark.diff(read(src), read(tgt), digests=digests)
            assert d.report["settings"]["digests"] == digests
            return (d.source_only_rows, d.target_only_rows,
                    d.report["settings"]["second_pass"], d.report["phase_seconds"])
        return run

    def recon_match(digests):
        def run():
            d = recon.spark.diff(read(src), read(src), digests=digests)
            assert d.exact_match and d.report["settings"]["digests"] == digests
            return d.report["settings"]["passes"]
        return run

    def except_all():
        a, b = read(src), read(tgt)
        return (a.exceptAll(b).count(), b.exceptAll(a).count())

    def fingerprint(digests):
        def run():
            return recon.spark.fingerprint(read(src), digests=digests).rows
        return run

    def jvm_hash_source():
        # What Spark alone pays to read and hash the source (fingerprint's floor).
        from pyspark.sql import functions as F
        df = read(src)
        return df.select(F.sum(F.xxhash64(*df.columns) % 1000)).collect()[0][0]

    cases = {
        "recon.spark.diff, drifting pair, JVM digests": recon_drift("jvm"),
        "recon.spark.diff, drifting pair, Python digests": recon_drift("python"),
        "exceptAll both ways, drifting pair": except_all,
        "recon.spark.diff, matching pair, JVM digests": recon_match("jvm"),
        "recon.spark.diff, matching pair, Python digests": recon_match("python"),
        "scan both tables through mapInArrow": scan_both,
        "recon.spark.fingerprint, one table, JVM digests": fingerprint("jvm"),
        "recon.spark.fingerprint, one table, Python digests": fingerprint("python"),
        "Spark alone: read and xxhash64 both tables": jvm_scan_hash,
        "Spark alone: read and xxhash64 the source": jvm_hash_source,
    }
    if args.keyed:
        keys = args.keyed.split(",")

        def recon_keyed(digests):
            def run():
                d = recon.spark.diff(read(src), read(tgt), key=keys, digests=digests)
                assert d.report["settings"]["digests"] == digests
                r = d.report
                return (r["value_mismatch"], r["missing_in_target"], r["missing_in_source"],
                        r["duplicate_keys"], r["settings"]["second_pass"])
            return run

        def seed004():
            # Seed 004's job as written there (sha2 over concat_ws of every
            # column cast to string, a full outer join on the key), counted.
            from pyspark.sql import functions as F
            a, b = read(src), read(tgt)
            cols = [c for c in a.columns if c not in keys]

            def add_row_hash(df):
                concat_expr = F.concat_ws(
                    "|", *[F.coalesce(F.col(c).cast("string"), F.lit("<NULL>")) for c in cols])
                return df.select(*keys, F.sha2(concat_expr, 256).alias("row_hash"))
            diff = (add_row_hash(a).withColumnRenamed("row_hash", "source_hash")
                    .join(add_row_hash(b).withColumnRenamed("row_hash", "target_hash"),
                          on=keys, how="full_outer")
                    .withColumn("diff_type",
                                F.when(F.col("source_hash").isNull(), "missing_in_source")
                                .when(F.col("target_hash").isNull(), "missing_in_target")
                                .when(F.col("source_hash") != F.col("target_hash"),
                                      "value_mismatch")
                                .otherwise("match"))
                    .filter(F.col("diff_type") != "match"))
            return sorted((r["diff_type"], r["count"])
                          for r in diff.groupBy("diff_type").count().collect())

        def null_safe_join():
            # Every column compared null-safely after a full outer join.
            from functools import reduce
            from pyspark.sql import functions as F
            a, b = read(src).alias("s"), read(tgt).alias("t")
            on = reduce(lambda x, y: x & y,
                        [F.col(f"s.{k}").eqNullSafe(F.col(f"t.{k}")) for k in keys])
            j = a.join(b, on, "full_outer")
            same = reduce(lambda x, y: x & y,
                          [F.col(f"s.{c}").eqNullSafe(F.col(f"t.{c}"))
                           for c in a.columns if c not in keys])
            missing_t = F.col(f"t.{keys[0]}").isNull()
            missing_s = F.col(f"s.{keys[0]}").isNull()
            return j.where(missing_t | missing_s | ~same).count()

        cases.update({
            "recon.spark.diff(key=...), drifting pair, JVM digests": recon_keyed("jvm"),
            "recon.spark.diff(key=...), drifting pair, Python digests": recon_keyed("python"),
            "seed 004's job (sha2 + concat_ws + full outer join)": seed004,
            "null-safe full outer join comparing every column": null_safe_join,
        })
    if args.only == "keyed":
        cases = {k: v for k, v in cases.items() if "key=" in k or "join" in k}
    elif args.only == "keyless":
        cases = {k: v for k, v in cases.items() if not ("key=" in k or "join" in k)}
    cases = {k: v for k, v in cases.items() if not any(t in k for t in args.skip)}
    if args.datacompy:
        def datacompy_case():
            from datacompy.spark import SparkSQLCompare
            try:
                c = SparkSQLCompare(spark, read(src), read(tgt), join_columns=[args.datacompy])
                return c.matches()
            except Exception as e:  # its failures are a result too
                return f"failed: {type(e).__name__}: {str(e).splitlines()[0][:160]}"
        cases["datacompy SparkSQLCompare, drifting pair"] = datacompy_case

    times = {name: [] for name in cases}
    for r in range(args.rounds):
        for name, case in cases.items():
            if name.startswith("datacompy") and r > 0:
                continue  # one run: it is the slowest by far
            t = time.perf_counter()
            out = case()
            times[name].append(time.perf_counter() - t)
            print(f"round {r + 1}: {name}: {times[name][-1]:.1f} s -> {out}", flush=True)
    print()
    print("| case | median s | runs |")
    print("|---|---|---|")
    for name, ts in times.items():
        print(f"| {name} | {statistics.median(ts):.1f} | {len(ts)} |")
    spark.stop()


if __name__ == "__main__":
    main()
