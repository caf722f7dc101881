"""Objective items: 判断题 on the claims' sentences (true, or a value the expectation rejects), 计算题 that
claims observed (formulas they check)."""

from __future__ import annotations

import hashlib
import importlib.util
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest

from tests._project import REPO_SETTINGS as SETTINGS
from tests._quiz_samples import write_sample_docs
from verify.claim import LOADED, Context
from verify.core import matchers
from verify.quiz import claims as claims_mod
from verify.quiz import judge, objective
from verify.quiz.bank import build_bank
from verify.quiz.claims import ClaimFacts
from verify.quiz.practice import objective_feedback, objective_reveal
from verify.storage.scan import load_registry


def _asked(false: bool) -> str:
    """A claim id whose hash asks the false variant (``false``) or the true one."""
    return next(c for n in range(100) if (hashlib.sha256((c := f"c{n}.x").encode()).digest()[0] % 2 == 1) is false)


def test_a_wrong_value_the_expectation_accepts_is_never_a_false_statement():
    """speedup >= 30 observed as 50: doubled and one more or less still pass; halved (25) fails, so it is the
    false variant asked. Ten times more or less is never said (「1、20、4 MiB」 for a linear growth reads
    wrong to anyone), and 0 倍 next to 倍 reads as a trick: where only they fail, the claim is not asked."""
    statement, expect, observed = "`torch.add` 比循环快 {speedup:x}。", {"speedup": {">=": 30}}, {"speedup": 50.0}
    variants = judge.false_variants(statement, expect, observed)
    assert [(k, w, s) for k, w, s in variants] == [
        ("speedup", 25.0, "`torch.add` 比循环快 25 倍。"), ("speedup", 0, "`torch.add` 比循环快 0 倍。")]
    assert all(matchers.check(expect, {**observed, k: w}) for k, w, _s in variants)
    assert [w for _r, _k, w, _parts in judge.variants(statement, expect, observed)] == [25.0]  # not 0 倍
    item = judge.claim_judgement(_asked(True), "q", statement, expect, observed)
    assert item is not None and not item.true and item.wrong == 25.0 and item.sentence == "`torch.add` 比循环快 50 倍。"
    # 500 against >= 30: only a tenth (50 passes anyway) and 0 倍 could fail; neither is said
    assert [w for _k, w, _s in judge.false_variants(statement, {"speedup": {">=": 30}}, {"speedup": 500.0})] == [0]
    assert judge.variants(statement, {"speedup": {">=": 30}}, {"speedup": 500.0}) == []
    assert judge.claim_judgement(_asked(True), "q", statement, {"speedup": {">=": 30}}, {"speedup": 500.0}) is None
    # every likely wrong value passes: not asked at all (not even true)
    assert judge.false_variants("有 {n} 个。", {"n": {">=": 0}}, {"n": 5}) == []
    assert judge.claim_judgement(_asked(False), "q", "有 {n} 个。", {"n": {">=": 0}}, {"n": 5}) is None
    # a shown value the expectation does not cover cannot be made false by it
    assert judge.false_variants("用了 {t:time}，快 {r:x}。", {"r": {">": 1}}, {"t": 0.002, "r": 3.0}) == [
        ("r", 0, "用了 2 ms，快 0 倍。")]


def test_a_wrong_value_reads_like_the_true_one():
    """Same unit and digits: 1 MiB is never shown as 512 KiB, a count of 16 never as 1.6 nor negative; a
    boolean's words are swapped. Likeliest first: doubled, halved, one more or less (a small count), zero;
    never ten times more or less."""
    mib = judge.false_variants("占 {b:bytes}。", {"b": 2**20}, {"b": 2**20})
    assert [s for _k, _w, s in mib] == ["占 2 MiB。"]  # 2^20/2 is 512 KiB; ten times is not said
    count = judge.false_variants("有 {n} 个。", {"n": 16}, {"n": 16})
    assert [s for _k, _w, s in count] == ["有 32 个。", "有 8 个。", "有 17 个。", "有 15 个。", "有 0 个。"]
    share = judge.false_variants("占 {p:pct}。", {"p": {"<": 0.5}}, {"p": 0.6})
    assert [s for _k, _w, s in share] == []  # 120% is no share; 30% passes the expectation
    assert [s for _k, _w, s in judge.false_variants("占 {p:pct}。", {"p": {">": 0.5}}, {"p": 0.6})] == ["占 30%。", "占 0%。"]
    # a zero share is no whole count: not asked (a count of 0 is)
    assert [w for _r, _k, w, _p in judge.variants("占 {p:pct}。", {"p": {">": 0.5}}, {"p": 0.6})] == [0.3]
    words = judge.false_variants("调用{raised:?会|不会}报错。", {"raised": True}, {"raised": True})
    assert [s for _k, _w, s in words] == ["调用不会报错。"]
    stride = judge.false_variants("stride 是 {stride}。", {"stride": [0, 1]}, {"stride": [0, 1]})
    assert [s for _k, _w, s in stride] == ["stride 是 (1, 0)。", "stride 是 (1, 1)。", "stride 是 (0, 2)。"]


