"""Who votes, in a node's view: the reference model's twin of ``kernels/state/voters.py``.

Every rule that counts votes, acknowledgements or voters asks here. A node's view is
the latest VotersRecord in its log, committed or not (KIP-853: a voter set takes
effect when it is appended, and a truncation that drops it rolls it back), else the
cluster's bootstrap voters (nodes ``0 .. voters-1``). The set is read from the log
each time rather than cached, so no log change can leave it stale. ``node.log`` also
holds the entries below a snapshot's end (the snapshot's content), so a VotersRecord
a snapshot covers still counts, as Kafka's snapshots carry the voter set.

A voter is a replica key (KIP-853): its id and the directory id of its disk. A
VotersRecord carries the directory id of the voter it adds; the others keep the one they
joined with (the bootstrap voters: 0, as formatted), so a node's keys are found by
replaying the records of its log in order. A node votes, in its own view, only under its
own key: one that lost its disk has a new directory id and is an observer until a leader
removes the old key and adds the new one.
"""
from __future__ import annotations

from kraftwalk.kernels.state.layout import (
    ADDED_DIR_SHIFT, MAX_DIR, SERIAL_MASK, VOTERS_MASK, VOTERS_SHIFT, VOTERS_TAG,
)


# ---- VotersRecord values (the kernel's encoding, a modelling convention) -------------
def voters_record_value(ids, serial: int, added_dir: int = 0) -> int:
    """The entry value of a VotersRecord naming the voters ``ids``: a control record
    (negative, as a LeaderChange) that carries its set in bits VOTERS_SHIFT.., the
    directory id of the voter it adds in bits ADDED_DIR_SHIFT.. of -value, and the record
    counter in the low bits (so two records rarely share a value)."""
    mask = 0
    for j in ids:
        mask |= 1 << j
    return -(VOTERS_TAG | (mask << VOTERS_SHIFT) | (added_dir << ADDED_DIR_SHIFT)
             | (serial & SERIAL_MASK))


def is_voters_record(value: int) -> bool:
    return value < 0 and bool(-value & VOTERS_TAG)


def record_voters(value: int) -> frozenset:
    """The voter set a VotersRecord value names."""
    mask = (-value >> VOTERS_SHIFT) & VOTERS_MASK
    return frozenset(j for j in range(VOTERS_MASK.bit_length()) if mask >> j & 1)


def record_added_dir(value: int) -> int:
    """The directory id a VotersRecord value gives the voter it adds."""
    return (-value >> ADDED_DIR_SHIFT) & MAX_DIR


def latest_voters_record(node) -> int:
    """Offset of the latest VotersRecord in ``node``'s log, -1 if it holds none (its view
    is then the bootstrap voters)."""
    for k in range(len(node.log) - 1, -1, -1):
        if is_voters_record(node.log[k][1]):
            return k
    return -1


# ---- the voter set in a node's view, and what follows from it -------------------------
def voters(c, node) -> frozenset:
    """The voter set in ``node``'s view."""
    k = latest_voters_record(node)
    return c.bootstrap_voters if k < 0 else record_voters(node.log[k][1])


def voter_keys(c, node) -> dict:
    """The voters in ``node``'s view as replica keys, ``{id: directory id}``: the records
    of its log replayed from the bootstrap voters, each voter keeping the directory id of
    the record that added it."""
    keys = dict.fromkeys(c.bootstrap_voters, 0)
    for _, value in node.log:
        if is_voters_record(value):
            ids = record_voters(value)
            keys = {j: keys[j] if j in keys else record_added_dir(value) for j in ids}
    return keys


def view_dir(c, node, j: int) -> int:
    """The directory id voter ``j`` has in ``node``'s view (the key node sends its
    requests to); 0 for a node that is not a voter there (no request names it)."""
    return voter_keys(c, node).get(j, 0)


def is_voter(c, node) -> bool:
    """Is ``node``'s own key, (id, directory id), a voter in its own view?"""
    return voter_keys(c, node).get(node.id) == node.dir


def key_matches(c, node, j: int, d: int) -> bool:
    """May a request from node ``j`` sent under directory id ``d`` count as voter j's in
    ``node``'s view (LeaderState's ReplicaState.matchesKey)? A non-voter's always may: it
    is an observer, keyed by whatever it fetches with."""
    keys = voter_keys(c, node)
    return j not in keys or keys[j] == d


def other_voters(c, node) -> set:
    """The voters in ``node``'s view other than itself."""
    return set(voters(c, node)) - {node.id}


def majority_of(ids) -> int:
    """The size of a majority of the voter set ``ids``."""
    return len(ids) // 2 + 1


def majority(c, node) -> int:
    """The size of a majority of ``node``'s voter set."""
    return majority_of(voters(c, node))


def has_majority(c, node, ids) -> bool:
    """Do the nodes ``ids`` hold a majority of ``node``'s voter set?"""
    return len(voters(c, node) & set(ids)) >= majority(c, node)


def majorities_intersect(a, b) -> bool:
    """Does every majority of voter set ``a`` share a voter with every majority of ``b``?

    A majority of ``a`` takes as few shared voters as it can by taking all of ``a``'s own
    (those not in ``b``) first: it still needs ``majority_of(a) - |a - b|`` shared ones,
    and likewise for ``b``. Two disjoint majorities exist exactly when both needs fit
    side by side into the shared voters."""
    a, b = frozenset(a), frozenset(b)
    shared = len(a & b)
    need_a = max(majority_of(a) - len(a - b), 0)
    need_b = max(majority_of(b) - len(b - a), 0)
    return need_a + need_b > shared
