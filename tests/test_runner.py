"""The runner survives what snippets do wrong: hangs, segfaults, exceptions, broken imports."""

from __future__ import annotations

import os
import time
from pathlib import Path

from tests._project import settings, write
from verify.running import engine
from verify.settings import Settings

HEADER = "import os, sys, time\nfrom verify.claim import claim\nQ = 'r'\n"


def _claim(cid: str, body: str, **extra: str) -> str:
    args = ", ".join(f"{k}={v}" for k, v in {"expect": '{"x": 1}', **extra}.items())
    return f"@claim({cid!r}, question=Q, statement='s', {args})\ndef _(ctx):\n" + "".join(
        f"    {line}\n" for line in body.splitlines())


def _run(tmp_path, source: str, **kwargs):
    root = write(tmp_path, {"snippets/r/a.py": HEADER + source})
    return engine.verify(settings(root), jobs=1, **kwargs)


def test_timeout_crash_and_exception_each_recorded_and_later_claims_still_run(tmp_path):
    source = (_claim("r.hang", "time.sleep(60)", timeout="1.5")
              + _claim("r.segv", "os.kill(os.getpid(), 11)")
              + _claim("r.raise", "raise ValueError('boom')")
              + _claim("r.exit", "print('partial'); sys.stdout.flush(); os._exit(7)")
              + _claim("r.ok", "return {'x': 1}"))
    out = _run(tmp_path, source)
    rec = out.local
    assert rec["r.hang"].outcome == "timeout" and "1 s" in rec["r.hang"].message or "2 s" in rec["r.hang"].message
    assert rec["r.segv"].outcome == "crash" and "SIGSEGV" in rec["r.segv"].message
    assert rec["r.raise"].outcome == "error" and "ValueError: boom" in rec["r.raise"].message
    assert rec["r.exit"].outcome == "crash" and "status 7" in rec["r.exit"].message
    assert "partial" in rec["r.exit"].output  # what it printed before dying is kept
    assert rec["r.ok"].outcome == "pass"
    failing = {f.claim for f in out.failures}
    assert failing == {"r.hang", "r.segv", "r.raise", "r.exit"}


def test_output_is_captured_at_the_file_descriptor_level(tmp_path):
    body = "print('from python')\nos.write(1, b'from fd 1\\n')\nos.write(2, b'from fd 2\\n')\nreturn {'x': 1}"
    out = _run(tmp_path, _claim("r.print", body))
    output = out.local["r.print"].output
    assert "from python" in output and "from fd 1" in output and "from fd 2" in output


def test_expected_error_that_does_not_happen_is_a_failure(tmp_path):
    source = ("@claim('r.noerr', question=Q, statement='s', raises=('RuntimeError', 'view size'))\n"
              "def _(ctx):\n    return None\n"
              "@claim('r.wrongerr', question=Q, statement='s', raises=('RuntimeError', 'view size'))\n"
              "def _(ctx):\n    raise RuntimeError('something else')\n")
    rec = _run(tmp_path, source).local
    assert rec["r.noerr"].outcome == "fail" and "no exception was raised" in rec["r.noerr"].message
    assert rec["r.wrongerr"].outcome == "fail" and "something else" in rec["r.wrongerr"].message


def test_observed_values_are_kept_on_failure_and_success(tmp_path):
    source = _claim("r.false", "return {'x': 2, 'extra': (1, 2)}") + _claim("r.true", "ctx.observe(x=1, note='hi')")
    rec = _run(tmp_path, source).local
    assert rec["r.false"].outcome == "fail" and rec["r.false"].observed == {"x": 2, "extra": [1, 2]}
    assert "x: expected == 1, observed 2" in rec["r.false"].message
    assert rec["r.true"].observed == {"x": 1, "note": "hi"}


def test_broken_import_fails_every_claim_of_the_file_with_the_reason(tmp_path):
    source = "import no_such_module_here\n" + _claim("r.a", "return {'x': 1}") + _claim("r.b", "return {'x': 1}")
    rec = _run(tmp_path, source).local
    for cid in ("r.a", "r.b"):
        assert rec[cid].outcome == "error" and "no_such_module_here" in rec[cid].message


