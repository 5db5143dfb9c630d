"""``kraftwalk sweep``: a swarm run per cell of a grid, into one dataset.

::

    SWEEP/
      sweep.toml        the sweep as run (--resume reads it)
      sweep.json        status, cells finished, totals; rewritten after every cell
      summary.parquet   one row per finished or stopped cell: its settings, walks,
      summary.md        steps, speed, violations, coverage and mean walk statistics
      walks/voters=5/pre_vote=true/part-*.parquet     hive-partitioned datasets:
      violations/...    coverage/...                  DuckDB, polars and pandas read
                                                      each folder as one table
      cells/voters=5/pre_vote=true/                   each cell's config.toml, run.json
                                                      and coverage.parquet

Cells run one after another, each on all workers, in grid order. A stopped or killed
sweep continues with ``--resume``: finished cells are skipped, a cell stopped midway
resumes after its saved walks (:mod:`kraftwalk.run.resume`), so the sweep ends with the
same files as one never stopped.
"""
from __future__ import annotations

import dataclasses
import json
import os
import time
from pathlib import Path
from typing import Any, Callable

import numpy as np
import pyarrow as pa

from kraftwalk.storage import rundir
from kraftwalk.errors import RunStopped, UsageError
from kraftwalk.storage.output import (
    markdown_table, write_json_atomic, write_table_atomic, write_text_atomic,
)
from kraftwalk.storage.lock import hold, refuse_if_held
from kraftwalk.storage.paths import make_new_folder
from kraftwalk.run import fingerprint
from kraftwalk.sweep_spec import (  # noqa: F401 (the folder's names, for its readers)
    SUMMARY, SUMMARY_MD, SWEEP_FILE, SWEEP_JSON, Cell, SweepSpec, cell_dir, load_sweep,
    value_text,
)

# Per-walk statistics whose mean over a cell's walks the summary keeps.
MEAN_STATS = ("elections", "leader_changes", "committed", "disruptions", "max_epoch",
              "crashes", "truncations")


def is_sweep(folder: str | Path) -> bool:
    return (Path(folder) / SWEEP_JSON).is_file()


def cell_layout(sweep: Path, cell: Cell) -> rundir.Layout:
    return rundir.Layout(cell_dir(sweep, cell), sweep, cell.partition)


def cell_means(lay: rundir.Layout, histogram: bool) -> dict[str, float]:
    """Mean per walk of MEAN_STATS and the share of walks with a disruption, read part
    by part so that memory does not grow with the cell's walks."""
    sums = dict.fromkeys(MEAN_STATS, 0.0)
    disrupted = walks = 0
    if histogram:
        t = rundir.read_dataset(lay, rundir.HISTOGRAM).to_pandas()
        for s in MEAN_STATS:
            part = t[t["stat"] == s]
            sums[s] = float((part["value"] * part["count"]).sum())
        d = t[t["stat"] == "disruptions"]
        disrupted = int(d[d["value"] > 0]["count"].sum())
        walks = int(t[t["stat"] == "steps"]["count"].sum())
    else:
        for _, _, path in rundir.parts(lay, rundir.WALKS):
            t = rundir.read_file(path, columns=list(MEAN_STATS))
            walks += t.num_rows
            for s in MEAN_STATS:
                sums[s] += float(np.sum(t.column(s).to_numpy()))
            disrupted += int(np.count_nonzero(t.column("disruptions").to_numpy()))
    n = max(walks, 1)
    out = {f"mean_{s}": sums[s] / n for s in MEAN_STATS}
    out["share_disrupted"] = disrupted / n
    return out


def summary_row(cell: Cell, res: dict, lay: rundir.Layout) -> dict[str, Any]:
    """One row of summary.parquet: the cell's grid values, then what it did."""
    from kraftwalk.vocabulary.properties import INVARIANT_NAMES
    from kraftwalk.vocabulary.properties import TARGET_NAMES

    by_inv = res.get("violations_by_invariant") or {}
    first = res.get("first_violations") or []
    reached = res.get("reached") or {}
    row: dict[str, Any] = {"kafka": cell.config.kafka, **cell.values}
    row.update({
        "partition": cell.partition, "status": res.get("status"),
        "walks": int(res.get("walks", 0)), "steps": int(res.get("steps", 0)),
        "seconds": float(res.get("seconds", 0.0)),
        "steps_per_s_per_core": float(res.get("steps_per_s_per_core", 0.0)),
        "walks_per_s": float(res.get("walks_per_s", 0.0)),
        "workers": int(res.get("workers", 0)),
        "jit_seconds": float(res.get("jit_seconds", 0.0)),
        "violations": int(res.get("violations", 0)),
        "first_violation_walk": first[0]["walk"] if first else None,
        "targets_reached": sum(1 for t in TARGET_NAMES if reached.get(t)),
    })
    for name in INVARIANT_NAMES:
        row[f"violations_{name}"] = int(by_inv.get(name, 0))
    for name in TARGET_NAMES:
        row[f"reached_{name}"] = int(reached.get(name, 0))
    row.update(cell_means(lay, cell.config.walk_stats == "histogram"))
    return row


