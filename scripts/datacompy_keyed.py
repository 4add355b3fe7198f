#!/usr/bin/env python3
"""Keyed comparison of a generated pair with datacompy on Polars, for the
README's keyed-mode table (recon's peer that pairs duplicate keys right,
but in memory). Not a test dependency.

    scripts/.venv/bin/pip install datacompy polars
    /usr/bin/time -v scripts/.venv/bin/python scripts/datacompy_keyed.py DIR order_id
"""
import sys

import polars as pl
from datacompy import PolarsCompare


def main():
    d, key = sys.argv[1], sys.argv[2]
    s = pl.read_parquet(f"{d}/source.parquet")
    t = pl.read_parquet(f"{d}/target.parquet")
    c = PolarsCompare(s, t, join_columns=[key])
    print("rows only in source:", c.df1_unq_rows.height)
    print("rows only in target:", c.df2_unq_rows.height)
    print("rows with unequal values:", c.all_mismatch().height)


if __name__ == "__main__":
    main()
