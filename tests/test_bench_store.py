"""Unit tests of benchmark storage: merge, freshness by source hash, compare and its exit codes.

Ordinary fast tests (not marked ``bench``): they build small result files in the shape that
pytest-benchmark's ``--benchmark-json`` writes, in a temporary project.
"""

from __future__ import annotations

import json
import statistics
from pathlib import Path

import pytest
from typer.testing import CliRunner

from tests._project import settings
from verify.bench import compare as cmp
from verify.bench import store
from verify.bench.results import Results
from verify.cli.bench import bench_app
from verify.core import registry
from verify.storage import scan

MARKED = "import pytest\n\npytestmark = pytest.mark.bench\n\n\ndef test_x(benchmark):\n    benchmark(lambda: {body})\n"


def result(fullname: str, data: list[float], group: str = "g", inner: int | None = None, **extra) -> dict:
    """One benchmark entry as pytest-benchmark writes it (``extra_info`` as the plugin fills it)."""
    data = sorted(data)
    q = statistics.quantiles(data, n=4)
    med = statistics.median(data)
    extra_info = dict(extra)
    if inner is not None:
        extra_info.update(inner=inner, median_s=med / inner, q1_s=q[0] / inner, q3_s=q[2] / inner)
    name = fullname.split("::")[1]
    return {
        "group": group, "name": name, "fullname": fullname,
        "params": None, "param": None, "extra_info": extra_info,
        "options": {"disable_gc": False, "timer": "perf_counter", "min_rounds": 5, "max_time": 1.0,
                    "min_time": 5e-06, "warmup": False},
        "stats": {"min": data[0], "max": data[-1], "mean": statistics.fmean(data),
                  "stddev": statistics.stdev(data), "rounds": len(data), "median": med, "iqr": q[2] - q[0],
                  "q1": q[0], "q3": q[2], "iqr_outliers": 0, "stddev_outliers": 0, "outliers": "0;0",
                  "ld15iqr": data[0], "hd15iqr": data[-1], "ops": 1 / statistics.fmean(data),
                  "total": sum(data), "data": data, "iterations": 1},
    }


def run_json(benchmarks: list[dict], sources: dict[str, str], when: str = "2025-01-01T00:00:00.000000",
             cpu: str = "Test CPU") -> dict:
    """A whole ``--benchmark-json`` file, with the ``sources`` the plugin adds."""
    return {
        "machine_info": {"node": "n", "processor": "x86_64", "machine": "x86_64", "python_implementation": "CPython",
                         "python_version": "3.11.0", "system": "Linux", "release": "6", "cpu_model": cpu,
                         "cpu_count": 2, "threads": 2, "torch": "2.13.0", "torch_build": "cpu", "device": "cpu",
                         "gpu_name": None, "limits": {"copy_GBps": 10.0}},
        "commit_info": {"id": "abc123", "time": when, "author_time": when, "dirty": False, "project": "p",
                        "branch": "main"},
        "benchmarks": benchmarks,
        "datetime": when,
        "version": "5.1.0",
        "sources": sources,
    }


def results(benchmarks: list[dict], sources: dict[str, str], **kw) -> Results:
    """:func:`run_json` as the store reads it."""
    return Results.from_json(run_json(benchmarks, sources, **kw))


def write(path: Path, data: dict) -> Path:
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


A, B = "tests/test_bench_a.py", "tests/test_bench_b.py"


# --- merge ------------------------------------------------------------------------------------

def test_merge_replaces_the_files_that_ran_and_keeps_the_rest():
    old = run_json([result(f"{A}::test_x", [1.0, 1.1, 1.2]), result(f"{B}::test_y", [2.0, 2.1, 2.2])],
                   {A: "a1", B: "b1"}, when="2025-01-01T00:00:00")
    old = store.merge(None, Results.from_json(old))
    new = run_json([result(f"{A}::test_x", [3.0, 3.1, 3.2]), result(f"{A}::test_z", [4.0, 4.1, 4.2])],
                   {A: "a2"}, when="2025-02-02T00:00:00", cpu="Other CPU")
    merged = store.merge(old, Results.from_json(new)).to_json()
    by_name = {b["fullname"]: b["stats"]["median"] for b in merged["benchmarks"]}
    assert by_name == {f"{A}::test_x": 3.1, f"{A}::test_z": 4.1, f"{B}::test_y": 2.1}
    assert merged["sources"] == {A: "a2", B: "b1"}
    assert merged["runs"][A]["datetime"] == "2025-02-02T00:00:00"
    assert merged["runs"][A]["machine_info"]["cpu_model"] == "Other CPU"
    assert merged["runs"][B]["datetime"] == "2025-01-01T00:00:00"  # B's provenance is still its own run
    assert merged["format"] == store.FORMAT


def test_merge_into_nothing_and_a_file_that_lost_a_benchmark():
    first = store.merge(None, results([result(f"{A}::test_x", [1, 2, 3]), result(f"{A}::test_old", [1, 2, 3])],
                                      {A: "a1"}))
    again = store.merge(first, results([result(f"{A}::test_x", [1, 2, 3])], {A: "a2"}))
    assert [b.name for b in again.benchmarks] == ["test_x"]  # a removed benchmark does not linger


