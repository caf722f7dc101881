"""What every command shares: the ``--root`` option and the settings it leads to."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from verify.settings import Settings, SettingsError

RootOpt = Annotated[Path | None, typer.Option("--root", help="the checkout (default: the nearest mkdocs.yml "
                                                              "upwards from the working directory)")]


def settings_for(root: Path | None) -> Settings:
    """The settings of ``--root`` or of the checkout around the working directory; a clear error otherwise."""
    try:
        return Settings.for_root(root) if root else Settings.discover()
    except SettingsError as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(2) from None
