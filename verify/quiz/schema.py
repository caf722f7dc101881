"""The schema of a question page's front matter: every problem named with its file and field."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any, TypeGuard

_ID = re.compile(r"^[a-z0-9]+(?:-[a-z0-9]+)*$")
# The syllabus' topics, in the order the site lists them.
TOPICS = ("pytorch-internals", "cuda-gpu", "training-memory", "distributed", "serving", "model-architecture",
          "quantization", "cpp-systems")
_KEY_POINT_FIELDS = {"point", "keywords", "synonyms", "contradicts"}


def _nonempty_str(v: Any) -> TypeGuard[str]:
    return isinstance(v, str) and bool(v.strip())


def _str_list(v: Any) -> bool:
    return isinstance(v, list) and bool(v) and all(_nonempty_str(x) for x in v)


def _quote_hint(v: Any) -> str:
    """A hint when YAML read a number where text was meant (``[0, 65504]``): quote it."""
    if isinstance(v, list) and any(isinstance(x, (int, float)) and not isinstance(x, bool) for x in v):
        numbers = ", ".join(repr(x) for x in v if isinstance(x, (int, float)) and not isinstance(x, bool))
        return f" (YAML read {numbers} as a number: quote it, e.g. \"0\")"
    return ""


def _records(meta: dict[str, Any], name: str, shape: str, bad: Callable[[str, str], None]) -> list[tuple[str, Any]]:
    """``(field path, item)`` of a required non-empty list field; reports the field when it is not one."""
    items = meta.get(name)
    if not isinstance(items, list) or not items:
        bad(name, f"required, a non-empty list of {shape}")
        return []
    return [(f"{name}[{i}]", item) for i, item in enumerate(items)]


def _has_strings(item: Any, *keys: str) -> bool:
    return isinstance(item, dict) and all(_nonempty_str(item.get(k)) for k in keys)


def _key_point(f: str, kp: Any, bad: Callable[[str, str], None]) -> None:
    if not isinstance(kp, dict):
        bad(f, "must be a mapping with point, keywords, synonyms")
        return
    if not _nonempty_str(kp.get("point")):
        bad(f + ".point", "required, a non-empty string")
    if not _str_list(kp.get("keywords")):
        bad(f + ".keywords", "required, a non-empty list of strings" + _quote_hint(kp.get("keywords")))
        return
    syn = kp.get("synonyms")
    syn = {} if syn is None else syn
    if not isinstance(syn, dict):
        bad(f + ".synonyms", "must map a keyword to a list of synonyms")
        return
    for k, v in syn.items():
        if k not in kp["keywords"]:
            bad(f + f".synonyms.{k}", f"{k!r} is not one of the keywords {kp['keywords']}")
        elif not _str_list(v):
            bad(f + f".synonyms.{k}", "must be a non-empty list of strings" + _quote_hint(v))
    contra = kp.get("contradicts")
    if contra is not None and not _str_list(contra):
        bad(f + ".contradicts", "a non-empty list of statements that contradict the point (e.g. 'expand 会拷贝')")
    extra = set(kp) - _KEY_POINT_FIELDS
    if extra:
        bad(f, f"unknown field(s) {sorted(extra)}")


def validate_meta(meta: Any, where: str, stem: str) -> list[str]:
    """Check one page's front matter; return 'file: field: problem' lines."""
    if not isinstance(meta, dict):
        return [f"{where}: front matter: must be a YAML mapping between '---' lines"]
    out: list[str] = []

    def bad(field: str, why: str) -> None:
        out.append(f"{where}: {field}: {why}")

    qid = meta.get("id")
    if not _nonempty_str(qid) or not _ID.match(qid):
        bad("id", "required, lower-case words joined by '-'")
    elif qid != stem:
        bad("id", f"{qid!r} must equal the file name {stem!r}")
    if not _nonempty_str(meta.get("title")):
        bad("title", "required, a non-empty string")
    topic = meta.get("topic")
    if topic is not None and topic not in TOPICS:
        bad("topic", f"{topic!r} is not one of {', '.join(TOPICS)}")
    for f, source in _records(meta, "sources", "{company, round}", bad):
        if not _has_strings(source, "company", "round"):
            bad(f, "needs non-empty 'company' and 'round'")
    diff = meta.get("difficulty")
    if isinstance(diff, bool) or not isinstance(diff, int) or not 1 <= diff <= 5:
        bad("difficulty", f"an integer 1..5, got {diff!r}")
    if not _str_list(meta.get("tags")):
        bad("tags", "required, a non-empty list of strings")
    for f, kp in _records(meta, "key_points", "{point, keywords, synonyms}", bad):
        _key_point(f, kp, bad)
    for f, fu in _records(meta, "follow_ups", "{q, a}", bad):
        if not _has_strings(fu, "q", "a"):
            bad(f, "needs non-empty 'q' and 'a'")
    return out


# --- body ---------------------------------------------------------------------------------
