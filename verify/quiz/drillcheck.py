"""Check a predicted value against the observed one: exact after normalising how it is written.

``(0, 1)`` and ``[0, 1]`` are the same answer, as are ``True`` and ``true``, ``4.0`` and ``4``,
``96 字节`` and ``96``; case, spaces and quotes do not matter. A performance drill is right when
it names the faster variant and the factor is within the drill's tolerance (a factor of
:data:`TOLERANCE` either way), or says 「差不多」 where the two are within :data:`SAME` of each
other. The browser quiz (``docs/assets/quiz/quiz-core.js``) applies the same normalisation to the
strings listed in a drill's ``accept``.
"""

from __future__ import annotations

import math
import re
import unicodedata
from typing import Any

TOLERANCE = 2.0  # a perf answer within a factor of 2 of the measured one counts as "about"
SAME = 1.25  # measured within 25%: "about the same" is the right answer

_QUOTES = re.compile("[\"'`“”‘’「」『』]")
_SPACE = re.compile(r"\s+")
_UNIT = re.compile(r"(?<=\d)(?:字节|bytes?|个|次|倍|x)$")
_TRUE = {"true", "是", "对", "真", "yes", "会"}
_FALSE = {"false", "否", "错", "假", "no", "不是", "不会"}


def normalize(text: str) -> str:
    """One way to write a value: what ``canonical`` produces for the observed one."""
    t = unicodedata.normalize("NFKC", str(text)).lower().strip()
    t = _QUOTES.sub("", t)
    t = t.replace("、", ",").replace("→", ",").replace("->", ",").replace("【", "[").replace("】", "]")
    t = t.replace("(", "[").replace(")", "]")
    t = _SPACE.sub("", t).rstrip("。.")
    t = re.sub(r",+\]", "]", t)
    t = re.sub(r"(?<![0-9a-z_.])(\d+)\.0+(?![0-9.])", r"\1", t)
    t = _UNIT.sub("", t)
    if t in _TRUE:
        return "true"
    if t in _FALSE:
        return "false"
    return t


def display(value: Any) -> str:
    """The observed value as a reader writes it: ``(0, 1)``, ``True``, ``aten::mm``."""
    if isinstance(value, bool) or value is None:
        return str(value)
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    if isinstance(value, (list, tuple)):
        return "(" + ", ".join(display(v) for v in value) + ("," if len(value) == 1 else "") + ")"
    return str(value)


def accepted(value: Any) -> list[str]:
    """The normalised answers that equal ``value`` (an integer also with thousands separators)."""
    out = [normalize(display(value))]
    if isinstance(value, (int, float)) and not isinstance(value, bool) and float(value).is_integer() and abs(value) >= 1000:
        out.append(normalize(f"{int(value):,}"))
    return out


def exception_type(text: str) -> str:
    """``RuntimeError`` from ``RuntimeError: …`` or ``torch.OutOfMemoryError``; lower case."""
    head = unicodedata.normalize("NFKC", text).strip().split(":", 1)[0].strip()
    return head.split(".")[-1].strip().lower()


def check(drill: dict[str, Any], answer: Any) -> bool:
    """Whether ``answer`` (text; for a perf drill ``{"faster": label or "same", "factor": number}``) is right."""
    fmt = drill["format"]
    if fmt == "exception":
        return exception_type(str(answer)) == exception_type(drill["answer"])
    if fmt == "faster":
        return check_faster(drill, answer)
    given = normalize(str(answer))
    if drill["accept"] and drill["accept"][0].startswith("[") and not given.startswith("["):
        given = f"[{given}]"
    return given in drill["accept"]


def factor(text: Any) -> float | None:
    """A positive number from ``3``, ``3.5 倍``, ``x3``, ``约 20``; None when there is none."""
    m = re.search(r"\d+(?:\.\d+)?", unicodedata.normalize("NFKC", str(text)).replace(",", ""))
    if not m:
        return None
    value = float(m.group(0))
    return value if value > 0 else None


def check_faster(drill: dict[str, Any], answer: Any) -> bool:
    picked = answer.get("faster") if isinstance(answer, dict) else None
    measured = float(drill["factor"])
    if picked == "same":
        return bool(drill["same"])
    if picked != drill["faster"]:
        return False
    given = factor(answer.get("factor"))
    return given is not None and abs(math.log(given / measured)) <= math.log(drill["tolerance"])
