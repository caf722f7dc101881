"""Split the claims into N shards of about equal run time, the same way on every machine.

Snippet files stay whole (their claims share one worker and its imports). Each file weighs what
its claims took when they last ran, from the committed ``snippets/durations.json``, plus the
start-up of its worker; a claim that file does not know yet weighs the typical claim. A shard runs
ordinary claims ``LANES`` at a time and performance claims alone (timings need a quiet machine),
so a file weighs its ordinary seconds divided by ``LANES`` plus its performance seconds: a split
by plain seconds put six times the timing work into one of two shards, which then ran 1.5x as long.
The model is fixed, not this machine's core count, so that every machine computes the same split.
Files are dealt longest first to the shard with the least so far (LPT), ties broken by name and
shard number, so every shard of one run computes the same split from the same checkout.
"""

from __future__ import annotations

import statistics
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

from verify.errors import ClaimError
from verify.core.records import Evidence, JsonObject, Outcome
from verify.core.registry import ClaimSpec, Registry
from verify.settings import Settings
from verify.running.probe import now
from verify.storage import edge, schema
from verify.storage.fs import atomic_write_json, locked

FORMAT = 1
FILE = "durations.json"
DEFAULT_CLAIM_S = 1.0  # before anything was recorded
DEFAULT_STARTUP_S = 2.0
LANES = 2  # ordinary claims run this many at a time on a shard's machine (a 2-core runner)


def parse(text: str) -> tuple[int, int]:
    """``"K/N"`` -> (K, N), 1 <= K <= N."""
    k, sep, n = text.partition("/")
    if not (sep and k.isdigit() and n.isdigit() and 1 <= int(k) <= int(n)):
        raise ClaimError(f"--shard {text!r}: expected K/N with 1 <= K <= N, e.g. 1/4")
    return int(k), int(n)


@dataclass(frozen=True)
class Durations:
    """Recorded seconds per claim and per snippet file (wall time of its worker, start-up included)."""

    claims: dict[str, float]
    files: dict[str, float]
    source: str = ""  # where they were recorded: device, torch, date

    @classmethod
    def load(cls, settings: Settings) -> Durations:
        """The committed durations (:class:`verify.storage.schema.Durations`); none yet when the file is absent."""
        path = settings.snippets_dir / FILE
        rel = path.relative_to(settings.root).as_posix()
        try:
            data = edge.read(path, schema.Durations, rel, 4 << 20, what="a durations file")
        except FileNotFoundError:
            return cls({}, {})
        return cls(dict(data.claims), dict(data.files), data.recorded_on)

    def claim(self, spec: ClaimSpec) -> float:
        known = self.claims.get(spec.id)
        return known if known is not None else self._typical_claim

    def wall(self, spec: ClaimSpec) -> float:
        """Wall seconds the claim adds to a shard: its run time, shared with another lane unless it is timed."""
        return self.claim(spec) * (1.0 if spec.kind == "perf" else 1.0 / LANES)

    def startup(self, snippet: str, specs: list[ClaimSpec]) -> float | None:
        """A file's worker start-up: its recorded wall time less its claims' (None: not recorded)."""
        if snippet in self.files and all(s.id in self.claims for s in specs):
            return max(0.0, self.files[snippet] - sum(self.claims[s.id] for s in specs))
        return None

    @property
    def _typical_claim(self) -> float:
        ran = [v for v in self.claims.values() if v > 0]
        return statistics.median(ran) if ran else DEFAULT_CLAIM_S


def weights(reg: Registry, durations: Durations,
            select: Callable[[ClaimSpec], bool] | None = None) -> dict[str, float]:
    """Estimated wall seconds each snippet file's selected claims add to a shard, start-up included.

    A file whose claims all weigh nothing here (skipped: a need not met) starts no worker.
    """
    files: dict[str, list[ClaimSpec]] = {}
    for spec in reg.claims.values():
        files.setdefault(spec.snippet, []).append(spec)
    startups = {f: durations.startup(f, specs) for f, specs in files.items()}
    known = [v for v in startups.values() if v is not None]
    typical = statistics.median(known) if known else DEFAULT_STARTUP_S
    out = {}
    for f, specs in sorted(files.items()):
        chosen = [s for s in specs if select is None or select(s)]
        if not chosen:
            continue
        work = sum(durations.wall(s) for s in chosen)
        recorded = startups[f]
        start = typical if recorded is None else recorded
        out[f] = round(work + start / LANES if work > 0 else 0.0, 3)
    return out


@dataclass(frozen=True)
class Plan:
    """Which snippet files each shard runs, and the seconds it is expected to take."""

    shards: tuple[tuple[str, ...], ...]
    loads: tuple[float, ...]

    def files(self, k: int) -> frozenset[str]:
        return frozenset(self.shards[k - 1])

    @property
    def balance(self) -> float:
        """The longest shard against the mean (1.0 is perfect)."""
        mean = sum(self.loads) / len(self.loads)
        return max(self.loads) / mean if mean else 1.0


def plan(file_weights: dict[str, float], n: int) -> Plan:
    shards: list[list[str]] = [[] for _ in range(n)]
    loads = [0.0] * n
    for snippet, weight in sorted(file_weights.items(), key=lambda kv: (-kv[1], kv[0])):
        k = min(range(n), key=lambda i: (loads[i], i))
        shards[k].append(snippet)
        loads[k] += weight
    return Plan(tuple(tuple(sorted(s)) for s in shards), tuple(round(x, 3) for x in loads))


def record(settings: Settings, records: Iterable[Evidence], file_seconds: dict[str, float],
           machine: JsonObject) -> Path:
    """Update ``snippets/durations.json`` with what these records and file times say; others keep theirs.

    ``machine`` is the ``machine`` object of the bundle they came from, as it was read.

    A skipped claim (a need not met) weighs nothing on this kind of machine.
    """
    path = settings.snippets_dir / FILE
    with locked(path):
        _record(settings, path, records, file_seconds, machine)
    return path


def _record(settings: Settings, path: Path, records: Iterable[Evidence], file_seconds: dict[str, float],
            machine: JsonObject) -> None:
    old = Durations.load(settings)
    claims, files = dict(old.claims), dict(old.files)
    for rec in records:
        if rec.outcome is Outcome.SKIPPED:
            claims[rec.id] = 0.0
        elif rec.duration_s is not None:
            claims[rec.id] = round(float(rec.duration_s), 3)
    files.update({f: round(s, 2) for f, s in file_seconds.items()})
    where = " · ".join(filter(None, [str(machine.get("device_name") or ""),
                                     machine.get("torch") and f"torch {machine['torch']}", now()[:10]]))
    atomic_write_json(path, {"format": FORMAT, "about": "seconds per claim and per snippet file (its worker's wall "
                             "time), to balance `verify run --shard`; rewrite with `verify durations BUNDLE...`",
                             "recorded_on": where, "claims": dict(sorted(claims.items())),
                             "files": dict(sorted(files.items()))})