def test_each_claim_is_asked_one_way_by_its_id_and_only_where_it_stands_alone():
    statement, expect, observed = "stride 是 {stride}。", {"stride": [0, 1]}, {"stride": [0, 1]}
    true, false = (judge.claim_judgement(_asked(f), "q", statement, expect, observed) for f in (False, True))
    assert true is not None and true.true and true.prompt == true.sentence == "stride 是 (0, 1)。"
    assert false is not None and not false.true and false.prompt in {"stride 是 (1, 0)。", "stride 是 (1, 1)。",
                                                                       "stride 是 (0, 2)。"}
    assert false.sentence == "stride 是 (0, 1)。" and matchers.check(expect, {"stride": false.wrong})
    assert judge.claim_judgement(_asked(True), "q", statement, expect, observed) == false  # the same each time
    for leaning in ("同样，stride 是 {stride}。", "这时 stride 是 {stride}。", "它的 stride 是 {stride}。",
                    "上例的 stride 是 {stride}。", "把它 view 之后 stride 是 {stride}。", "这种情况下 stride 是 {stride}。",
                    "这台机器上 stride 是 {stride}。"):
        assert judge.claim_judgement(_asked(True), "q", leaning, expect, observed) is None, leaning
    assert judge.claim_judgement(_asked(True), "q", "stride 是 (0, 1)。", expect, observed) is None  # nothing bound


@pytest.mark.parametrize("said, true, shown", [
    ("加起来是 400 对 32", "加起来是 40 对 32", ("400", "40")),  # a number whole, not its last digit
    ("是 1,120 次", "是 112 次", ("1,120", "112")),
    ("和不做检查点不同，重入式也逐位相同", "和不做检查点逐位相同，重入式也逐位相同", ("和不做检查点不同", "和不做检查点逐位相同")),
    ("82.2 GB，放得进 H100", "82.2 GB，放不进 H100", ("放得进", "放不进")),  # words: their clause
])
def test_a_false_items_change_is_shown_as_whole_words(said, true, shown):
    assert judge.changed_span(said, true) == shown


def test_a_value_the_other_numbers_make_is_asked_in_a_part_without_them():
    """「B 慢 4 倍」 after 2 ms and 8 ms: changed alone it would contradict them, so the item asks the part
    (up to ；) that holds it where nothing it relates to remains; a true item asks the same part."""
    statement = "A 用了 {a:time}、B 用了 {b:time}，B 慢 {r:x}；另一台机器上的 kernel 还要等 {n} 个周期才发出请求。"
    observed = {"a": 0.002, "b": 0.008, "r": 4.0, "n": 6}
    whole = judge.filled(statement, observed)
    assert judge.asked_parts(whole.replace("4 倍", "2 倍"), whole) is None  # the part holds 2 ms and 8 ms
    said = whole.replace("6 个", "12 个")
    assert judge.asked_parts(said, whole) == (said, whole)  # 6 relates to nothing: the whole sentence
    related = whole.replace("6 个", "4 个")  # now 4 is also 8 ms / 2 ms: ask the part without them
    part, true = judge.asked_parts(related.replace("等 4 个", "等 8 个"), related)  # type: ignore[misc]
    assert true == "另一台机器上的 kernel 还要等 4 个周期才发出请求。" and part == true.replace("4 个", "8 个")
    items = [judge.claim_judgement(_asked(f), "q", statement.replace("{n}", "{r:.0f}"), {"r": {">": 3}},
                                   {**observed, "r": 4.0}) for f in (False, True)]
    assert items == [None, None]  # 4 倍 relates in its part too: no false variant keeps to itself
    assert judge.relates([4.0], [0.002, 0.008]) and judge.relates([2.5 * 2**20], [512 * 2**10, 5.0])
    assert not judge.relates([3.0], [0.002, 0.008]) and not judge.relates([1.0], [1.0, 7.0])


