"""The library runs no snippet code: a site build and a quiz start read snippets/ as source and data only.

Claims run in the runner's worker processes; what they observed reaches the site and the quiz
through the ledger. The spec table is a data file (``snippets/_gpu/specs.json``) and the 计算题 are
claims' observations (``calc_items``), so the process that builds pages or starts the quiz never
executes a file under ``snippets/``: ``tests/_snippet_guard.py`` watches it with an audit hook.
"""

from __future__ import annotations

import ast
import json
import subprocess
import sys
import textwrap
from pathlib import Path

from tests._project import REPO_SETTINGS as SETTINGS

ROOT = SETTINGS.root

#: where verify/ loads code by name or path, and why none of it is a snippet in the build or the quiz
DYNAMIC_LOADS = {
    "verify/running/worker.py": "the runner's worker process: the one place a claim's snippet runs",
    "verify/running/gpuplan.py": "torch's own submodules, named by the CUDA claims' torch.… names",
    "verify/settings.py": "the !!python/name: tags of mkdocs.yml (the build's hooks and fences)",
    # `verify judge` (never a site build or a quiz start): a 手撕 problem's own reference, cases and mutants in the
    # judge's process, and the candidate's file in its guarded child
    "verify/judge/loading.py": "a 手撕 problem's reference, case generator and mutants, by path, in the judge",
    "verify/judge/child.py": "the candidate's file and the torch modules its forbidden calls name, in the judge's child",
}
_LOADERS = {"import_module", "spec_from_file_location", "exec_module", "run_module", "run_path", "__import__",
            "exec", "eval", "SourceFileLoader", "load_module"}


def guarded(report: Path, *args: str, timeout: float = 300) -> list[str]:
    """Run ``python -m tests._snippet_guard`` in the checkout; what of snippets/ that process ran."""
    proc = subprocess.run([sys.executable, "-m", "tests._snippet_guard", str(report), *args], cwd=ROOT,
                          capture_output=True, text=True, timeout=timeout)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    return json.loads(report.read_text(encoding="utf-8"))


def test_the_guard_sees_snippet_code_run(tmp_path):
    """The watch works: importing the spec table's helper, and executing a calc.py loaded by path, are seen."""
    code = textwrap.dedent("""
        import importlib.util, sys
        sys.path.insert(0, ".")
        import snippets._gpu.specs
        spec = importlib.util.spec_from_file_location("calc", "snippets/kv-cache/calc.py")
        spec.loader.exec_module(importlib.util.module_from_spec(spec))
    """)
    ran = guarded(tmp_path / "report.json", "-c", code)
    assert "imported snippets._gpu.specs" in ran and "executed snippets/kv-cache/calc.py" in ran, ran


def test_starting_the_quiz_runs_no_snippet_code(tmp_path):
    """`verify quiz stats` loads what every terminal round starts from: the outline, the bank with its
    判断题, 计算题 and drills (from a ledger made of the cache), and the progress store."""
    ran = guarded(tmp_path / "report.json", "verify.cli.main", "quiz", "stats", "--db", str(tmp_path / "progress.db"))
    assert ran == []


def test_what_a_site_build_renders_runs_no_snippet_code(tmp_path):
    """The build's fences and files from a ledger (nothing run): the GPU spec table, the quiz bank with its
    计算题, quiz.json and the deck. (tests/test_site_real.py watches a whole strict build the same way.)"""
    code = textwrap.dedent(f"""
        from pathlib import Path
        import verify.build, verify.hooks  # every fence and hook the site's mkdocs.yml names
        from verify import settings as settings_mod
        from verify.running import engine
        from verify.site import gpuspecs, quiz
        settings = settings_mod.for_site()
        outcome = engine.verify(settings, run=False)
        html = gpuspecs.gpu_specs_fence("all", "gpu-specs", "gpu-specs", {{}}, None)
        assert "H100 SXM" in html and "fence" not in html, html[:500]
        bank = quiz.site_bank(settings, settings.docs_dir, outcome)
        assert any(o.kind == "judge" for o in bank.objective)
        quiz.write(settings, settings.docs_dir, Path({str(tmp_path)!r}), outcome)
    """)
    assert guarded(tmp_path / "report.json", "-c", code) == []
    assert (tmp_path / "quiz.json").is_file()


def _dynamic_loads(path: Path) -> list[str]:
    """``file:line name`` of each call in ``path`` that loads code by name or path."""
    out = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Call):
            f = node.func
            name = f.attr if isinstance(f, ast.Attribute) else f.id if isinstance(f, ast.Name) else ""
            if name in _LOADERS:
                out.append(f"{path.relative_to(ROOT).as_posix()}:{node.lineno} {name}")
    return out


def test_verify_loads_code_dynamically_only_where_it_says_why():
    """A new ``importlib.import_module("snippets…")``, ``exec`` or load by path in verify/ fails here
    (import-linter sees only static imports: its contract forbids ``import snippets`` in verify/)."""
    found = [hit for path in sorted((ROOT / "verify").rglob("*.py")) for hit in _dynamic_loads(path)]
    unexpected = [hit for hit in found if hit.split(":")[0] not in DYNAMIC_LOADS]
    assert not unexpected, "verify/ loads code where the library must not run snippets:\n" + "\n".join(unexpected)
    for path in DYNAMIC_LOADS:
        assert any(hit.startswith(path + ":") for hit in found), f"{path} no longer loads code: drop it from DYNAMIC_LOADS"
    worker = [hit for hit in found if hit.startswith("verify/running/worker.py:")]
    assert all(hit.endswith(("spec_from_file_location", "exec_module")) for hit in worker), worker
