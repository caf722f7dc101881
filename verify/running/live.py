"""Verification behind a server: this machine's claims run while ``verify serve`` already serves pages.

The server's builds run nothing (``VERIFY_NO_RUN``) and show, for a claim not yet run here, the
committed records of other machines, labelled with them, or 构建机验证中. This loop runs every claim
that has no current record here (a pass, or the failure of its current code), touches a stamp
that the server watches every few seconds as claims finish and once more at the end, and then
waits: a saved snippet changes a claim's key, and only that claim runs again. Performance claims
still run alone: the server's builds hold the machine's timing lock shared, like ordinary claims.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path

from verify.core.records import Evidence
from verify.core.registry import ClaimSpec
from verify.running import engine
from verify.settings import Settings
from verify.storage import scan

STAMP_EVERY_S = 10.0
POLL_S = 1.0
REPORT_HINT = ("本机有论断失败：页面上标为 失败，附上观测值。运行 `verify report` 写出本机记录的 bundle，"
               "附在 issue 里报告（it holds this machine's records, failures included）。")


def stamp_path(settings: Settings) -> Path:
    return settings.live_stamp


def touch(path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(str(time.time_ns()), encoding="utf-8")


class StampProgress:
    """Touches the server's stamp as claims finish (at most every few seconds) and says what failed."""

    def __init__(self, path: Path, echo: Callable[[str], None], every: float = STAMP_EVERY_S):
        self.path, self.echo, self.every = path, echo, every
        self.last = 0.0
        self.count = self.total = 0

    def start(self, specs: list[ClaimSpec]) -> None:
        self.total = len(specs)
        self.echo(f"verify serve: running {self.total} claim(s) on this machine behind the server")

    def waiting(self, message: str) -> None:
        self.echo(f"verify serve: {message}")

    def done(self, claim_id: str, record: Evidence) -> None:
        self.count += 1
        if record.bad:
            self.echo(f"verify serve: 失败 {claim_id} ({record.snippet}): {record.outcome}: {record.message[:300]}")
        if time.monotonic() - self.last >= self.every:
            touch(self.path)
            self.last = time.monotonic()


def behind(settings: Settings, alive: Callable[[], bool], echo: Callable[[str], None],
           after_first: Callable[[], None] | None = None) -> None:
    """Run what has not run here, then again whenever a claim's code changes, while ``alive()``."""
    keys: dict[str, str] | None = None
    path = stamp_path(settings)
    while alive():
        current = scan.load_registry(settings).keys
        if current == keys:
            time.sleep(POLL_S)
            continue
        keys = current
        out = engine.verify(settings, live=True, progress=StampProgress(path, echo))
        touch(path)
        bad = [f for f in out.failures if f.claim != "-"]
        echo(f"verify serve: {len(out.ran)} claim(s) ran here in {out.seconds:.0f} s; "
             f"{len(bad)} failing" + (f" ({', '.join(f.claim for f in bad[:5])})" if bad else ""))
        if bad:
            echo(REPORT_HINT)
        if after_first is not None:
            after_first()
            after_first = None
            touch(path)