def test_cuda_claim_is_skipped_on_a_cpu_machine_never_verified(tmp_path):
    rec = _run(tmp_path, _claim("r.gpu", "raise SystemExit('must not run')", needs='["cuda"]')).local["r.gpu"]
    assert rec.outcome == "skipped" and "CUDA" in rec.message


def test_provenance_is_recorded(tmp_path):
    rec = _run(tmp_path, _claim("r.ok", "return {'x': 1}")).local["r.ok"]
    prov = rec.provenance
    for key in ("torch", "torch_build", "device_name", "python", "os", "git_commit", "date", "threads"):
        assert getattr(prov, key) not in (None, ""), key
    assert len(rec.snippet_hash) == 16 and rec.duration_s >= 0


def test_a_file_with_ordinary_and_performance_claims_runs_both_batches(tmp_path):
    source = _claim("r.fact", "return {'x': 1}") + _claim("r.perf", "return {'x': 1}", kind="'perf'")
    out = _run(tmp_path, source)
    assert out.local["r.fact"].outcome == "pass" and out.local["r.perf"].outcome == "pass"


def test_a_runaway_allocation_is_a_clear_error_under_the_worker_memory_limit(tmp_path):
    body = "blocks = [bytearray(256 * 2**20) for _ in range(64)]\nreturn {'x': len(blocks)}"
    root = write(tmp_path, {"snippets/r/a.py": HEADER + _claim("r.hog", body) + _claim("r.ok", "return {'x': 1}")})
    env = {"VERIFY_WORKER_MEMORY": "1GiB"}
    out = engine.verify(Settings.for_root(root, {**os.environ, **env}), jobs=1)
    hog = out.local["r.hog"]
    assert hog.outcome == "error" and "worker's memory limit (1 GiB" in hog.message and "MemoryError" in hog.message
    assert out.local["r.ok"].outcome == "pass"  # the next claim of the same worker still runs


def test_observed_values_over_the_cap_fail_clearly(tmp_path):
    out = _run(tmp_path, _claim("r.big", "return {'x': 1, 'all': list(range(200_000))}"))
    big = out.local["r.big"]
    assert big.outcome == "error" and "ObservedTooLarge" in big.message and "observe a summary" in big.message


def test_an_unexpected_exception_keeps_its_traceback_with_the_snippet_line(tmp_path):
    out = _run(tmp_path, _claim("r.raise", "x = 1\nraise ValueError('boom')"))
    tb = out.local["r.raise"].traceback
    assert "snippets/r/a.py" in tb and "line 7" in tb and "ValueError: boom" in tb


def test_a_child_process_a_claim_leaves_running_is_killed_with_its_worker(tmp_path):
    marker = tmp_path / "child.pid"
    body = (f"import subprocess\np = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(120)'])\n"
            f"open({str(marker)!r}, 'w').write(str(p.pid))\nreturn {{'x': 1}}")
    out = _run(tmp_path, _claim("r.orphan", body))
    assert out.local["r.orphan"].outcome == "pass"
    pid = int(marker.read_text())
    for _ in range(50):  # killed with the worker's process group; give the kernel a moment to reap it
        if not _alive(pid):
            break
        time.sleep(0.1)
    assert not _alive(pid)


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().split(")")[-1].split()[0]
    except OSError:
        return False
    return state != "Z"


