"""判断题 from the claims' sentences: a claim's sentence as its page shows it (true), or the same sentence
with one observed value changed to a value a wrong mechanism would give (false).

The wrong values are :func:`verify.core.perturb.likely_wrong_values` (doubled or halved first, ten times
only where nothing else is wrong), kept only where the claim's own expectation rejects the changed
observation (:func:`verify.core.perturb.rejected`), where the wrong value reads like the true one (same
unit, same digits) and where it is a value of its kind (a percentage of a fraction stays at most 100%;
zero only where nothing else is wrong). A value that the sentence's other numbers make (a product, ratio,
sum or difference of two of them, or the same number again: 「2 ms 和 8 ms，慢 4 倍」) would make the false sentence contradict itself, so
the item asks only the sentence's part (between 。 and ；) that holds the value, where no such numbers
remain, and a true item asks the same part, so both read alike in length; with no such part the value
is not changed. Each claim is asked one way only, chosen by a hash of its id, so a sentence never appears
as both; the answer is 对 or 错 and the claim's true sentence is shown after, with a link to it on its
page. A claim is asked only where its record passed, it has a false variant, and its sentence does not
lean on the one before it (``它…``, ``同样…``). Key points are not asked: their ``contradicts`` are
fragments, far shorter than a point, so the length of a statement gave its answer away.
"""

from __future__ import annotations

import functools
import hashlib
import math
import os
import re
from collections.abc import Sequence
from typing import Annotated, Any

import msgspec

from verify.core import binding, matchers, perturb
from verify.quiz.schema import Objective, Question

_Id = Annotated[str, msgspec.Meta(min_length=1, max_length=100)]
_Text = Annotated[str, msgspec.Meta(max_length=2000)]

#: a sentence that leans on the one before it on its page, told simply: by its first words or a
#: pointer back (上例, 上面); such a sentence does not stand alone as a 判断题
LEANS = re.compile(r"^(?:它|这|那|但|而|也|同样|同一|两者|换成|代价是|最后|反过来|此外|另外|所以|因此|于是|不过|相反)"
                   r"|上例|上面|上文|上述|前面|把它|这种|这一步|同样这|也一样|见下表|上表|下表|上一条|同一个例子|这个例子")
#: a sentence that says its value is this machine's: a candidate could only guess it, true or false
MACHINE = re.compile(r"这台机器|本机|构建机")
#: values this small are a precision or a rounding error of one machine and one kernel path, not knowledge
TINY = 1e-3
_TOKEN = re.compile(r"[0-9A-Za-z_.,%×]")
_CLAUSE = re.compile(r"[^，。；：、;:（）()\s]")
_DIGIT_COMMA = re.compile(r"(?<=\d),(?=\d{3})")
#: a number in a sentence with its unit; one glued to a name (sm_90a, fc1, H100) is not a number
_NUMBER = re.compile(r"(?<![A-Za-z0-9_.])(\d[\d,]*(?:\.\d+)?(?:e[-+]?\d+)?)(?![A-Za-z_\d])\s?"
                     r"(KiB|MiB|GiB|ns|µs|ms|%)?")
_UNIT = {"KiB": 2.0**10, "MiB": 2.0**20, "GiB": 2.0**30, "ns": 1e-9, "µs": 1e-6, "ms": 1e-3, "%": 0.01}
#: how close two numbers are to count as equal: sentences round to two or three significant digits
RELATION_TOLERANCE = 0.05
#: a part of a sentence: up to its 。 or ；
_PART = re.compile(r"[^。；]+[。；]?")
#: a part shorter than this says too little to be asked alone
MIN_PART = 28
#: a part that points at the rest of its sentence anywhere in it (「eager 是它的 2 倍」, 「同样是 2 MiB」)
PART_LEANS = re.compile(r"它|同样|其余|其他|后者|前者|两者|分别|这|那|此时|之后|反过来|也")


