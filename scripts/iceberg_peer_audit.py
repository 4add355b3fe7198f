#!/usr/bin/env python3
"""Audits recon's Iceberg reader against every table another project
committed as test data, with pyiceberg as the referee.

    python3 scripts/iceberg_peer_audit.py CHECKOUT [CHECKOUT ...] [--recon BIN]

Each CHECKOUT is a work tree of a project with Iceberg test tables (for
example duckdb/duckdb-iceberg, whose tables are under data/persistent/).
Every folder holding a `metadata/` folder with `*.metadata.json` files is a
table; each of its metadata files is read, and each snapshot of it:

- pyiceberg (scripts/requirements-fixtures.txt) reads the snapshot
  (`StaticTable.from_metadata(file).scan(snapshot_id=…).to_arrow()`),
  written to a temp Parquet file;
- `recon diff iceberg:FILE@ID THAT.parquet` compares the two.

Each snapshot is one line: `equal`, `DRIFT` (recon and pyiceberg disagree:
a wrong answer on one side, the case that matters), `recon refuses: …`
(exit 2, with recon's message), `pyiceberg refuses: …`, or `both refuse`.
The summary counts them; the exit status is 1 if any snapshot drifts.
Locations in the metadata may be relative to the checkout's root, so both
readers run from there. Nothing is written outside the temp dir.
"""

from __future__ import annotations

import argparse
import collections
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import pyarrow.parquet as pq
from pyiceberg.table import StaticTable

REPO = Path(__file__).resolve().parents[1]


def tables(checkout: Path):
    for meta_dir in sorted(checkout.rglob("metadata")):
        if meta_dir.is_dir() and any(meta_dir.glob("*.metadata.json")):
            yield meta_dir.parent


def audit(checkout: Path, recon: str, tmp: Path, counts: collections.Counter) -> None:
    for table in tables(checkout):
        for meta in sorted(table.glob("metadata/*.metadata.json")):
            rel = meta.relative_to(checkout)
            os.chdir(checkout)
            try:
                t = StaticTable.from_metadata(str(rel))
                snaps = [s.snapshot_id for s in t.metadata.snapshots]
            except Exception as e:  # noqa: BLE001 - reported per table
                print(f"{rel}: pyiceberg cannot load the metadata: {type(e).__name__}: {e}"[:300])
                counts["metadata pyiceberg refuses"] += 1
                continue
            for sid in snaps:
                name = f"{rel}@{sid}"
                out = tmp / "expected.parquet"
                try:
                    pq.write_table(t.scan(snapshot_id=sid).to_arrow(), out)
                    ref = None
                except Exception as e:  # noqa: BLE001
                    ref = f"{type(e).__name__}: {e}".splitlines()[0][:160]
                p = subprocess.run(
                    [recon, "diff", f"iceberg:{rel}@{sid}",
                     str(out) if ref is None else f"iceberg:{rel}@{sid}", "--quiet"],
                    capture_output=True, text=True)
                err = p.stderr.strip().splitlines()[-1][:200] if p.stderr.strip() else ""
                if ref is not None and p.returncode == 2:
                    verdict = f"both refuse (pyiceberg: {ref}; recon: {err})"
                    counts["both refuse"] += 1
                elif ref is not None:
                    verdict = f"pyiceberg refuses: {ref} (recon reads it)"
                    counts["pyiceberg refuses"] += 1
                elif p.returncode == 0:
                    verdict = "equal"
                    counts["equal"] += 1
                elif p.returncode == 1:
                    verdict = "DRIFT"
                    counts["DRIFT"] += 1
                else:
                    verdict = f"recon refuses: {err}"
                    counts["recon refuses"] += 1
                print(f"{name}: {verdict}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("checkouts", nargs="+", type=Path)
    ap.add_argument("--recon", default=str(REPO / "target" / "debug" / "recon"))
    args = ap.parse_args()
    counts: collections.Counter = collections.Counter()
    with tempfile.TemporaryDirectory() as tmp:
        for c in args.checkouts:
            audit(c.resolve(), str(Path(args.recon).resolve()), Path(tmp), counts)
    print("summary:", ", ".join(f"{k} {v}" for k, v in sorted(counts.items())))
    sys.exit(1 if counts["DRIFT"] else 0)


if __name__ == "__main__":
    main()
