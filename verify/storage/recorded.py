"""Evidence recorded on machines, committed under ``evidence/<device>.json``.

A file holds one device's records: a GPU recording (``verify record``) or what ``verify merge``
made of evidence bundles. A build shows these records beside its own; records of the build
machine's own environment (same device key, torch and Python) count as evidence from here. A
record whose snippet hash no longer matches the snippet is shown as stale, never as verified.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from verify.core.errors import ClaimError
from verify.core.records import Evidence
from verify.settings import Settings
from verify.storage.fs import CORRUPT, atomic_write_json, read_json

FORMAT = 2  # 1: the same records without a format field of their own


@dataclass
class RecordedFile:
    """One file of records of one device: a recording, a merged device file or a bundle."""

    path: Path
    device_key: str
    machine: dict[str, Any]
    claims: dict[str, Evidence]
    extra: dict[str, Any] = field(default_factory=dict)  # what a bundle adds: its shard, file times


def read(path: Path, rel: str, device_key: str | None = None) -> RecordedFile:
    """The records of ``path`` (``rel`` names it in errors); every record must be of one device."""
    data = read_json(path)
    if data is None:
        raise ClaimError(f"{rel}: no such file")
    if data is CORRUPT or not isinstance(data, dict) or not isinstance(data.get("claims"), dict):
        raise ClaimError(f"{rel}: not a recorded-evidence file (expected an object with 'claims'); fix or delete it")
    key = data.get("device_key") or device_key
    if not isinstance(key, str) or not key:
        raise ClaimError(f"{rel}: device_key: missing (the machine the records were made on)")
    out = {}
    for cid, record in data["claims"].items():
        try:
            out[cid] = Evidence.from_json(record)
        except (KeyError, ValueError, TypeError) as exc:
            raise ClaimError(f"{rel}: claims.{cid}: not an evidence record ({type(exc).__name__}: {exc}); "
                             f"fix or delete it") from None
        if out[cid].id != cid:
            raise ClaimError(f"{rel}: claims.{cid}: the record is of claim {out[cid].id!r}")
        made_on = out[cid].provenance.device_key
        if made_on and made_on != key:
            raise ClaimError(f"{rel}: claims.{cid}: recorded on {made_on}, but the file is of {key}")
    extra = {k: v for k, v in data.items() if k not in ("format", "device_key", "machine", "claims")}
    return RecordedFile(path, key, dict(data.get("machine") or {}), out, extra)


def load_all(settings: Settings) -> dict[str, dict[str, Evidence]]:
    """device key -> claim id -> record, for every file under ``evidence/``."""
    out: dict[str, dict[str, Evidence]] = {}
    for path in sorted(settings.evidence_dir.glob("*.json")):
        out[path.stem] = read(path, path.relative_to(settings.root).as_posix(), device_key=path.stem).claims
    return out


def write_file(path: Path, device_key: str, records: dict[str, Evidence], machine: dict[str, Any],
               **extra: Any) -> Path:
    """Write exactly ``records`` (atomically) as one device's file."""
    claims = {cid: r.to_json() for cid, r in sorted(records.items())}
    atomic_write_json(path, {"format": FORMAT, "device_key": device_key, "machine": machine, **extra,
                             "claims": claims})
    return path


def write(settings: Settings, device_key: str, records: dict[str, Evidence], machine: dict[str, Any]) -> Path:
    """Merge ``records`` into the device's file; claims not run this time keep their old records."""
    path = settings.evidence_dir / f"{device_key}.json"
    old = read_json(path)
    claims = dict(old["claims"]) if isinstance(old, dict) and isinstance(old.get("claims"), dict) else {}
    claims.update({cid: r.to_json() for cid, r in records.items()})
    atomic_write_json(path, {"format": FORMAT, "device_key": device_key, "machine": machine, "claims": claims})
    return path