class ClaimJudgement(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """A claim's 判断题: its true ``sentence`` and what is asked, ``prompt``. A false one names the observed
    ``key`` it changed and the ``wrong`` value given to it (the claim's expectation rejects it)."""

    claim: _Id
    question: _Id  # the question whose page shows the claim
    sentence: _Text
    prompt: _Text
    key: str = ""  # "" : the prompt is the true sentence
    wrong: Any = None
    shown: str = ""  # the part of the true sentence asked, where the prompt is a part; "" : the whole

    @property
    def asked(self) -> str:
        """What the prompt says when true: the true sentence or its part asked."""
        return self.shown or self.sentence

    @property
    def true(self) -> bool:
        return not self.key


def filled(statement: str, observed: Any) -> str | None:
    """The statement with the observed values, as a page shows it; None where a value was not observed."""
    missing: list[str] = []

    def value(key: str, spec: str) -> str:
        try:
            return binding.resolve(observed, key, spec)
        except binding.BindError:
            missing.append(key)
            return ""

    text = binding.fill(statement, value)
    return None if missing else text


def _shape(text: str, loose: bool) -> str:
    """A value's text with its numbers as ``#``: the unit and sign that remain, and for a whole number
    (``loose`` false) its decimals too, so 16 never reads as 1.6."""
    return re.sub(r"\d+(?:\.\d+)?" if loose else r"\d+", "#", _DIGIT_COMMA.sub("", text))


def _measured(value: Any) -> bool:
    """A float (or a timing, or a list holding one): shown to a few significant digits, however many decimals."""
    if isinstance(value, dict):
        return "median_s" in value
    if isinstance(value, (list, tuple)):
        return any(_measured(v) for v in value)
    return isinstance(value, float)


def _reads_alike(key: str, spec: str, observed: Any, changed: Any) -> bool:
    """Whether a wrong value's text could be the true one's: the same, a boolean's words, or the same shape."""
    true, wrong = binding.resolve(observed, key, spec), binding.resolve(changed, key, spec)
    value = binding.lookup(observed, key)
    loose = _measured(value)
    return (true == wrong or spec.startswith("?") or isinstance(value, bool)
            or _shape(true, loose) == _shape(wrong, loose))


def _of_its_kind(spec: str, value: Any, wrong: Any) -> bool:
    """Whether a wrong value is one its kind can take: a fraction shown as a percentage stays at most 100%.
    (A speed-up of 0 倍 reads as a trick: :func:`_rank` takes a zero only where nothing else is wrong.)"""
    if not isinstance(wrong, (int, float)) or isinstance(wrong, bool):
        return True
    if spec == "pct" and isinstance(value, (int, float)) and 0 <= value <= 1:
        return 0 <= wrong <= 1
    return True


def false_variants(statement: str, expect: Any, observed: Any) -> list[tuple[str, Any, str]]:
    """``(key, wrong value, sentence)`` for each likely wrong value of a key the statement shows and the claim
    expects, where the expectation rejects the changed observation, the value is one of its kind and the
    sentence reads like the true one."""
    true = filled(statement, observed)
    if true is None or not isinstance(observed, dict) or matchers.check(expect, observed):
        return []  # nothing observed, or the observation itself fails: no wrong value is told apart
    refs = binding.keys(statement)
    shown = [k for k in dict.fromkeys(k.split(".")[0] for k, _spec in refs) if not _tiny(observed.get(k))]
    out = []
    specs = [f for k, f in refs]
    for key, wrong in perturb.rejected(expect, observed, shown, perturb.likely_wrong_values):
        # a value the expectation accepts is not false
        changed = {**observed, key: wrong}
        said = filled(statement, changed)
        if (said is not None and said != true and all(_reads_alike(k, f, observed, changed) for k, f in refs)
                and all(_of_its_kind(f, observed[key], wrong) for k, f in zip(binding.keys(statement), specs)
                        if k[0] == key)):
            out.append((key, wrong, said))
    return out


def _tiny(value: Any) -> bool:
    """A float of magnitude below :data:`TINY` (an error size): which side of it is right is one machine's fact."""
    return isinstance(value, float) and 0 < abs(value) < TINY


def changed_span(said: str, true: str) -> tuple[str, str]:
    """Where a false sentence differs from the true one, widened to whole tokens (``400`` against ``40``,
    not ``0`` against nothing): ``(what the false sentence says, what the true one says)``."""
    start, a, b = _changed(said, true)
    return said[start:a].strip(), true[start:b].strip()


def _changed(said: str, true: str) -> tuple[int, int, int]:
    """:func:`changed_span`'s place: where it starts, and where it ends in ``said`` and in ``true``."""
    start = len(os.path.commonprefix([said, true]))
    end = len(os.path.commonprefix([said[start:][::-1], true[start:][::-1]]))
    a, b = len(said) - end, len(true) - end
    # a number or name is widened to its whole token; words (Chinese is not segmented) to their clause
    inside = _TOKEN if all(_TOKEN.match(c) for c in said[start:a] + true[start:b]) else _CLAUSE
    while start > 0 and inside.match(said[start - 1]):
        start -= 1
    while end > 0 and inside.match(said[a]):
        a, b, end = a + 1, b + 1, end - 1
    return start, a, b


def numbers(text: str, span: tuple[int, int] | None = None) -> tuple[list[float], list[float]]:
    """The numbers a text says, sizes in bytes, times in seconds and percentages as fractions, so that
    「2.5 MiB，是 512 KiB 的 5 倍」 reads as 5 = 2.5 MiB / 512 KiB (「一半」 says a 2): those within ``span``
    (start, end), then the others."""
    inside: list[float] = []
    others: list[float] = [2.0] if "一半" in text else []
    for m in _NUMBER.finditer(text):
        value = float(m.group(1).replace(",", "")) * _UNIT.get(m.group(2) or "", 1.0)
        (inside if span and m.start() < span[1] and span[0] < m.end(1) else others).append(value)
    return inside, others


def _near(x: float, y: float) -> bool:
    return abs(x - y) <= RELATION_TOLERANCE * max(abs(x), abs(y))


def _made_of(c: float, a: float, b: float) -> bool:
    """Whether ``c`` is ``a + b``, ``a - b``, ``a × b`` or ``a / b``, and says so: no operand is 0, none 1
    for a product or ratio, and ``c`` is neither operand."""
    if 0 in (a, b, c) or _near(c, a) or _near(c, b):
        return False
    sums = (a + b, a - b)
    return any(_near(c, r) for r in (*sums, *((a * b, a / b) if 1 not in (a, b) else ())))


def _telling(v: float) -> bool:
    """A number that does not recur by chance: not a small whole number (1 次 and 1 个 say nothing together)."""
    return not (v.is_integer() and abs(v) <= 16)


def relates(values: Sequence[float], others: Sequence[float]) -> bool:
    """Whether one of ``values`` and two numbers of ``others`` (or another of ``values``) make one another,
    or it is another number again (「4 MiB，正好是这个输出（4 MiB）」, 「256 KiB 和 256 KiB，一样大」): change
    that value alone and the text contradicts itself."""
    return _relates(tuple(values), tuple(others))


@functools.lru_cache(maxsize=4096)
def _relates(values: tuple[float, ...], others: tuple[float, ...]) -> bool:
    """:func:`relates`, remembered: every wrong value of one key asks it of the same numbers of the true sentence."""
    for i, v in enumerate(values):
        if _telling(v) and any(math.isclose(v, o, rel_tol=1e-3) for o in others):
            return True
        pool = [*values[:i], *values[i + 1:], *others]
        for j, a in enumerate(pool):
            for b in pool[j + 1:]:
                if _made_of(v, a, b) or _made_of(v, b, a) or _made_of(a, v, b) or _made_of(a, b, v) \
                        or _made_of(b, v, a) or _made_of(b, a, v):
                    return True
    return False


def asked_parts(said: str, true: str) -> tuple[str, str] | None:
    """What to ask of a false sentence and of its true one: both whole where the changed value relates to no
    two other numbers of the sentence; else the part (up to 。 or ；) holding the change, where it relates to
    none there and the part stands alone; else None: the change would give itself away."""
    start, a, b = _changed(said, true)
    if not relates(*numbers(true, (start, b))):
        return said, true
    part = next(m for m in _PART.finditer(true) if m.start() <= start < m.end() or m.end() == len(true))
    p, q = part.start(), max(part.end(), b)
    if q < len(true) and true[q - 1] not in "。；":
        return None  # the change runs over the part's end
    piece = true[p:q].strip()
    if len(piece) < MIN_PART or LEANS.search(piece) or PART_LEANS.search(piece) or relates(*numbers(true[p:q], (start - p, b - p))):
        return None
    end = q + len(said) - len(true)
    return _ended(said[p:end].strip()), _ended(piece)


def _ended(part: str) -> str:
    """A part as a sentence: ending in 。 where it ended in ；."""
    return part[:-1] + "。" if part.endswith("；") else part


def _rank(value: Any, wrong: Any) -> int:
    """How likely a wrong value is, most likely 0: ten times more or less is 1, zero is 2; a list's by its
    first changed element."""
    if isinstance(value, (list, tuple)) and isinstance(wrong, (list, tuple)):
        pairs = [(v, w) for v, w in zip(value, wrong, strict=False) if v != w]
        return _rank(*pairs[0]) if pairs and list(wrong) != list(value)[::-1] else 0
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not isinstance(wrong, (int, float)):
        return 0
    if wrong == 0:
        return 2
    return 1 if value and any(math.isclose(wrong, value * f) for f in (10, 0.1)) else 0


def claim_judgement(claim_id: str, question: str, statement: str, expect: Any, observed: Any) -> ClaimJudgement | None:
    """The one way a claim is asked (true or false, by a hash of its id), or None: no bound value, a sentence
    that does not stand alone, or no false variant that keeps to itself (a claim asked only true would give
    its answer away). The variant is chosen by the hash among the likeliest (:func:`_rank`); a true item
    asks the same part of the sentence as its false variant would."""
    if not binding.keys(statement):
        return None
    sentence = filled(statement, observed)
    if not sentence or LEANS.search(sentence) or MACHINE.search(sentence):
        return None
    variants = [(_rank(observed[key], wrong), key, wrong, parts) for key, wrong, said in
                false_variants(statement, expect, observed) if (parts := asked_parts(said, sentence))]
    if not variants:
        return None
    likeliest = [v for v in variants if v[0] == min(r for r, *_ in variants)]
    digest = hashlib.sha256(claim_id.encode()).digest()
    _rank_, key, wrong, (said, true) = likeliest[int.from_bytes(digest[1:5], "big") % len(likeliest)]
    shown = "" if true == sentence else true
    if digest[0] % 2 == 0:
        return ClaimJudgement(claim_id, question, sentence, true, shown=shown)
    return ClaimJudgement(claim_id, question, sentence, said, key=key, wrong=wrong, shown=shown)


def _change(j: ClaimJudgement) -> dict[str, Any]:
    """A false item's change: the key and value, and the words that differ (``said`` for ``true``), shown after answering."""
    said, true = changed_span(j.prompt, j.asked)
    return {"key": j.key, "value": j.wrong, "said": said[:100], "true": true[:100]}


def judgements(items: Sequence[ClaimJudgement], questions: Sequence[Question]) -> list[Objective]:
    """The claims' 判断题 of the bank's questions, under ``judge:<claim>``, linked to the claim on its page;
    a prompt asked already is not asked again."""
    by_id = {q.id: q for q in questions}
    out, asked = [], set()
    for j in items:
        q = by_id.get(j.question)
        if q is None or j.prompt in asked:
            continue
        asked.add(j.prompt)
        anchor = f"#claim-{j.claim}"
        out.append(Objective(id=f"judge:{j.claim}", kind="judge", question=q.id, prompt=j.prompt, answer=j.true,
                             answer_text="对" if j.true else "错", explain=j.sentence, claim=j.claim,
                             params={} if j.true else _change(j), title=q.title, tags=q.tags,
                             difficulty=q.difficulty, url=q.url + anchor,
                             page_url=q.page_url + anchor if q.page_url else None))
    return out
