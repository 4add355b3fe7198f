#!/usr/bin/env python3
"""Side-by-side timing of recon and DuckDB on one generated pair.

    scripts/compare.sh ROWS [--threads 2] [--memory-limit 1GiB] [--runs 3] [--keyed order_id]

Runs each engine on the same files with the same thread count and memory
limit, alternating engines run by run (each DuckDB floor beside the recon
run divided by it, the order reversed every other run), and prints median
wall time, peak RSS (from /usr/bin/time, in GiB), recon's speedup over each
DuckDB formulation, and each recon run's ratio to its floor.
DuckDB is installed by compare.sh into scripts/.venv; it is not a test dependency.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)

# The floors: DuckDB reading and hashing every value, nothing else. Each
# recon run is divided by the floor that reads what it reads (the identical
# tables' run reads the source twice; a fingerprint reads it once).
FLOOR = "duckdb scan+hash floor"
FLOOR_TWICE = "duckdb scan+hash floor, source twice"
FLOOR_ONCE = "duckdb scan+hash floor, source once"
DUCK_QUERIES = {
    FLOOR: "SELECT sum(hash({cols})) FROM read_parquet('{s}') UNION ALL SELECT sum(hash({cols})) FROM read_parquet('{t}')",
    FLOOR_TWICE: "SELECT sum(hash({cols})) FROM read_parquet('{s}') UNION ALL SELECT sum(hash({cols})) FROM read_parquet('{s}')",
    FLOOR_ONCE: "SELECT count(*), sum(hash({cols})) FROM read_parquet('{s}')",
    "duckdb GROUP BY ALL + FULL JOIN (exact)": """
        WITH s AS (SELECT *, count(*) AS n FROM read_parquet('{s}') GROUP BY ALL),
             t AS (SELECT *, count(*) AS n FROM read_parquet('{t}') GROUP BY ALL)
        SELECT sum(abs(coalesce(s.n, 0) - coalesce(t.n, 0)))
        FROM s FULL JOIN t ON {join}""",
    "duckdb EXCEPT ALL both ways": """
        SELECT (SELECT count(*) FROM (SELECT * FROM read_parquet('{s}') EXCEPT ALL SELECT * FROM read_parquet('{t}'))),
               (SELECT count(*) FROM (SELECT * FROM read_parquet('{t}') EXCEPT ALL SELECT * FROM read_parquet('{s}')))""",
}

# Keyed mode's peer: the join on the key that datacompy-style tools and the
# seeds' PySpark job run. It fans duplicated keys out into equal pairs, so it
# misses a lost or gained duplicate copy; recon counts those.
DUCK_KEYED = {
    "duckdb FULL OUTER JOIN on the key, IS DISTINCT FROM per column": """
        SELECT count(*) FILTER (WHERE s.{k} IS NULL) AS missing_in_source,
               count(*) FILTER (WHERE t.{k} IS NULL) AS missing_in_target,
               count(*) FILTER (WHERE s.{k} IS NOT NULL AND t.{k} IS NOT NULL AND ({distinct})) AS changed
        FROM read_parquet('{s}') s FULL OUTER JOIN read_parquet('{t}') t ON s.{k} = t.{k}""",
}

COLUMNS = ["order_id", "customer_id", "store_id", "order_date", "amount", "discount",
           "created_at", "status", "region", "note", "quantity"]


def timed(cmd, env=None):
    """Runs cmd under /usr/bin/time -v; returns (seconds, peak_rss_bytes, stdout)."""
    with tempfile.NamedTemporaryFile(mode="r", suffix=".time") as tf:
        p = subprocess.run(["/usr/bin/time", "-v", "-o", tf.name] + cmd,
                           capture_output=True, text=True, env=env)
        if p.returncode not in (0, 1):
            sys.exit(f"command failed ({p.returncode}): {' '.join(cmd)}\n{p.stderr}")
        text = tf.read()
    secs, rss = None, None
    for line in text.splitlines():
        line = line.strip()
        if line.startswith("Elapsed (wall clock)"):
            parts = line.split()[-1].split(":")
            secs = sum(float(x) * 60 ** i for i, x in enumerate(reversed(parts)))
        if line.startswith("Maximum resident set size"):
            rss = int(line.split()[-1]) * 1024
    return secs, rss, p.stdout


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("dir")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--memory-limit", default="1GiB")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--skip", action="append", default=[],
                    help="substring of an engine name to skip (e.g. EXCEPT)")
    ap.add_argument("--worst-case", action="store_true",
                    help="also compare the source with a copy in which every row differs "
                         "(DIR/all_different.parquet, written by DuckDB on first use)")
    ap.add_argument("--baseline", metavar="BIN",
                    help="also time this recon binary (a build of an earlier commit), "
                         "alternating with target/release/recon, to compare before and after")
    ap.add_argument("--keyed", metavar="KEY",
                    help="compare keyed mode (recon diff --key KEY) with DuckDB's join on KEY")
    a = ap.parse_args()
    s = os.path.join(a.dir, "source.parquet")
    t = os.path.join(a.dir, "target.parquet")
    py = os.path.join(HERE, ".venv", "bin", "python")
    duck_limit = a.memory_limit.replace("GiB", "GB").replace("MiB", "MB")
    # recon variants: (extra args, compare the source with itself?), and
    # the floor each is divided by.
    recon_runs = {
        "recon diff (exact, evidence written)": ([], False),
        "recon diff --passes 1 (spill every row)": (["--passes", "1"], False),
        "recon diff, identical tables (source vs source)": ([], True),
        "recon fingerprint of the source": (None, None),
    }
    floor_of = {
        "recon diff, identical tables (source vs source)": FLOOR_TWICE,
        "recon fingerprint of the source": FLOOR_ONCE,
    }
    duck = DUCK_QUERIES
    if a.keyed:
        recon_runs = {
            f"recon diff --key {a.keyed} (exact, evidence written)": (["--key", a.keyed], False),
            "recon diff (keyless, same pair)": ([], False),
            f"recon diff --key {a.keyed}, identical tables": (["--key", a.keyed], True),
        }
        duck = DUCK_KEYED
    if a.worst_case:
        shifted = os.path.join(a.dir, "all_different.parquet")
        if not os.path.exists(shifted):
            # Every order_id moved out of the generator's range: no row matches.
            sql = (f"COPY (SELECT * REPLACE (order_id + 1000000000000 AS order_id) FROM read_parquet('{s}')) "
                   f"TO '{shifted}' (FORMAT parquet, ROW_GROUP_SIZE 500000)")
            subprocess.run([py, "-c", "import duckdb,sys; duckdb.connect().execute(sys.argv[1])", sql], check=True)
        recon_runs["recon diff, every row different (default)"] = ([], shifted)
        recon_runs["recon diff --passes 1, every row different"] = (["--passes", "1"], shifted)
        # What writing the evidence is measured against: the same rows (every
        # row of both tables) copied to one zstd Parquet file, same threads.
        duck = dict(duck)
        duck["duckdb COPY of both tables to Parquet (zstd), every row different"] = (
            "COPY (SELECT * FROM read_parquet('{s}') UNION ALL SELECT * FROM read_parquet('{w}')) "
            "TO '{out}/copy.parquet' (FORMAT parquet, COMPRESSION zstd)")
    current = os.path.join(ROOT, "target", "release", "recon")
    binary = {k: current for k in recon_runs}
    if a.baseline:
        # Each baseline run beside the current binary's.
        both = {}
        for k, v in recon_runs.items():
            both[k] = v
            both[f"[baseline] {k}"] = v
            binary[f"[baseline] {k}"] = os.path.abspath(a.baseline)
        recon_runs = both
    def floor_for(k):
        return floor_of.get(k.removeprefix("[baseline] "), FLOOR)

    engines = {k: None for k in recon_runs}
    engines.update(duck)
    engines = {k: v for k, v in engines.items() if not any(x in k for x in a.skip)}
    # Each floor runs right after the first recon run divided by it, so that
    # a pair sees the same machine: this host's speed drifts by 10-20% over
    # tens of seconds, which a ratio of medians taken minutes apart absorbs
    # as noise. Odd runs go in reverse order (floor first), so neither
    # engine always runs after the other.
    order = []
    for k in engines:
        if k in order:
            continue
        order.append(k)
        f = floor_for(k) if k in recon_runs else None
        if f in engines and f not in order:
            order.append(f)
    engines = {k: engines[k] for k in order}
    join = " AND ".join(f"s.{c} IS NOT DISTINCT FROM t.{c}" for c in COLUMNS)
    distinct = " OR ".join(f"s.{c} IS DISTINCT FROM t.{c}" for c in COLUMNS if c != a.keyed)
    results = {k: [] for k in engines}
    with tempfile.TemporaryDirectory() as out:
        for run in range(a.runs):
            for name, q in (list(engines.items())[::-1] if run % 2 else engines.items()):
                if q is None and recon_runs[name][0] is None:
                    cmd = [binary[name], "fingerprint", s, "--threads", str(a.threads),
                           "--output", os.path.join(out, "fingerprint.json")]
                elif q is None:
                    extra, same = recon_runs[name]
                    other = same if isinstance(same, str) else (s if same else t)
                    cmd = [binary[name], "diff", s, other,
                           "--threads", str(a.threads), "--memory-limit", a.memory_limit,
                           "--output", os.path.join(out, "evidence"), "--force", "--quiet"] + extra
                else:
                    sql = q.format(s=s, t=t, join=join, cols=', '.join(COLUMNS), k=a.keyed,
                                   distinct=distinct, out=out,
                                   w=os.path.join(a.dir, "all_different.parquet"))
                    code = ("import duckdb,sys; c=duckdb.connect(); "
                            f"c.execute(\"SET threads={a.threads}\"); "
                            f"c.execute(\"SET memory_limit='{duck_limit}'\"); "
                            "c.execute(\"SET preserve_insertion_order=false\"); "
                            "print(c.execute(sys.argv[1]).fetchall())")
                    cmd = [py, "-c", code, sql]
                secs, rss, _ = timed(cmd)
                results[name].append((secs, rss))
                how = ""
                if q is None and recon_runs[name][0] is not None:
                    # What the run did, from its own report.
                    with open(os.path.join(out, "evidence", "report.json")) as f:
                        r = json.load(f)
                    st = r.get("settings", {})
                    how = (f" [passes {st.get('passes')}, second pass "
                           f"{(st.get('second_pass') or {}).get('strategy', '-')}, "
                           f"{r.get('source_only_rows')}/{r.get('target_only_rows')} unmatched]")
                print(f"run {run + 1}: {name}: {secs:.2f} s, {rss / 2**30:.2f} GiB{how}", file=sys.stderr)
    recon_name = next(k for k in engines if k in recon_runs)
    med = {k: (statistics.median(x[0] for x in v), max(x[1] for x in v)) for k, v in results.items()}
    rt = med[recon_name][0]
    print(f"\npair: {a.dir}; threads {a.threads}; memory limit {a.memory_limit}; median of {a.runs} runs\n")
    print("| engine | median wall | peak RSS | recon speedup |")
    print("|---|---|---|---|")
    for k, (secs, rss) in med.items():
        ratio = "" if k == recon_name else f"{secs / rt:.2f}x"
        print(f"| {k} | {secs:.2f} s | {rss / 2**30:.2f} GiB | {ratio} |")
    if any(k.startswith(FLOOR) for k in med):
        print()
        for k in recon_runs:
            f = floor_for(k)
            if k in med and f in med:
                # Also the median of the run-by-run ratios (each recon run
                # against the floor run beside it), and their range.
                paired = sorted(r[0] / fl[0] for r, fl in zip(results[k], results[f]))
                print(f"{k} / {f} = {med[k][0] / med[f][0]:.2f} "
                      f"(run by run: median {statistics.median(paired):.2f}, "
                      f"range {paired[0]:.2f}-{paired[-1]:.2f})")
    copy = [k for k in med if k.startswith("duckdb COPY")]
    if copy:
        print()
        for k in recon_runs:
            if k in med and "every row different" in k:
                print(f"{k} / Parquet copy = {med[k][0] / med[copy[0]][0]:.2f}")


if __name__ == "__main__":
    main()
