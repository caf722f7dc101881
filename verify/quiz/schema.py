"""The schema of a question page's front matter: every problem named with its file and field."""

from __future__ import annotations

import re
from typing import Any, TypeGuard

_ID = re.compile(r"^[a-z0-9]+(?:-[a-z0-9]+)*$")


def _nonempty_str(v: Any) -> TypeGuard[str]:
    return isinstance(v, str) and bool(v.strip())


def _str_list(v: Any) -> bool:
    return isinstance(v, list) and bool(v) and all(_nonempty_str(x) for x in v)


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
    sources = meta.get("sources")
    if not isinstance(sources, list) or not sources:
        bad("sources", "required, a list of {company, round}")
    else:
        for i, s in enumerate(sources):
            if not isinstance(s, dict) or not _nonempty_str(s.get("company")) or not _nonempty_str(s.get("round")):
                bad(f"sources[{i}]", "needs non-empty 'company' and 'round'")
    diff = meta.get("difficulty")
    if isinstance(diff, bool) or not isinstance(diff, int) or not 1 <= diff <= 5:
        bad("difficulty", f"an integer 1..5, got {diff!r}")
    if not _str_list(meta.get("tags")):
        bad("tags", "required, a non-empty list of strings")
    kps = meta.get("key_points")
    if not isinstance(kps, list) or not kps:
        bad("key_points", "required, a non-empty list of {point, keywords, synonyms}")
    else:
        for i, kp in enumerate(kps):
            f = f"key_points[{i}]"
            if not isinstance(kp, dict):
                bad(f, "must be a mapping with point, keywords, synonyms")
                continue
            if not _nonempty_str(kp.get("point")):
                bad(f + ".point", "required, a non-empty string")
            if not _str_list(kp.get("keywords")):
                bad(f + ".keywords", "required, a non-empty list of strings")
                continue
            syn = kp.get("synonyms", {})
            if syn is None:
                syn = {}
            if not isinstance(syn, dict):
                bad(f + ".synonyms", "must map a keyword to a list of synonyms")
                continue
            for k, v in syn.items():
                if k not in kp["keywords"]:
                    bad(f + f".synonyms.{k}", f"{k!r} is not one of the keywords {kp['keywords']}")
                elif not _str_list(v):
                    bad(f + f".synonyms.{k}", "must be a non-empty list of strings")
            extra = set(kp) - {"point", "keywords", "synonyms"}
            if extra:
                bad(f, f"unknown field(s) {sorted(extra)}")
    fus = meta.get("follow_ups")
    if not isinstance(fus, list) or not fus:
        bad("follow_ups", "required, a non-empty list of {q, a}")
    else:
        for i, fu in enumerate(fus):
            if not isinstance(fu, dict) or not _nonempty_str(fu.get("q")) or not _nonempty_str(fu.get("a")):
                bad(f"follow_ups[{i}]", "needs non-empty 'q' and 'a'")
    return out


# --- body ---------------------------------------------------------------------------------
