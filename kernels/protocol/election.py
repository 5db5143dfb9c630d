"""Elections: timeouts, pre-vote (KIP-996) and vote requests, after KafkaRaftClient.

With pre-vote on (Kafka 4.0's default) a voter whose election or fetch timer
expires becomes Prospective and asks for pre-votes in its *current* epoch; a
majority of pre-votes makes it Candidate in epoch + 1. With pre-vote off it
becomes Candidate directly.
"""
from ..jit import kernel

from ..properties.checkers import record_vote_granted
from ..state.coverage import reach
from ..features import DISK_LOSS, MUT_DOUBLE_VOTE, MUT_NON_VOTER_CANDIDATE, PRE_VOTE
from ..state.layout import (
    BOUND_EPOCH, CANDIDATE, C_NEXT_CORR, DIR, EPOCH, ERR_FENCED_LEADER_EPOCH,
    ERR_INVALID_VOTER_KEY, ERR_NONE, FOLLOWER, F_CANDIDATE_DIR, F_VOTER_DIR, VOTED_DIR,
    F_CORR, F_DST, F_EPOCH, F_ERROR, F_GRANTED, F_LAST_EPOCH, F_LAST_OFFSET, F_LEADER,
    F_PRE_VOTE, F_SRC, GRANTED, HAS_FETCHED, INFLIGHT, LEADER, LEADER_ID, LOG_END, PROSPECTIVE,
    P_MAX_EPOCH, REJECTED, RESIGNED, ROLE, S_BOUND_HIT, S_DISRUPTIONS, UNATTACHED, UP,
    VOTED_ID, VOTE_REQUEST, VOTE_RESPONSE, T_DISRUPTION, T_EPOCH_BOUND_HIT, T_PRE_VOTE_REFUSED,
    I_BACKOFF, I_ELECTION_RESET, I_KEEP_TIMER, INTENT,
)
from ..state.log import last_epoch, log_up_to_date
from ..state.network import new_message
from .quorum_state import (
    accept_response, intend, transition_to_candidate, transition_to_follower,
    transition_to_leader, transition_to_prospective, transition_to_unattached, vote_rejected,
)
from ..state.voters import has_majority, is_voter, view_dir


@kernel
def maybe_transition_forward(w, i):
    """Move a nominee on once it holds a majority: Prospective -> Candidate -> Leader
    (in one go for a single-voter quorum)."""
    if w.node[ROLE, i] == PROSPECTIVE and has_majority(w, i, w.node[GRANTED, i]):
        if not transition_to_candidate(w, i):
            return
    if w.node[ROLE, i] == CANDIDATE and has_majority(w, i, w.node[GRANTED, i]):
        transition_to_leader(w, i)


@kernel
def start_election(w, i, features):
    """Unattached or Follower voter whose timer expired: pre-vote, or straight to Candidate."""
    if features & PRE_VOTE:
        transition_to_prospective(w, i)
    elif not transition_to_candidate(w, i):
        return
    maybe_transition_forward(w, i)


@kernel
def prospective_transition_after_election_loss(w, i):
    """A lost pre-vote: back to Follower of a known leader, else Unattached (same epoch)."""
    if w.node[LEADER_ID, i] >= 0:
        transition_to_follower(w, i, w.node[EPOCH, i], w.node[LEADER_ID, i])
    else:
        transition_to_unattached(w, i, w.node[EPOCH, i])


@kernel
def election_timeout_enabled(w, i, features):
    if w.node[UP, i] == 0:
        return False
    r = w.node[ROLE, i]
    if not is_voter(w, i):
        if features & MUT_NON_VOTER_CANDIDATE and r == UNATTACHED and w.node[VOTED_ID, i] >= 0:
            return True  # KAFKA-17067: pollVoted's timer, whoever cast the vote
        # a leader removed from the voters (KIP-853), now Resigned, whose election timer
        # ends its epoch. (An observer's fetch timeout changes no role: 3.9-4.1 turn to
        # the bootstrap voters, a Fetch target request_targets already allows.)
        return r == RESIGNED
    return r != LEADER


@kernel
def on_election_timeout(w, i, features):
    """The election timer (Unattached, Prospective, Candidate, Resigned) or the fetch
    timer (Follower) of node i expires: Kafka's poll* methods."""
    r = w.node[ROLE, i]
    if features & MUT_NON_VOTER_CANDIDATE and r == UNATTACHED and not is_voter(w, i):
        # KAFKA-17067: pollVoted -> transitionToCandidate (no pre-vote in that code)
        if transition_to_candidate(w, i):
            maybe_transition_forward(w, i)
    elif r == UNATTACHED or r == FOLLOWER:
        start_election(w, i, features)
    elif r == PROSPECTIVE:
        prospective_transition_after_election_loss(w, i)
    elif r == CANDIDATE:
        if features & PRE_VOTE:
            transition_to_prospective(w, i)
            maybe_transition_forward(w, i)
        elif transition_to_candidate(w, i):
            maybe_transition_forward(w, i)
    elif r == RESIGNED:
        if w.node[EPOCH, i] + 1 > w.scal[P_MAX_EPOCH]:
            w.scal[S_BOUND_HIT] = BOUND_EPOCH
            reach(w, T_EPOCH_BOUND_HIT, 0)
            return
        transition_to_unattached(w, i, w.node[EPOCH, i] + 1)


