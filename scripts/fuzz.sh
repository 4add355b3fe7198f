#!/usr/bin/env bash
# Runs every fuzz target for a bounded time (default 60 s each).
#   scripts/fuzz.sh [SECONDS] [TARGET...]
# Needs cargo-fuzz (`cargo install cargo-fuzz`). cargo-fuzz passes nightly-only
# flags (-Zsanitizer); on a stable toolchain RUSTC_BOOTSTRAP=1 allows them.
# Findings land in fuzz/artifacts/TARGET/; replay one with
#   RUSTC_BOOTSTRAP=1 cargo fuzz run TARGET fuzz/artifacts/TARGET/<file>
set -euo pipefail
cd "$(dirname "$0")/.."
secs=${1:-60}
shift || true
targets=("$@")
if [[ ${#targets[@]} -eq 0 ]]; then
  targets=(csv_lex parse_text encode csv_file)
fi
export RUSTC_BOOTSTRAP=1
for t in "${targets[@]}"; do
  echo "== $t (${secs}s)"
  mkdir -p "fuzz/corpus/$t"
  cargo fuzz run "$t" "fuzz/corpus/$t" -- -max_total_time="$secs" -rss_limit_mb=4096 2>&1 \
    | grep -E "^(#[0-9]+ +DONE|Done|SUMMARY|==[0-9]+==ERROR|thread .* panicked|artifact_prefix|Test unit written)" || true
  if compgen -G "fuzz/artifacts/$t/*" > /dev/null; then
    echo "!! $t: findings in fuzz/artifacts/$t/"
  fi
done
