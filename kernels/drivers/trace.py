"""Trace mode: record a walk's actions, and replay actions one at a time.

The fast path (``walk.run_walk``) records nothing. ``record_walk`` re-runs one
walk from its seed with the same scheduler and writes each applied action
(family, a, b) to a buffer. ``apply_and_check`` applies one given action and
checks the invariants, which is what replay, shrinking and the differential test
against the reference model are built on.
"""
import numpy as np

from ..properties.checkers import check_after_step
from ..features import TRACE
from ..jit import call_with_features, kernel, literally
from ..state.layout import (
    P_DEPTH, STATS_BASE, S_STEPS, S_WIDTH, VIOL_BASE, V_INVARIANT, V_WIDTH, WEIGHT, alloc_walk,
)
from ..transition import N_FAMILIES, apply_action
from .walk import reset_walk, run_walk


@kernel
def _record(w, master_seed, walk_index, base_weights, swarm, act, masks, trace, features):
    literally(features)
    reset_walk(w, master_seed, walk_index, base_weights, swarm)
    run_walk(w, act, masks, trace, features)
    return w.scal[S_STEPS]


def record_walk(master_seed, walk_index, params, base_weights, swarm, features):
    """Re-run one walk and return (actions[steps, 3], stats, violation, weights, walk).

    ``walk`` holds the final state. The walk is the same one ``run_chunk`` runs."""
    w = alloc_walk(params, N_FAMILIES)
    trace = np.zeros((int(params[P_DEPTH]), 3), dtype=np.int64)
    n = call_with_features(_record, w, np.uint64(master_seed), np.int64(walk_index),
                np.asarray(base_weights, dtype=np.float64), bool(swarm),
                np.zeros(4, dtype=np.int64), np.zeros(N_FAMILIES, dtype=np.int64), trace,
                int(features) | TRACE)
    stats = w.scal[STATS_BASE:STATS_BASE + S_WIDTH].copy()
    viol = w.scal[VIOL_BASE:VIOL_BASE + V_WIDTH].copy()
    return trace[:n].copy(), stats, viol, w.weights[WEIGHT].copy(), w


@kernel
def apply_counted(w, f, a, b, features):
    """Apply a recorded action, count it and check: -1 if it is not enabled, else the
    walk's first violated invariant id + 1 so far (0 = none)."""
    t = apply_action(w, f, a, b, features)
    if t == -2:
        return -1
    w.scal[S_STEPS] += 1
    check_after_step(w, t, features)
    return w.scal[V_INVARIANT]


@kernel
def _apply_and_check(w, f, a, b, features):
    literally(features)
    return apply_counted(w, f, a, b, features)


@kernel
def _reset(w, master_seed, walk_index, base_weights, swarm):
    reset_walk(w, master_seed, walk_index, base_weights, swarm)


def new_walk(params, master_seed=0, walk_index=0, base_weights=None, swarm=False):
    """A walk in its initial state (weights matter only for drawing further actions)."""
    from ..choosers.swarm import DEFAULT_WEIGHTS
    w = alloc_walk(params, N_FAMILIES)
    bw = DEFAULT_WEIGHTS if base_weights is None else base_weights
    _reset(w, np.uint64(master_seed), np.int64(walk_index), np.asarray(bw, dtype=np.float64),
           bool(swarm))
    return w


def apply_and_check(w, action, features):
    """Apply action (f, a, b) to walk ``w`` and check every enabled invariant.

    Returns -1 if the action was not enabled (nothing changed), else the id + 1
    of the first violated invariant so far (0 = none)."""
    f, a, b = (int(x) for x in action)
    return int(call_with_features(_apply_and_check, w, np.int64(f), np.int64(a), np.int64(b), int(features)))


@kernel
def _replay(w, actions, keep, out, features):
    literally(features)
    for k in range(actions.shape[0]):
        if not keep[k]:
            continue
        # an action not enabled here (an earlier one was left out) is skipped
        if apply_counted(w, actions[k, 0], actions[k, 1], actions[k, 2], features) > 0:
            out[0] = w.scal[V_INVARIANT]
            out[1] = k
            return
    out[0] = 0
    out[1] = actions.shape[0]


def replay_actions(params, actions, features, keep=None):
    """Replay recorded actions on a fresh walk, skipping those not enabled (and those
    with keep[k] False). Returns (invariant id + 1 or 0, index of the action that
    violated it, the walk)."""
    w = new_walk(params)
    actions = np.ascontiguousarray(actions, dtype=np.int64).reshape(-1, 3)
    keep = np.ones(len(actions), dtype=np.bool_) if keep is None else np.asarray(keep, np.bool_)
    out = np.zeros(2, dtype=np.int64)
    call_with_features(_replay, w, actions, keep, out, int(features))
    return int(out[0]), int(out[1]), w