@kernel
def send_vote_request(w, i, j):
    """maybeSendVoteRequests: a nominee asks voter j, which has not answered yet."""
    k = new_message(w, VOTE_REQUEST, i, j, w.node[EPOCH, i])
    w.scal[C_NEXT_CORR] += 1
    w.peer[INFLIGHT, i, j] = w.scal[C_NEXT_CORR]
    if k < 0:
        return
    m = w.msgs[k]
    m[F_CORR] = w.scal[C_NEXT_CORR]
    m[F_LAST_EPOCH] = last_epoch(w, i)
    m[F_LAST_OFFSET] = w.node[LOG_END, i]
    m[F_PRE_VOTE] = 1 if w.node[ROLE, i] == PROSPECTIVE else 0
    m[F_CANDIDATE_DIR] = w.node[DIR, i]
    m[F_VOTER_DIR] = view_dir(w, i, j)


@kernel
def can_grant_vote(w, i, candidate, candidate_dir, up_to_date, pre_vote, features):
    """Kafka's EpochState.canGrantVote for the role of node i."""
    r = w.node[ROLE, i]
    if r == UNATTACHED or r == PROSPECTIVE:
        if pre_vote:
            return up_to_date
        if w.node[VOTED_ID, i] >= 0:
            if features & MUT_DOUBLE_VOTE:
                return up_to_date  # known bug: the vote already cast is not checked
            if features & DISK_LOSS and w.node[VOTED_DIR, i] != candidate_dir:
                return False  # the vote is for a key: the same id under another disk
            return w.node[VOTED_ID, i] == candidate
        if w.node[LEADER_ID, i] >= 0:
            return False
        return up_to_date
    if r == CANDIDATE:
        if not pre_vote and features & MUT_DOUBLE_VOTE:
            return up_to_date and candidate != i
        return pre_vote and up_to_date
    if r == FOLLOWER:
        return pre_vote and w.node[HAS_FETCHED, i] == 0 and up_to_date
    if r == RESIGNED:
        return pre_vote and up_to_date
    return False  # the leader refuses everything


@kernel
def handle_vote_request(w, s, features):
    """handleVoteRequest at the receiving voter; ``s`` is the message's scratch row."""
    m = w.msgs[s]
    i = m[F_DST]
    cand = m[F_SRC]
    epoch = m[F_EPOCH]
    pre_vote = m[F_PRE_VOTE] == 1
    granted = False
    error = ERR_NONE
    if epoch < w.node[EPOCH, i]:
        error = ERR_FENCED_LEADER_EPOCH
    else:
        if epoch > w.node[EPOCH, i]:
            if w.node[ROLE, i] == LEADER:
                w.scal[S_DISRUPTIONS] += 1
                reach(w, T_DISRUPTION, 0)
            transition_to_unattached(w, i, epoch)
    if error == ERR_NONE and features & DISK_LOSS and m[F_VOTER_DIR] != w.node[DIR, i]:
        # "Check that the request was intended for this replica": the candidate's voter
        # set names another directory id for this id (the disk it had before).
        error = ERR_INVALID_VOTER_KEY
    if error == ERR_NONE:
        up_to_date = log_up_to_date(m[F_LAST_EPOCH], m[F_LAST_OFFSET], last_epoch(w, i), w.node[LOG_END, i])
        granted = can_grant_vote(w, i, cand, m[F_CANDIDATE_DIR], up_to_date, pre_vote, features)
        if granted and not pre_vote:
            r = w.node[ROLE, i]
            if (r == UNATTACHED or r == PROSPECTIVE) and w.node[VOTED_ID, i] == -1:
                w.node[VOTED_ID, i] = cand  # durable, same epoch
                w.node[VOTED_DIR, i] = m[F_CANDIDATE_DIR]
                # unattachedAddVotedState / prospectiveAddVotedState: a new state of the
                # same epoch with a fresh election timer, whatever was kept ("the
                # candidate has at least as good of a chance"); requests in flight stay so
                w.node[INTENT, i] &= ~I_KEEP_TIMER
                intend(w, i, I_ELECTION_RESET)
                if r == PROSPECTIVE:
                    # a fresh election: earlier pre-votes are lost
                    w.node[GRANTED, i] = 1 << i
                    w.node[REJECTED, i] = 0
            record_vote_granted(w, i, cand, epoch, features)
        elif pre_vote:
            reach(w, T_PRE_VOTE_REFUSED, 0)
    k = new_message(w, VOTE_RESPONSE, i, cand, w.node[EPOCH, i])
    if k >= 0:
        r = w.msgs[k]
        r[F_CORR] = m[F_CORR]
        r[F_ERROR] = error
        r[F_LEADER] = w.node[LEADER_ID, i]
        r[F_PRE_VOTE] = 1 if pre_vote else 0
        r[F_GRANTED] = 1 if granted else 0


@kernel
def handle_vote_response(w, s, features):
    """handleVoteResponse at the nominee that asked."""
    m = w.msgs[s]
    i = m[F_DST]
    src = m[F_SRC]
    if not accept_response(w, s):
        return  # not the response the nominee waits for, or only an epoch/leader hint
    r = w.node[ROLE, i]
    pre_vote = m[F_PRE_VOTE] == 1
    if not ((r == PROSPECTIVE and pre_vote) or (r == CANDIDATE and not pre_vote)):
        return
    if m[F_GRANTED] == 1:
        w.node[GRANTED, i] |= 1 << src
        maybe_transition_forward(w, i)
    else:
        w.node[REJECTED, i] |= 1 << src
        if r == PROSPECTIVE and vote_rejected(w, i):
            prospective_transition_after_election_loss(w, i)
        elif r == CANDIDATE and vote_rejected(w, i):
            intend(w, i, I_BACKOFF)  # a lost election: back off at once, not at the timeout
