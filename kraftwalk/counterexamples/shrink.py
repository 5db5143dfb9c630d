"""Shrinking a violating walk to a short one that violates the same invariant.

Delta debugging (Zeller and Hildebrandt, ddmin) over the recorded action list,
each candidate replayed deterministically by the kernel; then single actions are
dropped until none can be (1-minimal). A deleted action can leave a later one
not enabled (a message never sent): replay skips it, and the final trace keeps
only actions that applied.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass
class ShrinkResult:
    actions: np.ndarray        # the shrunk, fully applicable action list
    invariant: int             # invariant id + 1 it violates
    original_length: int
    replays: int


def _applied(params, actions, features, keep) -> tuple[int, np.ndarray]:
    """Replay the kept actions; return (violation, the actions that applied up to it)."""
    from kraftwalk.kernels.drivers.trace import apply_and_check, new_walk

    w = new_walk(params)
    out = []
    for k in np.nonzero(keep)[0]:
        r = apply_and_check(w, actions[k], features)
        if r == -1:
            continue
        out.append(actions[k])
        if r > 0:
            return r, np.array(out, dtype=np.int64).reshape(-1, 3)
    return 0, np.array(out, dtype=np.int64).reshape(-1, 3)


def ddmin(idx: np.ndarray, fails, go_on) -> np.ndarray:
    """The subset of ``idx`` (in order) left once no chunk and then no single item can
    be dropped with ``fails(subset)`` still true; ``go_on()`` false stops early."""
    # ddmin: try dropping each of n chunks; on success keep the rest and coarsen.
    n = 2
    while len(idx) >= 2 and go_on():
        chunks = np.array_split(idx, n)
        for c in range(n):
            rest = np.concatenate([chunks[j] for j in range(n) if j != c])
            if len(rest) and fails(rest):
                idx = rest
                n = max(n - 1, 2)
                break
        else:
            if n >= len(idx):
                break
            n = min(2 * n, len(idx))
    # 1-minimal: no single remaining item can go.
    changed = True
    while changed and go_on():
        changed = False
        for k in range(len(idx) - 1, -1, -1):
            rest = np.delete(idx, k)
            if len(rest) and fails(rest):
                idx = rest
                changed = True
    return idx


def shrink(params, actions, features, invariant: int | None = None,
           max_replays: int = 20000) -> ShrinkResult:
    """Shrink ``actions`` (a violating walk's recorded actions) keeping the violation
    of ``invariant`` (id + 1; default: whatever the full list violates)."""
    from kraftwalk.kernels.drivers.trace import replay_actions

    actions = np.ascontiguousarray(actions, dtype=np.int64).reshape(-1, 3)
    inv, at, _ = replay_actions(params, actions, features)
    if inv == 0 or (invariant is not None and inv != invariant):
        raise ValueError("the actions do not violate the invariant; nothing to shrink")
    target = inv
    replays = 1
    idx = np.arange(at + 1)  # nothing after the violating action matters

    def fails(subset: np.ndarray) -> bool:
        nonlocal replays
        replays += 1
        keep = np.zeros(len(actions), dtype=np.bool_)
        keep[subset] = True
        return replay_actions(params, actions, features, keep)[0] == target

    idx = ddmin(idx, fails, lambda: replays < max_replays)
    keep = np.zeros(len(actions), dtype=np.bool_)
    keep[idx] = True
    inv2, applied = _applied(params, actions, features, keep)
    assert inv2 == target
    return ShrinkResult(applied, target, int(at + 1), replays)
