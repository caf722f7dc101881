"""The one table of published GPU specifications: every value has a document, and the page shows each once."""

from __future__ import annotations

import json
import re

import pytest

from snippets._gpu import specs
from tests._project import REPO_SETTINGS as SETTINGS
from verify.core import registry
from verify.settings import Settings
from verify.site import gpuspecs
from verify.storage import edge, scan


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


def test_the_page_and_the_claims_read_one_data_file():
    """specs.json is the table: the claims' helper loads it, the page reads it as data (same rows, same order)."""
    table = gpuspecs.read_table(SETTINGS.snippets_dir)
    assert table.rows() == specs.table()
    assert "snippets/_gpu/specs.json" in scan.facts(SETTINGS).get(SETTINGS.snippets_dir / "_gpu" / "specs.py").named


def test_a_claim_that_uses_a_spec_is_keyed_by_the_data_file(tmp_path):
    """Changing a value in specs.json runs again every claim that imports the helper, not only the helper's own file."""
    (tmp_path / "snippets" / "_gpu").mkdir(parents=True)
    (tmp_path / "snippets" / "q").mkdir()
    (tmp_path / "snippets" / "__init__.py").write_text("")
    (tmp_path / "snippets" / "_gpu" / "__init__.py").write_text("")
    (tmp_path / "snippets" / "_gpu" / "t.py").write_text('import json\nDATA = json.load(open("t.json"))\n')
    data = tmp_path / "snippets" / "_gpu" / "t.json"
    data.write_text('{"sms": 132}')
    (tmp_path / "snippets" / "q" / "c.py").write_text(
        "from snippets._gpu import t\nfrom verify.claim import claim\n\n\n"
        "@claim('q.c', question='q', statement='x', expect={'sms': 132})\ndef _(ctx):\n    return {'sms': t.DATA['sms']}\n")
    before = registry.load(scan.facts(Settings.for_root(tmp_path))).key("q.c")
    data.write_text('{"sms": 144}')
    assert registry.load(scan.facts(Settings.for_root(tmp_path))).key("q.c") != before


@pytest.mark.parametrize("change, named", [
    (lambda d: d["gpus"]["H100 SXM"]["sms"].update(value="many"), ".value: expected float, got str"),
    (lambda d: d["gpus"]["H100 SXM"]["sms"].update(colour="red"), "colour"),
    (lambda d: d["gpus"]["H100 SXM"]["sms"].update(value=1e300), "value"),
    (lambda d: d.update(format=99), "format"),
])
def test_a_table_that_does_not_fit_is_refused_naming_the_field(tmp_path, change, named):
    data = json.loads((SETTINGS.snippets_dir / "_gpu" / "specs.json").read_text(encoding="utf-8"))
    change(data)
    (tmp_path / "_gpu").mkdir()
    (tmp_path / "_gpu" / "specs.json").write_text(json.dumps(data), encoding="utf-8")
    with pytest.raises(edge.FileRefused, match=re.escape(named)):
        gpuspecs.read_table(tmp_path)
