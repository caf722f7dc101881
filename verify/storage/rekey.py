"""Old records under new keys: a bundle (or benchmark results) keyed by whole-file hashes, keyed by measuring code.

Before records were keyed by their measuring code (:mod:`verify.core.measuring`), a record
carried a hash of its whole snippet file and of the judging code. Such a record still says what
was measured; to match it to today's claims, both keys are computed on the tree of the commit it
ran at: the old one by that commit's own code (in a child process, on a copy of the tree), the new
one by today's code on the same copy. A record whose old key matches gets the new key; any other
record keeps its old key and shows as stale. Benchmark result files are re-keyed the same way
(:func:`verify.bench.store.rekey`): their old hashes also carried the claims' judging code.
"""

from __future__ import annotations

import contextlib
import io
import json
import subprocess
import sys
import tarfile
import tempfile
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

from verify.core import registry
from verify.errors import ClaimError
from verify.storage import recorded
from verify.storage.scan import ScanCache

# Run inside the old tree: its own registry, with the snippet hash each claim then had.
_OLD_KEYS = r"""
import json, sys
from pathlib import Path
root = Path(sys.argv[1])
from verify.settings import Settings
from verify.storage import scan
reg = scan.load_registry(Settings.for_root(root, environ={"VERIFY_CACHE_DIR": str(root / ".rekey-cache")}))
print(json.dumps({cid: reg.files[spec.snippet] for cid, spec in reg.claims.items()}))
"""


def _tree(root: Path, commit: str, into: Path) -> None:
    out = subprocess.run(["git", "archive", "--format=tar", commit], cwd=root, capture_output=True, timeout=120)
    if out.returncode != 0:
        raise ClaimError(f"git archive {commit}: {out.stderr.decode(errors='replace').strip()[:300]}")
    with tarfile.open(fileobj=io.BytesIO(out.stdout)) as tar:
        tar.extractall(into, filter="data")


@contextlib.contextmanager
def tree_at(root: Path, commit: str) -> Iterator[Path]:
    """A copy of the checkout's tree at ``commit``, in a temporary folder."""
    with tempfile.TemporaryDirectory(prefix="verify-rekey-") as tmp:
        _tree(root, commit, Path(tmp))
        yield Path(tmp)


def old_code(tree: Path, script: str, commit: str) -> Any:
    """What ``script`` prints (JSON) when run by the old tree's own code."""
    out = subprocess.run([sys.executable, "-c", script, str(tree)], cwd=tree, capture_output=True,
                         text=True, timeout=300, env={"PYTHONPATH": str(tree), "PATH": "/usr/bin:/bin"})
    if out.returncode != 0:
        raise ClaimError(f"the code of {commit} failed on its own tree: {out.stderr.strip()[-500:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def keys_at(root: Path, commit: str) -> tuple[dict[str, str], dict[str, str]]:
    """(old key, new key) of every claim declared at ``commit``."""
    with tree_at(root, commit) as tree:
        old = old_code(tree, _OLD_KEYS, commit)
        new = registry.load(ScanCache(tree, tree / ".rekey-cache")).keys
    return old, new


def rekey(root: Path, source: Path, commit: str, target: Path) -> tuple[int, int]:
    """Write ``source``'s records to ``target`` with new keys; returns (re-keyed, left as they were)."""
    data = recorded.read(source, str(source))
    old, new = keys_at(root, commit)
    claims, moved = {}, 0
    for cid, record in data.claims.items():
        if cid in old and cid in new and record.snippet_hash == old[cid]:
            record = replace(record, snippet_hash=new[cid])
            moved += 1
        claims[cid] = record
    recorded.write_file(target, data.device_key, claims, data.machine, **data.extra)
    return moved, len(claims) - moved
