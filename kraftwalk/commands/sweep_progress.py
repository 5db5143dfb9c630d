"""The sweep's progress display: a bar over cells and one over the sweep's walks."""
from __future__ import annotations

import time
from typing import Any

from rich.console import Console
from rich.progress import (
    BarColumn, MofNCompleteColumn, Progress, SpinnerColumn, TextColumn, TimeElapsedColumn,
    TimeRemainingColumn,
)

from kraftwalk.sweep_spec import Cell, SweepSpec


class SweepProgress:
    """Rich progress on stderr: cells done of all (with the running cell's partition and
    phase), and walks done of the sweep's total when cells are bounded by walks (else
    walks and time so far), with steps/s and violations."""

    def __init__(self, spec: SweepSpec, console: Console) -> None:
        cells = spec.cells()
        # an elect sweep's cell runs its walks for each release, cluster size and pre-vote
        self._walks_each = [c.config.walks * (len(c.config.cells()) if spec.command == "elect"
                                              else 1) for c in cells]
        total = (sum(self._walks_each) if all(w is not None for w in self._walks_each)
                 else None)
        self._progress = Progress(
            SpinnerColumn(), TextColumn("{task.description:>6}"), BarColumn(bar_width=24),
            MofNCompleteColumn(), TimeElapsedColumn(), TextColumn("eta"),
            TimeRemainingColumn(), TextColumn("{task.fields[info]}"),
            console=console, transient=False)
        self._cells = self._progress.add_task("cells", total=len(cells), info="")
        self._walks = self._progress.add_task("walks", total=total, info="")
        self._base = 0  # walks of the cells before the running one
        self._violations = 0
        self._cell_walks = 0
        self._cell_violations = 0
        self._t0 = time.monotonic()
        self._steps = 0
        self._cell_steps = 0

    def on_cell(self, index: int, total: int, cell: Cell, what: str) -> None:
        """The sweep's news of a cell: "running", "finished" or "skipped" (finished before
        a resume)."""
        if what == "running":
            self._cell_walks = self._cell_violations = self._cell_steps = 0
        else:
            self._base += self._cell_walks if what == "finished" else (self._walks_each[index]
                                                                          or 0)
            self._violations += self._cell_violations
            self._steps += self._cell_steps
            self._cell_walks = self._cell_violations = self._cell_steps = 0
            self._progress.update(self._walks, completed=self._base)
        if what != "finished":
            self._progress.console.print(f"cell {index + 1}/{total} {cell.partition}"
                                         + (" (finished before; kept)" if what == "skipped" else ""),
                                         highlight=False)
        self._progress.update(self._cells, completed=index + (what != "running"), info=what)

    def phase(self, name: str) -> None:
        self._progress.update(self._cells, info=name)

    def update(self, walks: int, steps: int, violations: int) -> None:
        # A cell's counts start from its saved walks when it resumes; only its growth
        # since this session started it is new here.
        self._cell_walks, self._cell_steps, self._cell_violations = walks, steps, violations
        elapsed = max(time.monotonic() - self._t0, 1e-9)
        n = self._violations + violations
        viol = f"{n:,} violation{'' if n == 1 else 's'}"
        info = (f"{(self._steps + steps) / elapsed:,.0f} steps/s  " if steps else ""
                ) + (f"[bold red]{viol}[/]" if n else viol)
        self._progress.update(self._walks, completed=self._base + walks, info=info)

    def __enter__(self) -> SweepProgress:
        self._progress.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self._progress.stop()
