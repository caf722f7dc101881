"""What the bank takes from a verification: each claim's sentence, the pages' bound values, the drills.

The site passes the build's verification; the terminal passes one made from the cache without
running anything (:func:`verify.quiz.loading.claim_facts`). Everything here is plain data, so the
bank can be remembered on disk by its digest.
"""

from __future__ import annotations

import functools
import hashlib
import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from verify.core import binding, evidence
from verify.core.records import Evidence, Outcome
from verify.quiz import drills

if TYPE_CHECKING:
    from verify.running.engine import Verification

_BOUND = re.compile(r"`#!v ([^`]+)`")


@dataclass(frozen=True)
class ClaimFacts:
    """Claim id -> sentence (None: a value it shows was observed nowhere); inline source -> value text;
    drills; claim id -> where its evidence was observed (``AMD EPYC · torch 2.13.0``)."""

    sentences: dict[str, str | None] = field(default_factory=dict)
    values: dict[str, str | None] = field(default_factory=dict)
    drills: list[dict[str, Any]] = field(default_factory=list)
    where: dict[str, str] = field(default_factory=dict)

    def digest(self) -> str:
        data = json.dumps([self.sentences, self.values, self.drills, self.where], sort_keys=True, ensure_ascii=False,
                          default=str)
        return hashlib.sha256(data.encode()).hexdigest()[:16]

    @classmethod
    def of_sentences(cls, sentences: Mapping[str, str | None] | None) -> ClaimFacts:
        return cls(sentences=dict(sentences or {}))


def observation(v: Verification, claim_id: str) -> Evidence | None:
    """The passing record of a claim: this machine's, else a current one recorded on another device."""
    spec = v.registry.claims[claim_id]
    local = v.local.get(claim_id)
    if local is not None and local.outcome is Outcome.PASS and v.status(claim_id) == evidence.VERIFIED_HERE:
        return local
    current = v.registry.key(spec.id)
    for _dev, records in sorted(v.remote.items()):
        other = records.get(claim_id)
        if other is not None and evidence.status_of(other, current, local=False) == evidence.VERIFIED_ELSEWHERE:
            return other
    return None


def sentence(v: Verification, claim_id: str) -> str | None:
    """The claim's statement with its values; None when one of them was observed nowhere."""
    spec = v.registry.claims[claim_id]
    if not binding.keys(spec.statement):
        return spec.statement
    record = observation(v, claim_id)
    if record is None:
        return None
    missing: list[str] = []

    def value(key: str, fmt: str) -> str:
        try:
            return binding.resolve(record.observed, key, fmt)
        except binding.BindError:
            missing.append(key)
            return ""

    text = binding.fill(spec.statement, value)
    return None if missing else text


def function_source(v: Verification, snippet: str, line: int) -> str:
    """The decorated function whose decorators span ``line``, as the scan cache located it."""
    from verify.storage import scan  # noqa: PLC0415

    path = v.registry.root / snippet
    try:
        spans = scan.facts(v.settings).get(path).get("functions", [])
        lines = path.read_text(encoding="utf-8").splitlines()
    except OSError:
        return ""
    for first, def_line, last in spans:
        if first <= line <= def_line:
            return "\n".join(lines[first - 1:last])
    return ""


def _values(v: Verification, docs_dir: Path) -> dict[str, str | None]:
    out: dict[str, str | None] = {}
    for page in sorted(Path(docs_dir).glob("questions/*.md")):
        for src in _BOUND.findall(page.read_text(encoding="utf-8")):
            try:
                text, _status, _where = v.value(binding.parse_inline(src))
            except binding.BindError:
                continue
            out[src.strip()] = None if text == "—" else text
    return out


def drill_for(v: Verification, claim_id: str) -> dict[str, Any] | None:
    spec = v.registry.claims[claim_id]
    record = observation(v, claim_id)
    said = sentence(v, claim_id)
    if record is None or not said:
        return None
    drill = drills.make(spec, function_source(v, spec.snippet, spec.line), record.observed)
    if drill is None or not drill["code"]:
        return None
    prov = record.provenance
    device = prov.device_name or prov.device or "?"
    drill.update(id=drills.drill_id(claim_id), claim=claim_id, question=spec.question, kind=spec.kind,
                 snippet=spec.snippet, line=spec.line, device=device, torch=prov.torch or "?",
                 torch_build=prov.torch_build or "", date=(prov.date or "")[:10],
                 here=record is v.local.get(claim_id), sentence=said, prompt=drills.prompt(drill, device),
                 anchor=f"#claim-{claim_id}")
    return drill


_LAST: dict[tuple[int, str], tuple[Verification, ClaimFacts]] = {}
_DRILL_CODE = tuple(Path(drills.__file__).with_name(n) for n in ("drills.py", "drillcheck.py", "claims.py"))


@functools.cache
def _drill_code() -> str:
    """The code that makes drills: a change to it makes every remembered drill stale."""
    digest = hashlib.sha256()
    for path in _DRILL_CODE:
        digest.update(path.read_bytes())
    return digest.hexdigest()[:16]


def _drill_key(v: Verification, claim_id: str) -> str:
    """What a claim's drill depends on: its declaration, its snippet, its observation, the drill code."""
    spec = v.registry.claims[claim_id]
    record = observation(v, claim_id)
    data = [spec.statement, spec.kind, spec.line, spec.expect, spec.raises, v.registry.key(spec.id),
            record.observed if record else None, record.provenance.to_json() if record else None,
            record is not None and record is v.local.get(claim_id), _drill_code()]
    return hashlib.sha256(json.dumps(data, sort_keys=True, default=str).encode()).hexdigest()[:20]


def _drills(v: Verification, ids: list[str]) -> list[dict[str, Any]]:
    """Every claim's drill, remembered in the project cache while nothing it depends on changed."""
    from verify.storage.fs import atomic_write_json, read_json  # noqa: PLC0415

    path = v.settings.cache_dir / "quiz-drills.json"
    cached = read_json(path)
    old = cached.get("drills", {}) if isinstance(cached, dict) else {}
    new: dict[str, Any] = {}
    for cid in ids:
        key = _drill_key(v, cid)
        hit = old.get(cid) if isinstance(old, dict) else None
        new[cid] = hit if isinstance(hit, dict) and hit.get("key") == key else {"key": key, "drill": drill_for(v, cid)}
    if new != old:
        try:
            atomic_write_json(path, {"format": 1, "drills": new})
        except OSError:
            pass
    return [e["drill"] for e in new.values() if e["drill"] is not None]


def gather(v: Verification, docs_dir: Path) -> ClaimFacts:
    """Sentences, bound values and drills of every claim of the verification (the quiz fence and the
    site hook of one build ask for the same verification: computed once)."""
    key = (id(v), str(docs_dir))
    if key in _LAST and _LAST[key][0] is v:
        return _LAST[key][1]
    ids = sorted(v.registry.claims)
    seen = {cid: observation(v, cid) for cid in ids}
    where = {cid: f"{r.provenance.device_name or r.provenance.device} · torch {r.provenance.torch}"
             for cid, r in seen.items() if r is not None}
    facts = ClaimFacts(sentences={cid: sentence(v, cid) for cid in ids}, values=_values(v, docs_dir),
                       drills=_drills(v, ids), where=where)
    _LAST.clear()
    _LAST[key] = (v, facts)
    return facts
