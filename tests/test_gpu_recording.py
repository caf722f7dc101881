"""A GPU recording, faked end to end: a ``needs=["cuda"]`` claim and a benchmark this CPU cannot run.

The records are made with the classes and the judge a real recording uses
(:mod:`verify.running.record`: ``evidence.judge``, ``evidence.make``, ``recorded.write``), from
observed values an H200 could have produced, keyed by the claim's current measuring code. This
machine has no GPU: the claim is skipped here (需 CUDA) and shown from the record, labelled with
the GPU and the date; a record that contradicts the expectation fails the strict build; an edit
of the measuring code makes the record stale, an edit of the sentence or a comment does not.
A ``benchmarks/cuda-*.json`` result file shows in a ``bench`` fence as another machine's.
"""

from __future__ import annotations

import json
import re
import shutil
from dataclasses import replace
from datetime import datetime, timedelta, timezone
from html import unescape
from pathlib import Path
from typing import Any

import pytest

from tests._project import MKDOCS_YML, mkdocs_build, question_page, settings, tiny_project
from verify import settings as settings_mod
from verify.site import bench_fence as bench_fence_mod
from verify.bench import store
from verify.core import binding, evidence, states
from verify.bench.results import Results
from verify.core.records import Machine, Outcome, Provenance, WorkerResult
from verify.running import probe
from verify.settings import Settings
from verify.site import fences, inline, session
from verify.site import quiz as site_quiz
from verify.storage import recorded, scan
from verify.storage.fs import atomic_write_json

CPU, GPU = "tiny.count", "tiny.h2d"
GPU_NAME = "NVIDIA H200"
KEY = probe.device_key(Machine(device="cuda", gpu_name=GPU_NAME))  # what the probe of an H200 calls it
# a few days ago: a recorded date must lie between 2000 and now
DATE = (datetime.now(timezone.utc) - timedelta(days=3)).replace(microsecond=0).isoformat()
DAY = DATE[:10]

GOOD = {"pinned_s": 0.00123, "speedup": 2.5, "major": 9}
BAD = {"pinned_s": 0.00123, "speedup": 0.8, "major": 9}  # pinned slower than pageable: contradicts {">": 1.2}
SENTENCE = "在 GPU 上拷贝 64 MiB：pinned 内存用时 1.23 ms，可分页内存是它的 2.5 倍；计算能力主版本为 9。"

SNIPPET = '''\
from verify.claim import claim

Q = "tiny"


@claim("tiny.count", question=Q, statement="这个列表有 {n} 个元素。", expect={"n": 3})
def _(ctx):
    return {"n": len([1, 2, 3])}


@claim("tiny.h2d", question=Q, needs=["cuda"],
       statement="在 GPU 上拷贝 {=64 MiB}：pinned 内存用时 {pinned_s:time}，可分页内存是它的 {speedup:x}；计算能力主版本为 {major}。",
       expect={"speedup": {">": 1.2}, "major": 9})
def _(ctx):
    """把 64 MiB 从 pinned 与可分页内存拷到 GPU 的耗时，和 GPU 的计算能力。"""
    import time

    import torch

    host = torch.empty(16 * 2**20, dtype=torch.float32)
    pinned = host.pin_memory()
    dev = torch.empty_like(host, device="cuda")

    def once(src):
        torch.cuda.synchronize()
        start = time.perf_counter()
        dev.copy_(src, non_blocking=True)
        torch.cuda.synchronize()
        return time.perf_counter() - start

    pageable_s = min(once(host) for _ in range(5))
    pinned_s = min(once(pinned) for _ in range(5))
    return {"pinned_s": pinned_s, "speedup": pageable_s / pinned_s, "major": torch.cuda.get_device_capability()[0]}
'''

PAGE = question_page(f"""\
```claim
{CPU}
```

```claim
{GPU}
```

H200 上可分页内存的拷贝慢 `#!v {GPU} speedup:x`（指名设备时同样是 `#!v {GPU} speedup:x @{KEY}`）。
""")

