"""Whole walks: reset a cluster, step it, check it after every step.

``run_chunk`` simulates walks [first, first + count) of a run and returns their
statistics, first violations and weights. A walk depends only on (master seed,
walk index, params, weights mode, features), never on which chunk, thread,
process or machine runs it.
"""
import numpy as np

from ..jit import call_with_features, kernel, literally

from ..properties.checkers import check_after_step
from ..features import TRACE
from ..state.layout import (
    BOUND_NONE, BOUND_STUCK, DIRTY_FROM, GN_PREV_LEADER_EPOCH, G_LEADER_HW, G_LEADER_HW_EPOCH,
    G_REACH, HW, LEADER_ID, LINKS, PREV_HASH, P_DEPTH, P_NODES, P_WIDTH, REPLICA_END, RNG,
    ROLE, STATS_BASE, S_BOUND_HIT, S_STEPS, S_WIDTH, UNATTACHED, UP, VIOL_BASE,
    VOTED_ID, V_WIDTH, WEIGHT, alloc_walk, DELIVERED, FAMILY_COUNT, MSG_NAMES, N_TARGETS,
    REACHED, GN_HW_VOTERS, VOTERS,
)
from ..state.rng import walk_stream_seed
from ..choosers.swarm import draw_weights, step
from ..state.voters import reset_voters
from ..transition import N_FAMILIES, enabled_masks


@kernel
def reset_walk(w, master_seed, walk_index, base_weights, swarm):
    """The initial cluster: every node up, Unattached in epoch 0, empty logs, links up."""
    n = w.scal[P_NODES]
    cap = w.log.shape[2]
    full = (1 << n) - 1
    w.node[:, :] = 0
    w.peer[:, :, :] = 0
    w.ghost[:, :] = -1
    w.hashes[PREV_HASH, :] = 0
    w.scal[P_WIDTH:] = 0
    w.scal[RNG] = np.int64(walk_stream_seed(master_seed, walk_index))
    for i in range(n):
        w.node[ROLE, i] = UNATTACHED
        w.node[UP, i] = 1
        w.node[VOTED_ID, i] = -1
        w.node[LEADER_ID, i] = -1
        w.node[HW, i] = -1
        w.node[LINKS, i] = full
        w.node[DIRTY_FROM, i] = cap
        w.node[GN_PREV_LEADER_EPOCH, i] = -1
        reset_voters(w, i)
        w.node[GN_HW_VOTERS, i] = w.node[VOTERS, i]
        for j in range(n):
            w.peer[REPLICA_END, i, j] = -1
    for e in range(w.ghost.shape[1]):
        w.ghost[G_REACH, e] = 0
    w.scal[G_LEADER_HW] = -1
    w.scal[G_LEADER_HW_EPOCH] = -1
    draw_weights(w, base_weights, swarm)


@kernel
def run_walk(w, act, masks, trace, features):
    """Step the walk until its depth, a violation, or a bound; with the TRACE feature,
    write each applied action to trace[k] (k = its step - 1). True on a violation."""
    depth = w.scal[P_DEPTH]
    enabled_masks(w, masks, features)
    while w.scal[S_STEPS] < depth:
        if not step(w, act, masks, features):
            w.scal[S_BOUND_HIT] = BOUND_STUCK
            return False
        if features & TRACE:
            k = w.scal[S_STEPS]
            trace[k, 0] = act[0]
            trace[k, 1] = act[1]
            trace[k, 2] = act[2]
        w.scal[S_STEPS] += 1
        if check_after_step(w, act[3], features):
            return True
        if w.scal[S_BOUND_HIT] != BOUND_NONE:
            return False
    return False


@kernel
def _run_walks(w, master_seed, first, count, base_weights, swarm, act, masks, trace, out_stats,
               out_viol, out_weights, out_reach, out_counts, features):
    literally(features)
    for k in range(count):
        reset_walk(w, master_seed, first + k, base_weights, swarm)
        run_walk(w, act, masks, trace, features)
        for f in range(S_WIDTH):
            out_stats[k, f] = w.scal[STATS_BASE + f]
        for f in range(V_WIDTH):
            out_viol[k, f] = w.scal[VIOL_BASE + f]
        for f in range(w.weights.shape[1]):
            out_weights[k, f] = w.weights[WEIGHT, f]
        for f in range(N_TARGETS + 1):
            out_reach[k, f] = w.scal[REACHED + f]
        for f in range(N_FAMILIES):
            out_counts[k, f] = w.scal[FAMILY_COUNT + f]
        for f in range(N_MSG_TYPES):
            out_counts[k, N_FAMILIES + f] = w.scal[DELIVERED + f]


N_MSG_TYPES = len(MSG_NAMES)


def run_chunk_covered(master_seed, first, count, params, base_weights, swarm, features):
    """Run walks [first, first + count); returns (stats, violations, weights, reach,
    counts): reach[:, 0] the REACHED mask and reach[:, 1 + t] target t's first step;
    counts[:, f] steps of family f, then counts[:, N_FAMILIES + m] deliveries of
    message type m."""
    w = alloc_walk(params, N_FAMILIES)
    out_stats = np.zeros((count, S_WIDTH), dtype=np.int64)
    out_viol = np.zeros((count, V_WIDTH), dtype=np.int64)
    out_weights = np.zeros((count, N_FAMILIES), dtype=np.float64)
    out_reach = np.zeros((count, N_TARGETS + 1), dtype=np.int64)
    out_counts = np.zeros((count, N_FAMILIES + N_MSG_TYPES), dtype=np.int64)
    call_with_features(_run_walks, w, np.uint64(master_seed), np.int64(first), np.int64(count),
               np.asarray(base_weights, dtype=np.float64), bool(swarm),
               np.zeros(4, dtype=np.int64), np.zeros(N_FAMILIES, dtype=np.int64),
               np.zeros((1, 3), dtype=np.int64), out_stats, out_viol, out_weights, out_reach,
               out_counts, int(features))
    return out_stats, out_viol, out_weights, out_reach, out_counts


def run_chunk(master_seed, first, count, params, base_weights, swarm, features):
    """Run walks [first, first + count); returns (stats, violations, weights) arrays
    (columns in VIOL_NAMES and FAMILY_NAMES order)."""
    return run_chunk_covered(master_seed, first, count, params, base_weights, swarm,
                             features)[:3]
