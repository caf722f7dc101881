"""Verification behind a server: this machine's claims run while ``verify serve`` already serves pages.

The server's builds run nothing (``VERIFY_NO_RUN``) and show, for a claim not yet run here, the
committed records of other machines, labelled with them, or 构建机验证中. This loop runs every claim
that has no current record here (a pass, or the failure of its current code), touches a stamp
that the server watches every few seconds as claims finish and once more at the end, and then
waits: a saved snippet changes a claim's key, and only that claim runs again; a cache folder that
was deleted runs what it held again. Performance claims still run alone: the server's builds hold
the machine's timing lock shared, like ordinary claims.

A cache that cannot be written stops this machine's runs, not the server: the terminal says so
once, naming the folder; a note beside the stamp (:attr:`Settings.live_stopped`) makes the pages
say 未能在本机验证 where they said 构建机验证中; and the claims run as soon as the folder can be
written again.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path

from verify.core.records import Evidence
from verify.shown import safe
from verify.core.registry import ClaimSpec
from verify.running import engine
from verify.settings import Settings
from verify.storage import fs, scan

STAMP_EVERY_S = 10.0
POLL_S = 1.0
REPORT_HINT = ("本机有论断失败：页面上标为 失败，附上观测值。运行 `verify report` 写出本机记录的 bundle，"
               "附在 issue 里报告（it holds this machine's records, failures included）。")


def stamp_path(settings: Settings) -> Path:
    return settings.live_stamp


def touch(path: Path) -> bool:
    """Write ``path`` anew (the server rebuilds when it sees it); whether that could be done."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(str(time.time_ns()), encoding="utf-8")
    except OSError:
        return False
    return True


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
            self.echo(f"verify serve: 失败 {safe(claim_id)} ({safe(record.snippet)}): {record.outcome}: "
                      f"{safe(record.message, 300)}")
        if time.monotonic() - self.last >= self.every:
            touch(self.path)
            self.last = time.monotonic()


def _identity(folder: Path) -> tuple[int, int] | None:
    """Which folder is at ``folder`` now (device, inode); ``None`` when there is none."""
    try:
        st = folder.stat()
    except OSError:
        return None
    return st.st_dev, st.st_ino


def _reason(exc: OSError) -> str:
    return f"{exc.strerror or exc}: {exc.filename}" if exc.filename else str(exc.strerror or exc)


def cannot_run(settings: Settings, reason: str) -> str:
    """What the terminal says, once, when this machine's claims cannot run because of the cache."""
    return (f"verify serve: the cache folder {safe(settings.cache_dir, 500)} cannot be written "
            f"({safe(reason, 500)}). This machine's claims cannot run; the server keeps serving, and pages show "
            "未能在本机验证 where they would show this machine's result. Make the folder writable (or point "
            "VERIFY_CACHE_DIR at one that is): the claims run as soon as it can be written.")


def _note_stopped(settings: Settings, reason: str | None) -> None:
    """Write (``reason``) or remove (``None``) the note that makes the server's pages say 未能在本机验证."""
    try:
        if reason is None:
            settings.live_stopped.unlink(missing_ok=True)
        else:
            settings.live_stopped.parent.mkdir(parents=True, exist_ok=True)
            settings.live_stopped.write_text(reason + "\n", encoding="utf-8")
    except OSError:
        pass


def behind(settings: Settings, alive: Callable[[], bool], echo: Callable[[str], None],
           after_first: Callable[[], None] | None = None) -> None:
    """Run what has not run here while ``alive()``: at once, then whenever a claim's code changes or the
    cache folder is deleted (or replaced), and, while the cache cannot be written, once it can."""
    keys: dict[str, str] | None = None
    path = stamp_path(settings)
    cache: tuple[int, int] | None = None  # the cache folder that held this machine's records
    stopped: str | None = None  # why the last try could not run: the cache cannot be written
    force = False  # run every claim again: the cache went while they ran, and took their scratch folders
    while alive():
        current = scan.load_registry(settings).keys
        gone = keys is not None and stopped is None and _identity(settings.cache_dir) != cache
        writable = stopped is not None and fs.unwritable(settings.cache_dir) is None
        if current == keys and not gone and not writable:
            time.sleep(POLL_S)
            continue
        if gone:
            echo(f"verify serve: the cache folder {safe(settings.cache_dir, 500)} was deleted or replaced; "
                 "running this machine's claims again")
            touch(path)  # the pages say 构建机验证中 again until they have run
        keys = current
        reason = fs.unwritable(settings.cache_dir)
        out = None
        if reason is None:
            before = _identity(settings.cache_dir)
            try:
                out = engine.verify(settings, live=True, force=force, progress=StampProgress(path, echo))
            except OSError as exc:  # the cache became unwritable (or went) while claims ran
                reason = _reason(exc)
            else:  # records the cache could not keep are shown by no build of the server
                reason = fs.unwritable(settings.cache_dir)
                out = out if reason is None else None
            # deleted while claims ran: what crashed for want of its scratch folder is no failure of its code
            force = reason is None and _identity(settings.cache_dir) != before
            if force:
                cache = before
                continue
        if out is None:
            if stopped is None:
                echo(cannot_run(settings, reason or "unknown"))
            stopped = reason
            _note_stopped(settings, reason)
            touch(path)
            continue
        if stopped is not None:
            echo(f"verify serve: the cache folder {safe(settings.cache_dir, 500)} can be written again")
        stopped = None
        cache = _identity(settings.cache_dir)
        _note_stopped(settings, None)
        touch(path)
        bad = [f for f in out.failures if f.claim != "-"]
        echo(f"verify serve: {len(out.ran)} claim(s) ran here in {out.seconds:.0f} s; "
             f"{len(bad)} failing" + (f" ({', '.join(safe(f.claim) for f in bad[:5])})" if bad else ""))
        if bad:
            echo(REPORT_HINT)
        if after_first is not None:
            first, after_first = after_first, None
            try:
                first()
            except OSError as exc:
                echo(f"verify serve: benchmarks could not run ({safe(_reason(exc), 500)}); the site shows their "
                     "stored results")
            touch(path)
