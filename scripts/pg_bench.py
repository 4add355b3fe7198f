"""Times recon reading a PostgreSQL table against psql's binary COPY into
/dev/null (the floor), at the same parallelism, with alternating runs: the
figures in the README's PostgreSQL section.

    python scripts/pg_bench.py bench-data/10000000 [--recon target/release/recon]
        [--rounds 2] [--connections 2] [--reladiff KEY]

Starts its own server (initdb under DIR/pg, as the postgres user when run
as root), loads DIR/source.parquet into table `orders` once (kept for the
next run), then times:
  - recon diff postgres://…?table=orders DIR/source.parquet (a matching pair);
  - the floor: N psql processes, each `COPY (SELECT * FROM orders WHERE
    ctid range) TO STDOUT (FORMAT binary)` into /dev/null, run at once;
  - with --reladiff, reladiff on the table against a copy of it, keyed.
Needs psycopg and pyarrow (the test venv has both).
"""

from __future__ import annotations

import argparse
import glob
import json
import os
import pwd
import shutil
import socket
import statistics
import subprocess
import sys
import time
from pathlib import Path

import pyarrow as pa
import pyarrow.csv as pacsv
import pyarrow.parquet as pq

USER = "bench"


def sh(args, **kw):
    return subprocess.run([str(a) for a in args], check=True, **kw)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def pg_type(t: pa.DataType) -> str:
    if pa.types.is_int64(t):
        return "int8"
    if pa.types.is_int32(t):
        return "int4"
    if pa.types.is_int16(t) or pa.types.is_int8(t):
        return "int2"
    if pa.types.is_float64(t):
        return "float8"
    if pa.types.is_float32(t):
        return "float4"
    if pa.types.is_boolean(t):
        return "bool"
    if pa.types.is_decimal(t):
        return f"numeric({t.precision},{t.scale})"
    if pa.types.is_date32(t):
        return "date"
    if pa.types.is_timestamp(t):
        return "timestamptz" if t.tz else "timestamp"
    if pa.types.is_string(t) or pa.types.is_large_string(t):
        return "text"
    raise SystemExit(f"no PostgreSQL type for {t}")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("pair")
    ap.add_argument("--recon", default="target/release/recon")
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--connections", type=int, default=2)
    ap.add_argument("--reladiff", metavar="KEY")
    args = ap.parse_args()
    import psycopg

    pair = Path(args.pair).resolve()
    src = pair / "source.parquet"
    root = pair / "pg"
    bindir = Path(sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"))[-1]).parent
    run_as = []
    if os.geteuid() == 0:
        run_as = ["runuser", "-u", "postgres", "--"]
    fresh = not (root / "data").exists()
    if fresh:
        root.mkdir(parents=True, exist_ok=True)
        if run_as:
            pw = pwd.getpwnam("postgres")
            os.chown(root, pw.pw_uid, pw.pw_gid)
        sh([*run_as, bindir / "initdb", "-D", root / "data", "-U", USER, "--auth=trust",
            "--no-sync"], capture_output=True)
    port = free_port()
    sh([*run_as, bindir / "pg_ctl", "-D", root / "data", "-w", "-l", root / "log", "start", "-o",
        f"-p {port} -k {root} -c listen_addresses=127.0.0.1 -c shared_buffers=2GB "
        "-c max_wal_size=8GB -c fsync=off -c synchronous_commit=off"], capture_output=True)
    url = f"postgres://{USER}@127.0.0.1:{port}/postgres"
    conninfo = dict(host="127.0.0.1", port=port, user=USER, dbname="postgres", autocommit=True)
    try:
        with psycopg.connect(**conninfo) as conn:
            have = conn.execute("SELECT to_regclass('orders') IS NOT NULL").fetchone()[0]
            if not have:
                t0 = time.time()
                pf = pq.ParquetFile(src)
                cols = ", ".join(f'"{f.name}" {pg_type(f.type)}' for f in pf.schema_arrow)
                conn.execute(f"CREATE UNLOGGED TABLE orders ({cols})")
                with conn.cursor().copy("COPY orders FROM STDIN (FORMAT csv)") as cp:
                    for batch in pf.iter_batches(batch_size=200_000):
                        sink = pa.BufferOutputStream()
                        pacsv.write_csv(pa.Table.from_batches([batch]), sink,
                                        pacsv.WriteOptions(include_header=False))
                        cp.write(sink.getvalue().to_pybytes())
                conn.execute("VACUUM ANALYZE orders")
                print(f"loaded {pf.metadata.num_rows} rows in {time.time() - t0:.1f} s",
                      file=sys.stderr)
            pages = conn.execute(
                "SELECT pg_relation_size('orders') / current_setting('block_size')::int"
            ).fetchone()[0]
            size = conn.execute("SELECT pg_size_pretty(pg_relation_size('orders'))").fetchone()[0]
            version = conn.execute("SHOW server_version").fetchone()[0]
        print(f"PostgreSQL {version}; orders: {pages} pages ({size})", file=sys.stderr)

        n = args.connections

        def recon_run():
            p = subprocess.run([args.recon, "diff", f"{url}?table=orders", str(src), "--json",
                                "-j", str(n), "--connections", str(n)],
                               capture_output=True, text=True)
            if p.returncode != 0:
                raise SystemExit(f"recon exited {p.returncode}: {p.stderr}")
            return json.loads(p.stdout)

        def floor():
            procs = []
            for i in range(n):
                lo = pages * i // n
                hi = pages * (i + 1) // n
                cond = f"ctid >= '({lo},0)'::tid" + (
                    f" AND ctid < '({hi},0)'::tid" if i + 1 < n else "")
                sql = f"COPY (SELECT * FROM orders WHERE {cond}) TO STDOUT (FORMAT binary)"
                procs.append(subprocess.Popen(
                    ["psql", "-h", "127.0.0.1", "-p", str(port), "-U", USER, "-d", "postgres",
                     "-c", sql], stdout=subprocess.DEVNULL))
            for p in procs:
                if p.wait() != 0:
                    raise SystemExit("psql failed")

        cases = {"recon diff (PostgreSQL vs its Parquet export)": recon_run,
                 f"floor: {n} psql binary COPY into /dev/null": floor}
        times = {k: [] for k in cases}
        last = None
        for _ in range(args.rounds):
            for name, f in cases.items():
                t0 = time.perf_counter()
                out = f()
                times[name].append(time.perf_counter() - t0)
                if isinstance(out, dict):
                    last = out
        for name, ts in times.items():
            print(f"{name}: median {statistics.median(ts):.2f} s "
                  f"({', '.join(f'{t:.2f}' for t in ts)})")
        a, b = (statistics.median(v) for v in times.values())
        print(f"ratio recon / floor: {a / b:.2f}")
        if last:
            print("recon phases:", json.dumps(last.get("phases") or last.get("timings")))
    finally:
        sh([*run_as, bindir / "pg_ctl", "-D", root / "data", "-m", "fast", "stop"],
           capture_output=True)


if __name__ == "__main__":
    main()
