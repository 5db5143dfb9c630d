"""``kraftwalk elect``: timed walks of a scenario, per release, cluster size and pre-vote.

A timed run is a swarm run whose chooser is the clock, on the same machinery: each
cell (release, voters, pre-vote) runs walks 0 .. walks-1 of the timed chooser
(:mod:`kraftwalk.kernels.drivers.timed`) in chunks on the run's backend (local
processes, Dask or Ray: :func:`kraftwalk.run.backends.stream_tasks`); chunks come back in
walk order and are saved as complete parts of the cell's partition of the folder's
datasets (:mod:`kraftwalk.storage.elect_folder`) after ``flush_seconds`` or PART_WALKS
walks, so whatever stops the run keeps what was done, the files hold the same walks for
any worker count, and ``--resume`` goes on after each cell's saved walks to the rows an
uninterrupted run writes. Times in the rows are integer microseconds (columns ending in
``_us``; null where the walk never measured it); the summary comes from the saved
walks' histograms (times to the millisecond).
"""
from __future__ import annotations

import json
import time
from datetime import datetime, timezone
from pathlib import Path
from typing import Callable, Iterable, Iterator

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from kraftwalk.elect_config import EXECUTION, ElectConfig
from kraftwalk.kernel_inputs import timed_features, timed_params, timing_params
from kraftwalk.storage import elect_folder as ef
from kraftwalk.storage import rundir
from kraftwalk.storage.elect_stats import Histogram, summarize_cell

PART_WALKS = 50_000  # most walks a saved part holds


def property_names() -> tuple[str, ...]:
    """Every property's name, indexed by its id (the violation code minus one)."""
    from kraftwalk.vocabulary.properties import INVARIANT_NAMES, LIVENESS_NAMES

    return (*INVARIANT_NAMES, *LIVENESS_NAMES)


def run_chunk(seed: int, first: int, count: int, params, tp, features) -> tuple:
    """One chunk of timed walks (in a worker): (first, stats, viol, timed)."""
    from kraftwalk.kernels.drivers.timed import run_timed_chunk

    stats, viol, timed, _ = run_timed_chunk(seed, first, count, params, tp, features)
    return first, stats, viol, timed


def warm_up(params, tp, features) -> float:
    """Compile (or load) the timed kernels here, before any worker starts; seconds."""
    t = time.perf_counter()
    run_chunk(0, 0, 1, params, tp, features)
    return time.perf_counter() - t


def timed_chunks(seed: int, params, tp, features, workers: int,
                 ranges: Iterable[tuple[int, int]], backend: str = "loky") -> Iterator[tuple]:
    """(first, stats, viol, timed) for each (first, count) range, in walk order, on
    ``workers`` workers of ``backend`` (its session entered by the caller for Dask or
    Ray); closing the generator stops them."""
    from kraftwalk.run.backends import stream_tasks

    return stream_tasks(backend, workers, run_chunk, seed, iter(ranges), params, tp, features)


def cell_inputs(cfg: ElectConfig, voters: int, pre_vote: bool) -> tuple:
    """(params, tp, features) of one cell's timed walks; ``cfg`` of the cell's release
    (ElectConfig.for_release)."""
    return (timed_params(voters, cfg.observers, cfg.depth), timing_params(cfg),
            timed_features(pre_vote, cfg.mutation, cfg.release, cfg.disabled_checks,
                           cfg.scenario))


def cell_ranges(cfg: ElectConfig, start: int = 0) -> list[tuple[int, int]]:
    """(first, count) of a cell's chunks from walk ``start`` on."""
    return [(f, min(cfg.chunk_walks, cfg.walks - f)) for f in range(start, cfg.walks, cfg.chunk_walks)]


def cell_walks(cfg: ElectConfig, voters: int, pre_vote: bool, workers: int) -> pa.Table:
    """Every walk's row of one cell, in memory: the rows an elect folder saves for it
    (experiments and tests; ``cfg`` of the cell's release)."""
    inputs = cell_inputs(cfg, voters, pre_vote)
    chunks = timed_chunks(cfg.seed, *inputs, workers, cell_ranges(cfg))
    return pa.concat_tables([walks_table(cfg, voters, pre_vote, f, st, vi, ti)
                             for f, st, vi, ti in chunks])


