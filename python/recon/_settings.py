"""Keyword arguments as the engine's settings: a batch pair's shape
(``run``, ``thresholds``, ``align``, ``input``), checked by the engine in the
one place the command line's flags are."""

from __future__ import annotations

import json
import os
from typing import Any, Dict, Iterable, Mapping, Optional, Tuple

from . import _recon

# The library's option table (recon::config::option_table) sorts every
# option into its group and names the shape of its value.
_GROUPS: Dict[str, Tuple[str, ...]] = {}
for _name, _flag, _group, _shape, _help in _recon.OPTIONS:
    _GROUPS[_group] = _GROUPS.get(_group, ()) + (_name,)
RUN = _GROUPS["run"]
THRESHOLDS = _GROUPS["thresholds"]
ALIGN = _GROUPS["align"]
INPUT = _GROUPS["input"]
# Settings that take a list: a single string is a list of one (assume_tz
# keeps a single string as it is, see settings()).
LISTS = {o[0] for o in _recon.OPTIONS if o[3] == "list"}
# Settings that take {column: value}.
DICTS = {o[0] for o in _recon.OPTIONS if o[3] == "dict"}
# Switches of the settings: False is "not given" (header=False is not).
_SWITCHES = tuple(o[0] for o in _recon.OPTIONS
                  if o[3] == "switch" and o[2] in ("align", "input") and o[0] != "header")


def _as_list(name: str, value: Any) -> list:
    if isinstance(value, str):
        return [value]
    if isinstance(value, Iterable) and not isinstance(value, Mapping):
        items = list(value)
        if all(isinstance(v, str) for v in items):
            return items
    raise TypeError(f"{name}= takes a column name or a list of them, not {value!r}")


def _number_text(name: str, value: Any) -> str:
    # A bound given as a float is written as its shortest round-trip
    # decimal (repr), which is the double the user typed.
    if isinstance(value, bool):
        raise TypeError(f"{name}= values are numbers or strings, not {value!r}")
    if isinstance(value, (int, float, str)):
        return repr(value) if isinstance(value, float) else str(value)
    return str(value)  # decimal.Decimal and the like: their exact text


def _as_dict(name: str, value: Any) -> Dict[str, Any]:
    if not isinstance(value, Mapping):
        raise TypeError(f"{name}= takes a dict of column to value, not {value!r}")
    out: Dict[str, Any] = {}
    for k, v in value.items():
        if not isinstance(k, str):
            raise TypeError(f"{name}= keys are column names, not {k!r}")
        if name == "round":
            if isinstance(v, bool) or not isinstance(v, int):
                raise TypeError(f"round= takes whole numbers of places, not {v!r}")
            out[k] = v
        elif name == "tolerance":
            out[k] = _number_text(name, v)
        elif name == "storage_options":
            # object_store's settings are text; True is "true", as delta-rs takes it.
            out[k] = str(v).lower() if isinstance(v, bool) else str(v)
        else:
            if not isinstance(v, str):
                raise TypeError(f"{name}= values are strings, not {v!r}")
            out[k] = v
    return out


def settings(options: Mapping[str, Any]) -> str:
    """The JSON the native module takes; None means "not given"."""
    run: Dict[str, Any] = {}
    thresholds: Dict[str, Any] = {}
    align: Dict[str, Any] = {}
    inputs: Dict[str, Any] = {}
    for name, value in options.items():
        if value is None:
            continue
        if name in LISTS and name != "assume_tz":
            value = _as_list(name, value)
        elif name in DICTS:
            value = _as_dict(name, value)
        if name in RUN:
            if name == "passes":
                value = str(value)
            elif name == "memory_limit" and isinstance(value, int) and not isinstance(value, bool):
                value = f"{value}B"
            elif name == "temp_dir":
                value = os.fspath(value)
            run[name] = value
        elif name in THRESHOLDS:
            thresholds[name] = value
        elif name in ALIGN:
            if name == "assume_tz" and not isinstance(value, str):
                value = _as_list(name, value)
            align[name] = value
        elif name in INPUT:
            if name == "header":
                inputs["header" if value else "no_header"] = True
            else:
                inputs[name] = value
        else:  # pragma: no cover - the API's signatures list every name
            raise TypeError(f"unexpected option {name}")
    return json.dumps({"run": run, "thresholds": thresholds, "align": align, "input": inputs})


def fspath(value: Optional[Any]) -> Optional[str]:
    return None if value is None else os.fspath(value)


# The keywords recon.schema and recon.fingerprint take (recon.diff takes them all).
# The alignment options but a key's, and every input option.
SCHEMA_OPTIONS = (set(ALIGN) - {"key", "tolerance"}) | set(INPUT)
FINGERPRINT_OPTIONS = (SCHEMA_OPTIONS - {"source_format", "target_format", "source_skip_rows",
                                           "target_skip_rows", "source_query", "target_query"}
                        ) | {"threads", "temp_dir", "format", "query"}


def check_names(options: Mapping[str, Any], allowed: set, fn: str) -> None:
    for name in options:
        if name not in allowed:
            raise TypeError(f"{fn}() got an unexpected keyword argument {name!r}")


def align_input(kwargs: Dict[str, Any]) -> Dict[str, Any]:
    for flag in _SWITCHES:
        if kwargs.get(flag) is False:
            kwargs[flag] = None
    return kwargs
