"""Predict-the-output drills: which value a claim asks for, how an answer is checked, what is never asked."""

from __future__ import annotations

import ast

import pytest

from verify.core.registry import ClaimSpec
from verify.quiz import drills
from verify.quiz.schema import Drill


def spec(statement: str, expect: dict, kind: str = "fact", raises=None) -> ClaimSpec:
    return ClaimSpec(id="t.x", question="q", statement=statement, kind=kind, snippet="snippets/q/t.py", line=3,
                     expect=expect, raises=raises)


CODE = '''import torch
@claim("t.x", question="q", statement="...", expect={"stride": [0, 1]})
def _(ctx):
    # the comment says the answer: stride (0, 1)
    x = torch.tensor([[1, 2, 3]], device=ctx.device)
    y = x.expand(4, 3)
    return {"stride": y.stride(), "shape": list(y.shape), "same_ptr": y.data_ptr() == x.data_ptr(),
            "ptr": y.data_ptr(), "timing": {"median_s": 1e-6}, "fraction": 0.25, "message": "x" * 300}
'''


def test_value_drill_asks_for_the_exactly_expected_value_and_shows_only_the_body():
    observed = {"stride": [0, 1], "shape": [4, 3], "same_ptr": True, "ptr": 94_000_000_000, "timing": {"median_s": 1e-6},
                "fraction": 0.25, "message": "x" * 300}
    d = drills.make(spec("`x.expand(4, 3)` 的 stride 是 {stride}。", {"stride": [0, 1], "shape": [4, 3]}), CODE, observed)
    assert d.format == "value" and d.key == "stride"  # shape is spelled out in the code: nothing to predict
    assert d.answer == [0, 1] and d.answer_text == "(0, 1)" and d.expr == "y.stride()"
    assert d.code.startswith("import torch\n\nx = torch.tensor([[1, 2, 3]])\ny = x.expand(4, 3)\nreturn {")
    assert "@claim" not in d.code and "expect=" not in d.code and "ctx" not in d.code
    assert "# the comment" not in d.code
    assert "`y.stride()`" in drills.prompt(d, "AMD EPYC")
    assert drills.prompt(d, "AMD EPYC").startswith("运行这段代码，")
    # evidence made without a GPU says how: compiled by a tool for a target, run in a simulator, from specs
    made = {"kind": "compiled", "targets": ["sm_90a"], "tools": {"nvcc": "13.0.88"}}
    assert drills.prompt(d, "AMD EPYC", made).startswith("用 nvcc 13.0.88 把这段代码编译给 sm_90a，")
    sim = {"kind": "simulated", "tools": {"numba simulator": "0.68.1"}}
    assert drills.prompt(d, "AMD EPYC", sim).startswith("在 numba simulator 0.68.1 里运行这段代码（模拟，不是 GPU），")


@pytest.mark.parametrize("key, value", [
    ("ptr", 94_000_000_000),  # a pointer: different every run
    ("timing", {"median_s": 1e-6}),  # a timing dict
    ("fraction", 0.25),  # a measured float
    ("message", "x" * 300),  # a long string
    ("big", list(range(40))),  # a big list
])
def test_values_nobody_can_predict_are_never_asked(key, value):
    code = f'def _(ctx):\n    return {{"{key}": abs(-1)}}\n'
    assert drills.make(spec("{" + key + "}", {key: {"!=": None}}), code, {key: value}) is None


def test_error_drill_asks_for_the_exception_type():
    d = drills.make(spec("报错。", {}, kind="error", raises=("RuntimeError", "view size")),
                    "import torch\ndef _(ctx):\n    torch.ones(3, 4).t().view(12)\n",
                    {"exception": "RuntimeError: view size is not compatible with input tensor's size and stride"})
    assert d.format == "exception" and d.answer == "RuntimeError" and d.answer_text.startswith("RuntimeError: view size")
    assert drills.check(d, "RuntimeError") and drills.check(d, " runtimeerror: 随便写的消息")
    assert not drills.check(d, "ValueError") and not drills.check(d, "不报错")


PERF = '''import torch
from verify.timing import compare, ratio
def _(ctx):
    x = torch.ones(2000)
    t = compare({"eager": lambda: x + 1, "compiled": lambda: x.add(1)})
    return {"speedup": round(ratio(t, "eager", "compiled"), 3), "kernels": len([x])}
'''


def test_perf_drill_asks_which_is_faster_and_by_about_how_much():
    d = drills.make(spec("快 {speedup:x}，{kernels} 个 kernel。", {"speedup": {">=": 1.5}, "kernels": 1}, kind="perf"),
                    PERF, {"speedup": 8.1, "kernels": 1})
    assert d.format == "faster" and d.options == ("eager", "compiled") and d.faster == "compiled"
    assert d.answer == 8.1 and d.factor == 8.1 and not d.same
    assert drills.check(d, {"faster": "compiled", "factor": "8"})
    assert drills.check(d, {"faster": "compiled", "factor": "约 5 倍"})  # within a factor of 2
    assert not drills.check(d, {"faster": "compiled", "factor": "2"})
    assert not drills.check(d, {"faster": "eager", "factor": "8"})
    assert not drills.check(d, {"faster": "same", "factor": None})


