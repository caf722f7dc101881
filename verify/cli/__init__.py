"""The console script ``verify`` (see :mod:`verify.cli.main`)."""

from verify.cli.main import app, main

__all__ = ["app", "main"]
