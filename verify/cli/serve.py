"""``verify serve``: serve the site at once and verify this machine behind it; ``verify report``."""

from __future__ import annotations

import contextlib
import errno
import fcntl
import ipaddress
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import IO, Annotated

import typer

from verify.cli.common import RootOpt, settings_for
from verify.shown import safe
from verify.settings import Settings


def _stop(proc: subprocess.Popen[str]) -> None:
    if proc.poll() is None:
        proc.send_signal(signal.SIGINT)  # MkDocs then removes its temporary site
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


IN_USE = "already in use: another server (a second verify serve?) is listening there"


def port_taken(host: str, port: int) -> str | None:
    """Why the server could not listen on ``host:port`` (taken, or no such address); ``None`` when it can.

    Bound as MkDocs' server binds (IPv6 only for an IPv6 address, address reuse on, so a port only in
    TIME_WAIT is free), and then let go.
    """
    try:
        family = socket.AF_INET6 if isinstance(ipaddress.ip_address(host), ipaddress.IPv6Address) else socket.AF_INET
    except ValueError:  # a name, such as localhost
        family = socket.AF_INET
    with socket.socket(family, socket.SOCK_STREAM) as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind((host, port))
        except OSError as exc:
            if exc.errno == errno.EADDRINUSE:
                return IN_USE
            return exc.strerror or str(exc)
        except (OverflowError, UnicodeError) as exc:  # OverflowError: a port beyond 65535
            return str(exc)
    return None


@contextlib.contextmanager
def port_held(port: int) -> Iterator[bool]:
    """The lock of ``port`` among verify serves on this machine, held while the block runs: ``False`` when
    another verify serve holds it.

    MkDocs binds its port only after its first build (seconds, 75 on a fresh clone), so a second
    verify serve started meanwhile finds the port free; the lock is what tells it. Where no lock file
    can be made (the temporary folder is another user's), the port check alone decides.
    """
    path = Path(tempfile.gettempdir()) / f"verify-serve-{port}.lock"
    try:
        fd = os.open(path, os.O_RDONLY | os.O_CREAT | os.O_CLOEXEC, 0o644)
    except OSError:
        yield True
        return
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            yield False
            return
        yield True
    finally:
        os.close(fd)


def _cannot(host: str, port: int, why: str) -> str:
    other = port + 1 if 0 < port < 65535 else 8001
    hint = f"pick another port with --port, e.g. verify serve --port {other}" if why == IN_USE else \
        "check --host, or pick another port with --port"
    return f"verify serve: cannot serve on {safe(host)}:{port}: {safe(why)}; {hint}"


def _relay(stream: IO[str], taken: str, said: list[str]) -> None:
    """The server's stderr copied to ours, but for a traceback that ends in 'address already in use'
    (a server that took the port during the first build): ``taken``, one line, instead of it.

    It reads to the end whatever happens to our stderr, so that the server never blocks on a full pipe.
    """
    held: list[str] | None = None
    for line in stream:
        out: list[str] = []
        if held is None and line.startswith("Traceback (most recent call last):"):
            held = [line]
        elif held is None:
            out = [line]
        else:
            held.append(line)
            if line[:1] not in (" ", "\t"):  # the exception's own line ends the traceback
                if f"[Errno {errno.EADDRINUSE}]" in line:
                    said.append(line)
                    out = [taken + "\n"]
                else:
                    out = held
                held = None
        _write(out)
    _write(held or [])


def _write(lines: list[str]) -> None:
    with contextlib.suppress(OSError, ValueError):  # our stderr closed: the server's lines have nowhere to go
        sys.stderr.writelines(lines)
        sys.stderr.flush()


