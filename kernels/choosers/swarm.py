"""The untimed swarm chooser: which enabled action a walk takes next.

Swarm testing (Groce et al., ISSTA 2012): at the start of each walk its family
weights are drawn at random and some fault families are left out entirely, so
different walks stress different mixes of behaviour. Each step draws a family by
weight among the enabled ones (:mod:`.transition` says which), then a node and the
remaining parameter. Every random choice is made here, so an action is fully
described by its three numbers: replaying a recorded action list reproduces a walk
without its random stream. :func:`step` is the seam the walk loop asks for its next
action through.
"""
import numpy as np

from kraftwalk.vocabulary.families import BASE_WEIGHTS, FAMILIES, FAMILY_ID, FEATURE_WEIGHTS

from ..jit import kernel

from ..features import FULL_CHECKS, TRACE
from ..state.layout import CUM_WEIGHT, FOLLOWER, LEADER_ID, N_MSGS, ROLE, S_DISABLED, WEIGHT
from ..state.voters import popcount
from ..state.rng import rand_below, rand_unit
from ..transition import (
    FAM_DELIVER, FAM_DUPLICATE, FAM_LOSE, FAM_PARTITION, FAM_SEND, N_BASE_FAMILIES, do_action,
    enabled_masks, has_target, message_fingerprint, n_families, node_targets, touched_node,
    update_masks,
)

# The tuned weights (also the centre of the swarm's draws), each declared with its
# family (kraftwalk.vocabulary.families, with why they are what they are). The feature
# families (snapshot, clean, add_voter, remove_voter, disk_loss) weigh 0 unless their
# feature is on (FEATURE_WEIGHTS then), so a walk without them draws exactly as before.
DEFAULT_WEIGHTS = np.array(BASE_WEIGHTS, dtype=np.float64)
# Families a swarm walk may leave out altogether (feature omission).
OMITTABLE = np.array([f.omittable for f in FAMILIES], dtype=np.int64)
OMIT_PROBABILITY = 0.3
SPREAD = 1.5  # swarm weights are base * exp(U(-SPREAD, SPREAD))


def with_feature_weights(base, features, uniform=False):
    """``base`` with the families of each feature named in ``features`` ("snapshots",
    "reconfig", "disk_loss") weighed: FEATURE_WEIGHTS, or 1 in the uniform mode."""
    w = np.array(base, dtype=np.float64)
    for feature in features:
        for family, x in FEATURE_WEIGHTS[feature].items():
            w[FAMILY_ID[family]] = 1.0 if uniform else x
    return w


MAX_ATTEMPTS = 256  # draws per step before the walk counts as stuck
# A Follower's Fetch goes to a bootstrap voter instead of its leader only after a
# request to the leader timed out (maybeSendFetchToBestNode): the relation allows it at
# any time; the chooser takes it for this share of a Follower's sends, so that a walk
# still replicates at the pace of one that fetches from its leader.
BOOTSTRAP_FETCH_SHARE = 0.1


@kernel
def draw_weights(w, base, swarm):
    """The walk's family weights: the base weights, or a swarm draw from them."""
    total = 0.0
    for f in range(base.shape[0]):
        x = base[f]
        if f >= N_BASE_FAMILIES and x == 0.0:
            pass  # a feature family that is off: no draw, so the stream stays as without it
        elif swarm:
            if OMITTABLE[f] == 1 and rand_unit(w.scal) < OMIT_PROBABILITY:
                x = 0.0
            else:
                x = x * np.exp(SPREAD * (2.0 * rand_unit(w.scal) - 1.0))
        w.weights[WEIGHT, f] = x
        total += x
        w.weights[CUM_WEIGHT, f] = total


@kernel
def nth_set_bit(mask, r):
    """Index of the r-th (0-based) set bit of mask."""
    for _ in range(r):
        mask &= mask - 1
    b = 0
    while not (mask >> b) & 1:
        b += 1
    return b


@kernel
def draw_action(w, masks, act, features):
    """Draw an enabled action: a family by weight among the enabled families, then a
    node uniformly among that family's enabled nodes, then the remaining parameter.
    Fills act = (f, a, b); False when no family is enabled."""
    total = 0.0
    nf = n_families(features)
    for f in range(nf):
        if masks[f] != 0:
            total += w.weights[WEIGHT, f]
        w.weights[CUM_WEIGHT, f] = total
    if total <= 0.0:
        return False
    x = rand_unit(w.scal) * total
    f = 0
    while f < nf - 1 and (w.weights[CUM_WEIGHT, f] <= x or masks[f] == 0):
        f += 1
    a = 0
    b = 0
    if f == FAM_DELIVER or f == FAM_LOSE or f == FAM_DUPLICATE:
        a = rand_below(w.scal, w.scal[N_MSGS])
        if features & TRACE:
            b = message_fingerprint(w, a)
    elif f == FAM_PARTITION:
        a = rand_below(w.scal, 4)
        b = rand_below(w.scal, 1 << 30)
    else:
        mask = masks[f]
        a = nth_set_bit(mask, rand_below(w.scal, popcount(mask)))
        if has_target(f):
            t = node_targets(w, f, a, features)
            if f == FAM_SEND and w.node[ROLE, a] == FOLLOWER:
                ld = np.int64(1) << w.node[LEADER_ID, a]
                if t != ld and rand_unit(w.scal) < BOOTSTRAP_FETCH_SHARE:
                    t &= ~ld
                else:
                    t = ld
            b = nth_set_bit(t, rand_below(w.scal, popcount(t)))
    act[0] = f
    act[1] = a
    act[2] = b
    return True


@kernel
def step(w, act, masks, features):
    """Apply one enabled action; act = (f, a, b, touched node). ``masks`` must be up to
    date on entry and is kept so. Draws that change nothing (a partition already in
    place) count as disabled attempts, not steps. False when nothing is enabled."""
    for _ in range(MAX_ATTEMPTS):
        if features & FULL_CHECKS:
            enabled_masks(w, masks, features)
        if not draw_action(w, masks, act, features):
            return False
        t = touched_node(w, act[0], act[1])
        if do_action(w, act[0], act[1], act[2], features):
            act[3] = t
            update_masks(w, masks, t, features)
            return True
        w.scal[S_DISABLED] += 1
    return False
