"""Live editing: ``mkdocs serve`` of a tiny project, a snippet saved while chromium shows its page.

Saving a snippet re-runs that file's claims only and reloads the page with the new value; a claim
saved failing shows as 失败 with its message, the terminal names it, and the server keeps answering.
The first two tests are quick (no server, no browser): what the hook does for a rebuild.
"""

from __future__ import annotations

import contextlib
import json
import re
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests._browser import CHROMIUM
from tests._browser import browser as launch_browser
from tests._project import env_for, question_page, settings, tiny_project
from verify import settings as settings_mod
from verify import hooks
from verify.site import rewatch
from verify.site import session

SNIPPET = '''\
from verify.claim import claim

ITEMS = {items!r}


@claim("tiny.len", question="tiny", statement="列表有 {{n}} 个元素。", expect={{"n": {{">=": 1}}}})
def _(ctx):
    return {{"n": len(ITEMS)}}
'''

OTHER = '''\
from verify.claim import claim


@claim("tiny.other", question="tiny", statement="另一个文件的值是 {v}。", expect={"v": "ok"})
def _(ctx):
    return {"v": "ok"}
'''

PAGE = question_page("列表长度 `#!v tiny.len n`。\n\n```claim\ntiny.len\n```\n\n```claim\ntiny.other\n```\n")
VALUE = '.vf-val[data-claim="tiny.len"][data-key="n"]'
CLAIM = "#claim-tiny\\.len"
# The run log line of the session (verify.running.engine): how many claims one verification ran.
RAN = re.compile(r"verify: running (\d+) claim\(s\) from (\d+) snippet file\(s\)")


def live_project(root: Path, items: list[int]) -> Path:
    return tiny_project(root, snippet=SNIPPET.format(items=items), page=PAGE,
                        extra={"snippets/tiny/other.py": OTHER})


def save(root: Path, items: list[int]) -> None:
    (root / "snippets/tiny/basic.py").write_text(SNIPPET.format(items=items), encoding="utf-8")


class Served:
    """A running ``mkdocs serve``: its base URL and every line it has printed so far."""

    def __init__(self, proc: subprocess.Popen[str], url: str):
        self.proc, self.url = proc, url
        self.lines: list[str] = []
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.lines.append(line)

    def close(self) -> None:
        """After the process has ended: the last lines read, the pipe closed."""
        self._reader.join(timeout=10)
        assert self.proc.stdout is not None
        self.proc.stdout.close()

    def output(self, since: int = 0) -> str:
        return "".join(self.lines[since:])

    def get(self, path: str, timeout: float = 10) -> bytes:
        with urllib.request.urlopen(self.url + path, timeout=timeout) as resp:
            return bytes(resp.read())

    def ledger(self) -> dict[str, dict[str, Any]]:
        return {row["id"]: row for row in json.loads(self.get("/evidence.json"))["claims"]}

    def ran(self, since: int = 0) -> list[tuple[int, int]]:
        """(claims, snippet files) of every verification that ran claims, in the output since line ``since``."""
        return [(int(m[1]), int(m[2])) for m in RAN.finditer(self.output(since))]


def stop(proc: subprocess.Popen[str], timeout: float = 20) -> None:
    """Ctrl-C, what a user does (MkDocs then removes its temporary site); killed if it lingers."""
    proc.send_signal(signal.SIGINT)
    try:
        proc.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@contextlib.contextmanager
