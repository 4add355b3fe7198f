#!/usr/bin/env bash
# Renders recon's HTML reports in a real browser (headless Debian chromium),
# writes PNG screenshots, and fails if a page logs a console message or
# tries to fetch anything. Installs chromium with apt-get when missing.
#   scripts/html_check.sh [OUT_DIR]        (default: target/html-check)
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-target/html-check}
mkdir -p "$out"
out=$(realpath "$out")
if ! command -v chromium >/dev/null; then
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null
fi
cargo build --release --locked >&2
recon=target/release/recon
"$recon" diff testdata/keyed/orders_source.parquet testdata/keyed/orders_target.parquet \
  --key order_id,line_no --tolerance amount=0.01 --html "$out/keyed.html" -q || true
"$recon" diff testdata/demo/extract_drift.csv.gz testdata/lake/orders/ --by business_date \
  --html "$out/keyless.html" -q || true
"$recon" batch testdata/batch/nightly.toml --html "$out/batch.html" -q || true
status=0
for page in keyed keyless batch; do
  log="$out/$page.log"
  # --enable-logging prints console messages (CONSOLE lines) and failed
  # loads; a self-contained page has neither.
  timeout 120 chromium --headless --no-sandbox --disable-gpu --hide-scrollbars \
    --enable-logging=stderr --v=0 --window-size=1200,1800 \
    --screenshot="$out/$page.png" "file://$out/$page.html" 2>"$log" >/dev/null
  if [[ ! -s "$out/$page.png" ]]; then
    echo "$page: no screenshot" >&2; status=1
  fi
  if grep -E "CONSOLE|ERR_FILE_NOT_FOUND|ERR_NAME_NOT_RESOLVED|net::ERR" "$log" >&2; then
    echo "$page: console messages or failed loads (see $log)" >&2; status=1
  fi
  echo "$page: $out/$page.png"
done
exit $status
