"""The one table of published GPU specifications: every value has a document, and the page shows each once."""

from __future__ import annotations

import re

from snippets._gpu import specs
from verify.site import gpuspecs


def test_every_value_names_an_nvidia_document_and_rates_are_dense():
    for row in specs.table():
        assert row["source"].startswith(("NVIDIA", "CUDA")), row
    for name, fields in specs.GPUS.items():
        assert {"capability", "sms", "l2_bytes", "hbm_bytes_per_s", "bf16_dense_flops"} <= set(fields), name
        assert specs.capability_of(name) in specs.CAPABILITY
    # what a datasheet prints with sparsity is twice the dense rate the table keeps
    assert "1,979 TFLOPS printed with sparsity" in specs.GPUS["H100 SXM"]["bf16_dense_flops"].source
    assert specs.GPUS["H100 SXM"]["bf16_dense_flops"].value * 2 == 1979e12


def test_values_read_as_nvidia_prints_them():
    assert gpuspecs.fmt(3.35e12, "bytes/s") == "3.35 TB/s"
    assert gpuspecs.fmt(989.5e12, "FLOP/s") == "989.5 TFLOPS"
    assert gpuspecs.fmt(50 * 2**20, "bytes") == "50 MiB"
    assert gpuspecs.fmt(228 * 1024, "bytes") == "228 KiB"
    assert gpuspecs.fmt(141e9, "bytes") == "141 GB"
    assert gpuspecs.fmt(9.0, "compute capability") == "9.0"


def test_the_fence_shows_every_value_once_with_its_source():
    html = gpuspecs.gpu_specs_fence("", "gpu-specs", "gpu-specs", {}, None)
    rows = re.findall(r"<tr><td>([^<]*)</td><td>([^<]*)</td><td>([^<]*)</td></tr>", html)
    assert len(rows) == len(specs.table())
    assert ("SM 数", "132", specs.GPUS["H100 SXM"]["sms"].source) in rows
    assert "<b>H200 SXM</b>" in html and "<b>计算能力 9.0（每 SM 的上限）</b>" in html
