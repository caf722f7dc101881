"""Objective items, where one answer is right: the 计算题 that claims observed, and checking any objective answer.

- A 判断题 is a claim's sentence, true or with one observed value made false: :mod:`verify.quiz.judge`.
- A 计算题 asks for a number a formula gives on parameters drawn for it. The items are a claim's
  observed values (``calc_items``, read from the ledger: :func:`verify.quiz.claims.gather`): the
  claim of a question's ``snippets/<question>/calc.py`` draws them with a fixed seed per calculator
  and checks each answer against what really happens (a KV cache's tensors, a real sharding, the
  occupancy rules on the spec table). Nothing here imports or runs snippet code, so an item is
  asked only where a passing record of its claim exists, and the answer is the one it observed,
  rounded to the calculator's digits and checked with its stated relative tolerance.

Nothing here is keyword matching: the browser quiz (``QuizCore.checkObjective``) and the terminal
check the same answer the same way.
"""

from __future__ import annotations

import math
import re
import unicodedata
from collections.abc import Sequence
from typing import Annotated, Any

import msgspec

from verify.quiz.schema import Objective, Question

#: the observed key under which a claim gives its 计算题
OBSERVED_KEY = "calc_items"
_Id = Annotated[str, msgspec.Meta(min_length=1, max_length=100)]
_Text = Annotated[str, msgspec.Meta(max_length=2000)]


def _finite(value: float, what: str) -> None:
    if not math.isfinite(value):
        raise ValueError(f"{what}: not a finite number")


class CalcItem(msgspec.Struct, forbid_unknown_fields=True):
    """One drawn item: its parameters, the prompt they give, and the exact answer in the calculator's unit."""

    params: Annotated[dict[_Id, int | float | str], msgspec.Meta(max_length=20)]
    prompt: Annotated[str, msgspec.Meta(min_length=1, max_length=2000)]
    answer: float

    def __post_init__(self) -> None:
        _finite(self.answer, "answer")
        for key, value in self.params.items():
            if isinstance(value, float):
                _finite(value, f"params.{key}")
            elif isinstance(value, str) and len(value) > 100:
                raise ValueError(f"params.{key}: longer than 100 characters")


class CalcSet(msgspec.Struct, forbid_unknown_fields=True):
    """A calculator as its claim observed it (``snippets/_calc.py``): what the quiz shows, and its items.

    ``claim`` is the claim that checks the formula itself; ``tolerance`` is relative; the answer is
    shown to ``digits`` significant digits.
    """

    id: _Id
    question: _Id
    claim: _Id
    unit: Annotated[str, msgspec.Meta(max_length=40)]
    tolerance: Annotated[float, msgspec.Meta(gt=0, le=1)]
    digits: Annotated[int, msgspec.Meta(ge=1, le=15)]
    explain: _Text
    items: Annotated[list[CalcItem], msgspec.Meta(max_length=100)]


def calc_sets(observed: Any, claim_id: str) -> tuple[CalcSet, ...]:
    """A record's ``calc_items`` as :class:`CalcSet`; ``ValueError`` naming the claim and the field."""
    try:
        return tuple(msgspec.convert(observed, list[CalcSet], strict=True))
    except msgspec.ValidationError as exc:
        raise ValueError(f"{claim_id}: observed {OBSERVED_KEY}: {exc}") from None


def _rounded(x: float, digits: int) -> float:
    if x == 0 or not math.isfinite(x):
        return x
    return round(x, digits - 1 - math.floor(math.log10(abs(x))))


def calculations(sets: Sequence[CalcSet], questions: Sequence[Question]) -> list[Objective]:
    """The items of each observed calculator whose question is in the bank, under ``calc:<id>:<n>``."""
    by_id = {q.id: q for q in questions}
    out = []
    for calc in sets:
        q = by_id.get(calc.question)
        if q is None:
            continue
        for n, item in enumerate(calc.items):
            value = _rounded(item.answer, calc.digits)
            out.append(Objective(
                id=f"calc:{calc.id}:{n}", kind="calc", question=q.id, title=q.title, tags=q.tags,
                difficulty=q.difficulty, url=q.url, page_url=q.page_url, prompt=item.prompt, answer=value,
                answer_text=f"{value:,.{max(0, calc.digits - 1 - math.floor(math.log10(abs(value))))}f} {calc.unit}"
                if value else f"0 {calc.unit}",
                unit=calc.unit, tolerance=calc.tolerance, explain=calc.explain, claim=calc.claim,
                params=dict(item.params)))
    return out


# --- checking an answer (QuizCore.checkObjective is the same rule) ----------------------------------

_TRUE = {"对", "正确", "true", "t", "yes", "y", "是", "1"}
_FALSE = {"错", "错误", "false", "f", "no", "n", "否", "0", "不对"}


def number(text: Any) -> float | None:
    """The number in ``1,234.5``, ``约 2.5 GiB``, ``3e9``; None when there is none."""
    t = unicodedata.normalize("NFKC", str(text)).replace(",", "").replace("，", "")
    m = re.search(r"[-+]?\d+(?:\.\d+)?(?:e[-+]?\d+)?", t, re.I)
    return float(m.group(0)) if m else None


def check(item: Objective, answer: Any) -> bool:
    """Whether ``answer`` is right: 对/错 for a 判断题, a number within the tolerance for a 计算题."""
    if item.kind == "judge":
        said = unicodedata.normalize("NFKC", str(answer)).strip().lower()
        return (said in _TRUE) if item.answer else (said in _FALSE)
    given = number(answer)
    if given is None:
        return False
    want = float(item.answer)
    return abs(given - want) <= item.tolerance * abs(want) + 1e-12
