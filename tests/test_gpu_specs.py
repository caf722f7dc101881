"""The one table of published GPU specifications: every value has a document, and the page shows each once."""

from __future__ import annotations

import json
import re
from html.parser import HTMLParser

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


def test_values_read_in_the_rows_unit_in_plain_digits():
    R = gpuspecs.ROWS
    assert gpuspecs.number(3.35e12, R["hbm_bytes_per_s"]) == "3.35"  # TB/s
    assert gpuspecs.number(2.039e12, R["hbm_bytes_per_s"]) == "2.039"
    assert gpuspecs.number(989.5e12, R["bf16_dense_flops"]) == "989.5"  # TFLOP/s
    assert gpuspecs.number(624e12, R["int8_dense_ops"]) == "624"  # TOP/s, not 6.24e+14
    assert gpuspecs.number(50 * 2**20, R["l2_bytes"]) == "50"  # MiB
    assert gpuspecs.number(228 * 1024, R["shared_per_sm"]) == "228"  # KiB
    assert gpuspecs.number(141e9, R["hbm_bytes"]) == "141"  # GB
    assert gpuspecs.number(9.0, R["capability"]) == "9.0"
    assert gpuspecs.number(65536, R["registers_per_sm"]) == "65536"  # a count keeps every digit
    assert gpuspecs.number(1e18, R["bf16_dense_flops"]) == "1000000"  # the largest value the file allows
    assert gpuspecs.number(1234567, R["sms"]) == "1234567"


class _Table(HTMLParser):
    """The fence's table as rows of cells (text, footnote number or None), and its footnotes by number."""

    def __init__(self) -> None:
        super().__init__()
        self.rows: list[list[tuple[str, int | None]]] = []
        self.notes: dict[int, str] = {}
        self.tables = 0
        self._cell: list[str] | None = None
        self._ref: int | None = None
        self._note: int | None = None
        self._in_ref = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = dict(attrs)
        if tag == "table":
            self.tables += 1
        elif tag == "tr":
            self.rows.append([])
        elif tag in ("th", "td"):
            self._cell, self._ref = [], None
        elif tag == "a" and self._cell is not None and (a.get("href") or "").startswith("#gpu-spec-src-"):
            self._ref = int((a.get("href") or "").rsplit("-", 1)[1])
            self._in_ref = True  # the footnote's digits are not part of the value
        elif tag == "li" and (a.get("id") or "").startswith("gpu-spec-src-"):
            self._note = int((a.get("id") or "").rsplit("-", 1)[1])
            self.notes[self._note] = ""

    def handle_endtag(self, tag: str) -> None:
        if tag in ("th", "td") and self._cell is not None:
            self.rows[-1].append(("".join(self._cell).strip(), self._ref))
            self._cell = None
        elif tag == "a":
            self._in_ref = False
        elif tag == "li":
            self._note = None

    def handle_data(self, data: str) -> None:
        if self._cell is not None and not self._in_ref:
            self._cell.append(data)
        elif self._note is not None:
            self.notes[self._note] += data


def _parse(html: str) -> _Table:
    table = _Table()
    table.feed(html)
    return table


def test_the_fence_is_one_comparison_with_a_column_per_gpu_and_numbered_sources():
    html = gpuspecs.gpu_specs_fence("", "gpu-specs", "gpu-specs", {}, None)
    table = _parse(html)
    assert table.tables == 1
    head, *body = table.rows
    assert [text for text, _ in head] == ["规格", *specs.GPUS]
    rows = {}
    for r in body:
        if len(r) > 1:  # not a section's heading: a quantity, named as a row of the table says
            found = [row.name for row in gpuspecs.ROWS.values() if r[0][0] == row.name or r[0][0].startswith(row.name + " ")]
            assert len(found) == 1, r[0]
            rows[found[0]] = r
    shown = 0
    for col, (gpu, fields) in enumerate(specs.GPUS.items(), start=1):
        limits = specs.CAPABILITY[f"{fields['capability'].value:.1f}"]
        for field, spec in {**fields, **limits}.items():
            name = gpuspecs.ROWS[field].name
            assert re.search(r"[\u4e00-\u9fff]", name), field  # a Chinese name, not the data's key
            (text, ref), row_ref = rows[name][col], rows[name][0][1]
            assert text.split("PCIe")[0] == gpuspecs.number(spec.value, gpuspecs.ROWS[field]), (gpu, field, text)
            note = table.notes[ref or row_ref]  # the cell's own footnote, or the row's when all share one
            assert note.startswith(spec.source.split("; ")[0]), (gpu, field, note)
            shown += 1
    assert shown == sum(len(f) + len(specs.CAPABILITY[f"{f['capability'].value:.1f}"]) for f in specs.GPUS.values())
    assert sorted(table.notes) == list(range(1, len(table.notes) + 1))
    assert len(table.notes) == len({r["source"] for r in specs.table()})  # one footnote per document cited
    # plain digits with the unit in the row's name, never e-notation or a data key
    cells = [text for r in body for text, _ in r[1:]]
    assert not [c for c in cells if re.search(r"\de[+-]?\d", c)], cells
    assert not [f for f in gpuspecs.ROWS if "_" in f and f in html]
    assert ("显存带宽 TB/s", "3.35") == (rows["显存带宽"][0][0], rows["显存带宽"][2][0])
    assert rows["FP8 稠密算力"][1][0] == gpuspecs.MISSING  # A100 has no FP8 rate in the file
    assert [c for c, _ in rows["PCIe 带宽（双向合计）"][1:]] == ["64PCIe Gen4", "128PCIe Gen5", "128PCIe Gen5"]
    assert "2:4 稀疏下" in table.notes[rows["BF16 稠密算力"][2][1]]


def _table_with(tmp_path, change) -> gpuspecs.SpecTable:
    data = json.loads((SETTINGS.snippets_dir / "_gpu" / "specs.json").read_text(encoding="utf-8"))
    change(data)
    (tmp_path / "_gpu").mkdir()
    (tmp_path / "_gpu" / "specs.json").write_text(json.dumps(data), encoding="utf-8")
    return gpuspecs.read_table(tmp_path)


@pytest.mark.parametrize("change, named", [
    (lambda d: d["gpus"]["H100 SXM"].update(foo_bytes={"value": 1, "unit": "bytes", "source": "NVIDIA x"}), "foo_bytes"),
    (lambda d: d["gpus"]["H100 SXM"]["hbm_bytes"].update(unit="bits"), "hbm_bytes: unit 'bits'"),
    (lambda d: d["capabilities"]["9.0"].update(sms={"value": 1, "unit": "SMs", "source": "CUDA x"}), "sms given for the GPU"),
])
def test_a_value_the_table_cannot_show_rightly_stops_the_page(tmp_path, change, named):
    with pytest.raises(ValueError, match=re.escape(named)):
        gpuspecs.comparison(_table_with(tmp_path, change))


def test_a_capability_no_gpu_has_gets_its_own_column(tmp_path):
    def drop_a100(d):
        del d["gpus"]["A100 SXM 80GB"]
    shown = gpuspecs.comparison(_table_with(tmp_path, drop_a100))
    assert shown["heads"] == ["H100 SXM", "H200 SXM", "计算能力 8.0"]
    rows = {r["name"]: r["cells"] for s in shown["sections"] for r in s["rows"]}
    assert [c for c, _, _ in rows["每 SM 共享内存上限"]] == ["228", "228", "164"]
    assert rows["SM 数"][2][0] == gpuspecs.MISSING


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
