"""Typed records: what a worker reports, where evidence came from, and the evidence itself.

Inside the project these are frozen dataclasses; JSON appears only at the edges (the worker pipe,
cache files, recorded ``evidence/<device>.json`` files, the site's ``evidence.json``), through
``to_json`` / ``from_json``. ``from_json`` reads every format written so far (format 1 had no
version field in cache entries: it is the same shape).
"""

from __future__ import annotations

import enum
from dataclasses import asdict, dataclass, field, fields, replace
from typing import Any

#: A JSON object as a file, a pipe or a claim gives it: only at those edges (``to_json``/``from_json``, a
#: worker's messages, a claim's observed and expected values), never for data the project itself shapes.
JsonObject = dict[str, Any]

FORMAT = 2
MAX_OBSERVED = 64 * 1024  # bytes of JSON a claim's observed values may take, where they are made and where read


class Outcome(str, enum.Enum):
    """How running a claim ended. ``BAD`` outcomes fail the build."""

    PASS = "pass"
    FAIL = "fail"  # ran; an expectation is false
    ERROR = "error"  # an unexpected exception
    TIMEOUT = "timeout"
    CRASH = "crash"  # the worker process died
    SKIPPED = "skipped"  # a need is not met here (CUDA, a compiler, a newer torch)

    @property
    def bad(self) -> bool:
        return self in BAD

    def __str__(self) -> str:
        return self.value


BAD = frozenset({Outcome.FAIL, Outcome.ERROR, Outcome.TIMEOUT, Outcome.CRASH})


@dataclass(frozen=True)
class ExceptionInfo:
    type: str
    message: str
    traceback: str = ""

    @classmethod
    def from_json(cls, data: JsonObject | None) -> ExceptionInfo | None:
        if not data:
            return None
        return cls(str(data.get("type", "")), str(data.get("message", "")), str(data.get("traceback", "")))


@dataclass(frozen=True)
class WorkerResult:
    """One claim as a worker (or the runner watching it) saw it; judged later by the parent.

    ``outcome`` is set only when the runner decided it (a timeout, a crash); otherwise the
    observation is judged against the claim's expectation.
    """

    claim_id: str
    observed: JsonObject = field(default_factory=dict)
    output: str = ""
    duration_s: float | None = None
    threads: int | None = None
    exception: ExceptionInfo | None = None
    outcome: Outcome | None = None
    message: str = ""

    def to_json(self) -> JsonObject:
        data = asdict(self)
        data["outcome"] = self.outcome.value if self.outcome else None
        return data

    @classmethod
    def from_json(cls, data: JsonObject) -> WorkerResult:
        return cls(
            claim_id=str(data.get("claim_id") or data.get("id")),
            observed=dict(data.get("observed") or {}),
            output=str(data.get("output") or ""),
            duration_s=data.get("duration_s"),
            threads=data.get("threads"),
            exception=ExceptionInfo.from_json(data.get("exception")),
            outcome=Outcome(data["outcome"]) if data.get("outcome") else None,
            message=str(data.get("message") or ""),
        )


@dataclass(frozen=True)
class Provenance:
    """Where a piece of evidence came from."""

    #: torch's version without the local part (``2.13.0``) and its build (``cpu``, ``cu128``, ``rocm``)
    torch: str | None = None
    torch_build: str | None = None
    #: ``cpu`` or ``cuda``; the processor's or GPU's name; the key evidence is kept under
    device: str | None = None
    device_name: str | None = None
    device_key: str | None = None
    #: the CPU (model name, its family/model signature, cores, vector ISA) and the GPU's compute capability
    cpu_model: str | None = None
    cpu_signature: str | None = None
    cpu_count: int | None = None
    cpu_isa: str | None = None
    gpu_capability: str | None = None
    #: the interpreter and the system it ran on; torch's intra-op threads during the claim
    python: str | None = None
    os: str | None = None
    threads: int | None = None
    #: the checkout's commit (``-dirty`` with local changes) and when the claim ran (UTC, ISO 8601)
    git_commit: str | None = None
    date: str | None = None

    def to_json(self) -> JsonObject:
        return asdict(self)

    @classmethod
    def from_json(cls, data: JsonObject | None) -> Provenance:
        return cls(**_known(cls, data or {}))

    @classmethod
    def of_machine(cls, machine: Machine, git_commit: str | None = None, date: str | None = None) -> Provenance:
        """From the machine probe's facts (those a provenance has a field for), with the commit and the date."""
        return replace(cls.from_json(machine.to_json()), git_commit=git_commit, date=date)