def kafka_timed(cfg, scenario: str) -> tuple:
    """(params, tp, features) of timed walks of ``scenario`` at Kafka's default timing
    for a swarm config's release, cluster, pre-vote setting and mutation (hunt, bench)."""
    ecfg = ElectConfig(kafka=(cfg.kafka,), voters=(cfg.voters,), observers=cfg.observers,
                       scenario=scenario, mutation=cfg.mutation)
    return cell_inputs(ecfg, cfg.voters, cfg.pre_vote)


def walks_table(cfg: ElectConfig, voters: int, pre_vote: bool, first: int,
                stats: np.ndarray, viol: np.ndarray, timed: np.ndarray) -> pa.Table:
    """One row per walk: the cell, the walk, what stopped it, and every timed statistic."""
    from kraftwalk.kernels.state.clock import TS_NAMES
    from kraftwalk.kernels.state.layout import BOUND_NAMES, S_BOUND_HIT, S_STEPS, STATS_BASE
    from kraftwalk.storage.tables import constant, named

    n = len(stats)
    cols = {
        "kafka": constant(cfg.release, n),
        "voters": pa.array(np.full(n, voters, np.int8)),
        "observers": pa.array(np.full(n, cfg.observers, np.int8)),
        "pre_vote": pa.array(np.full(n, pre_vote, bool)),
        "scenario": constant(cfg.scenario, n),
        "profile": constant(cfg.profile, n),
        "mutation": constant(cfg.mutation, n),
        "seed": pa.array(np.full(n, cfg.seed, np.uint64)),
        "walk": pa.array(np.arange(first, first + n, dtype=np.int64)),
        "steps": pa.array(stats[:, S_STEPS - STATS_BASE].astype(np.int64)),
        "bound_hit": named(stats[:, S_BOUND_HIT - STATS_BASE] + 1, BOUND_NAMES),
        "violation": named(viol[:, 0], property_names()),
    }
    for k, name in enumerate(TS_NAMES):
        x = timed[:, k]
        cols[name] = pa.array(x, pa.int64(), mask=x < 0)
    epochs = timed[:, TS_NAMES.index("election_epochs")]
    cols["split_vote"] = pa.array(epochs > 1, mask=epochs < 0)
    return pa.table(cols)


def violations_table(walks: pa.Table) -> pa.Table:
    keep = ["kafka", "voters", "pre_vote", "scenario", "profile", "mutation", "seed", "walk", "steps",
            "violation", "violation_us"]
    t = walks.filter(pc.is_valid(walks.column("violation")))
    return t.select(keep).rename_columns([*keep[:-2], "property", "time_us"])


class CellSaver:
    """Collects one cell's finished chunks and saves them as parts of its partition:
    after ``cfg.flush_seconds`` or PART_WALKS walks, whichever comes first, at the
    cell's end and on a stop. A range's violations part is written before its walks
    (or histogram) part, which marks the range as saved (:mod:`kraftwalk.storage.rundir`)."""

    def __init__(self, lay: rundir.Layout, cfg: ElectConfig, voters: int, pre_vote: bool,
                 start: int) -> None:
        self.lay, self.cfg, self.voters, self.pre_vote = lay, cfg, voters, pre_vote
        self.rows = cfg.walk_stats == "rows"
        self.first = self.end = start
        self.tables: list[pa.Table] = []
        self.bad: list[pa.Table] = []
        self.part = Histogram()
        self.last = time.monotonic()

    def add(self, first: int, stats: np.ndarray, viol: np.ndarray, timed: np.ndarray) -> None:
        assert first == self.end, "chunks arrive in walk order"
        t = walks_table(self.cfg, self.voters, self.pre_vote, first, stats, viol, timed)
        self.bad.append(violations_table(t))
        if self.rows:
            self.tables.append(t)
        else:
            self.part.add(timed)
        self.end = first + len(stats)

    def due(self) -> bool:
        return (self.end - self.first >= PART_WALKS or self.end == self.cfg.walks
                or time.monotonic() - self.last >= self.cfg.flush_seconds)

    def save(self) -> bool:
        """Save the walks collected since the last save as one part; whether it did."""
        from kraftwalk.run.signals import deferred

        if self.end == self.first:
            return False
        with deferred():  # both parts or neither: a stop's own save would write it again
            rundir.write_part(self.lay, rundir.VIOLATIONS, self.first, self.end,
                              pa.concat_tables(self.bad))
            if self.rows:
                rundir.write_part(self.lay, rundir.WALKS, self.first, self.end,
                                  pa.concat_tables(self.tables))
            else:
                rundir.write_part(self.lay, rundir.HISTOGRAM, self.first, self.end,
                                  self.part.table(self.cfg.release, self.voters, self.pre_vote))
            self.first = self.end
            self.tables, self.bad, self.part = [], [], Histogram()
            self.last = time.monotonic()
        return True