def test_a_killed_run_takes_its_worker_along_and_the_next_run_says_it_waits_then_sweeps(tmp_path):
    """SIGKILL of a run: its worker and the claim's children go within a moment, and its scratch
    folder is removed by the next run of the cache, which said whom it was waiting for."""
    import signal  # noqa: PLC0415

    from tests._project import cold_cache, start_verify  # noqa: PLC0415

    hold, pids = tmp_path / "hold", tmp_path / "pids"
    hold.touch()
    body = (f"import subprocess\np = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(120)'])\n"
            f"open({str(pids)!r}, 'w').write(f'{{os.getpid()}} {{p.pid}}')\n"
            f"while os.path.exists({str(hold)!r}):\n    time.sleep(0.1)\nreturn {{'x': 1}}")
    root = write(tmp_path / "p", {"mkdocs.yml": "site_name: t\n", "snippets/r/a.py": HEADER + _claim("r.slow", body, timeout="120")})
    cache = cold_cache(tmp_path / "cache")
    first = start_verify(root, cache, "run")
    second = None
    try:
        for _ in range(600):
            assert first.poll() is None, first.communicate()[0]
            if pids.exists() and len(pids.read_text().split()) == 2:
                break
            time.sleep(0.1)
        worker, child = map(int, pids.read_text().split())
        assert list((cache / "tmp").glob("run-*"))
        second = start_verify(root, cache, "run")
        time.sleep(3)  # the second reaches the lock and waits
        first.send_signal(signal.SIGKILL)
        first.communicate(timeout=30)
        for _ in range(40):
            if not _alive(worker) and not _alive(child):
                break
            time.sleep(0.1)
        assert not _alive(worker) and not _alive(child)  # within 4 s of the kill, not at the claim's end
        hold.unlink()
        out, _ = second.communicate(timeout=300)
        assert second.returncode == 0, out
        text = " ".join(out.split())
        assert f"another verification (process {first.pid}) is running claims with {cache}" in text
        assert "running now" in text
    finally:  # a failing check leaves nothing running
        hold.unlink(missing_ok=True)
        for proc in (first, second):
            if proc is not None and proc.poll() is None:
                proc.kill()
                proc.communicate()
    assert not list((cache / "tmp").glob("run-*"))  # the killed run's folder, and this run's own


def _two_files(tmp_path, environ=None):
    """Two snippet files (so the run starts a warm zygote): the misbehaving claims, and one that says
    how its worker was started."""
    bad = (_claim("r.hang", "time.sleep(60)", timeout="1.5") + _claim("r.segv", "os.kill(os.getpid(), 11)")
           + _claim("r.raise", "raise ValueError('boom')")
           + _claim("r.exit", "print('partial'); sys.stdout.flush(); os._exit(7)") + _claim("r.ok", "return {'x': 1}"))
    probe = _claim("r.probe", "import torch, tempfile\n"
                              "return {'x': 1, 'threads': torch.get_num_threads(), 'ppid': os.getppid(),\n"
                              "        'cwd': os.getcwd(), 'tmp': tempfile.gettempdir(), 'sid': os.getsid(0) == os.getpid()}")
    root = write(tmp_path, {"snippets/r/a.py": HEADER + bad, "snippets/r/b.py": HEADER + probe})
    conf = settings(root)
    if environ:
        conf = Settings.for_root(root, environ={**os.environ, **environ})
    return engine.verify(conf, jobs=1)


def test_a_warm_worker_is_started_as_a_fresh_one_would_be(tmp_path):
    """Forked by the zygote: the same outcomes for a hang, a segfault, an exception and an exit; the
    same threads, working directory, TMPDIR and own session as a fresh interpreter gives."""
    warm = _two_files(tmp_path / "warm")
    cold = _two_files(tmp_path / "cold", {"VERIFY_WARM_WORKERS": "0"})
    for out in (warm, cold):
        rec = out.local
        assert rec["r.hang"].outcome == "timeout" and rec["r.segv"].outcome == "crash" and "SIGSEGV" in rec["r.segv"].message
        assert rec["r.raise"].outcome == "error" and rec["r.exit"].outcome == "crash" and "status 7" in rec["r.exit"].message
        assert "partial" in rec["r.exit"].output and rec["r.ok"].outcome == "pass"
    w, c = warm.local["r.probe"].observed, cold.local["r.probe"].observed
    assert w["threads"] == c["threads"] and w["sid"] and c["sid"]
    assert w["ppid"] != os.getpid() and c["ppid"] == os.getpid()  # forked by the zygote, or started by the run
    assert Path(w["tmp"]).name == Path(c["tmp"]).name == "tmp" and Path(w["cwd"]).name.startswith("work-")


def _timed_files(tmp_path, environ=None):
    """Two files of performance claims beside an ordinary one, run with two jobs (ordinary workers get a thread
    each on a 2-core machine): each timed claim says how its worker was started."""
    body = ("import torch\nreturn {'x': 1, 'threads': torch.get_num_threads(), 'ppid': os.getppid(),\n"
            "        'omp': os.environ.get('OMP_NUM_THREADS'), 'sid': os.getsid(0) == os.getpid()}")
    root = write(tmp_path, {"snippets/r/a.py": HEADER + _claim("r.a", body, kind='"perf"'),
                            "snippets/r/b.py": HEADER + _claim("r.b", body, kind='"perf"'),
                            "snippets/r/c.py": HEADER + _claim("r.c", body)})
    conf = settings(root) if not environ else Settings.for_root(root, environ={**os.environ, **environ})
    return engine.verify(conf, jobs=2)