def _fact(default: Any = None, *, recorded: bool = False, built_on: bool = False) -> Any:
    """A field of :class:`Machine`; ``recorded``: kept in a recorded file's ``machine`` object; ``built_on``:
    in the site's ``evidence.json`` as the machine that built it."""
    return field(default=default, metadata={"recorded": recorded, "built_on": built_on})


@dataclass(frozen=True)
class Machine:
    """What the probe (:mod:`verify.running.probe`) found of this machine and its torch.

    Every fact is declared here once: ``<cache>/probe.json`` is :meth:`to_json`, a record's
    :class:`Provenance` takes the facts it has a field for, a recorded file's ``machine`` object
    and the site's ``built_on`` are the facts marked so. The order of the fields is the order of
    ``built_on`` in ``evidence.json``.
    """

    #: the processor's or GPU's name, and the key evidence and benchmarks are kept under (``cpu-amd-epyc-f26m2-avx512``)
    device_name: str = _fact("", recorded=True, built_on=True)
    device_key: str = _fact("", built_on=True)
    #: torch's version without the local part (``2.13.0``) and its build (``cpu``, ``cu128``, ``rocm``)
    torch: str = _fact("", recorded=True, built_on=True)
    torch_build: str = _fact("", recorded=True, built_on=True)
    #: the interpreter's version and the system (``Linux 6.8.0``)
    python: str = _fact("", recorded=True, built_on=True)
    os: str = _fact("", recorded=True, built_on=True)
    #: ``cpu`` or ``cuda``; the GPU's name and compute capability, the CUDA runtime torch was built for
    device: str = _fact("cpu")
    gpu_name: str | None = _fact()
    gpu_capability: str | None = _fact(recorded=True)
    cuda_runtime: str | None = _fact(recorded=True)
    #: the CPU: model name, family/model signature (``f6m167``), cores, torch's vector ISA (``AVX512``)
    cpu_model: str = _fact("", recorded=True)
    cpu_signature: str = _fact("")
    cpu_count: int = _fact(1, recorded=True)
    cpu_isa: str = _fact("")
    #: torch's intra-op threads, whether it has MKL; whether g++ is on PATH (``{"g++": True}``)
    threads: int = _fact(1)
    mkl: bool = _fact(False)
    compilers: dict[str, bool] = field(default_factory=dict)
    #: the GPU toolchain's wheels and versions in its folder (:mod:`verify.toolchain`): ``{"triton": "3.9.0", ...}``
    toolchain: dict[str, str] = field(default_factory=dict)
    #: the probe's cache key: the facts are asked again when it changes
    fingerprint: str = _fact("")

    def to_json(self) -> JsonObject:
        return asdict(self)

    @classmethod
    def from_json(cls, data: JsonObject) -> Machine:
        """The facts of ``probe.json`` (those it lacks keep their defaults; unknown ones are left out)."""
        return cls(**_known(cls, data))

    def recorded(self) -> JsonObject:
        """The ``machine`` object of a recorded evidence file or a bundle."""
        return {f.name: getattr(self, f.name) for f in fields(self) if f.metadata.get("recorded")}

    def built_on(self) -> JsonObject:
        """The ``built_on`` object of the site's ``evidence.json``, in its order."""
        return {f.name: getattr(self, f.name) for f in fields(self) if f.metadata.get("built_on")}


