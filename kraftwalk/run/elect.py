"""``kraftwalk elect``: timed walks of a scenario, per cluster size and pre-vote setting.

Each cell (voters, pre-vote) runs walks 0 .. walks-1 of the timed chooser
(:mod:`kraftwalk.kernels.drivers.timed`) in chunks on joblib workers; chunks come back in
walk order, so the files hold the same walks for any worker count. A cell's walks
are saved as Parquet parts of at most PART_WALKS walks as they finish (one row per
walk, or with ``--walk-stats histogram`` the counts of each value of each statistic),
so whatever stops the run keeps what was done. Times in the rows are integer
microseconds (columns ending in ``_us``; null where the walk never measured it); the
summary comes from the histograms (times to the millisecond).
"""
from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterable, Iterator

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from kraftwalk.elect_config import ElectConfig
from kraftwalk.storage.elect_stats import HISTOGRAM_DIR, WALKS_DIR, Histogram, summarize_cell
from kraftwalk.kernel_inputs import timed_features, timed_params, timing_params

PART_WALKS = 50_000


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
                 ranges: Iterable[tuple[int, int]]) -> Iterator[tuple]:
    """(first, stats, viol, timed) for each (first, count) range, in walk order, on
    ``workers`` joblib processes; closing the generator stops them."""
    from joblib import delayed

    from kraftwalk.run.backends import local_pool

    if workers == 1:
        for f, n in ranges:
            yield run_chunk(seed, f, n, params, tp, features)
        return
    yield from local_pool(workers, return_as="generator", pre_dispatch="2*n_jobs")(
        delayed(run_chunk)(seed, f, n, params, tp, features) for f, n in ranges)


def cell_inputs(cfg: ElectConfig, voters: int, pre_vote: bool) -> tuple:
    """(params, tp, features) of one cell's timed walks; ``cfg`` of the cell's release
    (ElectConfig.for_release)."""
    return (timed_params(voters, cfg.observers, cfg.depth), timing_params(cfg),
            timed_features(pre_vote, cfg.mutation, cfg.release, cfg.disabled_checks))


def cell_chunks(cfg: ElectConfig, inputs: tuple, workers: int) -> Iterator[tuple]:
    """(first, stats, viol, timed) per chunk of one cell (its ``cell_inputs``), in walk
    order."""
    ranges = [(f, min(cfg.chunk_walks, cfg.walks - f)) for f in range(0, cfg.walks, cfg.chunk_walks)]
    return timed_chunks(cfg.seed, *inputs, workers, ranges)


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


@dataclass
class CellResult:
    """One cell's walks: every row (--walk-stats rows, else None), the histogram the
    summary comes from, the violating walks' rows, and what it cost."""
    kafka: str
    voters: int
    pre_vote: bool
    table: pa.Table | None
    hist: Histogram
    violations: pa.Table
    info: dict


def run_cell(cfg: ElectConfig, voters: int, pre_vote: bool, workers: int, out: Path | None,
             advance: Callable[[int], None] = lambda n: None,
             on_result: Callable[[CellResult], None] = lambda r: None) -> CellResult:
    """Every walk of one cell; parts saved under out/walks (or out/walks_histogram)
    as they finish. ``on_result`` receives the cell's result in the same signal-proof
    block that saves its last part, so a stop never leaves a saved cell out of the summary."""
    from kraftwalk.storage.output import write_table_atomic
    from kraftwalk.run.signals import deferred

    rows = cfg.walk_stats == "rows"
    inputs = cell_inputs(cfg, voters, pre_vote)
    jit = warm_up(*inputs)
    start = time.perf_counter()
    hist = Histogram()
    tables: list[pa.Table] = []
    bad: list[pa.Table] = []
    pending: list[pa.Table] = []
    part = Histogram()
    pending_first = 0
    steps = 0
    result: CellResult | None = None

    def save(end: int) -> None:
        nonlocal pending, pending_first, part
        if out is not None:
            stem = (f"kafka-{cfg.release}-v{voters}-pre-vote-{'on' if pre_vote else 'off'}-"
                    f"{pending_first:09d}.parquet")
            if rows:
                write_table_atomic(out / WALKS_DIR / stem, pa.concat_tables(pending))
            else:
                write_table_atomic(out / HISTOGRAM_DIR / stem, part.table(cfg.release, voters,
                                                                        pre_vote))
        pending, pending_first, part = [], end, Histogram()

    chunks = cell_chunks(cfg, inputs, workers)
    try:
        for first, stats, viol, timed in chunks:
            with deferred():  # counted, saved and (at the end) reported whole, or not at all
                t = walks_table(cfg, voters, pre_vote, first, stats, viol, timed)
                hist.add(timed)
                steps += int(pc.sum(t.column("steps")).as_py() or 0)
                bad.append(violations_table(t))
                if rows:
                    tables.append(t)
                    pending.append(t)
                else:
                    part.add(timed)
                end = first + len(stats)
                if end - pending_first >= PART_WALKS or end == cfg.walks:
                    save(end)
                advance(len(stats))
                if end == cfg.walks:
                    result = CellResult(
                        cfg.release, voters, pre_vote,
                        pa.concat_tables(tables) if rows else None, hist,
                        pa.concat_tables(bad),
                        {"kafka": cfg.release, "voters": voters, "pre_vote": pre_vote,
                         "jit_seconds": round(jit, 3),
                         "seconds": round(time.perf_counter() - start, 3),
                         "walks": hist.walks, "events": hist.totals["events"], "steps": steps})
                    on_result(result)
    finally:
        chunks.close()
    assert result is not None, "a cell's chunks ended before its last walk"
    return result


