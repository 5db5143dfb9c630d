"""Role transitions of one node, after Kafka's QuorumState and KafkaRaftClient.

Every transition builds a fresh EpochState (the volatile per-role fields start
empty) and resets the node's connections (Kafka's ``resetConnections``), so
responses to requests sent in an earlier state are dropped. The HW is carried
over (``state.highWatermark()``) except into Leader, which starts without one.
"""
from __future__ import annotations

from kraftwalk.kernels.state.layout import (
    BOUND_EPOCH, BOUND_LOG, CANDIDATE, ERR_FENCED_LEADER_EPOCH, ERR_INVALID_VOTER_KEY, ERR_NONE,
    ERR_NOT_LEADER_OR_FOLLOWER,
    ERR_UNKNOWN_LEADER_EPOCH, FOLLOWER, LEADER, PROSPECTIVE, RESIGNED, UNATTACHED,
)

from kraftwalk.kernels.features import MUT_CHECK_QUORUM_COUNTS_LEADER

from .log import append
from .voters import majority, voters


def enter_epoch(c, node, epoch: int) -> None:
    """A new epoch clears the vote and the known leader (they are per epoch)."""
    if epoch != node.epoch:
        node.epoch = epoch
        node.voted_id = None
        node.leader_id = None
        c.stats["max_epoch"] = max(c.stats["max_epoch"], epoch)


def update_check_quorum_for_following_voter(c, node, r: int) -> None:
    """LeaderState.updateCheckQuorumForFollowingVoter: voter r fetched; once the voters
    that have are a majority (the leader counts if it is a voter), the check-quorum
    timer restarts."""
    node.fetched_voters.add(r)
    vs = voters(c, node)
    count = len(vs & (node.fetched_voters | {node.id}))
    if c.features & MUT_CHECK_QUORUM_COUNTS_LEADER and node.id not in vs:
        count += 1   # known bug (KAFKA-16531): the leader counts itself, voter or not
    if count >= majority(c, node):
        node.fetched_voters = set()


def transition_to_unattached(c, node, epoch: int, leader_id=None) -> None:
    """Unattached in ``epoch`` knowing ``leader_id`` (a lost pre-vote keeps a leader whose
    endpoints it lacks, as QuorumState does). Durable. Same epoch: the vote is kept."""
    enter_epoch(c, node, epoch)
    node.leader_id = leader_id
    node.role = UNATTACHED
    node.fresh_epoch_state()
    node.reset_connections()


def transition_to_follower(c, node, epoch: int, leader: int) -> None:
    """Follower of ``leader`` in ``epoch``; within the same epoch the vote is kept. Durable."""
    enter_epoch(c, node, epoch)
    node.leader_id = leader
    node.role = FOLLOWER
    node.fresh_epoch_state()
    node.leader_endpoints_known = True
    node.reset_connections()


def transition_to_prospective(c, node) -> None:
    """Prospective in the same epoch, keeping vote, leader id and the leader's endpoints
    (known only when it was a Follower). Memory-only."""
    endpoints_known = node.role == FOLLOWER
    node.role = PROSPECTIVE
    node.fresh_epoch_state()
    node.leader_endpoints_known = endpoints_known
    node.granted = {node.id}
    node.reset_connections()
    c.stats["pre_elections"] += 1


def transition_to_candidate(c, node) -> bool:
    """Candidate in epoch + 1, voting for itself. Durable. An epoch past max_epoch ends
    the walk instead (a bound of the model, not a protocol outcome)."""
    if node.epoch + 1 > c.params.max_epoch:
        c.bound_hit = BOUND_EPOCH
        return False
    enter_epoch(c, node, node.epoch + 1)
    node.voted_id = node.id
    node.voted_dir = node.dir
    node.role = CANDIDATE
    node.fresh_epoch_state()
    node.granted = {node.id}
    node.reset_connections()
    c.stats["elections"] += 1
    return True


def transition_to_leader(c, node) -> bool:
    """onBecomeLeader: Leader with epochStartOffset = log end, then its LeaderChange control
    record at that offset. A log too full for that record ends the walk (a bound)."""
    start = node.log_end
    c.next_value += 1
    if not append(c, node, node.epoch, -c.next_value):
        c.bound_hit = BOUND_LOG
        return False
    node.role = LEADER
    node.leader_id = node.id
    node.epoch_start = start
    start_leader_state(node)
    node.reset_connections()
    c.stats["leader_changes"] += 1
    return True


