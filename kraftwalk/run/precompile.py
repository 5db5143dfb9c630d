"""Compile the kernel variants a job needs side by side, before it starts.

Every feature mask (pre-vote, snapshots, voter changes, enabled checks, a mutation)
is its own compiled variant of the kernels, about a minute each into an empty cache,
and a job that needs several (``hunt --all``: one per mutation; a sweep: one per
distinct cell) used to compile them one after another in the main process. Here
each variant compiles in its own joblib process into the shared Numba cache (saves
are serialized per kernel, kernels/jit/cache_lock.py), so N cores compile N variants at once;
the job then loads each variant from the cache where it used to compile it. A
variant already cached costs its worker a load.
"""
from __future__ import annotations

import time
import warnings
from typing import Callable, Iterable

from kraftwalk.config import RunConfig


def swarm_variant(cfg: RunConfig) -> tuple:
    """(kind, params, weights, features) of the swarm kernels ``cfg`` runs."""
    from kraftwalk.kernel_inputs import walk_weights
    from kraftwalk.kernel_inputs import features_for, params_for

    return ("swarm", params_for(cfg), walk_weights(cfg), features_for(cfg))


def timed_variant(cfg: RunConfig, scenario: str) -> tuple:
    """(kind, params, timing, features) of the timed kernels for ``scenario`` at Kafka's
    default timing (how hunt runs a liveness mutation)."""
    from kraftwalk.run.elect import kafka_timed

    return ("timed", *kafka_timed(cfg, scenario))


def elect_variants(ecfg) -> list[tuple]:
    """The distinct timed variants an elect config's cells run: one per release
    switches and pre-vote setting; releases that differ only in their timing rules
    (run-time values), and cluster sizes, share one."""
    from kraftwalk.run.elect import cell_inputs

    return distinct_variants(("timed", *cell_inputs(ecfg.for_release(k), v, p))
                             for k, v, p in ecfg.cells())


def distinct_variants(variants: Iterable[tuple]) -> list[tuple]:
    """One variant per (kind, feature mask), in first-seen order: the compiled code
    depends on those and on the argument types, which every variant of a kind shares."""
    seen: dict[tuple, tuple] = {}
    for v in variants:
        seen.setdefault((v[0], v[3]), v)
    return list(seen.values())


def _compile(kind: str, params, weights, features: int) -> float:
    if kind == "timed":
        from kraftwalk.run.elect import warm_up
    else:
        from kraftwalk.run.runner import warm_up
    return warm_up(params, weights, features)


def precompile(variants: Iterable[tuple], workers: int,
               log: Callable[[str], None] | None = None) -> float:
    """Compile (or load) the distinct ``variants`` on up to ``workers``
    processes; wall seconds taken. With one variant or one worker nothing is gained
    over compiling in the job itself, so nothing runs; nor on plain Numba, whose cache
    saves are not serialized."""
    from joblib import delayed

    from kraftwalk.kernels.jit import parallel_compile_safe
    from kraftwalk.run.backends import local_pool
    from kraftwalk.run.signals import check_stop

    jobs = distinct_variants(variants)
    n = min(workers, len(jobs))
    if n <= 1 or not parallel_compile_safe():  # else two saves could clash in the cache
        return 0.0
    if log:
        log(f"compiling {len(jobs)} kernel variants on {n} processes "
            "(a cached one loads in seconds) ...")
    # loky replaces a worker whose memory grew (a compile's does) and says so: expected
    warnings.filterwarnings("ignore", message=".*A worker stopped while some jobs were given")
    t = time.perf_counter()
    # loky whatever backend the job runs on: the cache being filled is this machine's
    local_pool(n)(delayed(_compile)(*v) for v in jobs)
    check_stop()  # one that came while the pool ran, if something swallowed it
    seconds = time.perf_counter() - t
    if log:
        log(f"compiled in {seconds:.0f} s")
    return seconds
