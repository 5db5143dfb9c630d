"""The swarm's progress bar on stderr: walks (or wall time) done, steps/s, violations."""
from __future__ import annotations

import time
from typing import Any

from rich.console import Console
from rich.progress import (
    BarColumn, Progress, ProgressBar, SpinnerColumn, Task, TextColumn, TimeElapsedColumn,
    TimeRemainingColumn,
)
from rich.status import Status

from kraftwalk.config import RunConfig


class _TimeBar(BarColumn):
    """Fills with wall time, so a time-bounded run's bar moves between chunks."""

    def render(self, task: Task) -> ProgressBar:
        total = task.total or 1.0
        return ProgressBar(
            total=total,
            completed=min(task.elapsed or 0.0, total),
            width=None if self.bar_width is None else max(1, self.bar_width),
            pulse=False,
            animation_time=task.get_time(),
            style=self.style,
            complete_style=self.complete_style,
            finished_style=self.finished_style,
            pulse_style=self.pulse_style,
        )


class SwarmProgress:
    """Rich progress bar on stderr; ``update`` is the runner's progress callback.

    With --walks the bar counts walks; otherwise it fills over the time budget.
    """

    def __init__(self, cfg: RunConfig, console: Console) -> None:
        self._by_walks = cfg.walks is not None
        stats = (
            TextColumn("{task.fields[rate]} steps/s"),
            TextColumn("{task.fields[violations]}"),
        )
        if self._by_walks:
            columns = (
                SpinnerColumn(),
                BarColumn(),
                TextColumn("{task.fields[walks]}/{task.fields[total_walks]} walks"),
                TimeElapsedColumn(),
                TextColumn("eta"),
                TimeRemainingColumn(),
                *stats,
            )
            total = float(cfg.walks)  # type: ignore[arg-type]
        else:
            duration = cfg.effective_duration or 0.0
            columns = (
                SpinnerColumn(),
                _TimeBar(),
                TimeElapsedColumn(),
                TextColumn(f"of {duration:g}s"),
                TextColumn("{task.fields[walks]} walks"),
                *stats,
            )
            total = duration
        self._progress = Progress(*columns, console=console, transient=False)
        self._task = self._progress.add_task(
            "swarm",
            total=total,
            walks="0",
            total_walks=f"{cfg.walks:,}" if self._by_walks else "",
            rate="-",
            violations="0 violations",  # plain until one is found, then bold red
        )
        self._t0 = time.monotonic()
        self._console = console
        self._status: Status | None = None
        self._running = False

    def phase(self, name: str) -> None:
        """The runner's phases: 'compiling', then 'starting' the workers (a spinner of
        their own, so start-up never counts as run time or lowers steps/s), then
        'running' (the bar starts at 0:00)."""
        if name == "compiling":
            self._status = Status("compiling the kernels for this configuration "
                                  "(cached for later runs) ...", console=self._console)
            self._status.start()
        elif name == "starting" and self._status is not None:
            self._status.update("starting the workers ...")
        elif name == "running" and not self._running:
            if self._status is not None:
                self._status.stop()
                self._status = None
            self._running = True
            self._progress.reset(self._task, start=True)
            self._progress.start()
            self._t0 = time.monotonic()

    def update(self, walks_done: int, steps_done: int, violations_found: int) -> None:
        self.phase("running")
        elapsed = max(time.monotonic() - self._t0, 1e-9)
        n = int(violations_found)
        viol = f"{n:,} violation{'' if n == 1 else 's'}"
        fields: dict[str, Any] = {
            "walks": f"{int(walks_done):,}",
            "rate": f"{steps_done / elapsed:,.0f}",
            "violations": f"[bold red]{viol}[/]" if violations_found else viol,
        }
        if self._by_walks:
            fields["completed"] = walks_done
        self._progress.update(self._task, **fields)

    def __enter__(self) -> SwarmProgress:
        return self

    def __exit__(self, *exc: object) -> None:
        if self._status is not None:
            self._status.stop()
        self._progress.stop()


# ---- summary ----------------------------------------------------------------
