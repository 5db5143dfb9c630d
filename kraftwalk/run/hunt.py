"""``kraftwalk hunt``: how fast does the swarm find each known bug?

For each mutation, weights mode and master seed, run walks 0, 1, 2, ... until
the first violation (or the time budget) and record the walks, steps and wall
seconds it took and which invariant caught it. Walks and steps to the first
violation are deterministic (the lowest violating walk index); seconds are this
machine's, JIT excluded, and rounded up to the end of the chunk that found it.
A liveness mutation has no weights mode: it is hunted with timed walks of the
scenario that exposes it (``Mutation.scenario``), its row's mode says which.
"""
from __future__ import annotations

import dataclasses
import statistics
import time
import warnings
from pathlib import Path
from typing import Callable

import numpy as np
import pyarrow as pa

from kraftwalk.config import RunConfig
from kraftwalk.run.backends import chunk_ranges, start_pool, start_workers, stream_chunks
from kraftwalk.kernel_inputs import features_for, params_for, walk_weights
from kraftwalk.run.runner import warm_up

HUNT_CHUNK = 256  # walks per task: small, so the time to a find is measured finely
TIMED_HUNT_CHUNK = 32  # timed walks are hundreds of times longer


def first_violation(row: dict, chunks, names, start: float) -> dict:
    """Fill ``row`` from a stream of (first, stats, viol, ...) chunks in walk order: the
    lowest violating walk, the walks and steps up to its violation, the seconds."""
    from kraftwalk.kernels.state.layout import S_STEPS, STATS_BASE, V_STEP, VIOL_BASE

    col_steps, col_step = S_STEPS - STATS_BASE, V_STEP - VIOL_BASE
    walks = steps = 0
    try:
        for first, stats, viol, *_ in chunks:
            bad = np.nonzero(viol[:, 0])[0]
            if len(bad):
                r = int(bad[0])
                return {**row, "found": True, "invariant": names[viol[r, 0] - 1],
                        "walk": first + r, "walks": walks + r + 1,
                        "steps": steps + int(stats[:r, col_steps].sum()) + int(viol[r, col_step]),
                        "seconds": time.monotonic() - start}
            walks += len(stats)
            steps += int(stats[:, col_steps].sum())
    finally:
        chunks.close()
    return {**row, "walks": walks, "steps": steps, "seconds": time.monotonic() - start}


def new_row(cfg: RunConfig, mode: str, budget: float) -> dict:
    return {"kafka": cfg.kafka, "mutation": cfg.mutation, "weights": mode, "seed": cfg.seed,
            "found": False,
            "invariant": None, "walk": None, "walks": 0, "steps": 0, "seconds": budget}


def hunt_timed(cfg: RunConfig, scenario: str, budget: float) -> dict:
    """Hunt a liveness mutation with timed walks of ``scenario`` at Kafka's default
    timing (liveness needs time: the swarm cannot see it)."""
    from kraftwalk.run.elect import (kafka_timed, property_names, run_chunk, timed_chunks,
                                     warm_up)

    params, tp, features = kafka_timed(cfg, scenario)
    warm_up(params, tp, features)
    # timed walks are long: small chunks measure the time to a find finely
    cfg = dataclasses.replace(cfg, walks=None, chunk_walks=TIMED_HUNT_CHUNK)
    # the pool the walks reuse, kernels loaded, as for the swarm's hunts: its start-up
    # (about 0.8 s for two workers) is no part of the time to a find
    start_pool("loky", cfg.effective_workers, run_chunk, cfg.seed, params, tp, features)
    start = time.monotonic()
    chunks = timed_chunks(cfg.seed, params, tp, features, cfg.effective_workers,
                          chunk_ranges(cfg, start + budget))
    return first_violation(new_row(cfg, f"timed {scenario}", budget), chunks,
                           property_names(), start)