def test_load_rejects_what_is_not_a_result_file(tmp_path):
    assert store.load(tmp_path / "absent.json") is None
    assert store.load(write(tmp_path / "other.json", {"claims": []})) is None
    (tmp_path / "broken.json").write_text("{not json", encoding="utf-8")
    assert store.load(tmp_path / "broken.json") is None
    assert store.load(write(tmp_path / "ok.json", run_json([], {}))).benchmarks == ()


# --- freshness --------------------------------------------------------------------------------

@pytest.fixture
def project(tmp_path, monkeypatch):
    monkeypatch.setattr(store, "RECHECK_S", 0.0)  # these edits come within moments of each other
    tests = tmp_path / "tests"
    tests.mkdir()
    (tests / "test_bench_a.py").write_text(MARKED.format(body=1), encoding="utf-8")
    (tests / "test_bench_b.py").write_text(MARKED.format(body=2), encoding="utf-8")
    (tests / "test_bench_unit.py").write_text("def test_plain():\n    assert True\n", encoding="utf-8")
    return tmp_path


def test_only_marked_files_are_benchmarks(project):
    assert store.bench_files(project) == [A, B]


def test_freshness_current_stale_missing(project):
    hashes = store.current_hashes(settings(project))
    assert set(hashes) == {A, B}
    data = results([], {A: hashes[A], B: "0000"})
    assert store.freshness(settings(project), data) == {A: "current", B: "stale"}
    assert store.freshness(settings(project), None) == {A: "missing", B: "missing"}
    assert store.freshness(settings(project), results([], {A: hashes[A]})) == {A: "current", B: "missing"}


def test_editing_a_benchmark_or_its_workload_makes_it_stale(project):
    data = results([], store.current_hashes(settings(project)))
    (project / "tests" / "test_bench_a.py").write_text(MARKED.format(body=10), encoding="utf-8")
    assert store.freshness(settings(project), data) == {A: "stale", B: "current"}
    # A workload module it imports counts too.
    (project / "snippets").mkdir()
    (project / "snippets" / "__init__.py").write_text("", encoding="utf-8")
    (project / "snippets" / "work.py").write_text("N = 1\n", encoding="utf-8")
    (project / "tests" / "test_bench_b.py").write_text("from snippets import work\n" + MARKED.format(body=2),
                                                       encoding="utf-8")
    data = results([], store.current_hashes(settings(project)))
    (project / "snippets" / "work.py").write_text("N = 2\n", encoding="utf-8")
    assert store.freshness(settings(project), data) == {A: "current", B: "stale"}


def test_a_failed_run_stays_stale(project):
    data = results([], {A: "failed", B: store.current_hashes(settings(project))[B]})  # what run() stores after a failure
    assert store.freshness(settings(project), data)[A] == "stale"


# --- compare ----------------------------------------------------------------------------------

def pair(ratio: float, threshold_names=("x",)) -> tuple[dict, dict]:
    base = [result(f"{A}::test_{n}", [1e-3, 1.1e-3, 1.2e-3], inner=10) for n in threshold_names]
    cand = [result(f"{A}::test_{n}", [1e-3 * ratio, 1.1e-3 * ratio, 1.2e-3 * ratio], inner=10) for n in threshold_names]
    return run_json(base, {A: "h"}), run_json(cand, {A: "h"})


@pytest.mark.parametrize(("ratio", "verdict"), [(1.05, "same"), (1.2, "regressed"), (0.8, "improved"),
                                                (1 / 1.05, "same")])
def test_compare_verdicts_at_a_ten_percent_threshold(ratio, verdict):
    a, b = pair(ratio)
    (row,) = cmp.compare(Results.from_json(a), Results.from_json(b), threshold=0.1)
    assert row.verdict == verdict
    assert row.ratio == pytest.approx(ratio)
    assert row.a_s == pytest.approx(1.1e-4)  # per call: the round median over inner


def test_compare_threshold_moves_the_line():
    a, b = (Results.from_json(x) for x in pair(1.2))
    assert cmp.compare(a, b, threshold=0.25)[0].verdict == "same"
    assert cmp.compare(a, b, threshold=0.15)[0].verdict == "regressed"


def test_compare_reads_stats_when_extra_info_has_no_median():
    a = results([result(f"{A}::test_x", [1.0, 2.0, 3.0])], {})
    b = results([result(f"{A}::test_x", [2.0, 4.0, 6.0]), result(f"{A}::test_only_b", [1.0, 1.0, 1.0])], {})
    (row,) = cmp.compare(a, b)  # only benchmarks present in both
    assert (row.a_s, row.b_s, row.verdict) == (2.0, 4.0, "regressed")


@pytest.mark.parametrize(("ratio", "code"), [(1.5, 1), (1.02, 0), (0.5, 0)])
def test_compare_command_exit_status(tmp_path, ratio, code):
    a, b = pair(ratio, ("x", "y"))
    pa, pb = write(tmp_path / "a.json", a), write(tmp_path / "b.json", b)
    out = CliRunner().invoke(bench_app, ["compare", str(pa), str(pb), "--threshold", "0.1"])
    assert out.exit_code == code, out.output
    assert "2 compared" in out.output


