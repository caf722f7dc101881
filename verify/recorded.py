"""Evidence recorded on other machines (a GPU run), committed under ``evidence/<device>.json``.

A CPU build shows these records beside its own. A record whose snippet hash no longer matches
the snippet is shown as stale, never as verified.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

from verify.errors import ClaimError
from verify.store import CORRUPT, atomic_write_json, read_json

log = logging.getLogger("mkdocs.verify")
FORMAT = 1


def evidence_dir(root: Path) -> Path:
    return root / "evidence"


def load_all(root: Path, exclude: str | None = None) -> dict[str, dict[str, dict[str, Any]]]:
    """device key -> claim id -> record, for every committed evidence file but ``exclude``."""
    out: dict[str, dict[str, dict[str, Any]]] = {}
    for path in sorted(evidence_dir(root).glob("*.json")):
        key = path.stem
        if key == exclude:
            continue
        data = read_json(path)
        if data is CORRUPT or not isinstance(data, dict) or not isinstance(data.get("claims"), dict):
            raise ClaimError(f"{path.relative_to(root)}: not a recorded-evidence file (expected an object with "
                             f"'claims'); fix or delete it")
        out[key] = data["claims"]
    return out


def write(root: Path, device_key: str, records: dict[str, dict[str, Any]], machine: dict[str, Any]) -> Path:
    """Merge ``records`` into the device's file; claims not run this time keep their old records."""
    path = evidence_dir(root) / f"{device_key}.json"
    old = read_json(path)
    claims = dict(old["claims"]) if isinstance(old, dict) and isinstance(old.get("claims"), dict) else {}
    claims.update(records)
    atomic_write_json(path, {"format": FORMAT, "device_key": device_key, "machine": machine, "claims": claims})
    return path
