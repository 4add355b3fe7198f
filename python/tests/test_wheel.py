"""The built wheel installs where no Rust is: a fresh venv, `pip install`
of the wheel file (no build step), then the `recon` command it puts on PATH
and `import recon` both work. RECON_WHEEL names the wheel (.ci/python sets
it to the dev-profile wheel it builds; scripts/build-wheel.sh builds the
portable release one)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import REPO, run_cli

WHEEL = os.environ.get("RECON_WHEEL")

pytestmark = pytest.mark.skipif(not WHEEL, reason="RECON_WHEEL names no wheel to install")

DEMO = [str(REPO / "testdata" / "demo" / "source.parquet"),
        str(REPO / "testdata" / "demo" / "target.parquet")]


@pytest.fixture(scope="module")
def venv(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("wheel") / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(root)], check=True)
    # The wheel's one dependency (pyarrow) comes from the index; the wheel
    # itself from its file, with nothing to build.
    subprocess.run([str(root / "bin" / "pip"), "install", "--quiet", "--disable-pip-version-check",
                    "--only-binary", ":all:", WHEEL], check=True, env=_env(root))
    return root


def _env(root: Path) -> dict:
    """The venv and the system's own directories on PATH: no cargo, rustc or
    ~/.cargo/bin, so nothing can be compiled or borrowed from a build."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CARGO", "RUST", "RECON"))}
    env["PATH"] = f"{root / 'bin'}:/usr/bin:/bin"
    return env


def test_no_rust_is_on_the_path(venv):
    path = _env(venv)["PATH"]
    for tool in ("cargo", "rustc"):
        assert shutil.which(tool, path=path) is None, tool


def test_the_recon_command_is_the_clis(venv):
    env = _env(venv)
    recon = shutil.which("recon", path=env["PATH"])
    assert recon == str(venv / "bin" / "recon")
    got = subprocess.run([recon, "diff", *DEMO], capture_output=True, text=True, env=env)
    want = run_cli("diff", *DEMO)
    # The README's demo: drift, exit 1, the same summary as the CLI built
    # from this checkout.
    assert got.returncode == want.returncode == 1, got.stderr
    assert got.stdout == want.stdout
    assert got.stdout.startswith("DRIFT: 1 source-only and 1 target-only rows")
    version = subprocess.run([recon, "--version"], capture_output=True, text=True, env=env)
    assert version.stdout == run_cli("--version").stdout
    bad = subprocess.run([recon, "diff", "missing.parquet", DEMO[1]], capture_output=True,
                         text=True, env=env)
    assert bad.returncode == 2 and "missing.parquet" in bad.stderr


def test_import_recon_diffs_pyarrow_tables(venv):
    code = (
        "import pyarrow as pa, recon\n"
        "a = pa.table({'k': [1, 2, 2], 's': ['x', None, 'y']})\n"
        "b = pa.table({'k': [2, 1, 2], 's': [None, 'x', 'z']})\n"
        "d = recon.diff(a, b)\n"
        "print(d.exact_match, d.source_only_rows, d.target_only_rows, recon.__file__)\n"
    )
    p = subprocess.run([str(venv / "bin" / "python"), "-c", code], capture_output=True,
                       text=True, env=_env(venv), cwd=venv)
    assert p.returncode == 0, p.stderr
    exact, src, tgt, where = p.stdout.split()
    assert (exact, src, tgt) == ("False", "1", "1")
    assert where.startswith(str(venv)), where
