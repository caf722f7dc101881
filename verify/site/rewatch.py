"""Keeping ``mkdocs serve`` watching folders that are deleted, or made, while it serves."""

from __future__ import annotations

import atexit
import logging
import os
import shutil
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from verify.storage.fs import atomic_write_text

log = logging.getLogger("mkdocs.verify")


class Rewatch:
    """Keeps the server watching folders that are deleted, or made, while it serves.

    MkDocs' watcher polls each folder it watches. When it finds one gone it stops watching it for
    good, and it ignores the folder's own deletion: the pages went on showing deleted evidence, and
    evidence (or a ``verify serve`` stamp) written into the folder made again never showed. Every
    ``every`` seconds this checks each folder: one whose watch has stopped is let go and watched again
    as soon as it exists (one made after the server started is watched from then on), and the site is
    rebuilt (a file written in a folder of its own, which the server watches too), so that the pages
    show the files as they are now.
    """

    def __init__(self, server: Any, folders: list[Path], every: float = 0.5,
                 outdated: Callable[[], bool] = lambda: False):
        self.server, self.every, self.outdated = server, every, outdated
        self.folders = [os.path.abspath(folder) for folder in folders]
        self.signal = Path(tempfile.mkdtemp(prefix="verify-watch-"))
        atexit.register(shutil.rmtree, self.signal, ignore_errors=True)
        server.watch(str(self.signal))
        self.armed: dict[str, bool] = {}
        for folder in self.folders:
            self.armed[folder] = os.path.isdir(folder)
            if self.armed[folder]:
                server.watch(folder)

    def _watching(self, folder: str) -> bool:
        return any(e.watch.path == folder and e.is_alive() for e in list(self.server.observer.emitters))

    def check(self) -> bool:
        """One look at every folder (the server's watcher running); whether the site was asked to rebuild."""
        changed = False
        for folder in self.folders:
            if self.armed[folder] and not self._watching(folder):
                self.server.unwatch(folder)  # gone: MkDocs' watcher stopped when it found it missing
                self.armed[folder], changed = False, True
            if not self.armed[folder] and os.path.isdir(folder):
                self.server.watch(folder)
                self.armed[folder], changed = True, True
        if changed:
            self.rebuild()
        return changed

    def rebuild(self) -> None:
        atomic_write_text(self.signal / "rebuild", str(time.time_ns()))

    def run(self) -> None:
        observer = self.server.observer
        while not observer.is_alive():  # the server starts watching once its first build is done
            time.sleep(self.every)
        time.sleep(self.every)  # its watchers have taken their first look: what changed before is not news to them
        if self.outdated():  # written during the first build (verify serve's runs finishing), after it read them
            self.rebuild()
        while observer.is_alive():
            time.sleep(self.every)
            try:
                self.check()
            except Exception as exc:  # noqa: BLE001  (a watch that could not be re-armed this time: try again)
                log.debug("verify: could not check the watched folders: %s", exc)

    def start(self) -> Rewatch:
        threading.Thread(target=self.run, name="verify-rewatch", daemon=True).start()
        return self
