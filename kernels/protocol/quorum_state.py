"""Role transitions of one node, after Kafka's QuorumState.

Each ``transition_to_*`` sets what Kafka's new EpochState would hold. The ones
Kafka writes to the quorum-state file (Unattached, Follower, Candidate, Leader)
change the persisted epoch / vote / leader id here too; Prospective and
Resigned are memory-only in Kafka and only change the role. Transitions that
call Kafka's ``resetConnections`` clear the node's outstanding requests, so
late responses to them are dropped.
"""
from ..jit import kernel

from ..state.layout import (
    ACKED_MASK, BOUND_EPOCH, BOUND_LOG, CANDIDATE, C_NEXT_VALUE, EPOCH, EPOCH_START,
    ERR_FENCED_LEADER_EPOCH, ERR_NONE, ERR_NOT_LEADER_OR_FOLLOWER, ERR_UNKNOWN_LEADER_EPOCH,
    FETCHED_MASK, FOLLOWER, F_CORR, F_DST, F_EPOCH, F_ERROR, F_LEADER, F_SRC, GRANTED,
    HAS_FETCHED, HW, INFLIGHT, LEADER, LEADER_ID, LOG_END, PREFERRED, PROSPECTIVE, P_MAX_EPOCH,
    P_NODES, REJECTED, REPLICA_END, RESIGNED, ROLE, S_BOUND_HIT, S_ELECTIONS,
    S_LEADER_CHANGES, S_MAX_EPOCH, S_PRE_ELECTIONS, S_RESIGNATIONS, UNATTACHED, VOTED_ID,
    DIR, ERR_INVALID_VOTER_KEY, VOTED_DIR,
    COMMIT_HASH, G_COMMIT_LEN, LOG_HASH, T_ELECTED_COMMITTED_ON_MINORITY, T_EPOCH_BOUND_HIT,
    T_LEADER_ELECTED, UP, INTENT, I_ROLE, I_CHECK_QUORUM, I_KEEP_TIMER, FETCHING_END,
    FETCHING_EPOCH,
)
from ..features import MUT_CHECK_QUORUM_COUNTS_LEADER
from ..state.coverage import reach
from ..state.log import append_entry
from ..state.voters import in_voters, majority, popcount, voter_count, voters


@kernel
def intend(w, i, bits):
    """Record timer intents for the timed chooser: handlers say what Kafka's state
    would do with its timers (restart, back off) and never read a clock."""
    w.node[INTENT, i] |= bits


@kernel
def reset_connections(w, i):
    n = w.peer.shape[2]
    for j in range(n):
        w.peer[INFLIGHT, i, j] = 0


@kernel
def _enter_epoch(w, i, epoch):
    """Move node i to ``epoch``: a new epoch clears the vote and the leader."""
    if epoch != w.node[EPOCH, i]:
        w.node[EPOCH, i] = epoch
        w.node[VOTED_ID, i] = -1
        w.node[LEADER_ID, i] = -1
        if epoch > w.scal[S_MAX_EPOCH]:
            w.scal[S_MAX_EPOCH] = epoch


@kernel
def clear_volatile(w, i):
    """Forget the volatile per-role state (tallies, check-quorum and ack bookkeeping, a
    snapshot download in progress)."""
    w.node[FETCHING_END, i] = 0
    w.node[FETCHING_EPOCH, i] = 0
    w.node[GRANTED, i] = 0
    w.node[REJECTED, i] = 0
    w.node[HAS_FETCHED, i] = 0
    w.node[FETCHED_MASK, i] = 0
    w.node[ACKED_MASK, i] = 0
    w.node[PREFERRED, i] = 0


@kernel
def transition_to_unattached(w, i, epoch):
    """Unattached in ``epoch``, with no known leader (a new epoch has none, and the
    one same-epoch caller, a lost pre-vote, goes to Follower instead when it knows
    one); durable; resets connections. Like Kafka's
    transitionToUnattached it keeps the election time left of a Candidate, an
    Unattached node, a Prospective whose pre-vote was not rejected, or (from 4.0) a
    Resigned node: the timed chooser's intent."""
    r = w.node[ROLE, i]
    if (r == CANDIDATE or r == UNATTACHED or r == RESIGNED
            or (r == PROSPECTIVE and not vote_rejected(w, i))):
        intend(w, i, I_KEEP_TIMER)
    _enter_epoch(w, i, epoch)
    w.node[ROLE, i] = UNATTACHED
    clear_volatile(w, i)
    reset_connections(w, i)
    intend(w, i, I_ROLE)


