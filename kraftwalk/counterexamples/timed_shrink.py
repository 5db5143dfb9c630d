"""Shrinking a timed walk: drop the random faults it does not need.

An untimed walk shrinks by dropping actions (``kraftwalk.counterexamples.shrink``). A timed walk
cannot: a liveness verdict says that the protocol did not recover although every
timer fired and every message it sent arrived on time, so dropping one of the
protocol's own events (a timer, a delivery, a resend) would make the violation
rather than find it. What a timed walk may lose are the faults its environment
drew: crashes, partitions, loss bursts and lost messages. Delta debugging runs
over those, each candidate a full re-simulation of the walk in which the dropped
faults do not happen (``kernels.clock.fault_happens``) and the protocol keeps every
obligation. The scenario's own fault (the leader's crash or isolation, the rolling
restarts, the end of the fault phase) is what the walk is about and always stays.
"""
from __future__ import annotations

import dataclasses

import numpy as np

# Faults past this many of a kind in a candidate walk (more than the original drew) happen.
MAX_FAULTS = 1 << 15


@dataclasses.dataclass
class TimedWalk:
    """One walk of an elect folder: what re-runs it."""
    seed: int
    walk: int
    params: np.ndarray
    tp: np.ndarray
    features: int


def drop_mask(kept: np.ndarray) -> np.ndarray:
    """The kernel's suppression mask that keeps only the faults ``kept`` (rows of (kind,
    ordinal): kernels.clock.SCHEDULED or LOST, and the fault's ordinal among its kind)."""
    drop = np.ones((2, MAX_FAULTS), dtype=np.uint8)
    kept = np.asarray(kept, dtype=np.int64).reshape(-1, 2)
    drop[kept[:, 0], kept[:, 1]] = 0
    return drop


def all_faults(scheduled: int, lost: int) -> np.ndarray:
    from kraftwalk.kernels.state.clock import LOST, SCHEDULED

    return np.array([(SCHEDULED, k) for k in range(scheduled)] + [(LOST, k) for k in range(lost)],
                    dtype=np.int64).reshape(-1, 2)


def violation(tw: TimedWalk, drop: np.ndarray | None) -> int:
    """The property (id + 1) the walk violates with ``drop``'s faults suppressed, or 0."""
    from kraftwalk.kernels.drivers.timed import run_timed_chunk

    _, viol, _, _ = run_timed_chunk(tw.seed, tw.walk, 1, tw.params, tw.tp, tw.features, drop)
    return int(viol[0, 0])


def shrink_faults(tw: TimedWalk, faults: np.ndarray, target: int,
                  max_runs: int = 2000) -> tuple[np.ndarray, int]:
    """(the faults kept, runs made): a 1-minimal subset of ``faults`` (rows of (kind,
    ordinal)) with which the walk still violates ``target`` (id + 1)."""
    from kraftwalk.counterexamples.shrink import ddmin

    runs = 0

    def fails(idx: np.ndarray) -> bool:
        nonlocal runs
        runs += 1
        return violation(tw, drop_mask(faults[idx])) == target

    if len(faults) == 0 or fails(np.zeros(0, dtype=np.int64)):
        return faults[:0], runs
    idx = ddmin(np.arange(len(faults)), fails, lambda: runs < max_runs)
    return faults[idx], runs
