"""Evidence recorded on other machines (a GPU run), committed under ``evidence/<device>.json``.

A CPU build shows these records beside its own. A record whose snippet hash no longer matches
the snippet is shown as stale, never as verified.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from verify.core.errors import ClaimError
from verify.core.records import Evidence
from verify.settings import Settings
from verify.storage.fs import CORRUPT, atomic_write_json, read_json

FORMAT = 2  # 1: the same records without a format field of their own


def _records(path: Path, rel: str) -> dict[str, Evidence]:
    data = read_json(path)
    if data is CORRUPT or not isinstance(data, dict) or not isinstance(data.get("claims"), dict):
        raise ClaimError(f"{rel}: not a recorded-evidence file (expected an object with 'claims'); fix or delete it")
    out = {}
    for cid, record in data["claims"].items():
        try:
            out[cid] = Evidence.from_json(record)
        except (KeyError, ValueError, TypeError) as exc:
            raise ClaimError(f"{rel}: claims.{cid}: not an evidence record ({type(exc).__name__}: {exc}); "
                             f"fix or delete it") from None
    return out


def load_all(settings: Settings, exclude: str | None = None) -> dict[str, dict[str, Evidence]]:
    """device key -> claim id -> record, for every committed evidence file but ``exclude``."""
    out: dict[str, dict[str, Evidence]] = {}
    for path in sorted(settings.evidence_dir.glob("*.json")):
        if path.stem != exclude:
            out[path.stem] = _records(path, path.relative_to(settings.root).as_posix())
    return out


def write(settings: Settings, device_key: str, records: dict[str, Evidence], machine: dict[str, Any]) -> Path:
    """Merge ``records`` into the device's file; claims not run this time keep their old records."""
    path = settings.evidence_dir / f"{device_key}.json"
    old = read_json(path)
    claims = dict(old["claims"]) if isinstance(old, dict) and isinstance(old.get("claims"), dict) else {}
    claims.update({cid: r.to_json() for cid, r in records.items()})
    atomic_write_json(path, {"format": FORMAT, "device_key": device_key, "machine": machine, "claims": claims})
    return path
