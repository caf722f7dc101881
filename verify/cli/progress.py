"""What ``verify run`` shows while claims run: a progress bar on a terminal, plain lines elsewhere.

Both show claims done, failures so far and the time left. The estimate comes from recorded
durations (``snippets/durations.json``; a claim not recorded weighs the typical claim), scaled by
how fast the run has gone so far: the bar counts expected seconds, not claims, so a claim that
compiles for a minute moves it as far as it should.
"""

from __future__ import annotations

import time

from rich.console import Console
from rich.progress import BarColumn, Progress, TaskID, TextColumn, TimeElapsedColumn, TimeRemainingColumn

from verify.core.records import Evidence, Outcome
from verify.core.registry import ClaimSpec
from verify.core.units import fmt_eta as fmt_time
from verify.running.shards import Durations


def _line(cid: str, record: Evidence) -> str:
    colour = "green" if record.outcome is Outcome.PASS else ("yellow" if record.outcome is Outcome.SKIPPED else "red")
    return f"[{colour}]{record.outcome.value:>7}[/] {cid}  {record.duration_s or 0:.2f}s"


class RunProgress:
    """Implements :class:`verify.running.engine.Progress` for the command line."""

    def __init__(self, console: Console, durations: Durations):
        self.console = console
        self.durations = durations
        self.expected: dict[str, float] = {}
        self.done_s = 0.0
        self.count = 0
        self.failed = 0
        self.began = time.monotonic()
        self.bar: Progress | None = None
        self.task: TaskID | None = None

    def start(self, specs: list[ClaimSpec]) -> None:
        self.expected = {s.id: max(self.durations.claim(s), 0.01) for s in specs}
        self.began = time.monotonic()
        total = sum(self.expected.values())
        if not self.console.is_terminal:
            self.console.print(f"running {len(specs)} claim(s); recorded durations say about {fmt_time(total)} "
                               "of work", highlight=False)
            return
        self.bar = Progress(TextColumn("{task.description}"), BarColumn(), TextColumn("{task.fields[claims]}"),
                            TextColumn("{task.fields[failures]}"), TimeElapsedColumn(), TextColumn("left"),
                            TimeRemainingColumn(), console=self.console, transient=True)
        self.task = self.bar.add_task("claims", total=total, claims=f"0/{len(specs)}", failures="")
        self.bar.start()

    def done(self, claim_id: str, record: Evidence) -> None:
        self.count += 1
        self.failed += record.bad
        self.done_s += self.expected.get(claim_id, 0.0)
        status = f"{self.count}/{len(self.expected)}"
        if self.bar is not None and self.task is not None:
            self.bar.console.print(_line(claim_id, record), highlight=False)
            self.bar.update(self.task, advance=self.expected.get(claim_id, 0.0), claims=status,
                            failures=f"[red]{self.failed} failed[/]" if self.failed else "")
            return
        self.console.print(f"{_line(claim_id, record)}  [{status}, {self.failed} failed, {self.left()} left]",
                           highlight=False)

    def left(self) -> str:
        """The time left: the expected seconds still to run, at the pace of the run so far."""
        total = sum(self.expected.values())
        if self.done_s <= 0:
            return f"about {fmt_time(total)}"
        pace = (time.monotonic() - self.began) / self.done_s
        return f"about {fmt_time(max(0.0, (total - self.done_s) * pace))}"

    def close(self) -> None:
        if self.bar is not None:
            self.bar.stop()
            self.bar = None
