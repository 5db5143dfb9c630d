"""Where chunks of walks run: this process, local worker processes (joblib's loky),
or a Dask or Ray cluster through joblib's backends for them.

Whatever runs them, chunks come back in walk order, so the files a run writes are
the same for any backend and worker count. A local worker exits on its own when the
process that started it is gone (a kill -9 of the run leaves no one to stop it):
:func:`local_pool`.
"""
from __future__ import annotations

import os
import threading
import time
from contextlib import contextmanager
from itertools import islice
from typing import Iterator

import numpy as np

from kraftwalk.config import RunConfig
from kraftwalk.errors import UsageError
from kraftwalk.kernel_inputs import walk_weights


def run_walks(seed: int, first: int, count: int, params: np.ndarray,
              weights: tuple[np.ndarray, bool], features: int):
    """One task: walks [first, first + count) with ``weights`` (:func:`walk_weights`)
    -> (first, stats, violations, weights, reach, counts); see
    kernels.walk.run_chunk_covered."""
    from kraftwalk.kernels.drivers.walk import run_chunk_covered

    base, swarm = weights
    return (first, *run_chunk_covered(seed, first, count, params, base, swarm, features))


def _exit_when_orphaned(parent: int) -> None:
    while os.getppid() == parent:
        time.sleep(0.5)
    os._exit(1)


def _watch_parent(parent: int) -> None:
    """A local worker's first act: a daemon thread that ends the worker once ``parent``
    (the kraftwalk process) is gone, checked twice a second. Passed the parent's pid,
    not asking for it: a worker that starts after a kill -9 of the run would take its
    new parent, the init process, for the run."""
    threading.Thread(target=_exit_when_orphaned, args=(parent,), daemon=True,
                     name="kraftwalk-orphan-watch").start()


def local_pool(n_jobs: int, **kwargs):
    """joblib's ``Parallel`` on local (loky) worker processes that each watch this
    process from the moment they start (:func:`_watch_parent`): every pool kraftwalk
    starts (start-up, precompile, walks, timed walks) dies with it, kill -9 included.
    loky's own workers outlive a killed parent until their idle timeout (5 minutes)."""
    from joblib import Parallel
    from joblib._parallel_backends import LokyBackend

    class WatchedLoky(LokyBackend):
        def configure(self, n_jobs=1, parallel=None, **config):
            config.update(initializer=_watch_parent, initargs=(os.getpid(),))
            return super().configure(n_jobs=n_jobs, parallel=parallel, **config)

    return Parallel(n_jobs=n_jobs, backend=WatchedLoky(), **kwargs)


def check_backend(cfg: RunConfig) -> None:
    """A backend whose package is missing is a usage error, found before any work."""
    if cfg.backend == "dask":
        try:
            import dask.distributed  # noqa: F401
        except ImportError:
            raise UsageError("--backend dask needs Dask: pip install 'kraftwalk[dask]'") from None
    elif cfg.backend == "ray":
        try:
            import ray  # noqa: F401
            import ray.util.joblib  # noqa: F401
        except ImportError:
            raise UsageError("--backend ray needs Ray: pip install 'kraftwalk[ray]'") from None


_open_sessions: list[tuple[str, int]] = []  # (backend, workers) of the sessions entered


@contextmanager
def backend_session(cfg: RunConfig) -> Iterator[int]:
    """Connect joblib to the run's backend; yields the number of workers (cores) that
    run chunks: ``--workers`` locally, the cluster's own count on Dask or Ray. Inside a
    session of the same backend (a sweep holds one over its cells) the cluster is
    reused, not started or connected again."""
    check_backend(cfg)
    if cfg.backend == "loky":
        yield cfg.effective_workers
        return
    if _open_sessions and _open_sessions[-1][0] == cfg.backend:
        yield _open_sessions[-1][1]
        return
    from joblib import parallel_config

    closing = None
    if cfg.backend == "dask":
        from dask.distributed import Client

        address = os.environ.get("DASK_SCHEDULER_ADDRESS")
        closing = client = (Client(address) if address else
                            Client(n_workers=cfg.effective_workers, threads_per_worker=1))
        client.wait_for_workers(1)
        workers = sum(w.get("nthreads", 1) for w in client.scheduler_info()["workers"].values())
    else:
        import ray
        from ray.util.joblib import register_ray

        register_ray()
        ray.init(address=os.environ.get("RAY_ADDRESS"), ignore_reinit_error=True)
        workers = int(ray.cluster_resources().get("CPU", 1))
    _open_sessions.append((cfg.backend, max(workers, 1)))
    try:
        with parallel_config(backend=cfg.backend):
            yield max(workers, 1)
    finally:
        _open_sessions.pop()
        if closing is not None:
            closing.close()


def chunk_ranges(cfg: RunConfig, deadline: float | None, first: int = 0
                 ) -> Iterator[tuple[int, int]]:
    """Walk ranges (first, count) from ``first``: up to cfg.walks walks in all, and none
    started after the deadline (time.monotonic()), whichever comes first."""
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


def start_workers(cfg: RunConfig, workers: int, params: np.ndarray, features: int) -> float:
    """Start the local worker pool and have every worker load the swarm kernels; seconds
    taken (:func:`start_pool`)."""
    return start_pool(cfg.backend, workers, run_walks, cfg.seed, params, walk_weights(cfg),
                      features)


def start_pool(backend: str, workers: int, task, seed: int, *args) -> float:
    """Start the local worker pool and have every worker load the kernels (one walk of
    ``task`` each, its result dropped) before any walk is timed; seconds taken. A run
    counts this as start-up, as it does the compile: about a second for two workers,
    which a 20-second run would otherwise book as walks not run. Nothing to do with one
    worker (the walks run in this process) or on a cluster (its workers are already up)."""
    if workers == 1 or backend != "loky":
        return 0.0
    from joblib import delayed

    t = time.perf_counter()
    # the same n_jobs as stream_tasks: joblib reuses this pool for the walks
    local_pool(workers)(delayed(task)(seed, 0, 1, *args) for _ in range(workers))
    return time.perf_counter() - t


def stream_chunks(cfg: RunConfig, params: np.ndarray, features: int, workers: int,
                  ranges: Iterator[tuple[int, int]]) -> Iterator[tuple]:
    """(first, stats, viol, weights, reach, counts) of swarm walks for each range, in
    order (:func:`stream_tasks`)."""
    return stream_tasks(cfg.backend, workers, run_walks, cfg.seed, ranges, params,
                        walk_weights(cfg), features)


def stream_tasks(backend: str, workers: int, task, seed: int,
                 ranges: Iterator[tuple[int, int]], *args) -> Iterator[tuple]:
    """``task(seed, first, count, *args)`` for each (first, count) range, results in
    range order, on the backend of ``backend_session`` (entered by the caller): the one
    way both choosers' walks run. Closing the generator stops the workers."""
    from joblib import Parallel, delayed

    if workers == 1 and backend == "loky":
        for first, count in ranges:
            yield task(seed, first, count, *args)
        return
    tasks = (delayed(task)(seed, first, count, *args) for first, count in ranges)
    if backend == "ray":
        # joblib's Ray backend returns lists only: ordered batches of 2 chunks a worker
        parallel = Parallel(n_jobs=-1)
        while batch := list(islice(tasks, 2 * workers)):
            yield from parallel(batch)
        return
    streamed = dict(return_as="generator", pre_dispatch="2*n_jobs")
    pool = (local_pool(workers, **streamed) if backend == "loky" else
            Parallel(n_jobs=-1, **streamed))
    yield from pool(tasks)
