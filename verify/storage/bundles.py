"""Evidence bundles: what one machine's run produced, and their merge into what the build shows.

``verify run --shard K/N --bundle PATH`` writes a bundle: every selected claim's record (from the
cache or run now, failures and skips included), the machine, the shard, and the wall time of each
snippet file that ran whole. A GPU recording (``evidence/<device>.json``) has the same shape.

``verify merge`` reads bundles from any machines, judges every record again by the current
claims (a stored verdict is never trusted; a record of a changed snippet stays stale), and writes
one file per device under ``evidence/``. Of two records of one claim on one device the current one
wins, then the worse (a failure over a pass: a conflict is reported by name, never settled by a
date a bundle wrote itself), then the newer (this merge's over the device file's, the later bundle
on the command line). Every bundle is read and every field checked before anything is written
(:func:`verify.storage.recorded.read`), and a record that passes a claim on a device that does not
meet its needs (a CUDA claim on a CPU) refuses its bundle, so a bad bundle changes nothing. The
merge holds the evidence lock from reading the device files to renaming the new ones, and writes
all devices' files or none. A device key can only name a file directly under ``evidence/``.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from verify.core import evidence
from verify.errors import ClaimError
from verify.core.records import Evidence, JsonObject, Machine, Origin, Outcome
from verify.core.registry import Registry
from verify.settings import Settings
from verify.storage import recorded, scan
from verify.storage.fs import atomic_write_many

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
    #: (claim, device, what was kept and why) for every choice between two records that a reader should hear of
    decisions: list[tuple[str, str, str]] = field(default_factory=list)
    dropped: list[tuple[str, str, str]] = field(default_factory=list)  # (claim, device, bundle): stale, a current one kept
    updated: int = 0  # records of the device files replaced by one of this merge with the same outcome
    unchanged: list[str] = field(default_factory=list)  # devices whose file kept every record: not written
    missing: list[str] = field(default_factory=list)  # declared claims no device file holds a record of


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None


def _device_file(settings: Settings, dev: str) -> Path:
    """``evidence/<dev>.json``, refused unless it lies directly in ``evidence/`` (read checked the key too)."""
    folder = settings.evidence_dir.resolve()
    path = (folder / f"{recorded.check_device_key(dev, 'device_key')}.json").resolve()
    if path.parent != folder:
        raise ClaimError(f"device_key {dev!r} names a file outside evidence/")
    return path


@dataclass(frozen=True)
class _Candidate:
    record: Evidence
    order: int  # the bundle's place on the command line; -1: already in evidence/<device>.json
    name: str  # the bundle, or the device file

    @property
    def said(self) -> str:
        return "failure" if self.record.bad else str(self.record.outcome)


def _choose(reg: Registry, old: _Candidate, new: _Candidate) -> tuple[_Candidate, str]:
    """Which of two records of one claim on one device is kept, and why (in the words merge prints).

    The current record (made from the snippet as it is now); of two current ones, the failure (a
    pass never hides a failure, whatever a bundle says its date is: a failure leaves the file
    when its claim's code or expectation changes, or when its record is deleted); of two with the
    same outcome, the newer (this merge's over the file's, the later bundle on the command line).
    """
    old_current, new_current = evidence.is_current(reg, old.record), evidence.is_current(reg, new.record)
    if old_current != new_current:
        return (new if new_current else old), "the other was made from an older snippet"
    if old.record.bad and not new.record.bad:
        return old, (f"kept the {old.said} of {old.name}, not the pass of {new.name}: a pass never replaces a "
                     "current failure (it leaves when the claim changes or its record is deleted)")
    if new.record.bad and not old.record.bad:
        return new, f"the {new.said} of {new.name} replaces the pass of {old.name}"
    return new, f"kept the {new.said} of {new.name}, the newer, not the {old.said} of {old.name}"


def _refuse_unmet(reg: Registry, bundle: recorded.RecordedFile, name: str) -> None:
    """A bundle whose record passes a claim on a device that does not meet the claim's needs is refused whole."""
    for cid, record in bundle.claims.items():
        spec = reg.claims.get(cid)
        if spec is None or record.outcome is Outcome.SKIPPED:
            continue
        unmet = evidence.device_unmet(spec, record)
        if unmet:
            raise ClaimError(f"{name}: claims.{cid}: {unmet}; the bundle is refused and nothing was written")


def merge(settings: Settings, paths: list[Path]) -> Report:
    """Merge the bundles at ``paths`` into ``evidence/`` (see the module's docstring): all devices or none."""
    reg = scan.load_registry(settings)
    files = [recorded.read(p, _display(settings, p)) for p in paths]  # all checked before any write
    for bundle in files:
        _refuse_unmet(reg, bundle, _display(settings, bundle.path))
    report = Report()
    with recorded.merge_lock(settings):  # from reading the device files to renaming the new ones
        atomic_write_many(_merged(settings, reg, files, report))
    return report


def _merged(settings: Settings, reg: Registry, files: list[recorded.RecordedFile], report: Report) -> dict[Path, str]:
    """The text of every device file the bundles change; ``report`` says what was chosen and why."""
    chosen: dict[str, dict[str, _Candidate]] = {}  # device -> claim -> the record kept so far
    machines: dict[str, tuple[str, JsonObject]] = {}  # device -> (created, the machine object of its latest bundle)
    for dev, records in recorded.load_all(settings).items():
        name = f"evidence/{dev}.json"
        chosen[dev] = {cid: _Candidate(evidence.rejudge_stored(reg, rec) if cid in reg.claims else rec, -1, name)
                       for cid, rec in records.items()}  # kept, even if its claim is gone
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
            new = _Candidate(replace(evidence.rejudge_stored(reg, record), origin=origin), order, name)
            old = slot.get(cid)
            if old is None:
                slot[cid] = new
                continue
            kept, why = _choose(reg, old, new)
            slot[cid] = kept
            if kept is old and not evidence.is_current(reg, new.record):
                report.dropped.append((cid, dev, name))
            elif old.order < 0 and kept is new and old.record.outcome == new.record.outcome:
                report.updated += 1  # the routine case: a fresh run of the same verdict
            else:  # two records of one merge, or a verdict that differs from the file's: said by name
                report.decisions.append((cid, dev, why))
    texts: dict[Path, str] = {}
    brought = {bundle.device_key for bundle in files}
    for dev, slot in sorted(chosen.items()):
        if dev not in brought:
            continue  # no bundle of this device: its file stays as it is
        records = {cid: c.record for cid, c in slot.items()}
        for cid, rec in sorted(records.items()):
            if cid not in reg.claims:
                continue  # an earlier record of a claim since removed: kept as it was
            if not evidence.is_current(reg, rec):
                report.stale.append((cid, dev))
            elif rec.bad:
                report.failing.append((cid, dev, f"{rec.outcome}: {rec.message}"))
        if not any(c.order >= 0 for c in slot.values()):
            # every record the bundles brought lost to the file's (a failure kept, say): the file stays as it
            # is, and what it holds still counts for the exit code
            if slot:
                report.unchanged.append(dev)
            continue
        path = _device_file(settings, dev)  # every device's file is checked before any is written
        texts[path] = recorded.render(dev, records, machines[dev][1])
        report.written[dev] = path
    report.missing = sorted(set(reg.claims) - {cid for slot in chosen.values() for cid in slot})
    return texts
