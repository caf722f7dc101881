"""The real bank's 判断题, built from the checkout's ledger as the terminal builds it (nothing run): the
length of a statement does not give its answer away, about half are false, no prompt is asked twice,
every false one is false by its claim's own expectation, checked here again from the ledger, and none
is one a review found answerable from its wording alone."""

from __future__ import annotations

import collections

import pytest

from tests import _judge_solver as solver
from tests._project import REPO_SETTINGS as SETTINGS
from verify.core import binding, matchers, perturb, scope, states
from verify.quiz import judge
from verify.quiz.bank import _build_bank
from verify.quiz.claims import gather
from verify.running import engine

MIN_ITEMS = 200  # 202 from the committed evidence: timing and measured claims are not asked


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
        assert spec.kind not in judge.UNASKED, o.id  # a timing or a measured value is one machine's, not knowledge
        assert o.id == f"judge:{o.claim}" and o.url.endswith(f"#claim-{o.claim}"), o.id
        assert o.explain == ledger.sentence(o.claim), o.id
        tag = f"〔{scope.tag(spec, record)}〕"  # the scope the claim's page shows beside it
        assert o.prompt.endswith(tag), o.id
        prompt = o.prompt.removesuffix(tag)
        if o.answer:
            assert _part_of(prompt, o.explain) and o.params == {} and o.answer_text == "对", o.id
            continue
        key, wrong = o.params["key"], o.params["value"]
        changed = {**record.observed, key: wrong}
        assert key in spec.expect and wrong != record.observed[key], o.id
        assert matchers.check(spec.expect, changed), f"{o.id}: the expectation accepts {key}={wrong!r}"
        said = binding.fill(spec.statement, lambda k, f: binding.resolve(changed, k, f))
        assert _part_of(prompt, said), o.id
        assert not _part_of(prompt, o.explain) and o.answer_text == "错", o.id
        assert o.params["said"] in prompt and o.params["true"] in o.explain and o.params["said"] != o.params["true"]


def _part_of(prompt: str, sentence: str) -> bool:
    """The sentence itself, or one of its parts up to 。 or ； (a ； asked as 。)."""
    return prompt == sentence or (prompt[:-1] in sentence and sentence[sentence.index(prompt[:-1]) + len(prompt) - 1] in "。；")


def _bare(prompt: str) -> str:
    """A prompt without its scope tag (「〔CPU〕」)."""
    return prompt[:prompt.rindex("〔")] if prompt.endswith("〕") else prompt


def test_a_sentence_is_asked_one_way_only(items):
    """A claim is asked once; the true sentence of a claim asked false is not asked as true elsewhere."""
    assert len({o.claim for o in items}) == len(items)
    assert all(_bare(o.prompt) != o.prompt for o in items)
    assert not {_bare(o.prompt) for o in items if o.answer} & {o.explain for o in items if not o.answer}


#: false items a review of the bank (30 sampled, 18 false) answered from the wording alone, by claim: what the
#: false item said. Ten times the value (「1、20、4 MiB」 for a linear growth), a count above its total, a count
#: against a negation, an error, a listed name or the rest of the sentence, a total the words make.
REVIEWED = {
    "ckpt.linear-in-depth": "1 MiB、20 MiB、4 MiB",
    "gmem.misaligned": "20 条对 1 条",
    "kernels.cuda-layernorm-pair-reduce": "是 20 次块内归约",
    "vf.relocations": "6 格里有 10 格",
    "norm.dims": "没有 running 统计（buffer 1 个）",
    "boxed.cpu-fallback-any-schema": "不经过它：被接住的 aten 调用有 1 个",
    "selfreg.dlopen": "表里就有了 2 个（`square`）",
    "quant.asymmetric-nonnegative": "对称的 0.49，省不了多少",
    "autograd.residual-grad-sum": "拿到的已经是其中一份",
    "vf.missing-key-function": "链接退出码 0",
    "zero.paper-comm": "合计 0.984·Ψ",
}


def test_no_false_item_the_review_answered_from_its_wording_is_made_any_more(ledger, items):
    """Each reviewed variant is one the generator's wrong values make of the claim's observation (so this
    checks something), yet no variant the claim could be asked with says it, and the bank does not."""
    by_claim = {o.claim: o for o in items}
    for cid, said in REVIEWED.items():
        spec = ledger.registry.claims[cid]
        record, status = ledger.best_record(cid)
        assert record is not None and states.observed(status), cid
        observed = record.observed
        made = [judge.filled(spec.statement, {**observed, key: wrong}) or "" for key in spec.expect if key in observed
                for wrong in perturb.likely_wrong_values(observed[key])]
        assert any(said in text for text in made), f"{cid}: the review's variant is not one a wrong value makes"
        if spec.kind in judge.UNASKED:  # a measured value: the claim is not asked at all
            assert judge.claim_judgement(cid, "q", spec.statement, spec.expect, observed, spec.kind) is None, cid
            assert cid not in by_claim, cid
            continue
        asked = [false for _rank, _key, _wrong, (false, _true) in judge.variants(spec.statement, spec.expect, observed)]
        assert not [a for a in asked if said in a], cid
        assert cid not in by_claim or said not in by_claim[cid].prompt, cid


