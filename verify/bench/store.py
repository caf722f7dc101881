"""Benchmark results: pytest-benchmark's JSON per device, and whether each file's results are current.

Storage is pytest-benchmark's own JSON (``--benchmark-json``), one file per device under
``benchmarks/<device_key>.json``, with two additions: ``sources`` (benchmark file -> hash of the
file and the project modules it imports, as for snippets) and ``runs`` (benchmark file -> the
date, commit and machine info of the run that produced its results). A benchmark file's results
are *stale* when its hash changed since; *missing* when it never ran on that device.
"""

from __future__ import annotations

import json
import logging
import re
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

from verify.bench.results import Results, Run
from verify.core import registry
from verify.settings import Settings
from verify.shown import safe
from verify.errors import ClaimError
from verify.storage import edge, scan, schema
from verify.storage.fs import Memo, atomic_write_json, stamp, tree_stamp

FORMAT = 1
log = logging.getLogger("mkdocs.verify")
TEST_GLOB = "tests/test_bench_*.py"

# A benchmark file marks its whole module: ``pytestmark = pytest.mark.bench`` or a list holding it.
_MARKED = re.compile(r"^pytestmark\s*=.*\bpytest\.mark\.bench\b", re.MULTILINE)

# Of the project's own modules, only these change what a benchmark measures; the rest (storage,
# rendering, the CLI) can change without making the stored results stale.
MEASURING = ("verify/bench/plugin.py", "verify/timing.py")

_HASHES: Memo[dict[str, str]] = Memo()
_LOADED: Memo[dict[str, Results]] = Memo()


def bench_files(root: Path) -> list[str]:
    """Benchmark test files (``tests/test_bench_*.py`` whose module is marked ``bench``), sorted.

    Unmarked files under the same glob (unit tests of this module) are not benchmarks: they have
    no results to store and would make a benchmark run fail for want of benchmarks.
    """
    return sorted(p.relative_to(root).as_posix() for p in root.glob(TEST_GLOB)
                  if _MARKED.search(p.read_text(encoding="utf-8")))


def _measures(rel: str) -> bool:
    return not rel.startswith("verify/") or rel in MEASURING


def source_hash(settings: Settings, rel: str) -> str:
    """What a stored result is current for: the benchmark file, its workloads, the measuring code."""
    return scan.source_key(settings, settings.root / rel, follow=_measures)


RECHECK_S = 1.0
_checked: dict[Path, tuple[float, Any]] = {}


def current_hashes(settings: Settings) -> dict[str, str]:
    """Benchmark file -> hash of it and what it imports; recomputed only when a source changed.

    The sources are stamped at most once per ``RECHECK_S`` (as the site session does): a build asks
    for every ``bench`` fence within moments, and stamping three trees each time costs more than
    rendering the fence.
    """
    root = settings.root
    now = time.monotonic()
    last = _checked.get(root)
    if last is None or now - last[0] >= RECHECK_S:
        last = (now, tree_stamp(root, (("tests", "*.py"), ("snippets", "*.py"), ("verify", "*.py"))))
        _checked[root] = last
    return dict(_HASHES.get(root, last[1], lambda: {f: source_hash(settings, f) for f in bench_files(root)}))


def load(path: Path) -> Results | None:
    """The results in ``path``; ``None`` when it is absent or not a results file of the schema's shape
    (:class:`verify.storage.schema.BenchFile`: reported as a warning naming the file and the field, which
    fails a strict build; the benchmark then shows as not measured)."""
    try:
        raw = edge.read_bytes(path, path.name, schema.MAX_FILE_BYTES)
        edge.decode(raw, schema.BenchFile, path.name, "a benchmark results file")
        return Results.from_json(json.loads(raw))
    except FileNotFoundError:
        return None
    except ClaimError as exc:
        log.warning("verify: %s", safe(exc, 2000))
        return None
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        log.warning("verify: %s: not a benchmark results file (%s)", path.name, safe(exc))
        return None


def load_all(settings: Settings) -> dict[str, Results]:
    """device key -> stored results, for every file under ``benchmarks/``; read again only when changed."""
    paths = sorted(settings.bench_dir.glob("*.json"))
    return dict(_LOADED.get(settings.bench_dir, stamp(paths),
                            lambda: {p.stem: data for p in paths if (data := load(p)) is not None}))


def merge(old: Results | None, new: Results) -> Results:
    """Results of the files that ran in ``new`` replace theirs in ``old``; the rest are kept.

    Each file that ran is noted with ``new``'s run (its date, machine and commit).
    """
    ran = set(new.sources or {})
    run = Run(new.datetime, new.machine, new.commit)
    kept = tuple(b for b in (old.benchmarks if old else ()) if b.file not in ran)
    return replace(new, format=FORMAT, benchmarks=kept + new.benchmarks,
                   sources={**((old.sources if old else None) or {}), **(new.sources or {})},
                   runs={**((old.runs if old else None) or {}), **{f: run for f in ran}})


def freshness(settings: Settings, data: Results | None) -> dict[str, str]:
    """Benchmark file -> ``current``, ``stale`` or ``missing`` for one device's results."""
    sources = (data.sources if data else None) or {}
    out = {}
    for f, h in current_hashes(settings).items():
        out[f] = "missing" if f not in sources else ("current" if sources[f] == h else "stale")
    return out


# Run inside an old tree: the hash each benchmark file then had.
_OLD_SOURCES = r"""
import json, sys
from pathlib import Path
root = Path(sys.argv[1])
from verify.settings import Settings
from verify.bench import store
print(json.dumps(store.current_hashes(Settings.for_root(root, environ={"VERIFY_CACHE_DIR": str(root / ".c")}))))
"""


def rekey(settings: Settings, source: Path, commit: str, target: Path) -> tuple[int, int]:
    """Stored results of ``commit`` under today's keys (see :mod:`verify.storage.rekey`).

    Returns (files re-keyed, files left as they were).
    """
    from verify.errors import ClaimError  # noqa: PLC0415
    from verify.storage import rekey as rk  # noqa: PLC0415
    from verify.storage.scan import ScanCache  # noqa: PLC0415

    data = load(source)
    if data is None:
        raise ClaimError(f"{source}: not a benchmark result file")
    with rk.tree_at(settings.root, commit) as tree:
        old = rk.old_code(tree, _OLD_SOURCES, commit)
        facts = ScanCache(tree, tree / ".rekey-cache")
        new = {f: registry.source_key(tree / f, facts, follow=_measures) for f in bench_files(tree)}
    moved = 0
    sources = dict(data.sources or {})
    for f, h in sources.items():
        if f in new and old.get(f) == h:
            sources[f], moved = new[f], moved + 1
    atomic_write_json(target, replace(data, sources=sources).to_json())
    return moved, len(sources) - moved
