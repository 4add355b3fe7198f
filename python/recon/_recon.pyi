"""Type stubs for the native module (crates/recon-python). The public API
is recon/_api.py, which is typed in place."""

from os import PathLike
from typing import Any, Callable, Dict, Optional, Tuple, Union

__version__: str
ENCODING_VERSION: int

_Table = Tuple[str, Any, str]
_Path = Union[str, PathLike]

class ReconError(Exception):
    kind: str
    path: Optional[str]
    hints: list[str]

class UsageError(ReconError): ...
class SchemaError(ReconError): ...
class InputError(ReconError): ...
class ResourceError(ReconError): ...
class CancelledError(ReconError): ...
class InternalError(ReconError): ...

class DiffResult:
    exact_match: bool
    passes: bool
    verdict: str
    def json(self) -> str: ...
    def text(self) -> str: ...
    def html(self) -> str: ...
    def junit(self, name: str) -> str: ...

class ComparisonResult:
    fingerprints_match: bool
    verdict: str
    def json(self) -> str: ...
    def text(self) -> str: ...
    def html(self) -> str: ...

def diff(
    source: _Table,
    target: _Table,
    settings: str,
    *,
    rules: Optional[_Path] = None,
    output: Optional[_Path] = None,
    force: bool = False,
    report: Optional[_Path] = None,
    by: Optional[str] = None,
    diff_columns: Optional[str] = None,
    progress: Optional[Callable[[Dict[str, Any]], None]] = None,
) -> DiffResult: ...
def schema(
    source: _Table, target: _Table, settings: str, *, rules: Optional[_Path] = None
) -> Tuple[str, str]: ...
def fingerprint(
    table: _Table,
    settings: str,
    *,
    rules: Optional[_Path] = None,
    by: Optional[str] = None,
    schema_like: Optional[_Path] = None,
    progress: Optional[Callable[[Dict[str, Any]], None]] = None,
) -> str: ...
def load_fingerprint(path: _Path) -> str: ...
def compare_fingerprints(a: Tuple[_Path, str], b: Tuple[_Path, str]) -> ComparisonResult: ...
def defaults() -> Tuple[int, int]: ...
