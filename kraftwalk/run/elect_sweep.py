"""``kraftwalk sweep`` of ``command = "elect"``: an elect run per cell of a grid of
settings (timing parameters by name, scenario, cluster size, observers, pre-vote,
release), into one dataset.

::

    SWEEP/
      sweep.toml, sweep.json    as for a swarm sweep
      summary.parquet           one row per grid cell and elect cell (release, voters,
      summary.md                pre-vote): the grid's values, then elect's summary
      walks/election_timeout_ms=500/latency_b_ms=5/kafka=4.3/voters=3/pre_vote=true/...
      violations/...            hive-partitioned: DuckDB reads each with one glob
      cells/election_timeout_ms=500/latency_b_ms=5/   each cell's config.toml, run.json

Cells run one after another in grid order, each an elect run (:func:`kraftwalk.run.elect.run`)
on every worker; a stopped or killed sweep continues with ``--resume``: finished cells
are kept, a stopped one goes on after each of its cells' saved walks.
"""
from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Any

import pyarrow as pa

from kraftwalk.errors import RunStopped
from kraftwalk.storage import rundir
from kraftwalk.storage.output import markdown_table, write_json_atomic, write_table_atomic, write_text_atomic
from kraftwalk.sweep_spec import (
    SUMMARY, SUMMARY_MD, SWEEP_JSON, Cell, SweepSpec, cell_dir, value_text,
)


def summary_rows(cell: Cell, summary: list[dict], status: str) -> list[dict]:
    """The cell's elect summary rows (its run.json's), each led by the grid's values."""
    return [{**cell.values, **{k: v for k, v in row.items() if k not in cell.values},
             "partition": cell.partition, "status": status}
            for row in summary]


def summary_markdown(rows: list[dict], grid: list[str]) -> str:
    from kraftwalk.run.elect import SUMMARY_COLUMNS, cell_text

    cols = [c for c in SUMMARY_COLUMNS if c[1] not in grid]
    return markdown_table([*grid, *(h for h, _, _ in cols)],
                          [[value_text(r[k]) for k in grid]
                           + [cell_text(r[k], f) for _, k, f in cols] for r in rows])


def _cell_meta(folder: Path) -> dict:
    try:
        meta = json.loads((folder / rundir.RUN_JSON).read_text())
    except (OSError, ValueError):
        return {}
    return meta if isinstance(meta, dict) else {}


def run_elect_sweep(spec: SweepSpec, out: Path, resume: bool, on_cell=None,
                    progress=None) -> dict:
    """Every cell of the elect sweep ``spec`` into ``out`` (locked by the caller);
    returns sweep.json's dict; a stop is raised as RunStopped carrying it."""
    from kraftwalk.run import fingerprint
    from kraftwalk.run.elect import run as run_elect
    from kraftwalk.run.precompile import distinct_variants, elect_variants, precompile
    from kraftwalk.run.runner import _now
    from kraftwalk.run.sweep_cells import begin, run_cells

    cells = spec.cells()
    begin(out, spec, resume)
    grid = list(spec.grid)
    state: dict[str, Any] = {
        "status": "running", "pid": os.getpid(), "command": "elect", "grid": spec.grid,
        "cells": len(cells), "cells_finished": 0, "walks": 0, "events": 0, "violations": 0,
        "started_at": _now(), "out_dir": str(out), fingerprint.KEY: fingerprint.of_sweep(spec)}
    done: dict[str, list[dict]] = {}  # partition -> its summary rows
    metas: dict[str, dict] = {}
    started = time.monotonic()

    def record(status: str | None = None, **extra: Any) -> dict:
        if status:
            state["status"] = status
        rows = [r for c in cells for r in done.get(c.partition, [])]
        state.update(extra, cells_finished=sum(m.get("status") == "complete" for m in metas.values()),
                     walks=sum(m.get("walks_saved", 0) for m in metas.values()),
                     events=sum(m.get("events", 0) for m in metas.values()),
                     violations=sum(r["violations"] for r in rows),
                     wall_seconds=time.monotonic() - started, updated_at=_now())
        if rows:
            write_table_atomic(out / SUMMARY, pa.Table.from_pylist(rows))
            write_text_atomic(out / SUMMARY_MD, summary_markdown(rows, grid)
                              + f"\nMade by {made}.\n")
        write_json_atomic(out / SWEEP_JSON, state)
        return dict(state)

    from kraftwalk.storage.provenance import made_by, provenance

    state["versions"] = provenance()
    made = made_by(state["versions"])
    record()

    def kept(cell: Cell) -> bool:
        folder = cell_dir(out, cell)
        meta = _cell_meta(folder) if resume else {}
        if meta.get("status") != "complete":
            return False
        metas[cell.partition] = meta
        done[cell.partition] = summary_rows(cell, meta.get("summary") or [], "complete")
        return True

    def run_one(cell: Cell, again: bool):
        folder = cell_dir(out, cell)
        walks = [0, 0]  # this cell's walks and violations, for the progress display

        def advance_by(n: int, v: int) -> None:
            walks[0] += n
            walks[1] += v
            if progress:
                progress(walks[0], 0, walks[1])

        try:
            metas[cell.partition] = run_elect(cell.config, folder, resume=again,
                                              base=rundir.Layout(folder, out, cell.partition),
                                              advance=advance_by)
        except RunStopped:  # its summary from the parts it saved, whenever the stop came
            from kraftwalk.run.elect import summarize

            metas[cell.partition] = _cell_meta(folder)
            done[cell.partition] = summary_rows(cell, summarize(folder, cell.config), "stopped")
            raise
        summary = metas[cell.partition]["summary"]
        return lambda: done.update({cell.partition: summary_rows(cell, summary, "complete")})

    def compile_variants() -> None:
        todo = [c for c in cells if not (resume and _cell_meta(cell_dir(out, c)).get("status")
                                         == "complete")]
        variants = distinct_variants(v for c in todo for v in elect_variants(c.config))
        if len(variants) > 1:
            precompile(variants, cells[0].config.effective_workers)

    return run_cells(cells, out, resume, record, on_cell, compile_variants, kept, run_one)
