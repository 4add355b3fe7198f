"""Times recon on a pair served by a local S3-compatible server (moto, on
loopback) against recon on the same files on disk, and DuckDB's httpfs
reading the same objects, with alternating runs: the figures in the
README's object-store section.

    python scripts/store_bench.py bench-data/10000000 [--recon target/release/recon]
        [--rounds 3] [--threads 2] [--duckdb-python /tmp/ddb/bin/python]

Needs moto[server] and boto3 (the test venv has them). DuckDB's httpfs
extension comes from PyPI for DuckDB 1.5.5 (not for the 2.0 the test venv
has), so DuckDB runs in another interpreter:
    python3 -m venv /tmp/ddb && /tmp/ddb/bin/pip install duckdb==1.5.5 \\
        duckdb-extension-httpfs==1.5.5 duckdb-extensions==1.5.5
DuckDB's figure is `SELECT count(*), sum(hash(*COLUMNS(*)))` over each file: a
checksum, not a diff (no multiset answer, no unmatched rows).
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import statistics
import subprocess
import sys
import time
from pathlib import Path

import boto3

BUCKET = "recon-bench"

DUCKDB = """
import sys, time, duckdb
from duckdb_extensions import import_extension
import_extension("httpfs")
c = duckdb.connect()
c.execute("SET threads = %d" % int(sys.argv[2]))
c.execute("LOAD httpfs")
c.execute("CREATE SECRET (TYPE s3, KEY_ID 'testing', SECRET 'testing', REGION 'us-east-1', "
          "ENDPOINT '127.0.0.1:%s', URL_STYLE 'path', USE_SSL false)" % sys.argv[1])
for url in sys.argv[3:]:
    print(c.execute("SELECT count(*), sum(hash(*COLUMNS(*))) FROM read_parquet('%s')" % url).fetchall())
"""


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def timed(args, env=None) -> tuple[float, subprocess.CompletedProcess]:
    t = time.perf_counter()
    p = subprocess.run([str(a) for a in args], capture_output=True, text=True, env=env)
    return time.perf_counter() - t, p


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("dir", type=Path)
    ap.add_argument("--recon", default="target/release/recon")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--duckdb-python", default=None)
    a = ap.parse_args()
    src, tgt = a.dir / "source.parquet", a.dir / "target.parquet"
    port = free_port()
    exe = Path(sys.executable).with_name("moto_server")
    server = subprocess.Popen([str(exe), "-H", "127.0.0.1", "-p", str(port)],
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        endpoint = f"http://127.0.0.1:{port}"
        for _ in range(100):
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
                break
            except OSError:
                time.sleep(0.1)
        s3 = boto3.client("s3", endpoint_url=endpoint, region_name="us-east-1",
                          aws_access_key_id="testing", aws_secret_access_key="testing")
        s3.create_bucket(Bucket=BUCKET)
        t = time.perf_counter()
        for f in (src, tgt):
            s3.upload_file(str(f), BUCKET, f"pair/{f.name}")
        print(f"uploaded {src.stat().st_size + tgt.stat().st_size} bytes in {time.perf_counter() - t:.1f} s")
        env = dict(os.environ, AWS_ACCESS_KEY_ID="testing", AWS_SECRET_ACCESS_KEY="testing",
                   AWS_REGION="us-east-1")
        flags = ["-j", a.threads, "--json", "--storage-option", f"aws_endpoint={endpoint}",
                 "--storage-option", "aws_allow_http=true"]
        urls = [f"s3://{BUCKET}/pair/{f.name}" for f in (src, tgt)]
        runs = {
            "recon, local files": [a.recon, "diff", src, tgt, *flags],
            "recon, s3:// on the loopback server": [a.recon, "diff", *urls, *flags],
            "recon, local, matching pair (source against itself)": [a.recon, "diff", src, src, *flags],
            "recon, s3://, matching pair (source against itself)": [a.recon, "diff", urls[0], urls[0], *flags],
        }
        if a.duckdb_python:
            runs["duckdb httpfs, sum(hash(*)) of each object"] = [
                a.duckdb_python, "-c", DUCKDB, port, a.threads, *urls]
        times: dict[str, list[float]] = {k: [] for k in runs}
        for r in range(a.rounds):
            for name, args in runs.items():
                secs, p = timed(args, env)
                if p.returncode not in ((0, 1) if name.startswith("recon") else (0,)):
                    sys.exit(f"{name}: exit {p.returncode}: {p.stderr.strip()}")
                times[name].append(secs)
                extra = ""
                if name.startswith("recon") and p.stdout.startswith("{"):
                    rep = json.loads(p.stdout)
                    fetched = rep["inputs"]["source"].get("fetched")
                    extra = f" exact_match={rep['exact_match']}"
                    if fetched:
                        extra += f" source fetched={fetched}"
                print(f"round {r + 1}: {name}: {secs:.2f} s{extra}", flush=True)
        for name, ts in times.items():
            print(f"{name}: median {statistics.median(ts):.2f} s ({', '.join(f'{t:.2f}' for t in ts)})")
    finally:
        server.terminate()
        server.wait()


if __name__ == "__main__":
    main()