GROUP = "gpu-h2d"
BENCH_TEST = "tests/test_bench_gpu.py"
BENCH_SOURCE = '''\
import pytest

pytestmark = pytest.mark.bench


@pytest.mark.parametrize("size", [2**20, 2**24])
def test_h2d(benchmark, size):
    import torch

    host = torch.empty(size, pin_memory=True)
    dev = torch.empty(size, device="cuda")
    benchmark(lambda: (dev.copy_(host, non_blocking=True), torch.cuda.synchronize()))
'''
BENCH_PAGE = f"""\
# 基准

```bench
{GROUP}
x: size
plot: none
needs: cuda
```
"""

YML = MKDOCS_YML + """\
        - name: bench
          class: bench
          format: !!python/name:verify.build.bench_fence
"""


# --- the faked recordings -------------------------------------------------------------------------

def _gpu_provenance() -> Provenance:
    return Provenance(torch="2.11.0", torch_build="cu130", device="cuda", device_name=GPU_NAME, device_key=KEY,
                      cpu_model="Intel(R) Xeon(R) Platinum 8480C", cpu_signature="f6m143", cpu_count=16,
                      cpu_isa="AVX512", gpu_capability="9.0", python="3.11.7", os="Linux 6.8.0", threads=1,
                      git_commit="0123456789ab", date=DATE)


def record_gpu(root: Path, observed: dict[str, Any], *, outcome: Outcome | None = None) -> Path:
    """``evidence/cuda-nvidia-h200.json`` as ``verify.running.record`` writes it on an H200.

    The record is judged as the engine judges a run; ``outcome`` overrides the verdict (a file that
    claims a pass its values contradict), as a hand-edited or forged file could.
    """
    conf = settings(root)
    reg = scan.load_registry(conf)
    spec = reg.claims[GPU]
    raw = WorkerResult(GPU, dict(observed), duration_s=0.84, threads=1)
    verdict, message = evidence.judge(spec, raw)
    record = evidence.make(spec, reg.key(GPU), verdict, message, _gpu_provenance(), raw)
    if outcome is not None:
        record = replace(record, outcome=outcome, message="every expectation holds")
    machine = Machine.from_json({**_gpu_provenance().to_json(), "cuda_runtime": "13.0"}).recorded()
    return recorded.write(conf, KEY, {GPU: record}, machine)


def _bench_entry(size: int, median_s: float) -> dict[str, Any]:
    name = f"test_h2d[{size}]"
    return {
        "fullname": f"{BENCH_TEST}::{name}", "name": name, "group": GROUP, "param": str(size), "params": {"size": size},
        "options": {"min_rounds": 5, "timer": "perf_counter"},
        "stats": {"median": median_s, "min": median_s, "max": median_s, "mean": median_s, "rounds": 5, "iterations": 1,
                  "q1": median_s, "q3": median_s, "iqr": 0.0, "stddev": 0.0, "data": [median_s] * 5},
        "extra_info": {"size": size, "median_s": median_s, "q1_s": median_s * 0.98, "q3_s": median_s * 1.02,
                       "spread": 0.04, "inner": 1, "variant": "pinned", "device": "cuda",
                       "bytes": size * 4, "GBps": size * 4 / median_s / 1e9},
    }


def record_bench(root: Path, gpu_name: str, source_key: str | None = None) -> Path:
    """``benchmarks/<key>.json`` as ``verify bench run`` leaves it on a GPU: pytest-benchmark's JSON with
    the sources it ran (keyed by the file's current source key, unless ``source_key`` says otherwise),
    merged by :func:`verify.bench.store.merge`."""
    conf = settings(root)
    machine = {"cpu_model": "Intel(R) Xeon(R) Platinum 8480C", "cpu_count": 16, "threads": 16, "torch": "2.11.0",
               "torch_build": "cu130", "device": "cuda", "gpu_name": gpu_name, "python": "3.11.7",
               "limits": {"copy_GBps": 55.0}}
    raw = {"machine_info": machine, "commit_info": {"id": "0123456789abcdef" * 2 + "01234567", "dirty": False,
                                                    "branch": "main"},
           "benchmarks": [_bench_entry(2**20, 1.1e-4), _bench_entry(2**24, 1.3e-3)], "datetime": DATE,
           "version": "5.1.0", "sources": {BENCH_TEST: source_key or store.source_hash(conf, BENCH_TEST)}}
    path = conf.bench_dir / f"{probe.device_key(Machine(device='cuda', gpu_name=gpu_name))}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write_json(path, store.merge(store.load(path), Results.from_json(raw)).to_json())
    return path


