"""A GPU loan, rehearsed without a GPU: the deadline, records written as they come, no memory
limit on CUDA, the preflight's stop on a machine without one, the plan, and the dry run."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests._project import REPO, cold_cache, env_for, tiny_project, write
from verify.bench import run as bench_run
from verify.running import gpuplan, record, runner
from verify.settings import Settings

HEADER = "import os, time\nfrom verify.claim import claim\nQ = 'g'\n"


def _claim(cid: str, body: str, statement: str = "s", expect: str = '{"x": 1}', needs: str = "[]") -> str:
    return (f"@claim({cid!r}, question=Q, statement={statement!r}, expect={expect}, needs={needs})\n"
            "def _(ctx):\n" + "".join(f"    {line}\n" for line in body.splitlines()))


def _settings(root: Path, tmp_path: Path) -> Settings:
    return Settings.for_root(root, dict(env_for(root), VERIFY_CACHE_DIR=str(cold_cache(tmp_path / "cache"))))


def test_the_deadline_stops_the_run_and_what_finished_is_already_written(tmp_path):
    root = write(tmp_path / "p", {"mkdocs.yml": "site_name: t\n",
                                  "snippets/g/a.py": HEADER + _claim("g.fast", "return {'x': 1}")
                                  + _claim("g.slow", "time.sleep(60)\nreturn {'x': 1}"),
                                  "snippets/g/b.py": HEADER + _claim("g.later", "return {'x': 1}")})
    settings = _settings(root, tmp_path)
    start = time.monotonic()
    path, out = record.record(settings, jobs=1, deadline=start + 8, also=tmp_path / "out", echo=lambda line: None)
    assert time.monotonic() - start < 30  # not the 60 s the slow claim would take
    stored = json.loads(path.read_text())["claims"]
    assert sorted(stored) == ["g.fast"] and stored["g.fast"]["outcome"] == "pass"
    assert out.left == ["g.later", "g.slow"] and out.ran == ["g.fast"] and not out.failures
    assert (tmp_path / "out" / path.name).read_bytes() == path.read_bytes()  # the copy to bring back
    assert "not run before the deadline: 2 (g.later, g.slow)" in record.summary(path, out, 8.0)


def test_each_record_is_written_the_moment_it_exists(tmp_path):
    root = write(tmp_path / "p", {"mkdocs.yml": "site_name: t\n",
                                  "snippets/g/a.py": HEADER + _claim("g.one", "return {'x': 1}")
                                  + _claim("g.two", "return {'x': 2}")})
    settings = _settings(root, tmp_path)
    on_disk: list[list[str]] = []

    def echo(line: str) -> None:
        files = list(settings.evidence_dir.glob("*.json"))
        on_disk.append(sorted(json.loads(files[0].read_text())["claims"]) if files else [])

    _, out = record.record(settings, jobs=1, echo=echo)
    assert [c for c, r in out.local.items() if r.bad] == ["g.two"]  # a failure does not stop it
    assert ["g.one"] in on_disk and ["g.one", "g.two"] in on_disk  # after the first claim, then after both


def test_a_worker_on_a_gpu_has_no_memory_limit(tmp_path):
    settings = Settings.for_root(tmp_path, {"VERIFY_WORKER_MEMORY": "2G"})
    assert runner.WorkerEnv(settings, "cpu").memory == 2 * 2**30
    assert runner.WorkerEnv(settings, "cuda").memory == 0


def test_a_benchmark_file_does_not_start_after_the_deadline(tmp_path):
    said: list[str] = []
    _, rc, ran = bench_run.run(Settings.for_root(REPO), force=True, files=["test_bench_tensors.py"],
                               out=tmp_path / "b.json", echo=said.append, deadline=time.monotonic() - 1)
    assert (rc, ran) == (1, []) and said == ["not run (the deadline came): tests/test_bench_tensors.py"]
    assert not (tmp_path / "b.json").exists()


def test_the_loan_stops_after_its_preflight_on_a_machine_without_a_gpu(tmp_path):
    before = sorted(p.name for p in (REPO / "evidence").iterdir())
    proc = subprocess.run([sys.executable, "-m", "verify.loan", "--out", str(tmp_path / "out")], cwd=REPO,
                          env=env_for(REPO), capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert [p.name for p in (tmp_path / "out").iterdir()] == ["preflight.txt"]
    report = (tmp_path / "out" / "preflight.txt").read_text()
    assert "torch.cuda.is_available() is False" in report and "tool nvidia-smi:" in report
    assert "nothing recorded" in proc.stdout
    assert sorted(p.name for p in (REPO / "evidence").iterdir()) == before


def test_the_loan_imports_nothing_the_gpu_image_lacks():
    """The GPU image has torch, Triton, pytest and pytest-benchmark, not the site's packages."""
    code = ("import sys; import verify.loan, verify.running.record, verify.bench.run, verify.bench.plugin; "
            "print(' '.join(sorted({m.split('.')[0] for m in sys.modules})))")
    out = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, check=True).stdout
    lacking = {"mkdocs", "material", "pymdownx", "pexpect", "playwright", "fsrs", "genanki", "jieba", "zensical",
               "markdown", "markdown_it", "matplotlib", "typer", "rich", "jinja2", "yaml"}
    assert lacking.isdisjoint(out.split()), lacking & set(out.split())


