from __future__ import annotations

from pathlib import Path

from tests._project import GOOD_SNIPPET, settings, write
from verify.core import registry
from verify.storage import scan


def _load(tmp_path: Path, files: dict[str, str]) -> registry.Registry:
    return scan.load_registry(settings(write(tmp_path, files)))


def test_claims_are_read_from_source_with_module_constants(tmp_path):
    reg = _load(tmp_path, {"snippets/tiny/basic.py": GOOD_SNIPPET})
    assert sorted(reg.claims) == ["tiny.error", "tiny.stride"]
    stride = reg.claims["tiny.stride"]
    assert stride.question == "tiny" and stride.kind == "fact" and stride.expect == {"stride": [0, 1]}
    error = reg.claims["tiny.error"]
    assert error.kind == "error" and error.raises == ("RuntimeError", "view size is not compatible")
    assert reg.problems == []


def test_arithmetic_in_expectations_is_evaluated(tmp_path):
    src = ('from verify.claim import claim\n@claim("a.b", question="q", statement="s", expect={"v": [[1, 2]] * 2, '
           '"n": 4 * 1024})\ndef _(ctx):\n    pass\n')
    reg = _load(tmp_path, {"snippets/q/a.py": src})
    assert reg.claims["a.b"].expect == {"v": [[1, 2], [1, 2]], "n": 4096}


def test_problems_name_the_file_line_and_field(tmp_path):
    src = ('from verify.claim import claim\n'
           '@claim("a.one", question="q", statement="s", expect={"x": 1}, colour="red")\ndef _(ctx):\n    pass\n'
           '@claim("a.two", question="q", statement="s", expect={"x": some_call()})\ndef _(ctx):\n    pass\n'
           '@claim("a.three", question="q", statement="s")\ndef _(ctx):\n    pass\n'
           '@claim("a.four", question="q", statement="s", expect={"x": 1}, needs=["tpu"])\ndef _(ctx):\n    pass\n')
    reg = _load(tmp_path, {"snippets/q/bad.py": src})
    messages = [p.message for p in reg.problems]
    assert any("bad.py:2" in m and "unknown field" in m and "colour" in m for m in messages)
    assert any("bad.py:5" in m and "literal" in m for m in messages)
    assert any("a.three" in m and "needs expect" in m for m in messages)
    assert any("a.four" in m and "tpu" in m for m in messages)
    assert reg.claims == {}


def test_duplicate_ids_are_reported_with_both_places(tmp_path):
    src = 'from verify.claim import claim\n@claim("d.x", question="q", statement="s", expect={"x": 1})\ndef _(c):\n    pass\n'
    reg = _load(tmp_path, {"snippets/q/a.py": src, "snippets/q/b.py": src})
    (problem,) = reg.problems
    assert problem.claim == "d.x" and "duplicate" in problem.message
    assert "snippets/q/a.py:2" in problem.message and "snippets/q/b.py:2" in problem.message


def test_syntax_error_is_a_problem_not_a_crash(tmp_path):
    reg = _load(tmp_path, {"snippets/q/a.py": "def broken(:\n"})
    assert "syntax error" in reg.problems[0].message and reg.problems[0].where == "snippets/q/a.py"


def test_hash_covers_imported_workloads_and_named_files(tmp_path):
    src = ('from snippets._workloads.w import f\nfrom verify.claim import claim\nSRC = "k.cpp"\n'
           '@claim("h.x", question="q", statement="s", expect={"x": 1})\ndef _(ctx):\n    return {"x": f()}\n')
    files = {"snippets/q/a.py": src, "snippets/_workloads/__init__.py": "", "snippets/_workloads/w.py":
             "def f():\n    return 1\n", "snippets/q/k.cpp": "int main() {}\n",
             "snippets/q/other.py": src.replace("h.x", "h.y").replace("from snippets._workloads.w import f\n",
                                                                     "f = lambda: 1\n").replace('"k.cpp"', '"z"')}
    root = write(tmp_path, files)
    before = scan.load_registry(settings(root)).files
    (root / "snippets/_workloads/w.py").write_text("def f():\n    return 2\n")
    after_workload = scan.load_registry(settings(root)).files
    assert after_workload["snippets/q/a.py"] != before["snippets/q/a.py"]
    assert after_workload["snippets/q/other.py"] == before["snippets/q/other.py"]
    (root / "snippets/q/k.cpp").write_text("int main() { return 1; }\n")
    assert scan.load_registry(settings(root)).files["snippets/q/a.py"] != after_workload["snippets/q/a.py"]


def _spec(**kw) -> registry.ClaimSpec:
    return registry.ClaimSpec(id="x.y", question="q", statement="s", kind="fact", snippet="s.py", line=1, **kw)


def test_needs_are_checked_against_the_machine(monkeypatch):
    from verify.running import engine

    cpu = {"device": "cpu", "compilers": {"g++": True, "nvcc": False}, "cpu_count": 1, "torch": "2.13.0"}
    assert engine.unmet_need(_spec(needs=("cuda",)), cpu) == "needs CUDA; no GPU on this machine"
    assert engine.unmet_need(_spec(needs=("nvcc",)), cpu) == "needs nvcc, which is not on PATH"
    assert engine.unmet_need(_spec(needs=("multicore",)), cpu) == "needs at least two CPU cores"
    assert engine.unmet_need(_spec(needs=("g++",), min_torch="2.14"), cpu) == "needs torch >= 2.14; this is 2.13.0"
    monkeypatch.setattr(engine, "_libc", lambda: "")
    assert "needs glibc's malloc" in engine.unmet_need(_spec(needs=("glibc",)), cpu)
    monkeypatch.setattr(engine, "_libc", lambda: "glibc")
    assert engine.unmet_need(_spec(needs=("glibc", "g++")), cpu) is None