def _known(cls: type, data: JsonObject) -> JsonObject:
    """The entries of ``data`` that name a field of the dataclass ``cls``."""
    names = {f.name for f in fields(cls)}
    return {k: v for k, v in data.items() if k in names}


@dataclass(frozen=True)
class Origin:
    """Where a record of ``evidence/`` came from when ``verify merge`` took it from a bundle.

    A record the runner made here has none. ``commit`` is what the bundle says it ran at, checked
    against this checkout's history only when shown (the bundle may come from a fork).
    """

    bundle: str  # the bundle's file name as given to verify merge
    commit: str | None = None
    created: str | None = None  # when the bundle was written, by its own clock

    def to_json(self) -> JsonObject:
        return asdict(self)

    @classmethod
    def from_json(cls, data: Any) -> Origin | None:
        if data is None:
            return None
        if not isinstance(data, dict) or not isinstance(data.get("bundle"), str):
            raise ValueError("origin: expected an object with a 'bundle' name")
        text = {k: data.get(k) for k in ("commit", "created")}
        for name, value in text.items():
            if value is not None and not isinstance(value, str):
                raise ValueError(f"origin.{name}: {value!r} is not text")
        return cls(data["bundle"][:MAX_NAME], (text["commit"] or None) and text["commit"][:MAX_NAME],
                   (text["created"] or None) and text["created"][:40])


MAX_NAME = 200  # characters of a bundle's name or commit kept in an origin


@dataclass(frozen=True)
class Evidence:
    """One claim's evidence: the claim as declared, the verdict, the observations, the provenance."""

    id: str
    question: str
    statement: str
    kind: str
    snippet: str
    line: int
    snippet_hash: str
    expected: JsonObject
    needs: tuple[str, ...]
    outcome: Outcome
    message: str
    observed: JsonObject = field(default_factory=dict)
    output: str = ""
    traceback: str = ""
    duration_s: float | None = None
    provenance: Provenance = field(default_factory=Provenance)
    exception: ExceptionInfo | None = None  # what the claim raised, kept so the verdict can be judged again
    origin: Origin | None = None  # the bundle verify merge took it from; None: made by this checkout's runner

    @property
    def bad(self) -> bool:
        return self.outcome.bad

    def to_json(self) -> JsonObject:
        data = asdict(self)
        data.update(outcome=self.outcome.value, needs=list(self.needs), provenance=self.provenance.to_json(),
                    origin=self.origin.to_json() if self.origin else None, format=FORMAT)
        if self.origin is None:
            del data["origin"]
        return data

    @classmethod
    def from_json(cls, data: JsonObject) -> Evidence:
        """A record from a cache or recorded file; ``KeyError``/``ValueError`` when it is not one."""
        return cls(
            id=str(data["id"]),
            question=str(data.get("question", "")),
            statement=str(data.get("statement", "")),
            kind=str(data.get("kind", "fact")),
            snippet=str(data.get("snippet", "")),
            line=int(data.get("line", 0)),
            snippet_hash=str(data["snippet_hash"]),
            expected=dict(data.get("expected") or {}),
            needs=tuple(data.get("needs") or ()),
            outcome=Outcome(data["outcome"]),
            message=str(data.get("message", "")),
            observed=dict(data.get("observed") or {}),
            output=str(data.get("output") or ""),
            traceback=str(data.get("traceback") or ""),
            duration_s=data.get("duration_s"),
            provenance=Provenance.from_json(data.get("provenance")),
            exception=ExceptionInfo.from_json(data.get("exception")),
            origin=Origin.from_json(data.get("origin")),
        )

    def as_result(self) -> WorkerResult:
        """The observation this record was judged from, to judge it again."""
        exc = self.exception
        observed = dict(self.observed)
        if exc is not None and self.kind == "error":
            observed.pop("exception", None)
        return WorkerResult(self.id, observed, self.output, self.duration_s, self.provenance.threads, exc)