def test_an_examiner_who_reads_only_the_text_does_no_better_than_a_length_rule(items):
    """The examiner's rules (tests/_judge_solver.py): a number the others of its sentence would make once a
    perturbation is undone, a negative size, a percentage above 100, 「0 倍」, and the words a value
    contradicts (an impossible magnitude, a count above its total, a nonzero count after a negation). On the
    old bank (362 items) its cued arithmetic flagged 24 false items against 6 true, and 3 false items had
    impossible values (150%, 500%); on the bank the review sampled (305 items) the words rule flagged 13 false
    against 3 true. Now the flags fall on true and false alike, and its best variant scores no more than 60%."""
    false = [o for o in items if not o.answer]
    true = [o for o in items if o.answer]
    scored = solver.scores(items)
    print({k: f"{v:.1%}" for k, v in scored.items()})
    assert max(scored.values()) <= 0.60, scored
    assert not [o.prompt for o in false if solver.implausible(o.prompt)]
    for cued in (False, True):
        flagged = [sum(solver.broken_arithmetic(o.prompt, solver.UNDO_ALL, cued) for o in group) / len(group)
                   for group in (false, true)]
        assert flagged[0] <= flagged[1] + 0.05, (cued, flagged)  # a flag says nothing about the answer
    flagged = [sum(solver.contradicted(o.prompt) for o in group) / len(group) for group in (false, true)]
    assert flagged[0] <= flagged[1] + 0.03, flagged


def test_the_examiner_catches_what_gives_itself_away():
    """The solver itself: on sentences whose false form contradicts its own numbers or says an impossible
    value, it answers (nearly) all right."""
    from types import SimpleNamespace  # noqa: PLC0415

    made = [("A 用了 2 ms、B 用了 8 ms，B 慢 4 倍。", True), ("A 用了 2 ms、B 用了 8 ms，B 慢 40 倍。", False),
            ("2 个 rank 各存 512 KiB，合计 1 MiB。", True), ("2 个 rank 各存 512 KiB，合计 10 MiB。", False),
            ("4 个块各 3 MiB，共 12 MiB。", True), ("4 个块各 3 MiB，共 13 MiB。", False),
            ("占 4 KiB，是 int8 存法（8 KiB）的一半。", True), ("占 40 KiB，是 int8 存法（8 KiB）的一半。", False),
            ("每 SM 驻留 2 块，occupancy 25%。", True), ("每 SM 驻留 2 块，occupancy 150%。", False),
            ("缓冲区占 -4 KiB。", False), ("编译后快 0 倍。", False), ("前向 9 个算子，反向 6 个。", True),
            ("结果与 eager 逐位相同。", True)]
    items = [SimpleNamespace(prompt=p, answer=a) for p, a in made]
    assert [solver.solve(p) for p, _a in made] == [a for _p, a in made]
    reviewed = [  # the review's false items (shortened), each with its true form
        ("4、8、16 个块分别留 1 MiB、20 MiB、4 MiB，线性增长。", "4、8、16 个块分别留 1 MiB、2 MiB、4 MiB，线性增长。"),
        ("按 128 字节的 line 算是 20 条对 1 条。", "按 128 字节的 line 算是 2 条对 1 条。"),
        ("两遍法先归约 Σx、再归约 Σ(x−均值)²，是 20 次块内归约、4 个 BAR。", "两遍法先归约 Σx、再归约 Σ(x−均值)²，是 2 次块内归约、4 个 BAR。"),
        ("`Derived` 的 6 格里有 10 格带重定位。", "`Derived` 的 6 格里有 5 格带重定位。"),
        ("没有 running 统计（buffer 1 个），train 和 eval 输出相同。", "没有 running 统计（buffer 0 个），train 和 eval 输出相同。"),
        ("`torch.ones(2) + 1` 有自己的 CPU kernel，不经过它：被接住的 aten 调用有 1 个。",
         "`torch.ones(2) + 1` 有自己的 CPU kernel，不经过它：被接住的 aten 调用有 0 个。"),
        ("再加载插件库，表里就有了 2 个（`square`），并能按名字调用。", "再加载插件库，表里就有了 1 个（`square`），并能按名字调用。")]
    assert [(solver.contradicted(false), solver.contradicted(true)) for false, true in reviewed] == [(True, False)] * 7
    assert solver.scores(items)["all+对"] == 1.0 and solver.accuracy(items) == 1.0
    assert solver.numbers("共 2.5 MiB，是 512 KiB 的 5 倍，sm_90a 上 fc1") == [2.5 * 2**20, 512 * 2**10, 5.0]