def _project(root: Path) -> Path:
    return tiny_project(root, snippet=SNIPPET, page=PAGE, extra={
        "mkdocs.yml": YML, "docs/ledger.md": "# 账本\n\n```ledger\nall\n```\n", "docs/bench.md": BENCH_PAGE,
        BENCH_TEST: BENCH_SOURCE})


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> tuple[Path, Any]:
    """The project with an H200's recording and benchmark results (and an A100's stale ones), built strict once."""
    root = _project(tmp_path_factory.mktemp("gpu") / "p")
    record_gpu(root, GOOD)
    record_bench(root, GPU_NAME)
    record_bench(root, "NVIDIA A100-SXM4-80GB", source_key="0" * 16)  # made from a benchmark file since changed
    return root, mkdocs_build(root)


@pytest.fixture
def copy(built, tmp_path) -> Path:
    """A copy of the built project (its cache warm: the CPU claim does not run again), to change freely."""
    dest = tmp_path / "p"
    shutil.copytree(built[0], dest, ignore=shutil.ignore_patterns("site"))
    return dest


def _session(root: Path, monkeypatch) -> session.Session:
    monkeypatch.setattr(settings_mod, "_site", settings(root))
    monkeypatch.setattr(session, "RECHECK_S", 0.0)
    return session.get()


def _summary(html: str, cid: str) -> str:
    """A claim's sentence and markers (its ``<summary>``), from a page or a fence."""
    m = re.search(rf'id="claim-{re.escape(cid)}".*?<summary>(.*?)</summary>', html, re.S)
    assert m, f"no claim {cid} in the HTML"
    return m.group(1)


def _marks(summary: str) -> list[tuple[str, str, str]]:
    """(data-status, title, word) of each marker after a sentence."""
    return [(s, unescape(t), w) for s, t, w in
            re.findall(r'<span class="vf-mark [^"]*" data-status="([^"]+)" title="([^"]*)"[^>]*>([^<]*)</span>', summary)]


def _machines(html: str, cid: str) -> list[tuple[str, str]]:
    """(data-status, text) of each machine a claim's body names (what a tap on the sentence shows)."""
    m = re.search(rf'id="claim-{re.escape(cid)}".*?<ul class="vf-machines">(.*?)</ul>', html, re.S)
    assert m, f"no machine list in the body of {cid}"
    return [(st, _text(li)) for st, li in re.findall(r'<li data-status="([^"]+)">(.*?)</li>', m.group(1), re.S)]


def _text(html: str) -> str:
    return unescape(re.sub(r"<[^>]+>", "", html))


# --- a passing recording ------------------------------------------------------------------------

def test_the_recording_is_written_as_the_runner_writes_one(built):
    root, _ = built
    data = json.loads((root / "evidence" / f"{KEY}.json").read_text(encoding="utf-8"))
    assert KEY == "cuda-nvidia-h200" and data["device_key"] == KEY and data["format"] == recorded.FORMAT
    assert data["machine"]["device_name"] == GPU_NAME and data["machine"]["gpu_capability"] == "9.0"
    rec = data["claims"][GPU]
    assert rec["outcome"] == "pass" and rec["needs"] == ["cuda"] and rec["observed"] == GOOD
    assert rec["snippet_hash"] == scan.load_registry(settings(root)).key(GPU)
    assert (rec["provenance"]["device"], rec["provenance"]["torch_build"]) == ("cuda", "cu130")
    # read back the way every build reads it: every field checked
    assert recorded.read(root / "evidence" / f"{KEY}.json", "x").claims[GPU].provenance.date == DATE


