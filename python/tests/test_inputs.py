"""Every kind of input gives the CLI's answer on the same data as Parquet:
the same counts and the same evidence rows."""

from __future__ import annotations

import pyarrow as pa
import pyarrow.dataset as ds
import pyarrow.parquet as pq
import pytest

import recon
from conftest import cli_report, sorted_rows, source_table, target_table


def _pl():
    import polars  # a test dependency (requirements-test.txt): missing is a failure

    return polars


class CStreamOnly:
    """An object that only speaks the Arrow PyCapsule stream protocol."""

    def __init__(self, table: pa.Table) -> None:
        self.table = table

    def __arrow_c_stream__(self, requested_schema=None):
        return self.table.__arrow_c_stream__(requested_schema)


def _duckdb(table: pa.Table):
    import duckdb

    con = duckdb.connect()
    con.register("t", table)
    return con.sql("select * from t")


KINDS = {
    "str path": lambda t, path: str(path),
    "pathlib.Path": lambda t, path: path,
    "pyarrow.Table": lambda t, path: t,
    "pyarrow.RecordBatch": lambda t, path: t.combine_chunks().to_batches()[0],
    "pyarrow.RecordBatchReader": lambda t, path: pa.RecordBatchReader.from_batches(
        t.schema, t.to_batches(max_chunksize=2)),
    "pyarrow.dataset": lambda t, path: ds.dataset(path),
    "polars.DataFrame": lambda t, path: _pl().from_arrow(t),
    "polars.LazyFrame": lambda t, path: _pl().from_arrow(t).lazy().filter(
        _pl().col("order_id") > 0),
    "pandas.DataFrame": lambda t, path: t.to_pandas(),
    "duckdb relation": lambda t, path: _duckdb(t),
    "__arrow_c_stream__": lambda t, path: CStreamOnly(t),
}


@pytest.mark.parametrize("kind", sorted(KINDS))
def test_every_input_kind_gives_the_clis_answer(kind, pair, tmp_path):
    s_path, t_path = pair
    expected, cli_out = cli_report(s_path, t_path, out_dir=tmp_path)
    make = KINDS[kind]
    d = recon.diff(make(source_table(), s_path), make(target_table(), t_path), threads=2)
    assert not d.exact_match
    assert (d.source_rows, d.target_rows) == (expected["source_rows"], expected["target_rows"])
    assert (d.source_only_rows, d.target_only_rows) == (
        expected["source_only_rows"], expected["target_only_rows"]) == (3, 2)
    assert sorted_rows(d.source_only()) == sorted_rows(pq.read_table(cli_out / "source_only.parquet"))
    assert sorted_rows(d.target_only()) == sorted_rows(pq.read_table(cli_out / "target_only.parquet"))


def test_mixed_inputs_a_file_against_a_dataframe(pair):
    s_path, _ = pair
    d = recon.diff(s_path, source_table().to_pandas())
    assert d.exact_match, repr(d)


def test_pandas_index_is_a_column_only_when_asked():
    df = source_table().to_pandas()
    shifted = df.copy()
    shifted.index = shifted.index + 100
    assert recon.diff(df, shifted).exact_match
    with pytest.raises(recon.SchemaError):
        # The index is a column on one side only.
        recon.diff(df, shifted.reset_index(), include_index=False)
    d = recon.diff(df, shifted, include_index=True)
    assert not d.exact_match and d.source_only_rows == len(df)


def test_polars_string_views_and_pyarrow_strings_agree():
    pl = _pl()
    # polars hands strings over as string_view, pyarrow as utf8.
    assert recon.diff(pl.from_arrow(source_table()), source_table()).exact_match


def test_a_stream_is_read_once(pair):
    reader = pa.RecordBatchReader.from_batches(source_table().schema, source_table().to_batches())
    assert recon.diff(reader, source_table()).exact_match
    # A consumed pyarrow reader would export an empty stream: refused.
    with pytest.raises(recon.UsageError, match="read once"):
        recon.diff(reader, source_table())


def test_an_unknown_object_is_refused_naming_its_type():
    with pytest.raises(TypeError, match="source: cannot read a builtins.dict"):
        recon.diff({"a": [1]}, source_table())
