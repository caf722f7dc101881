"""The three backward-pass problems: their references agree with autograd, their bans hold, and what the
autograd-function problem's statement says the judge cannot see is indeed not seen.

The references are checked here against PyTorch's own autograd in float64 (autograd may run in this
process: only the candidate's code is kept to the judge's child). The bans are checked by judging a file
that takes the forbidden shortcut, in the child, as ``verify judge run`` would.
"""

from __future__ import annotations

import importlib.util
import textwrap
from pathlib import Path
from types import ModuleType

import pytest

from verify.judge import judge, problem

torch = pytest.importorskip("torch")

REPO = Path(__file__).resolve().parent.parent
BN = problem.find(REPO, "bn-backward-torch")
SOFTMAX_BACKWARD = problem.find(REPO, "softmax-backward-torch")
SILU = problem.find(REPO, "autograd-function-torch")


def _module(path: Path) -> ModuleType:
    spec = importlib.util.spec_from_file_location(f"_test_{path.parent.name}_{path.stem}", path)
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _double(args: tuple) -> tuple:
    return tuple(a.double() if isinstance(a, torch.Tensor) else a for a in args)


def _judge(tmp_path: Path, p: problem.Problem, *sources: str) -> judge.Report:
    """Judge the file made of ``sources``, each dedented on its own."""
    path = tmp_path / "candidate.py"
    path.write_text("".join(textwrap.dedent(s) for s in sources), encoding="utf-8")
    return judge.judge(p, path)


# --- the references against autograd, float64 ---------------------------------------------------------

def test_the_batchnorm_reference_is_autograd_through_batch_norm():
    reference = _module(BN.path / "reference.py").reference
    checked = 0
    for name, args in _module(BN.path / "cases.py").cases(BN.seed):
        dy, x, gamma, eps = _double(args)
        if x.shape[0] < 2:  # F.batch_norm refuses one value per channel in training mode
            continue
        x_, g_ = x.clone().requires_grad_(True), gamma.clone().requires_grad_(True)
        b_ = torch.zeros_like(gamma, requires_grad=True)
        torch.nn.functional.batch_norm(x_, None, None, g_, b_, training=True, eps=eps).backward(dy)
        for got, want in zip(reference(dy, x, gamma, eps), (x_.grad, g_.grad, b_.grad)):
            torch.testing.assert_close(got, want, rtol=1e-9, atol=1e-9, msg=name)
        checked += 1
    assert checked >= 10


def test_the_softmax_backward_reference_is_autograd_through_softmax():
    reference = _module(SOFTMAX_BACKWARD.path / "reference.py").reference
    g = torch.Generator().manual_seed(0)
    for shape in [(1, 1), (5, 1), (3, 17), (8, 8)]:
        x = (torch.randn(*shape, generator=g, dtype=torch.float64) * 4).requires_grad_(True)
        dy = torch.randn(*shape, generator=g, dtype=torch.float64)
        y = torch.softmax(x, dim=1)
        y.backward(dy)
        torch.testing.assert_close(reference(dy, y.detach()), x.grad, rtol=1e-12, atol=1e-12)


def test_the_silu_reference_is_autograd_through_silu():
    reference = _module(SILU.path / "reference.py").reference
    for name, args in _module(SILU.path / "cases.py").cases(SILU.seed):
        x, dy = _double(args)
        leaf = x.clone().requires_grad_(True)
        y = torch.nn.functional.silu(leaf)
        y.backward(dy)
        want_y, want_dx = reference(x, dy)
        torch.testing.assert_close(want_y, y.detach(), rtol=1e-12, atol=1e-300, msg=name)
        torch.testing.assert_close(want_dx, leaf.grad, rtol=1e-12, atol=1e-300, msg=name)


# --- gradcheck: what the judge cannot run on a candidate, run here on the problem's own files -----------

def _gradcheck(path: Path, x: torch.Tensor) -> bool:
    fn = _module(path).SiLU.apply
    return torch.autograd.gradcheck(fn, (x.clone().requires_grad_(True),), raise_exception=False)


def test_gradcheck_passes_every_correct_silu_and_fails_each_wrong_backward():
    x = torch.linspace(-6.0, 6.0, 25, dtype=torch.float64)
    for path in SILU.solutions():
        assert _gradcheck(path, x), path.name
    wrong = {"missing_x_term", "saves_output", "ignores_grad_output", "backward_returns_none"}
    for path in SILU.mutant_files():
        if path.stem in wrong:
            assert not _gradcheck(path, x), path.name
    assert wrong <= {p.stem for p in SILU.mutant_files()}


