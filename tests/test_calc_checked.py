"""``snippets._calc.checked``: the one loop every 计算题 items claim runs (its calc_items, and each
answer paired with the value its claim finds a second way)."""

from __future__ import annotations

from snippets._calc import ITEMS, checked, draw, items, same


def _toy(**extra):
    """A calculator of 3·a, asked in halves (scale 2), with a worked formula unless ``extra`` drops it."""
    calc = {"id": "toy", "question": "q", "claim": "toy.items", "unit": "x", "explain": "",
            "prompt": "a = {a}", "params": {"a": list(range(1, 20))}, "answer": lambda a: 3 * a, "scale": 2,
            "worked": lambda a: f"3×{a} ÷ 2"}
    calc.update(extra)
    return {k: v for k, v in calc.items() if v is not None}


def test_checked_gives_the_items_with_their_worked_formula_and_pairs_each_with_the_value_found_again():
    seen = []

    def again(calc, params):
        seen.append((calc["id"], params))
        return 3 * params["a"]  # in the formula's units: checked divides by scale as the answer is

    quiz, pairs = checked([_toy()], again)
    assert seen == [("toy", p) for p in draw(_toy())]
    assert len(quiz) == 1 and len(pairs) == ITEMS and same(pairs)
    plain = items(_toy())
    for item, plain_item in zip(quiz[0]["items"], plain["items"], strict=True):
        assert item == {**plain_item, "worked": f"3×{item['params']['a']} ÷ 2"}
    assert [found for _item, found in pairs] == [1.5 * p["a"] for p in draw(_toy())]
    assert {k: v for k, v in quiz[0].items() if k != "items"} == {k: v for k, v in plain.items() if k != "items"}


def test_a_calculator_without_a_worked_template_gets_none():
    quiz, _pairs = checked([_toy(worked=None)], lambda _c, p: 3 * p["a"])
    assert all("worked" not in item for item in quiz[0]["items"])


def test_a_value_found_again_that_differs_anywhere_is_not_the_same():
    _quiz, pairs = checked([_toy()], lambda _c, p: 3 * p["a"] + (p["a"] == draw(_toy())[-1]["a"]))
    assert not same(pairs)
    _quiz, pairs = checked([_toy()], lambda _c, p: 1.5 * p["a"])  # already scaled: divided twice
    assert not same(pairs)
    assert same(checked([_toy(), _toy(id="other")], lambda _c, p: 3 * p["a"])[1])
