"""Content-addressed evidence cache.

An entry is one claim's evidence, stored under the environment key (torch version and build,
device, Python) and checked against the snippet hash (the snippet, the project modules it
imports, the files it names). Editing a snippet changes its hash, so only its claims run again.
Only passing evidence is cached: a failure is run again next time, and a failing run never
overwrites what passed before. The latest failure of a claim is kept apart (``failed/``), for what
runs nothing: ``verify serve`` shows it as 失败 and does not run it again until the claim's code
changes, and ``verify report`` puts it into the bundle a reader sends. A corrupt entry is
reported, ignored and run again.
"""

from __future__ import annotations

import hashlib
import shutil
from pathlib import Path
from typing import Any

from verify.core.records import Evidence, Machine, Outcome, Provenance
from verify.settings import Settings, SettingsError
from verify.storage.fs import DiskMemo, empty_folder, json_memo


def env_key(of: Machine | Provenance) -> str:
    """The environment evidence is kept under: a probe of this machine, or a record's provenance."""
    parts = [str(v or "") for v in (of.torch, of.torch_build, of.device_key, of.device_name, of.python)]
    readable = f"{of.device_key}-torch{of.torch}-{of.torch_build}"
    return readable + "-" + hashlib.sha256("|".join(parts).encode()).hexdigest()[:8]


class EvidenceCache:
    def __init__(self, cache_dir: Path, machine: Machine):
        self.dir = cache_dir / "evidence" / env_key(machine)
        self.passes, self.failures = json_memo(self.dir), json_memo(self.dir / "failed")

    def path(self, claim_id: str) -> Path:
        return self.passes.path(claim_id)

    def failure_path(self, claim_id: str) -> Path:
        return self.failures.path(claim_id)

    @staticmethod
    def _read(memo: DiskMemo[Any], claim_id: str, snippet_hash: str) -> Evidence | None:
        data = memo.peek(claim_id)
        if not isinstance(data, dict) or data.get("id") != claim_id:
            return None
        try:
            record = Evidence.from_json(data)
        except (KeyError, ValueError, TypeError):
            return None
        return record if record.snippet_hash == snippet_hash else None

    def get(self, claim_id: str, snippet_hash: str) -> Evidence | None:
        record = self._read(self.passes, claim_id, snippet_hash)
        return record if record is not None and record.outcome is Outcome.PASS else None

    def get_failure(self, claim_id: str, snippet_hash: str) -> Evidence | None:
        """The latest failing run of this claim's current code here, if its last run failed."""
        record = self._read(self.failures, claim_id, snippet_hash)
        return record if record is not None and record.bad else None

    def put(self, record: Evidence) -> Path | None:
        """Keep a record: a pass as the claim's evidence, a failure apart (never over a pass).

        Returns the file written (None for a skip, which is made afresh by every verification).
        """
        if record.outcome is Outcome.PASS:
            self.failure_path(record.id).unlink(missing_ok=True)
            return self.passes.put(record.id, record.to_json())
        if record.bad:
            return self.failures.put(record.id, record.to_json())
        return None


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
        for path in [*base.glob(f"*/{cid}.json"), *base.glob(f"*/failed/{cid}.json")]:
            path.unlink()
            count += 1
    return count


def clearable(settings: Settings) -> Path:
    """The cache folder, unless it holds more than caches: ``VERIFY_CACHE_DIR`` naming the checkout, a
    folder above it or the home folder (:class:`SettingsError`)."""
    cache = settings.cache_dir
    if cache == settings.root or cache in settings.root.parents or cache == Path.home().resolve():
        raise SettingsError(f"the cache folder {cache} holds the checkout or a home folder, not only caches: "
                            "not emptied (set VERIFY_CACHE_DIR to a folder of its own)")
    return cache


def clear_all(settings: Settings, keep: set[str]) -> int:
    """Empty the cache folder (evidence, rendered pages and plots, the parse, prose and probe caches,
    compiler caches, bundles) but for the names in ``keep``: as a fresh clone, which has none.
    Returns how many files went."""
    return empty_folder(clearable(settings), keep)
