"""Benchmark results as the project reads them: one device's stored file and each benchmark's result.

A file is pytest-benchmark's JSON (``--benchmark-json``) with the project's additions (see
:mod:`verify.bench.store`). It holds much that the project never reads (pytest-benchmark's options,
every round's time, the CPU's flags), so each record keeps the JSON it was read from and writes it
back as it was; the typed fields beside it are what tables, plots and comparisons read.
``from_json`` / ``to_json`` are the only places that see the file's JSON.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from verify.core.records import JsonObject


def _text(value: Any) -> str | None:
    return None if value is None else str(value)


def _int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


@dataclass(frozen=True)
class Benchmark:
    """One benchmark's result: pytest-benchmark's entry (``entry``), with what the project reads of it."""

    fullname: str  # ``tests/test_bench_x.py::test_y[param]``
    name: str  # ``test_y[param]``
    group: str | None
    param: str | None
    #: ``extra_info``: the parameters (size, variant, ...) and measurements (median_s, GBps, fraction, ...)
    #: that the benchmark wrote, under names of its choosing
    info: JsonObject
    round_median: float | None  # pytest-benchmark's median of a round (``inner`` calls), seconds
    rounds: int | None
    entry: JsonObject = field(repr=False)

    @property
    def file(self) -> str:
        """The benchmark file it belongs to."""
        return self.fullname.split("::")[0]

    @property
    def label(self) -> str:
        """Its variant, or its test's name: what a table row and a plot's line are called."""
        return str(self.info.get("variant") or self.name.split("[")[0])

    @property
    def per_call(self) -> float:
        """Seconds per call: the plugin's median, else pytest-benchmark's round median over ``inner``."""
        if "median_s" in self.info:
            return float(self.info["median_s"])
        if self.round_median is None:
            raise ValueError(f"{self.fullname}: no median (neither extra_info.median_s nor stats.median)")
        return self.round_median / float(self.info.get("inner", 1))

    def fraction_shown(self, limits: JsonObject) -> float | None:
        """Its fraction of the machine's limit, where the limit is of the level its data lives in.

        A FLOP/s fraction always is. A bandwidth fraction is given only where a call moves at least
        half the bytes of the copy that measured the limit (one of its buffers, larger than the
        caches): a smaller working set may sit in a cache, and against main memory's bandwidth it
        would read as 367%. None: not shown.
        """
        fraction = self.info.get("fraction")
        if not isinstance(fraction, (int, float)) or isinstance(fraction, bool):
            return None
        if "limit_GBps" not in self.info:
            return float(fraction)
        moved, copy = self.info.get("bytes"), limits.get("copy_bytes")
        if not isinstance(moved, (int, float)) or not isinstance(copy, (int, float)) or moved < copy / 2:
            return None
        return float(fraction)

    def to_json(self) -> JsonObject:
        return self.entry

    @classmethod
    def from_json(cls, data: JsonObject) -> Benchmark:
        stats = data.get("stats") or {}
        median = stats.get("median")
        info = data.get("extra_info") or {}
        return cls(fullname=str(data["fullname"]), name=str(data.get("name", "")), group=_text(data.get("group")),
                   param=_text(data.get("param")), info=dict(info) if isinstance(info, dict) else {},
                   round_median=None if median is None else float(median), rounds=_int(stats.get("rounds")),
                   entry=data)


@dataclass(frozen=True)
class BenchMachine:
    """What a run says of its machine: pytest-benchmark's ``machine_info`` with the plugin's additions
    (``info``, as written), and the facts a page shows of it."""

    gpu_name: str | None
    cpu_model: str | None
    cpu_count: int | None
    threads: int | None
    torch: str | None
    torch_build: str | None
    limits: dict[str, float]  # this machine's measured limits: copy_GBps, matmul_<dtype>_GFLOPs
    info: JsonObject = field(repr=False)

    @property
    def name(self) -> str:
        """The GPU's name, else the CPU's; ``?`` when it says neither."""
        return self.gpu_name or self.cpu_model or "?"

    @classmethod
    def from_json(cls, data: JsonObject) -> BenchMachine:
        limits = data.get("limits") or {}
        return cls(gpu_name=_text(data.get("gpu_name")), cpu_model=_text(data.get("cpu_model")),
                   cpu_count=_int(data.get("cpu_count")), threads=_int(data.get("threads")),
                   torch=_text(data.get("torch")), torch_build=_text(data.get("torch_build")),
                   limits=dict(limits) if isinstance(limits, dict) else {}, info=data)


def _machine(data: Any) -> BenchMachine | None:
    return BenchMachine.from_json(data) if isinstance(data, dict) else None


@dataclass(frozen=True)
class Commit:
    """The commit a run was made at, as pytest-benchmark's ``commit_info`` gives it."""

    id: str | None = None
    dirty: bool | None = None
    branch: str | None = None

    def to_json(self) -> JsonObject:
        return {"id": self.id, "dirty": self.dirty, "branch": self.branch}

    @classmethod
    def from_json(cls, data: Any) -> Commit:
        if not isinstance(data, dict):
            return cls()
        return cls(data.get("id"), data.get("dirty"), data.get("branch"))


