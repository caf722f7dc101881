"""Stress records, committed under ``evidence/stress/<device>.json``: each measured claim under each variant.

One file per device. A claim's entry is keyed by its measuring code (the registry's key), like a
record: editing its sentence or its expectation keeps it, editing its code makes it stale until
``verify stress`` runs the claim again. Entries hold each variant's observed numbers, never a
verdict: :func:`verify.core.stress.judge` judges them by today's expectation whenever they are read.
A write merges into the file under a lock, so two runs on one machine lose nothing of each other's.
"""

from __future__ import annotations

import contextlib
import fcntl
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from verify.core.records import JsonObject
from verify.core.stress import Run
from verify.errors import ClaimError
from verify.settings import Settings
from verify.storage import recorded
from verify.storage.fs import atomic_write_json

FORMAT = 1
FOLDER = "stress"


@dataclass(frozen=True)
class Entry:
    """One claim's stress record on one device."""

    key: str  # the claim's measuring-code key when it ran
    kind: str
    torch: str
    date: str
    runs: dict[str, Run] = field(default_factory=dict)  # variant name -> run

    def to_json(self) -> JsonObject:
        return {"key": self.key, "kind": self.kind, "torch": self.torch, "date": self.date,
                "runs": {name: run.to_json() for name, run in sorted(self.runs.items())}}

    @classmethod
    def from_json(cls, data: JsonObject) -> Entry:
        runs = data["runs"]
        if not isinstance(runs, dict):
            raise ValueError("'runs' must be an object")
        return cls(str(data["key"]), str(data["kind"]), str(data["torch"]), str(data["date"]),
                   {str(name): Run.from_json(run) for name, run in runs.items()})


@dataclass
class StressFile:
    device_key: str
    machine: JsonObject
    rows: JsonObject  # row name -> what its check saw on this machine, or why it was dropped
    claims: dict[str, Entry]


def folder(settings: Settings) -> Path:
    return settings.evidence_dir / FOLDER


def path_for(settings: Settings, device_key: str) -> Path:
    return folder(settings) / f"{recorded.check_device_key(device_key, 'the device key')}.json"


def read(path: Path, rel: str) -> StressFile:
    """A stress file, or a :class:`ClaimError` that names the file and the field that is wrong."""
    if not path.is_file():
        raise ClaimError(f"{rel}: not a regular file")
    data = recorded._load(path, rel)  # noqa: SLF001  (one reader of committed JSON: UTF-8, no key twice)
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise ClaimError(f"{rel}: not a stress file of format {FORMAT}")
    device = recorded.check_device_key(data.get("device_key"), rel)
    if device != path.stem:
        raise ClaimError(f"{rel}: holds device {device!r}, but its name says {path.stem!r}")
    claims: dict[str, Entry] = {}
    for cid, entry in (data.get("claims") or {}).items():
        try:
            claims[cid] = Entry.from_json(entry)
        except (KeyError, TypeError, ValueError, AttributeError) as exc:
            raise ClaimError(f"{rel}: claim {cid}: not a stress entry ({exc})") from None
    machine, rows = data.get("machine", {}), data.get("rows", {})
    if not isinstance(machine, dict) or not isinstance(rows, dict):
        raise ClaimError(f"{rel}: 'machine' and 'rows' must be objects")
    return StressFile(device, machine, rows, claims)


def load_all(settings: Settings) -> dict[str, StressFile]:
    """device key -> its stress file, for every file under ``evidence/stress/``."""
    return {p.stem: read(p, p.relative_to(settings.root).as_posix()) for p in sorted(folder(settings).glob("*.json"))}


@contextlib.contextmanager
def _locked(path: Path) -> Iterator[None]:
    path.parent.mkdir(parents=True, exist_ok=True)
    with (path.parent / f".{path.name}.lock").open("a") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)


def write(settings: Settings, device_key: str, machine: JsonObject, rows: JsonObject,
          entries: dict[str, Entry]) -> Path:
    """Merge ``entries`` into the device's file: the claims not stressed this time keep theirs."""
    path = path_for(settings, device_key)
    rel = path.relative_to(settings.root).as_posix()
    with _locked(path):
        old = read(path, rel) if path.exists() else StressFile(device_key, {}, {}, {})
        claims: dict[str, Any] = {cid: e.to_json() for cid, e in old.claims.items()}
        claims.update({cid: e.to_json() for cid, e in entries.items()})
        atomic_write_json(path, {"format": FORMAT, "device_key": device_key, "machine": machine,
                                 "rows": {**old.rows, **rows}, "claims": dict(sorted(claims.items()))})
    return path
