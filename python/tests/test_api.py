"""Keyless and keyed diffs, tolerances, `by`, reports, schema, and
fingerprints across the CLI and Python, in both directions."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import recon
from conftest import REPO, cli_report, run_cli, sorted_rows, source_table, target_table


def test_keyless_report_is_the_clis(pair, tmp_path):
    s, t = pair
    expected, _ = cli_report(s, t, out_dir=tmp_path)
    d = recon.diff(s, t)
    for field in ("exact_match", "source_rows", "target_rows", "source_only_rows",
                  "target_only_rows", "multiplicity", "column_drift", "encoding_version"):
        assert d.report[field] == expected[field], field
    assert d.verdict.splitlines()[0] in repr(d)
    frame = d._repr_html_()
    assert frame.startswith("<iframe srcdoc=") and "&lt;html" in frame


def test_keyed_categories_and_evidence_match_the_cli(pair, tmp_path):
    s, t = pair
    expected, cli_out = cli_report(s, t, "--key", "order_id", out_dir=tmp_path)
    d = recon.diff(source_table(), target_table(), key="order_id")
    assert d.keyed is not None
    for field in ("matched_keys", "value_mismatch", "missing_in_target", "missing_in_source",
                  "duplicate_keys"):
        assert d.keyed[field] == expected[field], field
    assert d.keyed["value_mismatch"] == 1
    for name in ("changed", "missing_in_target", "missing_in_source"):
        ours = getattr(d, name)()
        theirs = pq.read_table(cli_out / f"{name}.parquet")
        assert sorted_rows(ours) == sorted_rows(theirs), name
    assert d.changed().num_rows == 1
    with pytest.raises(recon.UsageError, match="keyed diff"):
        d.source_only()


def test_keyless_diff_has_no_keyed_evidence(pair):
    d = recon.diff(*pair)
    with pytest.raises(recon.UsageError, match="pass key="):
        d.changed()


def test_a_tolerance_absorbs_the_change():
    d = recon.diff(source_table(), target_table(), key="order_id", tolerance={"amount": 0.5})
    assert d.keyed["value_mismatch"] == 0
    d = recon.diff(source_table(), target_table(), key="order_id", tolerance={"amount": 0.49})
    assert d.keyed["value_mismatch"] == 1


def test_by_breaks_the_drift_down(pair, tmp_path):
    s, t = pair
    expected, _ = cli_report(s, t, "--by", "region", out_dir=tmp_path)
    d = recon.diff(s, t, by="region")
    assert d.report["by_group"] == expected["by_group"]


def test_thresholds_decide_passes():
    d = recon.diff(source_table(), target_table(), max_unmatched_rows=5)
    assert not d.exact_match and d.passes
    assert not recon.diff(source_table(), target_table(), max_unmatched_rows=4).passes


def test_column_options_map_exclude_and_columns():
    renamed = target_table().rename_columns(["order_id", "area", "amount", "note"])
    d = recon.diff(source_table(), renamed, map={"region": "area"}, exclude=["amount"])
    assert (d.source_only_rows, d.target_only_rows) == (2, 1)
    d = recon.diff(source_table(), target_table(), columns=["order_id"])
    assert d.report["columns"][0]["name"] == "order_id" and len(d.report["columns"]) == 1


def test_output_keeps_the_evidence_and_reports_are_written(tmp_path):
    out = tmp_path / "evidence"
    d = recon.diff(source_table(), target_table(), output=out)
    assert (out / "source_only.parquet").exists() and d.output == out
    d.to_html(tmp_path / "r.html")
    d.to_json(tmp_path / "r.json")
    d.to_junit(tmp_path / "r.xml", name="orders")
    assert "<html" in (tmp_path / "r.html").read_text()
    assert json.loads((tmp_path / "r.json").read_text())["source_only_rows"] == 3
    case = ET.parse(tmp_path / "r.xml").getroot().find(".//testcase")
    assert case.get("name") == "orders" and case.find("failure") is not None
    # A second run into the same directory needs force=True, as with --force.
    with pytest.raises(recon.UsageError, match="force"):
        recon.diff(source_table(), target_table(), output=out)
    recon.diff(source_table(), target_table(), output=out, force=True)


def test_the_temp_evidence_directory_goes_with_the_result():
    import gc

    d = recon.diff(source_table(), target_table())
    out = d.output
    assert out.exists()
    del d
    gc.collect()
    assert not out.exists()


def test_a_diff_is_not_a_truth_value():
    with pytest.raises(TypeError, match="exact_match"):
        bool(recon.diff(source_table(), source_table()))


def test_schema_lists_the_columns_with_the_verdict(pair):
    plan = recon.schema(*pair)
    assert plan.compatible
    assert [c["name"] for c in plan] == ["order_id", "region", "amount", "note"]
    other = source_table().append_column("extra", pa.array([1] * 7))
    plan = recon.schema(source_table(), other)
    assert not plan.compatible and plan.problems
    assert recon.schema(source_table(), other, ignore_extra_columns=True).compatible


def test_fingerprints_cross_between_cli_and_python(pair, tmp_path):
    s, t = pair
    cli_file = tmp_path / "cli.json"
    p = run_cli("fingerprint", str(s), "-o", str(cli_file))
    assert p.returncode == 0, p.stderr
    ours = recon.fingerprint(source_table())
    assert ours.to_dict()["total"] == json.loads(cli_file.read_text())["total"]
    # Python's file, compared by the CLI; the CLI's, compared by Python.
    py_file = tmp_path / "py.json"
    recon.fingerprint(t).save(py_file)
    p = run_cli("compare-fingerprints", str(cli_file), str(py_file))
    assert p.returncode == 1, p.stderr
    cmp = recon.compare_fingerprints(cli_file, recon.Fingerprint.load(py_file))
    assert not cmp.fingerprints_match
    assert recon.compare_fingerprints(ours, cli_file).fingerprints_match
    assert "&lt;html" in cmp._repr_html_()


def test_fingerprint_by_group_and_from_a_stream():
    by = recon.fingerprint(source_table(), by="region")
    assert len(by.to_dict()["groups"]) == 5
    reader = pa.RecordBatchReader.from_batches(source_table().schema, source_table().to_batches())
    assert recon.fingerprint(reader).to_dict()["total"] == recon.fingerprint(source_table()).to_dict()["total"]


def test_delta_and_demo_specs_read_as_on_the_command_line():
    demo = REPO / "testdata" / "demo"
    d = recon.diff(demo / "source.parquet", demo / "target.parquet")
    p = run_cli("diff", str(demo / "source.parquet"), str(demo / "target.parquet"), "--json")
    assert d.report["source_only_rows"] == json.loads(p.stdout)["source_only_rows"]


def test_progress_callback_sees_the_phases(pair):
    seen = []
    recon.diff(*pair, progress=lambda s: seen.append(s["phase"]))
    # A small pair may finish within one tick: the callback is optional
    # evidence, but whatever it saw is a phase name.
    assert set(seen) <= {"preflight", "fingerprint", "partition", "reconcile", "evidence", "done"}