def test_timed_workers_are_forked_with_the_threads_a_fresh_one_has(tmp_path):
    """Performance claims fork from a zygote of their own: no thread limit in its environment, so a timed claim
    has the threads a fresh interpreter gives it, not the ordinary workers' share."""
    warm = _timed_files(tmp_path / "warm")
    cold = _timed_files(tmp_path / "cold", {"VERIFY_WARM_WORKERS": "0"})
    for cid in ("r.a", "r.b"):
        w, c = warm.local[cid].observed, cold.local[cid].observed
        assert w["threads"] == c["threads"] and w["omp"] is None and c["omp"] is None and w["sid"] and c["sid"]
        assert w["ppid"] != os.getpid() and c["ppid"] == os.getpid()  # forked by a zygote, or started by the run
    if (os.cpu_count() or 1) >= 2:
        assert warm.local["r.c"].observed["omp"] == str((os.cpu_count() or 1) // 2)  # the ordinary share
        assert warm.local["r.a"].observed["ppid"] != warm.local["r.c"].observed["ppid"]  # not the ordinary zygote


def test_workers_of_files_that_compile_start_with_dynamo_loaded_and_the_others_without(tmp_path):
    """Two files whose code names torch.compile fork from a zygote that imported Dynamo and Inductor; a third file's
    worker never sees them loaded (it would count Inductor's operators among the dispatcher's), nor does a compiling
    file with a claim that needs Triton."""
    body = "return {'x': 1, 'dynamo': 'torch._dynamo' in sys.modules, 'inductor': 'torch._inductor' in sys.modules}"
    compiling = HEADER + "import torch\nCOMPILE = torch.compile\n"
    root = write(tmp_path, {"snippets/r/a.py": compiling + _claim("r.a", body),
                            "snippets/r/b.py": HEADER + "# torch.compile in a comment is not code\n" + _claim("r.b", body),
                            "snippets/r/c.py": compiling + _claim("r.c", body),
                            "snippets/r/d.py": compiling + _claim("r.d", body, needs='("triton",)')})
    out = engine.verify(settings(root), jobs=1).local
    assert out["r.a"].observed["dynamo"] and out["r.a"].observed["inductor"] and out["r.c"].observed["dynamo"]
    assert not out["r.b"].observed["dynamo"] and not out["r.b"].observed["inductor"]
    if out["r.d"].outcome == "pass":  # Inductor loaded before the pinned Triton is on the path would stub Triton out
        assert not out["r.d"].observed["inductor"]


def _ends_before_its_first_claim(tmp_path, environ=None):
    """A snippet file whose first worker ends with status 0 while importing it (a marker file says which start
    this is), beside a second file so that the run starts a warm zygote."""
    marker = tmp_path / "starts.txt"
    early = (f"from pathlib import Path\nstarts = Path({str(marker)!r})\n"
             "starts.write_text(starts.read_text() + 'x' if starts.exists() else 'x')\n"
             "if starts.read_text() == 'x':\n    os._exit(0)\n" + _claim("r.late", "return {'x': 1}"))
    root = write(tmp_path / "p", {"snippets/r/a.py": HEADER + early, "snippets/r/b.py": HEADER + _claim("r.ok", "return {'x': 1}")})
    conf = settings(root) if not environ else Settings.for_root(root, environ={**os.environ, **environ})
    return engine.verify(conf, jobs=1), marker


def test_a_forked_worker_that_ends_before_its_first_claim_is_started_once_more_fresh(tmp_path):
    """Seen once in CI: a worker forked by the zygote ended with status 0 before its first claim. It is started once
    more as a fresh interpreter; a fresh worker that does the same is still a crash (no second retry)."""
    warm, marker = _ends_before_its_first_claim(tmp_path / "warm")
    assert warm.local["r.late"].outcome == "pass" and marker.read_text() == "xx"
    cold, marker = _ends_before_its_first_claim(tmp_path / "cold", {"VERIFY_WARM_WORKERS": "0"})
    assert cold.local["r.late"].outcome == "crash" and "before running this claim" in cold.local["r.late"].message
    assert marker.read_text() == "x"
