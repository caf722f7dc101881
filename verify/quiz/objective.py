"""Objective items, where one answer is right: 判断题 from key points and 计算题 from calculators.

- A 判断题 states a key point (true) or one of its ``contradicts`` statements (false); the answer
  is 对 or 错 and the point is shown after, with its page.
- A 计算题 asks for a number a formula gives on parameters drawn for it: a *calculator* is a pure
  function in a question's snippet folder (``snippets/<question>/calc.py``, :data:`CALCULATORS`)
  whose formula a claim checks against what really happens (a KV cache's tensors, the occupancy
  rules on the spec table). The answer is the function's value, checked with the calculator's
  stated relative tolerance. Parameters are drawn with a fixed seed per calculator, so a build
  asks the same items and progress stays with them.

Nothing here is keyword matching: the browser quiz (``QuizCore.checkObjective``) and the terminal
check the same answer the same way.
"""

from __future__ import annotations

import importlib.util
import math
import random
import re
import sys
import unicodedata
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Any

from verify.quiz.schema import Objective, Question

#: how many items each calculator gives (different parameters each)
PER_CALCULATOR = 6
_CJK_SPACE = re.compile(r"(?<=[\u3400-\u9fff，。、；：）])\s+(?=[\u3400-\u9fff（])")


@dataclass(frozen=True)
class Calculator:
    """A formula a claim checks, with the parameters a 计算题 draws for it.

    ``prompt`` is formatted with the drawn parameters (``{layers}``); ``params`` maps each name to
    the values it may take; ``answer(**params)`` is the number asked for, in ``unit`` (its value
    is divided by ``scale`` first: bytes shown in GiB); ``tolerance`` is relative.
    """

    id: str
    question: str
    claim: str
    prompt: str
    params: dict[str, Sequence[Any]]
    answer: Callable[..., float]
    unit: str
    explain: str
    tolerance: float = 0.01
    scale: float = 1.0
    digits: int = 3
    shown: dict[str, Callable[[Any], str]] = field(default_factory=dict)  # a parameter's words in the prompt


def plain_statement(text: str) -> str:
    """A ``contradicts`` statement (parts separated by spaces) as a sentence: no space between Chinese words."""
    return _CJK_SPACE.sub("", " ".join(text.split()))


def judgements(questions: Sequence[Question]) -> list[Objective]:
    """Every key point as a true statement and each of its ``contradicts`` as a false one."""
    out = []
    for q in questions:
        for i, kp in enumerate(q.key_points):
            def item(item_id: str, prompt: str, right: bool, q: Question = q, point: str = kp.point) -> Objective:
                return Objective(id=item_id, kind="judge", question=q.id, prompt=prompt, answer=right,
                                 answer_text="对" if right else "错", explain=point, title=q.title, tags=q.tags,
                                 difficulty=q.difficulty, url=q.url, page_url=q.page_url)

            out.append(item(f"judge:{q.id}:{i}", kp.point, True))
            out += [item(f"judge:{q.id}:{i}:{j}", plain_statement(wrong), False) for j, wrong in enumerate(kp.contradicts)]
    return out


def _rounded(x: float, digits: int) -> float:
    if x == 0 or not math.isfinite(x):
        return x
    return round(x, digits - 1 - math.floor(math.log10(abs(x))))


def calculations(calculators: Sequence[Calculator], questions: Sequence[Question]) -> list[Objective]:
    """``PER_CALCULATOR`` items of each calculator whose question is in the bank."""
    by_id = {q.id: q for q in questions}
    out = []
    for calc in calculators:
        q = by_id.get(calc.question)
        if q is None:
            continue
        rng = random.Random(calc.id)
        seen: set[tuple] = set()
        for _ in range(PER_CALCULATOR * 20):
            if len(seen) == PER_CALCULATOR:
                break
            params = {k: rng.choice(list(v)) for k, v in calc.params.items()}
            key = tuple(sorted(params.items()))
            if key in seen:
                continue
            seen.add(key)
            value = _rounded(calc.answer(**params) / calc.scale, calc.digits)
            words = {k: calc.shown[k](v) if k in calc.shown else v for k, v in params.items()}
            out.append(Objective(
                id=f"calc:{calc.id}:{len(seen) - 1}", kind="calc", question=q.id, title=q.title, tags=q.tags,
                difficulty=q.difficulty, url=q.url, page_url=q.page_url, prompt=calc.prompt.format(**words), answer=value,
                answer_text=f"{value:,.{max(0, calc.digits - 1 - math.floor(math.log10(abs(value))))}f} {calc.unit}"
                if value else f"0 {calc.unit}",
                unit=calc.unit, tolerance=calc.tolerance, explain=calc.explain, claim=calc.claim,
                params={k: v for k, v in params.items()}))
    return out


def _load(path: Path) -> ModuleType:
    root = str(path.parent.parent.parent)  # a calculator may use the project's shared helpers (snippets._gpu)
    if root not in sys.path:
        sys.path.insert(0, root)
    spec = importlib.util.spec_from_file_location(f"_calc_{path.parent.name.replace('-', '_')}", path)
    if spec is None or spec.loader is None:
        raise ImportError(path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def calculators(root: Path) -> list[Calculator]:
    """The calculators of a checkout: ``CALCULATORS`` of every ``snippets/*/calc.py``, each a dict of
    :class:`Calculator`'s fields (a snippet imports nothing of the quiz: its claims stay keyed by
    the formula alone). A calculator that does not fit names its file and field."""
    out: list[Calculator] = []
    names = {f for f in Calculator.__dataclass_fields__}
    for path in sorted((Path(root) / "snippets").glob("*/calc.py")):
        rel = path.relative_to(root).as_posix()
        for n, spec in enumerate(getattr(_load(path), "CALCULATORS", ())):
            if not isinstance(spec, dict) or set(spec) - names:
                raise ValueError(f"{rel}: CALCULATORS[{n}] must be a dict of {sorted(names)}")
            try:
                out.append(Calculator(**spec))
            except TypeError as exc:
                raise ValueError(f"{rel}: CALCULATORS[{n}]: {exc}") from None
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
