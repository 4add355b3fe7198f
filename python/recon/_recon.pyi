"""Type stubs for the native module (crates/recon-python). The public API
is recon/_api.py, which is typed in place."""

from os import PathLike
from typing import Any, Callable, Dict, List, Optional, Tuple, Union

__version__: str
ENCODING_VERSION: int
# The library's option table: (name, flag, group, shape, help) per option.
OPTIONS: List[Tuple[str, str, str, str, str]]

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
    def digests_json(self) -> str: ...

class FingerprintHandle:
    has_sketch: bool
    def json(self) -> str: ...
    def save(self, path: _Path) -> None: ...

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
    sketch: Optional[int] = None,
    progress: Optional[Callable[[Dict[str, Any]], None]] = None,
) -> FingerprintHandle: ...
def load_fingerprint(path: _Path) -> FingerprintHandle: ...
def parse_fingerprint(name: _Path, text: str) -> FingerprintHandle: ...
def compare_fingerprints(a: FingerprintHandle, b: FingerprintHandle) -> ComparisonResult: ...
def extract(
    table: _Table,
    settings: str,
    digests_name: _Path,
    digests: str,
    like: FingerprintHandle,
    output: _Path,
    *,
    rules: Optional[_Path] = None,
    schema_like: Optional[_Path] = None,
    progress: Any = None,
) -> Tuple[str, int, int]: ...
def defaults() -> Tuple[int, int]: ...
def _hint_keyword(name: str, value: Optional[str] = None) -> str: ...

# recon.spark (crates/recon-python/src/spark.rs)
class SparkComparison:
    @property
    def all_agree(self) -> bool: ...
    @property
    def rows(self) -> Tuple[int, int]: ...
    @property
    def differing(self) -> List[int]: ...
    @property
    def decoded(self) -> int: ...
    @property
    def undecoded(self) -> int: ...
    def selector(self) -> bytes: ...
    def keep_all(self) -> bytes: ...

class SparkDigester:
    def select(self, batch: Any) -> Optional[Any]: ...

class SparkPlan:
    @property
    def sample(self) -> int: ...
    def compared(self, side: str) -> List[str]: ...
    def bucket_sums(self, side: str, batches: Any, bits: int) -> bytes: ...
    def compare(self, source: List[bytes], target: List[bytes], bits: int) -> SparkComparison: ...
    def converted(self) -> List[str]: ...
    def key(self, side: str) -> List[str]: ...
    def complete_keyed(
        self,
        kept: DiffResult,
        rows: Tuple[int, int],
        duplicate_keys: int,
        duplicate_rows: int,
        null_key_rows: int,
        bits: int,
        differing: int,
        threads: int,
        pass1: float,
        rest: float,
        digests: Optional[str] = None,
    ) -> DiffResult: ...
    def digester(self, side: str, selector: bytes) -> SparkDigester: ...
    def fingerprint_part(self, batches: Any, sketch: Optional[int] = None) -> bytes: ...
    def assemble_fingerprint(
        self, table: str, parts: List[bytes], by: Optional[str] = None,
        sketch: Optional[int] = None,
    ) -> FingerprintHandle: ...
    def fingerprint_from_sums(
        self, table: str, sums: List[bytes], bits: int,
    ) -> FingerprintHandle: ...
    def extract_part(self, batches: Any, digests: str) -> List[Any]: ...
    def report(
        self,
        comparison: SparkComparison,
        stats: Any,
        samples_source: Any,
        samples_target: Any,
        threads: int,
        rows_shuffled: Optional[int],
        pass1: float,
        rest: float,
        digests: Optional[str] = None,
    ) -> DiffResult: ...

def spark_plan_pair(
    source: Tuple[str, Any], target: Tuple[str, Any], settings: str,
    rules: Optional[Tuple[str, str]] = None,
) -> SparkPlan: ...
def spark_plan_keyed(
    source: Tuple[str, Any], target: Tuple[str, Any], settings: str,
    rules: Optional[Tuple[str, str]] = None,
) -> SparkPlan: ...
def spark_plan_table(
    table: Tuple[str, Any], settings: str, rules: Optional[Tuple[str, str]] = None,
    by: Optional[str] = None,
) -> SparkPlan: ...
