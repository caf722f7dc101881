"""Build the question bank from ``docs/questions/*.md``: front matter plus body sections.

The bank is the one source for the browser quiz (``quiz.json`` and the ``quizbank`` fence), the
terminal quiz and the Anki deck. Every page is validated; all problems are collected and raised
once, each naming the file and the field.
"""

from __future__ import annotations

import copy
import json
import re
from pathlib import Path
from typing import Any, TypeGuard

from verify import paths
from verify.errors import ClaimError
from verify.store import atomic_write_json, read_json

BANK_VERSION = 1
SECTIONS = ("普通回答", "更好的回答", "考察点", "追问", "证据")
_ID = re.compile(r"^[a-z0-9]+(?:-[a-z0-9]+)*$")
_FENCE = re.compile(r"^(\s*)(`{3,}|~{3,})\s*([\w-]*)")


class BankError(ClaimError):
    """One or more pages do not fit the bank's schema; the message lists each file and field."""

    def __init__(self, problems: list[str]):
        super().__init__("question bank: " + str(len(problems)) + " problem(s):\n" +
                         "\n".join("  - " + p for p in problems))
        self.problems = problems


# --- front matter -------------------------------------------------------------------------

def split_front_matter(text: str) -> tuple[str | None, str]:
    """Return (yaml text or None, body)."""
    if not text.startswith("---"):
        return None, text
    lines = text.splitlines(keepends=True)
    if lines[0].strip() != "---":
        return None, text
    for i in range(1, len(lines)):
        if lines[i].strip() in ("---", "..."):
            return "".join(lines[1:i]), "".join(lines[i + 1:])
    return None, text


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

def split_sections(body: str) -> tuple[str | None, str, dict[str, str], list[str]]:
    """Return (H1 text, text between H1 and first H2, {H2 title: text}, H2 titles in order).

    Headings inside code fences are ignored.
    """
    h1: str | None = None
    intro: list[str] = []
    sections: dict[str, list[str]] = {}
    order: list[str] = []
    current: list[str] | None = None
    fence: str | None = None
    for line in body.splitlines():
        m = _FENCE.match(line)
        if fence is None and m:
            fence = m.group(2)[0] * len(m.group(2))
        elif fence is not None and line.strip().startswith(fence) and line.strip().strip(fence[0]) == "":
            fence = None
        elif fence is None and line.startswith("# ") and h1 is None:
            h1 = line[2:].strip()
            current = intro
            continue
        elif fence is None and line.startswith("## "):
            title = line[3:].strip()
            title = re.sub(r"\s*\{[^}]*\}\s*$", "", title)  # attr_list suffix
            order.append(title)
            current = sections.setdefault(title, [])
            continue
        if current is not None:
            current.append(line)
    return h1, "\n".join(intro).strip(), {k: "\n".join(v).strip() for k, v in sections.items()}, order


def strip_claims(text: str) -> tuple[str, list[str]]:
    """Remove ```claim fences (they render as badges on the site); return text and claim ids."""
    out: list[str] = []
    ids: list[str] = []
    lines = text.splitlines()
    i = 0
    while i < len(lines):
        m = _FENCE.match(lines[i])
        if m and m.group(3) == "claim":
            mark = m.group(2)
            i += 1
            while i < len(lines) and not lines[i].strip().startswith(mark):
                if lines[i].strip():
                    ids.append(lines[i].strip())
                i += 1
            i += 1
            continue
        out.append(lines[i])
        i += 1
    cleaned = re.sub(r"\n{3,}", "\n\n", "\n".join(out)).strip()
    return cleaned, ids


def plain_text(markdown_text: str) -> str:
    """Markdown for a terminal or a card: admonitions turned into quotes with their title."""
    out: list[str] = []
    in_adm = False
    for line in markdown_text.splitlines():
        m = re.match(r'^(?:!!!|\?\?\?\+?)\s*(\w+)(?:\s+"([^"]*)")?\s*$', line)
        if m:
            in_adm = True
            out.append(f"> **{m.group(2) or m.group(1)}**")
            continue
        if in_adm and (line.startswith("    ") or not line.strip()):
            out.append(("> " + line[4:]).rstrip() if line.strip() else ">")
            continue
        in_adm = False
        out.append(line)
    return "\n".join(out).strip().rstrip(">").strip()


# the site's block extensions, so headings inside code or callouts count as they do on the site
_EXTENSIONS = ["admonition", "tables", "attr_list", "md_in_html", "pymdownx.details", "pymdownx.superfences"]


def _html(markdown_text: str) -> str:
    import markdown  # noqa: PLC0415  (only at build time, never on the terminal's start path)

    return markdown.markdown(markdown_text, extensions=_EXTENSIONS)


def _evidence_anchor(body: str) -> str:
    """The id the site gives the 证据 heading (Python-Markdown's toc, as the site uses it)."""
    import markdown  # noqa: PLC0415

    md = markdown.Markdown(extensions=[*_EXTENSIONS, "toc"])
    html = md.convert(body)
    m = re.search(r'<h2 id="([^"]+)"[^>]*>\s*证据', html)
    return m.group(1) if m else ""


# --- the bank -----------------------------------------------------------------------------

