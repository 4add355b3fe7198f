#!/usr/bin/env bash
# Benchmarks recon against DuckDB on a generated pair (see scripts/compare.py).
#   scripts/compare.sh ROWS [compare.py options]     e.g. scripts/compare.sh 50000000 --runs 3
set -euo pipefail
cd "$(dirname "$0")/.."
rows=${1:?usage: scripts/compare.sh ROWS [options]}
shift
dir=${RECON_BENCH_DIR:-bench-data}/$rows
scripts/gen-pair.sh "$rows" "$dir"
if [[ ! -x scripts/.venv/bin/python ]]; then
  python3 -m venv scripts/.venv
fi
scripts/.venv/bin/python -c "import duckdb" 2>/dev/null || scripts/.venv/bin/pip install -q duckdb
cargo build --release --locked >&2
python3 scripts/compare.py "$dir" "$@"