@kernel
def transition_to_follower(w, i, epoch, leader):
    """Follower of ``leader`` in ``epoch``; the vote survives within the same epoch."""
    _enter_epoch(w, i, epoch)
    w.node[LEADER_ID, i] = leader
    w.node[ROLE, i] = FOLLOWER
    clear_volatile(w, i)
    reset_connections(w, i)
    intend(w, i, I_ROLE)


@kernel
def transition_to_prospective(w, i):
    """Prospective (pre-vote) in the same epoch, keeping vote and leader id; memory-only."""
    w.node[ROLE, i] = PROSPECTIVE
    clear_volatile(w, i)
    w.node[GRANTED, i] = 1 << i
    reset_connections(w, i)
    intend(w, i, I_ROLE)
    w.scal[S_PRE_ELECTIONS] += 1


@kernel
def transition_to_candidate(w, i):
    """Candidate in epoch + 1, voting for itself; durable. Ends the walk at max_epoch."""
    if w.node[EPOCH, i] + 1 > w.scal[P_MAX_EPOCH]:
        w.scal[S_BOUND_HIT] = BOUND_EPOCH
        reach(w, T_EPOCH_BOUND_HIT, 0)
        return False
    _enter_epoch(w, i, w.node[EPOCH, i] + 1)
    w.node[VOTED_ID, i] = i
    w.node[VOTED_DIR, i] = w.node[DIR, i]
    w.node[ROLE, i] = CANDIDATE
    clear_volatile(w, i)
    w.node[GRANTED, i] = 1 << i
    reset_connections(w, i)
    intend(w, i, I_ROLE)
    w.scal[S_ELECTIONS] += 1
    return True


@kernel
def reset_leader_state(w, i):
    """A fresh LeaderState: no HW yet, no replica offsets known, only itself heard from."""
    n = w.peer.shape[2]
    for j in range(n):
        w.peer[REPLICA_END, i, j] = -1
    w.node[HW, i] = -1
    w.node[FETCHED_MASK, i] = 1 << i
    w.node[ACKED_MASK, i] = 1 << i
    w.node[GRANTED, i] = 0
    w.node[REJECTED, i] = 0


@kernel
def validate_leader_only_request(w, i, epoch):
    """validateLeaderOnlyRequest: the error a request of ``epoch`` that only the leader
    answers (Fetch, FetchSnapshot) gets at node i, ERR_NONE if i leads that epoch."""
    if epoch < w.node[EPOCH, i]:
        return ERR_FENCED_LEADER_EPOCH
    if epoch > w.node[EPOCH, i]:
        return ERR_UNKNOWN_LEADER_EPOCH
    if w.node[ROLE, i] != LEADER:
        return ERR_NOT_LEADER_OR_FOLLOWER
    return ERR_NONE


@kernel
def update_check_quorum_for_following_voter(w, i, r, features):
    """LeaderState.updateCheckQuorumForFollowingVoter: voter r fetched from leader i
    (Fetch or FetchSnapshot); once a majority has, the check-quorum timer restarts.
    True if r is a voter in i's view."""
    if not in_voters(w, i, r):
        return False
    w.node[FETCHED_MASK, i] |= 1 << r
    fetched = popcount(w.node[FETCHED_MASK, i] & voters(w, i))
    if features & MUT_CHECK_QUORUM_COUNTS_LEADER and not in_voters(w, i, i):
        fetched += 1  # known bug (KAFKA-16531): the leader counts itself, voter or not
    if fetched >= majority(w, i):
        w.node[FETCHED_MASK, i] = 1 << i
        intend(w, i, I_CHECK_QUORUM)
    return True


@kernel
def committed_on_minority(w, i):
    """Is the last committed entry on fewer running voters (in node i's view) than a
    majority?"""
    c = w.scal[G_COMMIT_LEN]
    if c == 0:
        return False
    holders = 0
    vs = voters(w, i)
    for j in range(w.scal[P_NODES]):
        if ((vs >> j) & 1 and w.node[UP, j] == 1 and w.node[LOG_END, j] >= c
                and w.hashes[LOG_HASH + j, c - 1] == w.hashes[COMMIT_HASH, c - 1]):
            holders += 1
    return holders < majority(w, i)


