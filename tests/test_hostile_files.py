"""Untrusted evidence files, second round: each case is a file or a situation a hostile contributor or a
careless user made, built here from a real recording of a tiny project.

Every bundle, device file and stress file is read through one schema (``verify.storage.schema``) by
one reader (``verify.storage.edge``). A case the schema catches without a check of its own says so
in its comment ("the schema:"); the others name the rule that catches them.
"""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from tests._project import GOOD_SNIPPET, cold_cache, env_for, recorded_bundle, tiny_project
from verify.core import evidence
from verify.errors import ClaimError
from verify.settings import Settings
from verify.storage import bundles, recorded, scan

CUDA_SNIPPET = GOOD_SNIPPET + '''

@claim("tiny.gpu", question=Q, statement="在 GPU 上 stride 也为 0。", expect={"stride": [0, 1]}, needs=("cuda",))
def _(ctx):
    return {"stride": torch.ones(1, 3, device="cuda").expand(4, 3).stride()}
'''


@pytest.fixture(scope="module")
def run(tmp_path_factory) -> dict[str, Any]:
    """A real bundle of the tiny project: tiny.stride and tiny.error pass, tiny.gpu is skipped (no GPU)."""
    return recorded_bundle(tmp_path_factory.mktemp("run"), snippet=CUDA_SNIPPET)


@pytest.fixture
def project(tmp_path) -> Path:
    root = tiny_project(tmp_path / "p", snippet=CUDA_SNIPPET)
    (root / "evidence").mkdir()
    cold_cache(tmp_path / "cache")
    return root


def _copy(data: Any) -> Any:
    return json.loads(json.dumps(data))


def _write(tmp_path: Path, data: Any, name: str) -> Path:
    path = tmp_path / name
    path.write_text(json.dumps(data))
    return path


def _verify(root: Path, *args: str, timeout: float = 120, **extra: str) -> subprocess.CompletedProcess[str]:
    env = dict(env_for(root), VERIFY_CACHE_DIR=str(root.parent / "cache"), VERIFY_JOBS="1", **extra)
    return subprocess.run([sys.executable, "-m", "verify.cli", *args], cwd=root, env=env, text=True,
                          capture_output=True, timeout=timeout)


def _evidence(root: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in (root / "evidence").glob("*.json") if p.is_file()}


def _as_device(data: Any, key: str) -> Any:
    data = _copy(data)
    data["device_key"] = key
    for rec in data["claims"].values():
        rec["provenance"]["device_key"] = key
    return data


def _with_gpu_pass(root: Path, data: Any) -> Any:
    """``data`` plus a pass of the CUDA claim, keyed by its current code, with the CPU provenance of the run."""
    data = _copy(data)
    reg = scan.load_registry(Settings.for_root(root))
    forged = {**data["claims"]["tiny.stride"], "id": "tiny.gpu", "needs": ["cuda"], "snippet_hash": reg.key("tiny.gpu")}
    data["claims"]["tiny.gpu"] = forged
    return data


# --- integrity: a verdict the evidence does not support ---------------------------------------------------------

def test_a_cpu_bundle_cannot_pass_a_cuda_claim(project, tmp_path, run):
    data = _with_gpu_pass(project, run)
    assert data["claims"]["tiny.gpu"]["provenance"]["device"] == "cpu"
    with pytest.raises(ClaimError, match=r"claims.tiny.gpu: recorded on cpu, not a CUDA device.*nothing was written"):
        bundles.merge(Settings.for_root(project), [_write(tmp_path, data, "cpu-passes-gpu.json")])
    assert _evidence(project) == {}


