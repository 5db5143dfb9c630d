"""The swarm run: chunks of walks on all cores, results streamed to Parquet.

Walks are numbered 0, 1, 2, ...; a chunk is a contiguous range of them and a
task for joblib. Chunks come back in order and are written as they arrive, so
memory stays flat however many walks run, and the files are the same for any
worker count. A walk is a pure function of (seed, walk index, config).
"""
from __future__ import annotations

import os
import platform
import sys
import time
from collections import Counter
from contextlib import contextmanager, nullcontext
from pathlib import Path
from typing import Callable, Iterator

import numpy as np
import pyarrow as pa

from kraftwalk import __version__
from kraftwalk.config import RunConfig
from kraftwalk.errors import UsageError
from kraftwalk.mutations import mutation_bit
from kraftwalk.output import ParquetStream, write_json_atomic, write_text_atomic

Progress = Callable[[int, int, int], None]
# walks.parquet row groups: large enough that the footer's per-row-group metadata
# stays small (memory flat however many walks run), small enough to lose little.
ROW_GROUP_ROWS = 262_144


# ---- what the kernels get ------------------------------------------------------
def features_for(cfg: RunConfig) -> int:
    """The compile-time feature mask of a run: pre-vote, enabled checks, mutation."""
    from kraftwalk.kernels.checkers import INVARIANT_NAMES
    from kraftwalk.kernels.features import PRE_VOTE

    f = PRE_VOTE if cfg.pre_vote else 0
    for bit, name in enumerate(INVARIANT_NAMES):
        if name not in cfg.disabled_checks:
            f |= 1 << bit
    return f | mutation_bit(cfg.mutation)


def params_for(cfg: RunConfig) -> np.ndarray:
    from kraftwalk.kernels.layout import make_params

    return make_params(cfg.voters, cfg.observers, cfg.log_capacity, cfg.msg_slots,
                       cfg.max_epoch, cfg.max_records, cfg.depth)


def base_weights(mode: str) -> np.ndarray:
    """Family weights of a weights mode: the tuned defaults (the centre of the swarm's
    draws, and the ``fixed`` mode) or all equal (``uniform``)."""
    from kraftwalk.kernels.scheduler import DEFAULT_WEIGHTS

    return np.ones_like(DEFAULT_WEIGHTS) if mode == "uniform" else DEFAULT_WEIGHTS


def run_walks(seed: int, first: int, count: int, params: np.ndarray, mode: str,
              features: int):
    """One task: walks [first, first + count). Runs in a worker process."""
    from kraftwalk.kernels.walk import run_chunk

    stats, viol, weights = run_chunk(seed, first, count, params, base_weights(mode),
                                     mode == "swarm", features)
    return first, stats, viol, weights


# ---- Parquet schemas -----------------------------------------------------------
def _names():
    from kraftwalk.kernels.checkers import INVARIANT_NAMES
    from kraftwalk.kernels.layout import BOUND_NAMES, STAT_NAMES
    from kraftwalk.kernels.scheduler import FAMILY_NAMES

    return INVARIANT_NAMES, STAT_NAMES, BOUND_NAMES, FAMILY_NAMES


def _named(codes: np.ndarray, names) -> pa.DictionaryArray:
    """Codes 1..len(names) as a dictionary column of their names; 0 is null."""
    idx = pa.array(codes.astype(np.int32) - 1, mask=codes == 0)
    return pa.DictionaryArray.from_arrays(idx, pa.array(names, pa.string()))


def walks_table(first: int, stats: np.ndarray, viol: np.ndarray) -> pa.Table:
    inv_names, stat_names, bound_names, _ = _names()
    cols = {"walk": pa.array(np.arange(first, first + len(stats), dtype=np.int64))}
    for k, name in enumerate(stat_names):
        if name == "bound_hit":  # a name for every walk, "none" included
            cols[name] = _named(stats[:, k] + 1, bound_names)
        else:
            cols[name] = pa.array(stats[:, k].astype(np.int32))
    cols["violation"] = _named(viol[:, 0], inv_names)
    return pa.table(cols)


def violations_table(cfg: RunConfig, run_id: str, first: int, stats, viol, weights) -> pa.Table:
    inv_names, _, _, family_names = _names()
    rows = np.nonzero(viol[:, 0])[0]
    n = len(rows)
    v = viol[rows]
    cols = {
        "run_id": pa.array([run_id] * n, pa.string()),
        "walk": pa.array((first + rows).astype(np.int64)),
        "seed": pa.array(np.full(n, cfg.seed, dtype=np.uint64)),
        "step": pa.array(v[:, 1].astype(np.int64)),
        "invariant": pa.array([inv_names[i - 1] for i in v[:, 0]], pa.string()),
        "node_a": pa.array(v[:, 2].astype(np.int32)),
        "node_b": pa.array(v[:, 3].astype(np.int32)),
        "epoch": pa.array(v[:, 4].astype(np.int32)),
        "offset": pa.array(v[:, 5].astype(np.int32)),
    }
    for k, name in enumerate(family_names):
        cols[f"w_{name}"] = pa.array(weights[rows, k])
    for key in ("voters", "observers", "depth", "log_capacity", "msg_slots", "max_epoch",
                "max_records"):
        cols[key] = pa.array(np.full(n, getattr(cfg, key), dtype=np.int32))
    cols["pre_vote"] = pa.array(np.full(n, cfg.pre_vote, dtype=bool))
    cols["mutation"] = pa.array([cfg.mutation] * n, pa.string())
    cols["weights"] = pa.array([cfg.weights] * n, pa.string())
    return pa.table(cols)


