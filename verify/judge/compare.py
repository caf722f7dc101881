"""Comparing one case's outcome with the expected one: the mismatches, each a kind and where it is.

A tensor is compared element by element under the problem's tolerance: shape and dtype first, then NaN and
±Inf in the same places, then ``|got - expected| <= atol + rtol * |expected|`` where both are finite, and a
norm check so that an output of zeros never passes. NaN where the expected value is finite is reported as an
element never written or computed as NaN (the child fills new tensors with NaN). Anything else compares exactly, unless the
problem's reference has ``check(args, got)`` (an answer that is not unique, such as a topological order).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from verify.judge.problem import Output, Tolerance

SHOWN = 5


@dataclass(frozen=True)
class Mismatch:
    kind: str  # what is wrong, in words shared by every element of that kind (a mutant is matched by it)
    where: str = ""
    expected: str = ""
    got: str = ""

    def line(self) -> str:
        parts = [self.kind] + ([f"位置 {self.where}"] if self.where else [])
        if self.expected:
            parts.append(f"应为 {self.expected}，得到 {self.got}")
        elif self.got:
            parts.append(f"得到 {self.got}")
        return "，".join(parts)


@dataclass(frozen=True)
class Outcome:
    """What a call did: returned ``value``, or raised ``error`` (its type name and message)."""

    value: Any = None
    error: tuple[str, str] | None = None


def _fmt(x: float) -> str:
    return f"{x:.6g}"


def tensors(expected: Any, got: Any, output: Output, tol: Tolerance) -> list[Mismatch]:
    import torch  # noqa: PLC0415

    name = output.name
    if not isinstance(expected, torch.Tensor):  # a known-wrong solution's value, compared with a candidate's
        return [Mismatch(f"{name} 无从比较：对照的值不是张量", got=type(expected).__name__)]
    if not isinstance(got, torch.Tensor):
        return [Mismatch(f"{name} 不是张量", got=type(got).__name__)]
    if tuple(got.shape) != tuple(expected.shape):
        return [Mismatch(f"{name} 形状不对", expected=str(tuple(expected.shape)), got=str(tuple(got.shape)))]
    if str(got.dtype) != f"torch.{output.dtype}":
        return [Mismatch(f"{name} 的 dtype 不对", expected=output.dtype, got=str(got.dtype).removeprefix("torch."))]
    e, g = expected.detach().double(), got.detach().double()
    out: list[Mismatch] = []
    e_nan, g_nan = torch.isnan(e), torch.isnan(g)
    finite = torch.isfinite(e) & torch.isfinite(g)
    bad = (e_nan != g_nan) | (torch.isinf(e) != torch.isinf(g)) | (torch.isinf(e) & (e != g))
    close = (g - e).abs() <= tol.atol + tol.rtol * e.abs()
    bad |= finite & ~close
    for idx in torch.nonzero(bad)[:SHOWN].tolist():
        ev, gv = e[tuple(idx)].item(), g[tuple(idx)].item()
        kind = (f"{name} 在应为有限值处是 NaN（没有写入，或算出了 NaN）" if gv != gv and ev == ev else
                f"{name} 的 NaN/Inf 位置不对" if ev != ev or abs(ev) == float("inf") or abs(gv) == float("inf")
                else f"{name} 数值超出容差")
        out.append(Mismatch(kind, str(tuple(idx)), _fmt(ev), _fmt(gv)))
    count = int(bad.sum())
    if count > SHOWN:
        out.append(Mismatch(f"{name} 共 {count} 个元素不对（只列出前 {SHOWN} 个）"))
    e_norm = float(e[torch.isfinite(e)].norm()) if e.numel() else 0.0
    g_finite = g[torch.isfinite(g)]
    if e_norm > 0 and g_finite.numel() == g.numel() and float(g_finite.norm()) == 0:
        out.insert(0, Mismatch(f"{name} 全是零（范数为 0，应为 {_fmt(e_norm)}）"))
    return out


def outputs(expected: Any, got: Any, spec: list[Output], tol: Tolerance) -> list[Mismatch]:
    """A PyTorch problem's outputs: one tensor, or a tuple in the order ``spec`` names them."""
    if len(spec) == 1:
        return tensors(expected, got, spec[0], tol)
    if not isinstance(got, (list, tuple)) or len(got) != len(spec):
        return [Mismatch(f"应返回 {len(spec)} 个张量（{', '.join(o.name for o in spec)}）", got=type(got).__name__)]
    return [m for e, g, o in zip(expected, got, spec) for m in tensors(e, g, o, tol)]


def exact(expected: Any, got: Any) -> list[Mismatch]:
    return [] if got == expected and type(got) is type(expected) else [Mismatch("结果不对", "", repr(expected)[:200],
                                                                                repr(got)[:200])]


def outcomes(args: tuple[Any, ...], expected: Outcome, got: Outcome, value_check: Callable[[Any, Any], list[Mismatch]],
             check: Callable[..., list[tuple[str, str]]] | None) -> list[Mismatch]:
    """The mismatches of one case; an expected exception must be raised with the same type."""
    if expected.error is not None:
        if got.error is None:  # what is wrong with the value too: it tells one missed check from another
            why = [Mismatch(kind, got=detail) for kind, detail in check(args, got.value)] if check else []
            return [Mismatch(f"应抛出 {expected.error[0]}，却返回了结果", got=repr(got.value)[:200]), *why[:1]]
        if got.error[0] != expected.error[0]:
            return [Mismatch("抛出的异常类型不对", expected=expected.error[0], got=got.error[0])]
        return []
    if got.error is not None:
        if got.error[0].endswith("Sanitizer"):  # a C++ program stopped by its sanitizer (verify.judge.cpp)
            return [Mismatch(f"程序被 sanitizer 停下：{got.error[0]}", got=got.error[1][:200])]
        return [Mismatch(f"不该抛出异常，却抛出了 {got.error[0]}", got=got.error[1][:200])]
    if check is not None:
        return [Mismatch(kind, got=detail) for kind, detail in check(args, got.value)]
    return value_check(expected.value, got.value)


def same_bug(a: list[Mismatch], b: list[Mismatch]) -> bool:
    """Two failing outcomes that fail alike (a unique-answer problem's mutants are matched by this)."""
    return bool(a) and {m.kind for m in a} == {m.kind for m in b}
