#!/usr/bin/env bash
# Builds python/recon/jars/recon-spark.jar, recon's digests for the JVM
# (jvm/src/main/java, docs/spark.md "The JVM digest"), and runs its
# self-test (jvm/src/test/java/.../VectorsTest.java: the spec's vectors).
#   scripts/build-jar.sh            [PYTHON=python3; RECON_PYSPARK_JARS=dir overrides pyspark's jars]
#
# The compile classpath is pyspark's own jars (no Maven). Java 11 bytecode,
# so older Spark runtimes load it. -Xlint:path is off: some of pyspark's jars
# (derby, scala) name Class-Path entries in their manifests that pyspark does
# not ship, and javac warns about each; every other lint is an error.
set -euo pipefail
cd "$(dirname "$0")/.."
started=$(date +%s%N)
py=${PYTHON:-python3}
jars=${RECON_PYSPARK_JARS:-$("$py" -c 'import os, pyspark; print(os.path.join(os.path.dirname(pyspark.__file__), "jars"))')}
if ! ls "$jars"/spark-catalyst_*.jar >/dev/null 2>&1; then
  echo "build-jar.sh: no Spark jars in $jars (pip install pyspark, or set RECON_PYSPARK_JARS)" >&2
  exit 2
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
javac --release 11 -Xlint:all,-path -Werror -encoding UTF-8 -cp "$jars/*" -d "$work/main" \
  jvm/src/main/java/dev/recon/spark/*.java
mkdir -p python/recon/jars
# Written to a temporary name and renamed, so a reader never sees half a jar.
jar --create --file python/recon/jars/.recon-spark.jar.tmp -C "$work/main" .
mv python/recon/jars/.recon-spark.jar.tmp python/recon/jars/recon-spark.jar
javac --release 11 -Xlint:all,-path -Werror -encoding UTF-8 \
  -cp "$work/main:$jars/*" -d "$work/test" jvm/src/test/java/dev/recon/spark/*.java
java -cp "$work/test:python/recon/jars/recon-spark.jar:$jars/*" dev.recon.spark.VectorsTest "$@"
ms=$(( ($(date +%s%N) - started) / 1000000 ))
echo "build-jar.sh: python/recon/jars/recon-spark.jar built and checked in $((ms / 1000)).$(printf %03d $((ms % 1000))) s" >&2
