#!/usr/bin/env bash
# Generates (or reuses) a fact-table pair with planted drift.
#   scripts/gen-pair.sh ROWS [DIR]      DIR defaults to bench-data/<ROWS>
# Writes DIR/source.parquet, DIR/target.parquet and DIR/expected.json.
set -euo pipefail
cd "$(dirname "$0")/.."
rows=${1:?usage: scripts/gen-pair.sh ROWS [DIR]}
dir=${2:-bench-data/$rows}
if [[ -f "$dir/expected.json" && -f "$dir/source.parquet" && -f "$dir/target.parquet" ]]; then
  echo "reusing $dir"
  exit 0
fi
cargo build --release --locked -p recon --example gen_pair >&2
./target/release/examples/gen_pair "$rows" "$dir"