def test_the_overflowing_derivative_passes_gradcheck_at_moderate_x_and_only_the_judge_catches_it():
    path = SILU.path / "mutants" / "sigmoid_grad_overflows.py"
    assert _gradcheck(path, torch.linspace(-6.0, 6.0, 25, dtype=torch.float64))
    report = judge.judge(SILU, path)
    assert report.verdict == "fail" and "exp 会溢出" in report.case, report
    assert report.mutant == "sigmoid_grad_overflows", report


# --- the bans, judged in the child ----------------------------------------------------------------------

BN_HEAD = """
    import torch

    def _forward(x, gamma, eps):
        xc = x - x.mean(dim=0)
        return gamma * xc * torch.rsqrt((xc * xc).mean(dim=0) + eps)
"""


@pytest.mark.parametrize("body, reason", [
    ("""
    def bn_backward(dy, x, gamma, eps):
        x, gamma = x.detach().requires_grad_(True), gamma.detach().requires_grad_(True)
        dx, dgamma = torch.autograd.grad(_forward(x, gamma, eps), (x, gamma), dy)
        return dx, dgamma, dy.sum(dim=0)
    """, "禁止的函数：torch.autograd.grad"),
    ("""
    def bn_backward(dy, x, gamma, eps):
        x, gamma = x.detach().requires_grad_(True), gamma.detach().requires_grad_(True)
        _forward(x, gamma, eps).backward(dy)
        return x.grad, gamma.grad, dy.sum(dim=0)
    """, "禁止的函数：torch.Tensor.backward"),
    ("""
    def bn_backward(dy, x, gamma, eps):
        mean, rstd = x.mean(dim=0), torch.rsqrt(x.var(dim=0, unbiased=False) + eps)
        return torch.ops.aten.native_batch_norm_backward(dy, x, gamma, None, None, mean, rstd, True, eps,
                                                         [True, True, True])
    """, "禁止的算子：aten.native_batch_norm_backward"),
], ids=["autograd.grad", "Tensor.backward", "aten.native_batch_norm_backward"])
def test_batchnorm_by_autograd_or_by_the_library_is_refused(tmp_path, body, reason):
    report = _judge(tmp_path, BN, BN_HEAD, body)
    assert report.verdict == "fail" and reason in report.reason, report


def test_the_library_softmax_backward_is_refused(tmp_path):
    report = _judge(tmp_path, SOFTMAX_BACKWARD, """
        import torch

        def softmax_backward(dy, y):
            return torch.ops.aten._softmax_backward_data(dy, y, 1, y.dtype)
    """)
    assert report.verdict == "fail" and "禁止的算子：aten._softmax_backward_data" in report.reason, report


SILU_ENTRY = """
    def silu_and_grad(x, dy):
        leaf = x.detach().clone().requires_grad_(True)
        y = SiLU.apply(leaf)
        y.backward(dy)
        dx = leaf.grad if leaf.grad is not None else torch.zeros_like(leaf)
        return y.detach(), dx
"""


def test_a_backward_that_asks_autograd_for_the_derivative_is_refused(tmp_path):
    report = _judge(tmp_path, SILU, """
        import torch

        class SiLU(torch.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                ctx.save_for_backward(x)
                return x * torch.sigmoid(x)

            @staticmethod
            def backward(ctx, grad):
                (x,) = ctx.saved_tensors
                with torch.enable_grad():
                    x = x.detach().requires_grad_(True)
                    return torch.autograd.grad(x * torch.sigmoid(x), x, grad)[0]
    """, SILU_ENTRY)
    assert report.verdict == "fail" and "禁止的函数：torch.autograd.grad" in report.reason, report


def test_bypassing_the_function_with_autograd_of_sigmoid_is_refused_by_its_operator(tmp_path):
    report = _judge(tmp_path, SILU, """
        import torch

        class SiLU(torch.autograd.Function):
            @staticmethod
            def apply(x):
                return x * torch.sigmoid(x)
    """, SILU_ENTRY)
    assert report.verdict == "fail" and "禁止的算子：aten.sigmoid_backward" in report.reason, report


def test_what_the_statement_says_the_judge_cannot_see_it_does_not_see(tmp_path):
    """Autograd through exp and a division (a form that never overflows), with no hand-written backward,
    passes: the statement says so. If the judge learns to catch it, this test fails and the statement must
    change with it."""
    assert "评测器分辨不出" in (SILU.path / "statement.md").read_text(encoding="utf-8")
    report = _judge(tmp_path, SILU, """
        import torch

        class SiLU(torch.autograd.Function):
            @staticmethod
            def apply(x):
                e = torch.exp(-x.abs())
                return x * torch.where(x >= 0, 1 / (1 + e), e / (1 + e))
    """, SILU_ENTRY)
    assert report.verdict == "pass", report