def parse_page(path: Path, docs_dir: Path, *, html: bool = True) -> tuple[dict[str, Any] | None, list[str]]:
    """One page to one bank entry, or (None, problems)."""
    import yaml  # noqa: PLC0415

    try:
        where = path.relative_to(docs_dir.parent).as_posix()
    except ValueError:
        where = path.as_posix()
    text = path.read_text(encoding="utf-8")
    fm, body = split_front_matter(text)
    if fm is None:
        return None, [f"{where}: front matter: missing (the page must start with a '---' YAML block)"]
    try:
        meta = yaml.safe_load(fm)
    except yaml.YAMLError as exc:
        return None, [f"{where}: front matter: not valid YAML ({exc})".replace("\n", " ")]
    problems = validate_meta(meta, where, path.stem)
    h1, _intro, sections, order = split_sections(body)
    if not h1:
        problems.append(f"{where}: body: the question as a level-1 heading ('# ...') is missing")
    present = [t for t in order if t in SECTIONS]
    for title in SECTIONS:
        if title not in sections:
            problems.append(f"{where}: section '## {title}': missing")
    if not problems and present != list(SECTIONS):
        problems.append(f"{where}: sections: must come in the order {' / '.join(SECTIONS)}, found {' / '.join(present)}")
    for title in ("普通回答", "更好的回答"):
        if title in sections and not sections[title]:
            problems.append(f"{where}: section '## {title}': empty")
    if problems:
        return None, problems
    better, claim_ids = strip_claims(sections["更好的回答"])
    ordinary, _ = strip_claims(sections["普通回答"])
    qid = meta["id"]
    page_url = f"questions/{qid}/"
    anchor = _evidence_anchor(body) if html else ""
    entry: dict[str, Any] = {
        "id": qid,
        "title": meta["title"].strip(),
        "question": h1,
        "ordinary_answer": plain_text(ordinary),
        "better_answer": plain_text(better),
        "key_points": [
            {"point": kp["point"].strip(), "keywords": [k.strip() for k in kp["keywords"]],
             "synonyms": {k: [s.strip() for s in v] for k, v in (kp.get("synonyms") or {}).items()}}
            for kp in meta["key_points"]
        ],
        "follow_ups": [{"q": fu["q"].strip(), "a": fu["a"].strip()} for fu in meta["follow_ups"]],
        "tags": [t.strip() for t in meta["tags"]],
        "difficulty": meta["difficulty"],
        "sources": [{"company": s["company"], "round": s["round"]} for s in meta["sources"]],
        "url": page_url,
        "evidence_url": page_url + (f"#{anchor}" if anchor else ""),
        "claims": claim_ids,
        "file": where,
    }
    if html:
        entry["ordinary_answer_html"] = _html(ordinary)
        entry["better_answer_html"] = _html(better)
    return entry, []


_MEMO: dict[tuple[Any, ...], dict[str, Any]] = {}


def build_bank(docs_dir: Path, *, html: bool = True) -> dict[str, Any]:
    """The bank, rebuilt only when a question page changed.

    Remembered in the process (the quiz fence and the site hook share it) and on disk in the
    project cache (a warm site build does not render the answers again).
    """
    docs_dir = Path(docs_dir).resolve()
    pages = sorted((docs_dir / "questions").glob("*.md"))
    stamps = [[p.name, p.stat().st_mtime_ns, p.stat().st_size] for p in pages]
    key = (str(docs_dir), html, json.dumps(stamps))
    if key not in _MEMO:
        disk = paths.cache_dir(docs_dir.parent) / f"quizbank-{'html' if html else 'text'}.json"
        cached = read_json(disk)
        if isinstance(cached, dict) and cached.get("key") == list(key) and isinstance(cached.get("bank"), dict):
            bank = cached["bank"]
        else:
            bank = _build_bank(docs_dir, html=html)
            try:
                atomic_write_json(disk, {"key": list(key), "bank": bank})
            except OSError:
                pass
        _MEMO.clear()
        _MEMO[key] = bank
    return copy.deepcopy(_MEMO[key])


def _build_bank(docs_dir: Path, *, html: bool = True) -> dict[str, Any]:
    """Every ``docs_dir/questions/*.md`` as one validated bank; raises BankError naming file and field.

    Args:
        docs_dir: the site's docs folder.
        html: also render the answers to HTML (the site needs it; the terminal does not).
    """
    docs_dir = Path(docs_dir)
    questions: list[dict[str, Any]] = []
    problems: list[str] = []
    for path in sorted((docs_dir / "questions").glob("*.md")):
        entry, errs = parse_page(path, docs_dir, html=html)
        problems += errs
        if entry:
            questions.append(entry)
    if problems:
        raise BankError(problems)
    return {"version": BANK_VERSION, "questions": questions,
            "tags": sorted({t for q in questions for t in q["tags"]})}


def bank_json(bank: dict[str, Any]) -> str:
    return json.dumps(bank, ensure_ascii=False, sort_keys=True, indent=1)


def write_quiz_json(docs_dir: Path, site_dir: Path) -> Path:
    """Build the bank and write ``site_dir/quiz.json``; return the path. Raises BankError."""
    bank = build_bank(Path(docs_dir))
    out = Path(site_dir) / "quiz.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(bank_json(bank), encoding="utf-8")
    return out
