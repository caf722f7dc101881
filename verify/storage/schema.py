"""The declared shapes of the project's untrusted JSON files, read through :mod:`verify.storage.edge`.

One schema per file kind: evidence records, recorded-evidence files (bundles, GPU recordings,
``evidence/<device>.json``) and the shard durations. Every string and collection has a cap, every
number is finite and bounded, a free-form value (a claim's observed and expected values, a machine
object) has a size and a depth cap, and a file names its format, refused when it is newer than this
reader. What the types cannot say (a record of the file's own device, dates in range) the readers
check after decoding, naming the field.
"""

from __future__ import annotations

import json
from typing import Annotated, Any, Literal

import msgspec
from msgspec import Meta

from verify.claim import KINDS
from verify.core.records import FORMAT as RECORD_FORMAT
from verify.core.records import MAX_OBSERVED, Outcome
from verify.storage.edge import check_depth

#: a claim id as snippets declare them (``expand.stride-zero``); printable, never markup or a path
CLAIM_ID = r"^[A-Za-z0-9][A-Za-z0-9_.\-]*$"
DEVICE_KEY = r"^[a-z0-9]+(?:[.-][a-z0-9]+)*$"

FILE_FORMAT = 2  # of a recorded-evidence file; 1: the same records without a format field of their own
KiB = 1024
MAX_RECORDS = 5_000  # records in one file (597 claims are declared today)
MAX_FILE_BYTES = 64 * KiB * KiB  # a recorded-evidence file or bundle (the largest committed one is 1.3 MB)
MAX_TEXT = 64 * KiB  # a claim's output, a traceback
MAX_LINE = 16 * KiB  # a message, a statement
MAX_NAME = 300  # a name, a path, a version, a date
MAX_FREE = 64 * KiB  # JSON bytes of an expected value or a machine object

Text = Annotated[str, Meta(max_length=MAX_TEXT)]
Line = Annotated[str, Meta(max_length=MAX_LINE)]
Name = Annotated[str, Meta(max_length=MAX_NAME)]
ClaimId = Annotated[str, Meta(pattern=CLAIM_ID, max_length=120)]
DeviceKey = Annotated[str, Meta(pattern=DEVICE_KEY, max_length=120)]
Seconds = Annotated[float, Meta(ge=0, le=1e7)]  # finite by the bound; msgspec refuses NaN and Infinity in JSON
Count = Annotated[int, Meta(ge=0, le=1 << 20)]


def _free(value: Any, name: str, cap: int) -> None:
    """A free-form JSON value: at most ``cap`` bytes of JSON and :data:`~verify.storage.edge.MAX_DEPTH` deep."""
    check_depth(value)
    size = len(json.dumps(value, ensure_ascii=False))
    if size > cap:
        raise ValueError(f"{name}: {size:,} bytes of JSON, over the {cap:,} it may take")


class Note(msgspec.Struct):
    """``observed.evidence``: how a GPU-side claim was made (compiled, simulated, from specs)."""

    kind: Name
    targets: Annotated[list[Name], Meta(max_length=64)] = []
    tools: Annotated[dict[Name, Name], Meta(max_length=64)] = {}
    gpus: Annotated[list[Name], Meta(max_length=64)] = []


class Timing(msgspec.Struct):
    """A timing observation (``verify.timing``): every ``*_s`` and the spread are finite numbers."""

    median_s: Seconds
    min_s: Seconds | None = None
    q1_s: Seconds | None = None
    q3_s: Seconds | None = None
    spread: Annotated[float, Meta(ge=0, le=1e6)] | None = None


def _convert(value: Any, kind: type, where: str) -> None:
    """``value`` checked as ``kind``; a ``ValueError`` that names ``where`` (msgspec adds the outer path)."""
    try:
        msgspec.convert(value, kind, strict=True)
    except msgspec.ValidationError as exc:
        text, _, path = str(exc).partition(" - at `$")
        raise ValueError(f"{where}{path.rstrip('`')}: {text[:1].lower()}{text[1:]}".replace("`", "")) from None


def _observed_shapes(value: Any, name: str) -> None:
    """The values the pages format: a timing's seconds are numbers, a making note's tools map names to versions."""
    stack: list[tuple[str, Any]] = [(name, value)]
    while stack:
        where, item = stack.pop()
        if isinstance(item, dict):
            if "median_s" in item:
                _convert({k: v for k, v in item.items() if k in Timing.__struct_fields__}, Timing, where)
            if isinstance(item.get("evidence"), dict) and where == name:
                _convert(item["evidence"], Note, f"{where}.evidence")
            stack.extend((f"{where}.{k}", v) for k, v in item.items())
        elif isinstance(item, list):
            stack.extend((f"{where}[{i}]", v) for i, v in enumerate(item))


class Provenance(msgspec.Struct):
    torch: Name | None = None
    torch_build: Name | None = None
    device: Literal["cpu", "cuda"] | None = None
    device_name: Name | None = None
    device_key: DeviceKey | None = None
    cpu_model: Name | None = None
    cpu_signature: Name | None = None
    cpu_count: Count | None = None
    cpu_isa: Name | None = None
    gpu_capability: Name | None = None
    python: Name | None = None
    os: Name | None = None
    threads: Count | None = None
    git_commit: Name | None = None
    date: Name | None = None


class ExceptionInfo(msgspec.Struct):
    type: Name = ""
    message: Line = ""
    traceback: Text = ""


class Origin(msgspec.Struct):
    bundle: Name
    commit: Name | None = None
    created: Name | None = None


