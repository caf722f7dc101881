"""Two benchmark runs storing into one device's results file lose nothing (issue 34: locks everywhere state is written).

``verify bench run`` reads the results file when it starts, runs each benchmark file for minutes, and stores
after each one. A second run that stored its own files meanwhile must not be overwritten by the first's
older copy: the store re-reads the file under the lock and merges into what is there now.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from types import SimpleNamespace

from tests._project import settings, tiny_project
from verify.bench import run as bench_run
from verify.bench import store
from verify.bench.results import Results
from verify.storage.fs import atomic_write_json


def _results(file: str) -> dict:
    median = 1e-3
    entry = {"fullname": f"{file}::test_x[1]", "name": "test_x[1]", "group": "g", "param": "1", "params": {"n": 1},
             "options": {}, "stats": {"median": median, "min": median, "max": median, "mean": median, "rounds": 5,
                                      "iterations": 1, "q1": median, "q3": median, "iqr": 0.0, "stddev": 0.0},
             "extra_info": {"n": 1, "median_s": median, "q1_s": median, "q3_s": median, "spread": 0.0}}
    return {"machine_info": {}, "commit_info": {}, "benchmarks": [entry], "datetime": "2026-12-06T12:00:00+00:00",
            "version": "5.1.0", "sources": {file: "k-" + file}}


def test_a_run_keeps_what_another_run_stored_while_it_measured(tmp_path, monkeypatch):
    conf = settings(tiny_project(tmp_path / "p"))
    path = conf.bench_dir / "dev.json"
    monkeypatch.setattr(bench_run, "freshness", lambda _settings, _old: {"tests/test_bench_a.py": "missing"})

    def measure(cmd, **_kwargs):
        Path(cmd[cmd.index("--benchmark-json") + 1]).write_text(json.dumps(_results("tests/test_bench_a.py")))
        # meanwhile another `verify bench run` on this machine stores its own file
        other = store.merge(store.load(path), Results.from_json(_results("tests/test_bench_b.py")))
        atomic_write_json(path, other.to_json())
        return SimpleNamespace(returncode=0)

    monkeypatch.setattr(subprocess, "run", measure)
    _path, rc, ran = bench_run.run(conf, out=path, echo=lambda _line: None)
    assert rc == 0 and ran == ["tests/test_bench_a.py"]
    stored = store.load(path)
    assert stored is not None
    assert {b.file for b in stored.benchmarks} == {"tests/test_bench_a.py", "tests/test_bench_b.py"}
    assert set(stored.sources or {}) == {"tests/test_bench_a.py", "tests/test_bench_b.py"}