def test_the_strict_build_shows_the_gpu_claim_verified_elsewhere_with_its_values(built):
    root, proc = built
    assert proc.returncode == 0, proc.stderr[-3000:]
    html = (root / "site/questions/tiny/index.html").read_text(encoding="utf-8")

    gpu = _summary(html, GPU)
    marks = _marks(gpu)
    # one mark: the best evidence any machine has; the title and the body name both machines
    assert [(s, w) for s, _, w in marks] == [(evidence.VERIFIED_ELSEWHERE, "他机已验证")]
    title = marks[0][1]
    assert GPU_NAME in title and "torch 2.11.0" in title and DAY in title
    assert states.get(evidence.NEEDS_CUDA).label in title.splitlines()[0]
    body = _machines(html, GPU)
    assert [st for st, _ in body] == [evidence.NEEDS_CUDA, evidence.VERIFIED_ELSEWHERE]
    assert body[0][1].startswith("构建机（") and states.get(evidence.NEEDS_CUDA).label in body[0][1]
    assert GPU_NAME in body[1][1] and DAY in body[1][1] and states.get(evidence.VERIFIED_ELSEWHERE).label in body[1][1]
    assert "构建机已验证" not in gpu and evidence.VERIFIED_HERE not in gpu  # never verified on this CPU
    stmt = re.search(r'<span class="vf-stmt">(.*?)</span>(?=<span class="vf-scope)', gpu, re.S)
    assert stmt and _text(stmt.group(1)) == SENTENCE
    values = re.findall(r'<span class="vf-val[^"]*" data-claim="tiny.h2d" data-key="([^"]+)" data-status="([^"]+)"[^>]*>'
                        r"([^<]*)</span>", gpu)
    assert values == [("pinned_s", evidence.VERIFIED_ELSEWHERE, "1.23 ms"),
                      ("speedup", evidence.VERIFIED_ELSEWHERE, "2.5 倍"),
                      ("major", evidence.VERIFIED_ELSEWHERE, "9")]

    cpu = _marks(_summary(html, CPU))
    assert [(s, w) for s, _, w in cpu] == [(evidence.VERIFIED_HERE, "构建机已验证")]  # the CPU claim ran here

    # the page's own inline values, with and without naming the device
    inline_vals = re.findall(r'<span class="vf-val[^"]*" data-claim="tiny.h2d" data-key="speedup" '
                             r'data-status="([^"]+)"[^>]*>([^<]*)</span>', html)
    assert inline_vals.count((evidence.VERIFIED_ELSEWHERE, "2.5 倍")) == 3  # the sentence's and the two inline


def test_the_built_ledger_and_quiz_carry_the_gpu_record(built):
    root, proc = built
    assert proc.returncode == 0, proc.stderr[-3000:]
    ledger = {r["id"]: r for r in json.loads((root / "site/evidence.json").read_text(encoding="utf-8"))["claims"]}
    row = ledger[GPU]
    assert row["status"] == evidence.NEEDS_CUDA and row["statement"] == SENTENCE
    assert [(e["device_key"], e["status"], e["device"], e["date"], e["observed"]) for e in row["elsewhere"]] == [
        (KEY, evidence.VERIFIED_ELSEWHERE, GPU_NAME, DATE, GOOD)]
    assert ledger[CPU]["status"] == evidence.VERIFIED_HERE and ledger[CPU]["elsewhere"] == []

    bank = json.loads((root / "site/quiz.json").read_text(encoding="utf-8"))
    assert bank["evidence"][GPU] == {"sentence": SENTENCE, "where": f"{GPU_NAME} · torch 2.11.0"}
    better = bank["questions"][0]["better_answer"]
    assert SENTENCE in better and "慢 2.5 倍（指名设备时同样是 2.5 倍）" in better
    drill = next(d for d in bank["drills"] if d["claim"] == GPU)
    assert (drill["device"], drill["torch"], drill["date"], drill["here"]) == (GPU_NAME, "2.11.0", DAY, False)
    assert drill["answer"] == 9 and drill["sentence"] == SENTENCE


