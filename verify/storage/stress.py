"""Stress records, committed under ``evidence/stress/<device>.json``: each measured claim under each variant.

One file per device. A claim's entry is keyed by its measuring code (the registry's key), like a
record: editing its sentence or its expectation keeps it, editing its code makes it stale until
``verify stress`` runs the claim again. Entries hold each variant's observed numbers, never a
verdict: :func:`verify.core.stress.judge` judges them by today's expectation whenever they are read.
A write merges into the file under a lock, so two runs on one machine lose nothing of each other's.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import msgspec

from verify.core.records import JsonObject
from verify.core.stress import Run
from verify.errors import ClaimError
from verify.settings import Settings
from verify.storage import edge, recorded, schema
from verify.storage.fs import atomic_write_json, locked

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
    """A stress file (:class:`verify.storage.schema.StressFile`), or a :class:`ClaimError` naming the file and field."""
    try:
        data = edge.read(path, schema.StressFile, rel, schema.MAX_FILE_BYTES, what="a stress file",
                         follow_symlinks=False)
    except FileNotFoundError:
        raise ClaimError(f"{rel}: no such file") from None
    if data.device_key != path.stem:
        raise ClaimError(f"{rel}: holds device {data.device_key!r}, but its name says {path.stem!r}")
    claims: dict[str, Entry] = {}
    for cid, raw in data.claims.items():
        entry = edge.decode(bytes(raw), schema.StressEntry, f"{rel}: claim {cid}", "a stress entry", whole=False)
        try:
            claims[cid] = Entry.from_json(msgspec.to_builtins(entry))
        except (KeyError, TypeError, ValueError, AttributeError) as exc:
            raise ClaimError(f"{rel}: claim {cid}: not a stress entry ({exc})") from None
    return StressFile(data.device_key, dict(data.machine), dict(data.rows), claims)


def load_all(settings: Settings) -> dict[str, StressFile]:
    """device key -> its stress file, for every file under ``evidence/stress/``."""
    return {p.stem: read(p, p.relative_to(settings.root).as_posix()) for p in sorted(folder(settings).glob("*.json"))}


def write(settings: Settings, device_key: str, machine: JsonObject, rows: JsonObject,
          entries: dict[str, Entry]) -> Path:
    """Merge ``entries`` into the device's file: the claims not stressed this time keep theirs."""
    path = path_for(settings, device_key)
    rel = path.relative_to(settings.root).as_posix()
    with locked(path):
        old = read(path, rel) if path.exists() else StressFile(device_key, {}, {}, {})
        claims: dict[str, Any] = {cid: e.to_json() for cid, e in old.claims.items()}
        claims.update({cid: e.to_json() for cid, e in entries.items()})
        atomic_write_json(path, {"format": FORMAT, "device_key": device_key, "machine": machine,
                                 "rows": {**old.rows, **rows}, "claims": dict(sorted(claims.items()))})
    return path
