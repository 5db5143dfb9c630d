"""Whole walks: reset a cluster, step it, check it after every step.

``run_chunk`` simulates walks [first, first + count) of a run and returns their
statistics, first violations and weights. A walk depends only on (master seed,
walk index, params, weights mode, features), never on which chunk, thread,
process or machine runs it.
"""
import numpy as np
from numba import literally

from .jit import kernel

from .checkers import check_invariants
from .layout import (
    BOUND_NONE, G_LEADER_HW, G_LEADER_HW_EPOCH, GN_PREV_LEADER_EPOCH, P_DEPTH, P_NODES,
    S_BOUND_HIT, S_STEPS, S_WIDTH, UNATTACHED, V_WIDTH, alloc_walk,
)
from .rng import walk_stream_seed
from .scheduler import N_FAMILIES, draw_weights, step

STUCK = 3  # S_BOUND_HIT value: no action was enabled


@kernel
def reset_walk(w, master_seed, walk_index, base_weights, swarm):
    """The initial cluster: every node up, Unattached in epoch 0, empty logs, links up."""
    n = w.params[P_NODES]
    cap = w.log_epoch.shape[1]
    w.rng[0] = walk_stream_seed(master_seed, walk_index)
    full = (1 << n) - 1
    for i in range(n):
        w.role[i] = UNATTACHED
        w.up[i] = 1
        w.epoch[i] = 0
        w.voted_id[i] = -1
        w.leader_id[i] = -1
        w.log_end[i] = 0
        w.flushed_end[i] = 0
        w.hw[i] = -1
        w.granted[i] = 0
        w.rejected[i] = 0
        w.has_fetched[i] = 0
        w.epoch_start[i] = 0
        w.fetched_mask[i] = 0
        w.acked_mask[i] = 0
        w.preferred[i] = 0
        w.links[i] = full
        w.dirty_from[i] = cap
        w.g_prev_hash[i] = 0
        for j in range(n):
            w.inflight[i, j] = 0
            w.replica_end[i, j] = -1
        for e in range(w.g_vote.shape[1]):
            w.g_vote[i, e] = -1
        for f in range(w.g_node.shape[1]):
            w.g_node[i, f] = 0
        w.g_node[i, GN_PREV_LEADER_EPOCH] = -1
    w.n_msgs[0] = 0
    for e in range(w.g_leader.shape[0]):
        w.g_leader[e] = -1
        w.g_reach[e] = 0
    for f in range(w.g_scalar.shape[0]):
        w.g_scalar[f] = 0
    w.g_scalar[G_LEADER_HW] = -1
    w.g_scalar[G_LEADER_HW_EPOCH] = -1
    for f in range(w.counters.shape[0]):
        w.counters[f] = 0
    for f in range(w.stats.shape[0]):
        w.stats[f] = 0
    for f in range(w.viol.shape[0]):
        w.viol[f] = 0
    draw_weights(w, base_weights, swarm)


@kernel
def run_walk(w, act, features):
    """Step the walk until its depth, a violation, or a bound. Returns True on a violation."""
    depth = w.params[P_DEPTH]
    while w.stats[S_STEPS] < depth:
        if not step(w, act, features):
            w.stats[S_BOUND_HIT] = STUCK
            return False
        w.stats[S_STEPS] += 1
        if check_invariants(w, features):
            return True
        if w.stats[S_BOUND_HIT] != BOUND_NONE:
            return False
    return False


@kernel
def _run_walks(w, master_seed, first, count, base_weights, swarm, act, out_stats, out_viol,
               out_weights, features):
    literally(features)
    for k in range(count):
        reset_walk(w, master_seed, first + k, base_weights, swarm)
        run_walk(w, act, features)
        for f in range(w.stats.shape[0]):
            out_stats[k, f] = w.stats[f]
        for f in range(w.viol.shape[0]):
            out_viol[k, f] = w.viol[f]
        for f in range(w.weights.shape[0]):
            out_weights[k, f] = w.weights[f]


def run_chunk(master_seed, first, count, params, base_weights, swarm, features):
    """Run walks [first, first + count); returns (stats, violations, weights) arrays."""
    w = alloc_walk(params, N_FAMILIES)
    out_stats = np.zeros((count, S_WIDTH), dtype=np.int64)
    out_viol = np.zeros((count, V_WIDTH), dtype=np.int64)
    out_weights = np.zeros((count, N_FAMILIES), dtype=np.float64)
    _run_walks(w, np.uint64(master_seed), np.int64(first), np.int64(count),
               np.asarray(base_weights, dtype=np.float64), bool(swarm),
               np.zeros(3, dtype=np.int64), out_stats, out_viol,
               out_weights, int(features))
    return out_stats, out_viol, out_weights