def test_the_session_ledger_fence_and_inline_values_read_the_record(built, monkeypatch):
    root, _ = built
    sess = _session(root, monkeypatch)
    assert sess.failures == []
    assert sess.outcome.status(GPU) == evidence.NEEDS_CUDA and sess.outcome.local[GPU].outcome is Outcome.SKIPPED
    assert sess.remote_statuses(GPU) == {KEY: evidence.VERIFIED_ELSEWHERE}
    assert sess.outcome.sentence(GPU) == SENTENCE
    row = {r.id: r for r in sess.ledger()}[GPU]
    assert [(e.device_key, e.status, e.device, e.torch) for e in row.elsewhere] == [
        (KEY, evidence.VERIFIED_ELSEWHERE, GPU_NAME, "2.11.0")]

    ledger = fences.ledger_fence("all", "ledger", "ledger", {}, None)
    gpu_row = re.search(rf"<tr[^>]*>(?:(?!</tr>).)*<code>{re.escape(GPU)}</code>(?:(?!</tr>).)*</tr>", ledger, re.S)
    assert gpu_row, "no ledger row for the GPU claim"
    assert 'data-status="verified-elsewhere"' in gpu_row.group(0) and GPU_NAME in gpu_row.group(0)
    assert DAY in gpu_row.group(0) and 'data-status="verified-here"' not in gpu_row.group(0)

    for src in (f"{GPU} speedup:x", f"{GPU} speedup:x @{KEY}", f"{GPU} pinned_s:time"):
        html = inline.value_inline(src, "v", "vf-val", None)
        assert 'data-status="verified-elsewhere"' in html and "vf-val-note" not in html, html
    assert ">1.23 ms<" in inline.value_inline(f"{GPU} pinned_s:time", "v", "vf-val", None)
    assert sess.outcome.value(binding.Ref(GPU, "major")) == (
        "9", evidence.VERIFIED_ELSEWHERE, f" · {GPU_NAME} · torch 2.11.0 · {DAY}")

    ev = fences.evidence_fence("tiny", "evidence", "evidence", {}, None)
    assert GPU_NAME in ev and SENTENCE in _text(ev)
    assert re.search(rf'<li data-claim="{re.escape(GPU)}" data-status="{evidence.NEEDS_CUDA}">.*?'
                     rf'<span class="vf-mark vf-ok" data-status="{evidence.VERIFIED_ELSEWHERE}"', ev, re.S)


def test_the_quiz_bank_of_a_session_has_the_gpu_value(built, monkeypatch):
    root, _ = built
    sess = _session(root, monkeypatch)
    bank = site_quiz.site_bank(sess.settings, sess.settings.docs_dir, sess.outcome, html=False)
    assert bank.evidence[GPU].sentence == SENTENCE
    assert bank.evidence[GPU].where.startswith(GPU_NAME)
    assert any(d.claim == GPU and d.device == GPU_NAME for d in bank.drills)


# --- a failing recording ------------------------------------------------------------------------

def test_a_failing_gpu_record_fails_the_strict_build_naming_the_claim(copy):
    record_gpu(copy, BAD)
    assert json.loads((copy / "evidence" / f"{KEY}.json").read_text())["claims"][GPU]["outcome"] == "fail"
    proc = mkdocs_build(copy)
    assert proc.returncode != 0
    said = " ".join(proc.stderr.split())
    assert GPU in said and f"evidence/{KEY}.json" in said and f"recorded on {GPU_NAME}: fail" in said, said[-3000:]


def test_a_record_whose_stored_pass_its_values_contradict_is_a_failure(copy, monkeypatch):
    record_gpu(copy, BAD, outcome=Outcome.PASS)  # the file says pass; the values say otherwise
    assert json.loads((copy / "evidence" / f"{KEY}.json").read_text())["claims"][GPU]["outcome"] == "pass"
    sess = _session(copy, monkeypatch)
    assert sess.remote_statuses(GPU) == {KEY: evidence.FAILED}
    assert [(f.claim, f.where) for f in sess.failures] == [(GPU, f"evidence/{KEY}.json")]
    assert "speedup" in sess.failures[0].message
    marks = _marks(_summary(fences.claim_fence(GPU, "claim", "claim", {}, None), GPU))
    assert [(s, w) for s, _, w in marks] == [(evidence.FAILED, "失败")]  # a failure anywhere is the mark
    assert GPU_NAME in marks[0][1]
    # a failed record's values are not shown as verified anywhere: not in the sentence, not in the quiz
    assert sess.outcome.sentence(GPU) == "在 GPU 上拷贝 64 MiB：pinned 内存用时 —，可分页内存是它的 —；计算能力主版本为 —。"
    bank = site_quiz.site_bank(sess.settings, sess.settings.docs_dir, sess.outcome, html=False)
    assert GPU not in bank.evidence and all(d.claim != GPU for d in bank.drills)


