"""The swarm run: chunks of walks on all cores, results saved as they finish.

Walks are numbered 0, 1, 2, ...; a chunk is a contiguous range of them and a task
for joblib (:mod:`kraftwalk.run.backends`). Chunks come back in walk order and are saved
in groups as complete Parquet parts of the run folder's datasets
(:mod:`kraftwalk.storage.rundir`), so memory stays flat however many walks run, whatever
ends the process leaves every saved part readable, and the files hold the same walks
for any worker count. A walk is a pure function of (seed, walk index, config).
"""
from __future__ import annotations

import os
import platform
import signal
import sys
import time
from collections import Counter
from datetime import datetime, timezone
from pathlib import Path
from typing import Callable

import numpy as np
import pyarrow as pa

from kraftwalk.storage import rundir
from kraftwalk.run.backends import (
    backend_session, check_backend, chunk_ranges, run_walks, start_workers, stream_chunks,
)
from kraftwalk.config import RunConfig
from kraftwalk.storage.coverage import Coverage
from kraftwalk.errors import RunStopped
from kraftwalk.kernel_inputs import features_for, params_for, walk_weights
from kraftwalk.storage.output import write_json_atomic, write_table_atomic, write_text_atomic
from kraftwalk.storage.lock import hold
from kraftwalk.storage.paths import make_new_folder
from kraftwalk.run import fingerprint
from kraftwalk.run.signals import check_stop, deferred, stop_on_signals
from kraftwalk.storage.tables import (
    histogram_table, names, tally, violation_dicts, violations_table, walks_table,
)

Progress = Callable[[int, int, int], None]
# Most rows a saved part holds: parts stay small enough to write quickly, and no
# writer lives long enough for its footer metadata to grow (memory stays flat).
PART_ROWS = 262_144
STATUS_OF_SIGNAL = {"SIGINT": "interrupted", "SIGTERM": "terminated", "SIGHUP": "hung up"}


# ---- what a run records of its software ---------------------------------------
def versions() -> dict:
    import llvmlite
    import numba
    import pyarrow

    from kraftwalk.kernels import jit

    from kraftwalk.storage.provenance import provenance

    return {**provenance(), "python": sys.version.split()[0], "numpy": np.__version__,
            "numba": numba.__version__, "llvmlite": llvmlite.__version__,
            "numba_mode": jit.describe(), "pyarrow": pyarrow.__version__,
            "platform": platform.platform(), "machine": platform.machine()}


def warm_up(params: np.ndarray, weights: tuple[np.ndarray, bool], features: int) -> float:
    """Compile (or load from the cache) the kernels for this feature mask; seconds taken.
    Done once here before any worker starts, so workers load the cached code."""
    t = time.perf_counter()
    run_walks(0, 0, 1, params, weights, features)
    return time.perf_counter() - t


