#!/usr/bin/env python3
"""Runs recon over a corpus of real-world CSV files against Parquet twins.

For every CSV file DuckDB can read with its own sniffer (read_csv, auto
detection), DuckDB writes the table it read as Parquet; then
`recon diff FILE TWIN` runs with no flags. The outcomes are tallied:

- match (exit 0): recon read the file as DuckDB did;
- drift (exit 1): both read it, but not alike (a value-semantics
  difference: DuckDB trims, or reads "" as NULL, or rounds, ...);
- error (exit 2): recon refused, grouped by the first words of its message.

A DuckDB twin is not the truth (DuckDB is lenient where recon is strict), so
drift and errors are things to look at, not failures by themselves.

Usage: scripts/csv_corpus.py CORPUS_DIR [--recon target/release/recon]
       [--out /tmp/csv-corpus] [--json summary.json]
The corpus used in the README is DuckDB's data/csv (github.com/duckdb/duckdb).
"""

import argparse
import collections
import json
import os
import re
import subprocess
import sys
import tempfile


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("corpus")
    ap.add_argument("--recon", default="target/release/recon")
    ap.add_argument("--out", default=os.path.join(tempfile.gettempdir(), "csv-corpus"))
    ap.add_argument("--json")
    ap.add_argument("--show", type=int, default=3, help="examples per error kind")
    ap.add_argument("flags", nargs="*", help="extra recon flags, after --")
    args = ap.parse_args()
    import duckdb

    os.makedirs(args.out, exist_ok=True)
    files = []
    for root, _, names in os.walk(args.corpus):
        for n in sorted(names):
            if re.search(r"\.(csv|tsv|tbl)(\.gz|\.zst)?$", n, re.I):
                files.append(os.path.join(root, n))
    files.sort()
    outcome = collections.Counter()
    kinds = collections.defaultdict(list)
    results = []
    for i, f in enumerate(files):
        twin = os.path.join(args.out, f"{i:05d}.parquet")
        con = duckdb.connect()
        try:
            con.execute("SET threads TO 1")
            rel = con.execute("SELECT * FROM read_csv(?) LIMIT 0", [f])
            names = [c[0] for c in rel.description]
            # DuckDB names header-less columns column0, column1, ...; recon
            # names them column_1, column_2, ... (as with --no-header).
            if names and all(re.fullmatch(r"column\d+", n) for n in names):
                cols = ", ".join(f'"{n}" AS column_{k + 1}' for k, n in enumerate(names))
            else:
                cols = "*"
            con.execute(
                "COPY (SELECT %s FROM read_csv(?)) TO '%s' (FORMAT parquet)"
                % (cols, twin.replace("'", "''")),
                [f],
            )
        except Exception:
            outcome["duckdb cannot read it"] += 1
            results.append({"file": f, "outcome": "skipped"})
            continue
        finally:
            con.close()
        try:
            p = subprocess.run(
                [args.recon, "diff", f, twin, "-q", "-j", "1", "-m", "256MiB", *args.flags],
                capture_output=True,
                text=True,
                timeout=120,
            )
            code, err = p.returncode, p.stderr.strip()
        except subprocess.TimeoutExpired:
            code, err = -1, "timeout"
        what = {0: "match", 1: "drift", 2: "error"}.get(code, f"exit {code}")
        outcome[what] += 1
        if code == 2:
            msg = err.split(": ", 2)[-1] if ": " in err else err
            key = re.sub(r"'[^']*'|\"[^\"]*\"|\d+", "_", msg)[:70]
            kinds[key].append((f, err))
        if code not in (0, 1, 2):
            kinds["CRASH or timeout"].append((f, err))
        results.append({"file": f, "outcome": what, "stderr": err})
    total = sum(outcome.values())
    print(f"{total} files")
    for k, v in outcome.most_common():
        print(f"  {k:24} {v:5}")
    print("errors by kind:")
    for k, v in sorted(kinds.items(), key=lambda kv: -len(kv[1])):
        print(f"  {len(v):4}  {k}")
        for f, e in v[: args.show]:
            print(f"          {e[:200]}")
    if args.json:
        with open(args.json, "w") as fh:
            json.dump({"outcome": outcome, "results": results}, fh, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
