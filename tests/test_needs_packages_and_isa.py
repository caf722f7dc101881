"""Needs a machine may lack: the packages of `onnx` (a claim that exports to ONNX or runs ONNX Runtime), and an x86-64 CPU."""

from __future__ import annotations

from verify.core import needs, registry
from verify.core.records import Machine
from verify.running import engine


def _spec(**kw) -> registry.ClaimSpec:
    return registry.ClaimSpec(id="x.y", question="q", statement="s", kind="fact", snippet="s.py", line=1, **kw)


CPU = Machine(device="cpu", cpu_count=1, torch="2.13.0")


def test_onnx_is_a_need_a_claim_may_declare():
    assert "onnx" in needs.NEEDS
    assert needs.ONNX_PACKAGES == ("onnx", "onnxscript", "onnxruntime")


def test_each_missing_package_is_named(monkeypatch):
    monkeypatch.setattr(needs, "_has_package", lambda name: name != "onnxruntime")
    assert engine.unmet_need(_spec(needs=("onnx",)), CPU) == "needs onnxruntime (the `run` extras); not installed here"
    monkeypatch.setattr(needs, "_has_package", lambda name: False)
    assert engine.unmet_need(_spec(needs=("onnx",)), CPU).startswith("needs onnx, onnxscript, onnxruntime ")


def test_a_machine_with_the_packages_runs_the_claim(monkeypatch):
    monkeypatch.setattr(needs, "_has_package", lambda name: True)
    assert engine.unmet_need(_spec(needs=("onnx",)), CPU) is None
    # and a claim without the need does not ask for the packages
    monkeypatch.setattr(needs, "_has_package", lambda name: False)
    assert engine.unmet_need(_spec(), CPU) is None


def test_the_probe_reads_the_installed_packages():
    needs._has_package.cache_clear()
    assert needs._has_package("onnx_not_a_real_package_name") is False
    assert needs._has_package("json") is True


def test_an_x86_claim_is_not_applicable_on_another_cpu(monkeypatch):
    """Vector registers, instruction flags and generated x86 code: elsewhere the claim is not run, never failed."""
    monkeypatch.setattr(needs.platform, "machine", lambda: "aarch64")
    assert engine.unmet_need(_spec(needs=("x86-64",)), CPU) == "needs an x86-64 CPU; this one is aarch64"
    monkeypatch.setattr(needs.platform, "machine", lambda: "x86_64")
    assert engine.unmet_need(_spec(needs=("x86-64",)), CPU) is None