# ---- stopping ---------------------------------------------------------------------
# ---- the run folder ---------------------------------------------------------------
class RunSaver:
    """Collects finished chunks and saves them as parts of the run's datasets: after
    ``flush_seconds`` or PART_ROWS walks, whichever comes first, and on stop."""

    def __init__(self, lay: rundir.Layout, cfg: RunConfig, run_id: str, start: int = 0,
                 coverage: Coverage | None = None) -> None:
        self.lay, self.cfg, self.run_id = lay, cfg, run_id
        self.coverage = coverage or Coverage()  # of the saved walks
        self.pending_cover = Coverage()
        self.histogram = cfg.walk_stats == "histogram"
        self.dataset = rundir.HISTOGRAM if self.histogram else rundir.WALKS
        self.first = self.end = start
        self.walks: list = []
        self.viols: list = []
        self.saved = start
        self.last = time.monotonic()
        if not rundir.parts(lay, self.dataset):
            # Empty parts first, so even a run stopped at once is a readable dataset.
            self._write(0, 0, [], [], Coverage())
        elif coverage is not None:
            # A resumed run's aggregate, from the parts it is the sum of: a kill -9
            # between a range's walks part and the aggregate left it a range behind.
            self._write_coverage()

    def _write(self, first: int, end: int, chunks: list, viols: list, cover: Coverage) -> None:
        """Save walks [first, end): the violations and coverage parts, then the walks
        part that marks the range as saved, then the run's coverage so far."""
        if not viols:
            n_families = len(names()[3])
            viols = [violations_table(self.cfg, self.run_id, 0, np.zeros((0, 6), np.int64),
                                      np.zeros((0, n_families)))]
        if not chunks:
            chunks = [(0, np.zeros((0, len(names()[1])), np.int64), np.zeros((0, 6), np.int64))]
        if self.histogram:
            walks = histogram_table(np.concatenate([st for _, st, _ in chunks]))
        else:
            walks = pa.concat_tables([walks_table(f, st, vi) for f, st, vi in chunks])
        rundir.write_part(self.lay, rundir.VIOLATIONS, first, end, pa.concat_tables(viols))
        rundir.write_part(self.lay, rundir.COVERAGE, first, end, cover.table())
        rundir.write_part(self.lay, self.dataset, first, end, walks)
        self.coverage.merge(cover)
        self._write_coverage()

    def _write_coverage(self) -> None:
        write_table_atomic(self.lay.root / rundir.COVERAGE_FILE, self.coverage.table())

    def add(self, first: int, stats: np.ndarray, viol: np.ndarray, weights: np.ndarray,
            reach: np.ndarray, counts: np.ndarray) -> None:
        assert first == self.end, "chunks arrive in walk order"
        self.walks.append((first, stats, viol))
        self.pending_cover.add(first, reach, counts)
        if viol[:, 0].any():
            self.viols.append(violations_table(self.cfg, self.run_id, first, viol, weights))
        self.end = first + len(stats)
        if (self.end - self.first >= PART_ROWS
                or time.monotonic() - self.last >= self.cfg.flush_seconds):
            self.save()

    def save(self) -> None:
        """Save the walks collected since the last save as one part."""
        if self.end == self.first:
            return
        # All of it or none: a signal inside would have the stop's own save write the
        # range again and count its coverage twice.
        with deferred():
            self._write(self.first, self.end, self.walks, self.viols, self.pending_cover)
            self.pending_cover = Coverage()
            self.saved += self.end - self.first
            self.first = self.end
            self.walks, self.viols = [], []
            self.last = time.monotonic()


def _now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="seconds")


def run_swarm(cfg: RunConfig, progress: Progress | None = None,
              on_phase: Callable[[str], None] | None = None, *, resume: bool = False,
              layout: rundir.Layout | None = None) -> dict:
    """Run the swarm described by ``cfg``; write the run folder; return a summary.

    ``resume`` continues the run already in ``cfg.out`` after its saved walks (see
    :mod:`kraftwalk.run.resume`; totals then cover the whole run, rates this session).
    ``layout`` places the datasets elsewhere (a sweep's cells). A signal (SIGINT,
    SIGTERM, SIGHUP) stops the run: every finished chunk is saved, run.json says how it
    ended, and :class:`RunStopped` carrying the summary is raised."""
    check_backend(cfg)
    cfg = cfg.with_out()
    if layout is not None:  # a sweep's cell: the sweep holds the lock of its folder
        return _run_swarm(cfg, progress, on_phase, resume, layout)
    if not resume:
        make_new_folder(cfg.out, "run folder")
    with hold(cfg.out, "swarm", "--resume" if resume else "--out"):
        return _run_swarm(cfg, progress, on_phase, resume,
                          rundir.Layout(Path(cfg.out), Path(cfg.out)))


