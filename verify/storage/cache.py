"""Content-addressed evidence cache.

An entry is one claim's evidence, stored under the environment key (torch version and build,
device, Python) and checked against the snippet hash (the snippet, the project modules it
imports, the files it names). Editing a snippet changes its hash, so only its claims run again.
Only passing evidence is cached: a failure is run again next time, and a failing run never
overwrites what passed before. A corrupt entry is reported, ignored and run again.
"""

from __future__ import annotations

import hashlib
import shutil
from pathlib import Path
from typing import Any

from verify.core.records import Evidence, Outcome
from verify.storage.fs import CORRUPT, atomic_write_json, read_json


def env_key(probe: dict[str, Any]) -> str:
    """The environment evidence is kept under: a probe of this machine, or a record's provenance."""
    parts = [str(probe.get(k) or "") for k in ("torch", "torch_build", "device_key", "device_name", "python")]
    readable = f"{probe['device_key']}-torch{probe['torch']}-{probe['torch_build']}"
    return readable + "-" + hashlib.sha256("|".join(parts).encode()).hexdigest()[:8]


class EvidenceCache:
    def __init__(self, cache_dir: Path, probe: dict[str, Any]):
        self.dir = cache_dir / "evidence" / env_key(probe)

    def path(self, claim_id: str) -> Path:
        return self.dir / f"{claim_id}.json"

    def get(self, claim_id: str, snippet_hash: str) -> Evidence | None:
        data = read_json(self.path(claim_id))
        if data is None or data is CORRUPT or not isinstance(data, dict) or data.get("id") != claim_id:
            return None
        try:
            record = Evidence.from_json(data)
        except (KeyError, ValueError, TypeError):
            return None
        if record.outcome is not Outcome.PASS or record.snippet_hash != snippet_hash:
            return None
        return record

    def put(self, record: Evidence) -> Path | None:
        """Keep a passing record; returns the file written (None for a failure, which is not kept)."""
        if record.outcome is not Outcome.PASS:
            return None
        atomic_write_json(self.path(record.id), record.to_json())
        return self.path(record.id)


def clear(cache_dir: Path, claim_ids: list[str] | None = None) -> int:
    """Remove cached evidence (all of it, or of the given claims). Returns how many files went."""
    base = cache_dir / "evidence"
    if not base.exists():
        return 0
    if claim_ids is None:
        count = sum(1 for _ in base.rglob("*.json"))
        shutil.rmtree(base)
        return count
    count = 0
    for cid in claim_ids:
        for path in base.glob(f"*/{cid}.json"):
            path.unlink()
            count += 1
    return count
