"""Bound values: numbers a reader reads, taken from what a run observed.

Two places refer to observations:

- a claim's ``statement`` (the one sentence a reader reads for it) holds ``{key}`` or
  ``{key:spec}`` for the claim's own observed values, and ``{=text}`` for an input the snippet is
  given (a size, a shape), shown as typed and marked as an input;
- a page refers to any claim's value inline, as ```#!v claim.id key[:spec] [@device]``` (and an
  input as ```#!in 64 MiB```); see :mod:`verify.site.inline`.

``key`` is a path into the observed values (``eager.median_s`` or just ``eager``); ``spec`` is a
unit format (``time``, ``bytes``, ``pct``, ``x``), a Python format spec (``.1f``, ``,d``), or for a
boolean the two words it reads as, ``?yes-words|no-words`` (``{raised:?抛出|不抛出} RuntimeError``: the
sentence says what was observed, never ``True``). A timing observation (``{"median_s": ...}``) shows
its median. Everything here is pure: no files.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from verify.core.records import JsonObject
from verify.core.units import fmt_time

# {key} / {key:spec} / {=input}
PLACEHOLDER = re.compile(r"\{(=[^{}]+|[A-Za-z_][\w.\-]*(?::[^{}]*)?)\}")
UNITS = ("time", "bytes", "pct", "x", "int")


class BindError(ValueError):
    """A reference that names no observation, or a format that does not fit the value."""


@dataclass(frozen=True)
class Ref:
    """One reference to an observed value."""

    claim: str
    key: str
    spec: str = ""
    device: str | None = None  # a recorded device's key; None: this build's evidence

    @property
    def label(self) -> str:
        return f"{self.claim} {self.key}" + (f":{self.spec}" if self.spec else "") + (
            f" @{self.device}" if self.device else "")


def parse_inline(src: str) -> Ref:
    """``claim.id key[:spec] [@device]`` (the text of a ```#!v`` inline)."""
    words = src.split()
    device = None
    if words and words[-1].startswith("@"):
        device = words.pop()[1:]
    if len(words) != 2 or "." not in words[0]:
        raise BindError(f"bound value {src!r}: write `#!v claim.id key[:spec] [@device]`")
    key, _, spec = words[1].partition(":")
    return Ref(words[0], key, spec, device or None)


def ref_key(source: str) -> str:
    """An inline ``#!v`` source as its reference reads (spacing aside): how bound values are looked up."""
    try:
        return parse_inline(source).label
    except BindError:
        return source.strip()


def segments(statement: str) -> list[str | tuple[str, str]]:
    """A statement as text pieces and ``(key, spec)`` pieces; ``("=", text)`` for an input."""
    out: list[str | tuple[str, str]] = []
    pos = 0
    for m in PLACEHOLDER.finditer(statement):
        if m.start() > pos:
            out.append(statement[pos:m.start()])
        body = m.group(1)
        if body.startswith("="):
            out.append(("=", body[1:]))
        else:
            key, _, spec = body.partition(":")
            out.append((key, spec))
        pos = m.end()
    if pos < len(statement):
        out.append(statement[pos:])
    return out


def keys(statement: str) -> list[tuple[str, str]]:
    """The ``(key, spec)`` references of a statement, in order (inputs left out)."""
    return [s for s in segments(statement) if isinstance(s, tuple) and s[0] != "="]


def plain(statement: str) -> str:
    """The statement with its references written as ``…`` (before anything has been observed)."""
    return "".join(s if isinstance(s, str) else (s[1] if s[0] == "=" else "…") for s in segments(statement))


_MISSING = object()


def lookup(observed: JsonObject, key: str) -> Any:
    """The value at ``key`` (dots walk into dicts); :class:`BindError` when it was not observed."""
    if key in observed:
        return observed[key]
    value: Any = observed
    for part in key.split("."):
        value = value.get(part, _MISSING) if isinstance(value, dict) else _MISSING
        if value is _MISSING:
            raise BindError(f"key {key!r} was not observed (observed: {', '.join(sorted(observed)) or 'nothing'})")
    return value


def _sig(x: float, digits: int = 3) -> str:
    """``digits`` significant digits, without an exponent for everyday magnitudes."""
    if x == 0 or not math.isfinite(x):
        return f"{x:g}"
    exp = math.floor(math.log10(abs(x)))
    if exp >= digits - 1:
        return f"{round(x):,}"
    text = f"{x:.{max(0, digits - 1 - exp)}f}"
    return text.rstrip("0").rstrip(".") if "." in text else text  # 16.0 -> 16, 2.50 -> 2.5


def _bytes(n: float) -> str:
    for unit, size in (("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if abs(n) >= size:
            return f"{_sig(n / size)} {unit}"
    return f"{int(n)} 字节"


def _number(value: Any) -> float:
    if isinstance(value, dict) and "median_s" in value:
        value = value["median_s"]
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise BindError(f"expected a number, observed {value!r}")
    return float(value)


def _words(value: Any, spec: str) -> str:
    """``?yes|no``: the words a boolean reads as in a sentence."""
    yes, bar, no = spec[1:].partition("|")
    if not bar:
        raise BindError(f"format {spec!r}: a boolean's words are written ?yes-words|no-words")
    if not isinstance(value, bool):
        raise BindError(f"format {spec!r} is for a boolean, observed {value!r}")
    return yes if value else no


def format_value(value: Any, spec: str = "") -> str:
    """The text a reader reads for one observed value."""
    if spec.startswith("?"):
        return _words(value, spec)
    if spec == "time" or (not spec and isinstance(value, dict) and "median_s" in value):
        return fmt_time(_number(value))
    if spec == "bytes":
        return _bytes(_number(value))
    if spec == "pct":
        return f"{_sig(_number(value) * 100, 2)}%"
    if spec == "x":
        return f"{_sig(_number(value), 2)} 倍"
    if spec == "int":
        return f"{round(_number(value)):,}"
    if spec:
        try:
            return format(_number(value) if isinstance(value, dict) else value, spec)
        except (ValueError, TypeError) as exc:
            raise BindError(f"format {spec!r} does not fit {value!r}: {exc}") from None
    if isinstance(value, bool) or value is None:
        return str(value)
    if isinstance(value, int):
        return f"{value:,}" if abs(value) >= 10000 else str(value)
    if isinstance(value, float):
        return _sig(value)
    if isinstance(value, (list, tuple)):
        return "(" + ", ".join(format_value(v) for v in value) + ("," if len(value) == 1 else "") + ")"
    return str(value)


def resolve(observed: JsonObject, key: str, spec: str = "") -> str:
    """:func:`lookup` then :func:`format_value`."""
    return format_value(lookup(observed, key), spec)


def fill(statement: str, value: Callable[[str, str], str]) -> str:
    """The statement as plain text, each ``{key:spec}`` replaced by ``value(key, spec)``.

    ``value`` raising :class:`BindError` leaves ``…`` in its place.
    """
    out = []
    for seg in segments(statement):
        if isinstance(seg, str):
            out.append(seg)
        elif seg[0] == "=":
            out.append(seg[1])
        else:
            try:
                out.append(value(*seg))
            except BindError:
                out.append("…")
    return "".join(out)


# --- hand-typed measurements --------------------------------------------------------------------

_UNIT = (r"(?:ns|µs|μs|us|ms|s|秒|毫秒|微秒|纳秒|分钟|倍|x|×|%|GB/s|MB/s|GiB/s|TB/s|GiB|MiB|KiB|GB|MB|KB|B|"
         r"字节|个元素|GFLOP/s|TFLOP/s|GFLOPS|TFLOPS|FLOP|FLOPs|条指令|个周期|cycles?)")
_NUM = r"(?<![\w.\-/])~?\d[\d,]*(?:\.\d+)?(?:\s*(?:-|–|~|到|至)\s*\d[\d,]*(?:\.\d+)?)?"
_CJK_NUM = r"[一二两三四五六七八九十百千万几数]+"
MEASUREMENT = re.compile(rf"(?:{_NUM}|{_CJK_NUM})\s*{_UNIT}(?![A-Za-z\d])")


def measurements(text: str) -> list[str]:
    """Numbers with a unit of measurement in ``text`` (prose a reader reads as a measured fact)."""
    return [m.group(0) for m in MEASUREMENT.finditer(text)]


#: text in braces that reads as a reference (a name, no spaces) but is not one ``PLACEHOLDER`` reads, such as
#: ``{tile[0]}``: left as it is, the page would print the braces; C++ in a statement (``T{2}``, ``{}``,
#: ``{ return p; }``) does not look like this
_LOOKS_BOUND = re.compile(r"\{[A-Za-z_][^{}\s]*\}")


def unread_references(statement: str) -> list[str]:
    """Brace text outside a statement's references that looks like a reference the page cannot fill."""
    return [m.group(0) for s in segments(statement) if isinstance(s, str) for m in _LOOKS_BOUND.finditer(s)]


def statement_measurements(statement: str) -> list[str]:
    """Hand-typed measurements in a statement, outside its references and inputs."""
    return measurements("".join(s if isinstance(s, str) else " " for s in segments(statement)))