def run_cell(cfg: ElectConfig, voters: int, pre_vote: bool, workers: int,
             lay: rundir.Layout, info: dict, record: Callable[[], None],
             advance: Callable[[int, int], None] = lambda n, v: None) -> None:
    """The walks of one cell from its first unsaved one (``info["walks"]``), saved into
    ``lay`` as they finish; ``info`` (the cell's entry of run.json) counts them, and
    ``record`` rewrites run.json after each saved part; ``advance(walks, violations)``
    after each chunk. ``cfg``: of the cell's release."""
    from kraftwalk.kernels.state.clock import TS_NAMES
    from kraftwalk.run.signals import deferred

    inputs = cell_inputs(cfg, voters, pre_vote)
    info["jit_seconds"] = round(info.get("jit_seconds", 0.0) + warm_up(*inputs), 3)
    start = time.perf_counter()
    seconds = info.get("seconds", 0.0)
    col_events = TS_NAMES.index("events")
    saver = CellSaver(lay, cfg, voters, pre_vote, info["walks"])
    chunks = timed_chunks(cfg.seed, *inputs, workers, cell_ranges(cfg, info["walks"]),
                          cfg.backend)
    try:
        for first, stats, viol, timed in chunks:
            with deferred():  # counted, saved and recorded whole, or not at all
                saver.add(first, stats, viol, timed)
                info["events"] = info.get("events", 0) + int(timed[:, col_events].sum())
                bad = int(np.count_nonzero(viol[:, 0]))
                info["violations"] = info.get("violations", 0) + bad
                if saver.due() and saver.save():
                    info["walks"] = saver.first
                    info["seconds"] = round(seconds + time.perf_counter() - start, 3)
                    record()
                advance(len(stats), bad)
    except BaseException:
        chunks.close()
        if saver.save():  # stopped or failed: the walks that finished are kept
            info["walks"] = saver.first
            info["seconds"] = round(seconds + time.perf_counter() - start, 3)
        raise
    chunks.close()
    info["status"] = "complete" if info["walks"] == cfg.walks else "partial"


def cell_histograms(folder: Path, cfg: ElectConfig) -> list[tuple[tuple, Histogram]]:
    """(cell, histogram of its saved walks) of every cell, read part by part."""
    hist = cfg.walk_stats == "histogram"
    return [(cell, ef.cell_histogram(folder, cell, hist)) for cell in cfg.cells()]


def summarize(folder: Path, cfg: ElectConfig,
              hists: list[tuple[tuple, Histogram]] | None = None) -> list[dict]:
    """One summary row per cell that saved walks, from its saved parts (``hists``:
    their histograms, if read already)."""
    hists = hists if hists is not None else cell_histograms(folder, cfg)
    return [summarize_cell(*cell, h, ef.cell_violations(folder, cell))
            for cell, h in hists if h.walks]


SUMMARY_COLUMNS = (
    ("Kafka", "kafka", "s"), ("voters", "voters", "d"), ("pre-vote", "pre_vote", "b"), ("walks", "walks", ","),
    ("elect p50 ms", "elect_p50_ms", ".0f"), ("p90", "elect_p90_ms", ".0f"),
    ("p99", "elect_p99_ms", ".0f"), ("p99.9", "elect_p99_9_ms", ".0f"),
    ("max", "elect_max_ms", ".0f"), ("split votes %", "split_vote_pct", ".1f"),
    ("downtime p50 ms", "downtime_p50_ms", ".0f"), ("downtime p99 ms", "downtime_p99_ms", ".0f"),
    ("disruptions", "disruptions", ","), ("commit ms", "commit_latency_mean_ms", ".1f"),
    ("violations", "violations", ","),
)


