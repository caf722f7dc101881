"""The real bank's 判断题, built from the checkout's ledger as the terminal builds it (nothing run): the
length of a statement does not give its answer away, about half are false, no prompt is asked twice,
and every false one is false by its claim's own expectation, checked here again from the ledger."""

from __future__ import annotations

import collections

import pytest

from tests._project import REPO_SETTINGS as SETTINGS
from verify.core import binding, matchers, states
from verify.quiz.bank import _build_bank
from verify.quiz.claims import gather
from verify.running import engine

MIN_ITEMS = 200  # about 420 when the cache holds this machine's evidence


@pytest.fixture(scope="module")
def ledger():
    return engine.verify(SETTINGS, run=False)


@pytest.fixture(scope="module")
def items(ledger) -> list:
    bank = _build_bank(SETTINGS.docs_dir, html=False, facts=gather(ledger, SETTINGS.docs_dir))
    return [o for o in bank.objective if o.kind == "judge"]


def best_length_rule(items: list) -> float:
    """The accuracy of the best rule "true when longer than t" or "true when not longer than t", over every t."""
    lengths = sorted({len(o.prompt) for o in items})
    best = 0.0
    for t in [lengths[0] - 1, *lengths]:
        longer_true = sum((len(o.prompt) > t) is bool(o.answer) for o in items) / len(items)
        best = max(best, longer_true, 1 - longer_true)
    return best


def test_the_length_of_a_statement_does_not_give_its_answer_away(items):
    false = sum(not o.answer for o in items)
    print(f"判断题 {len(items)}: {len(items) - false} true, {false} false; "
          f"best length rule {best_length_rule(items):.1%}")
    assert len(items) >= MIN_ITEMS, len(items)
    assert 0.4 <= false / len(items) <= 0.6, (false, len(items))
    assert best_length_rule(items) <= 0.60
    twice = [p for p, n in collections.Counter(o.prompt for o in items).items() if n > 1]
    assert not twice, twice


def test_the_rule_finds_a_length_that_gives_the_answer_away():
    """The measure itself: on items whose true ones are all longer it is 100%."""
    from types import SimpleNamespace  # noqa: PLC0415

    short = [SimpleNamespace(prompt="x" * 10, answer=False)] * 7
    long = [SimpleNamespace(prompt="x" * 100, answer=True)] * 3
    assert best_length_rule(short + long) == 1.0
    assert best_length_rule(short) == 1.0 and best_length_rule(short[:2] + long[:2]) == 1.0


def test_every_item_is_a_claims_sentence_and_every_false_one_fails_its_expectation(ledger, items):
    """Each item comes from a claim whose record passed; the shown sentence is the claim's, with the
    observed values (true) or with one value changed (false) that the claim's expectation rejects."""
    for o in items:
        spec = ledger.registry.claims[o.claim]
        record, status = ledger.best_record(o.claim)
        assert record is not None and states.observed(status), o.id
        assert o.id == f"judge:{o.claim}" and o.url.endswith(f"#claim-{o.claim}"), o.id
        assert o.explain == ledger.sentence(o.claim), o.id
        if o.answer:
            assert o.prompt == o.explain and o.params == {} and o.answer_text == "对", o.id
            continue
        key, wrong = o.params["key"], o.params["value"]
        changed = {**record.observed, key: wrong}
        assert key in spec.expect and wrong != record.observed[key], o.id
        assert matchers.check(spec.expect, changed), f"{o.id}: the expectation accepts {key}={wrong!r}"
        assert o.prompt == binding.fill(spec.statement, lambda k, f: binding.resolve(changed, k, f)), o.id
        assert o.prompt != o.explain and o.answer_text == "错", o.id


def test_a_sentence_is_asked_one_way_only(items):
    """A claim is asked once; the true sentence of a claim asked false is not asked as true elsewhere."""
    assert len({o.claim for o in items}) == len(items)
    assert not {o.prompt for o in items if o.answer} & {o.explain for o in items if not o.answer}
