"""What the bank takes from a verification: each claim's sentence, the pages' bound values, the drills,
the claims' 判断题 and the 计算题 that claims observed (:mod:`verify.quiz.objective`).

The site passes the build's ledger; the terminal passes one made from the cache without running
anything (``verify quiz``, `verify/cli/quiz.py`). Everything here is plain data, so the bank can
be remembered on disk by its digest.
"""

from __future__ import annotations

import functools
import hashlib
import json
import logging
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar

import msgspec

from verify.core import binding, scope, states
from verify.core.prose import Prose, shown
from verify.core.records import Evidence
from verify.quiz import drills
from verify.quiz.judge import ClaimJudgement, claim_judgement, filled
from verify.quiz.objective import OBSERVED_KEY, CalcSet, calc_sets
from verify.quiz.schema import Drill

if TYPE_CHECKING:
    from verify.core.ledger import Ledger

log = logging.getLogger("verify.quiz")


@dataclass(frozen=True)
class ClaimFacts:
    """Claim id -> sentence (None: a value it shows was observed nowhere); inline source -> value text;
    drills; claim id -> where its evidence was observed (``AMD EPYC · torch 2.13.0``); the calculators
    whose 计算题 passing claims observed; the claims' 判断题."""

    sentences: dict[str, str | None] = field(default_factory=dict)
    values: dict[str, str | None] = field(default_factory=dict)
    drills: tuple[Drill, ...] = ()
    where: dict[str, str] = field(default_factory=dict)
    calculations: tuple[CalcSet, ...] = ()
    judgements: tuple[ClaimJudgement, ...] = ()

    def digest(self) -> str:
        data = json.dumps([self.sentences, self.values, [d.to_json() for d in self.drills], self.where,
                           [msgspec.to_builtins(c) for c in self.calculations],
                           [msgspec.to_builtins(j) for j in self.judgements]],
                          sort_keys=True, ensure_ascii=False, default=str)
        return hashlib.sha256(data.encode()).hexdigest()[:16]

    @classmethod
    def of_sentences(cls, sentences: Mapping[str, str | None] | None) -> ClaimFacts:
        return cls(sentences=dict(sentences or {}))


def observation(v: Ledger, claim_id: str) -> Evidence | None:
    """The passing record of a claim a reader is shown (:meth:`Ledger.best_record`), or None."""
    record, status = v.best_record(claim_id)
    return record if record is not None and states.observed(status) else None


def sentence(v: Ledger, claim_id: str) -> str | None:
    """The claim's statement with its values; for a claim nothing observed, the line that says what it
    measures (``GPU 上待测：…``) where its function says so; else None when a value was observed nowhere."""
    spec = v.registry.claims[claim_id]
    waiting = v.waiting(claim_id)
    if waiting is not None:  # nothing observed it: what it measures and where, as the page says it
        return f"{waiting[0]}：{waiting[1]}"
    if not binding.keys(spec.statement):  # nothing observed in it; its inputs ({=4}) written out
        return binding.plain(spec.statement)
    record = observation(v, claim_id)
    return None if record is None else filled(spec.statement, record.observed)


def function_source(v: Ledger, snippet: str, line: int) -> str:
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


def _prose(v: Ledger, docs_dir: Path) -> dict[str, Prose]:
    """Each page's prose facts, kept in the cache by content, so a warm build parses no page for them."""
    from verify.storage import pages as page_store  # noqa: PLC0415

    return dict(page_store.read_all(Path(docs_dir), v.settings.cache_dir))


def _values(v: Ledger, prose: Mapping[str, Prose]) -> dict[str, str | None]:
    """Each question page's bound value (by :func:`binding.ref_key`) -> its text, from the pages' prose facts."""
    out: dict[str, str | None] = {}
    for rel, facts in prose.items():
        if not rel.startswith("questions/"):
            continue
        for ref, _line in facts.refs:
            try:
                text, _status, _where = v.value(ref)
            except binding.BindError:
                continue
            out[ref.label] = None if text == "—" else text
    return out


def _judgements(v: Ledger, seen: Mapping[str, Evidence | None], prose: Mapping[str, Prose]) -> tuple[ClaimJudgement, ...]:
    """The 判断题 of every claim whose passing record observed the values of its sentence, asked on the
    first question page that shows the claim (:func:`verify.quiz.judge.claim_judgement`)."""
    pages = shown(dict(prose))
    asked: dict[str, tuple[str, Evidence]] = {}
    for cid, record in sorted(seen.items()):
        page = next((p for p in pages.get(cid, ()) if p.startswith("questions/")), None)
        if record is not None and page is not None and not _calculates(record):
            asked[cid] = (Path(page).stem, record)

    def key(cid: str) -> str:
        spec, (question, record) = v.registry.claims[cid], asked[cid]
        return _digest([cid, question, spec.statement, spec.kind, scope.tag(spec, record), spec.expect, record.observed,
                        _code(_JUDGE_CODE)])

    def make(cid: str) -> ClaimJudgement | None:
        spec, (question, record) = v.registry.claims[cid], asked[cid]
        return claim_judgement(cid, question, spec.statement, spec.expect, record.observed, spec.kind, scope.tag(spec, record))

    made = _remembered(v.settings.cache_dir / "quiz-judgements.json", {cid: key(cid) for cid in asked}, make,
                       msgspec.to_builtins, lambda data: msgspec.convert(data, ClaimJudgement))
    return tuple(j for j in made.values() if j is not None)


