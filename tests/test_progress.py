"""What `verify run` shows while it runs, and how two verifications on one machine share it."""

from __future__ import annotations

import io
import threading

from rich.console import Console

from tests._project import settings, write
from tests.test_runner import HEADER, _claim
from verify.core.records import Evidence, Outcome, Provenance
from verify.cli.progress import RunProgress
from verify.running import engine, quiet
from verify.running.shards import Durations
from verify.storage import scan


def _registry(tmp_path):
    root = write(tmp_path, {"snippets/q/a.py": HEADER.replace("'r'", "'q'") + _claim("q.a", "return {'x': 1}")
                            + _claim("q.b", "return {'x': 1}")})
    reg = scan.load_registry(settings(root))
    return reg, [reg.claims["q.a"], reg.claims["q.b"]]


def _record(cid: str, outcome: Outcome) -> Evidence:
    return Evidence(id=cid, question="q", statement="s", kind="fact", snippet="snippets/q/a.py", line=1,
                    snippet_hash="h", expected="", needs=(), outcome=outcome, message="", observed={}, output="",
                    traceback="", duration_s=1.0, provenance=Provenance())


def test_plain_lines_count_claims_failures_and_time_left_from_recorded_durations(tmp_path):
    reg, specs = _registry(tmp_path)
    out = io.StringIO()
    durations = Durations({"q.a": 30.0, "q.b": 90.0}, {"snippets/q/a.py": 122.0})
    show = RunProgress(Console(file=out, force_terminal=False, width=200), durations, reg)
    show.start(specs)
    # two ordinary claims run two at a time: (30 + 90 + the file's 2 s start-up) / 2
    assert "running 2 claim(s); recorded durations say about 1 min 01 s of work" in out.getvalue()
    show.done("q.a", _record("q.a", Outcome.FAIL))
    line = out.getvalue().splitlines()[-1]
    assert "fail q.a" in line and "[1/2, 1 failed, about" in line
    show.done("q.b", _record("q.b", Outcome.PASS))
    assert "[2/2, 1 failed, about 0 s left]" in out.getvalue()


def test_on_a_terminal_a_bar_shows_claims_and_failures(tmp_path):
    reg, specs = _registry(tmp_path)
    out = io.StringIO()
    show = RunProgress(Console(file=out, force_terminal=True, width=160), Durations({}, {}), reg)
    show.start(specs)
    show.done("q.a", _record("q.a", Outcome.ERROR))
    show.bar.refresh()  # type: ignore[union-attr]
    show.close()
    text = out.getvalue()
    assert "1/2" in text and "1 failed" in text and "q.a" in text and "left" in text


def test_a_performance_claim_waits_for_other_work_on_the_machine(tmp_path, monkeypatch):
    calls: list[tuple[str, bool]] = []
    real = quiet.hold

    def spy(measuring: bool):
        calls.append(("hold", measuring))
        return real(measuring)

    root = write(tmp_path, {"snippets/r/a.py": HEADER + _claim("r.fact", "return {'x': 1}")
                            + _claim("r.perf", "return {'x': 1}", kind="'perf'")})
    monkeypatch.setattr(quiet, "hold", spy)
    out = engine.verify(settings(root), jobs=1)
    monkeypatch.setattr(quiet, "hold", real)
    assert out.local["r.perf"].outcome is Outcome.PASS
    assert calls == [("hold", False), ("hold", True)]  # ordinary claims share the machine, timing has it alone

    # another verification holds the machine shared: the measuring side waits until it lets go
    entered = threading.Event()
    with quiet.hold(measuring=False):
        def measure() -> None:
            with quiet.hold(measuring=True):
                entered.set()

        worker = threading.Thread(target=measure)
        worker.start()
        assert not entered.wait(0.5)
    assert entered.wait(10)
    worker.join()