@pytest.mark.parametrize("statement, observed, left_out, kept", [
    # a nonzero count next to a negation; a zero one is asked where nothing negates it
    ("LayerNorm 没有 running 统计（buffer {n} 个）。", {"n": 0}, {1}, set()),
    ("先加载只含注册表的库，表里有 {n} 个算子。", {"n": 0}, set(), {1}),
    ("链接器报 undefined reference，因为那个翻译单元不存在；链接退出码 {rc}。", {"rc": 1}, {0}, {2}),
    ("`Derived` 的 6 格里有 {n} 格带重定位。", {"n": 5}, {10}, {4, 6}),  # never more than its total
    ("插件库加载后表里有 {n} 个（`square`），能按名字调用。", {"n": 1}, {0, 2}, set()),  # one name listed
    ("寄存器文件 {a:bytes}、L1 {b:bytes}，寄存器文件更大。", {"a": 2**18, "b": 3 * 2**16}, {2**17}, {2**19}),
    ("`y.fill_(7)` 之后 `x` 那一行是 {row}。", {"row": [7, 7, 7]}, {(14, 7, 7)}, set()),
    ("`Derived` 张量 5 单独成桶 {b}，桶从不混装 dtype。", {"b": [5]}, {(10,)}, set()),
    ("两份贡献在 `x` 处相加，hook 拿到的已经是{t:?两份之和|其中一份}。", {"t": True}, {False}, set()),
    ("hook 只被调用一次，拿到的已经是{t:?两份之和|其中一份}。", {"t": True}, set(), {False}),
    ("按块表读出的结果与连续缓存{t:?逐位相同|有差别}（最大差 0）。", {"t": True}, {False}, set()),
    ("batch 32 时共 82.2 GB，{t:?放得进|已经放不进} H100 的 80 GB 显存。", {"t": False}, {True}, set()),
])
def test_a_variant_the_words_beside_it_contradict_is_not_asked(statement, observed, left_out, kept):
    """A review of the bank answered 11 of 18 false items from their wording alone; each such variant is left
    out (:func:`judge.gives_away`), while the same change in words that do not contradict it is asked."""
    expect = dict(observed)
    made = {tuple(w) if isinstance(w, list) else w for _k, w, _s in judge.false_variants(statement, expect, observed)}
    asked = {tuple(w) if isinstance(w, list) else w for _r, _k, w, _p in judge.variants(statement, expect, observed)}
    assert left_out <= made and not left_out & asked, (made, asked)  # made by the generator, never asked
    assert kept <= asked, asked


def test_a_relation_said_in_words_or_symbols_is_asked_without_it():
    """「各 (N-1)/N·Ψ，合计 1.969·Ψ」: the total follows from the words; the part after ； is asked alone."""
    statement = ("DDP 的 all-reduce 是 reduce-scatter 加 all-gather，各 (N-1)/N·Ψ，合计 {c:.3f}·Ψ（N = 64）；"
                 "ZeRO-3 的参数在前向和反向各 all-gather 一次，总量是 {z:.3f}·Ψ。")
    observed = {"c": 1.96875, "z": 2.953}
    assert judge.worded("各 (N-1)/N·Ψ，合计 1.969·Ψ") and judge.worded("1/(N·H·W)") and judge.worded("合计 54 KiB，等于 2 乘以层数")
    assert not judge.worded("H100 / H200 上 inf/NaN 的 get/put") and not judge.worded("`torch/csrc` 里")
    found = judge.variants(statement, {"c": {"approx": [1.969, 0.01]}, "z": {"approx": [2.953, 0.01]}}, observed)
    assert found and {key for _r, key, _w, _p in found} == {"z"}
    assert all(true.startswith("ZeRO-3") and "合计" not in said for _r, _k, _w, (said, true) in found)