# --- staleness ----------------------------------------------------------------------------------

EDITS = {
    # (old, new) in the snippet file, and what the H200's record then is
    "measuring code": (("16 * 2**20", "32 * 2**20"), evidence.STALE),
    "its timing loop": (("min(once(pinned) for _ in range(5))", "min(once(pinned) for _ in range(9))"),
                        evidence.STALE),
    "the statement": (("在 GPU 上拷贝 {=64 MiB}", "在 GPU 上复制 {=64 MiB}"), evidence.VERIFIED_ELSEWHERE),
    "a comment": (("    pageable_s =", "    # pageable memory goes through a staging buffer\n    pageable_s ="),
                  evidence.VERIFIED_ELSEWHERE),
    "the other claim": (('len([1, 2, 3])}', 'len([1, 2, 3]) + 0}'), evidence.VERIFIED_ELSEWHERE),
    "the expectation": (('{">": 1.2}', '{">": 3}'), evidence.FAILED),  # judged again: 2.5 is not > 3
}


@pytest.mark.parametrize("what", list(EDITS))
def test_an_edit_after_the_recording(copy, monkeypatch, what):
    (old, new), status = EDITS[what]
    path = copy / "snippets/tiny/basic.py"
    text = path.read_text(encoding="utf-8")
    assert text.count(old) == 1
    path.write_text(text.replace(old, new), encoding="utf-8")
    sess = _session(copy, monkeypatch)
    assert sess.remote_statuses(GPU) == {KEY: status}
    assert sess.outcome.status(GPU) == evidence.NEEDS_CUDA  # still never run here
    marks = _marks(_summary(fences.claim_fence(GPU, "claim", "claim", {}, None), GPU))
    words = [w for _, _, w in marks]
    assert "构建机已验证" not in words
    row = {r.id: r for r in sess.ledger()}[GPU]
    assert row.elsewhere[0].status == status
    sentence = sess.outcome.sentence(GPU)
    if status == evidence.VERIFIED_ELSEWHERE:
        assert words == ["他机已验证"] and sess.failures == []
        assert sentence == SENTENCE.replace("拷贝", "复制" if what == "the statement" else "拷贝")
    elif status == evidence.STALE:
        # waiting for a GPU reads before a stale record; the title still names the stale one
        assert words == ["需 CUDA"] and "记录已过期" in marks[0][1] and GPU_NAME in marks[0][1]
        assert sess.failures == []  # a stale record is no evidence, and no failure either
        assert "1.23 ms" not in sentence and "2.5 倍" not in sentence  # its values are not shown as current
        html = inline.value_inline(f"{GPU} speedup:x", "v", "vf-val", None)
        assert "2.5 倍" not in html and 'data-status="verified-elsewhere"' not in html
    else:
        assert words == ["失败"] and [f.claim for f in sess.failures] == [GPU]


# --- benchmark results of a GPU -----------------------------------------------------------------

def _device_blocks(html: str) -> dict[str, str]:
    """device key -> its block of a bench fence (another machine's is folded: a <details>)."""
    out = {}
    for block in re.split(r'<div class="vf-bench-device"|<details class="vf-bench-device vf-bench-other"', html)[1:]:
        m = re.match(r' data-device="([^"]+)">\s*<(?:p|summary)><strong>[^<]+</strong>', block)
        assert m, block[:200]
        out[m.group(1)] = block
    return out


def test_the_built_bench_block_labels_the_gpus_results_as_another_machines(built):
    root, proc = built
    assert proc.returncode == 0, proc.stderr[-3000:]
    html = (root / "site/bench/index.html").read_text(encoding="utf-8")
    blocks = _device_blocks(html)
    a100 = probe.device_key(Machine(device="cuda", gpu_name="NVIDIA A100-SXM4-80GB"))
    assert set(blocks) == {KEY, a100}
    h200 = blocks[KEY]
    assert "另一台机器测得，不是构建机的结果" in h200 and "构建机（构建本站的机器）测得" not in h200
    assert html.count('<details class="vf-bench-device vf-bench-other"') == 2  # both folded: neither is this machine
    assert f"<strong>{KEY}</strong>" not in html and f"<strong>{GPU_NAME}" in html  # a name, not a device key
    assert GPU_NAME in h200 and "torch 2.11.0 (cu130)" in h200 and "结果与基准代码一致" in h200
    assert "基准代码已改" not in h200 and "1.3 ms" in h200 and DATE[:16].replace("T", " ") in h200
    assert "NVIDIA A100-SXM4-80GB" in blocks[a100] and "基准代码已改，结果已过期" in blocks[a100]
    assert "结果与基准代码一致" not in blocks[a100]


