#!/usr/bin/env bash
# Builds the portable Linux x86-64 wheel: the library (`import recon`), the
# `recon` command and the Spark jar in one abi3 wheel (CPython 3.9+) tagged
# manylinux2014 (glibc 2.17 and newer), linked with zig, checked with
# auditwheel.
#   scripts/build-wheel.sh                 # release, into target/wheels/
#   PROFILE=dev scripts/build-wheel.sh     # a faster, unoptimized build
#
# Needs Rust and Java 11+ (javac) on the build machine only; the wheel needs
# neither. Its tools (maturin, zig, cargo-zigbuild, auditwheel, pyspark for
# the jar's classpath) go into target/wheel-venv from
# python/requirements-wheel.txt.
set -euo pipefail
cd "$(dirname "$0")/.."
profile=${PROFILE:-release}
venv=target/wheel-venv
[ -x "$venv/bin/python" ] || "${PYTHON:-python3}" -m venv "$venv"
"$venv/bin/pip" install --quiet --disable-pip-version-check -r python/requirements-wheel.txt
export PATH="$PWD/$venv/bin:$PATH"
PYTHON="$venv/bin/python" scripts/build-jar.sh >/dev/null
# The recon command, linked for glibc 2.17 (the `.2.17` suffix is
# cargo-zigbuild's), into the directory whose scripts/ pip puts on PATH.
triple=x86_64-unknown-linux-gnu
cargo zigbuild --locked --profile "$profile" -p recon-cli --target "$triple.2.17"
dir=$([ "$profile" = dev ] && echo debug || echo "$profile")
mkdir -p python/recon_diff.data/scripts
cp "target/$triple/$dir/recon" python/recon_diff.data/scripts/recon.tmp
mv python/recon_diff.data/scripts/recon.tmp python/recon_diff.data/scripts/recon
rm -f target/wheels/recon_diff-*.whl
(cd python && maturin build --locked --profile "$profile" --zig --compatibility manylinux2014 \
  --target "$triple" --out ../target/wheels)
wheel=$(ls target/wheels/recon_diff-*.whl)
auditwheel show "$wheel"
echo "build-wheel.sh: $wheel ($(du -h "$wheel" | cut -f1))"
