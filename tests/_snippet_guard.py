"""Run a module or code with a watch on snippet code: ``python -m tests._snippet_guard REPORT (-c CODE | MODULE ARGS...)``.

An audit hook sees every code object this process executes (an import, ``exec_module`` of a file
loaded by path, ``exec``) and every import by name; at exit, REPORT lists those of the checkout's
``snippets/`` (a JSON list, empty when none ran). Only this process counts: the claim runner's
workers, which do run snippets, are other processes.
"""

from __future__ import annotations

import atexit
import json
import os
import runpy
import sys
from pathlib import Path

SNIPPETS = os.path.join(str(Path(__file__).resolve().parent.parent), "snippets") + os.sep


def install(report: Path) -> None:
    pid = os.getpid()
    found: set[str] = set()

    def hook(event: str, args: tuple) -> None:
        if os.getpid() != pid:  # a forked child is not the process watched
            return
        if event == "exec":
            name = getattr(args[0], "co_filename", "")
            if isinstance(name, str) and os.path.abspath(name).startswith(SNIPPETS):
                found.add(f"executed {os.path.relpath(name, os.path.dirname(SNIPPETS.rstrip(os.sep)))}")
        elif event == "import" and isinstance(args[0], str) and args[0].split(".")[0] == "snippets":
            found.add(f"imported {args[0]}")

    def write() -> None:
        if os.getpid() == pid:
            report.write_text(json.dumps(sorted(found)), encoding="utf-8")

    sys.addaudithook(hook)
    atexit.register(write)


if __name__ == "__main__":
    report, rest = Path(sys.argv[1]), sys.argv[2:]
    install(report)
    if rest[:1] == ["-c"]:
        sys.argv = ["-c", *rest[2:]]
        exec(compile(rest[1], "<snippet-guard>", "exec"), {"__name__": "__main__"})
    else:
        sys.argv = rest
        runpy.run_module(rest[0], run_name="__main__", alter_sys=True)
