"""Per-phase cost of a step, for the benchmark's breakdown.

Each loop repeats one phase of ``swarm.step`` + ``checkers.check_invariants``
on a mid-walk state, so its time per iteration is that phase's cost.
"""
import numpy as np

from ..properties.checkers import check_step
from ..jit import call_with_features, kernel, literally
from ..choosers.swarm import draw_action, step
from ..transition import N_FAMILIES, enabled_masks
from .walk import reset_walk


@kernel
def _phase(w, base, act, masks, phase, n, features):
    literally(features)
    acc = 0
    for k in range(n):
        if phase == 0:
            enabled_masks(w, masks, features)
            acc += masks[0]
        elif phase == 1:
            draw_action(w, masks, act, features)
            acc += act[0]
        elif phase == 2:
            acc += check_step(w, act[3], features)
        else:
            if k % 500 == 0:
                reset_walk(w, 12345, k, base, True)
                enabled_masks(w, masks, features)
            step(w, act, masks, features)
    return acc


PHASES = ("enabled-action masks", "draw an action", "check the invariants (touched node)",
          "whole step without checks")


def phase_costs(walk, base_weights, features, n=1_000_000):
    """Nanoseconds per iteration of each phase (walk is advanced to mid-walk first)."""
    import time

    act = np.zeros(4, dtype=np.int64)
    masks = np.zeros(N_FAMILIES, dtype=np.int64)
    bw = np.asarray(base_weights, dtype=np.float64)
    call_with_features(_phase, walk, bw, act, masks, 3, 250, features)  # a state part-way into a walk
    out = {}
    for p, name in enumerate(PHASES):
        call_with_features(_phase, walk, bw, act, masks, p, 10, features)
        t = time.perf_counter()
        call_with_features(_phase, walk, bw, act, masks, p, n, features)
        out[name] = (time.perf_counter() - t) / n * 1e9
    return out