def test_a_committed_cpu_file_that_passes_a_cuda_claim_shows_it_failed(project, run):
    data = _with_gpu_pass(project, run)
    key = data["device_key"]
    (project / "evidence" / f"{key}.json").write_text(json.dumps(data))
    reg = scan.load_registry(Settings.for_root(project))
    record = recorded.load_all(Settings.for_root(project))[key]["tiny.gpu"]
    judged = evidence.rejudge_stored(reg, record)
    assert judged.outcome.bad and "not a CUDA device" in judged.message
    assert evidence.status_of(judged, reg.key("tiny.gpu"), local=False) == evidence.FAILED


def test_a_fresh_pass_never_hides_a_failure_already_recorded_and_merge_says_so(project, tmp_path, run):
    failing = _copy(run)
    failing["claims"]["tiny.stride"]["observed"] = {"stride": [9, 9]}
    first = _verify(project, "merge", str(_write(tmp_path, failing, "failed-here.json")))
    assert first.returncode == 1 and "a failure remains" in first.stdout
    second = _verify(project, "merge", str(_write(tmp_path, run, "passed-later.json")))
    out = " ".join(second.stdout.split())
    assert second.returncode == 1, out  # the failure stays, so the merge cannot say all is well
    assert ("tiny.stride on " in out and "kept the failure of evidence/" in out and "not the pass of" in out
            and "passed-later.json" in out), out
    assert "a failure remains: 1 current record(s) fail" in out


def test_a_pass_that_changes_nothing_still_exits_1_while_the_failure_stays(project, tmp_path, run):
    """A bundle of only the claim that fails in the device file: the file keeps its failure and is not
    written again, and the merge still exits 1 and says the failure remains (it exited 0 here)."""
    failing = _copy(run)
    failing["claims"]["tiny.stride"]["observed"] = {"stride": [9, 9]}
    assert _verify(project, "merge", str(_write(tmp_path, failing, "failed-here.json"))).returncode == 1
    before = _evidence(project)
    only = _copy(run)
    only["claims"] = {"tiny.stride": run["claims"]["tiny.stride"]}
    proc = _verify(project, "merge", str(_write(tmp_path, only, "pass-only.json")))
    out = " ".join(proc.stdout.split())
    assert proc.returncode == 1, out
    assert "kept the failure of evidence/" in out and "not the pass of" in out, out
    assert f"left evidence/{run['device_key']}.json as it was" in out and "(1 failing)" in out, out
    assert "a failure remains: 1 current record(s) fail" in out and "wrote " not in out, out
    assert _evidence(project) == before


def test_two_passing_bundles_say_which_pass_was_kept(project, tmp_path, run):
    a, b = _write(tmp_path, run, "a.json"), _write(tmp_path, run, "b.json")
    proc = _verify(project, "merge", str(a), str(b))
    out = " ".join(proc.stdout.split())
    assert proc.returncode == 0, out
    assert "kept the pass of" in out and "b.json, the newer, not the pass of" in out and "failure" not in out.split(
        "no failure remains")[0], out


# --- lost or corrupted data ---------------------------------------------------------------------------------------

#: ``verify merge BUNDLE`` started by ``go`` appearing, whose read of the device files takes a second longer: the
#: other merge reads the same old files in that second unless the lock keeps it out until this one has renamed
_SLOW_MERGE = """
import sys, time
from pathlib import Path
from verify.cli.main import main
from verify.storage import recorded

go, bundle, ready = Path(sys.argv[1]), sys.argv[2], Path(sys.argv[3])
read = recorded.load_all

def slow(settings):
    found = read(settings)
    time.sleep(1.0)
    return found

recorded.load_all = slow
ready.touch()
while not go.exists():
    time.sleep(0.001)
sys.argv = ["verify", "merge", bundle]
main()
"""


