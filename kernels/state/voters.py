"""Who votes: the voter set, read only through these accessors.

Every rule that counts votes, acknowledgements or reachable voters asks for the
voter set in some node's view: the candidate's, the leader's, the follower's own.
That set is the latest VotersRecord in the node's log, committed or not (KIP-853),
else the walk's bootstrap voters (nodes 0 .. P_VOTERS-1). It is kept per node in
VOTERS / VOTERS_AT / VOTER_COUNT: an append of a VotersRecord sets it, a truncation
below its record or an installed snapshot looks it up again. Without voter changes
no log holds a VotersRecord and every view is the bootstrap set. Sets are bitmasks
of node ids.

A voter is a replica key, (id, directory id): VOTER_DIRS keeps the directory id of each
voter of the view (the bootstrap voters' is 0). Node i is a voter in its own view only
if its own key is in it (SELF_VOTER): a node that lost its disk comes back under a new
directory id and is an observer until a leader removes its old key and adds the new one.
Everything that counts another node's vote or fetch checks the key the message carries
(``key_matches``); ``in_voters`` asks about ids, as Kafka's voter-state map does.
"""
import numpy as np

from ..jit import kernel
from .layout import (
    ADDED_DIR_SHIFT, DIR, DIR_BITS, ENTRY_VALUE, LOG_END, MAX_DIR, P_VOTERS, SELF_VOTER,
    SERIAL_MASK, VOTER_COUNT, VOTER_DIRS, VOTERS, VOTERS_AT, VOTERS_MASK, VOTERS_SHIFT,
    VOTERS_TAG,
)


@kernel
def popcount(x):
    c = 0
    while x:
        x &= x - 1
        c += 1
    return c


@kernel
def bootstrap_voters(w):
    """The voters the cluster started with (controller.quorum.bootstrap.servers)."""
    return (np.int64(1) << w.scal[P_VOTERS]) - 1


@kernel
def voters(w, i):
    """The voter set in node i's view."""
    return np.int64(w.node[VOTERS, i])


@kernel
def voter_count(w, i):
    """How many voters node i's view has (popcount of ``voters(w, i)``, kept with it)."""
    return w.node[VOTER_COUNT, i]


@kernel
def checks_quorum(w, i):
    """Does leader i's check-quorum timer run? LeaderState.timeUntilCheckQuorumExpires
    never expires for a one-voter set, whether or not the leader is that voter."""
    return w.node[VOTER_COUNT, i] > 1


@kernel
def majority(w, i):
    """The size of a majority of node i's voter set."""
    return w.node[VOTER_COUNT, i] // 2 + 1


@kernel
def majority_of(mask):
    return popcount(mask) // 2 + 1


@kernel
def voters_record_value(mask, added_dir, serial):
    """The value of a VotersRecord naming voter set ``mask``, the voter it adds (if any)
    under directory id ``added_dir`` (layout: VOTERS_TAG)."""
    return -(VOTERS_TAG | (np.int64(mask) << VOTERS_SHIFT)
             | (np.int64(added_dir) << ADDED_DIR_SHIFT) | (serial & SERIAL_MASK))


@kernel
def is_voters_record(value):
    return value < 0 and (-np.int64(value)) & VOTERS_TAG != 0


@kernel
def record_voters(value):
    """The voter set a VotersRecord value names."""
    return ((-np.int64(value)) >> VOTERS_SHIFT) & VOTERS_MASK


@kernel
def record_added_dir(value):
    """The directory id a VotersRecord gives the voter it adds."""
    return ((-np.int64(value)) >> ADDED_DIR_SHIFT) & MAX_DIR


@kernel
def dir_of(dirs, j):
    """Voter j's directory id in a VOTER_DIRS word."""
    return (dirs >> (DIR_BITS * j)) & MAX_DIR


@kernel
def with_dir(dirs, j, d):
    return (dirs & ~(MAX_DIR << (DIR_BITS * j))) | (d << (DIR_BITS * j))


@kernel
def view_dir(w, i, j):
    """The directory id of voter j in node i's view (the key i sends requests to)."""
    return dir_of(w.node[VOTER_DIRS, i], j)


@kernel
def set_voters(w, i, mask, at, dirs):
    w.node[VOTERS, i] = mask
    w.node[VOTERS_AT, i] = at
    w.node[VOTER_COUNT, i] = popcount(mask)
    w.node[VOTER_DIRS, i] = dirs
    w.node[SELF_VOTER, i] = 1 if (mask >> i) & 1 and dir_of(dirs, i) == w.node[DIR, i] else 0


@kernel
def reset_voters(w, i):
    """Node i's view before its log holds a VotersRecord: the bootstrap voters, as
    formatted (directory id 0)."""
    set_voters(w, i, bootstrap_voters(w), -1, 0)


@kernel
def next_voters(mask, dirs, value):
    """The view after VotersRecord ``value`` that follows the view (mask, dirs): its set,
    and the directory id it carries for the voter it adds."""
    new = record_voters(value)
    added = new & ~mask
    if added != 0:
        j = 0
        while not (added >> j) & 1:
            j += 1
        dirs = with_dir(dirs, j, record_added_dir(value))
    return new, dirs


@kernel
def apply_voters_record(w, i, value, at):
    """A VotersRecord appended at offset ``at`` of node i's log takes effect (KIP-853)."""
    mask, dirs = next_voters(voters(w, i), w.node[VOTER_DIRS, i], value)
    set_voters(w, i, mask, at, dirs)


@kernel
def refresh_voters(w, i):
    """Look node i's voter set up again: the latest VotersRecord below its log end (the
    entries below a snapshot's end are its content, so a snapshot's set is found too),
    with its voters' directory ids from the records before it."""
    k = w.node[LOG_END, i] - 1
    while k >= 0 and not is_voters_record(w.log[ENTRY_VALUE, i, k]):
        k -= 1
    mask = bootstrap_voters(w)
    dirs = np.int64(0)
    for q in range(k + 1):
        v = w.log[ENTRY_VALUE, i, q]
        if is_voters_record(v):
            mask, dirs = next_voters(mask, dirs, v)
    set_voters(w, i, mask, k, dirs)



@kernel
def majorities_intersect(a, b):
    """Does every majority of voter set a share a voter with every majority of b? (No
    two disjoint majorities: the brief's quorum overlap, K1.)"""
    common = popcount(a & b)
    need_a = majority_of(a) - (popcount(a) - common)
    need_b = majority_of(b) - (popcount(b) - common)
    return max(need_a, 0) + max(need_b, 0) > common


@kernel
def in_voters(w, i, j):
    """Is node j a voter in node i's view?"""
    return (voters(w, i) >> j) & 1 == 1


@kernel
def is_voter(w, i):
    """Is node i's own key (id, directory id) a voter in its own view?"""
    return w.node[SELF_VOTER, i] == 1


@kernel
def key_matches(w, i, j, d):
    """May a message from node j sent under directory id d count as voter j's in node i's
    view (LeaderState's ReplicaState.matchesKey)? Non-voters' always do: they are
    observers, keyed by the id and directory id they fetched with."""
    return not in_voters(w, i, j) or view_dir(w, i, j) == d


@kernel
def other_voters(w, i):
    """The voters in node i's view other than i: whom it asks for votes or names as
    successors."""
    return voters(w, i) & ~(np.int64(1) << i)


@kernel
def has_majority(w, i, mask):
    """Do the nodes in ``mask`` hold a majority of node i's voter set?"""
    return popcount(mask & voters(w, i)) >= majority(w, i)