@pytest.mark.parametrize("fresh", [True, False], ids=["current", "stale"])
def test_a_bench_fence_tells_a_current_gpu_result_from_a_stale_one(copy, monkeypatch, fresh):
    for old in (copy / "benchmarks").glob("*.json"):
        old.unlink()
    conf = settings(copy)
    if fresh:
        record_bench(copy, GPU_NAME)
    else:  # recorded, then the benchmark file changed
        record_bench(copy, GPU_NAME)
        (copy / BENCH_TEST).write_text(BENCH_SOURCE.replace("2**24", "2**26"), encoding="utf-8")
    stored = json.loads((copy / "benchmarks" / f"{KEY}.json").read_text())["sources"][BENCH_TEST]
    assert (stored == store.source_hash(conf, BENCH_TEST)) is fresh
    monkeypatch.setattr(settings_mod, "_site", conf)
    monkeypatch.setattr(store, "RECHECK_S", 0.0)
    html = bench_fence_mod.bench_fence(f"{GROUP}\nx: size\nplot: none\nneeds: cuda", "bench", "bench", {}, None)
    blocks = _device_blocks(html)
    assert list(blocks) == [KEY]
    block = blocks[KEY]
    assert "另一台机器测得，不是构建机的结果" in block and GPU_NAME in block
    assert ("结果与基准代码一致" in block) is fresh and ("基准代码已改，结果已过期" in block) is not fresh
    assert "需要 CUDA" not in html  # results exist: shown, not "needs CUDA"


WAITING = "GPU 上待测：把 64 MiB 从 pinned 与可分页内存拷到 GPU 的耗时，和 GPU 的计算能力。"


def test_before_any_gpu_ran_it_the_claim_is_one_line_of_what_it_measures(copy, monkeypatch):
    """No sentence of holes: where it runs and its docstring, on the page, in the ledger and in the quiz;
    a page's inline value of it stays marked as not observed."""
    (copy / "evidence" / f"{KEY}.json").unlink()
    sess = _session(copy, monkeypatch)
    assert sess.outcome.status(GPU) == evidence.NEEDS_CUDA and sess.remote_statuses(GPU) == {}
    assert sess.outcome.sentence(GPU) == WAITING
    html = fences.claim_fence(GPU, "claim", "claim", {}, None)
    stmt = re.search(r'<span class="vf-stmt">(.*?)</span>(?=<span class="vf-scope)', _summary(html, GPU), re.S)
    assert stmt and _text(stmt.group(1)) == WAITING and "—" not in stmt.group(1)
    assert {r.id: r for r in sess.ledger()}[GPU].statement == WAITING
    assert sess.outcome.sentence(CPU) == "这个列表有 3 个元素。"  # a claim without a docstring: its sentence


def test_a_bench_fence_without_gpu_results_says_it_needs_cuda(copy, monkeypatch):
    for old in (copy / "benchmarks").glob("*.json"):
        old.unlink()
    monkeypatch.setattr(settings_mod, "_site", Settings.for_root(copy))
    html = bench_fence_mod.bench_fence(f"{GROUP}\nneeds: cuda", "bench", "bench", {}, None)
    assert "需要 CUDA，构建机上未运行" in html and "vf-bench-device" not in html


def test_a_value_inside_a_code_span_is_set_as_code(copy, monkeypatch):
    """`{key}` in a statement: the code span holds the value, no literal backticks around it."""
    sess = _session(copy, monkeypatch)
    html = str(fences.statement_html(CPU, "`len(x)` 是 `{n}`，`a` 和 `b`。", sess))
    assert "`" not in html and html.startswith('<code>len(x)</code> 是 <code><span class="vf-val'), html
    assert html.endswith("</span></code>，<code>a</code> 和 <code>b</code>。"), html