def summarize(cells: list[CellResult]) -> list[dict]:
    """One summary row per cell (elect_stats.summarize_cell)."""
    return [summarize_cell(c.kafka, c.voters, c.pre_vote, c.hist, c.violations.num_rows)
            for c in cells]


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


def write_outputs(cfg: ElectConfig, out: Path, cells: list[CellResult], status: str,
                  started: str) -> dict:
    """Summary, violations, plot and run.json of the finished cells."""
    from kraftwalk.storage.output import write_json_atomic, write_table_atomic, write_text_atomic
    from kraftwalk.storage.plots import plot_election_cdf
    from kraftwalk.run.runner import versions

    summary = summarize(cells)
    if cells:
        write_table_atomic(out / "violations.parquet",
                           pa.concat_tables([c.violations for c in cells]))
        write_table_atomic(out / "summary.parquet", summary_table(summary))
        from kraftwalk.storage.provenance import made_by

        write_text_atomic(out / "summary.md", render_markdown(summary, cfg)
                          + f"\nMade by {made_by()}.\n")
        plot_election_cdf([(c.kafka, c.voters, c.pre_vote, *c.hist.values("elect_us"),
                            c.hist.walks)
                           for c in cells], out / "elect-cdf.png",
                          f"Kafka {', '.join(cfg.kafka)}, {cfg.scenario}, profile {cfg.profile}: "
                          "time to elect")
    infos = [c.info for c in cells]
    seconds = sum(c["seconds"] for c in infos)
    events = sum(c["events"] for c in infos)
    run = {"command": "elect", "status": status, "started": started, "kafka": list(cfg.kafka),
           "config": cfg.to_toml(), "cells": infos,
           "seconds": round(seconds, 3), "events": events,
           "events_per_second": round(events / seconds) if seconds else None,
           "summary": summary, "versions": versions()}
    write_json_atomic(out / "run.json", run)
    return run


def run(cfg: ElectConfig, out: Path, workers: int,
        advance: Callable[[int], None] = lambda n: None,
        on_cell: Callable[[dict], None] = lambda c: None) -> dict:
    """Every cell of ``cfg`` into the folder ``out`` (created by the caller)."""
    from datetime import datetime, timezone

    from kraftwalk.errors import RunStopped
    from kraftwalk.storage.output import write_text_atomic

    started = datetime.now(timezone.utc).isoformat(timespec="seconds")
    write_text_atomic(out / "config.toml", cfg.to_toml())
    (out / (WALKS_DIR if cfg.walk_stats == "rows" else HISTOGRAM_DIR)).mkdir(exist_ok=True)
    cells: list[CellResult] = []
    try:
        for k, v, p in cfg.cells():
            run_cell(cfg.for_release(k), v, p, workers, out, advance, cells.append)
            on_cell(cells[-1].info)
    except RunStopped as stop:  # keep the finished cells' summary; their walks are saved
        write_outputs(cfg, out, cells, f"stopped by {stop}", started)
        raise
    return write_outputs(cfg, out, cells, "complete", started)
