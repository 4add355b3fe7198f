"""Ctrl-C cancels a run and leaves no temp files; a stream larger than the
memory limit is diffed within it. Each runs in a child interpreter, so a
signal and a peak RSS are the child's own."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ENDLESS = textwrap.dedent("""
    import sys
    import pyarrow as pa
    import recon

    schema = pa.schema([("a", pa.int64())])

    def batches():
        i = 0
        while True:  # endless: only the interrupt ends this run
            yield pa.record_batch([pa.array(range(i, i + 10000), pa.int64())], schema=schema)
            i += 10000
            if i == 300000:
                print("streaming", flush=True)

    reader = pa.RecordBatchReader.from_batches(schema, batches())
    try:
        recon.diff(reader, pa.table({"a": pa.array([1], pa.int64())}), temp_dir=sys.argv[1])
    except KeyboardInterrupt:
        print("interrupted", flush=True)
        sys.exit(42)
    print("finished", flush=True)
""")


def test_ctrl_c_cancels_the_run_and_removes_its_temp_files(tmp_path):
    temp = tmp_path / "temp"
    temp.mkdir()
    child = subprocess.Popen([sys.executable, "-c", ENDLESS, str(temp)],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert child.stdout.readline().strip() == "streaming", child.stderr.read()
        # The run is copying the stream into the temp directory now.
        assert any(temp.iterdir())
        child.send_signal(signal.SIGINT)
        out, err = child.communicate(timeout=60)
    finally:
        child.kill()
    assert child.returncode == 42, (out, err)
    assert out.strip() == "interrupted"
    assert list(temp.iterdir()) == []


BIG_STREAM = textwrap.dedent("""
    import resource, sys
    import pyarrow as pa
    import recon

    rows, limit_mib = int(sys.argv[1]), int(sys.argv[2])
    schema = pa.schema([(f"c{i}", pa.int64()) for i in range(8)] + [("s", pa.string())])

    def batches(changed):
        step = 65536
        for start in range(0, rows, step):
            n = min(step, rows - start)
            first = start + (10**12 if changed and start == 0 else 0)
            base = pa.array([first] + list(range(start + 1, start + n)), pa.int64())
            cols = [base] * 8 + [pa.array([f"row {start + j:012d}" for j in range(n)])]
            yield pa.record_batch(cols, schema=schema)

    def reader(changed):
        return pa.RecordBatchReader.from_batches(schema, batches(changed))

    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    d = recon.diff(reader(False), reader(True), memory_limit=f"{limit_mib}MiB", threads=2)
    after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    print(d.source_rows, d.target_rows, d.source_only_rows, d.target_only_rows, before * 1024, after * 1024)
""")


def test_a_stream_larger_than_the_memory_limit_stays_within_it(tmp_path):
    rows, limit_mib = 5_000_000, 32
    p = subprocess.run([sys.executable, "-c", BIG_STREAM, str(rows), str(limit_mib)],
                       capture_output=True, text=True, timeout=900)
    assert p.returncode == 0, p.stderr
    s_rows, t_rows, s_only, t_only, before, after = map(int, p.stdout.split())
    assert (s_rows, t_rows) == (rows, rows)
    # The target's first row differs.
    assert (s_only, t_only) == (1, 1)
    data = rows * (8 * 8 + 16)
    growth = after - before
    # The bound, with room for the interpreter's own allocations and the
    # producer's batch in flight; the data itself is several times larger.
    allowed = (limit_mib + 128) * 2**20
    assert data > 2 * allowed
    assert growth <= allowed, f"peak RSS grew {growth / 2**20:.0f} MiB for a {limit_mib} MiB limit"