def hunt_one(cfg: RunConfig, budget: float) -> dict:
    """Hunt with one config (its seed and mutation) for at most ``budget`` seconds.
    A liveness mutation is hunted with timed walks of the scenario that exposes it."""
    from kraftwalk.vocabulary.properties import INVARIANT_NAMES
    from kraftwalk.vocabulary.mutations import timed_scenario

    scenario = timed_scenario(cfg.mutation)
    if scenario is not None:
        return hunt_timed(cfg, scenario, budget)
    cfg = dataclasses.replace(cfg, walks=None, duration=budget,
                              chunk_walks=min(cfg.chunk_walks, HUNT_CHUNK))
    params = params_for(cfg)
    features = features_for(cfg)
    weights = walk_weights(cfg)
    warm_up(params, weights, features)
    workers = cfg.effective_workers
    start_workers(cfg, workers, params, features)  # the pool the walks reuse, kernels loaded
    start = time.monotonic()
    chunks = stream_chunks(cfg, params, features, workers, chunk_ranges(cfg, start + budget))
    # joblib warns when a generator of results is closed early, as every find does
    warnings.filterwarnings("ignore", message=".*tasks (have been successfully executed|"
                            "which were still being processed).*")
    return first_violation(new_row(cfg, cfg.weights, budget), chunks, INVARIANT_NAMES, start)


def hunt_configs(base: RunConfig, mutations: list[str], weights_modes: list[str],
                 seeds: list[int]) -> list[RunConfig]:
    """The config of every hunt, in order: per mutation, weights mode (one for a
    liveness mutation: it has none) and seed, with the features the mutation needs, on
    the release it shows on where a later one hides it (with that release's pre-vote)."""
    from kraftwalk.vocabulary import releases
    from kraftwalk.vocabulary.mutations import mutation_needs, mutation_release, timed_scenario

    out = []
    for m in mutations:
        timed = timed_scenario(m) is not None
        needs = mutation_needs(m)
        kafka = mutation_release(m)
        cell = base if not kafka else dataclasses.replace(
            base, kafka=kafka, pre_vote=releases.has(kafka, releases.PRE_VOTE))
        for mode in (weights_modes[:1] if timed else weights_modes):
            out += [dataclasses.replace(cell, mutation=m, weights=mode, seed=s,
                                        snapshots=base.snapshots or "snapshots" in needs,
                                        reconfig=base.reconfig or "reconfig" in needs,
                                        disk_loss=base.disk_loss or "disk_loss" in needs)
                    for s in seeds]
    return out


def hunt_variant(cfg: RunConfig) -> tuple:
    """The kernel variant a hunt with ``cfg`` runs: timed walks of its scenario for a
    liveness mutation, else the swarm's (kraftwalk.run.precompile)."""
    from kraftwalk.vocabulary.mutations import timed_scenario
    from kraftwalk.run.precompile import swarm_variant, timed_variant

    scenario = timed_scenario(cfg.mutation)
    return swarm_variant(cfg) if scenario is None else timed_variant(cfg, scenario)


def hunt(base: RunConfig, mutations: list[str], weights_modes: list[str], seeds: list[int],
         budget: float, log: Callable[[str], None] = print,
         rows: list[dict] | None = None,
         on_row: Callable[[list[dict]], None] | None = None) -> list[dict]:
    """Hunt every (mutation, weights mode, seed); each finished hunt is appended to
    ``rows`` as it ends, and ``on_row(rows)`` saves them, so a stopped or killed hunt
    keeps them. The mutations' kernel variants are compiled first, side by side
    (kraftwalk.run.precompile), so the hunts' seconds never include a compile."""
    from kraftwalk.run.precompile import precompile
    from kraftwalk.run.signals import check_stop

    rows = [] if rows is None else rows
    configs = hunt_configs(base, mutations, weights_modes, seeds)
    precompile(map(hunt_variant, configs), base.effective_workers, log)
    for cfg in configs:
        check_stop()
        row = hunt_one(cfg, budget)
        rows.append(row)
        if on_row is not None:
            on_row(rows)
        what = (f"{row['invariant']} after {row['walks']:,} walks, {row['steps']:,} steps, "
                f"{row['seconds']:.2f} s" if row["found"] else
                f"nothing in {row['steps']:,} steps, {row['seconds']:.0f} s")
        on = f" / Kafka {cfg.kafka}" if cfg.kafka != base.kafka else ""
        log(f"{cfg.mutation}{on} / {row['weights']} / seed {cfg.seed}: {what}")
    return rows


