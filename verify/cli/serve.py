"""``verify serve``: serve the site at once and verify this machine behind it; ``verify report``."""

from __future__ import annotations

import signal
import subprocess
import sys
from pathlib import Path
from typing import Annotated

import typer

from verify.cli.common import RootOpt, settings_for


def _stop(proc: subprocess.Popen[bytes]) -> None:
    if proc.poll() is None:
        proc.send_signal(signal.SIGINT)  # MkDocs then removes its temporary site
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def serve(host: Annotated[str, typer.Option(help="address to serve on")] = "127.0.0.1",
          port: Annotated[int, typer.Option(help="port to serve on")] = 8000,
          bench: Annotated[bool, typer.Option(help="after the claims, run the benchmarks this machine lacks")] = True,
          root: RootOpt = None) -> None:
    """Serve the site now; this machine's claims (and benchmarks) run behind the server, and pages update."""
    from verify.bench import run as bench_run  # noqa: PLC0415
    from verify.running import live  # noqa: PLC0415

    settings = settings_for(root)
    live.touch(live.stamp_path(settings))
    env = settings.child_environ(VERIFY_NO_RUN="1", VERIFY_LIVE="1", NO_MKDOCS_2_WARNING="1")
    cmd = [sys.executable, "-m", "mkdocs", "serve", "--no-strict", "--dev-addr", f"{host}:{port}",
           "-f", str(settings.root / "mkdocs.yml")]
    server = subprocess.Popen(cmd, cwd=settings.root, env=env)
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
