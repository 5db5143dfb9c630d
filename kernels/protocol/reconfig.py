"""Voter changes (KIP-853), after Kafka's AddVoterHandler and RemoveVoterHandler.

An operator's AddVoter or RemoveVoter reaches the leader, which accepts it only when
(a) its high watermark is established, i.e. it has committed an entry of its own
epoch (which fences the voter changes of earlier leaders), and (b) the latest
VotersRecord in its log is below that high watermark (no change is uncommitted),
then appends a VotersRecord naming the new set. The set takes effect on append in
every log that holds it (``kernels/state/voters.py``); a truncation rolls it back. One
voter at a time, never joint consensus: two sets one change apart always have
intersecting majorities, which is what (a) and (b) protect.

The model folds the request and its completion into one action at the leader: a
request that would be refused is not enabled (it changes nothing), and AddVoter's
ApiVersions round trip to the new voter is assumed to succeed. "Caught up" is
Kafka's isReplicaCaughtUp reduced to its safety-relevant part: the new voter has
fetched from this leader in its epoch. UpdateVoter changes only endpoints and
supported versions, which no invariant sees, and is not modelled.

With disk loss on, a voter is a replica key (id, directory id). AddVoter names the
key the leader has seen the node fetch with (the observer state Kafka requires to be
caught up) and is refused while that id is a voter under any key (DUPLICATE_VOTER):
a voter that lost its disk comes back by being removed and added again.
"""
import numpy as np

from ..jit import kernel

from ..state.coverage import reach
from ..features import DISK_LOSS, MUT_RECONFIG_BEFORE_COMMIT, MUT_TWO_PENDING_CHANGES, RECONFIG
from ..state.layout import (
    C_NEXT_VALUE, EPOCH, EPOCH_START, HW, LEADER, LOG_END, P_NODES, REPLICA_DIR, REPLICA_END,
    ROLE, S_VOTER_CHANGES, T_VOTER_ADDED, T_VOTER_REMOVED, T_WIPED_VOTER_READDED, UP, VOTERS_AT,
)
from ..state.log import append_entry
from ..state.voters import voter_count, voters, voters_record_value


@kernel
def voter_change_allowed(w, i, features):
    """May leader i accept a voter change now? The checks both handlers share."""
    if not features & RECONFIG:
        return False
    if w.node[UP, i] == 0 or w.node[ROLE, i] != LEADER or w.node[LOG_END, i] >= w.log.shape[2]:
        return False
    hw = w.node[HW, i]
    if hw < 0:
        if not features & MUT_RECONFIG_BEFORE_COMMIT:
            return False  # "waiting for leader to establish HWM and fence previous voter changes"
        # Known bug: whatever came before the leader's epoch counts as committed.
        hw = w.node[EPOCH_START, i]
    if features & MUT_TWO_PENDING_CHANGES:
        return True  # known bug: an uncommitted VotersRecord does not stop another
    return w.node[VOTERS_AT, i] < hw  # "waiting for voters to commit the latest voter change"


@kernel
def add_voter_targets(w, i, features):
    """The nodes leader i would add now: not voters in its view, and caught up (they
    have fetched from it in its epoch)."""
    if not voter_change_allowed(w, i, features):
        return 0
    vs = voters(w, i)
    t = 0
    for j in range(w.scal[P_NODES]):
        if j != i and not (vs >> j) & 1 and w.peer[REPLICA_END, i, j] >= 0:
            t |= 1 << j
    return t


@kernel
def remove_voter_targets(w, i, features):
    """The voters leader i would remove now (any of them, itself included, while more
    than one remains)."""
    if not voter_change_allowed(w, i, features) or voter_count(w, i) <= 1:
        return 0
    return voters(w, i)


@kernel
def append_voters_record(w, i, mask, added_dir):
    """LeaderState.appendVotersRecord: the new set, in the leader's epoch."""
    w.scal[C_NEXT_VALUE] += 1
    value = voters_record_value(mask, added_dir, w.scal[C_NEXT_VALUE])
    if append_entry(w, i, w.node[EPOCH, i], value):
        w.scal[S_VOTER_CHANGES] += 1


@kernel
def handle_add_voter_request(w, i, j, features):
    """AddVoterHandler at leader i, for node j: a VotersRecord with j added, under the
    directory id its fetches carried (its key)."""
    d = w.peer[REPLICA_DIR, i, j] if features & DISK_LOSS else 0
    append_voters_record(w, i, voters(w, i) | (np.int64(1) << j), d)
    reach(w, T_VOTER_ADDED, 0)
    if d > 0:
        reach(w, T_WIPED_VOTER_READDED, 0)


@kernel
def handle_remove_voter_request(w, i, j):
    """RemoveVoterHandler at leader i, for voter j: a VotersRecord without j. A leader
    that removes itself leads until the record commits, then resigns
    (``replication.maybe_update_high_watermark``)."""
    append_voters_record(w, i, voters(w, i) & ~(np.int64(1) << j), 0)
    reach(w, T_VOTER_REMOVED, 0)