def test_perf_drill_of_two_equal_variants_takes_about_the_same():
    d = drills.make(spec("{speedup:x}", {"speedup": {"<": 1.3}}, kind="perf"), PERF, {"speedup": 0.97, "kernels": 1})
    assert d.faster == "eager" and d.same and d.answer_text.startswith("两者差不多")
    assert drills.check(d, {"faster": "same"}) and drills.check(d, {"faster": "eager", "factor": "1.1"})


def test_a_ratio_of_speedups_is_not_read_as_a_ratio_of_times():
    code = ('def _(ctx):\n    speedup, pids = {"workers": 1.7, "pool": 2.0}, [11, 12]\n'
            '    return {"r": speedup["workers"] / speedup["pool"], "n": len(pids)}\n')
    d = drills.make(spec("{r:x}，{n} 个进程", {"r": {">=": 0.6}, "n": 2}, kind="perf"), code, {"r": 0.85, "n": 2})
    assert d is not None and d.format == "value" and d.key == "n"


@pytest.mark.parametrize("value, answers, wrong", [
    ([0, 1], ["(0, 1)", "[0,1]", " ( 0 ,1 ) ", "0, 1", "（0，1）"], ["(1, 0)", "(0, 1, 2)"]),
    ((3,), ["(3,)", "[3]", "3"], ["(3, 1)"]),
    ([[1, 2, 3]], ["[[1, 2, 3]]", "((1, 2, 3),)"], ["[1, 2, 3, 4]"]),
    (True, ["True", "true", "是"], ["False", "否"]),
    (4.0, ["4", "4.0"], ["4.5"]),
    (96, ["96", "96 字节", "96 bytes"], ["97"]),
    (16384, ["16384", "16,384"], ["16385"]),
    (["aten::matmul", "aten::mm"], ["aten::matmul, aten::mm", "('aten::matmul', 'aten::mm')", "aten::matmul → aten::mm"],
     ["aten::mm, aten::matmul"]),
    ("DeprecationWarning", ["deprecationwarning", "'DeprecationWarning'"], ["UserWarning"]),
])
def test_answers_are_compared_exactly_after_normalising_how_they_are_written(value, answers, wrong):
    drill = Drill(format="value", answer=value, accept=tuple(drills.accepted(value)))
    for a in answers:
        assert drills.check(drill, a), a
    for a in wrong:
        assert not drills.check(drill, a), a


MODULE = '''\
import torch

HEADS, DH = 4, 64
TABLE = {
    "a": 1,
    "b": 2,
    "c": 3,
    "d": 4,
}


def _helper(x):
    return x * 2


@claim("t.a", question="t", statement="{shape}", expect={"shape": [1, 4, 64]})
def _(ctx):
    k = torch.zeros(1, HEADS, DH)
    return {"shape": list(k.shape)}
'''


def test_a_drill_shows_the_constants_it_reads_and_is_dropped_where_it_calls_unshown_code():
    from verify.quiz.drills import body_of, with_context  # noqa: PLC0415

    claim_src = MODULE[MODULE.index("@claim"):]
    code = with_context(MODULE, claim_src)
    assert code is not None and body_of(code).startswith("import torch\nHEADS, DH = 4, 64\n")
    assert "expect=" not in body_of(code)  # the decorator (which states the answer) is still not shown
    calls = claim_src.replace("torch.zeros(1, HEADS, DH)", "_helper(torch.zeros(1))")
    assert with_context(MODULE, calls) is None
    table = claim_src.replace("torch.zeros(1, HEADS, DH)", "torch.zeros(TABLE['a'])")
    assert with_context(MODULE, table) is None  # a long constant: not worth a drill


def test_a_value_the_code_spells_out_is_not_asked():
    from verify.quiz.drills import _given  # noqa: PLC0415

    assert _given(128, "seq = torch.zeros(1, 128)\nreturn {'n': seq.shape[1]}")
    assert not _given(1, "x = torch.zeros(1, 128)")  # small numbers are everywhere
    assert _given((4, 3), "y = x.expand(4, 3)")
    assert not _given((3, 1), "x = torch.zeros(4, 3)")


HARNESS = '''\
import torch
from torch import nn

SCALE = 3


@claim("t.h", question="t", statement="{shape} {n}", expect={"shape": [2, 3], "n": 6})
def _(ctx):
    import math  # noqa: PLC0415

    lin = nn.Linear(3, 3).to(ctx.device)
    x = torch.ones(2, 3, device=ctx.device) * SCALE
    ctx.observe(numel=x.numel())
    y = torch.zeros(
        2, 3, device=ctx.device)
    return {"shape": list(lin(x + y).shape), "n": math.prod(x.shape)}
'''


