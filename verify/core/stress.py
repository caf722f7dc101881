"""The stress matrix and its verdicts: what ``verify stress`` varies, and how much room each bound kept.

A measured claim's bound must hold on CPUs we have never seen. Much of what another machine brings
can be provoked on one: another draw of the claim's random inputs, another thread count, another of
ATen's kernel paths, oneDNN's or MKL's ISA capped, a second core kept busy. Each row of
:data:`ROWS` is one such change, as data: a new one is one row. A variant is a row under one of
:data:`SEEDS`. A row that changes nothing on this machine (its check, in
``verify.running.stress``, sees the same kernels as the base row) is dropped, and the run says so.

Stress records are data, like evidence: they keep each variant's observed numbers, never a verdict,
and are judged by today's expectations whenever they are read.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from verify.core import matchers, room
from verify.core.records import JsonObject
from verify.core.registry import ClaimSpec, Registry


@dataclass(frozen=True)
class Row:
    """One change of the machine a claim runs on."""

    name: str
    what: str  # a few words for the report
    threads: str = "all"  # "all" cores or "1"
    variables: tuple[tuple[str, str], ...] = ()  # environment variables that pick a code path
    check: str = ""  # what verify.running.stress compares with the base row: aten, onednn, mkl, busy
    kinds: frozenset[str] | None = None  # the kinds of claim it applies to (None: every kind)
    busy: bool = False  # a second process keeps another core busy while the claims run
    #: calls whose results the row does not emulate a real CPU for: a claim whose measuring code makes
    #: one is skipped under the row (recorded as skipped, with :attr:`unfaithful_why`)
    unfaithful: tuple[str, ...] = ()
    unfaithful_why: str = ""


ROWS: tuple[Row, ...] = (
    Row("base", "this machine as it is: all cores, its best kernels"),
    Row("threads-1", "one thread", threads="1", check="threads"),
    Row("aten-default", "ATen's scalar kernels (ATEN_CPU_CAPABILITY=default)",
        variables=(("ATEN_CPU_CAPABILITY", "default"),), check="aten"),
    Row("aten-avx2", "ATen's AVX2 kernels, as on a CPU without AVX-512 (ATEN_CPU_CAPABILITY=avx2)",
        variables=(("ATEN_CPU_CAPABILITY", "avx2"),), check="aten"),
    Row("onednn-sse41", "oneDNN capped at SSE4.1 (ONEDNN_MAX_CPU_ISA=SSE41)",
        variables=(("ONEDNN_MAX_CPU_ISA", "SSE41"),), check="onednn", unfaithful=("_int_mm",),
        unfaithful_why="under any oneDNN cap below an AVX-512 VNNI CPU's own ISA (AVX2, even AVX512_CORE), "
                       "torch._int_mm returned wrong int32 results there, while the AVX2-only EPYC's own hardware "
                       "computed them exactly: for the int8 GEMM the cap does not stand for a real CPU"),
    Row("mkl-avx2", "MKL capped at AVX2 (MKL_ENABLE_INSTRUCTIONS=AVX2)",
        variables=(("MKL_ENABLE_INSTRUCTIONS", "AVX2"),), check="mkl"),
    Row("mkl-compatible", "MKL's conditional-reproducibility path (MKL_CBWR=COMPATIBLE)",
        variables=(("MKL_CBWR", "COMPATIBLE"),), check="mkl"),
    Row("busy-core", "a second process keeps one core busy", check="busy", kinds=frozenset({"perf"}), busy=True),
)
SEEDS: tuple[int, ...] = (0, 1, 2)  # 0: the draw every record was made with; the others shift every seed
#: variables a row sets: a base row that inherits one of them from the shell is not this machine's default
ROW_VARIABLES = frozenset(name for row in ROWS for name, _ in row.variables)


SKIPPED = "skipped"  # a run a row does not apply to (Row.unfaithful), kept so the record shows why


def unfaithful_for(row: Row, claim_text: str) -> bool:
    """Whether ``row`` skips a claim whose measuring text is ``claim_text``."""
    return any(call in claim_text for call in row.unfaithful)


def variant_name(row: Row, seed: int) -> str:
    return f"{row.name}/seed{seed}"


def row_named(name: str) -> Row:
    return next(r for r in ROWS if r.name == name)


def applies(row: Row, spec: ClaimSpec) -> bool:
    return row.kinds is None or spec.kind in row.kinds


def stressable(reg: Registry) -> list[ClaimSpec]:
    """The claims the room rule measures: measured kinds with at least one inequality bound."""
    return [s for s in reg.claims.values() if room.is_measured(s.kind) and room.bounded(s.expect)]


def numbers(observed: JsonObject) -> JsonObject:
    """What a stress record keeps of a variant's observation: its top-level numbers and booleans."""
    return {k: v for k, v in observed.items() if isinstance(v, (int, float)) and v == v and abs(v) != float("inf")}


@dataclass(frozen=True)
class Run:
    """One variant of one claim, as stored: the outcome of that run and its numbers."""

    outcome: str  # pass / fail / error / timeout / crash, as the run judged it (judged again on load)
    values: JsonObject = field(default_factory=dict)
    message: str = ""

    def to_json(self) -> JsonObject:
        return {"outcome": self.outcome, "values": dict(self.values), "message": self.message}

    @classmethod
    def from_json(cls, data: JsonObject) -> Run:
        values = data.get("values", {})
        if not isinstance(values, dict):
            raise ValueError("'values' must be an object")
        return cls(str(data["outcome"]), numbers(values), str(data.get("message", ""))[:2000])


@dataclass(frozen=True)
class Finding:
    """A bound's room under one variant, or a variant under which the claim did not hold."""

    claim: str
    variant: str
    key: str
    bound: str
    observed: float | None
    room: float  # -inf where the claim failed or raised under the variant

    @property
    def tight(self) -> bool:
        return self.room < room.ROOM

    def line(self) -> str:
        if self.observed is None:
            return f"{self.claim} under {self.variant}: {self.bound}"
        return (f"{self.claim}: {self.key} {self.bound}, observed {self.observed:.4g} under {self.variant} "
                f"({self.room:.0%} room)")


def judge(spec: ClaimSpec, runs: dict[str, Run]) -> list[Finding]:
    """Every bound's room under every variant, by today's expectation; a run that did not hold is a finding too."""
    out: list[Finding] = []
    for variant, run in sorted(runs.items()):
        if run.outcome == SKIPPED:
            continue
        if run.outcome not in ("pass", "fail"):
            out.append(Finding(spec.id, variant, "", f"{run.outcome}: {run.message[:300]}", None, float("-inf")))
            continue
        wrong = [key for key, expected in spec.expect.items()
                 if key in run.values and matchers.check({key: expected}, run.values)]
        for key in wrong:
            out.append(Finding(spec.id, variant, key, f"{key} {matchers.describe(spec.expect[key])} does not hold "
                               f"(observed {run.values[key]!r})", None, float("-inf")))
        out += [Finding(spec.id, variant, m.key, m.bound, m.observed, m.room)
                for m in room.margins(spec.expect, run.values)]
    return out


def worst(findings: list[Finding]) -> dict[tuple[str, str], Finding]:
    """(claim, key) -> the variant that left that bound least room."""
    out: dict[tuple[str, str], Finding] = {}
    for f in findings:
        slot = (f.claim, f.key)
        if slot not in out or f.room < out[slot].room:
            out[slot] = f
    return out
