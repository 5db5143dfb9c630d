"""A counterexample: one walk of a run as replay, shrinking and ITF export see it,
for the untimed and the timed mode alike (replay.py and timed_replay.py build and
read it)."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from kraftwalk.config import RunConfig


@dataclass
class Trace:
    cfg: RunConfig
    walk: int
    actions: np.ndarray          # (steps, 3) recorded actions
    invariant: int               # id + 1 of the violated invariant, 0 if none
    violation: dict | None       # the kernel's first violation
    shrunk_from: int | None = None
    witness: str | None = None   # the reachability target this trace is the witness of
    times: np.ndarray | None = None  # timed walks: each action's time (microseconds)
    timed: str | None = None     # timed walks: the scenario and profile
    timed_walk: object | None = None  # timed walks: what re-runs it (timed_shrink.TimedWalk)
    faults_kept: tuple[int, int] | None = None  # shrunk timed walks: (random faults kept, of)


def violation_info(viol, names) -> dict | None:
    """The kernel's violation record as a dict with the property's name; None if none."""
    from kraftwalk.storage.tables import VIOL_COLUMNS

    if not viol[0]:
        return None
    return {**dict(zip(VIOL_COLUMNS, (int(x) for x in viol))), "invariant": names[int(viol[0]) - 1]}
