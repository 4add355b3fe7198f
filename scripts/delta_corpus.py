#!/usr/bin/env python3
"""Runs recon over every Delta table version of a corpus against delta-rs's rows.

For each folder under CORPUS holding a `_delta_log/` and each version its
log names (commit JSONs and checkpoints), this asks delta-rs's DataFusion
reader for the version's rows (`QueryBuilder().register(...).execute(
"select * from t")`; not `to_pyarrow_table`, which drops the values of
column-mapped tables), writes them to a Parquet file in a temporary folder,
and runs

    recon diff delta:TABLE@V expected.parquet -q

The outcome is tabulated per version:

- match: recon exits 0;
- drift: recon exits 1 (the `--json` counts are shown);
- refused: recon exits 2 (its one-line reason is shown);
- unreadable: delta-rs itself cannot read the version (its reason is shown).

Usage (from the repository root, with the fixture venv, see
scripts/requirements-fixtures.txt):

    scripts/.venv/bin/python scripts/delta_corpus.py \
        --recon target/debug/recon /path/to/delta-rs/crates/test/tests/data

Exit 0 when every version delta-rs reads compares equal (or differs only
where delta-rs is known to misread, DELTA_RS_MISREADS), 1 otherwise.
"""

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile

import pyarrow as pa
import pyarrow.parquet as pq
from deltalake import DeltaTable, QueryBuilder


def tables(corpus):
    """Every folder under `corpus` holding a `_delta_log/`, sorted."""
    found = []
    for here, dirs, _ in os.walk(corpus):
        if "_delta_log" in dirs:
            found.append(here)
            dirs[:] = []
        else:
            dirs.sort()
    return sorted(found)


def versions(table):
    """Versions named by the log's commits and checkpoints, ascending."""
    seen = set()
    for name in os.listdir(os.path.join(table, "_delta_log")):
        m = re.match(r"^(\d{20})\.(json|checkpoint(\.\d+\.\d+)?(\.[0-9a-f-]+)?\.parquet)$", name)
        if m:
            seen.add(int(m.group(1)))
    return sorted(seen)


def one_line(text):
    """The first non-empty line of `text`, shortened."""
    for line in text.splitlines():
        if line.strip():
            return line.strip()[:300]
    return text.strip()[:300]


def delta_rs_rows(table, version, out):
    """Writes delta-rs's rows of `version` to `out`; None, or why not."""
    try:
        dt = DeltaTable(table, version=version)
        # The result is an arro3 reader; pyarrow takes it through the C stream interface.
        rows = pa.table(QueryBuilder().register("t", dt).execute("select * from t"))
    except Exception as e:  # delta-rs's own refusal, of any kind
        return one_line(f"{type(e).__name__}: {e}")
    try:
        pq.write_table(rows, out)
    except pa.ArrowInvalid:
        # delta-rs can hand back NULLs under a non-nullable nested field (a
        # NULL variant's `metadata`): the same values, declared nullable (views as plain
        # strings and binaries, which pyarrow writes there).
        pq.write_table(rows.cast(nullable(rows.schema)), out)
    return None


def nullable_type(t):
    # pyarrow 26 cannot write view types nested under a struct it slices.
    if pa.types.is_binary_view(t):
        return pa.binary()
    if pa.types.is_string_view(t):
        return pa.string()
    if pa.types.is_struct(t):
        return pa.struct([pa.field(f.name, nullable_type(f.type), True) for f in t])
    if pa.types.is_large_list(t):
        return pa.large_list(pa.field(t.value_field.name, nullable_type(t.value_type), True))
    if pa.types.is_list(t):
        return pa.list_(pa.field(t.value_field.name, nullable_type(t.value_type), True))
    if pa.types.is_map(t):
        return pa.map_(t.key_type, pa.field("value", nullable_type(t.item_type), True))
    return t


def nullable(schema):
    return pa.schema([pa.field(f.name, nullable_type(f.type), True) for f in schema])


# Versions where delta-rs's rows are known to be wrong, and why: a drift
# there is recon reading what the writer wrote. Checked by
# scripts/make_delta_rs_expected.py against the log's statistics.
DELTA_RS_MISREADS = {
    "table_with_edge_timestamps@0": "delta-rs reads INT96 9999-12-31 and 9999-12-30 in nanoseconds, "
    "overflowing into 1816-03-29 and 1816-03-28; the log's stats say 9999",
}


def run_recon(recon, table, version, expected):
    """(outcome, detail) of recon on one version."""
    source = f"delta:{table}@{version}"
    quiet = subprocess.run([recon, "diff", source, expected, "-q"], capture_output=True, text=True)
    if quiet.returncode == 0:
        return "match", ""
    if quiet.returncode == 1:
        report = subprocess.run([recon, "diff", source, expected, "--json"], capture_output=True, text=True)
        try:
            r = json.loads(report.stdout)
            detail = (
                f"source-only rows {r.get('source_only_rows')}, target-only rows {r.get('target_only_rows')}, "
                f"differing columns {', '.join(r.get('column_drift', {}).get('differing', [])) or '-'}"
            )
        except json.JSONDecodeError:
            detail = one_line(report.stdout or report.stderr)
        return "drift", detail
    # The paths are in the table's name already.
    detail = one_line(quiet.stderr.replace(source, "SOURCE").replace(expected, "EXPECTED"))
    if quiet.stderr.strip().count("\n") > 0:
        detail += "  [message spans several lines]"
    return "refused", detail


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("corpus", help="folder holding Delta tables (e.g. delta-rs's crates/test/tests/data)")
    ap.add_argument("--recon", default="target/debug/recon", help="recon binary (default target/debug/recon)")
    ap.add_argument("--only", help="only tables whose path contains this")
    args = ap.parse_args()
    corpus = os.path.abspath(args.corpus)
    counts = {"match": 0, "drift": 0, "refused": 0, "unreadable": 0}
    unexplained = 0
    lines = []
    with tempfile.TemporaryDirectory() as tmp:
        for table in tables(corpus):
            if args.only and args.only not in table:
                continue
            name = os.path.relpath(table, corpus)
            for v in versions(table):
                expected = os.path.join(tmp, f"{name.replace(os.sep, '_')}_v{v}.parquet")
                why = delta_rs_rows(table, v, expected)
                if why is not None:
                    outcome, detail = "unreadable", why
                else:
                    outcome, detail = run_recon(args.recon, table, v, expected)
                counts[outcome] += 1
                known = DELTA_RS_MISREADS.get(f"{name}@{v}")
                if outcome == "drift" and known:
                    detail += f" (known: {known})"
                elif outcome in ("drift", "refused"):
                    unexplained += 1
                lines.append(f"{outcome:<10} {name}@{v}" + (f"  {detail}" if detail else ""))
                print(lines[-1], flush=True)
    print()
    print("  ".join(f"{k} {v}" for k, v in counts.items()))
    print(f"not equal and not a known delta-rs misread: {unexplained}")
    sys.exit(0 if unexplained == 0 else 1)


if __name__ == "__main__":
    main()