def test_a_timing_or_measured_claim_is_not_asked_and_a_prompt_says_its_scope():
    stride = ("stride 是 {stride}。", {"stride": [0, 1]}, {"stride": [0, 1]})
    for kind in ("perf", "measured"):
        assert judge.claim_judgement(_asked(True), "q", *stride, kind=kind) is None
    made = [judge.claim_judgement(_asked(f), "expand-demo", *stride, kind="fact", scope="CPU") for f in (False, True)]
    assert all(j is not None and j.scope == "CPU" for j in made)
    items = judge.judgements(made, [SimpleNamespace(  # type: ignore[arg-type]
        id="expand-demo", title="t", tags=(), difficulty=1, url="questions/expand-demo/", page_url=None)])
    assert [o.prompt.endswith("〔CPU〕") for o in items] == [True, True]
    assert items[0].prompt == "stride 是 (0, 1)。〔CPU〕" and items[0].explain == "stride 是 (0, 1)。"
    said, true = judge.changed_span(items[1].prompt.removesuffix("〔CPU〕"), items[1].explain)
    assert items[1].params["said"] == said and items[1].params["true"] == true


def test_a_tiny_value_is_never_the_one_made_false():
    # an error size (3.0e-07 against 3.0e-06) is one machine's rounding, not knowledge
    statement, expect = "最多差 {err:.1e}，stride 是 {stride}。", {"err": {"<": 1e-5}, "stride": [0, 1]}
    variants = judge.false_variants(statement, expect, {"err": 3e-7, "stride": [0, 1]})
    assert variants and {key for key, _wrong, _said in variants} == {"stride"}


def test_the_bank_asks_the_claims_judgements_on_their_pages(tmp_path):
    """Key points are not asked; a claim's item links to the claim on its page; a prompt is asked once."""
    write_sample_docs(tmp_path / "docs")
    assert not [o for o in build_bank(tmp_path / "docs", html=False).objective if o.kind == "judge"]
    stride = ("stride 是 {stride}。", {"stride": [0, 1]}, {"stride": [0, 1]})
    made = [judge.claim_judgement(_asked(False), "expand-demo", *stride),
            judge.claim_judgement(_asked(True), "compile-demo", *stride),
            judge.claim_judgement("other.x", "no-such-page", *stride)]
    twice = judge.ClaimJudgement("again.x", "expand-demo", "stride 是 (0, 1)。", "stride 是 (0, 1)。")
    bank = build_bank(tmp_path / "docs", html=False, facts=ClaimFacts(judgements=(*made, twice)))  # type: ignore[arg-type]
    items = [o for o in bank.objective if o.kind == "judge"]
    assert [(o.id, o.question, o.answer, o.answer_text) for o in items] == [
        (f"judge:{_asked(False)}", "expand-demo", True, "对"), (f"judge:{_asked(True)}", "compile-demo", False, "错")]
    right, wrong = items
    assert right.prompt == right.explain == wrong.explain == "stride 是 (0, 1)。" and wrong.prompt != wrong.explain
    assert right.url == f"questions/expand-demo/#claim-{_asked(False)}" and right.claim == _asked(False)
    said, true = judge.changed_span(wrong.prompt, wrong.explain)
    assert wrong.params == {"key": "stride", "value": made[1].wrong, "said": said, "true": true} and said != true
    q = bank.question("expand-demo")
    assert right.title == q.title and right.tags == q.tags
    assert bank.known() >= {o.id for o in bank.objective}  # progress can be kept under their ids


def test_after_a_judgement_the_terminal_shows_the_true_sentence_and_the_claim():
    stride = ("stride 是 {stride}。", {"stride": [0, 1]}, {"stride": [0, 1]})
    made = (judge.claim_judgement(_asked(False), "expand-demo", *stride),
            judge.claim_judgement(_asked(True), "expand-demo", *stride))
    right, wrong = judge.judgements(made, [SimpleNamespace(  # type: ignore[arg-type]
        id="expand-demo", title="t", tags=(), difficulty=1, url="questions/expand-demo/", page_url=None)])
    assert objective_feedback(wrong, True) == "答对了：这句是错的"
    said, true = judge.changed_span(wrong.prompt, "stride 是 (0, 1)。")
    assert objective_reveal(wrong) == [("正确的说法：", "stride 是 (0, 1)。"), (
        "", f"错在「{said}」，应为「{true}」。句中的值是论断 {_asked(True)} 运行时观测到的；改后的值，论断的期望不接受。")]
    assert objective_feedback(right, False) == "答错了：这句是对的"
    assert objective_reveal(right)[0] == ("原句：", "stride 是 (0, 1)。") and _asked(False) in objective_reveal(right)[1][1]