def test_a_drill_shows_no_harness_and_every_name_it_reads_is_shown():
    module_claim = HARNESS[HARNESS.index("@claim"):]
    code = drills.with_context(HARNESS, module_claim)
    d = drills.make(spec("{shape} {n}", {"shape": [2, 3], "n": 6}), code, {"shape": [2, 3], "n": 6, "numel": 6})
    assert d is not None
    assert d.code == ("import torch\nfrom torch import nn\nSCALE = 3\n\nimport math\n\nlin = nn.Linear(3, 3)\n"
                      "x = torch.ones(2, 3) * SCALE\ny = torch.zeros(\n    2, 3)\n"
                      'return {"shape": list(lin(x + y).shape), "n": math.prod(x.shape)}')
    assert drills.free_names(d.code) == []
    assert drills.free_names("x = 1\ny = helper(x) + len([x])") == ["helper"]
    assert drills.free_names("def f(v):\n    return g(v)\nf(1)") == ["g"]


def test_a_value_only_observed_through_the_harness_is_not_asked():
    code = "import torch\ndef _(ctx):\n    x = torch.ones(7)\n    ctx.observe(numel=x.numel())\n    return {'ok': True}\n"
    d = drills.make(spec("{numel}", {"numel": 7}), code, {"numel": 7, "ok": True})
    assert d is None  # numel's expression is not shown any more; ok is neither expected nor in the sentence
    made = drills.make_or_reason(spec("{numel}", {"numel": 7}), code.replace("ctx.observe(numel=", "print(").replace(
        "numel()", "numel())"), {"numel": 7})
    assert isinstance(made, str)  # print(...) is not an observation either: no value to ask


def test_a_drill_reading_unshown_code_is_left_out_and_says_why():
    module = "import torch\nfrom snippets._common import specs\n\ndef _helper():\n    return 1\n"
    reads_project = "@claim('t.p')\ndef _(ctx):\n    return {'r': specs.get(ctx, 'H100', 'flops')}\n"
    reads_helper = "@claim('t.p')\ndef _(ctx):\n    return {'r': _helper()}\n"
    assert drills.with_context(module, reads_project) is None
    assert drills.context_or_reason(module, reads_project) == "left out: reads a name imported from the project: specs"
    assert drills.context_or_reason(module, reads_helper) == "left out: calls a function of its module: _helper"
    gives = drills.make_or_reason(spec("{n}", {"n": 2}), "def _(ctx):\n    return {'n': helper(2)}\n", {"n": 2})
    assert gives == "reads names it does not show: helper"
    positional = "import torch\ndef _(ctx):\n    return {'n': torch.amp.GradScaler(ctx.device).get_growth_interval()}\n"
    assert drills.make_or_reason(spec("{n}", {"n": 2000}), positional, {"n": 2000}) == (
        "reads the harness (ctx) in a way a drill cannot leave out")


def test_an_answer_that_depends_on_the_machine_is_not_asked():
    code = "import os\ndef _(ctx):\n    cores = os.cpu_count() or 1\n    return {'cores': cores, 'ideal': min(2, cores)}\n"
    made = drills.make_or_reason(spec("{cores} 核", {"cores": {">=": 1}}), code, {"cores": 2, "ideal": 2})
    assert made == "its answer depends on the machine: reads cpu_count"
    timed = "import time\ndef _(ctx):\n    t0 = time.perf_counter()\n    n = 3\n    return {'n': n, 'ms': time.perf_counter() - t0}\n"
    d = drills.make(spec("{n}", {"n": 3}), timed.replace("'n': n", "'n': n + 10"), {"n": 13, "ms": 0.1})
    assert d is not None and d.key == "n"  # the timer is in the code but the asked value does not read it
    assert drills.machine_reads(ast.parse("t1 - t0", mode="eval").body, "t0 = time.perf_counter()\nt1 = t0") == [
        "perf_counter", "time"]


def test_numbers_read_as_the_code_writes_them():
    code = ("import torch\ndef _(ctx):\n    per = torch.empty((), dtype=torch.float16).element_size() * 8\n"
            "    return {'gb': 7e9 * per / 1e9, 'low': bool((torch.ones(2, dtype=torch.int32) & 0xFFFF).all())}\n")
    d = drills.make(spec("{gb} GB", {"gb": 112}), code, {"gb": 112.0, "low": True})
    assert d.expr == "7e9 * per / 1e9" and "7e9 * per / 1e9" in d.code and "7000000000" not in d.code + d.expr
    d = drills.make(spec("{low}", {"low": True}), code, {"gb": 112.0, "low": True})
    assert d.expr == "bool((torch.ones(2, dtype=torch.int32) & 0xFFFF).all())"
