"""Shared fixtures: the CLI to check the package against, and a small pair
with duplicates, NULLs, a changed value and rows on one side only."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

REPO = Path(__file__).resolve().parents[2]

# Skips that may happen in CI, each with its reason. With RECON_NO_SKIP=1
# (.ci/python sets it) any other skip fails the run, so a machine missing a
# test dependency cannot pass with fewer tests. Empty today.
ALLOWED_SKIPS: dict[str, str] = {}


_SKIPPED: list[str] = []


def _hidden_jar(report) -> bool:
    """A Spark test that needs recon's jar, in the run that hides it
    (RECON_SPARK_HIDE_JAR=1; test_spark.py's needs_jar)."""
    return (os.environ.get("RECON_SPARK_HIDE_JAR") == "1"
            and "RECON_SPARK_HIDE_JAR=1 hides" in str(report.longrepr))


def pytest_runtest_logreport(report):
    if report.skipped and report.nodeid not in ALLOWED_SKIPS and not _hidden_jar(report):
        _SKIPPED.append(f"{report.nodeid}: {report.longrepr}")


def pytest_collectreport(report):
    if report.skipped:  # a whole module skipped at import
        _SKIPPED.append(f"{report.nodeid}: {report.longrepr}")


def pytest_sessionfinish(session, exitstatus):
    if os.environ.get("RECON_NO_SKIP") == "1" and _SKIPPED:
        tr = session.config.pluginmanager.get_plugin("terminalreporter")
        for line in _SKIPPED:
            tr.write_line(f"not allowed to skip in CI (RECON_NO_SKIP=1): {line}", red=True)
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


def _recon_bin() -> str:
    path = os.environ.get("RECON_BIN") or str(REPO / "target" / "debug" / "recon")
    if not Path(path).exists():
        # Not a skip: these tests exist to compare against the CLI.
        raise RuntimeError(f"{path}: no recon binary; build it (cargo build) or set RECON_BIN")
    return path


@pytest.fixture(scope="session")
def recon_bin() -> str:
    return _recon_bin()


def run_cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([_recon_bin(), *args], capture_output=True, text=True)


def cli_report(source, target, *flags: str, out_dir: Path):
    """The CLI's JSON report and evidence directory for a pair."""
    out = out_dir / "cli-evidence"
    p = run_cli("diff", str(source), str(target), "--json", "-o", str(out), "--force", *flags)
    assert p.returncode in (0, 1), p.stderr
    return json.loads(p.stdout), out


SCHEMA = pa.schema([
    ("order_id", pa.int64()),
    ("region", pa.string()),
    ("amount", pa.float64()),
    ("note", pa.string()),
])


def source_table() -> pa.Table:
    return pa.table({
        "order_id": [1, 2, 2, 3, 4, 5, 6],
        "region": ["north", "south", "south", "east", "west", None, "north"],
        "amount": [10.0, 20.0, 20.0, 30.0, None, 50.0, 60.0],
        "note": ["a", "b", "b", None, "d", "e", "f"],
    }, schema=SCHEMA)


def target_table() -> pa.Table:
    return pa.table({
        "order_id": [1, 2, 3, 4, 5, 7],
        "region": ["north", "south", "east", "west", None, "south"],
        "amount": [10.0, 20.0, 30.5, None, 50.0, 70.0],
        "note": ["a", "b", None, "d", "e", "g"],
    }, schema=SCHEMA)


@pytest.fixture()
def pair(tmp_path: Path):
    """The pair as Parquet files, and as the tables they hold."""
    s, t = tmp_path / "source.parquet", tmp_path / "target.parquet"
    pq.write_table(source_table(), s)
    pq.write_table(target_table(), t)
    return s, t


def sorted_rows(table: pa.Table) -> list:
    rows = table.to_pylist()
    return sorted(rows, key=lambda r: json.dumps(r, sort_keys=True, default=str))