def start_leader_state(node) -> None:
    """A fresh LeaderState: no HW yet (it only moves once this epoch's first record is on a
    majority), no replica offsets, only the leader itself has acknowledged."""
    node.fresh_epoch_state()
    node.hw = None
    node.acked = {node.id}
    node.leader_endpoints_known = True


def transition_to_resigned(c, node, successors) -> None:
    """Resigned in the same epoch (memory-only); EndQuorumEpoch goes to every other voter
    until it acknowledges, naming ``successors`` (whose fetch timers it cuts short)."""
    node.role = RESIGNED
    # nonLeaderVotersByDescendingFetchOffset: built from the LeaderState it leaves
    order = tuple(sorted(successors, key=lambda m: (-node.replica_end.get(m, -1), m)))
    node.fresh_epoch_state()
    node.acked = {node.id}
    node.successors = order
    node.reset_connections()
    c.stats["resignations"] += 1


def vote_rejected(c, node) -> bool:
    """EpochElection.isVoteRejected: the granted plus the unrecorded votes can no longer
    make a majority."""
    return len(voters(c, node)) - len(node.rejected) < majority(c, node)


def maybe_transition(c, node, leader: int, epoch: int) -> None:
    """KafkaRaftClient.maybeTransition(leaderId, epoch) on a message naming a leader/epoch.

    Higher epoch: Follower of the named leader, else Unattached. Same epoch: Follower of
    the named leader if no leader is known, or if the message brings the leader's
    endpoints and the current state does not hold them (Unattached and Candidate hold
    none; Follower, and Prospective coming from Follower, do). A claim that contradicts
    what the node knows (another leader in its epoch, or itself) makes Kafka throw
    (hasConsistentLeader); the model ignores it -- ElectionSafety reports the cause."""
    if epoch > node.epoch:
        if leader >= 0 and leader != node.id:
            transition_to_follower(c, node, epoch, leader)
        else:
            transition_to_unattached(c, node, epoch, None)
        return
    if epoch < node.epoch or leader < 0 or leader == node.id:
        return
    if node.role in (LEADER, RESIGNED):
        return  # inconsistent leader claim in our own epoch
    if node.leader_id is None:
        transition_to_follower(c, node, epoch, leader)
    elif node.leader_id == leader and not node.leader_endpoints_known:
        transition_to_follower(c, node, epoch, leader)


def validate_leader_only_request(node, epoch: int) -> int:
    """validateLeaderOnlyRequest: the error a request only the leader answers (Fetch,
    FetchSnapshot) gets at ``node``; ERR_NONE if it leads that epoch."""
    if epoch < node.epoch:
        return ERR_FENCED_LEADER_EPOCH
    if epoch > node.epoch:
        return ERR_UNKNOWN_LEADER_EPOCH
    return ERR_NOT_LEADER_OR_FOLLOWER if node.role != LEADER else ERR_NONE


def maybe_handle_common_response(c, node, error: int, leader: int, epoch: int) -> bool:
    """Kafka's maybeHandleCommonResponse, shared by every response handler.

    True when the response is fully handled here (stale, an error that only carried a
    leader/epoch hint, or INVALID_VOTER_KEY: the request named a key the responder no
    longer has); False when the handler should go on with its body."""
    if epoch < node.epoch or error == ERR_UNKNOWN_LEADER_EPOCH:
        return True
    if (epoch > node.epoch or error == ERR_FENCED_LEADER_EPOCH
            or error == ERR_NOT_LEADER_OR_FOLLOWER):
        maybe_transition(c, node, leader, epoch)
        return True
    if leader >= 0 and node.leader_id is None and leader != node.id:
        # a leader of our epoch we did not know: follow it, and (error NONE) carry on
        transition_to_follower(c, node, epoch, leader)
    return error == ERR_INVALID_VOTER_KEY


def is_nominee(node) -> bool:
    return node.role in (PROSPECTIVE, CANDIDATE)