def _run_swarm(cfg: RunConfig, progress: Progress | None,
               on_phase: Callable[[str], None] | None, resume: bool,
               lay: rundir.Layout) -> dict:
    from kraftwalk.run.resume import check_unchanged, previous_seconds, saved_totals

    run_id = cfg.run_id
    if resume:
        check_unchanged(lay, cfg)  # again, now that no one else can write the folder
        rundir.remove_leftovers(lay)
        start = rundir.saved_prefix(lay)
        prior = saved_totals(lay, cfg.walk_stats == "histogram") if start else {}
        coverage = (Coverage.from_table(rundir.read_dataset(lay, rundir.COVERAGE))
                    if rundir.has_dataset(lay, rundir.COVERAGE) else None)
        prior_seconds = previous_seconds(lay)
    else:
        start, prior, prior_seconds, coverage = 0, {}, 0.0, None
    out = lay.root
    write_text_atomic(out / rundir.CONFIG, cfg.to_toml())
    params = params_for(cfg)
    features = features_for(cfg)
    from kraftwalk.kernels.state.layout import S_BOUND_HIT, S_DISABLED, S_STEPS, STATS_BASE

    inv_names, _, bound_names, _ = names()
    col_steps, col_disabled, col_bound = (x - STATS_BASE for x in (S_STEPS, S_DISABLED,
                                                                    S_BOUND_HIT))
    state = {"command": "swarm", "run_id": run_id, "out_dir": str(out), "status": "running",
             "pid": os.getpid(),
             "started_at": _now(), "walks": 0, "steps": 0, "disabled_attempts": 0,
             "violations": 0, "violations_by_invariant": Counter(), "bound_hits": Counter(),
             "first_violations": [], "jit_seconds": 0.0, "startup_seconds": 0.0,
             "workers": cfg.effective_workers,
             **prior, **lay.meta()}
    if resume:
        state["resumed_at_walk"] = start
    walks_made_by = fingerprint.of_run(cfg)
    session = {"walks": 0, "steps": 0}  # this process's share, for the rates
    started = time.monotonic()

    def record(status: str | None = None, **extra) -> dict:
        run_s = max(time.monotonic() - started - state["jit_seconds"]
                    - state["startup_seconds"], 1e-9)
        state.update(extra)
        if status:
            state["status"] = status
        summary = {
            **state, "kafka": cfg.kafka, "walks_saved": saver.saved if saver else start,
            "saved_in": [str(lay.dataset(d)) for d in rundir.DATASETS
                         if lay.dataset(d).is_dir()],
            "seconds": prior_seconds + run_s, "steps_per_s": session["steps"] / run_s,
            "steps_per_s_per_core": session["steps"] / run_s / state["workers"],
            "walks_per_s": session["walks"] / run_s, "updated_at": _now(),
            "violations_by_invariant": dict(state["violations_by_invariant"]),
            "bound_hits": dict(state["bound_hits"]),
            "reached": saver.coverage.reached() if saver else {},
        }
        write_json_atomic(out / rundir.RUN_JSON, {
            **summary, "config": cfg.to_dict(), "features": features, "versions": versions(),
            "cpu_count": os.cpu_count(), fingerprint.KEY: walks_made_by})
        return summary

    def take(first, stats, viol, weights, reach, counts) -> None:
        """Count a finished chunk, hand it to the saver, record a save, show progress."""
        steps = int(stats[:, col_steps].sum())
        for d in (state, session):
            d["walks"] += len(stats)
            d["steps"] += steps
        state["disabled_attempts"] += int(stats[:, col_disabled].sum())
        state["bound_hits"].update(tally(stats[:, col_bound], bound_names, 0))
        found = tally(viol[:, 0], inv_names, 1)
        state["violations_by_invariant"].update(found)
        state["violations"] += sum(found.values())
        fv = state["first_violations"]
        fv += violation_dicts(first, viol, 5 - len(fv))
        saved = saver.saved
        saver.add(first, stats, viol, weights, reach, counts)
        if saver.saved != saved:
            record()
        if progress is not None:
            progress(state["walks"], state["steps"], state["violations"])

    saver = None
    with stop_on_signals():
        try:
            # the run folder's first (empty) parts: the first Arrow arrays pay pyarrow's
            # one-time imports (pandas, ~0.3 s), start-up rather than walks
            t = time.monotonic()
            saver = RunSaver(lay, cfg, run_id, start, coverage)
            state["startup_seconds"] = time.monotonic() - t
            record()
            if on_phase:
                on_phase("compiling")
            state["jit_seconds"] = warm_up(params, walk_weights(cfg), features)
            check_stop()
            with backend_session(cfg) as workers:
                state["workers"] = workers
                if on_phase:
                    on_phase("starting")
                state["startup_seconds"] += start_workers(cfg, workers, params, features)
                check_stop()
                if on_phase:
                    on_phase("running")
                duration = cfg.effective_duration
                deadline = None if duration is None else (time.monotonic() + duration
                                                          - prior_seconds)
                chunks = stream_chunks(cfg, params, features, workers,
                                       chunk_ranges(cfg, deadline, start))
                try:
                    for chunk in chunks:
                        # Counted, saved and recorded whole, or not at all: a signal
                        # waits for the end of the block.
                        with deferred():
                            take(*chunk)
                finally:
                    chunks.close()
            saver.save()
            with deferred():  # a stop now still finds run.json whole
                finished = record("finished", signal=None)
        except RunStopped as stop:
            if saver is not None:
                saver.save()
            name = signal.Signals(stop.signum).name
            stop.summary = record(STATUS_OF_SIGNAL.get(name, "stopped"), signal=name)
            raise
        except KeyboardInterrupt:  # raised where our handler was not installed
            if saver is not None:
                saver.save()
            summary = record("interrupted", signal="SIGINT")
            raise RunStopped(signal.SIGINT, summary) from None
        except BaseException as e:
            if saver is not None:
                try:
                    saver.save()
                finally:
                    record("failed", error=" ".join(f"{type(e).__name__}: {e}".split()))
            raise
    return finished
