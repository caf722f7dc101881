"""``verify serve`` survives its environment: a cache it cannot write, folders deleted and made again
while it serves, a port already taken; and a site build's files are readable by others (0644).

Each test builds the hostile situation for real (a folder made unwritable, a folder deleted while
the server watches it, a socket listening on the port) and looks at what a user sees: the terminal's
lines, the exit code, the pages and ``evidence.json`` over HTTP.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import socket
import stat
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from tests._project import cold_cache, env_for, question_page, tiny_project
from tests.test_serve import Served, _free_port, mkdocs_serve, stop
from verify.core import states
from verify.running import live, record
from verify.settings import Settings
from verify.storage import fs

QUICK = '''\
from verify.claim import claim


@claim("tiny.v", question="tiny", statement="值是 {v}。", expect={"v": "ok"})
def _(ctx):
    return {"v": "ok"}
'''

SLOW = '''\
import time
from verify.claim import claim


@claim("tiny.v", question="tiny", statement="值是 {v}。", expect={"v": "ok"})
def _(ctx):
    time.sleep(3)  # long enough to delete the cache while it runs
    return {"v": "ok"}
'''

PAGE = question_page("这台机器上的值 `#!v tiny.v v`。\n\n```claim\ntiny.v\n```\n")
#: the claim's marker after its sentence: its status and the words it shows
MARK = re.compile(r'<span class="vf-mark vf-\w+" data-status="([\w-]+)" title="[^"]*" data-search-exclude>([^<]*)<')
OTHER = "cpu-other-machine"


# --- making a folder unwritable, for root too ----------------------------------------------------

def _chattr(flag: str, folder: Path) -> bool:
    return bool(shutil.which("chattr")) and subprocess.run(["chattr", flag, str(folder)],
                                                           capture_output=True).returncode == 0


@contextlib.contextmanager
def unwritable(folder: Path) -> Iterator[Callable[[], None]]:
    """``folder`` (made if missing) refuses new files until the yielded function is called, or the block ends.

    Its mode is 0555; root ignores modes, so as root it is made immutable (``chattr +i``), which root's
    writes obey too. Skipped where neither holds.
    """
    folder.mkdir(parents=True, exist_ok=True)
    folder.chmod(0o555)
    immutable = fs.unwritable(folder) is None and _chattr("+i", folder)
    state = {"on": True}

    def restore() -> None:
        if state["on"]:
            state["on"] = False
            if immutable:
                _chattr("-i", folder)
            folder.chmod(0o755)

    try:
        if fs.unwritable(folder) is None:
            pytest.skip("no way to make a folder unwritable here (root without chattr +i)")
        yield restore
    finally:
        restore()


def _serve(root: Path, cache: Path, port: int, *args: str) -> subprocess.Popen[str]:
    env = dict(env_for(root), VERIFY_CACHE_DIR=str(cache), VERIFY_JOBS="1", PYTHONUNBUFFERED="1")
    return subprocess.Popen([sys.executable, "-m", "verify.cli", "serve", "--no-bench", "--port", str(port), *args],
                            cwd=root, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)


def _until(what: str, test: Callable[[], object], served: Served | None = None, timeout: float = 60) -> object:
    deadline = time.monotonic() + timeout
    while True:
        try:
            value = test()
        except OSError:
            value = None
        if value:
            return value
        if served is not None and served.proc.poll() is not None:
            time.sleep(0.2)  # the reader takes the last lines
            pytest.fail(f"{what}: the server exited with {served.proc.returncode}:\n{served.output()[-4000:]}")
        assert time.monotonic() < deadline, f"{what} never happened:\n{served.output()[-4000:] if served else ''}"
        time.sleep(0.25)


def _mark(served: Served) -> tuple[str, str] | None:
    found = MARK.search(served.get("/questions/tiny/").decode())
    return found.groups() if found else None


@contextlib.contextmanager
def verify_serve(root: Path, cache: Path) -> Iterator[Served]:
    port = _free_port()
    proc = _serve(root, cache, port)
    served = Served(proc, f"http://127.0.0.1:{port}")
    try:
        _until("a first page", lambda: _mark(served), served)
        yield served
        assert proc.poll() is None, served.output()[-4000:]  # still serving
    finally:
        stop(proc, timeout=30)
        served.close()


# --- 1. a cache that cannot be written --------------------------------------------------------------

def test_the_runner_keeps_going_when_the_cache_cannot_be_written_and_runs_once_it_can(tmp_path):
    root = tiny_project(tmp_path / "p", snippet=QUICK, page=PAGE)
    cache = cold_cache(tmp_path / "cache")
    env = dict(env_for(root), VERIFY_CACHE_DIR=str(cache), VERIFY_JOBS="1", VERIFY_LIVE_DIR=str(tmp_path / "live"))
    settings = Settings.for_root(root, environ=env)
    lines: list[str] = []
    seen: list[bool] = []  # before each look: whether the server's pages were told 未能在本机验证
    with unwritable(cache) as restore:
        turns = iter(range(5))

        def alive() -> bool:
            # look 0 tries to run; 1 and 2 find the cache still unwritable and wait; before 3 it is made
            # writable again, and 3 runs the claims; 4 ends
            turn = next(turns)
            seen.append(settings.live_stopped.is_file())
            if turn == 3:
                restore()
            return turn < 4

        live.behind(settings, alive=alive, echo=lines.append)
    told = [line for line in lines if "cannot be written" in line]
    assert len(told) == 1 and str(cache) in told[0] and "未能在本机验证" in told[0], lines
    assert seen == [False, True, True, True, False], lines
    assert settings.live_stamp.is_file()
    assert any("can be written again" in line for line in lines), lines
    assert any("1 claim(s) ran here" in line for line in lines), lines


def test_verify_serve_keeps_serving_when_the_cache_cannot_be_written(tmp_path):
    root = tiny_project(tmp_path / "p", snippet=QUICK, page=PAGE)
    cache = cold_cache(tmp_path / "cache")
    with unwritable(cache), verify_serve(root, cache) as served:
        _until("未能在本机验证 on the page", lambda: _mark(served) == ("not-run", "未能在本机验证"), served)
        time.sleep(2)  # the runner looks again every second: it says so once, not each time
        told = [line for line in served.output().splitlines() if "cannot be written" in line]
        assert len(told) == 1 and str(cache) in told[0], served.output()
        assert "Traceback" not in served.output()


def test_a_claim_not_run_here_reads_as_the_server_can_say_it():
    row = states.get(states.NOT_RUN)
    assert [row.words(m).mark for m in ("", states.LIVE_RUNNING, states.LIVE_STOPPED)] == \
        ["未运行", "构建机验证中", "未能在本机验证"]
    assert states.get(states.FAILED).words(states.LIVE_STOPPED).label == "失败"  # only words that differ change


# --- 2. folders deleted and made again while serving ------------------------------------------------

def _record_as_another_machine(root: Path, tmp: Path) -> bytes:
    """The claims recorded with a cache of their own and filed as another CPU's: that file's bytes."""
    env = dict(env_for(root), VERIFY_CACHE_DIR=str(cold_cache(tmp / "other-cache")))
    path, _ = record.record(Settings.for_root(root, environ=env), jobs=1, echo=lambda _: None)
    data = json.loads(path.read_text())
    path.unlink()
    data["device_key"] = OTHER
    for rec in data["claims"].values():
        rec["provenance"].update(device_key=OTHER, device_name="Other CPU")
    return json.dumps(data).encode()


def test_evidence_deleted_and_made_again_while_serving_shows_as_it_is_now(tmp_path):
    root = tiny_project(tmp_path / "p", snippet=QUICK, page=PAGE)
    other = _record_as_another_machine(root, tmp_path)
    evidence = root / "evidence"
    evidence.mkdir(exist_ok=True)
    (evidence / f"{OTHER}.json").write_bytes(other)

    def elsewhere(served: Served) -> list[str]:
        return [e["device_key"] for e in served.ledger()["tiny.v"]["elsewhere"]]

    with mkdocs_serve(root, "--no-strict") as served:
        assert elsewhere(served) == [OTHER]
        shutil.rmtree(evidence)
        _until("the deleted evidence gone from the site", lambda: elsewhere(served) == [], served, timeout=30)
        evidence.mkdir()
        (evidence / f"{OTHER}.json").write_bytes(other)
        _until("the evidence made again shown", lambda: elsewhere(served) == [OTHER], served, timeout=30)
        assert served.proc.poll() is None


def test_a_cache_deleted_while_claims_run_still_shows_them_when_they_pass(tmp_path):
    root = tiny_project(tmp_path / "p", snippet=SLOW, page=PAGE)
    cache = cold_cache(tmp_path / "cache")
    with verify_serve(root, cache) as served:
        _until("the runner starting", lambda: "running 1 claim(s)" in served.output(), served)
        assert _mark(served)[0] == "not-run"
        shutil.rmtree(cache)  # while the claim runs
        _until("this machine's result", lambda: _mark(served) == ("verified-here", "构建机已验证"), served)
        # deleted again once everything ran: the runner notices and runs the claim again
        start = len(served.lines)
        shutil.rmtree(cache)
        _until("the claim run again", lambda: "1 claim(s) ran here" in served.output(start), served)
        assert "was deleted or replaced" in served.output(start)
        assert list((cache / "evidence").rglob("*.json"))  # the cache holds its record again
        _until("this machine's result", lambda: _mark(served) == ("verified-here", "构建机已验证"), served)


# --- 3. a port already taken -------------------------------------------------------------------------

def test_a_second_verify_serve_on_a_taken_port_says_so_in_one_line(tmp_path):
    root = tiny_project(tmp_path / "p", snippet=QUICK, page=PAGE)
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        proc = _serve(root, tmp_path / "cache", port)
        try:
            out, _ = proc.communicate(timeout=120)
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
    assert proc.returncode == 1, out
    lines = out.strip().splitlines()
    assert len(lines) == 1 and str(port) in lines[0] and "--port" in lines[0], out
    assert "Traceback" not in out


def test_a_second_verify_serve_started_while_the_first_builds_says_so_in_one_line(tmp_path):
    """MkDocs binds its port after its first build: a second verify serve started meanwhile found the port
    free, built the site too, and ended in MkDocs' traceback. The first keeps serving."""
    root = tiny_project(tmp_path / "p", snippet=QUICK, page=PAGE)
    cache = cold_cache(tmp_path / "cache")
    port = _free_port()
    first = Served(_serve(root, cache, port), f"http://127.0.0.1:{port}")
    try:
        _until("the first started", lambda: "verify serve: http://" in first.output(), first)
        assert not _answers(first)  # still building: nothing listens on the port yet
        second = _serve(root, cache, port)
        out, _ = second.communicate(timeout=120)
        assert second.returncode == 1, out
        lines = out.strip().splitlines()
        assert len(lines) == 1 and str(port) in lines[0] and "--port" in lines[0], out
        _until("the first serving", lambda: _mark(first), first)
        assert first.proc.poll() is None
    finally:
        stop(first.proc, timeout=30)
        first.close()


