"""``verify serve``: pages served before this machine has run anything, updated as its claims finish.

The server answers with another machine's committed evidence (labelled as such); the claims run
behind it, and the same page then shows this machine's value; a claim that fails here shows 失败
and the terminal says how to report it. Over HTTP, no browser: what the server sends is the test.
"""

from __future__ import annotations

import json
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

from tests._project import cold_cache, env_for, question_page, tiny_project
from tests.test_serve import Served, _free_port, stop
from verify.running import record
from verify.settings import Settings

SNIPPET = '''\
import time
from verify.claim import claim


@claim("tiny.slow", question="tiny", statement="值是 {n}。", expect={"n": {">=": 1}})
def _(ctx):
    time.sleep(4)  # long enough to see the page before this machine's value arrives
    return {"n": 8}


@claim("tiny.bad", question="tiny", statement="坏的值是 {n}。", expect={"n": 2})
def _(ctx):
    return {"n": 3}
'''
PAGE = question_page("这台机器上的值 `#!v tiny.slow n`。\n\n```claim\ntiny.slow\n```\n\n```claim\ntiny.bad\n```\n")
VALUE = re.compile(r'data-claim="tiny\.slow" data-key="n" data-status="([\w-]+)"[^>]*>(\d+)<')
BAD = re.compile(r'<div class="vf-claim" id="claim-tiny\.bad" data-claim="tiny\.bad" data-status="([\w-]+)"')
OTHER = "cpu-other-machine"


def _other_machine(root: Path, tmp: Path) -> None:
    """Record the claims with a cache of their own, then file them as another CPU that observed 7."""
    env = dict(env_for(root), VERIFY_CACHE_DIR=str(cold_cache(tmp / "other-cache")))
    path, _ = record.record(Settings.for_root(root, environ=env), jobs=1)
    data = json.loads(path.read_text())
    data["device_key"] = OTHER
    for rec in data["claims"].values():
        rec["provenance"].update(device_key=OTHER, device_name="Other CPU")
        rec["observed"]["n"] = 7 if rec["id"] == "tiny.slow" else rec["observed"]["n"]
    path.unlink()
    (root / "evidence" / f"{OTHER}.json").write_text(json.dumps(data))


def _page(served: Served) -> str:
    return served.get("/questions/tiny/").decode()


def _wait(served: Served, test, what: str, timeout: float = 90) -> str:
    deadline = time.monotonic() + timeout
    while True:
        try:
            html = _page(served)
            if test(html):
                return html
        except OSError:
            html = ""
        assert time.monotonic() < deadline, f"{what} never happened:\n{served.output()[-3000:]}"
        time.sleep(0.3)


def test_a_page_shows_another_machines_value_then_this_machines(tmp_path):
    root = tiny_project(tmp_path / "p", snippet=SNIPPET, page=PAGE)
    (root / "evidence").mkdir()
    _other_machine(root, tmp_path)
    port = _free_port()
    env = dict(env_for(root), VERIFY_CACHE_DIR=str(cold_cache(tmp_path / "cache")), VERIFY_JOBS="1",
               PYTHONUNBUFFERED="1")
    proc = subprocess.Popen([sys.executable, "-m", "verify.cli", "serve", "--no-bench", "--port", str(port)],
                            cwd=root, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    served = Served(proc, f"http://127.0.0.1:{port}")
    try:
        first = _wait(served, lambda h: VALUE.search(h) is not None, "a first page")
        assert VALUE.search(first).groups() == ("verified-elsewhere", "7"), first  # the other machine's, labelled
        assert "Other CPU" in first and "他机已验证" in first
        last = _wait(served, lambda h: VALUE.search(h).groups() == ("verified-here", "8"), "this machine's value")
        assert BAD.search(last).group(1) == "failed"
        assert "失败 tiny.bad" in served.output() and "verify report" in served.output()
        assert first != last
    finally:
        stop(proc, timeout=30)
        served.close()
    assert proc.returncode in (0, 130, -signal.SIGINT), served.output()[-3000:]


def test_report_writes_this_machines_records_with_its_failures(tmp_path):
    root = tiny_project(tmp_path / "p", snippet=SNIPPET.replace("time.sleep(4)", "pass"), page=PAGE)
    env = dict(env_for(root), VERIFY_CACHE_DIR=str(cold_cache(tmp_path / "cache")), VERIFY_JOBS="1")
    out = subprocess.run([sys.executable, "-m", "verify.cli", "report", "-o", str(tmp_path / "mine.json")],
                         cwd=root, env=env, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stdout + out.stderr
    data = json.loads((tmp_path / "mine.json").read_text())
    assert data["kind"] == "verify-bundle" and data["claims"]["tiny.bad"]["outcome"] == "fail"
    assert data["claims"]["tiny.slow"]["observed"]["n"] == 8
    assert "1 failing here: tiny.bad" in out.stdout and "verify merge" in out.stdout
