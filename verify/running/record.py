"""Record this machine's evidence into ``evidence/<device>.json``, for other builds to show.

Meant for a GPU machine that has torch (2.11 or later) and nothing else of the project's
dependencies: it needs only the standard library and torch, and no network::

    python -m verify.running.record              # every claim
    python -m verify.running.record --only-cuda  # only the claims that need CUDA

It exits non-zero when any claim failed, after writing what it recorded.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from verify.running import engine
from verify.settings import Settings
from verify.storage import bundles, recorded


def record(settings: Settings, only_cuda: bool = False, jobs: int | None = None) -> tuple[Path, engine.Verification]:
    select = (lambda spec: "cuda" in spec.needs) if only_cuda else None
    out = engine.verify(settings, select=select, jobs=jobs, force=True)
    path = recorded.write(settings, out.probe["device_key"], out.local, bundles.machine_of(out.probe))
    return path, out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--root", type=Path, default=None,
                        help="the checkout (default: the nearest mkdocs.yml upwards from here)")
    parser.add_argument("--only-cuda", action="store_true", help="record only the claims that need CUDA")
    parser.add_argument("--jobs", type=int, default=None, help="parallel workers for ordinary claims")
    args = parser.parse_args(argv)
    start = time.monotonic()
    settings = Settings.for_root(args.root) if args.root else Settings.discover()
    path, out = record(settings, args.only_cuda, args.jobs)
    counts: dict[str, int] = {}
    for rec in out.local.values():
        counts[rec.outcome.value] = counts.get(rec.outcome.value, 0) + 1
    print(f"wrote {path}: {len(out.local)} claims on {out.probe['device_name']} (torch {out.probe['torch']}) "
          f"in {time.monotonic() - start:.0f}s: " + ", ".join(f"{v} {k}" for k, v in sorted(counts.items())))
    for failure in out.failures:
        print("  - " + failure.line(), file=sys.stderr)
    return 1 if out.failures else 0


if __name__ == "__main__":
    sys.exit(main())
