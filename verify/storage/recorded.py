"""Evidence recorded on machines, committed under ``evidence/<device>.json``.

A file holds one device's records: a GPU recording (``verify record``) or what ``verify merge``
made of evidence bundles. A build shows these records beside its own; records of the build
machine's own environment (same device key, torch and Python) count as evidence from here. A
record whose snippet hash no longer matches the snippet is shown as stale, never as verified.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

from verify.errors import ClaimError
from verify.core.records import MAX_OBSERVED, Evidence, JsonObject
from verify.settings import Settings
from verify.storage.fs import atomic_write_json, read_json, unique_keys

#: what the probe makes a device key (verify.running.probe.device_key): a lowercase slug, a file name
DEVICE_KEY = re.compile(r"[a-z0-9]+(?:[.-][a-z0-9]+)*")
_EARLIEST = datetime(2000, 1, 1, tzinfo=timezone.utc)

FORMAT = 2  # 1: the same records without a format field of their own


@dataclass
class RecordedFile:
    """One file of records of one device: a recording, a merged device file or a bundle."""

    path: Path
    device_key: str
    machine: JsonObject  # as the file gives it (another machine's probe, of any version): written back as it is
    claims: dict[str, Evidence]
    extra: JsonObject = field(default_factory=dict)  # what a bundle adds: its shard, file times (checked, kept as read)


def _load(path: Path, rel: str) -> Any:
    """The file's JSON, or a :class:`ClaimError` naming it: not there, not UTF-8, not JSON, a key twice."""
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        raise ClaimError(f"{rel}: no such file") from None
    except OSError as exc:
        raise ClaimError(f"{rel}: cannot be read ({exc.strerror})") from None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ClaimError(f"{rel}: not UTF-8 text (byte {exc.start}); fix or delete it") from None
    try:
        return json.loads(text, object_pairs_hook=unique_keys)
    except ValueError as exc:
        raise ClaimError(f"{rel}: not a recorded-evidence file ({exc}); fix or delete it") from None


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


def _check_record(rel: str, cid: str, record: Any, key: str, latest: datetime) -> Evidence:
    where = f"{rel}: claims.{cid}"
    try:
        evidence = Evidence.from_json(record)
    except (KeyError, ValueError, TypeError, AttributeError) as exc:
        raise ClaimError(f"{where}: not an evidence record ({type(exc).__name__}: {exc}); fix or delete it") from None
    if evidence.id != cid:
        raise ClaimError(f"{where}: the record is of claim {evidence.id!r}")
    if not isinstance(record.get("observed", {}), dict):
        raise ClaimError(f"{where}.observed: not an object")
    size = len(json.dumps(record.get("observed", {}), ensure_ascii=False))
    if size > MAX_OBSERVED:
        raise ClaimError(f"{where}.observed: {size:,} bytes of JSON, over the {MAX_OBSERVED:,} a claim may observe")
    duration = record.get("duration_s")
    if duration is not None and (isinstance(duration, bool) or not isinstance(duration, (int, float))):
        raise ClaimError(f"{where}.duration_s: {duration!r} is not a number")
    made_on = evidence.provenance.device_key
    if made_on:
        check_device_key(made_on, f"{where}.provenance.device_key")
        if made_on != key:
            raise ClaimError(f"{where}: recorded on {made_on}, but the file is of {key}")
    _check_date(evidence.provenance.date, f"{where}.provenance.date", latest)
    return evidence


def read(path: Path, rel: str, device_key: str | None = None) -> RecordedFile:
    """The records of ``path`` (``rel`` names it in errors), every field checked; all of one device.

    Bundles come from other machines and forks: a device key must be a plain slug (it becomes a
    file name), dates must parse with an offset and lie between 2000 and now, observed values
    must fit the runner's cap. A bad file is refused whole, with the field named.
    """
    data = _load(path, rel)
    if not isinstance(data, dict) or not isinstance(data.get("claims"), dict):
        raise ClaimError(f"{rel}: not a recorded-evidence file (expected an object with 'claims'); fix or delete it")
    key = check_device_key(data.get("device_key") or device_key, f"{rel}: device_key")
    latest = datetime.now(timezone.utc) + timedelta(days=1)  # a clock a little ahead is not a forgery
    if data.get("created") is not None:  # a bundle: its records were all made before it was written
        _check_date(data["created"], f"{rel}: created", latest)
        latest = min(latest, datetime.fromisoformat(data["created"]) + timedelta(minutes=1))
    commit = data.get("git_commit")
    if commit is not None and (not isinstance(commit, str) or len(commit) > 80):
        raise ClaimError(f"{rel}: git_commit: {str(commit)[:40]!r} is not a commit (text of at most 80 characters)")
    out = {cid: _check_record(rel, str(cid), record, key, latest) for cid, record in data["claims"].items()}
    machine = data.get("machine") or {}
    if not isinstance(machine, dict):
        raise ClaimError(f"{rel}: machine: not an object")
    _check_bundle_fields(rel, data)
    extra = {k: v for k, v in data.items() if k not in ("format", "device_key", "machine", "claims")}
    return RecordedFile(path, key, dict(machine), out, extra)


def _number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _check_bundle_fields(rel: str, data: JsonObject) -> None:
    """What a bundle adds beside its records: file times (seconds by snippet), its wall time, its shard."""
    files = data.get("files")
    if files is not None and not (isinstance(files, dict) and all(isinstance(k, str) and _number(v)
                                                                  for k, v in files.items())):
        raise ClaimError(f"{rel}: files: expected snippet file -> seconds")
    if data.get("wall_s") is not None and not _number(data["wall_s"]):
        raise ClaimError(f"{rel}: wall_s: {data['wall_s']!r} is not a number")
    shard = data.get("shard")
    if shard is not None and not (isinstance(shard, list) and len(shard) == 2 and all(
            isinstance(v, int) and not isinstance(v, bool) for v in shard)):
        raise ClaimError(f"{rel}: shard: {str(shard)[:40]} is not [K, N]")


def load_all(settings: Settings) -> dict[str, dict[str, Evidence]]:
    """device key -> claim id -> record, for every file under ``evidence/``."""
    out: dict[str, dict[str, Evidence]] = {}
    for path in sorted(settings.evidence_dir.glob("*.json")):
        out[path.stem] = read(path, path.relative_to(settings.root).as_posix(), device_key=path.stem).claims
    return out


def write_file(path: Path, device_key: str, records: dict[str, Evidence], machine: JsonObject,
               **extra: Any) -> Path:
    """Write exactly ``records`` (atomically) as one device's file."""
    claims = {cid: r.to_json() for cid, r in sorted(records.items())}
    atomic_write_json(path, {"format": FORMAT, "device_key": device_key, "machine": machine, **extra,
                             "claims": claims})
    return path


def write(settings: Settings, device_key: str, records: dict[str, Evidence], machine: JsonObject) -> Path:
    """Merge ``records`` into the device's file; claims not run this time keep their old records."""
    path = settings.evidence_dir / f"{device_key}.json"
    old = read_json(path)
    claims = dict(old["claims"]) if isinstance(old, dict) and isinstance(old.get("claims"), dict) else {}
    claims.update({cid: r.to_json() for cid, r in records.items()})
    atomic_write_json(path, {"format": FORMAT, "device_key": device_key, "machine": machine, "claims": claims})
    return path