@pytest.mark.parametrize("answer, kind, truth, right", [
    ("对", "judge", True, True), ("错", "judge", True, False), ("错", "judge", False, True), ("不对", "judge", False, True),
    ("2.5", "calc", 2.5, True), ("约 2.52 GiB", "calc", 2.5, True), ("2.6", "calc", 2.5, False), ("", "calc", 2.5, False),
    ("1,280", "calc", 1280, True), ("3e9", "calc", 3e9, True)])
def test_an_answer_is_checked_by_its_kind(answer, kind, truth, right):
    item = objective.Objective(id="x", kind=kind, question="q", prompt="p", answer=truth, answer_text="", tolerance=0.01)
    assert objective.check(item, answer) is right


def _snippet(rel: str):
    """A question's calc.py, loaded by path as the runner's worker loads it (its claims land in LOADED)."""
    spec = importlib.util.spec_from_file_location(f"_calc_{Path(rel).parent.name.replace('-', '_')}", SETTINGS.root / rel)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


CALC_CLAIMS = {"snippets/kv-cache/calc.py": "kvcache.calc-items", "snippets/zero-stages/calc.py": "zero.calc-items",
               "snippets/gpu-execution-model/calc.py": "exec.occupancy-items",
               "snippets/tiled-gemm/calc.py": "tgemm.calc-items",
               "snippets/gpu-memory-hierarchy/calc.py": "spec.calc-roofline-items",
               "snippets/ddp-bucketing/calc.py": "ddp.calc-ring-items",
               "snippets/paged-attention/calc.py": "paged.calc-items"}


def test_every_calculator_file_is_checked_here():
    assert {str(p.relative_to(SETTINGS.root)) for p in SETTINGS.root.glob("snippets/*/calc.py")} == set(CALC_CLAIMS)


@pytest.fixture(scope="module")
def observed(tmp_path_factory):
    """rel -> (the calc.py module, what its items claim observes), the claims called as a worker calls them."""
    if str(SETTINGS.root) not in sys.path:
        sys.path.insert(0, str(SETTINGS.root))
    out = {}
    for rel, cid in CALC_CLAIMS.items():
        module = _snippet(rel)
        out[rel] = module, LOADED[cid](Context("cpu", tmp_path_factory.mktemp("calc")))
    return out


def test_the_items_claims_observe_the_calculators_answers(observed):
    """What each items claim observes is its calc.py's formula on the drawn parameters, checked, in the
    shape the quiz reads; the items are the ones the quiz asked before they became observations."""
    claims = load_registry(SETTINGS).claims
    for rel, (module, obs) in observed.items():
        sets = objective.calc_sets(obs[objective.OBSERVED_KEY], rel)
        assert obs.get("equal", True) and obs.get("worst", 0) < 1e-6 and obs["n_items"] == 6 * len(module.CALCULATORS), rel
        for calc, spec in zip(sets, module.CALCULATORS, strict=True):
            assert calc.claim in claims and claims[calc.claim].question == calc.question == spec["question"], calc.id
            assert len(calc.items) == 6 and len({i.prompt for i in calc.items}) == 6, calc.id
            for item in calc.items:
                exact = spec["answer"](**item.params) / spec.get("scale", 1.0)
                assert item.answer == exact and set(item.params) == set(spec["params"]), (calc.id, item)
                # a calculator that writes its formula with the numbers put in does so for every item
                assert item.worked == (spec["worked"](**item.params) if "worked" in spec else ""), (calc.id, item)
    kv = next(s for s in objective.calc_sets(observed["snippets/kv-cache/calc.py"][1]["calc_items"], "kv")
              if s.id == "kv-cache-bytes")
    # the first item the quiz asked (and whose progress a reader keeps) before items were observations
    assert kv.items[0].params == {"layers": 40, "kv_heads": 1, "head_dim": 64, "batch": 64, "seq": 4096, "dtype": "BF16"}


