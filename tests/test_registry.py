from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from tests._project import GOOD_SNIPPET, settings, write
from verify.core import registry
from verify.core.records import Machine
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


def test_an_expectation_given_twice_is_a_problem_not_the_last_one_silently(tmp_path):
    src = ('from verify.claim import claim\n@claim("a.b", question="q", statement="s", kind="measured",\n'
           '       expect={"r": {"between": [0.4, 2.5]}, "r": {"between": [0.7, 1.5]}})\ndef _(ctx):\n    pass\n')
    reg = _load(tmp_path, {"snippets/q/a.py": src})
    assert reg.claims == {}
    (problem,) = reg.problems
    assert "a.py:2" in problem.message and "['r'] given twice" in problem.message


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
    before = scan.load_registry(settings(root)).keys
    (root / "snippets/_workloads/w.py").write_text("def f():\n    return 2\n")
    after_workload = scan.load_registry(settings(root)).keys
    assert after_workload["h.x"] != before["h.x"]
    assert after_workload["h.y"] == before["h.y"]
    (root / "snippets/q/k.cpp").write_text("int main() { return 1; }\n")
    after_cpp = scan.load_registry(settings(root)).keys
    assert after_cpp["h.x"] != after_workload["h.x"]
    # a Python file beside it, loaded by its path (snippets/_sibling.py), as the string names it
    (root / "snippets/q/a.py").write_text(src.replace('SRC = "k.cpp"', 'SRC = "k.cpp"\nHELPER = "other.py"'))
    named = scan.load_registry(settings(root)).keys
    (root / "snippets/q/other.py").write_text(files["snippets/q/other.py"].replace("lambda: 1", "lambda: 2"))
    assert scan.load_registry(settings(root)).keys["h.x"] != named["h.x"]


_TWO = ('"""Two claims."""\nfrom verify.claim import claim\nN = 3\n\ndef helper():\n    return N\n\n'
        '@claim("m.a", question="q", statement="a is {a}", expect={"a": 3}, kind="perf")\n'
        'def _(ctx):\n    return {"a": helper()}\n\n'
        '@claim("m.b", question="q", statement="b", expect={"b": 1})\ndef _(ctx):\n    return {"b": 1}\n')


def test_a_key_is_the_measuring_code_not_the_sentence_or_the_expectation(tmp_path):
    root = write(tmp_path, {"snippets/q/m.py": _TWO})
    path = root / "snippets/q/m.py"

    def keys_after(text: str) -> dict[str, str]:
        path.write_text(text)
        return scan.load_registry(settings(root)).keys

    first = keys_after(_TWO)
    assert first["m.a"] != first["m.b"]
    # judging and display: the sentence, the expectation, the question, needs, comments, docstrings, blank lines
    judged = (_TWO.replace('statement="a is {a}"', 'statement="a 是 {a}"').replace('{"a": 3}', '{"a": {">=": 2}}')
              .replace('"""Two claims."""', '"""Two claims, explained."""').replace("N = 3\n", "N = 3  # three\n\n")
              .replace('question="q", statement="b"', 'question="q", needs=["mkl"], statement="b"'))
    assert keys_after(judged) == first
    # one claim's code: only that claim
    body = keys_after(_TWO.replace('return {"b": 1}', 'return {"b": 1 + 0}'))
    assert body["m.a"] == first["m.a"] and body["m.b"] != first["m.b"]
    # the kind decides how it runs (a perf claim alone): part of the key
    assert keys_after(_TWO.replace(', kind="perf")', ")"))["m.a"] != first["m.a"]
    # a helper or a constant of the file: every claim that may use it
    shared = keys_after(_TWO.replace("N = 3", "N = 4"))
    assert shared["m.a"] != first["m.a"] and shared["m.b"] != first["m.b"]


