"""Who votes: the voter set, read only through these accessors.

Every rule that counts votes, acknowledgements or reachable voters asks for the
voter set in some node's view: the candidate's, the leader's, the follower's own.
That set is the latest VotersRecord in the node's log, committed or not (KIP-853),
else the walk's bootstrap voters (nodes 0 .. P_VOTERS-1). It is kept per node in
VOTERS / VOTERS_AT / VOTER_COUNT: an append of a VotersRecord sets it, a truncation
below its record or an installed snapshot looks it up again. Without voter changes
no log holds a VotersRecord and every view is the bootstrap set. Sets are bitmasks
of node ids.
"""
import numpy as np

from .jit import kernel
from .layout import (
    ENTRY_VALUE, LOG_END, P_VOTERS, SERIAL_MASK, VOTER_COUNT, VOTERS, VOTERS_AT, VOTERS_MASK,
    VOTERS_SHIFT, VOTERS_TAG,
)


@kernel(inline="always")
def popcount(x):
    c = 0
    while x:
        x &= x - 1
        c += 1
    return c


@kernel(inline="always")
def bootstrap_voters(w):
    """The voters the cluster started with (controller.quorum.bootstrap.servers)."""
    return (np.int64(1) << w.scal[P_VOTERS]) - 1


@kernel(inline="always")
def voters(w, i):
    """The voter set in node i's view."""
    return np.int64(w.node[VOTERS, i])


@kernel(inline="always")
def voter_count(w, i):
    """How many voters node i's view has (popcount of ``voters(w, i)``, kept with it)."""
    return w.node[VOTER_COUNT, i]


@kernel(inline="always")
def majority(w, i):
    """The size of a majority of node i's voter set."""
    return w.node[VOTER_COUNT, i] // 2 + 1


@kernel(inline="always")
def majority_of(mask):
    return popcount(mask) // 2 + 1


@kernel(inline="always")
def voters_record_value(mask, serial):
    """The value of a VotersRecord naming voter set ``mask`` (layout: VOTERS_TAG)."""
    return -(VOTERS_TAG | (np.int64(mask) << VOTERS_SHIFT) | (serial & SERIAL_MASK))


@kernel(inline="always")
def is_voters_record(value):
    return value < 0 and (-np.int64(value)) & VOTERS_TAG != 0


@kernel(inline="always")
def record_voters(value):
    """The voter set a VotersRecord value names."""
    return ((-np.int64(value)) >> VOTERS_SHIFT) & VOTERS_MASK


@kernel(inline="always")
def set_voters(w, i, mask, at):
    w.node[VOTERS, i] = mask
    w.node[VOTERS_AT, i] = at
    w.node[VOTER_COUNT, i] = popcount(mask)


@kernel(inline="always")
def reset_voters(w, i):
    """Node i's view before its log holds a VotersRecord: the bootstrap voters."""
    set_voters(w, i, bootstrap_voters(w), -1)


@kernel
def refresh_voters(w, i):
    """Look node i's voter set up again: the latest VotersRecord below its log end (the
    entries below a snapshot's end are its content, so a snapshot's set is found too)."""
    k = w.node[LOG_END, i] - 1
    while k >= 0:
        v = w.log[ENTRY_VALUE, i, k]
        if is_voters_record(v):
            set_voters(w, i, record_voters(v), k)
            return
        k -= 1
    reset_voters(w, i)


@kernel
def majorities_intersect(a, b):
    """Does every majority of voter set a share a voter with every majority of b? (No
    two disjoint majorities: the brief's quorum overlap, K1.)"""
    common = popcount(a & b)
    need_a = majority_of(a) - (popcount(a) - common)
    need_b = majority_of(b) - (popcount(b) - common)
    return max(need_a, 0) + max(need_b, 0) > common


@kernel(inline="always")
def in_voters(w, i, j):
    """Is node j a voter in node i's view?"""
    return (voters(w, i) >> j) & 1 == 1


@kernel(inline="always")
def is_voter(w, i):
    """Is node i a voter in its own view?"""
    return in_voters(w, i, i)


@kernel(inline="always")
def other_voters(w, i):
    """The voters in node i's view other than i: whom it asks for votes or names as
    successors."""
    return voters(w, i) & ~(np.int64(1) << i)


@kernel(inline="always")
def has_majority(w, i, mask):
    """Do the nodes in ``mask`` hold a majority of node i's voter set?"""
    return popcount(mask & voters(w, i)) >= majority(w, i)