def test_compare_command_with_nothing_in_common_or_no_file(tmp_path):
    a = run_json([result(f"{A}::test_x", [1.0, 1.0, 1.0])], {})
    b = run_json([result(f"{B}::test_y", [1.0, 1.0, 1.0])], {})
    pa, pb = write(tmp_path / "a.json", a), write(tmp_path / "b.json", b)
    assert CliRunner().invoke(bench_app, ["compare", str(pa), str(pb)]).exit_code == 2
    missing = CliRunner().invoke(bench_app, ["compare", str(pa), str(tmp_path / "none.json")])
    assert missing.exit_code != 0 and "no benchmark results" in missing.output


def test_compare_command_group_filter(tmp_path):
    a = run_json([result(f"{A}::test_x", [1e-3] * 3, group="fast"), result(f"{A}::test_y", [1e-3] * 3, group="slow")], {})
    b = run_json([result(f"{A}::test_x", [1e-3] * 3, group="fast"), result(f"{A}::test_y", [5e-3] * 3, group="slow")], {})
    pa, pb = write(tmp_path / "a.json", a), write(tmp_path / "b.json", b)
    assert CliRunner().invoke(bench_app, ["compare", str(pa), str(pb), "--group", "fast"]).exit_code == 0
    assert CliRunner().invoke(bench_app, ["compare", str(pa), str(pb), "--group", "sl*"]).exit_code == 1


def test_benchmark_hash_follows_workloads_and_measuring_code_not_storage(tmp_path):
    files = {
        "tests/test_bench_x.py": "import pytest\nfrom snippets._workloads import w\nfrom verify.bench import plugin, store\n"
                                 "pytestmark = pytest.mark.bench\n",
        "snippets/_workloads/__init__.py": "", "snippets/_workloads/w.py": "N = 1\n",
        "verify/__init__.py": "", "verify/bench/__init__.py": "", "verify/bench/plugin.py": "X = 1\n",
        "verify/bench/store.py": "Y = 1\n",
    }
    for rel, text in files.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text)

    def digest() -> str:
        facts = scan.ScanCache(tmp_path, tmp_path / ".cache")
        return registry.source_key(tmp_path / "tests/test_bench_x.py", facts, follow=store._measures)

    before = digest()
    (tmp_path / "verify/bench/store.py").write_text("Y = 2  # storage changed\n")
    assert digest() == before
    (tmp_path / "verify/bench/plugin.py").write_text("X = 2\n")
    after_plugin = digest()
    assert after_plugin != before
    (tmp_path / "snippets/_workloads/w.py").write_text("N = 2\n")
    assert digest() != after_plugin


# --- a benchmark never stops the main command -------------------------------------------------

def test_keep_going_reports_a_failed_benchmark_and_exits_zero(project):
    from tests._project import cold_cache  # noqa: PLC0415

    cold_cache(project / ".cache-run")
    (project / "tests" / "test_bench_b.py").write_text(
        MARKED.format(body=2) + "    assert False, 'a relation this machine does not meet'\n", encoding="utf-8")
    env = {"VERIFY_CACHE_DIR": str(project / ".cache-run")}
    strict = CliRunner().invoke(bench_app, ["run", "--root", str(project), "--file", "test_bench_b.py"], env=env)
    assert strict.exit_code == 1, strict.output
    going = CliRunner().invoke(bench_app, ["run", "--root", str(project), "--force", "--keep-going",
                                           "--file", "test_bench_b.py"], env=env)
    assert going.exit_code == 0, going.output
    assert "benchmarks failed (pytest exit 1)" in going.output and "site is built anyway" in going.output


def _bench(**info):
    from verify.bench.results import Benchmark  # noqa: PLC0415

    return Benchmark.from_json({"fullname": "tests/test_bench_x.py::test_y", "extra_info": info})


def test_a_bandwidth_fraction_is_shown_only_against_the_level_its_data_lives_in():
    """Against a main-memory limit measured with a 256 MiB copy, a 4 MiB working set (in a cache)
    has no fraction to show; a 256 MiB one has; a FLOP/s fraction always has."""
    limits = {"copy_GBps": 10.0, "copy_bytes": 256 * 2**20}
    small = _bench(GBps=36.7, limit_GBps=10.0, fraction=3.67, bytes=4 * 2**20)
    large = _bench(GBps=8.0, limit_GBps=10.0, fraction=0.8, bytes=256 * 2**20)
    flops = _bench(GFLOPs=50.0, limit_GFLOPs=100.0, fraction=0.5, flops=2 * 10**9)
    assert small.fraction_shown(limits) is None and large.fraction_shown(limits) == 0.8
    assert flops.fraction_shown(limits) == 0.5
    assert large.fraction_shown({"copy_GBps": 10.0}) is None  # a limit of unknown size is no level to compare with
    assert _bench(median_s=1e-6).fraction_shown(limits) is None
