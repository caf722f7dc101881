"""Evidence recorded on machines, committed under ``evidence/<device>.json``.

A file holds one device's records: a GPU recording (``verify record``) or what ``verify merge``
made of evidence bundles. A build shows these records beside its own; records of the build
machine's own environment (same device key, torch and Python) count as evidence from here. A
record whose snippet hash no longer matches the snippet is shown as stale, never as verified.
"""

from __future__ import annotations

import contextlib
import re
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import msgspec

from verify.errors import ClaimError
from verify.core.records import Evidence, JsonObject
from verify.settings import Settings
from verify.storage import edge, schema
from verify.storage.fs import atomic_write_text, dumps, locked

#: what the probe makes a device key (verify.running.probe.device_key): a lowercase slug, a file name
DEVICE_KEY = re.compile(r"[a-z0-9]+(?:[.-][a-z0-9]+)*")
_EARLIEST = datetime(2000, 1, 1, tzinfo=timezone.utc)

FORMAT = schema.FILE_FORMAT


@dataclass
class RecordedFile:
    """One file of records of one device: a recording, a merged device file or a bundle."""

    path: Path
    device_key: str
    machine: JsonObject  # as the file gives it (another machine's probe, of any version): written back as it is
    claims: dict[str, Evidence]
    extra: JsonObject = field(default_factory=dict)  # what a bundle adds: its shard, file times (checked, kept as read)


def _load(path: Path, rel: str, *, follow_symlinks: bool = True) -> schema.RecordedFile:
    """The file as a :class:`~verify.storage.schema.RecordedFile`, or a :class:`ClaimError` naming it."""
    try:
        return edge.read(path, schema.RecordedFile, rel, schema.MAX_FILE_BYTES, what="a recorded-evidence file",
                         follow_symlinks=follow_symlinks)
    except FileNotFoundError:
        raise ClaimError(f"{rel}: no such file") from None


def check_device_key(key: Any, where: str) -> str:
    if not isinstance(key, str) or not key:
        raise ClaimError(f"{where}: missing (the machine the records were made on)")
    if len(key) > 120 or not DEVICE_KEY.fullmatch(key):
        raise ClaimError(f"{where}: {key[:80]!r} is not a device key (lowercase letters, digits, '-' and '.', "
                         "as the probe writes them)")
    return key


def _check_date(text: Any, where: str, latest: datetime) -> None:
    if text is None:
        return
    try:
        when = datetime.fromisoformat(str(text))
    except ValueError:
        raise ClaimError(f"{where}: {str(text)[:40]!r} is not an ISO 8601 date") from None
    if when.tzinfo is None:
        raise ClaimError(f"{where}: {text!r} has no UTC offset")
    if not _EARLIEST <= when <= latest:
        raise ClaimError(f"{where}: {text!r} is outside 2000-01-01 .. {latest.isoformat(timespec='seconds')} "
                         "(now, or the bundle's creation): a record cannot be dated so")


def _check_record(rel: str, cid: str, raw: msgspec.Raw, key: str, latest: datetime) -> Evidence:
    where = f"{rel}: claims.{cid}"
    record = edge.decode(bytes(raw), schema.Record, where, "an evidence record", whole=False)
    if record.id != cid:
        raise ClaimError(f"{where}: the record is of claim {record.id!r}")
    evidence = Evidence.from_json(msgspec.to_builtins(record))
    made_on = evidence.provenance.device_key
    if made_on and made_on != key:
        raise ClaimError(f"{where}: recorded on {made_on}, but the file is of {key}")
    _check_date(evidence.provenance.date, f"{where}.provenance.date", latest)
    return evidence


def read(path: Path, rel: str, device_key: str | None = None, *, follow_symlinks: bool = True) -> RecordedFile:
    """The records of ``path`` (``rel`` names it in errors), every field checked; all of one device.

    Bundles come from other machines and forks: the file must have the shape
    :class:`~verify.storage.schema.RecordedFile` declares (a regular file of a capped size, a
    device key that is a plain slug, records of the schema's shape), its dates must parse with an
    offset and lie between 2000 and now, and every record must be of the file's device. A bad file
    is refused whole, with the field named.
    """
    data = _load(path, rel, follow_symlinks=follow_symlinks)
    key = check_device_key(data.device_key or device_key, f"{rel}: device_key")
    latest = datetime.now(timezone.utc) + timedelta(days=1)  # a clock a little ahead is not a forgery
    if data.created is not None:  # a bundle: its records were all made before it was written
        _check_date(data.created, f"{rel}: created", latest)
        latest = min(latest, datetime.fromisoformat(data.created) + timedelta(minutes=1))
    out = {cid: _check_record(rel, cid, raw, key, latest) for cid, raw in data.claims.items()}
    extra = {name: getattr(data, name) for name in ("created", "git_commit", "wall_s", "shard", "files")
             if getattr(data, name) is not None}
    if "shard" in extra:
        extra["shard"] = list(extra["shard"])
    return RecordedFile(path, key, dict(data.machine), out, extra)


def load_all(settings: Settings) -> dict[str, dict[str, Evidence]]:
    """device key -> claim id -> record, for every file under ``evidence/``.

    Each must be a regular file, not a symbolic link (one to another device's file would be
    rewritten under the wrong key), and hold the device its name says.
    """
    out: dict[str, dict[str, Evidence]] = {}
    for path in sorted(settings.evidence_dir.glob("*.json")):
        rel = path.relative_to(settings.root).as_posix()
        found = read(path, rel, device_key=path.stem, follow_symlinks=False)
        if found.device_key != path.stem:
            raise ClaimError(f"{rel}: holds the records of {found.device_key}, but its name says {path.stem}; "
                             "rename it or move the records")
        out[path.stem] = found.claims
    return out


def render(device_key: str, records: dict[str, Evidence], machine: JsonObject, **extra: Any) -> str:
    """The text of one device's file holding exactly ``records``."""
    claims = {cid: r.to_json() for cid, r in sorted(records.items())}
    return dumps({"format": FORMAT, "device_key": device_key, "machine": machine, **extra, "claims": claims})


def write_file(path: Path, device_key: str, records: dict[str, Evidence], machine: JsonObject,
               **extra: Any) -> Path:
    """Write exactly ``records`` (atomically) as one device's file."""
    atomic_write_text(path, render(device_key, records, machine, **extra))
    return path


def merge_lock(settings: Settings) -> contextlib.AbstractContextManager[None]:
    """The lock every read-modify-write of ``evidence/<device>.json`` files holds (merges, recordings)."""
    return locked(settings.evidence_dir / "evidence")


def write(settings: Settings, device_key: str, records: dict[str, Evidence], machine: JsonObject) -> Path:
    """Merge ``records`` into the device's file; claims not run this time keep their old records.

    The old file is read as a bundle is (a file that is not one stops the write, naming it), under
    the merge lock, so a recording and a merge never write from the same old state.
    """
    path = settings.evidence_dir / f"{check_device_key(device_key, 'device_key')}.json"
    with merge_lock(settings):
        old = read(path, path.relative_to(settings.root).as_posix(), device_key, follow_symlinks=False).claims \
            if path.exists() or path.is_symlink() else {}
        write_file(path, device_key, {**old, **records}, machine)
    return path