def test_the_plan_fits_the_budget_and_lists_every_cuda_claim():
    from verify.storage import scan  # noqa: PLC0415

    reg = scan.load_registry(Settings.for_root(REPO))
    p = gpuplan.plan(reg)
    listed = [c.id for items in p.files.values() for c, _ in items]
    assert sorted(listed) == sorted(c for c, s in reg.claims.items() if "cuda" in s.needs)
    assert p.claims_s <= gpuplan.BUDGET_S * gpuplan.CLAIMS_SHARE and p.total_s <= gpuplan.BUDGET_S
    text = gpuplan.describe(p)
    assert f"total ~{p.total_s:.0f} s of a {gpuplan.BUDGET_S:.0f} s budget" in text


REHEARSED = (HEADER + "import torch\n"
             + _claim("g.cpu-ok", "x = torch.ones(3, device=ctx.device)\nreturn {'n': int(x.sum())}",
                      statement="{n} 个", expect='{"n": 3}', needs='["cuda"]')
             + _claim("g.gpu-only", "torch.zeros(1, device='cuda')\nreturn {'x': 1}", needs='["cuda"]')
             + _claim("g.typo", "torch.cuda.synchronise()\nreturn {'x': 1}", needs='["cuda"]')
             + _claim("g.no-key", "return {'y': 1}", statement="值 {x}", needs='["cuda"]')
             + _claim("g.bug", "return {'x': 1 / 0}", needs='["cuda"]'))


def test_the_rehearsal_tells_a_missing_gpu_from_a_bug(tmp_path):
    root = write(tmp_path / "p", {"mkdocs.yml": "site_name: t\n", "docs/index.md": "# t\n",
                                  "snippets/g/a.py": REHEARSED})
    result = gpuplan.rehearse(_settings(root, tmp_path), jobs=1)
    assert result.ran == ["g.cpu-ok"]
    assert list(result.no_gpu) == ["g.gpu-only"] and "Torch not compiled with CUDA" in result.no_gpu["g.gpu-only"]
    assert sorted(result.bugs) == ["g.bug", "g.no-key", "g.typo"]
    assert "torch.cuda.synchronise" in result.bugs["g.typo"]
    assert "returned no x" in result.bugs["g.no-key"]
    assert "ZeroDivisionError" in result.bugs["g.bug"]


@pytest.mark.slow
def test_make_gpu_dry_run_passes_here_with_a_plan_inside_the_budget():
    proc = subprocess.run([sys.executable, "-m", "verify.running.gpuplan"], cwd=REPO, env=env_for(REPO),
                          capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    total = float(proc.stdout.split("total ~")[1].split(" s")[0])
    assert total <= gpuplan.BUDGET_S
    assert "0 bug(s)" in proc.stdout


def test_a_cuda_claims_file_loads_on_the_gpu_image_without_the_gpu_toolchain():
    """The GPU machine has torch, not the toolchain folder: a file with a CUDA claim imports none of
    the helpers that need Triton, nvcc or numba (the spec table and the occupancy arithmetic are plain Python)."""
    import ast

    from verify.core import registry
    from verify.storage import scan

    reg = scan.load_registry(Settings.discover())
    plain = {"snippets/_gpu/__init__.py", "snippets/_gpu/specs.py", "snippets/_gpu/note.py", "snippets/_gpu/occupancy.py"}

    def imports(rel: str, seen: set[str]) -> set[str]:  # project modules a file loads, transitively
        for path in registry._local_imports(ast.parse((REPO / rel).read_text()), REPO):
            dep = path.relative_to(REPO).as_posix()
            if dep not in seen:
                seen.add(dep)
                imports(dep, seen)
        return seen

    cuda_files = {spec.snippet for spec in reg.claims.values() if "cuda" in spec.needs}
    assert cuda_files
    for rel in sorted(cuda_files):
        tool_helpers = {m for m in imports(rel, set()) if m.startswith("snippets/_gpu/")} - plain
        assert not tool_helpers, f"{rel} has a CUDA claim and imports {sorted(tool_helpers)}: put the CUDA claim in a file of its own"
        tool_claims = [s.id for s in reg.claims.values() if s.snippet == rel and set(s.needs) & {"triton", "nvcc", "numba"}]
        assert not tool_claims, f"{rel}: CUDA claims and toolchain claims {tool_claims} share a file"


@pytest.mark.parametrize("out, words", [("evidence/gpu.json", "is inside evidence/"),
                                        ("evidence", "is inside evidence/"),
                                        ("loan.json", "names a file")])
def test_the_loan_refuses_an_out_folder_that_would_break_evidence(tmp_path, out, words):
    """``--out evidence/gpu.json`` once left a folder there, after which merge and status failed."""
    root = tiny_project(tmp_path / "p")
    proc = subprocess.run([sys.executable, "-m", "verify.loan", "--out", out, "--root", str(root)], cwd=root,
                          env=env_for(root), capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2 and words in proc.stderr, proc.stdout + proc.stderr
    assert not (root / "evidence" / "gpu.json").exists() and not (root / "loan.json").exists()