def serve(host: Annotated[str, typer.Option(help="address to serve on")] = "127.0.0.1",
          port: Annotated[int, typer.Option(help="port to serve on")] = 8000,
          bench: Annotated[bool, typer.Option(help="after the claims, run the benchmarks this machine lacks")] = True,
          root: RootOpt = None) -> None:
    """Serve the site now; this machine's claims (and benchmarks) run behind the server, and pages update."""
    settings = settings_for(root)
    with port_held(port) as ours:
        taken = port_taken(host, port) if ours else IN_USE
        if taken:
            typer.echo(_cannot(host, port, taken), err=True)
            raise typer.Exit(1)
        # Where this command and its server meet: a folder of its own, outside the cache, so that a cache
        # that cannot be written or is deleted while serving does not cut the server off from the runs.
        meeting = Path(tempfile.mkdtemp(prefix="verify-serve-"))
        # stopped by SIGTERM as by Ctrl-C: the server is stopped too, and the folder removed
        previous = signal.signal(signal.SIGTERM, lambda *_: sys.exit(128 + signal.SIGTERM))
        try:
            _serve(settings, meeting, host, port, bench)
        finally:
            signal.signal(signal.SIGTERM, previous)
            shutil.rmtree(meeting, ignore_errors=True)


def _serve(settings: Settings, meeting: Path, host: str, port: int, bench: bool) -> None:
    from verify.bench import run as bench_run  # noqa: PLC0415
    from verify.running import live  # noqa: PLC0415

    settings = replace(settings, live_folder=meeting, environ={**settings.environ, "VERIFY_LIVE_DIR": str(meeting)})
    live.touch(live.stamp_path(settings))
    env = settings.child_environ(VERIFY_NO_RUN="1", VERIFY_LIVE="1", NO_MKDOCS_2_WARNING="1")
    cmd = [sys.executable, "-m", "mkdocs", "serve", "--no-strict", "--dev-addr", f"{host}:{port}",
           "-f", str(settings.root / "mkdocs.yml")]
    server = subprocess.Popen(cmd, cwd=settings.root, env=env, stderr=subprocess.PIPE, text=True, errors="replace",
                              bufsize=1)
    taken: list[str] = []
    assert server.stderr is not None
    relay = threading.Thread(target=_relay, args=(server.stderr, _cannot(host, port, IN_USE), taken), daemon=True)
    relay.start()
    typer.echo(f"verify serve: http://{host}:{port}/ — pages show other machines' evidence (labelled) until this "
               "machine's claims have run; they update as claims finish. Ctrl-C stops.")

    def benchmarks() -> None:
        if bench:
            _, rc, ran = bench_run.run(settings, echo=lambda m: typer.echo(f"verify serve: benchmarks: {m}"))
            if rc:
                typer.echo(f"verify serve: benchmarks failed (pytest exit {rc}) in {', '.join(ran)}; the site "
                           "shows their stored results as stale", err=True)

    try:
        live.behind(settings, alive=lambda: server.poll() is None, echo=typer.echo, after_first=benchmarks)
        server.wait()
    except KeyboardInterrupt:
        pass
    finally:
        _stop(server)
        relay.join(timeout=10)
    if taken:
        raise typer.Exit(1)
    if server.returncode not in (0, None, -signal.SIGINT, 130):
        raise typer.Exit(server.returncode)


def report(out: Annotated[Path | None, typer.Option("--out", "-o", help="where to write the bundle")] = None,
           root: RootOpt = None) -> None:
    """Write a bundle of this machine's records (failures included) to attach when a claim fails here."""
    from rich.console import Console  # noqa: PLC0415

    from verify.cli.team import write_bundle  # noqa: PLC0415
    from verify.running import engine  # noqa: PLC0415

    settings = settings_for(root)
    verification = engine.verify(settings, live=True)  # runs what has not run here; keeps failures as they are
    path = out or settings.root / "bundles" / f"{verification.probe.device_key}.bundle.json"
    write_bundle(settings, verification, None, path, Console())
    bad = sorted(cid for cid, r in verification.local.items() if r.bad)
    typer.echo(f"{len(bad)} failing here{': ' + ', '.join(bad) if bad else ''}. Attach {path} to an issue: "
               "`verify merge` reads it and judges every record again.")
