"""判断题 from the claims' sentences: a claim's sentence as its page shows it (true), or the same sentence
with one observed value changed to a value a wrong mechanism would give (false).

The wrong values are :func:`verify.core.perturb.rejected`'s: kept only where the claim's own expectation
rejects the changed observation, and only where the wrong value reads like the true one (same unit,
same digits). Each claim is asked one way only, chosen by a hash of its id, so a sentence never appears
as both; the answer is 对 or 错 and the claim's true sentence is shown after, with a link to it on its
page. A claim is asked only where its record passed, it has a false variant, and its sentence does not
lean on the one before it (``它…``, ``同样…``). Key points are not asked: their ``contradicts`` are
fragments, far shorter than a point, so the length of a statement gave its answer away.
"""

from __future__ import annotations

import hashlib
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


class ClaimJudgement(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """A claim's 判断题: its true ``sentence`` and what is asked, ``prompt``. A false one names the observed
    ``key`` it changed and the ``wrong`` value given to it (the claim's expectation rejects it)."""

    claim: _Id
    question: _Id  # the question whose page shows the claim
    sentence: _Text
    prompt: _Text
    key: str = ""  # "" : the prompt is the true sentence
    wrong: Any = None

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


def false_variants(statement: str, expect: Any, observed: Any) -> list[tuple[str, Any, str]]:
    """``(key, wrong value, sentence)`` for each plausible wrong value of a key the statement shows and the
    claim expects, where the expectation rejects the changed observation and the sentence reads like the true one."""
    true = filled(statement, observed)
    if true is None or not isinstance(observed, dict) or matchers.check(expect, observed):
        return []  # nothing observed, or the observation itself fails: no wrong value is told apart
    refs = binding.keys(statement)
    shown = [k for k in dict.fromkeys(k.split(".")[0] for k, _spec in refs) if not _tiny(observed.get(k))]
    out = []
    for key, wrong in perturb.rejected(expect, observed, shown):  # a value the expectation accepts is not false
        changed = {**observed, key: wrong}
        said = filled(statement, changed)
        if said is not None and said != true and all(_reads_alike(k, f, observed, changed) for k, f in refs):
            out.append((key, wrong, said))
    return out


def _tiny(value: Any) -> bool:
    """A float of magnitude below :data:`TINY` (an error size): which side of it is right is one machine's fact."""
    return isinstance(value, float) and 0 < abs(value) < TINY


def changed_span(said: str, true: str) -> tuple[str, str]:
    """Where a false sentence differs from the true one, widened to whole tokens (``400`` against ``40``,
    not ``0`` against nothing): ``(what the false sentence says, what the true one says)``."""
    start = 0
    while start < min(len(said), len(true)) and said[start] == true[start]:
        start += 1
    end = 0
    while end < min(len(said), len(true)) - start and said[-1 - end] == true[-1 - end]:
        end += 1
    a, b = len(said) - end, len(true) - end
    # a number or name is widened to its whole token; words (Chinese is not segmented) to their clause
    inside = _TOKEN if all(_TOKEN.match(c) for c in said[start:a] + true[start:b]) else _CLAUSE
    while start > 0 and inside.match(said[start - 1]):
        start -= 1
    while end > 0 and inside.match(said[a]):
        a, b, end = a + 1, b + 1, end - 1
    return said[start:a].strip(), true[start:b].strip()


def _is_zero(value: Any) -> bool:
    return not isinstance(value, bool) and isinstance(value, (int, float)) and value == 0


def claim_judgement(claim_id: str, question: str, statement: str, expect: Any, observed: Any) -> ClaimJudgement | None:
    """The one way a claim is asked (true or false, by a hash of its id), or None: no bound value, a sentence
    that does not stand alone, or no false variant (a claim asked only true would give its answer away).
    Among the false variants, a zero is taken only where nothing else is wrong (``快 0 倍`` reads as a trick)."""
    if not binding.keys(statement):
        return None
    sentence = filled(statement, observed)
    if not sentence or LEANS.search(sentence) or MACHINE.search(sentence):
        return None
    variants = false_variants(statement, expect, observed)
    if not variants:
        return None
    digest = hashlib.sha256(claim_id.encode()).digest()
    if digest[0] % 2 == 0:
        return ClaimJudgement(claim_id, question, sentence, sentence)
    plausible = [v for v in variants if not _is_zero(v[1])] or variants
    key, wrong, said = plausible[int.from_bytes(digest[1:5], "big") % len(plausible)]
    return ClaimJudgement(claim_id, question, sentence, said, key=key, wrong=wrong)


def _change(j: ClaimJudgement) -> dict[str, Any]:
    """A false item's change: the key and value, and the words that differ (``said`` for ``true``), shown after answering."""
    said, true = changed_span(j.prompt, j.sentence)
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
