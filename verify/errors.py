"""The one structured failure type, and the summary that fails a build once."""

from __future__ import annotations

from dataclasses import dataclass

from verify.shown import safe


class ClaimError(Exception):
    """A problem with a claim, a page or a cache file, with a message that names it."""


@dataclass(frozen=True)
class Failure:
    """One thing that makes the build fail.

    Attributes:
        claim: claim id, or ``-`` when the problem is not one claim's.
        where: the page or file the reader should open.
        message: what went wrong: expected against observed, the exception, the timeout.
        snippet: the snippet file, when there is one.
    """

    claim: str
    where: str
    message: str
    snippet: str = ""

    def line(self) -> str:
        """One line for the terminal: the message may quote a file's text, so its control characters are escaped."""
        snippet = f" [{self.snippet}]" if self.snippet and self.snippet != self.where else ""
        return safe(f"{self.claim} ({self.where}){snippet}: {self.message}", 20_000)


def summary(failures: list[Failure]) -> str:
    """Every failure on one line each, under a count, so one build run shows them all."""
    head = f"{len(failures)} claim check(s) failed:"
    return "\n".join([head, *("  - " + f.line() for f in failures)])


class BuildFailed(ClaimError):
    def __init__(self, failures: list[Failure]):
        super().__init__(summary(failures))
        self.failures = failures