def test_the_claim_api_counts_by_its_functions_other_modules_whole(tmp_path):
    lib = 'KINDS = ("a",)\n\ndef compare(x):\n    """Doc."""\n    return x\n'
    root = write(tmp_path, {"verify/__init__.py": "", "verify/claim.py": lib, "verify/timing.py": lib,
                            "snippets/q/t.py": 'from verify.claim import compare\nfrom verify import timing\n'
                            '@claim("t.x", question="q", statement="s", expect={"x": 1})\ndef _(ctx):\n'
                            '    return {"x": compare(1)}\n'})

    def key_after(rel: str, text: str) -> str:
        (root / rel).write_text(text)
        return scan.load_registry(settings(root)).keys["t.x"]

    first = key_after("verify/claim.py", lib)
    declared = lib.replace('("a",)', '("a", "b")').replace("Doc.", "Documented.")
    assert key_after("verify/claim.py", declared) == first  # the claim API's vocabulary and docs
    assert key_after("verify/claim.py", lib.replace("return x", "return x * 1")) != first
    key_after("verify/claim.py", lib)
    assert key_after("verify/timing.py", lib.replace("Doc.", "Documented.")) == first
    assert key_after("verify/timing.py", declared) != first  # a constant of a measuring module counts


def _spec(**kw) -> registry.ClaimSpec:
    return registry.ClaimSpec(id="x.y", question="q", statement="s", kind="fact", snippet="s.py", line=1, **kw)


def test_needs_are_checked_against_the_machine(monkeypatch):
    from verify.core import needs
    from verify.running import engine

    from verify import toolchain

    cpu = Machine(device="cpu", compilers={"g++": True}, cpu_count=1, torch="2.13.0",
                  toolchain={"triton": toolchain.PINS["triton"], "numba": "0.60.0"})
    assert engine.unmet_need(_spec(needs=("cuda",)), cpu) == "needs CUDA; no GPU on this machine"
    assert engine.unmet_need(_spec(needs=("triton",)), cpu) is None
    # the pinned tool, not any version of it, and each missing wheel named
    assert engine.unmet_need(_spec(needs=("numba",)), cpu).startswith(
        f"needs numba: numba=={toolchain.PINS['numba']} (found 0.60.0), llvmlite=={toolchain.PINS['llvmlite']} in ")
    assert "nvidia-cuda-nvcc==" in engine.unmet_need(_spec(needs=("nvcc",)), cpu)
    assert engine.unmet_need(_spec(needs=("multicore",)), cpu) == "needs at least two CPU cores"
    assert engine.unmet_need(_spec(needs=("g++",), min_torch="2.14"), cpu) == "needs torch >= 2.14; this is 2.13.0"
    monkeypatch.setattr(needs, "_libc", lambda: "")
    assert "needs glibc's malloc" in engine.unmet_need(_spec(needs=("glibc",)), cpu)
    monkeypatch.setattr(needs, "_libc", lambda: "glibc")
    assert engine.unmet_need(_spec(needs=("glibc", "g++")), cpu) is None
    assert "needs a torch built with MKL" in engine.unmet_need(_spec(needs=("mkl",)), cpu)
    assert engine.unmet_need(_spec(needs=("mkl",)), replace(cpu, mkl=True)) is None


def test_a_command_makes_the_registry_once_while_its_sources_are_unchanged(tmp_path, monkeypatch):
    made: list[int] = []
    load = registry.load
    monkeypatch.setattr(registry, "load", lambda facts, *a: made.append(1) or load(facts, *a))
    root = write(tmp_path, {"snippets/q/m.py": _TWO})
    first = scan.load_registry(settings(root))
    assert scan.load_registry(settings(root)) is first and len(made) == 1  # filters, progress, engine: one registry
    (root / "snippets/q/m.py").write_text(_TWO.replace("N = 3", "N = 4"))  # the same size, edited
    edited = scan.load_registry(settings(root))
    assert edited is not first and edited.keys["m.a"] != first.keys["m.a"] and len(made) == 2
    (root / "snippets/q/n.py").write_text(_TWO.replace('"m.', '"n.'))  # a new snippet file
    assert set(scan.load_registry(settings(root)).claims) == {"m.a", "m.b", "n.a", "n.b"} and len(made) == 3
    (root / "snippets/q/n.py").unlink()
    assert set(scan.load_registry(settings(root)).claims) == {"m.a", "m.b"}
