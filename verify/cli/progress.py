"""What ``verify run`` shows while claims run: a progress bar on a terminal, plain lines elsewhere.

Both show claims done, failures so far and the time left. The estimate comes from recorded
durations (``snippets/durations.json``, the same model that balances shards: worker start-ups,
ordinary claims two at a time, timing claims alone); once a quarter of the expected work is done
it follows the pace of the run itself. The bar counts expected seconds, not claims, so a claim
that compiles for a minute moves it as far as it should.
"""

from __future__ import annotations

import time

from rich.console import Console
from rich.progress import BarColumn, Progress, ProgressColumn, Task, TaskID, TextColumn, TimeElapsedColumn
from rich.text import Text

from verify.core.records import Evidence, Outcome
from verify.core.registry import ClaimSpec, Registry
from verify.core.units import fmt_eta as fmt_time
from verify.running import shards
from verify.running.shards import Durations

CALIBRATED = 0.25  # from this share of the expected work on, the run's own pace predicts the rest


def _line(cid: str, record: Evidence) -> str:
    colour = "green" if record.outcome is Outcome.PASS else ("yellow" if record.outcome is Outcome.SKIPPED else "red")
    return f"[{colour}]{record.outcome.value:>7}[/] {cid}  {record.duration_s or 0:.2f}s"


class _Left(ProgressColumn):
    """The time left as :meth:`RunProgress.left` estimates it, redrawn with the bar."""

    def __init__(self, owner: RunProgress):
        super().__init__()
        self.owner = owner

    def render(self, task: Task) -> Text:
        return Text(f"{self.owner.left()} left", style="cyan")


class RunProgress:
    """Implements :class:`verify.running.engine.Progress` for the command line."""

    def __init__(self, console: Console, durations: Durations, registry: Registry):
        self.console = console
        self.durations = durations
        self.registry = registry
        self.expected: dict[str, float] = {}
        self.done_s = 0.0
        self.count = 0
        self.failed = 0
        self.began = time.monotonic()
        self.bar: Progress | None = None
        self.task: TaskID | None = None

    def start(self, specs: list[ClaimSpec]) -> None:
        self.expected = self._expected(specs)
        self.began = time.monotonic()
        total = sum(self.expected.values())
        if not self.console.is_terminal:
            self.console.print(f"running {len(specs)} claim(s); recorded durations say about {fmt_time(total)} "
                               "of work", highlight=False)
            return
        self.bar = Progress(TextColumn("{task.description}"), BarColumn(), TextColumn("{task.fields[claims]}"),
                            TextColumn("{task.fields[failures]}"), TimeElapsedColumn(), _Left(self),
                            console=self.console, transient=True)
        self.task = self.bar.add_task("claims", total=total, claims=f"0/{len(specs)}", failures="")
        self.bar.start()

    def _expected(self, specs: list[ClaimSpec]) -> dict[str, float]:
        """Expected wall seconds each claim adds: its file's share, split by the claims' own durations."""
        ids = {s.id for s in specs}
        walls = shards.weights(self.registry, self.durations, lambda s: s.id in ids)
        out: dict[str, float] = {}
        for snippet, wall in walls.items():
            mine = [s for s in specs if s.snippet == snippet]
            own = {s.id: self.durations.wall(s) for s in mine}
            total = sum(own.values())
            for cid, w in own.items():
                out[cid] = max(wall * (w / total if total else 1.0 / len(own)), 0.001)
        return out

    def waiting(self, message: str) -> None:
        (self.bar.console if self.bar is not None else self.console).print(f"[yellow]{message}[/]", highlight=False)

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
        """The time left: what the recorded durations expect, then the rest at the run's own pace."""
        total = sum(self.expected.values())
        elapsed = time.monotonic() - self.began
        if self.done_s >= CALIBRATED * total > 0:
            return f"about {fmt_time((total - self.done_s) * elapsed / self.done_s)}"
        return f"about {fmt_time(max(total - elapsed, total - self.done_s))}"

    def close(self) -> None:
        if self.bar is not None:
            self.bar.stop()
            self.bar = None