def summary_markdown(rows: list[dict], grid: list[str]) -> str:
    """The per-cell summary as a Markdown table (the release first, grid or not)."""
    from kraftwalk.vocabulary.properties import TARGET_NAMES

    grid = grid if "kafka" in grid else ["kafka", *grid]
    head = [*grid, "walks", "steps", "steps/s per core", "violations", "targets reached",
            "elections / walk", "committed / walk", "disruptions / walk"]
    return markdown_table(head, [
        [*(value_text(r[k]) for k in grid), f"{r['walks']:,}", f"{r['steps']:,}",
         f"{r['steps_per_s_per_core']:,.0f}", f"{r['violations']:,}",
         f"{r['targets_reached']}/{len(TARGET_NAMES)}", f"{r['mean_elections']:.2f}",
         f"{r['mean_committed']:.2f}", f"{r['mean_disruptions']:.3f}"] for r in rows])


def read_summary(sweep: str | Path) -> pa.Table:
    path = Path(sweep) / SUMMARY
    if not path.is_file():
        raise UsageError(f"{sweep} has no {SUMMARY}: no cell of the sweep has finished")
    return rundir.read_file(path)


NEW_SWEEP = ("sweep folder", " (or continue a stopped sweep with --resume)")


def resume_spec(out: Path) -> SweepSpec:
    """The spec of the sweep in ``out``, refused while another process still runs it
    or when its sweep.toml was edited since it started."""
    if not (out / SWEEP_FILE).is_file():
        raise UsageError(f"--resume {out}: not a sweep folder (it has no {SWEEP_FILE})")
    refuse_if_held(out, "--resume")
    spec = load_sweep(out / SWEEP_FILE)
    check_unchanged(out, spec)
    return spec


def check_unchanged(out: Path, spec: SweepSpec) -> None:
    fingerprint.check_sweep(out, spec)


def _cell_meta(out: Path, cell: Cell) -> dict:
    """A cell's run.json, or {} when it has none that reads."""
    try:
        meta = json.loads((cell_dir(out, cell) / rundir.RUN_JSON).read_text())
    except (OSError, ValueError):
        return {}
    return meta if isinstance(meta, dict) else {}


OnCell = Callable[[int, int, Cell, str], None]


def run_sweep(spec: SweepSpec, out: Path, *, resume: bool = False,
              on_cell: OnCell | None = None, progress=None, on_phase=None) -> dict:
    """Run every cell of ``spec`` into the sweep folder ``out``; return sweep.json's dict.

    ``on_cell(index, total, cell, what)`` is told of each cell ("running" when it
    starts, "finished", or "skipped" when it had finished before a resume);
    ``progress`` and ``on_phase`` go to each cell's run (:func:`kraftwalk.run.runner.run_swarm`).
    A signal stops the sweep after saving the running cell's finished chunks;
    :class:`RunStopped` carries the sweep's dict. The sweep holds its folder's lock
    (:mod:`kraftwalk.storage.lock`) while it runs."""
    out = Path(out)
    if not resume:
        make_new_folder(out, *NEW_SWEEP)
    with hold(out, "sweep", "--resume" if resume else "--out"):
        if spec.command == "elect":
            from kraftwalk.run.elect_sweep import run_elect_sweep

            return run_elect_sweep(spec, out, resume, on_cell, progress)
        return _run_sweep(spec, out, resume, on_cell, progress, on_phase)


def _run_sweep(spec: SweepSpec, out: Path, resume: bool, on_cell: OnCell | None,
               progress, on_phase) -> dict:
    from kraftwalk.run.precompile import distinct_variants, precompile, swarm_variant
    from kraftwalk.run.runner import run_swarm

    from kraftwalk.run.sweep_cells import begin

    cells = spec.cells()
    begin(out, spec, resume)
    grid = list(spec.grid)
    state: dict[str, Any] = {
        "status": "running", "pid": os.getpid(), "command": spec.command, "grid": spec.grid,
        "cells": len(cells), "cells_finished": 0, "walks": 0, "steps": 0, "violations": 0,
        "started_at": _now(), "out_dir": str(out),
        fingerprint.KEY: fingerprint.of_sweep(spec)}
    rows: list[dict] = []
    started = time.monotonic()

    def record(status: str | None = None, **extra: Any) -> dict:
        if status:
            state["status"] = status
        state.update(extra, cells_finished=sum(r["status"] == "finished" for r in rows),
                     walks=sum(r["walks"] for r in rows), steps=sum(r["steps"] for r in rows),
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
        meta = _cell_meta(out, cell) if resume else {}
        if meta.get("status") != "finished":
            return False
        rows.append(summary_row(cell, meta, cell_layout(out, cell)))
        return True

    def run_one(cell: Cell, again: bool) -> Callable[[], None]:
        lay = cell_layout(out, cell)
        try:
            cfg = dataclasses.replace(cell.config, out=str(lay.root))
            res = run_swarm(cfg, progress, on_phase, resume=again, layout=lay)
        except RunStopped as stop:
            if stop.summary:
                rows.append(summary_row(cell, stop.summary, lay))
            raise
        return lambda: rows.append(summary_row(cell, res, lay))

    def compile_variants() -> None:
        todo = [c.config for c in cells
                if not (resume and _cell_meta(out, c).get("status") == "finished")]
        variants = distinct_variants(map(swarm_variant, todo))
        if len(variants) > 1:
            if on_phase:
                on_phase("compiling")
            precompile(variants, todo[0].effective_workers)

    from kraftwalk.run.sweep_cells import run_cells

    return run_cells(cells, out, resume, record, on_cell, compile_variants, kept, run_one)


def _now() -> str:
    from kraftwalk.run.runner import _now as now

    return now()