def drill_for(v: Ledger, claim_id: str) -> Drill | None:
    spec = v.registry.claims[claim_id]
    record = observation(v, claim_id)
    said = sentence(v, claim_id)
    if record is None or not said:
        return None
    try:
        module = (v.registry.root / spec.snippet).read_text(encoding="utf-8")
    except OSError:
        return None
    code = drills.with_context(module, function_source(v, spec.snippet, spec.line))
    if code is None:  # it calls code of its module that the drill would not show
        return None
    drill = drills.make(spec, code, record.observed)
    if drill is None or not drill.code:
        return None
    prov = record.provenance
    device = prov.device_name or prov.device or "?"
    made = states.gpu_side(record)  # compiled for a GPU, simulated, or from specs: the prompt says how
    return replace(drill, id=drills.drill_id(claim_id), claim=claim_id, question=spec.question, kind=spec.kind,
                   snippet=spec.snippet, line=spec.line, device=device, torch=prov.torch or "?",
                   torch_build=prov.torch_build or "", date=(prov.date or "")[:10],
                   here=record is v.local.get(claim_id), sentence=said, prompt=drills.prompt(drill, device, made),
                   anchor=f"#claim-{claim_id}")


_LAST: dict[tuple[int, str], tuple[Ledger, ClaimFacts]] = {}
T = TypeVar("T")
_HERE = Path(drills.__file__).parent
_DRILL_CODE = tuple(_HERE / n for n in ("drills.py", "claims.py", "schema.py"))
_JUDGE_CODE = (_HERE / "judge.py", _HERE / "claims.py", _HERE.parent / "core" / "perturb.py",
               _HERE.parent / "core" / "binding.py", _HERE.parent / "core" / "matchers.py")


@functools.cache
def _code(paths: tuple[Path, ...]) -> str:
    """The code that makes a kind of item: a change to it makes every remembered item of that kind stale."""
    digest = hashlib.sha256()
    for path in paths:
        digest.update(path.read_bytes())
    return digest.hexdigest()[:16]


def _digest(data: object) -> str:
    return hashlib.sha256(json.dumps(data, sort_keys=True, default=str).encode()).hexdigest()[:20]


def _drill_key(v: Ledger, claim_id: str) -> str:
    """What a claim's drill depends on: its declaration, its snippet, its observation, the drill code."""
    spec = v.registry.claims[claim_id]
    record = observation(v, claim_id)
    return _digest([spec.statement, spec.kind, spec.line, spec.expect, spec.raises, v.registry.key(spec.id),
                    record.observed if record else None, record.provenance.to_json() if record else None,
                    record is not None and record is v.local.get(claim_id), _code(_DRILL_CODE)])


def _remembered(path: Path, keys: Mapping[str, str], make: Callable[[str], T | None],
                dump: Callable[[T], object], load: Callable[[object], T]) -> dict[str, T | None]:
    """claim id -> its item (None: the claim has none), read from ``path`` where its entry's key is ``keys[id]``,
    else made; the file is written again (atomically, only what ``keys`` holds) when anything changed."""
    from verify.storage.fs import atomic_write_json, read_json  # noqa: PLC0415

    cached = read_json(path)
    old = cached.get("items", {}) if isinstance(cached, dict) and cached.get("format") == 3 else {}
    old = old if isinstance(old, dict) else {}
    made: dict[str, T | None] = {}
    new: dict[str, object] = {}
    for cid, key in keys.items():
        hit = old.get(cid)
        if isinstance(hit, dict) and hit.get("key") == key and "item" in hit:
            try:
                made[cid], new[cid] = (None if hit["item"] is None else load(hit["item"])), hit
                continue
            except (KeyError, TypeError, ValueError, msgspec.ValidationError):
                pass
        item = make(cid)
        made[cid], new[cid] = item, {"key": key, "item": None if item is None else dump(item)}
    if new != old:
        try:
            atomic_write_json(path, {"format": 3, "items": new})
        except OSError:
            pass
    return made


def _drills(v: Ledger, ids: list[str]) -> tuple[Drill, ...]:
    """Every claim's drill, remembered in the project cache while nothing it depends on changed."""
    made = _remembered(v.settings.cache_dir / "quiz-drills.json", {cid: _drill_key(v, cid) for cid in ids},
                       lambda cid: drill_for(v, cid), Drill.to_json, Drill.from_json)  # type: ignore[arg-type]
    return tuple(d for d in made.values() if d is not None)


def _calculates(record: Evidence | None) -> bool:
    return record is not None and OBSERVED_KEY in record.observed


def _calculations(seen: Mapping[str, Evidence | None]) -> tuple[CalcSet, ...]:
    """The 计算题 of every claim whose passing record observed some (a malformed one is said and left out)."""
    out: list[CalcSet] = []
    for cid, record in sorted(seen.items()):
        if not _calculates(record):
            continue
        try:
            out += calc_sets(record.observed[OBSERVED_KEY], cid)  # type: ignore[union-attr]
        except ValueError as exc:
            log.warning("verify: %s; its 计算题 are left out", exc)
    return tuple(out)


def gather(v: Ledger, docs_dir: Path) -> ClaimFacts:
    """Sentences, bound values and drills of every claim of the verification (the quiz fence and the
    site hook of one build ask for the same verification: computed once)."""
    key = (id(v), str(docs_dir))
    if key in _LAST and _LAST[key][0] is v:
        return _LAST[key][1]
    ids = sorted(v.registry.claims)
    seen = {cid: observation(v, cid) for cid in ids}
    where = {cid: f"{r.provenance.device_name or r.provenance.device} · torch {r.provenance.torch}"
             for cid, r in seen.items() if r is not None}
    prose = _prose(v, docs_dir)
    facts = ClaimFacts(sentences={cid: sentence(v, cid) for cid in ids}, values=_values(v, prose),
                       drills=_drills(v, [cid for cid in ids if not _calculates(seen[cid])]), where=where,
                       calculations=_calculations(seen), judgements=_judgements(v, seen, prose))
    _LAST.clear()
    _LAST[key] = (v, facts)
    return facts