def _empty_chunk() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(stats, viol, weights) of no walks, for the schemas."""
    from kraftwalk.kernels.layout import S_WIDTH, V_WIDTH
    from kraftwalk.kernels.scheduler import N_FAMILIES

    return (np.zeros((0, S_WIDTH), np.int64), np.zeros((0, V_WIDTH), np.int64),
            np.zeros((0, N_FAMILIES)))


def empty_violations(cfg: RunConfig, run_id: str) -> pa.Schema:
    return violations_table(cfg, run_id, 0, *_empty_chunk()).schema


class Histograms:
    """--walk-stats histogram: counts of each value of each statistic."""

    def __init__(self) -> None:
        self.counts: dict[str, Counter] = {}

    def add(self, stats: np.ndarray) -> None:
        _, stat_names, _, _ = _names()
        for k, name in enumerate(stat_names):
            vals, cnt = np.unique(stats[:, k], return_counts=True)
            c = self.counts.setdefault(name, Counter())
            for x, y in zip(vals.tolist(), cnt.tolist()):
                c[x] += y

    def table(self) -> pa.Table:
        stat, value, count = [], [], []
        for name, c in self.counts.items():
            for x in sorted(c):
                stat.append(name)
                value.append(x)
                count.append(c[x])
        return pa.table({"stat": pa.array(stat, pa.string()), "value": pa.array(value, pa.int64()),
                         "count": pa.array(count, pa.int64())})


# ---- the run ---------------------------------------------------------------------
def _chunks(cfg: RunConfig, deadline: float | None) -> Iterator[tuple[int, int]]:
    """Walk ranges (first, count): up to cfg.walks walks, and none started after the
    deadline (time.monotonic()), whichever comes first."""
    first = 0
    while True:
        if deadline is not None and time.monotonic() >= deadline:
            return
        count = cfg.chunk_walks
        if cfg.walks is not None:
            if first >= cfg.walks:
                return
            count = min(count, cfg.walks - first)
        yield first, count
        first += count


@contextmanager
def _cluster(cfg: RunConfig):
    """Connect joblib to a Dask or Ray cluster for the duration of a run."""
    from joblib import parallel_config

    closing = None
    if cfg.backend == "dask":
        try:
            from dask.distributed import Client
        except ImportError:
            raise UsageError("--backend dask needs Dask: pip install 'kraftwalk[dask]'") from None
        address = os.environ.get("DASK_SCHEDULER_ADDRESS")
        closing = Client(address) if address else Client(n_workers=cfg.effective_workers,
                                                         threads_per_worker=1)
    else:
        try:
            import ray
            from ray.util.joblib import register_ray
        except ImportError:
            raise UsageError("--backend ray needs Ray: pip install 'kraftwalk[ray]'") from None
        register_ray()
        ray.init(address=os.environ.get("RAY_ADDRESS"), ignore_reinit_error=True)
    try:
        with parallel_config(backend=cfg.backend):
            yield
    finally:
        if closing is not None:
            closing.close()


def _prepare_out(cfg: RunConfig) -> Path:
    out = Path(cfg.out)
    if out.exists() and (not out.is_dir() or any(out.iterdir())):
        raise UsageError(f"--out {cfg.out} already exists and is not an empty folder; "
                         "choose a new run folder")
    out.mkdir(parents=True, exist_ok=True)
    return out


def versions() -> dict:
    import numba
    import pyarrow

    return {"kraftwalk": __version__, "python": sys.version.split()[0], "numpy": np.__version__,
            "numba": numba.__version__, "pyarrow": pyarrow.__version__,
            "platform": platform.platform(), "machine": platform.machine()}


def warm_up(params: np.ndarray, mode: str, features: int) -> float:
    """Compile (or load from the cache) the kernels for this feature mask; seconds taken."""
    t = time.perf_counter()
    run_walks(0, 0, 1, params, mode, features)
    return time.perf_counter() - t


def stream_chunks(cfg: RunConfig, params: np.ndarray, features: int,
                  deadline: float | None) -> Iterator[tuple]:
    """(first, stats, viol, weights) for each chunk of walks, in walk order, computed on
    cfg.effective_workers processes. Stops after cfg.walks walks, or at ``deadline``
    (time.monotonic()) when cfg.walks is None. Closing the generator stops the workers."""
    from joblib import Parallel, delayed

    workers = cfg.effective_workers
    chunks = _chunks(cfg, deadline)
    if workers == 1 and cfg.backend == "loky":
        for first, count in chunks:
            yield run_walks(cfg.seed, first, count, params, cfg.weights, features)
        return
    tasks = (delayed(run_walks)(cfg.seed, first, count, params, cfg.weights, features)
             for first, count in chunks)
    with (nullcontext() if cfg.backend == "loky" else _cluster(cfg)):
        n_jobs = workers if cfg.backend == "loky" else -1
        yield from Parallel(n_jobs=n_jobs, return_as="generator", pre_dispatch="2*n_jobs")(tasks)


def run_swarm(cfg: RunConfig, progress: Progress | None = None) -> dict:
    """Run the swarm described by ``cfg``; write the run folder; return a summary."""
    cfg = cfg.with_out()
    run_id = cfg.run_id
    out = _prepare_out(cfg)
    write_text_atomic(out / "config.toml", cfg.to_toml())
    params = params_for(cfg)
    features = features_for(cfg)
    workers = cfg.effective_workers
    from kraftwalk.kernels.layout import S_BOUND_HIT, S_DISABLED, S_STEPS, STATS_BASE, VIOL_NAMES

    inv_names, _, bound_names, _ = _names()
    col_steps, col_disabled, col_bound = (x - STATS_BASE for x in (S_STEPS, S_DISABLED,
                                                                    S_BOUND_HIT))

    jit_seconds = warm_up(params, cfg.weights, features)
    started = time.monotonic()
    duration = cfg.effective_duration
    deadline = None if duration is None else started + duration

    walks = steps = disabled = 0
    by_invariant: Counter = Counter()
    bounds: Counter = Counter()
    first_violations: list[dict] = []
    hist = Histograms() if cfg.walk_stats == "histogram" else None
    status = "running"
    meta = {b"kraftwalk.run_id": run_id.encode(), b"kraftwalk.seed": str(cfg.seed).encode()}
    walks_path = out / ("walks.parquet" if hist is None else "walks_histogram.parquet")
    try:
        with ParquetStream(out / "violations.parquet", empty_violations(cfg, run_id),
                           metadata=meta) as vout, \
                (ParquetStream(walks_path, walks_table(0, *_empty_chunk()[:2]).schema,
                               metadata=meta) if hist is None else nullcontext()) as wout:
            pending, pending_rows, vpending = [], 0, []
            try:
                chunks = stream_chunks(cfg, params, features, deadline)
                for first, stats, viol, weights in chunks:
                    walks += len(stats)
                    steps += int(stats[:, col_steps].sum())
                    disabled += int(stats[:, col_disabled].sum())
                    for b, c in zip(*np.unique(stats[:, col_bound], return_counts=True)):
                        if b:
                            bounds[bound_names[b]] += int(c)
                    bad = np.nonzero(viol[:, 0])[0]
                    for r in bad:
                        by_invariant[inv_names[viol[r, 0] - 1]] += 1
                        if len(first_violations) < 5:
                            first_violations.append({
                                "walk": int(first + r),
                                **dict(zip(VIOL_NAMES, (int(x) for x in viol[r]))),
                                "invariant": inv_names[viol[r, 0] - 1]})
                    if len(bad):
                        vpending.append(violations_table(cfg, run_id, first, stats, viol, weights))
                        if sum(t.num_rows for t in vpending) >= ROW_GROUP_ROWS // 4:
                            vout.write(pa.concat_tables(vpending))
                            vpending = []
                    if hist is None:
                        pending.append(walks_table(first, stats, viol))
                        pending_rows += len(stats)
                        if pending_rows >= ROW_GROUP_ROWS:
                            wout.write(pa.concat_tables(pending))
                            pending, pending_rows = [], 0
                    else:
                        hist.add(stats)
                    if progress is not None:
                        progress(walks, steps, sum(by_invariant.values()))
            finally:
                # whole walks already computed reach the file, even on Ctrl-C
                if pending:
                    wout.write(pa.concat_tables(pending))
                if vpending:
                    vout.write(pa.concat_tables(vpending))
        if hist is not None:
            table = hist.table()
            with ParquetStream(walks_path, table.schema, metadata=meta) as hout:
                hout.write(table)
        status = "finished"
    except KeyboardInterrupt:
        status = "interrupted"
        raise
    finally:
        seconds = time.monotonic() - started
        summary = {
            "run_id": run_id, "out_dir": str(out), "status": status, "walks": walks,
            "steps": steps, "disabled_attempts": disabled, "seconds": seconds,
            "steps_per_s": steps / seconds if seconds > 0 else 0.0,
            "steps_per_s_per_core": steps / seconds / workers if seconds > 0 else 0.0,
            "walks_per_s": walks / seconds if seconds > 0 else 0.0, "workers": workers,
            "violations": sum(by_invariant.values()),
            "violations_by_invariant": dict(by_invariant), "jit_seconds": jit_seconds,
            "bound_hits": dict(bounds), "first_violations": first_violations,
        }
        write_json_atomic(out / "run.json", {
            **summary, "config": cfg.to_dict(), "features": features, "versions": versions(),
            "cpu_count": os.cpu_count(),
            "files": sorted(p.name for p in out.iterdir() if not p.name.endswith(".partial")),
        })
    return summary

