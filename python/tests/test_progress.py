"""progress=: tqdm when installed, a line on stderr otherwise, a callable as given."""

from __future__ import annotations

import pytest

from recon import _progress

SNAPSHOTS = [
    dict(phase="fingerprint", **{"pass": 1}, passes=2, rows_scanned=0, rows_total=1000,
         buckets_done=0, buckets_total=0),
    dict(phase="fingerprint", **{"pass": 1}, passes=2, rows_scanned=600, rows_total=1000,
         buckets_done=0, buckets_total=0),
    dict(phase="reconcile", **{"pass": 2}, passes=2, rows_scanned=1000, rows_total=1000,
         buckets_done=3, buckets_total=8),
]


def test_tqdm_bars_follow_the_phases(capsys):
    import tqdm  # noqa: F401  (requirements-test.txt: missing is a failure)
    report = _progress.reporter(True)
    assert isinstance(report, _progress._Tqdm)
    for s in SNAPSHOTS:
        report(s)
    assert report.label == "reconcile" and report.bar.n == 3 and report.bar.total == 8
    report.close()
    assert "recon: fingerprint (read 1 of 2)" in capsys.readouterr().err


def test_without_tqdm_a_line_on_stderr(capsys, monkeypatch):
    monkeypatch.setitem(__import__("sys").modules, "tqdm.auto", None)
    report = _progress.reporter(True)
    assert isinstance(report, _progress._Stderr)
    report.EVERY = 0.0
    for s in SNAPSHOTS:
        report(s)
    err = capsys.readouterr().err
    assert "recon: fingerprint (read 1 of 2): 600 rows of 1,000 (60%)" in err
    assert "recon: reconcile: 3 buckets of 8" in err


def test_off_and_callables():
    assert _progress.reporter(False) is None
    f = lambda s: None  # noqa: E731
    assert _progress.reporter(f) is f
    with pytest.raises(TypeError):
        _progress.reporter("yes")
