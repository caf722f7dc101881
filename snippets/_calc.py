"""计算题 as a claim observes them: a calculator's items, drawn with a fixed seed, each with its formula's answer.

A calculator (``CALCULATORS`` in a question's ``calc.py``) is a formula with the values each of its
parameters may take and how an item reads: ``prompt`` is formatted with the drawn parameters
(``shown`` gives a parameter's words), ``answer(**params) / scale`` is the number asked for, in
``unit``. The claim of that file draws :data:`ITEMS` items of each, checks each answer against what
really happens where it can (:func:`checked`), and returns them as its observed ``calc_items``: the
site and the quiz read them from the ledger (``verify.quiz.objective``) and never run this code.

Parameters are drawn with a generator seeded by the calculator's id, so every machine and every
build asks the same items under the same ids, and progress stays with them.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import Any

#: how many items each calculator gives (different parameters each)
ITEMS = 6
#: what the quiz reads of a calculator besides its items
SHOWN = ("id", "question", "claim", "unit", "tolerance", "digits", "explain")

#: an item of ``calc_items`` and its answer found a second way
Pair = tuple[dict[str, Any], float]


def draw(calc: dict[str, Any]) -> list[dict[str, Any]]:
    """:data:`ITEMS` different parameter sets of ``calc``, the same on every run."""
    rng = random.Random(calc["id"])
    seen: list[tuple] = []
    out: list[dict[str, Any]] = []
    for _ in range(ITEMS * 20):
        if len(out) == ITEMS:
            break
        params = {k: rng.choice(list(v)) for k, v in calc["params"].items()}
        key = tuple(sorted(params.items()))
        if key not in seen:
            seen.append(key)
            out.append(params)
    return out


def items(calc: dict[str, Any]) -> dict[str, Any]:
    """``calc``'s entry of ``calc_items``: what the quiz shows of it, and each item's parameters, prompt
    and exact answer in ``unit`` (the quiz rounds it to ``digits`` significant digits)."""
    shown = calc.get("shown", {})
    out = []
    for params in draw(calc):
        words = {k: shown[k](v) if k in shown else v for k, v in params.items()}
        out.append({"params": params, "prompt": calc["prompt"].format(**words),
                    "answer": calc["answer"](**params) / calc.get("scale", 1.0)})
    defaults = {"tolerance": 0.01, "digits": 3}
    return {**{k: calc.get(k, defaults.get(k)) for k in SHOWN}, "items": out}


def checked(calculators: list[dict[str, Any]],
            again: Callable[[dict[str, Any], dict[str, Any]], float]) -> tuple[list[dict[str, Any]], list[Pair]]:
    """The ``calc_items`` of ``calculators`` (:func:`items`), each item with its ``worked`` formula where
    its calculator writes one, and every item paired with its answer found a second way:
    ``again(calculator, params)`` in the formula's own units, divided by ``scale`` as the answer is.
    The claim compares the pairs (:func:`same`, or its own measure); nothing here decides whether they agree."""
    quiz, pairs = [], []
    for calc in calculators:
        entry = items(calc)
        for item in entry["items"]:
            if "worked" in calc:
                item["worked"] = calc["worked"](**item["params"])
            pairs.append((item, again(calc, item["params"]) / calc.get("scale", 1.0)))
        quiz.append(entry)
    return quiz, pairs


def same(pairs: list[Pair]) -> bool:
    """Whether every item's answer equals, to the last bit, the value found the second way."""
    return all(found == item["answer"] for item, found in pairs)