@dataclass(frozen=True)
class Run:
    """The run that produced one benchmark file's stored results: its date, machine and commit."""

    datetime: str | None
    machine: BenchMachine | None
    commit: Commit

    def to_json(self) -> JsonObject:
        return {"datetime": self.datetime, "machine_info": self.machine.info if self.machine else None,
                "commit_info": self.commit.to_json()}

    @classmethod
    def from_json(cls, data: Any) -> Run:
        data = data if isinstance(data, dict) else {}
        return cls(_text(data.get("datetime")), _machine(data.get("machine_info")), Commit.from_json(data.get("commit_info")))


_OURS = ("benchmarks", "sources", "runs", "format")


@dataclass(frozen=True)
class Results:
    """A results file: one device's stored results (``benchmarks/<device>.json``), or one pytest run's.

    ``sources`` (benchmark file -> the hash of its source when it ran; ``"failed"`` after a failed
    run), ``runs`` (benchmark file -> the run its results come from) and ``format`` are the project's
    additions, ``None`` where the file has none (pytest-benchmark's own output). ``datetime``,
    ``machine`` and ``commit`` are pytest-benchmark's, of the latest run; ``other`` is every field
    the project does not read, those three included, as written.
    """

    benchmarks: tuple[Benchmark, ...]
    sources: dict[str, str] | None = None
    runs: dict[str, Run] | None = None
    format: int | None = None
    datetime: str | None = None
    machine: BenchMachine | None = None
    commit: Commit = field(default_factory=Commit)
    other: JsonObject = field(default_factory=dict, repr=False)

    def run_of(self, file: str) -> Run | None:
        return (self.runs or {}).get(file)

    def machine_of(self, file: str) -> BenchMachine | None:
        """The machine ``file``'s results were measured on: its run's, else the file's latest."""
        run = self.run_of(file)
        return run.machine if run is not None and run.machine is not None and run.machine.info else self.machine

    def to_json(self) -> JsonObject:
        data = {**self.other, "benchmarks": [b.to_json() for b in self.benchmarks]}
        if self.sources is not None:
            data["sources"] = dict(self.sources)
        if self.runs is not None:
            data["runs"] = {f: run.to_json() for f, run in self.runs.items()}
        if self.format is not None:
            data["format"] = self.format
        return data

    @classmethod
    def from_json(cls, data: JsonObject) -> Results:
        """A results file's JSON; ``KeyError``/``TypeError``/``ValueError`` when it is not one."""
        sources, runs = data.get("sources"), data.get("runs")
        return cls(
            benchmarks=tuple(Benchmark.from_json(b) for b in data["benchmarks"]),
            sources=None if sources is None else {str(f): str(h) for f, h in sources.items()},
            runs=None if runs is None else {str(f): Run.from_json(r) for f, r in runs.items()},
            format=_int(data.get("format")),
            datetime=_text(data.get("datetime")),
            machine=_machine(data.get("machine_info")),
            commit=Commit.from_json(data.get("commit_info")),
            other={k: v for k, v in data.items() if k not in _OURS},
        )