@kernel
def transition_to_leader(w, i):
    """onBecomeLeader: Leader with epochStartOffset = log end, then the LeaderChange
    control record at that offset. A full log ends the walk (a bound, not a bug)."""
    start = w.node[LOG_END, i]
    w.scal[C_NEXT_VALUE] += 1
    if not append_entry(w, i, w.node[EPOCH, i], -w.scal[C_NEXT_VALUE]):
        w.scal[S_BOUND_HIT] = BOUND_LOG
        return False
    reach(w, T_LEADER_ELECTED, 0)
    if committed_on_minority(w, i):
        reach(w, T_ELECTED_COMMITTED_ON_MINORITY, 0)
    w.node[ROLE, i] = LEADER
    w.node[LEADER_ID, i] = i
    w.node[EPOCH_START, i] = start
    reset_leader_state(w, i)
    reset_connections(w, i)
    intend(w, i, I_ROLE)
    w.scal[S_LEADER_CHANGES] += 1
    return True


@kernel
def transition_to_resigned(w, i, successors):
    """Resigned in the same epoch; EndQuorumEpoch goes to every other voter until acked."""
    w.node[ROLE, i] = RESIGNED
    clear_volatile(w, i)
    w.node[ACKED_MASK, i] = 1 << i
    w.node[PREFERRED, i] = successors
    reset_connections(w, i)
    intend(w, i, I_ROLE)
    w.scal[S_RESIGNATIONS] += 1


@kernel
def vote_rejected(w, i):
    """EpochElection.isVoteRejected: the granted votes plus the unrecorded ones can no
    longer make a majority."""
    return voter_count(w, i) - popcount(w.node[REJECTED, i]) < majority(w, i)


@kernel
def follows_new_leader(w, i, leader):
    """Same epoch, a message names ``leader``: does node i start following it? Only if
    it knew no leader: Kafka re-follows a known leader only when the message brings
    endpoints the state lacks, and a Prospective keeps its leader's endpoints."""
    r = w.node[ROLE, i]
    if leader < 0 or leader == i or r == LEADER or r == RESIGNED:
        return False
    return w.node[LEADER_ID, i] == -1


@kernel
def maybe_transition(w, i, leader, epoch):
    """Kafka's maybeTransition(leaderId, epoch) on learning of a leader or a newer epoch.

    Higher epoch: Follower of the leader if one is named, else Unattached. Same
    epoch: Follower of a newly learnt leader. A leader claim that contradicts what
    this node knows is ignored (Kafka throws there)."""
    if epoch > w.node[EPOCH, i]:
        if leader >= 0 and leader != i:
            transition_to_follower(w, i, epoch, leader)
        else:
            transition_to_unattached(w, i, epoch)
    elif epoch == w.node[EPOCH, i] and follows_new_leader(w, i, leader):
        transition_to_follower(w, i, epoch, leader)


@kernel
def accept_response(w, s):
    """Is the response in scratch row s the one its receiver waits for (Kafka's
    RequestManager.isResponseExpected)? If so it is no longer outstanding, and
    maybeHandleCommonResponse runs; True when the body should be processed."""
    m = w.msgs[s]
    i = m[F_DST]
    src = m[F_SRC]
    if w.peer[INFLIGHT, i, src] != m[F_CORR]:
        return False
    w.peer[INFLIGHT, i, src] = 0
    return not maybe_handle_common_response(w, i, m[F_ERROR], m[F_LEADER], m[F_EPOCH])


@kernel
def maybe_handle_common_response(w, i, error, leader, epoch):
    """Kafka's maybeHandleCommonResponse, shared by every response handler.

    Returns True when the response is fully handled (stale, or an error that only
    carried a leader/epoch hint); False when its body should be processed."""
    if epoch < w.node[EPOCH, i] or error == ERR_UNKNOWN_LEADER_EPOCH:
        return True
    if epoch > w.node[EPOCH, i] or error == ERR_FENCED_LEADER_EPOCH or error == ERR_NOT_LEADER_OR_FOLLOWER:
        maybe_transition(w, i, leader, epoch)
        return True
    if follows_new_leader(w, i, leader):
        transition_to_follower(w, i, epoch, leader)
    # INVALID_VOTER_KEY: the request named another directory id of the responder; handled
    return error == ERR_INVALID_VOTER_KEY


@kernel
def is_candidate_role(role):
    return role == PROSPECTIVE or role == CANDIDATE