def test_concurrent_merges_into_one_device_lose_nothing(project, tmp_path, run):
    """Three tries of two merge processes at once, each bringing a claim the other lacks. Each read of the
    device files is made a second slower, so that without the lock both merges read the same old state and
    the second rename drops the first's record (as it did, 3 of 3 tries, without the lock)."""
    only_stride, only_error = _copy(run), _copy(run)
    del only_stride["claims"]["tiny.error"]
    del only_error["claims"]["tiny.stride"]
    key = run["device_key"]
    env = dict(env_for(project), VERIFY_CACHE_DIR=str(project.parent / "cache"), VERIFY_JOBS="1")
    for attempt in range(3):
        (project / "evidence" / f"{key}.json").unlink(missing_ok=True)
        go = tmp_path / f"go{attempt}"
        paths = [_write(tmp_path, only_stride, f"s{attempt}.json"), _write(tmp_path, only_error, f"e{attempt}.json")]
        ready = [tmp_path / f"ready{attempt}-{k}" for k in range(2)]
        procs = [subprocess.Popen([sys.executable, "-c", _SLOW_MERGE, str(go), str(p), str(r)], cwd=project, env=env,
                                  text=True, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
                 for p, r in zip(paths, ready)]
        deadline = time.monotonic() + 60
        while not all(r.exists() for r in ready):  # both imported and waiting for go
            assert time.monotonic() < deadline and all(p.poll() is None for p in procs), [p.poll() for p in procs]
            time.sleep(0.01)
        go.touch()
        outs = [p.communicate(timeout=120)[0] for p in procs]
        assert [p.returncode for p in procs] == [0, 0], outs
        stored = json.loads((project / "evidence" / f"{key}.json").read_text())
        assert set(stored["claims"]) == set(run["claims"]), (attempt, outs)


@pytest.mark.parametrize("literal", ["NaN", "Infinity", "-Infinity", "1e999"])
def test_nan_and_infinity_are_refused(project, tmp_path, run, literal):
    """The schema: JSON has no NaN, and a number beyond a double is not a number the project can write back."""
    text = json.dumps(run).replace('"duration_s": ', f'"duration_s": {literal}, "was": ', 1)
    bundle = tmp_path / "nan.json"
    bundle.write_text(text)
    with pytest.raises(ClaimError, match=r"nan.json: (claims\.tiny\.\w+: )?not (a recorded-evidence file|an evidence record)"):
        bundles.merge(Settings.for_root(project), [bundle])
    assert _evidence(project) == {}


def test_a_merge_refused_for_one_device_writes_no_other_device(project, tmp_path, run):
    other = _as_device(run, "cpu-other-box")
    (project / "evidence" / "cpu-other-box.json").mkdir()  # a folder where the second device's file should be
    with pytest.raises(ClaimError, match=r"evidence/cpu-other-box.json: is a folder"):
        bundles.merge(Settings.for_root(project), [_write(tmp_path, run, "one.json"),
                                                    _write(tmp_path, other, "two.json")])
    assert _evidence(project) == {}


def test_all_devices_or_none_when_a_write_fails(project, tmp_path, run, monkeypatch):
    other = _as_device(run, "cpu-other-box")
    real_fsync = os.fsync
    calls = []

    def fsync(fd: int) -> None:
        if not stat.S_ISREG(os.fstat(fd).st_mode):  # a folder synced after its renames
            return real_fsync(fd)
        calls.append(fd)
        if len(calls) == 2:  # the second device's file
            raise OSError(28, "No space left on device")
        real_fsync(fd)

    monkeypatch.setattr(os, "fsync", fsync)
    with pytest.raises(OSError, match="No space left"):
        bundles.merge(Settings.for_root(project), [_write(tmp_path, run, "one.json"), _write(tmp_path, other, "two.json")])
    assert _evidence(project) == {} and not list((project / "evidence").glob("*.tmp"))


def test_a_symlink_in_evidence_is_refused_not_rewritten_under_the_wrong_key(project, tmp_path, run):
    key = run["device_key"]
    real = project / "evidence" / f"{key}.json"
    real.write_text(json.dumps(run))
    (project / "evidence" / "cpu-other-box.json").symlink_to(real.name)
    before = real.read_bytes()
    with pytest.raises(ClaimError, match=r"evidence/cpu-other-box.json: is a symbolic link"):
        bundles.merge(Settings.for_root(project), [_write(tmp_path, _as_device(run, "cpu-other-box"), "b.json")])
    assert real.read_bytes() == before


def test_a_device_file_under_another_devices_name_is_refused(project, run):
    (project / "evidence" / "cpu-other-box.json").write_text(json.dumps(run))
    with pytest.raises(ClaimError, match=r"evidence/cpu-other-box.json: holds the records of .* but its name says"):
        recorded.load_all(Settings.for_root(project))


# --- hangs and memory ---------------------------------------------------------------------------------------------

def test_a_fifo_bundle_or_device_file_is_refused_at_once(project, tmp_path, run):
    fifo = tmp_path / "bundle.json"
    os.mkfifo(fifo)
    proc = _verify(project, "merge", str(fifo), timeout=60)  # a hang would time out
    assert proc.returncode == 2 and "bundle.json: is a pipe" in proc.stderr
    os.mkfifo(project / "evidence" / "cpu-fifo.json")
    proc = _verify(project, "status", timeout=60)
    assert proc.returncode != 0 and "evidence/cpu-fifo.json: is a pipe" in proc.stdout + proc.stderr


def test_a_fifo_in_evidence_fails_the_build_at_once_naming_it(project):
    """The build reads evidence/ as merge and status do: a FIFO there is named, not waited on."""
    os.mkfifo(project / "evidence" / "cpu-fifo.json")
    env = dict(env_for(project), VERIFY_CACHE_DIR=str(project.parent / "cache"), VERIFY_NO_RUN="1")
    proc = subprocess.run([sys.executable, "-m", "mkdocs", "build", "-q"], cwd=project, env=env, text=True,
                          capture_output=True, timeout=300)  # a hang would time out
    assert proc.returncode != 0 and "evidence/cpu-fifo.json: is a pipe" in proc.stderr, proc.stderr[-3000:]


def test_dev_zero_is_refused_after_the_cap_not_read_to_the_end(project):
    proc = _verify(project, "merge", "/dev/zero", timeout=60)
    assert proc.returncode == 2 and "/dev/zero: is not a regular file" in proc.stderr


def test_the_cap_is_counted_while_reading_not_taken_from_st_size(tmp_path, monkeypatch):
    """A regular file can say 0 bytes (``/proc``) or hold a gigabyte of zeros: the reader stops at cap + 1."""
    from verify.storage import edge

    status = Path("/proc/self/status")
    assert status.stat().st_size == 0 and len(status.read_bytes()) > 100
    with pytest.raises(edge.FileRefused, match=r"status: larger than 100 bytes"):
        edge.read_bytes(status, "status", 100)
    sparse = tmp_path / "huge.json"
    with sparse.open("wb") as fh:
        fh.truncate(1 << 30)
    read: list[int] = []
    real_read = os.read

    def counted(fd: int, n: int) -> bytes:
        chunk = real_read(fd, n)
        read.append(len(chunk))
        return chunk

    monkeypatch.setattr(os, "read", counted)
    with pytest.raises(edge.FileRefused, match=r"huge.json: larger than 1,048,576 bytes"):
        edge.read_bytes(sparse, "huge.json", 1 << 20)
    assert sum(read) == (1 << 20) + 1


def test_rekey_refuses_a_fifo_or_dev_zero_at_once(project, tmp_path):
    """``verify rekey`` read its file whole before looking at it: a FIFO waited for a writer, /dev/zero filled memory."""
    fifo = tmp_path / "old.json"
    os.mkfifo(fifo)
    for source, words in ((fifo, "old.json: is a pipe"), (Path("/dev/zero"), "/dev/zero: is not a regular file")):
        proc = _verify(project, "rekey", str(source), "--at", "HEAD", "--out", str(tmp_path / "new.json"), timeout=60)
        assert proc.returncode == 2 and words in proc.stderr, proc.stdout + proc.stderr
    assert not (tmp_path / "new.json").exists()


@pytest.mark.parametrize("field, value", [
    ("output", "x" * (10 << 20)),
    ("traceback", "x" * (10 << 20)),
    ("message", "x" * (1 << 20)),
    ("exception", {"type": "RuntimeError", "message": "x" * (1 << 20), "traceback": ""}),
    ("provenance", {"torch": "x" * (1 << 20)}),
    ("expected", {"stride": "x" * (1 << 20)}),
])
def test_every_field_is_capped_not_only_observed(project, tmp_path, run, field, value):
    """The schema: every string and collection has a cap, in current and stale records alike."""
    data = _copy(run)
    data["claims"]["tiny.stride"][field] = value
    data["claims"]["tiny.stride"]["snippet_hash"] = "an-older-snippet"  # stale records are read the same way
    with pytest.raises(ClaimError, match=rf"claims.tiny.stride: not an evidence record: {field}"):
        bundles.merge(Settings.for_root(project), [_write(tmp_path, data, "big.json")])


def test_a_machine_object_over_its_cap_is_refused(project, tmp_path, run):
    data = _copy(run)
    data["machine"]["padding"] = "x" * (1 << 20)
    with pytest.raises(ClaimError, match=r"not a recorded-evidence file: machine: [\d,]+ bytes of JSON"):
        bundles.merge(Settings.for_root(project), [_write(tmp_path, data, "big.json")])


def test_a_hundred_thousand_records_are_refused_by_count(project, tmp_path, run):
    """The schema: a file holds at most 5,000 records (the registry declares 597)."""
    data = _copy(run)
    data["claims"] = {f"gone.c{i}": {"id": f"gone.c{i}", "snippet_hash": "h", "outcome": "pass"} for i in range(100_000)}
    with pytest.raises(ClaimError, match=r"claims: expected object of length <= 5000"):
        bundles.merge(Settings.for_root(project), [_write(tmp_path, data, "many.json")])


def test_a_hundred_thousand_unknown_records_are_one_line_in_seconds(project, tmp_path, run):
    """They took 59 s and printed 100,000 lines: now the count cap refuses the file in one line, before any record
    is checked."""
    data = _copy(run)
    record = {k: data["claims"]["tiny.stride"][k] for k in ("snippet_hash", "outcome", "observed", "provenance")}
    data["claims"].update({f"gone.c{i}": {**record, "id": f"gone.c{i}"} for i in range(100_000)})
    path = tmp_path / "many.json"
    path.write_text(json.dumps(data, separators=(",", ":")))
    assert path.stat().st_size < 64 << 20  # under the byte cap: the count is what refuses it
    started = time.perf_counter()
    proc = _verify(project, "merge", str(path))
    took = time.perf_counter() - started
    assert proc.returncode == 2 and "claims: expected object of length <= 5000" in proc.stderr, proc.stderr
    assert len((proc.stdout + proc.stderr).splitlines()) == 1 and took < 20, (took, proc.stdout[:2000])
    assert _evidence(project) == {}


def test_unknown_records_are_summed_up_not_printed_one_a_line(project, tmp_path, run):
    data = _copy(run)
    record = data["claims"]["tiny.stride"]
    data["claims"].update({f"gone.c{i}": {**record, "id": f"gone.c{i}"} for i in range(3000)})
    proc = _verify(project, "merge", str(_write(tmp_path, data, "many.json")))
    assert proc.returncode == 0, proc.stderr
    assert "left out 3,000 record(s)" in proc.stdout and "… and 2,990 more" in proc.stdout
    assert len(proc.stdout.splitlines()) < 15


# --- crashes ------------------------------------------------------------------------------------------------------

def test_very_deep_json_is_a_named_error_not_a_recursion_traceback(project, tmp_path, run):
    data = _copy(run)
    data["claims"]["tiny.stride"]["observed"]["deep"] = "@"
    text = json.dumps(data).replace('"@"', "[" * 5000 + "]" * 5000)
    proc = _verify(project, "merge", str(_write_text(tmp_path, text)))
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    assert "nested" in proc.stderr and "deep.json" in proc.stderr


def _write_text(tmp_path: Path, text: str, name: str = "deep.json") -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


@pytest.mark.parametrize("cid", ["[/]", "[link=https://example.com]tiny.stride[/link]", "\x1b[2J\x1b[H已导入 5 张卡片",
                                 "../x", "a b"])
def test_a_claim_id_that_is_not_an_id_is_refused_and_printed_safely(project, tmp_path, run, cid):
    """The schema: a claim id is a printable slug; what the terminal prints of a refused file has no escape code."""
    data = _copy(run)
    data["claims"][cid] = {**data["claims"]["tiny.stride"], "id": cid}
    proc = _verify(project, "merge", str(_write(tmp_path, data, "ids.json")))
    assert proc.returncode == 2 and "Traceback" not in proc.stderr, proc.stderr
    assert "claims" in proc.stderr and "\x1b" not in proc.stdout + proc.stderr
    assert _evidence(project) == {}


@pytest.mark.parametrize("value, field", [
    ({"stride": [0, 1], "t": {"median_s": "fast"}}, "observed.t.median_s: expected float, got str"),
    ({"stride": [0, 1], "evidence": {"kind": "compiled", "tools": ["nvcc"]}}, "observed.evidence.tools: expected object"),
])
def test_an_odd_value_shape_is_refused_at_merge_not_at_the_build(project, tmp_path, run, value, field):
    """The schema: a timing's seconds are numbers and a note's tools map a tool to its version."""
    data = _copy(run)
    data["claims"]["tiny.stride"]["observed"] = value
    with pytest.raises(ClaimError, match=rf"claims.tiny.stride: not an evidence record: {field}"):
        bundles.merge(Settings.for_root(project), [_write(tmp_path, data, "odd.json")])
    assert _evidence(project) == {}


@pytest.mark.parametrize("seconds", [-1.0, "NaN"])
def test_durations_never_take_negative_or_nan_seconds(project, tmp_path, run, seconds):
    data = _copy(run)
    text = json.dumps(data).replace('"duration_s": ', f'"duration_s": {json.dumps(seconds) if seconds != "NaN" else "NaN"}, "x": ', 1)
    proc = _verify(project, "durations", str(_write_text(tmp_path, text, "neg.json")))
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert ("duration_s: expected float >= 0" if seconds == -1.0 else "not JSON") in proc.stderr, proc.stderr
    assert not (project / "snippets" / "durations.json").exists()
    assert _verify(project, "shards", "2").returncode == 0


def test_a_durations_file_with_a_negative_second_is_named(project):
    (project / "snippets" / "durations.json").write_text('{"format": 1, "claims": {"tiny.stride": -2}, "files": {}}')
    proc = _verify(project, "shards", "2")
    assert proc.returncode == 2 and "snippets/durations.json: not a durations file: claims" in proc.stderr


def test_a_file_of_a_newer_format_is_refused(project, tmp_path, run):
    """The schema: a format this reader does not know yet is refused, not read as if it were its own."""
    data = _copy(run)
    data["format"] = 99
    with pytest.raises(ClaimError, match=r"format: expected int <= 2 \(written by a newer version"):
        bundles.merge(Settings.for_root(project), [_write(tmp_path, data, "future.json")])


# --- benchmark results ---------------------------------------------------------------------------------------------

@pytest.mark.parametrize("entry, words", [
    ({"fullname": "tests/test_bench_x.py::test_a", "stats": {"median": -1.0}}, "stats.median"),
    ({"fullname": "tests/test_bench_x.py::test_a", "extra_info": {"median_s": "fast"}}, "extra_info.median_s"),
    ({"fullname": "x" * 1000}, "fullname"),
])
def test_a_benchmark_file_of_the_wrong_shape_is_named_and_not_shown(tmp_path, caplog, entry, words):
    """The schema: benchmark files are read like bundles; a bad one is a warning (a strict build fails on it)."""
    from verify.bench import store

    path = tmp_path / "cpu-x.json"
    path.write_text(json.dumps({"format": 1, "benchmarks": [entry]}))
    with caplog.at_level("WARNING", logger="mkdocs.verify"):
        assert store.load(path) is None
    assert f"cpu-x.json: not a benchmark results file: benchmarks[0].{words}" in caplog.text


def test_a_benchmark_file_with_nan_or_a_fifo_is_refused(tmp_path, caplog):
    from verify.bench import store

    nan = tmp_path / "cpu-nan.json"
    nan.write_text('{"format": 1, "benchmarks": [{"fullname": "t::a", "stats": {"median": NaN}}]}')
    fifo = tmp_path / "cpu-fifo.json"
    os.mkfifo(fifo)
    with caplog.at_level("WARNING", logger="mkdocs.verify"):
        assert store.load(nan) is None and store.load(fifo) is None
    assert "cpu-nan.json: not a benchmark results file (not JSON" in caplog.text
    assert "cpu-fifo.json: is a pipe" in caplog.text


def test_a_failure_quoting_a_files_escape_codes_is_printed_escaped(project, run, monkeypatch):
    """A committed timeout (kept as written: it is not judged again) whose message carries escape codes fails the
    build; its line shows them escaped."""
    from verify import errors
    from verify import settings as settings_mod
    from verify.site import session

    data = _copy(run)
    data["claims"]["tiny.stride"].update(outcome="timeout", message="\x1b[2J\x1b[H全部通过")
    (project / "evidence" / f"{run['device_key']}.json").write_text(json.dumps(data))
    monkeypatch.setattr(settings_mod, "_site", Settings.for_root(project, {"VERIFY_NO_RUN": "1"}))
    failures = session.get().failures
    assert any(f.claim == "tiny.stride" for f in failures)
    text = errors.summary(failures)
    assert "\x1b" not in text and "\\x1b[2J" in text


def test_verify_status_shows_a_files_message_as_text(project, run):
    """A committed record's message went into status's table as rich markup (a link hid its text) and with
    its escape codes raw; now both show as written."""
    data = _copy(run)
    data["claims"]["tiny.stride"].update(outcome="timeout",
                                         message="[link=https://evil.example]ok[/link] \x1b[2J\x1b[H全部通过")
    (project / "evidence" / f"{run['device_key']}.json").write_text(json.dumps(data))
    proc = _verify(project, "status", COLUMNS="240")
    assert proc.returncode == 0, proc.stderr
    assert "\x1b" not in proc.stdout and "\\x1b[2J\\x1b[H全部通过" in proc.stdout, proc.stdout
    assert "[link=https://evil.example]ok[/link]" in proc.stdout, proc.stdout


def test_a_failing_claims_traceback_is_printed_escaped(tmp_path):
    """``verify run`` prints a failing claim's traceback; an exception's message with escape codes in it
    (a snippet's text) shows them escaped instead of clearing the screen."""
    snippet = GOOD_SNIPPET + '''

@claim("tiny.raises", question=Q, statement="它返回。", expect={"v": 1})
def _(ctx):
    raise ValueError("\\x1b[2J\\x1b[H全部通过")
'''
    root = tiny_project(tmp_path / "p", snippet=snippet)
    cold_cache(tmp_path / "cache")
    proc = _verify(root, "run", "--id", "tiny.raises", COLUMNS="240")
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "ValueError" in proc.stdout and "Traceback" in proc.stdout, proc.stdout
    assert "\x1b" not in proc.stdout and "\\x1b[2J\\x1b[H全部通过" in proc.stdout, proc.stdout
