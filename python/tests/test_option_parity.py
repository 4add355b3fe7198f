"""Every option reaches every front end that can use it: `recon diff`'s
flags, `recon.diff`'s keywords and the settings groups that carry them to
the library, `recon.spark.diff`'s keywords, and the native module's tables
that spell an option the Python way in error hints. An option added to one
front end only fails here; the exceptions below say why an option is
missing from one."""

from __future__ import annotations

import inspect
import json
import re

import pytest

from conftest import run_cli

import recon
import recon.spark
from recon import _recon, _settings

# CLI flags with no keyword, and what a Python user does instead.
CLI_ONLY = {
    "report": "Diff.to_json(path)",
    "html": "Diff.to_html(path)",
    "json": "Diff.report",
    "quiet": "nothing is printed",
    "color": "nothing is printed",
    "quick": "recon.fingerprint and recon.compare_fingerprints",
    "help": "help(recon.diff)",
}
# Flags whose keyword is spelled otherwise.
RENAMED = {"null_value": "null_values", "storage_option": "storage_options",
           "no_header": "header"}
# Keywords with no flag: the tables themselves, and pandas' index.
PYTHON_ONLY = {"source", "target", "include_index"}
# recon.diff's keywords that are not settings (each its own argument of
# the native call) rather than one of _settings' groups.
NOT_SETTINGS = {"source", "target", "rules", "by", "output", "force", "progress",
                "diff_columns", "include_index"}
# recon.diff's keywords recon.spark.diff does not take, and why.
NOT_ON_SPARK = {
    # Spark reads the tables: no file readers, databases or object stores.
    **{k: "Spark reads the tables" for k in _settings.INPUT},
    # Spark runs the job: its own threads, memory and spill.
    "threads": "Spark's parallelism", "memory_limit": "Spark's executors",
    "temp_dir": "Spark's spill", "passes": "always two passes on Spark",
    "progress": "Spark's UI", "output": "evidence is DataFrames",
    "force": "evidence is DataFrames", "include_index": "no pandas index",
}
SPARK_ONLY = {"buckets", "digests", "source_name", "target_name"}


def _cli_flags() -> set:
    p = run_cli("diff", "--help")
    assert p.returncode == 0, p.stderr
    flags = set(re.findall(r"^\s+(?:-\w, )?--([a-z0-9-]+)", p.stdout, re.M))
    assert {"key", "trim", "storage-option"} <= flags, flags
    return {f.replace("-", "_") for f in flags}


def _params(fn) -> set:
    return set(inspect.signature(fn).parameters)


def test_every_cli_flag_is_a_keyword_of_recon_diff():
    python = _params(recon.diff)
    missing = {RENAMED.get(f, f) for f in _cli_flags()} - python - set(CLI_ONLY)
    assert not missing, f"flags without a recon.diff keyword: {sorted(missing)}"


def test_every_keyword_of_recon_diff_is_a_cli_flag():
    flags = {RENAMED.get(f, f) for f in _cli_flags()}
    extra = _params(recon.diff) - flags - PYTHON_ONLY
    assert not extra, f"keywords without a flag: {sorted(extra)}"


def test_the_settings_groups_carry_every_keyword():
    groups = [_settings.RUN, _settings.THRESHOLDS, _settings.ALIGN, _settings.INPUT]
    carried = [k for g in groups for k in g]
    assert len(carried) == len(set(carried)), "an option in two groups"
    assert set(carried) == _params(recon.diff) - NOT_SETTINGS


def test_spark_takes_every_option_it_can_use():
    python, spark = _params(recon.diff), _params(recon.spark.diff)
    missing = python - spark - set(NOT_ON_SPARK)
    assert not missing, f"recon.diff keywords recon.spark.diff lacks: {sorted(missing)}"
    extra = spark - python - SPARK_ONLY
    assert not extra, f"recon.spark.diff keywords recon.diff lacks: {sorted(extra)}"
    # An exception that is no longer one is stale.
    stale = set(NOT_ON_SPARK) & spark
    assert not stale, f"listed as not on Spark, but taken: {sorted(stale)}"


# recon.diff's keywords that are no option of a diff in the library's
# table: the tables themselves, the progress callback, pandas' index.
NOT_IN_TABLE = {"source", "target", "progress", "include_index"}


def test_every_keyword_is_in_the_option_table():
    table = {o[0] for o in _recon.OPTIONS}
    python = _params(recon.diff)
    assert python - table == NOT_IN_TABLE, sorted(python - table)
    assert table <= python, f"options recon.diff lacks: {sorted(table - python)}"


def test_every_cli_flag_is_the_option_tables():
    # Each option's flag, as the table spells it, is one of recon diff's.
    flags = {f.replace("_", "-") for f in _cli_flags()}
    missing = {o[1] for o in _recon.OPTIONS} - flags
    assert not missing, f"options without their flag: {sorted(missing)}"


def test_shapes_and_switches_follow_the_table():
    # A hint names `trim=[...]` for a list, `map={...}` for a dict and
    # `by_position=True` for a switch (the native module reads the table);
    # here the keywords' behaviour must match the table's shapes: a list
    # option takes one string as a list of one, a dict option a dict, and
    # a switch defaults to False in recon.diff.
    shapes = {o[0]: o[3] for o in _recon.OPTIONS}
    for name, shape in shapes.items():
        if name not in _settings.RUN + _settings.THRESHOLDS + _settings.ALIGN + _settings.INPUT:
            continue
        given = ({"c": 1} if name == "round" else {"c": "1"}) if shape == "dict" else "x"
        sent = json.loads(_settings.settings({name: given}))
        value = next(g[name] for g in sent.values() if name in g) if shape != "switch" else None
        if shape == "dict":
            assert value == given, name
            with pytest.raises(TypeError):
                _settings.settings({name: "not a dict"})
        elif shape == "list" and name != "assume_tz":
            # assume_tz keeps one zone as a string (one for both sides).
            assert value == ["x"], name
    switches = {name for name, p in inspect.signature(recon.diff).parameters.items()
                if p.default is False and name != "include_index"}
    # header is None by default (sniffed from the file), else True or False.
    assert {n for n, s in shapes.items() if s == "switch"} == switches | {"header"}