def cell_text(value, fmt: str) -> str:
    if value is None:
        return "-"
    if fmt == "b":
        return "on" if value else "off"
    return format(value, fmt)


def render_markdown(summary: list[dict], cfg: ElectConfig) -> str:
    from kraftwalk.storage.output import markdown_table

    head = [h for h, _, _ in SUMMARY_COLUMNS]
    rows = [[cell_text(s[k], f) for _, k, f in SUMMARY_COLUMNS] for s in summary]
    return (f"Kafka {', '.join(cfg.kafka)}, scenario {cfg.scenario}, profile {cfg.profile}, {cfg.walks:,} walks per row, "
            f"seed {cfg.seed}. Elect: from the fault to a leader of a new epoch known to a "
            "majority of voters; downtime: until the committed log grows again; split votes: "
            "elections that needed more than one epoch.\n\n" + markdown_table(head, rows))


def summary_table(summary: list[dict]) -> pa.Table:
    return pa.Table.from_pylist(summary)


def write_outputs(cfg: ElectConfig, out: Path) -> list[dict]:
    """Summary (Parquet and Markdown) and CDF plot of the saved walks; the summary."""
    from kraftwalk.storage.output import write_table_atomic, write_text_atomic
    from kraftwalk.storage.plots import plot_election_cdf
    from kraftwalk.storage.provenance import made_by

    hists = cell_histograms(out, cfg)  # read once, for the summary and the plot
    summary = summarize(out, cfg, hists)
    if not summary:
        return summary
    write_table_atomic(out / ef.SUMMARY, summary_table(summary))
    write_text_atomic(out / ef.SUMMARY_MD, render_markdown(summary, cfg)
                      + f"\nMade by {made_by()}.\n")
    plot_election_cdf([(k, v, p, *h.values("elect_us"), h.walks) for (k, v, p), h in hists
                       if h.walks], out / ef.CDF_PLOT,
                      f"Kafka {', '.join(cfg.kafka)}, {cfg.scenario}, profile {cfg.profile}: "
                      "time to elect")
    return summary


def resume_config(folder: str | Path, given: dict) -> ElectConfig:
    """The config of the elect folder ``folder``, with the execution options in
    ``given`` applied (None: not given); any other option given that differs from the
    run's is a usage error, as is a folder another model or config wrote."""
    import dataclasses

    from kraftwalk.errors import UsageError
    from kraftwalk.run import fingerprint
    from kraftwalk.storage.lock import refuse_if_held

    folder = Path(folder)
    cfg = ef.config_of(folder)
    refuse_if_held(folder, "--resume")
    changes = {}
    for name, value in given.items():
        if value is None or value == ():
            continue
        if name in EXECUTION:
            changes[name] = value
            continue
        mine = getattr(cfg, name)
        if (list(mine) if isinstance(mine, tuple) else mine) != (
                list(dict.fromkeys(value)) if isinstance(value, (list, tuple)) else value):
            shown = "[" + ", ".join(map(str, mine)) + "]" if isinstance(mine, tuple) else mine
            raise UsageError(f"--resume {folder}: the run was made with --"
                             f"{name.replace('_', '-')} {shown}; {value!r} would change its "
                             "walks (start a new run instead)")
    cfg = dataclasses.replace(cfg, **changes)
    saved = any(rundir.saved_ranges(ef.cell_layout(folder, *c)) for c in cfg.cells())
    fingerprint.check(folder, folder / rundir.RUN_JSON, fingerprint.of_elect(cfg), saved)
    return cfg