def mkdocs_serve(root: Path, *options: str, timeout: float = 120) -> Iterator[Served]:
    """``mkdocs serve`` of ``root`` on a free loopback port, once it answers; stopped with Ctrl-C after."""
    port = _free_port()
    cmd = [sys.executable, "-m", "mkdocs", "serve", "--dev-addr", f"127.0.0.1:{port}", *options]
    env = dict(env_for(root), PYTHONUNBUFFERED="1")
    proc = subprocess.Popen(cmd, cwd=root, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    served = Served(proc, f"http://127.0.0.1:{port}")
    try:
        deadline = time.monotonic() + timeout
        while True:
            if proc.poll() is not None:
                time.sleep(0.2)  # let the reader take the last lines
                pytest.fail(f"mkdocs serve exited with {proc.returncode}:\n{served.output()}")
            try:
                served.get("/")
                break
            except OSError:
                if time.monotonic() > deadline:
                    pytest.fail(f"mkdocs serve did not answer within {timeout} s:\n{served.output()}")
                time.sleep(0.2)
        yield served
    finally:
        stop(proc)
        served.close()


def wait_for_value(page: Any, text: str, timeout_s: float = 30) -> None:
    page.wait_for_function(f"document.querySelector({json.dumps(VALUE)})?.textContent === {json.dumps(text)}",
                           timeout=timeout_s * 1000)


def reloaded(page: Any) -> bool:
    """Whether the page was loaded again since :func:`mark_loaded` (a live update, not a patched DOM)."""
    return bool(page.evaluate("window.__servedBefore === undefined"))


def message(page: Any) -> str | None:
    """The failure message in the claim's details (shipped as text/html that the site's script unpacks)."""
    return page.locator(f"{CLAIM} script.vf-body-src").evaluate(
        "el => { const t = document.createElement('template'); t.innerHTML = el.textContent;"
        " return t.content.querySelector('.vf-msg')?.textContent ?? null; }")


def mark_loaded(page: Any) -> None:
    """Mark the page as loaded, once it has settled: on a busy machine a reload the previous rebuild started may
    still land just now, and marking a page that is navigating away fails (its script context is destroyed)."""
    from playwright.sync_api import Error  # noqa: PLC0415

    for _ in range(20):
        try:
            page.wait_for_load_state("load")
            page.evaluate("window.__servedBefore = true")
            return
        except Error as exc:
            if "Execution context was destroyed" not in str(exc):
                raise
            time.sleep(0.25)
    raise AssertionError("the page kept reloading: no rebuild settled within 20 tries")


@pytest.fixture(scope="module")
def browser():
    if not Path(CHROMIUM).exists():
        pytest.fail("Debian chromium is not installed: `make system-deps` installs it")
    with launch_browser() as chromium:
        yield chromium


def test_each_build_compares_the_sources_again_however_soon_it_starts(tmp_path, monkeypatch):
    root = live_project(tmp_path, [1, 2, 3])
    monkeypatch.setattr(settings_mod, "_site", settings(root))
    monkeypatch.setattr(session, "_current", None)
    monkeypatch.setattr(session, "RECHECK_S", 3600.0)  # however long the fences of one build share a session
    hooks.on_pre_build(config={})
    first = session.get()
    assert first.outcome.local["tiny.len"].observed == {"n": 3}
    save(root, [1, 2, 3, 4])
    assert session.get() is first  # the fences of one build share one session
    hooks.on_pre_build(config={})  # the rebuild `mkdocs serve` starts as soon as it sees the save
    again = session.get()
    assert again is not first and again.outcome.local["tiny.len"].observed == {"n": 4}
    assert again.outcome.ran == ["tiny.len"]  # tiny.other (another file) came from the cache


class _Server:
    def __init__(self) -> None:
        self.watched: list[str] = []

    def watch(self, path: str) -> None:
        self.watched.append(path)


@pytest.mark.parametrize("strict", [False, True])
def test_serve_watches_the_snippets_and_warns_of_strict_mode(tmp_path, monkeypatch, caplog, strict):
    root = live_project(tmp_path, [1])
    (root / "evidence").mkdir()
    monkeypatch.setattr(settings_mod, "_site", settings(root))
    monkeypatch.setattr(rewatch.Rewatch, "start", lambda self: self)  # no MkDocs watcher to look at
    server = _Server()
    with caplog.at_level("WARNING", logger="mkdocs.verify"):
        assert hooks.on_serve(server, config={"strict": strict}, builder=None) is server
    # first the folder whose file asks for a rebuild when a watched folder comes back (verify.site.rewatch.Rewatch)
    assert server.watched[1:] == [str(root / "snippets"), str(root / "evidence")]
    assert ("serving in strict mode" in caplog.text) is strict


def test_serve_watches_an_evidence_folder_that_does_not_exist_yet(tmp_path, monkeypatch):
    root = live_project(tmp_path, [1])
    assert not (root / "evidence").exists()
    monkeypatch.setattr(settings_mod, "_site", settings(root))
    monkeypatch.setattr(rewatch.Rewatch, "start", lambda self: self)
    server = _Server()
    hooks.on_serve(server, config={"strict": False}, builder=None)
    assert str(root / "evidence") in server.watched and (root / "evidence").is_dir()


@pytest.mark.browser
@pytest.mark.slow
def test_saving_a_snippet_reruns_its_claims_and_reloads_the_page(tmp_path, browser):
    root = live_project(tmp_path, [1, 2, 3])
    with mkdocs_serve(root, "--no-strict") as served:
        assert served.ran() == [(2, 2)], served.output()  # the first build: both files, nothing cached
        other = served.ledger()["tiny.other"]
        assert other["status"] == "verified-here" and other["date"] and other["duration_s"] is not None
        page = browser.new_page()
        page.goto(served.url + "/questions/tiny/")
        assert page.locator(VALUE).first.text_content() == "3"

        # a value the snippet observes changes: the page reloads and shows it
        mark_loaded(page)
        start = len(served.lines)
        save(root, [1, 2, 3, 4])
        wait_for_value(page, "4")
        assert reloaded(page)
        assert page.locator(f"{CLAIM}").get_attribute("data-status") == "verified-here"
        assert served.ran(start) == [(1, 1)], served.output(start)  # tiny.len alone, from basic.py alone

        # saved failing: 失败 with its message on the page, the claim named in the terminal, the server alive
        mark_loaded(page)
        start = len(served.lines)
        save(root, [])
        wait_for_value(page, "0")
        assert reloaded(page)
        assert page.locator(CLAIM).get_attribute("data-status") == "failed"
        assert page.locator(f"{CLAIM} .vf-mark").text_content() == "失败"
        assert message(page) == "n: expected >= 1, observed 0"
        log = served.output(start)
        assert "ERROR" in log and "tiny.len (docs/questions/tiny.md) [snippets/tiny/basic.py]" in log, log
        assert served.proc.poll() is None
        assert "tiny.len" in served.get("/questions/tiny/").decode("utf-8")
        assert served.ledger()["tiny.len"]["status"] == "failed"

        # fixed again: verified, with the new value
        mark_loaded(page)
        start = len(served.lines)
        save(root, [1, 2, 3, 4, 5])
        wait_for_value(page, "5")
        assert reloaded(page)
        assert page.locator(CLAIM).get_attribute("data-status") == "verified-here"
        assert served.ran(start) == [(1, 1)], served.output(start)

        # the other file's claim never ran again: its evidence is the first build's, date and duration alike
        again = served.ledger()["tiny.other"]
        assert (again["date"], again["duration_s"], again["snippet_hash"]) == \
            (other["date"], other["duration_s"], other["snippet_hash"])
        assert served.ran() == [(2, 2), (1, 1), (1, 1), (1, 1)], served.output()
        page.close()