def test_the_bank_asks_what_the_claims_observed(observed):
    """计算题 come from the facts (the ledger), rounded to the calculator's digits; without them there are none."""
    sets = tuple(s for _m, obs in observed.values() for s in objective.calc_sets(obs["calc_items"], "x"))
    without = build_bank(SETTINGS.docs_dir, html=False)
    assert not [o for o in without.objective if o.kind == "calc"]
    bank = build_bank(SETTINGS.docs_dir, html=False, facts=ClaimFacts(calculations=sets))
    items = [o for o in bank.objective if o.kind == "calc"]
    assert len(items) == sum(len(c.items) for c in sets) and bank.known() >= {o.id for o in items}
    assert len(items) >= 30 and len({o.id.split(":")[1] for o in items}) >= 6  # issue 36: 30 items, 6 calculators
    assert len({o.prompt for o in items}) == len(items)
    for calc in sets:
        for n, item in enumerate(calc.items):
            o = next(o for o in items if o.id == f"calc:{calc.id}:{n}")
            assert o.prompt == item.prompt and o.claim == calc.claim
            assert o.params == {**item.params, "worked": objective.worked(item, o.answer_text)}
            assert objective.check(o, str(item.answer)) and not objective.check(o, str(item.answer * 1.1)), o.id


def test_the_kv_cache_formula_is_the_one_a_config_gives(observed):
    module = observed["snippets/kv-cache/calc.py"][0]
    # Llama-2-7B: 32 layers, 32 KV heads, head_dim 128, FP16: 2 GiB per sequence of 4096 tokens
    assert module.kv_cache_bytes(layers=32, batch=1, kv_heads=32, head_dim=128, seq=4096, dtype="FP16") == 2 * 2**30


@pytest.mark.parametrize("bad, field", [
    ({"items": [{"params": {}, "prompt": "p", "answer": float("nan")}]}, "answer"),
    ({"tolerance": 0}, "tolerance"), ({"colour": "red"}, "colour"), ({"items": "x"}, "items")])
def test_observed_items_that_do_not_fit_are_named_and_left_out(bad, field, caplog):
    good = {"id": "x", "question": "q", "claim": "c", "unit": "GiB", "tolerance": 0.02, "digits": 3, "explain": "",
            "items": [{"params": {"n": 1}, "prompt": "p", "answer": 2.0}]}
    with pytest.raises(ValueError, match=f"kv.items: observed calc_items.*{field}"):
        objective.calc_sets([{**good, **bad}], "kv.items")
    record = SimpleNamespace(observed={"calc_items": [{**good, **bad}]})
    assert claims_mod._calculations({"kv.items": record, "other": None}) == ()
    assert "kv.items" in caplog.text and "left out" in caplog.text
    assert len(claims_mod._calculations({"kv.items": SimpleNamespace(observed={"calc_items": [good]})})) == 1


# --- issue 36 item 3: every constant stated, two significant digits accepted, each formula checked ------


@pytest.mark.parametrize("answer, want, tolerance, right", [
    ("1.3", 1.25, 0.02, True), ("1.2", 1.25, 0.02, True),  # 1.25 rounded to two digits, either way at the tie
    ("1.3 GiB", 1.25, 0.02, True), ("1.29", 1.25, 0.02, False),  # three digits: only within the tolerance
    ("1.4", 1.25, 0.02, False), ("1", 1.25, 0.02, False),
    ("13", 12.6, 0.001, True), ("12", 12.6, 0.001, False), ("0.0051", 0.00513, 0.001, True),
    ("4,100", 4096, 0.001, True), ("4,090", 4096, 0.001, False), ("1000", 996, 0.001, True),
    ("100", 100, 0.001, True), ("99", 100, 0.001, False), ("0", 0, 0.01, True), ("0.1", 0, 0.01, False),
    ("38", 37.5, 0.005, True), ("37", 37.5, 0.005, True), ("37.6", 37.5, 0.005, True), ("37.8", 37.5, 0.005, False)])
def test_an_answer_rounded_to_two_significant_digits_is_right(answer, want, tolerance, right):
    item = objective.Objective(id="x", kind="calc", question="q", prompt="p", answer=want, answer_text="",
                               tolerance=tolerance)
    assert objective.check(item, answer) is right


