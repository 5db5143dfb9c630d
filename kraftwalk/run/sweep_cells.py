"""The cell loop both kinds of sweep share (:mod:`kraftwalk.run.sweep`: swarm cells,
:mod:`kraftwalk.run.elect_sweep`: timed ones): cells in grid order on one backend
session, each kept when it finished before a resume, continued after its saved walks
when it had started, started afresh when it never saved its config; sweep.json
recorded after each cell, on a stop (with the cell it stopped) and on a failure."""
from __future__ import annotations

import shutil
import signal
from pathlib import Path
from typing import Callable

from kraftwalk.errors import RunStopped
from kraftwalk.run.signals import deferred
from kraftwalk.storage import rundir
from kraftwalk.sweep_spec import Cell, cell_dir

OnCell = Callable[[int, int, Cell, str], None]


def begin(out: Path, spec, resume: bool) -> None:
    """A sweep's first act in its folder (its lock held): a resumed one is checked
    again, now that no one else can write it, and loses what a killed process left
    half-written; a new one writes its sweep.toml."""
    from kraftwalk.run import fingerprint
    from kraftwalk.storage.output import write_text_atomic
    from kraftwalk.sweep_spec import SWEEP_FILE

    if resume:
        fingerprint.check_sweep(out, spec)
        for p in out.glob(rundir.TMP_PREFIX + "*"):
            p.unlink(missing_ok=True)
    else:
        write_text_atomic(out / SWEEP_FILE, spec.to_toml())


def drop_cell(out: Path, cell: Cell) -> None:
    """Forget a cell that never saved its config: its folder and dataset partitions."""
    shutil.rmtree(cell_dir(out, cell), ignore_errors=True)
    for ds in rundir.DATASETS:
        shutil.rmtree(out / ds / cell.partition, ignore_errors=True)


def run_cells(cells: list[Cell], out: Path, resume: bool, record: Callable[..., dict],
              on_cell: OnCell | None, compile_variants: Callable[[], None],
              kept: Callable[[Cell], bool],
              run_one: Callable[[Cell, bool], Callable[[], None]]) -> dict:
    """The cells of a sweep of either kind, in grid order, on one backend session.

    ``kept(cell)`` takes a cell finished before a resume (its rows) and says so;
    ``run_one(cell, again)`` runs one (``again``: it continues its saved walks) and
    returns what adds its rows, done with sweep.json's ``record`` as one step a
    signal does not cut. A stop is recorded with the cell it stopped, and raised with
    sweep.json's dict; a failure is recorded and raised."""
    from kraftwalk.run.backends import backend_session

    where = None  # the cell running when a signal came
    try:
        compile_variants()
        # One Dask or Ray connection (or local cluster) serves every cell.
        with backend_session(cells[0].config):
            for i, cell in enumerate(cells):
                if kept(cell):
                    if on_cell:
                        on_cell(i, len(cells), cell, "skipped")
                    continue
                folder = cell_dir(out, cell)
                again = resume and (folder / rundir.CONFIG).is_file()
                if resume and not again:  # it never saved its config: start it afresh
                    drop_cell(out, cell)
                folder.mkdir(parents=True, exist_ok=True)
                if on_cell:
                    on_cell(i, len(cells), cell, "running")
                where = cell.partition
                add_rows = run_one(cell, again)
                with deferred():  # the cell's rows and sweep.json, both or neither
                    add_rows()
                    where = None
                    record()
                if on_cell:
                    on_cell(i, len(cells), cell, "finished")
    except RunStopped as stop:
        from kraftwalk.run.runner import STATUS_OF_SIGNAL

        name = signal.Signals(stop.signum).name
        stop.summary = record(STATUS_OF_SIGNAL.get(name, "stopped"), signal=name,
                              stopped_in=where)
        raise
    except BaseException as e:
        record("failed", error=" ".join(f"{type(e).__name__}: {e}".split()))
        raise
    return record("finished", signal=None)


