"""Objective items, where one answer is right: the 计算题 that claims observed, and checking any objective answer.

- A 判断题 is a claim's sentence, true or with one observed value made false: :mod:`verify.quiz.judge`.
- A 计算题 asks for a number a formula gives on parameters drawn for it. The items are a claim's
  observed values (``calc_items``, read from the ledger: :func:`verify.quiz.claims.gather`): the
  claim of a question's ``snippets/<question>/calc.py`` draws them with a fixed seed per calculator
  and checks each answer against what really happens (a KV cache's tensors, a real sharding, the
  occupancy rules on the spec table). Nothing here imports or runs snippet code, so an item is
  asked only where a passing record of its claim exists, and the answer is the one it observed,
  rounded to the calculator's digits; an answer within the stated relative tolerance is right, and
  so is the answer rounded to two significant digits (1.3 or 1.2 for 1.25).

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
    """One drawn item: its parameters, the prompt they give, and the exact answer in the calculator's unit;
    ``worked`` is the formula with this item's numbers put in, where the calculator writes one."""

    params: Annotated[dict[_Id, int | float | str], msgspec.Meta(max_length=20)]
    prompt: Annotated[str, msgspec.Meta(min_length=1, max_length=2000)]
    answer: float
    worked: _Text = ""

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


#: what a parameter is called where an item shows its numbers without a worked formula
PARAM_WORDS = {"layers": "层数", "kv_heads": "KV 头数", "head_dim": "head_dim", "batch": "batch", "seq": "上下文长度",
               "dtype": "dtype", "params": "参数量 Ψ", "stage": "ZeRO stage", "gpus": "卡数 N",
               "capability": "计算能力", "threads": "每 block 线程数", "registers": "每线程寄存器数",
               "shared_kib": "每 block 的 shared memory（KiB）"}


def _shown(value: int | float | str) -> str:
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    return f"{value:,}" if isinstance(value, int) else str(value)


def worked(item: CalcItem, answer_text: str) -> str:
    """This item's numbers: the calculator's formula with them put in and the answer, or else its
    parameters one by one (「层数 = 32，…」). The reveal shows it under 「本题：」."""
    if item.worked:
        return f"{item.worked} = {answer_text}"
    return "，".join(f"{PARAM_WORDS.get(k, k)} = {_shown(v)}" for k, v in item.params.items())


def calculations(sets: Sequence[CalcSet], questions: Sequence[Question]) -> list[Objective]:
    """The items of each observed calculator whose question is in the bank, under ``calc:<id>:<n>``; an
    item's ``params`` carry its numbers as the reveal shows them, under ``worked``."""
    by_id = {q.id: q for q in questions}
    out = []
    for calc in sets:
        q = by_id.get(calc.question)
        if q is None:
            continue
        for n, item in enumerate(calc.items):
            value = _rounded(item.answer, calc.digits)
            text = (f"{value:,.{max(0, calc.digits - 1 - math.floor(math.log10(abs(value))))}f} {calc.unit}"
                    if value else f"0 {calc.unit}")
            out.append(Objective(
                id=f"calc:{calc.id}:{n}", kind="calc", question=q.id, title=q.title, tags=q.tags,
                difficulty=q.difficulty, url=q.url, page_url=q.page_url, prompt=item.prompt, answer=value,
                answer_text=text, unit=calc.unit, tolerance=calc.tolerance, explain=calc.explain, claim=calc.claim,
                params={**item.params, "worked": worked(item, text)}))
    return out


# --- checking an answer (QuizCore.checkObjective is the same rule) ----------------------------------

_TRUE = {"对", "正确", "true", "t", "yes", "y", "是", "1"}
_FALSE = {"错", "错误", "false", "f", "no", "n", "否", "0", "不对"}


def number(text: Any) -> float | None:
    """The number in ``1,234.5``, ``约 2.5 GiB``, ``3e9``; None when there is none."""
    t = unicodedata.normalize("NFKC", str(text)).replace(",", "").replace("，", "")
    m = re.search(r"[-+]?\d+(?:\.\d+)?(?:e[-+]?\d+)?", t, re.I)
    return float(m.group(0)) if m else None


def _exponent(x: float) -> int:
    """⌊log10 |x|⌋, exact at powers of ten (``log10`` may miss by one there)."""
    e = math.floor(math.log10(abs(x)))
    while _power(e + 1) <= abs(x):
        e += 1
    while _power(e) > abs(x):
        e -= 1
    return e


def _power(e: int) -> float:
    """10^e, correctly rounded: an exact integer power, or one divided by it."""
    return float(10**e) if e >= 0 else 1 / float(10**-e)


def two_digits(given: float, want: float) -> bool:
    """Whether ``given`` is ``want`` rounded to two significant digits (either way at a tie: 1.2 and 1.3
    for 1.25): a whole number of units of the second digit, at most half a unit away."""
    if want == 0:
        return False
    unit = _power(_exponent(want) - 1)
    steps = given / unit
    return abs(steps - round(steps)) < 1e-6 and abs(given - want) <= unit / 2 * (1 + 1e-9)


def check(item: Objective, answer: Any) -> bool:
    """Whether ``answer`` is right: 对/错 for a 判断题; for a 计算题 a number within the relative tolerance,
    or the answer rounded to two significant digits."""
    if item.kind == "judge":
        said = unicodedata.normalize("NFKC", str(answer)).strip().lower()
        return (said in _TRUE) if item.answer else (said in _FALSE)
    given = number(answer)
    if given is None:
        return False
    want = float(item.answer)
    return abs(given - want) <= item.tolerance * abs(want) + 1e-12 or two_digits(given, want)
