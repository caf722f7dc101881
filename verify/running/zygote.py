"""Warm worker starts: one process imports torch once and forks the worker of each snippet file.

A fresh worker spends about 1.4 s importing torch before its first claim; a cold verification
starts some 140 of them. The zygote does that import once, then for each request forks a child
that becomes the worker exactly as a fresh process would: its own session (so its process
group can be killed), its working directory, its environment, its output in the log file, and
``torch.set_num_threads`` from ``OMP_NUM_THREADS`` (OpenMP read that variable when the zygote
loaded it). The child then runs :func:`verify.running.worker.main` and exits; the zygote reaps
it and reports its exit status. It is single-threaded, so forking is safe, and it exits when
the run that started it is gone (its children then see their parent change and kill their
own process groups, as a worker does).

The workers of snippet files that compile (they or a module they import name ``torch.compile``,
Dynamo or Inductor) fork from a second zygote that has also imported Dynamo and Inductor, which
every such worker did on its first compile; the other workers never see those modules loaded (a
claim that counts the dispatcher's operators would count Inductor's), nor do files with a claim that
needs Triton (Inductor loaded before the pinned Triton is on the path replaces Triton's functions
with stubs that raise). Only claims on the CPU start this way. Performance claims have a zygote of their own, started
with their environment (no thread count): their timings were recorded in fresh processes until
2026-12-07, and four interleaved rounds of all 32 of them, fresh against forked, gave the same
medians within the rounds' spread, while the timed phase of a run went from 80 s to 60 s.
``VERIFY_WARM_WORKERS=0`` turns both off.

Protocol, one JSON object per line: the runner writes ``{"argv", "cwd", "env", "log"}``; the
zygote answers ``{"pid"}`` for each, and ``{"exit": pid, "code"}`` when a child ends (``code``
as :attr:`subprocess.Popen.returncode` gives it: negative for a signal).
"""

from __future__ import annotations

import json
import os
import select
import signal
import subprocess
import sys
import threading
from pathlib import Path
from typing import IO, Any


