"""Who votes: the voter set, read only through these accessors.

Every rule that counts votes, acknowledgements or reachable voters asks for the
voter set in some node's view: the candidate's, the leader's, the follower's own.
Today that set is the walk's bootstrap voters (nodes 0 .. P_VOTERS-1, the same in
every view); with KIP-853 it becomes the latest VotersRecord in that node's log,
and this module is the one place that changes. Sets are bitmasks of node ids.
"""
import numpy as np

from .jit import kernel
from .layout import P_MAJORITY, P_VOTERS


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
    return bootstrap_voters(w)


@kernel(inline="always")
def voter_count(w, i):
    """How many voters node i's view has (popcount of ``voters(w, i)``, kept per walk)."""
    return w.scal[P_VOTERS]


@kernel(inline="always")
def majority(w, i):
    """The size of a majority of node i's voter set (kept per walk)."""
    return w.scal[P_MAJORITY]


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