class Record(msgspec.Struct):
    """One claim's evidence as a file stores it (:class:`verify.core.records.Evidence`)."""

    id: ClaimId
    snippet_hash: Annotated[str, Meta(min_length=1, max_length=128)]
    outcome: Literal[tuple(o.value for o in Outcome)]  # type: ignore[valid-type]
    format: Annotated[int, Meta(ge=1, le=RECORD_FORMAT)] = 1
    question: Name = ""
    statement: Line = ""
    kind: Literal[KINDS] = "fact"  # type: ignore[valid-type]
    snippet: Name = ""
    line: Annotated[int, Meta(ge=0, le=1_000_000)] = 0
    expected: dict[str, Any] = {}
    needs: Annotated[list[Annotated[str, Meta(max_length=40)]], Meta(max_length=32)] = []
    message: Line = ""
    observed: dict[str, Any] = {}
    output: Text = ""
    traceback: Text = ""
    duration_s: Seconds | None = None
    provenance: Provenance | None = None
    exception: ExceptionInfo | None = None
    origin: Origin | None = None

    def __post_init__(self) -> None:
        _free(self.expected, "expected", MAX_FREE)
        _free(self.observed, "observed", MAX_OBSERVED)
        _observed_shapes(self.observed, "observed")


class RecordedFile(msgspec.Struct):
    """A bundle (``verify run --bundle``), a GPU recording, or ``evidence/<device>.json``.

    ``claims`` is read raw: each record is decoded on its own, so that an error names its claim.
    """

    claims: Annotated[dict[ClaimId, msgspec.Raw], Meta(max_length=MAX_RECORDS)]
    format: Annotated[int, Meta(ge=1, le=FILE_FORMAT)] = 1
    device_key: DeviceKey | None = None
    machine: dict[str, Any] = {}
    created: Name | None = None
    git_commit: Annotated[str, Meta(max_length=80)] | None = None
    wall_s: Seconds | None = None
    shard: tuple[Annotated[int, Meta(ge=1, le=10_000)], Annotated[int, Meta(ge=1, le=10_000)]] | None = None
    files: Annotated[dict[Name, Seconds], Meta(max_length=MAX_RECORDS)] | None = None

    def __post_init__(self) -> None:
        _free(self.machine, "machine", MAX_FREE)
        if self.shard is not None and self.shard[0] > self.shard[1]:
            raise ValueError(f"shard: {list(self.shard)} is not [K, N] with K <= N")


class Durations(msgspec.Struct):
    """``snippets/durations.json``: seconds per claim and per snippet file."""

    format: Annotated[int, Meta(ge=1, le=1)] = 1
    about: Line = ""
    recorded_on: Name = ""
    claims: Annotated[dict[ClaimId, Seconds], Meta(max_length=MAX_RECORDS)] = {}
    files: Annotated[dict[Name, Seconds], Meta(max_length=MAX_RECORDS)] = {}


class StressEntry(msgspec.Struct):
    """One claim's runs under ``verify stress`` (:class:`verify.storage.stress.Entry`)."""

    key: Name
    kind: Literal[KINDS]  # type: ignore[valid-type]
    torch: Name
    date: Name
    runs: Annotated[dict[Name, dict[str, Any]], Meta(max_length=1024)] = {}

    def __post_init__(self) -> None:
        _free(self.runs, "runs", MAX_OBSERVED * 16)


class StressFile(msgspec.Struct):
    """``evidence/stress/<device>.json``."""

    format: Literal[1]
    device_key: DeviceKey
    machine: dict[str, Any] = {}
    rows: Annotated[dict[Name, Any], Meta(max_length=256)] = {}
    claims: Annotated[dict[ClaimId, msgspec.Raw], Meta(max_length=MAX_RECORDS)] = {}  # each a StressEntry

    def __post_init__(self) -> None:
        _free(self.machine, "machine", MAX_FREE)
        _free(self.rows, "rows", MAX_FREE)


class BenchEntry(msgspec.Struct):
    """One pytest-benchmark entry as ``benchmarks/<device>.json`` keeps it (its other fields kept as read)."""

    fullname: Name
    name: Name = ""
    group: Name | None = None
    param: Name | None = None
    params: dict[str, Any] | None = None
    extra_info: dict[str, Any] = {}
    stats: dict[str, Any] = {}
    options: dict[str, Any] = {}

    def __post_init__(self) -> None:
        _free(self.extra_info, "extra_info", MAX_OBSERVED)
        _free(self.stats, "stats", MAX_OBSERVED)
        _free(self.params or {}, "params", MAX_FREE)
        _free(self.options, "options", MAX_FREE)
        _observed_shapes(self.extra_info, "extra_info")
        for name in ("median", "mean", "min", "max", "q1", "q3", "iqr", "stddev"):
            value = self.stats.get(name)
            if value is not None and not (isinstance(value, (int, float)) and not isinstance(value, bool) and value >= 0):
                raise ValueError(f"stats.{name}: {str(value)[:40]!r} is not a number of seconds")


class BenchFile(msgspec.Struct):
    """``benchmarks/<device>.json``: pytest-benchmark's JSON with the project's ``sources``, ``runs`` and ``format``."""

    benchmarks: Annotated[list[BenchEntry], Meta(max_length=MAX_RECORDS)]
    format: Annotated[int, Meta(ge=1, le=1)] | None = None
    version: Name | None = None
    datetime: Name | None = None
    sources: Annotated[dict[Name, Name], Meta(max_length=MAX_RECORDS)] = {}
    runs: Annotated[dict[Name, dict[str, Any]], Meta(max_length=MAX_RECORDS)] | None = None
    machine_info: dict[str, Any] = {}
    commit_info: dict[str, Any] = {}

    def __post_init__(self) -> None:
        _free(self.machine_info, "machine_info", MAX_FREE)
        _free(self.commit_info, "commit_info", MAX_FREE)
        _free(self.runs or {}, "runs", MAX_FILE_BYTES // 16)
