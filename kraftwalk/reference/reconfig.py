"""Voter changes (KIP-853), after Kafka's AddVoterHandler and RemoveVoterHandler, written
from Kafka independently of the kernel (kernels/protocol/reconfig.py).

A leader accepts an AddVoter or RemoveVoter only once its high watermark is known
(it has committed an entry of its own epoch, which fences the uncommitted changes of
earlier leaders) and the latest VotersRecord in its log lies below that HW (no change
of its own is pending). It then appends a VotersRecord naming the new set, which counts
in every log from the moment that log holds it (``voters.py``). The two conditions keep
changes one voter at a time, and sets one voter apart have no disjoint majorities.

The model folds a request and its completion into one action of the leader: a request
Kafka would refuse is simply not enabled. AddVoter's ApiVersions round trip to the new
voter is taken to succeed, and "caught up" (LeaderState.isReplicaCaughtUp) is reduced
to what matters for safety: the node has fetched from this leader in its epoch.
UpdateVoter changes only endpoints and versions, which nothing here sees.

With disk loss on, a voter is a replica key (id, directory id): AddVoter adds the node
under the directory id it last fetched from this leader with (the key the caught-up
observer state is under), and is refused for an id that is a voter under any key
(DUPLICATE_VOTER), so a voter whose disk was replaced comes back by being removed and
then added again under its new key.
"""
from __future__ import annotations

from kraftwalk.kernels.features import (
    DISK_LOSS, MUT_RECONFIG_BEFORE_COMMIT, MUT_TWO_PENDING_CHANGES, RECONFIG,
)
from kraftwalk.kernels.state.layout import LEADER

from .log import append
from .voters import latest_voters_record, voters, voters_record_value


def voter_change_allowed(c, node) -> bool:
    """May ``node`` accept a voter change now? (What both handlers check first.)"""
    if not c.features & RECONFIG:
        return False
    if not (node.up and node.role == LEADER and node.log_end < c.params.log_capacity):
        return False
    hw = node.hw
    if hw is None:
        if not c.features & MUT_RECONFIG_BEFORE_COMMIT:
            return False   # "waiting for leader to establish HWM and fence previous voter changes"
        hw = node.epoch_start   # known bug: all before its epoch taken as committed
    if c.features & MUT_TWO_PENDING_CHANGES:
        return True   # known bug: a pending VotersRecord does not hold the next one back
    # "waiting for voters to commit the latest voter change"
    return latest_voters_record(node) < hw


def add_voter_targets(c, node) -> set:
    """The nodes ``node`` could add now: not voters in its view, and caught up (they have
    fetched from it in its epoch, so it holds their fetch offset)."""
    if not voter_change_allowed(c, node):
        return set()
    current = voters(c, node)
    return {j for j in range(c.params.nodes)
            if j != node.id and j not in current and node.replica_end.get(j, -1) >= 0}


def remove_voter_targets(c, node) -> set:
    """The voters ``node`` could remove now: any of them, itself included, as long as one
    would remain."""
    if not voter_change_allowed(c, node) or len(voters(c, node)) <= 1:
        return set()
    return set(voters(c, node))


def append_voters_record(c, node, new_voters, added_dir: int = 0) -> None:
    """LeaderState.appendVotersRecord: the new set, in the leader's epoch (unflushed, like
    a client record)."""
    c.next_value += 1
    if append(c, node, node.epoch, voters_record_value(new_voters, c.next_value, added_dir)):
        c.stats["voter_changes"] += 1


def handle_add_voter_request(c, node, j: int) -> None:
    d = node.replica_dir.get(j, 0) if c.features & DISK_LOSS else 0
    append_voters_record(c, node, voters(c, node) | {j}, d)


def handle_remove_voter_request(c, node, j: int) -> None:
    """A leader that removes itself goes on leading until the record commits, then
    resigns (``replication.maybe_update_high_watermark``)."""
    append_voters_record(c, node, voters(c, node) - {j})
