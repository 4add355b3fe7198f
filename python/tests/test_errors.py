"""Errors are recon.ReconError subclasses with one-line messages, and their
hints name the Python keyword, not the command-line flag."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import recon
from conftest import REPO, source_table


def test_error_classes_form_one_hierarchy():
    for cls in (recon.UsageError, recon.SchemaError, recon.InputError, recon.ResourceError,
                recon.CancelledError, recon.InternalError):
        assert issubclass(cls, recon.ReconError)


def test_a_missing_file_is_an_input_error_naming_it(tmp_path):
    missing = tmp_path / "nope.parquet"
    with pytest.raises(recon.InputError) as e:
        recon.diff(missing, source_table())
    assert str(missing) in str(e.value) and "\n" not in str(e.value)
    assert e.value.kind == "input"


def test_bad_values_are_usage_errors():
    with pytest.raises(recon.UsageError, match="memory_limit"):
        recon.diff(source_table(), source_table(), memory_limit="lots")
    with pytest.raises(recon.UsageError):
        recon.diff(source_table(), source_table(), threads=0)
    with pytest.raises(TypeError, match="tolerance"):
        recon.diff(source_table(), source_table(), tolerance=0.1)


def test_incompatible_tables_are_a_schema_error():
    other = source_table().drop_columns(["note"])
    with pytest.raises(recon.SchemaError, match="note"):
        recon.diff(source_table(), other)


def test_the_preamble_hint_names_skip_rows():
    d = REPO / "testdata" / "csv_preamble"
    with pytest.raises(recon.ReconError) as e:
        recon.diff(d / "customers_title.csv", d / "customers.csv")
    message = str(e.value)
    assert "skip_rows=" in message and "--skip-rows" not in message, message
    assert "skip_rows=1" in e.value.hints
    # A hint without a value names the keyword with its shape.
    assert "by_position=True" in message and "map={...}" in message, message


def test_the_padding_hint_names_trim_as_a_list(tmp_path):
    csv = tmp_path / "years.csv"
    csv.write_text("id,year\n1, 2024\n")
    typed = tmp_path / "years.parquet"
    pq.write_table(pa.table({"id": pa.array([1], pa.int64()), "year": pa.array([2024], pa.int64())}), typed)
    with pytest.raises(recon.InputError) as e:
        recon.diff(csv, typed)
    assert 'trim=["year"]' in str(e.value), str(e.value)
    assert recon.diff(csv, typed, trim=["year"]).exact_match


@pytest.mark.parametrize("name, value, spelled", [
    ("trim", "year", 'trim=["year"]'),
    ("skip_rows", "3", "skip_rows=3"),
    ("map", "a=b", 'map={"a": "b"}'),
    ("round", "amount=2", 'round={"amount": 2}'),
    ("no_header", None, "header=False"),
    ("infer_types", None, "infer_types=True"),
    ("map", None, "map={...}"),
    ("memory_limit", None, "memory_limit=..."),
    ("delimiter", ";", 'delimiter=";"'),
    ("passes", "1", "passes=1"),
    ("passes", "auto", 'passes="auto"'),
])
def test_hints_are_spelled_as_keyword_arguments(name, value, spelled):
    from recon import _recon

    assert _recon._hint_keyword(name, value) == spelled