def _child(request: dict[str, Any], zygote: int, wake: tuple[int, int]) -> None:
    """In the forked child: become a fresh worker, run it, exit. Never returns."""
    code = 1
    try:
        signal.set_wakeup_fd(-1)  # the zygote's way to hear of its children ending, not the worker's
        signal.signal(signal.SIGCHLD, signal.SIG_DFL)
        for fd in wake:
            os.close(fd)
        os.setsid()
        os.chdir(request["cwd"])
        os.environ.clear()
        os.environ.update(request["env"])
        null = os.open(os.devnull, os.O_RDONLY)
        log = os.open(request["log"], os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
        os.dup2(null, 0)
        os.dup2(log, 1)
        os.dup2(log, 2)
        sys.stdin = open(0, closefd=False)  # noqa: SIM115
        sys.stdout = open(1, "w", buffering=1, closefd=False)  # noqa: SIM115
        sys.stderr = open(2, "w", buffering=1, closefd=False)  # noqa: SIM115
        signal.signal(signal.SIGPIPE, signal.SIG_DFL)
        import tempfile  # noqa: PLC0415

        tempfile.tempdir = None  # TMPDIR is this worker's
        import torch  # noqa: PLC0415

        if request["env"].get("OMP_NUM_THREADS", "").isdigit():
            torch.set_num_threads(int(request["env"]["OMP_NUM_THREADS"]))
        from verify.running import worker  # noqa: PLC0415

        argv = list(request["argv"])
        if "--parent" in argv:  # the worker dies with its parent process: here, the zygote
            argv[argv.index("--parent") + 1] = str(zygote)
        sys.argv = ["verify.running.worker", *argv]
        code = worker.main(argv)
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else 1
    except BaseException:  # noqa: BLE001  (the worker's log shows it)
        import traceback  # noqa: PLC0415

        traceback.print_exc()
    finally:
        try:
            sys.stdout.flush()
            sys.stderr.flush()
        finally:
            os._exit(code)


def _send(obj: dict[str, Any]) -> None:
    os.write(1, (json.dumps(obj) + "\n").encode())


def serve(parent: int, compiler: bool = False) -> int:
    """The zygote's loop: fork a worker per request, report each child's end, stop with the parent.

    ``compiler``: Dynamo and Inductor imported after torch, for the workers of files that compile.
    """
    import torch  # noqa: F401, PLC0415  (what every worker imports first: the point of all this)

    from verify.running import worker  # noqa: F401, PLC0415

    if compiler:  # 1.9 s, single-threaded: a compile's worker pool starts with its first compile, in the child
        import torch._dynamo  # noqa: F401, PLC0415
        import torch._inductor.compile_fx  # noqa: F401, PLC0415

    me = os.getpid()
    children: set[int] = set()
    buffer = b""
    stdin = sys.stdin.buffer
    # A child's end wakes the loop at once (SIGCHLD writes to this pipe): waking every 0.2 s to look for ended
    # children left the run waiting 0.1 s on average after each of some 200 workers.
    wake = os.pipe()
    os.set_blocking(wake[1], False)
    signal.signal(signal.SIGCHLD, lambda *_: None)
    signal.set_wakeup_fd(wake[1])
    while os.getppid() == parent:
        ready, _, _ = select.select([stdin, wake[0]], [], [], 1.0)
        if wake[0] in ready:
            os.read(wake[0], 4096)
        if stdin in ready:
            chunk = os.read(stdin.fileno(), 65536)
            if not chunk:
                break
            buffer += chunk
            *lines, buffer = buffer.split(b"\n")
            for line in lines:
                if not line.strip():
                    continue
                request = json.loads(line)
                pid = os.fork()
                if pid == 0:
                    _child(request, me, wake)
                children.add(pid)
                _send({"pid": pid})
        while children:
            pid, status = os.waitpid(-1, os.WNOHANG)
            if pid == 0:
                break
            children.discard(pid)
            _send({"exit": pid, "code": os.waitstatus_to_exitcode(status)})
    return 0


# --- the runner's side ------------------------------------------------------------------------------

class Forked:
    """A worker forked by the zygote, with the part of :class:`subprocess.Popen` the runner uses."""

    def __init__(self, zygote: Zygote, pid: int):
        self._zygote, self.pid = zygote, pid
        self.returncode: int | None = None

    def poll(self) -> int | None:
        if self.returncode is None:
            self.returncode = self._zygote.code(self.pid)
        return self.returncode

    def wait(self, timeout: float | None = None) -> int:
        code = self._zygote.code(self.pid, wait=True, timeout=timeout)
        if code is None:
            raise subprocess.TimeoutExpired(str(self.pid), timeout or 0)
        self.returncode = code
        return code


class Zygote:
    """One zygote process for a run, started on first use; :meth:`start` forks a worker through it.

    ``compiler``: it imports Dynamo and Inductor after torch, for the workers of files that compile.
    """

    def __init__(self, env: dict[str, str], log: Path, compiler: bool = False):
        argv = [sys.executable, "-m", "verify.running.zygote", "--parent", str(os.getpid())]
        argv += ["--compiler"] if compiler else []
        with log.open("ab") as err:
            self._proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=err,
                                          env=env, start_new_session=True)
        self._lock = threading.Lock()  # one request at a time
        self._done = threading.Condition()
        self._codes: dict[int, int] = {}
        self._pids: list[int] = []
        self._reader = threading.Thread(target=self._read, args=(self._proc.stdout,), daemon=True)
        self._reader.start()

    def _read(self, out: IO[bytes]) -> None:
        for line in out:
            msg = json.loads(line)
            with self._done:
                if "pid" in msg:
                    self._pids.append(msg["pid"])
                else:
                    self._codes[msg["exit"]] = msg["code"]
                self._done.notify_all()
        with self._done:  # the zygote is gone: no child of it will report again
            self._proc.wait()
            self._done.notify_all()

    @property
    def alive(self) -> bool:
        return self._proc.poll() is None

    def start(self, argv: list[str], cwd: Path, env: dict[str, str], log: Path, timeout: float = 60.0) -> Forked:
        with self._lock, self._done:
            before = len(self._pids)
            assert self._proc.stdin is not None
            self._proc.stdin.write((json.dumps({"argv": argv, "cwd": str(cwd), "env": env, "log": str(log)}) + "\n").encode())
            self._proc.stdin.flush()
            if not self._done.wait_for(lambda: len(self._pids) > before or not self.alive, timeout):
                raise RuntimeError("the zygote did not answer")
            if len(self._pids) == before:
                raise RuntimeError(f"the zygote exited (status {self._proc.returncode})")
            return Forked(self, self._pids[before])

    def code(self, pid: int, wait: bool = False, timeout: float | None = None) -> int | None:
        with self._done:
            if wait:
                self._done.wait_for(lambda: pid in self._codes or not self.alive, timeout)
            if pid in self._codes:
                return self._codes[pid]
            if not self.alive:  # the zygote died: its child was reparented and watches its group die
                return -signal.SIGKILL
            return None

    def close(self) -> None:
        if self._proc.stdin:
            try:
                self._proc.stdin.close()
            except OSError:
                pass
        try:
            self._proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            os.killpg(self._proc.pid, signal.SIGKILL)
            self._proc.wait()
        self._reader.join(timeout=10)
        if self._proc.stdout:
            self._proc.stdout.close()


def main(argv: list[str] | None = None) -> int:
    import argparse  # noqa: PLC0415

    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--parent", type=int, required=True)
    parser.add_argument("--compiler", action="store_true")
    args = parser.parse_args(argv)
    return serve(args.parent, args.compiler)


if __name__ == "__main__":
    sys.exit(main())