def test_the_reveal_shows_this_items_numbers_and_what_counts_as_right(observed):
    sets = tuple(s for _m, obs in observed.values() for s in objective.calc_sets(obs["calc_items"], "x"))
    bank = build_bank(SETTINGS.docs_dir, html=False, facts=ClaimFacts(calculations=sets))
    by_id = {o.id: o for o in bank.objective if o.kind == "calc"}
    gemm = by_id["calc:gemm-intensity:0"]
    p = gemm.params
    assert objective_reveal(gemm) == [
        ("公式：", gemm.explain),
        ("本题：", f"2×{p['m']}×{p['n']}×{p['k']} ÷ (({p['m']}×{p['k']} + {p['k']}×{p['n']} + {p['m']}×{p['n']}) × "
                  f"2 字节) = {gemm.answer_text}"),
        ("", "与答案相差不超过 ±2%，或是答案四舍五入到两位有效数字，都算对。这个公式由论断 tgemm.calc-formula 核对过。")]
    # the calculators that write no worked formula show their parameters by name
    kv = by_id["calc:kv-cache-bytes:0"]
    assert objective_reveal(kv)[1] == ("本题：", "层数 = 40，KV 头数 = 1，head_dim = 64，batch = 64，上下文长度 = 4,096，dtype = BF16")
    zero = next(o for o in by_id.values() if o.id.startswith("calc:zero-model-states:") and o.params["params"] == 7e9)
    assert "参数量 Ψ = 7,000,000,000" in objective_reveal(zero)[1][1]
    for o in by_id.values():  # every item shows its own numbers
        shown = objective_reveal(o)[1][1]
        assert all(str(v) in shown.replace(",", "") for k, v in o.params.items() if k != "worked" and isinstance(v, int)), o.id


def _wrong(module, name, formula, monkeypatch):
    """``module``'s formula ``name`` replaced by ``formula``, in the module and in its calculators."""
    right = getattr(module, name)
    monkeypatch.setattr(module, name, formula)
    for calc in module.CALCULATORS:
        if calc["answer"] is right:
            monkeypatch.setitem(calc, "answer", formula)


@pytest.mark.parametrize("rel, name, wrong", [
    ("snippets/tiled-gemm/calc.py", "gemm_intensity",
     lambda m, n, k, dtype: 2 * m * n * k / ((m * k + k * n) * {"BF16": 2, "FP16": 2, "FP32": 4}[dtype])),  # C forgotten
    ("snippets/gpu-memory-hierarchy/calc.py", "roofline_us", lambda gpu, m, n, k: 1e6 * 2 * m * n * k / 989.5e12),
    ("snippets/ddp-bucketing/calc.py", "ring_ms",  # one pass of p − 1 steps, not two
     lambda ranks, mib, alpha_us, gb_s: 1e3 * ((ranks - 1) * alpha_us * 1e-6 + (ranks - 1) / ranks * mib * 2**20 / (gb_s * 1e9))),
    ("snippets/paged-attention/calc.py", "allocated_bytes",  # the tokens, not whole blocks
     lambda seqs, length, block, layers, kv_heads: seqs * length * 2 * layers * kv_heads * 128 * 2),
    ("snippets/paged-attention/calc.py", "empty_bytes",  # the last block's free slots counted as L mod B
     lambda seqs, length, block, layers, kv_heads: seqs * (length % block) * 2 * layers * kv_heads * 128 * 2),
    ("snippets/kv-cache/calc.py", "kv_cache_bytes",  # K only
     lambda layers, batch, kv_heads, head_dim, seq, dtype: layers * batch * kv_heads * head_dim * seq * 2),
    ("snippets/zero-stages/calc.py", "model_state_bytes", lambda params, stage, gpus: 16 * params / gpus)])
def test_a_wrong_formula_fails_its_claims(rel, name, wrong, monkeypatch, observed, tmp_path):
    """The formula claim and the items claim of each new calculator reject a plausible wrong formula."""
    module = observed[rel][0]
    claims = load_registry(SETTINGS).claims
    mine = [cid for cid, fn in LOADED.items() if fn.__globals__ is vars(module)]
    assert len(mine) == 2, mine
    for cid in mine:
        assert matchers.check(claims[cid].expect, LOADED[cid](Context("cpu", tmp_path))) == [], cid  # the right formula
    _wrong(module, name, wrong, monkeypatch)
    for cid in mine:
        assert matchers.check(claims[cid].expect, LOADED[cid](Context("cpu", tmp_path))) != [], cid