def test_a_server_that_takes_the_port_during_the_first_build_is_one_line_not_a_traceback(tmp_path):
    root = tiny_project(tmp_path / "p", snippet=QUICK, page=PAGE)
    port = _free_port()
    served = Served(_serve(root, cold_cache(tmp_path / "cache"), port), f"http://127.0.0.1:{port}")
    try:
        _until("verify serve started", lambda: "verify serve: http://" in served.output(), served)
        with socket.socket() as taken:  # MkDocs is still building: the port is free until now
            taken.bind(("127.0.0.1", port))
            taken.listen()
            assert served.proc.wait(timeout=120) == 1, served.output()
    finally:
        if served.proc.poll() is None:
            stop(served.proc, timeout=30)
        served.close()
    out = served.output()
    assert "Traceback" not in out and "Errno" not in out, out
    told = [line for line in out.splitlines() if "cannot serve on" in line]
    assert len(told) == 1 and str(port) in told[0] and "--port" in told[0], out


def _answers(served: Served) -> bool:
    try:
        served.get("/")
    except OSError:
        return False
    return True


# --- 4. built files are readable by others ----------------------------------------------------------

def test_every_file_a_site_build_writes_is_mode_0644(tmp_path):
    root = tiny_project(tmp_path / "p", snippet=QUICK, page=PAGE)
    env = dict(env_for(root), VERIFY_CACHE_DIR=str(cold_cache(tmp_path / "cache")))
    out = subprocess.run([sys.executable, "-m", "mkdocs", "build", "-q"], cwd=root, env=env, umask=0o022,
                         capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stdout + out.stderr
    site = root / "site"
    ours = {"evidence.json", "quiz.json", "interview-quiz.apkg"}
    assert ours <= {p.name for p in site.iterdir()}
    modes = {p.relative_to(site).as_posix(): stat.S_IMODE(p.stat().st_mode) for p in site.rglob("*") if p.is_file()}
    assert {name: oct(mode) for name, mode in modes.items() if mode != 0o644} == {}
    assert all(os.access(site / name, os.R_OK) for name in ours)
