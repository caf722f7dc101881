"""Evidence bundles: what one machine's run produced, and their merge into what the build shows.

``verify run --shard K/N --bundle PATH`` writes a bundle: every selected claim's record (from the
cache or run now, failures and skips included), the machine, the shard, and the wall time of each
snippet file that ran whole. A GPU recording (``evidence/<device>.json``) has the same shape.

``verify merge`` reads bundles from any machines, judges every record again by the current
claims (a stored verdict is never trusted; a record of a changed snippet stays stale), and writes
one file per device under ``evidence/``. Of two records of one claim on one device the current one
wins, then the worse (a failure over a pass: a conflict is reported, never settled by a date a
bundle wrote itself), then the later bundle on the command line. Every bundle is read and every
field checked before anything is written (:func:`verify.storage.recorded.read`), so a bad bundle
changes nothing, and a device key can only name a file directly under ``evidence/``.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from verify.core import evidence
from verify.errors import ClaimError
from verify.core.records import Evidence, JsonObject, Machine, Origin
from verify.core.registry import Registry
from verify.settings import Settings
from verify.storage import recorded, scan

KIND = "verify-bundle"


CHECKOUT = "<checkout>"


def _scrubbed(value: Any, paths: list[tuple[str, str]]) -> Any:
    if isinstance(value, str):
        for local, placeholder in paths:
            value = value.replace(local, placeholder)
        return value
    if isinstance(value, dict):
        return {k: _scrubbed(v, paths) for k, v in value.items()}
    if isinstance(value, list):
        return [_scrubbed(v, paths) for v in value]
    return value


def scrub(record: Evidence, root: Path) -> Evidence:
    """The record without this machine's paths: the checkout becomes ``<checkout>``, the home folder ``~``.

    A bundle is attached to an issue: it must not carry where a reader keeps their files (a
    traceback names the checkout and the interpreter's folder, a warning the scratch folder).
    """
    paths = sorted({(str(p), CHECKOUT) for p in (root, root.resolve())} |
                   {(str(p), "~") for p in (Path.home(), Path.home().resolve()) if str(p) not in ("/", "")},
                   key=lambda pair: -len(pair[0]))
    return Evidence.from_json(_scrubbed(record.to_json(), paths))


def write(path: Path, machine: Machine, records: dict[str, Evidence], *, shard: tuple[int, int] | None,
          file_seconds: dict[str, float], wall_s: float, git_commit: str, created: str,
          root: Path | None = None) -> Path:
    """A bundle; with ``root``, each record is :func:`scrub`-bed of the checkout's and the home folder's paths."""
    if root is not None:
        records = {cid: scrub(r, root) for cid, r in records.items()}
    return recorded.write_file(path, machine.device_key, records, machine.recorded(), kind=KIND,
                               shard=list(shard) if shard else None, created=created, git_commit=git_commit,
                               wall_s=round(wall_s, 2), files=dict(sorted(file_seconds.items())))


def _display(settings: Settings, path: Path) -> str:
    try:
        return path.resolve().relative_to(settings.root).as_posix()
    except ValueError:
        return str(path)


@dataclass
class Report:
    """What a merge did, for the command to print."""

    written: dict[str, Path] = field(default_factory=dict)  # device key -> file
    bundles: list[tuple[str, str, int]] = field(default_factory=list)  # (bundle, device, records)
    failing: list[tuple[str, str, str]] = field(default_factory=list)  # (claim, device, message): current and bad
    stale: list[tuple[str, str]] = field(default_factory=list)  # (claim, device): made from an older snippet
    unknown: list[tuple[str, str]] = field(default_factory=list)  # (claim, bundle): no snippet declares it
    replaced: list[tuple[str, str, str]] = field(default_factory=list)  # (claim, device, the bundle that lost)
    dropped: list[tuple[str, str, str]] = field(default_factory=list)  # (claim, device, bundle): stale, a current one kept
    missing: list[str] = field(default_factory=list)  # declared claims no device file holds a record of


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None


def _rank(reg: Registry, record: Evidence, order: int) -> tuple[bool, bool, int]:
    return evidence.is_current(reg, record), record.bad, order


def _device_file(settings: Settings, dev: str) -> Path:
    """``evidence/<dev>.json``, refused unless it lies directly in ``evidence/`` (read checked the key too)."""
    folder = settings.evidence_dir.resolve()
    path = (folder / f"{recorded.check_device_key(dev, 'device_key')}.json").resolve()
    if path.parent != folder:
        raise ClaimError(f"device_key {dev!r} names a file outside evidence/")
    return path


def merge(settings: Settings, paths: list[Path]) -> Report:
    reg = scan.load_registry(settings)
    files = [recorded.read(p, _display(settings, p)) for p in paths]  # all checked before any write
    report = Report()
    chosen: dict[str, dict[str, tuple[Evidence, int, str]]] = {}  # device -> claim -> (record, order, origin)
    machines: dict[str, tuple[str, JsonObject]] = {}  # device -> (created, the machine object of its latest bundle)
    for dev, records in recorded.load_all(settings).items():
        chosen[dev] = {cid: (rec, -1, f"evidence/{dev}.json") for cid, rec in records.items()}  # kept, even if gone
    for order, bundle in enumerate(files):
        name = _display(settings, bundle.path)
        dev = bundle.device_key
        report.bundles.append((name, dev, len(bundle.claims)))
        created = str(bundle.extra.get("created") or "")
        if dev not in machines or created >= machines[dev][0]:
            machines[dev] = (created, bundle.machine)
        slot = chosen.setdefault(dev, {})
        origin = Origin(bundle.path.name, _text(bundle.extra.get("git_commit")), created or None)
        for cid, record in bundle.claims.items():
            if cid not in reg.claims:
                report.unknown.append((cid, name))
                continue
            record = replace(evidence.rejudge_stored(reg, record), origin=origin)
            old = slot.get(cid)
            if old is None or _rank(reg, record, order) > _rank(reg, old[0], old[1]):
                if old is not None and old[1] >= 0:
                    report.replaced.append((cid, dev, old[2]))
                slot[cid] = (record, order, name)
            elif not evidence.is_current(reg, record) and evidence.is_current(reg, old[0]):
                report.dropped.append((cid, dev, name))
            elif old[1] >= 0:
                report.replaced.append((cid, dev, name))
    for dev, slot in sorted(chosen.items()):
        if not any(order >= 0 for _, order, _ in slot.values()):
            continue  # no bundle of this device: its file stays as it is
        records = {cid: rec for cid, (rec, _, _) in slot.items()}
        for cid, rec in sorted(records.items()):
            if cid not in reg.claims:
                continue  # an earlier record of a claim since removed: kept as it was
            if not evidence.is_current(reg, rec):
                report.stale.append((cid, dev))
            elif rec.bad:
                report.failing.append((cid, dev, f"{rec.outcome}: {rec.message}"))
        report.written[dev] = recorded.write_file(_device_file(settings, dev), dev, records, machines[dev][1])
    report.missing = sorted(set(reg.claims) - {cid for slot in chosen.values() for cid in slot})
    return report