def summarize(rows: list[dict]) -> list[dict]:
    """Median and range per (mutation, weights) over the seeds."""
    out = []
    keys = dict.fromkeys((r["mutation"], r["weights"]) for r in rows)
    for m, mode in keys:
        rs = [r for r in rows if r["mutation"] == m and r["weights"] == mode]
        found = [r for r in rs if r["found"]]
        secs = [r["seconds"] for r in found]
        out.append({
            "kafka": rs[0].get("kafka", ""), "mutation": m, "weights": mode, "seeds": len(rs),
            "found": len(found),
            "invariants": ", ".join(sorted({r["invariant"] for r in found})) or "-",
            "median_seconds": statistics.median(secs) if secs else None,
            "min_seconds": min(secs) if secs else None,
            "max_seconds": max(secs) if secs else None,
            "median_walks": statistics.median([r["walks"] for r in found]) if found else None,
            "median_steps": statistics.median([r["steps"] for r in found]) if found else None,
            "steps_checked": sum(r["steps"] for r in rs),
        })
    return out


def render_markdown(summary: list[dict], budget: float) -> str:
    def f(x, fmt):
        return "-" if x is None else format(x, fmt)

    from kraftwalk.storage.provenance import made_by
    from kraftwalk.vocabulary.mutations import MUTATIONS, mutation_release

    # the table's release: the one the hunts of mutations without a release of their
    # own ran on (a mutation that names one is hunted on it)
    own = [s.get("kafka", "") for s in summary if not mutation_release(s["mutation"])]
    kafka = max(own, key=own.count) if own else (summary[0].get("kafka", "") if summary else "")
    lines = ["| mutation | Kafka bug | weights | found | caught by | median s | range s | "
             "median walks | median steps | steps checked |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    elsewhere = []  # rows hunted on another release than the table's (the one they show on)
    for s in summary:
        m = MUTATIONS.get(s["mutation"])
        jira = m.jira if m is not None and m.jira else "-"
        if s.get("kafka") and s["kafka"] != kafka:
            elsewhere.append(f"{s['mutation']} on Kafka {s['kafka']}")
        lines.append(
            f"| {s['mutation']} | {jira} | {s['weights']} | {s['found']}/{s['seeds']} | "
            f"{s['invariants']} | "
            f"{f(s['median_seconds'], '.2f')} | {f(s['min_seconds'], '.2f')}-{f(s['max_seconds'], '.2f')} | "
            f"{f(s['median_walks'], ',.0f')} | {f(s['median_steps'], ',.0f')} | "
            f"{s['steps_checked']:,} |")
    where = f"Kafka {kafka}" if kafka else ""
    if where and elsewhere:
        where += " (" + ", ".join(dict.fromkeys(elsewhere)) + ": the newest release each shows on)"
    lines.append(f"\n{where + '; ' if where else ''}budget {budget:g} s per hunt; seconds "
                 f"exclude JIT; made by {made_by()}.")
    return "\n".join(lines) + "\n"


def write_results(rows: list[dict], summary: list[dict], budget: float, folder: Path,
                  name: str = "hunt", plot: bool = True) -> list[Path]:
    """NAME.parquet and NAME.md, each replaced whole (written beside, then renamed), and
    with ``plot`` NAME.png."""
    from kraftwalk.storage.output import ParquetStream, write_text_atomic

    folder.mkdir(parents=True, exist_ok=True)
    table = pa.Table.from_pylist(rows, schema=pa.schema([
        ("kafka", pa.string()), ("mutation", pa.string()), ("weights", pa.string()),
        ("seed", pa.int64()),
        ("found", pa.bool_()), ("invariant", pa.string()), ("walk", pa.int64()),
        ("walks", pa.int64()), ("steps", pa.int64()), ("seconds", pa.float64())]))
    pq = folder / f"{name}.parquet"
    with ParquetStream(pq, table.schema) as out:
        out.write(table)
    md = folder / f"{name}.md"
    write_text_atomic(md, render_markdown(summary, budget))
    if not plot:
        return [pq, md]
    from kraftwalk.storage.plots import plot_hunt

    png = plot_hunt(rows, folder / f"{name}.png", budget)
    return [pq, md, png]
