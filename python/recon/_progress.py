"""Progress while the engine runs: phases, rate and ETA, through tqdm when
it is installed, else a line on stderr every two seconds.

The engine calls back about ten times a second with a dict of counters:
``phase`` (preflight, fingerprint, partition, reconcile, evidence, done),
``pass`` and ``passes`` (the read of the inputs under way, of how many),
``rows_scanned``/``rows_total`` and ``buckets_done``/``buckets_total``.
"""

from __future__ import annotations

import sys
import time
from typing import Any, Callable, Dict, Optional

Callback = Callable[[Dict[str, Any]], None]

READS = ("fingerprint", "partition")


def _label(s: Dict[str, Any]) -> str:
    if s["phase"] in READS and s["passes"] > 1:
        return f"{s['phase']} (read {s['pass']} of {s['passes']})"
    return s["phase"]


def _done_total(s: Dict[str, Any]):
    if s["phase"] == "reconcile":
        return s["buckets_done"], s["buckets_total"], "buckets"
    return s["rows_scanned"], s["rows_total"], "rows"


class _Tqdm:
    def __init__(self, tqdm: Any) -> None:
        self.tqdm = tqdm
        self.bar = None
        self.label = None

    def __call__(self, s: Dict[str, Any]) -> None:
        label = _label(s)
        done, total, unit = _done_total(s)
        if label != self.label:
            self.close()
            self.label = label
            self.bar = self.tqdm(total=total or None, desc=f"recon: {label}", unit=f" {unit}",
                                 unit_scale=True, leave=False, file=sys.stderr)
        if total and self.bar.total != total:
            self.bar.total = total
        self.bar.update(max(0, done - self.bar.n))

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()
            self.bar = None


class _Stderr:
    """A plain line every two seconds (notebooks without tqdm, logs)."""

    EVERY = 2.0

    def __init__(self) -> None:
        self.last = 0.0
        self.label = None
        self.started = time.monotonic()
        self.base = 0

    def __call__(self, s: Dict[str, Any]) -> None:
        now = time.monotonic()
        label = _label(s)
        done, total, unit = _done_total(s)
        if label != self.label:
            self.label, self.started, self.base = label, now, done
        if now - self.last < self.EVERY:
            return
        self.last = now
        rate = (done - self.base) / max(now - self.started, 1e-9)
        line = f"recon: {label}: {done:,} {unit}"
        if total:
            line += f" of {total:,} ({100 * done / total:.0f}%)"
        line += f", {rate:,.0f} {unit}/s"
        if total and rate > 0 and done < total:
            line += f", about {(total - done) / rate:.0f} s left"
        print(line, file=sys.stderr, flush=True)

    def close(self) -> None:
        pass


def reporter(progress: Any) -> Optional[Any]:
    """The callback for ``progress=``: None (on when stderr is a terminal),
    True, False, or a function taking the counters dict."""
    if progress is None:
        progress = sys.stderr is not None and hasattr(sys.stderr, "isatty") and sys.stderr.isatty()
    if progress is False:
        return None
    if progress is True:
        try:
            from tqdm.auto import tqdm
        except ImportError:
            return _Stderr()
        return _Tqdm(tqdm)
    if callable(progress):
        return progress
    raise TypeError(f"progress= takes True, False, None or a function, not {progress!r}")