def run(cfg: ElectConfig, out: Path, *, resume: bool = False,
        advance: Callable[[int, int], None] = lambda n, v: None,
        on_cell: Callable[[dict], None] = lambda c: None,
        base: rundir.Layout | None = None) -> dict:
    """Every cell of ``cfg`` into the folder ``out`` (created, and locked, by the
    caller); with ``resume``, after each cell's saved walks. Returns run.json's content.
    A stop (RunStopped) saves what finished, summarizes it and is raised again.
    ``base`` places the datasets in a sweep's (a cell of ``kraftwalk sweep``)."""
    base = base if base is not None else rundir.Layout(out, out)
    from kraftwalk.errors import RunStopped
    from kraftwalk.run import fingerprint
    from kraftwalk.run.backends import backend_session
    from kraftwalk.run.runner import versions
    from kraftwalk.storage.output import write_json_atomic, write_text_atomic

    now = lambda: datetime.now(timezone.utc).isoformat(timespec="seconds")  # noqa: E731
    walks_made_by = fingerprint.of_elect(cfg)
    prior: dict = {}
    if resume:
        try:
            prior = json.loads((out / rundir.RUN_JSON).read_text())
        except (OSError, ValueError):
            prior = {}
        prior = prior if isinstance(prior, dict) else {}
        # again, now that this process holds the folder: no one changed it meanwhile
        fingerprint.check(out, out / rundir.RUN_JSON, walks_made_by, True)
    else:
        write_text_atomic(out / rundir.CONFIG, cfg.to_toml())
    before = {(c.get("kafka"), c.get("voters"), c.get("pre_vote")): c
              for c in prior.get("cells", []) if isinstance(c, dict)}
    infos = []
    for k, v, p in cfg.cells():
        lay = ef.cell_layout(out, k, v, p, base)
        rundir.remove_leftovers(lay)
        walks = rundir.saved_prefix(lay)
        old = before.get((k, v, p), {})
        info = {"kafka": k, "voters": v, "pre_vote": p, "partition": lay.partition,
                "status": "complete" if walks == cfg.walks else "partial" if walks else "not started",
                "walks": walks, "events": 0, "violations": 0, "seconds": 0.0, "jit_seconds": 0.0}
        if walks:  # counts from the saved parts; times as the last run.json had them
            h = ef.cell_histogram(out, (k, v, p), cfg.walk_stats == "histogram")
            info.update(events=h.totals["events"], violations=ef.cell_violations(out, (k, v, p)),
                        **{key: old[key] for key in ("seconds", "jit_seconds")
                           if isinstance(old.get(key), (int, float))})
        infos.append(info)
    made = versions()
    state = {"command": "elect", "kind": "timed", **base.meta(), "status": "running",
             "started": prior.get("started", now()) if resume else now(), "kafka": list(cfg.kafka),
             "config": cfg.to_toml(), "backend": cfg.backend}
    if resume:
        state["resumed_at"] = now()

    def record(status: str | None = None, summary: list | None = None) -> dict:
        if status:
            state["status"] = status
        seconds = sum(c.get("seconds", 0.0) for c in infos)
        events = sum(c.get("events", 0) for c in infos)
        run_json = {**state, "cells": infos, "walks_saved": sum(c["walks"] for c in infos),
                    "seconds": round(seconds, 3), "events": events,
                    "events_per_second": round(events / seconds) if seconds else None,
                    "updated_at": now(), "summary": summary if summary is not None else
                    prior.get("summary", []) if resume else [],
                    "versions": made, fingerprint.KEY: walks_made_by}
        write_json_atomic(out / rundir.RUN_JSON, run_json)
        return run_json

    record()
    try:
        with backend_session(cfg) as workers:
            state["workers"] = workers
            for (k, v, p), info in zip(cfg.cells(), infos):
                if info["walks"] < cfg.walks:
                    run_cell(cfg.for_release(k), v, p, workers,
                             ef.cell_layout(out, k, v, p, base), info, record, advance)
                    record()
                else:
                    advance(info["walks"], info.get("violations", 0))
                on_cell(info)
    except RunStopped as stop:  # keep the saved walks' summary
        from kraftwalk.run.signals import deferred

        with deferred():
            record(f"stopped by {stop}", write_outputs(cfg, out))
        raise
    return record("complete", write_outputs(cfg, out))
