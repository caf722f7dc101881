"""What every command shares: the ``--root`` option and the settings it leads to."""

from __future__ import annotations

import fnmatch
from pathlib import Path
from typing import Annotated

import typer

from verify.settings import Settings, SettingsError

RootOpt = Annotated[Path | None, typer.Option("--root", help="the checkout (default: the nearest mkdocs.yml "
                                                              "upwards from the working directory)")]


def settings_for(root: Path | None) -> Settings:
    """The settings of ``--root`` or of the checkout around the working directory; a clear error otherwise."""
    try:
        return Settings.for_command(root)
    except SettingsError as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(2) from None


def selector(ids: list[str], question: str | None, device: str):
    """Which claims ``--id``, ``--question`` and ``--device`` keep."""
    if device not in ("any", "cpu", "cuda"):
        raise typer.BadParameter(f"--device must be any, cpu or cuda, not {device!r}", param_hint="--device")

    def select(spec) -> bool:
        if ids and not any(fnmatch.fnmatchcase(spec.id, pat) for pat in ids):
            return False
        if question and spec.question != question:
            return False
        if device == "cuda" and "cuda" not in spec.needs:
            return False
        return not (device == "cpu" and "cuda" in spec.needs)

    return select
