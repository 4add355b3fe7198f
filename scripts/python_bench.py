#!/usr/bin/env python3
"""The Python package's figures for the README, on a generated pair
(scripts/gen-pair.sh 10000000), each measurement in a fresh interpreter so
its peak RSS is its own:

1. `recon.diff` on two pyarrow Tables in memory against the CLI on the
   Parquet files they were read from (same threads), alternating runs;
2. the keyed diff on polars and pandas DataFrames against datacompy on the
   same frames (time and peak RSS).

    python3 -m venv bench-data/py && bench-data/py/bin/pip install ./python polars pandas datacompy
    bench-data/py/bin/python scripts/python_bench.py bench-data/10000000 --recon target/release/recon

Not a test: timings vary with the machine, so they are reported, never asserted.
"""
from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time

CHILD = r"""
import json, resource, sys, time
what, d, key, threads = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
rss = lambda: resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
keys = key.split(",")
if what == "recon-arrow":
    import pyarrow.parquet as pq, recon
    s, t = pq.read_table(f"{d}/source.parquet"), pq.read_table(f"{d}/target.parquet")
    loaded = rss(); t0 = time.perf_counter()
    r = recon.diff(s, t, threads=threads)
    out = dict(seconds=time.perf_counter() - t0, unmatched=r.unmatched_rows)
elif what in ("recon-polars", "datacompy-polars"):
    import polars as pl, pyarrow.parquet as pq
    # Through pyarrow: some polars versions refuse arrow-rs's Parquet footers.
    s, t = (pl.from_arrow(pq.read_table(f"{d}/{n}.parquet")) for n in ("source", "target"))
    loaded = rss(); t0 = time.perf_counter()
    if what == "recon-polars":
        import recon
        r = recon.diff(s, t, key=keys, threads=threads)
        out = dict(changed=r.keyed["value_mismatch"])
    else:
        from datacompy import PolarsCompare
        c = PolarsCompare(s, t, join_columns=keys)
        out = dict(changed=c.all_mismatch().height)
    out["seconds"] = time.perf_counter() - t0
elif what in ("recon-pandas", "datacompy-pandas"):
    import pandas as pd
    s, t = pd.read_parquet(f"{d}/source.parquet"), pd.read_parquet(f"{d}/target.parquet")
    loaded = rss(); t0 = time.perf_counter()
    if what == "recon-pandas":
        import recon
        r = recon.diff(s, t, key=keys, threads=threads)
        out = dict(changed=r.keyed["value_mismatch"])
    else:
        try:
            from datacompy import PandasCompare as Compare
        except ImportError:  # datacompy before 1.0
            from datacompy import Compare
        c = Compare(s, t, join_columns=keys)
        out = dict(changed=len(c.all_mismatch()))
    out["seconds"] = time.perf_counter() - t0
out.update(loaded_rss=loaded, peak_rss=rss())
print(json.dumps(out))
"""


def child(what: str, d: str, key: str, threads: int) -> dict:
    p = subprocess.run([sys.executable, "-c", CHILD, what, d, key, str(threads)],
                       capture_output=True, text=True)
    if p.returncode != 0:
        raise SystemExit(f"{what}: {p.stderr.strip()}")
    return json.loads(p.stdout)


def cli(recon: str, d: str, threads: int) -> float:
    t0 = time.perf_counter()
    p = subprocess.run([recon, "diff", f"{d}/source.parquet", f"{d}/target.parquet",
                        "-j", str(threads), "--progress", "never", "--quiet"])
    if p.returncode not in (0, 1):
        raise SystemExit("recon CLI failed")
    return time.perf_counter() - t0


def gib(b: float) -> str:
    return f"{b / 2**30:.2f} GiB"


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("dir")
    ap.add_argument("--recon", default="target/release/recon")
    ap.add_argument("--key", default="order_id")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--skip-datacompy", action="store_true")
    a = ap.parse_args()

    mem, files = [], []
    for _ in range(a.runs):  # alternating, so drift in machine speed hits both
        files.append(cli(a.recon, a.dir, a.threads))
        mem.append(child("recon-arrow", a.dir, a.key, a.threads)["seconds"])
    m, f = statistics.median(mem), statistics.median(files)
    print(f"keyless, {a.threads} threads, median of {a.runs}:")
    print(f"  recon.diff(pyarrow.Table, pyarrow.Table)  {m:.2f} s   runs {[round(x, 2) for x in mem]}")
    print(f"  recon diff on the Parquet files (CLI)     {f:.2f} s   runs {[round(x, 2) for x in files]}")
    print(f"  in memory / files = {m / f:.2f}")

    for lib in ("polars", "pandas"):
        ours = [child(f"recon-{lib}", a.dir, a.key, a.threads) for _ in range(a.runs)]
        o = sorted(ours, key=lambda r: r["seconds"])[len(ours) // 2]
        print(f"keyed ({a.key}) on {lib} DataFrames:")
        print(f"  recon      {o['seconds']:.2f} s  peak RSS {gib(o['peak_rss'])} "
              f"(+{gib(o['peak_rss'] - o['loaded_rss'])} over the loaded frames)  changed={o['changed']}")
        if a.skip_datacompy:
            continue
        dc = child(f"datacompy-{lib}", a.dir, a.key, a.threads)
        print(f"  datacompy  {dc['seconds']:.2f} s  peak RSS {gib(dc['peak_rss'])} "
              f"(+{gib(dc['peak_rss'] - dc['loaded_rss'])})  changed={dc['changed']}")
        print(f"  datacompy / recon: {dc['seconds'] / o['seconds']:.1f}x the time, "
              f"{(dc['peak_rss'] - dc['loaded_rss']) / max(o['peak_rss'] - o['loaded_rss'], 1):.1f}x "
              "the memory added")


if __name__ == "__main__":
    main()
