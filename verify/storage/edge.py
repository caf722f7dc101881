"""The one reader of untrusted files: a regular file, capped while read, decoded against a declared schema.

Bundles, evidence files, benchmark files, durations and progress files come from other machines,
forks and careless hands. Each kind declares its schema as :mod:`msgspec` types (sizes, counts and
formats in ``Meta`` constraints) and is read here, at the edge, so that:

- only a regular file is opened (a FIFO would block, ``/dev/zero`` never ends), with ``O_NONBLOCK``
  so that opening a FIFO cannot hang either, and a symlink is refused where the caller says so;
- the bytes are counted as they are read, never trusted from ``st_size`` (0 for devices and
  ``/proc``): a file over the cap is refused after ``cap + 1`` bytes;
- the text is UTF-8 JSON in which no object names a key twice, no number is NaN or infinite
  (JSON has no such literal, and a number too large for a double is refused), nesting stays within
  :data:`MAX_DEPTH` in free-form fields (:func:`check_depth`), and the value has the declared shape (msgspec's strict mode: no ``"1"`` for 1);
- every failure is a :class:`~verify.errors.ClaimError` that names the file and the field.
"""

from __future__ import annotations

import errno
import os
import re
import stat
from pathlib import Path
from typing import Any, TypeVar

import msgspec

from verify.errors import ClaimError

T = TypeVar("T")

MAX_DEPTH = 64  # arrays and objects inside one another; no file the project writes nests deeper than 12
_CHUNK = 1 << 16


class FileRefused(ClaimError):
    """An untrusted file that cannot be read as its kind: the message names the file and what is wrong."""


def read_bytes(path: Path, rel: str, cap: int, *, follow_symlinks: bool = True) -> bytes:
    """At most ``cap`` bytes of the regular file ``path``; :class:`FileRefused` otherwise.

    ``FileNotFoundError`` passes through (callers decide whether a missing file is an error).
    """
    flags = os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0)
    if not follow_symlinks:
        flags |= os.O_NOFOLLOW
    try:
        fd = os.open(path, flags)
    except FileNotFoundError:
        raise
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise FileRefused(f"{rel}: is a symbolic link; evidence files must be plain files in the folder") from None
        raise FileRefused(f"{rel}: cannot be opened ({exc.strerror})") from None
    try:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            what = "a folder" if stat.S_ISDIR(mode) else "a pipe" if stat.S_ISFIFO(mode) else "not a regular file"
            raise FileRefused(f"{rel}: is {what}; only a regular file can be read")
        chunks: list[bytes] = []
        size = 0
        while size <= cap:
            chunk = os.read(fd, min(_CHUNK, cap + 1 - size))
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
    except OSError as exc:
        raise FileRefused(f"{rel}: cannot be read ({exc.strerror})") from None
    finally:
        os.close(fd)
    if size > cap:
        raise FileRefused(f"{rel}: larger than {cap:,} bytes, the most a file of its kind may have")
    return b"".join(chunks)


def check_depth(value: Any, limit: int = MAX_DEPTH) -> None:
    """``ValueError`` when the free-form JSON ``value`` nests arrays and objects more than ``limit`` deep.

    A schema's typed fields bound their own depth; its free-form ones (a claim's observed and expected
    values, a machine object) call this from ``__post_init__``, where msgspec names the field.
    """
    level = [(value, 0)]
    while level:
        item, depth = level.pop()
        if isinstance(item, (dict, list)):
            if depth >= limit:
                raise ValueError(f"nested more than {limit} levels deep")
            children = item.values() if isinstance(item, dict) else item
            level.extend((child, depth + 1) for child in children)


def _duplicate_key(data: bytes) -> str | None:
    """The first key an object gives twice (msgspec keeps the later copy silently), found by the stdlib parser."""
    import json

    class _Twice(Exception):
        pass

    def pairs(items: list[tuple[str, Any]]) -> dict[str, Any]:
        seen: dict[str, Any] = {}
        for key, value in items:
            if key in seen:
                raise _Twice(key)
            seen[key] = value
        return seen

    try:
        json.loads(data, object_pairs_hook=pairs)
    except _Twice as twice:
        return str(twice.args[0])
    except ValueError:
        return None
    return None


def decode(data: bytes, kind: type[T], rel: str, what: str = "a file of its kind", *, whole: bool = True) -> T:
    """``data`` as ``kind`` (a msgspec type), strictly; :class:`FileRefused` naming ``rel``, ``what`` it should be
    and the field. ``whole=False``: ``data`` is a part of a file already decoded whole (a record of a bundle),
    whose check for a key given twice covered it."""
    try:
        data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise FileRefused(f"{rel}: not UTF-8 text (byte {exc.start}); fix or delete it") from None
    try:
        value = msgspec.json.decode(data, type=kind, strict=True)
    except msgspec.ValidationError as exc:
        raise FileRefused(f"{rel}: not {what}: {_where(str(exc))}; fix or delete it") from None
    except msgspec.DecodeError as exc:
        raise FileRefused(f"{rel}: not {what} (not JSON: {exc}); fix or delete it") from None
    except RecursionError:
        raise FileRefused(f"{rel}: nested too deeply to read") from None
    twice = _duplicate_key(data) if whole else None
    if twice is not None:
        raise FileRefused(f"{rel}: the key {twice[:80]!r} appears twice in one object; fix or delete it")
    return value


_FIELD = re.compile(r"([A-Za-z_][\w.\[\]]*): (.*)", re.S)


def _where(message: str) -> str:
    """msgspec's ``Expected `int`, got `str` - at `$.claims[...]`` as ``claims...: expected int, got str``."""
    text, sep, path = message.rpartition(" - at `")
    if not sep:
        return message
    path = path.rstrip("`").removeprefix("$").lstrip(".")
    inner = _FIELD.match(text)  # a schema's own check names the field inside the value msgspec points at
    if inner:
        path, text = ".".join(filter(None, (path, inner.group(1)))), inner.group(2)
    shown = f"{path or 'the file'}: {text[:1].lower()}{text[1:]}".replace("`", "")
    if path.rpartition(".")[2] == "format" and "<=" in text:
        shown += " (written by a newer version of the project; update this checkout to read it)"
    return shown


def read(path: Path, kind: type[T], rel: str, cap: int, *, what: str = "a file of its kind",
         follow_symlinks: bool = True) -> T:
    """The file at ``path`` read as ``kind`` (see the module's docstring); ``what`` names the kind in errors."""
    return decode(read_bytes(path, rel, cap, follow_symlinks=follow_symlinks), kind, rel, what)
