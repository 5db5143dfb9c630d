"""Elections: timers, pre-vote (KIP-996) and votes, after KafkaRaftClient.

With pre-vote (Kafka 4.0's default) a voter whose election or fetch timer expires
becomes Prospective and asks for pre-votes in its *current* epoch; a majority of
pre-votes makes it Candidate in epoch + 1. Without pre-vote (Kafka 3.x) it
becomes Candidate directly.
"""
from __future__ import annotations

from kraftwalk.kernels.features import DISK_LOSS, MUT_DOUBLE_VOTE, MUT_NON_VOTER_CANDIDATE, PRE_VOTE
from kraftwalk.kernels.state.layout import (
    BOUND_EPOCH, CANDIDATE, ERR_FENCED_LEADER_EPOCH, ERR_INVALID_VOTER_KEY, ERR_NONE, FOLLOWER,
    LEADER, PROSPECTIVE, RESIGNED, UNATTACHED, VOTE_REQUEST, VOTE_RESPONSE,
)

from .log import last_epoch, log_up_to_date
from .quorum_state import (
    is_nominee, maybe_handle_common_response, transition_to_candidate,
    transition_to_follower, transition_to_leader, transition_to_prospective,
    transition_to_unattached, vote_rejected,
)
from .state import Message
from .voters import has_majority, is_voter, view_dir


def maybe_transition_forward(c, node) -> None:
    """A nominee holding a majority moves on: Prospective -> Candidate -> Leader (both at
    once for a single voter)."""
    if node.role == PROSPECTIVE and has_majority(c, node, node.granted):
        if not transition_to_candidate(c, node):
            return
    if node.role == CANDIDATE and has_majority(c, node, node.granted):
        transition_to_leader(c, node)


def start_election(c, node) -> None:
    """An Unattached or Follower voter's timer expired: pre-vote, or straight to Candidate."""
    if c.features & PRE_VOTE:
        transition_to_prospective(c, node)
    elif not transition_to_candidate(c, node):
        return
    maybe_transition_forward(c, node)


def prospective_transition_after_election_loss(c, node) -> None:
    """A lost (or timed-out) pre-vote: back to Follower of the leader it knew (with its
    endpoints), else Unattached in the same epoch (the vote is kept)."""
    if node.leader_id is not None and node.leader_endpoints_known:
        transition_to_follower(c, node, node.epoch, node.leader_id)
    else:
        transition_to_unattached(c, node, node.epoch, node.leader_id)


def election_timeout_enabled(c, node) -> bool:
    """Which timer can expire: a voter's election/fetch timer in every role but Leader;
    a non-voter's election timer as Resigned (a leader that removed itself, KIP-853: it
    ends its epoch). An observer's fetch timeout changes no role in any release."""
    if not node.up:
        return False
    if not is_voter(c, node):
        if (c.features & MUT_NON_VOTER_CANDIDATE and node.role == UNATTACHED
                and node.voted_id is not None):
            return True   # KAFKA-17067: pollVoted's timer, whoever cast the vote
        return node.role == RESIGNED
    return node.role != LEADER


def on_election_timeout(c, node) -> None:
    """The election timer (Unattached, Prospective, Candidate, Resigned) or the fetch timer
    (Follower) of a node expires: Kafka's poll* methods."""
    r = node.role
    if c.features & MUT_NON_VOTER_CANDIDATE and r == UNATTACHED and not is_voter(c, node):
        # KAFKA-17067: pollVoted -> transitionToCandidate (no pre-vote in that code)
        if transition_to_candidate(c, node):
            maybe_transition_forward(c, node)
    elif r in (UNATTACHED, FOLLOWER):
        start_election(c, node)
    elif r == PROSPECTIVE:
        prospective_transition_after_election_loss(c, node)
    elif r == CANDIDATE:
        # pollCandidate: back to Prospective (Kafka 3.x: a new Candidate after backoff)
        if c.features & PRE_VOTE:
            transition_to_prospective(c, node)
        elif not transition_to_candidate(c, node):
            return
        maybe_transition_forward(c, node)
    elif r == RESIGNED:
        # pollResigned: Unattached in epoch + 1
        if node.epoch + 1 > c.params.max_epoch:
            c.bound_hit = BOUND_EPOCH
            return
        transition_to_unattached(c, node, node.epoch + 1, None)


def send_vote_request(c, node, j: int) -> None:
    """maybeSendVoteRequests: ask voter j, which has not answered yet. The request is
    outstanding (in-flight) even when the network loses it. It names both keys: the
    candidate's own and j's as the candidate's voter set has it."""
    c.next_corr += 1
    msg = Message(
        VOTE_REQUEST, node.id, j, node.epoch, c.next_corr,
        last_epoch=last_epoch(node.log), last_offset=node.log_end,
        pre_vote=node.role == PROSPECTIVE,
        candidate_dir=node.dir, voter_dir=view_dir(c, node, j))
    c.send(msg)
    node.inflight[j] = c.next_corr


def can_grant_vote(c, node, candidate: int, candidate_dir: int, up_to_date: bool,
                   pre_vote: bool) -> bool:
    """EpochState.canGrantVote of node's role, for the candidate key (candidate,
    candidate_dir)."""
    r = node.role
    double_vote = bool(c.features & MUT_DOUBLE_VOTE)
    if r in (UNATTACHED, PROSPECTIVE):
        if pre_vote:
            return up_to_date
        if node.voted_id is not None:
            if double_vote:
                return up_to_date   # known bug: the vote already cast is not checked
            if c.features & DISK_LOSS and node.voted_dir != candidate_dir:
                return False        # the vote is for a key: not the same id on another disk
            return node.voted_id == candidate
        if node.leader_id is not None:
            return False
        return up_to_date
    if r == CANDIDATE:
        if not pre_vote and double_vote:
            return up_to_date and candidate != node.id
        return pre_vote and up_to_date
    if r == FOLLOWER:
        return pre_vote and not node.has_fetched and up_to_date
    if r == RESIGNED:
        return pre_vote and up_to_date
    return False  # the leader refuses everything


def handle_vote_request(c, msg: Message) -> None:
    """handleVoteRequest at the receiving voter."""
    node = c.nodes[msg.dst]
    cand = msg.src
    granted = False
    error = ERR_NONE
    if msg.epoch < node.epoch:
        error = ERR_FENCED_LEADER_EPOCH
    else:
        if msg.epoch > node.epoch:
            if node.role == LEADER:
                c.stats["disruptions"] += 1
            transition_to_unattached(c, node, msg.epoch, None)
        if c.features & DISK_LOSS and msg.voter_dir != node.dir:
            # isValidVoterKey: the candidate asked this id's key under another disk (the
            # one this node had before its disk was replaced); nothing is granted
            error = ERR_INVALID_VOTER_KEY
    if error == ERR_NONE:
        up_to_date = log_up_to_date(msg.last_epoch, msg.last_offset,
                                    last_epoch(node.log), node.log_end)
        granted = can_grant_vote(c, node, cand, msg.candidate_dir, up_to_date, msg.pre_vote)
        if granted and not msg.pre_vote:
            if node.role in (UNATTACHED, PROSPECTIVE) and node.voted_id is None:
                # unattachedAddVotedState / prospectiveAddVotedState: durable, same epoch;
                # a Prospective gets a fresh election (its pre-votes so far are lost)
                node.voted_id = cand
                node.voted_dir = msg.candidate_dir
                if node.role == PROSPECTIVE:
                    node.granted = {node.id}
                    node.rejected = set()
            c.history.vote_granted(c, node.id, cand, msg.epoch)
    c.send(Message(VOTE_RESPONSE, node.id, cand, node.epoch, msg.corr, error=error,
                   leader=-1 if node.leader_id is None else node.leader_id,
                   pre_vote=msg.pre_vote, granted=granted))


def handle_vote_response(c, msg: Message) -> None:
    """handleVoteResponse at the nominee that asked."""
    node = c.nodes[msg.dst]
    if not c.expect_response(node, msg):
        return
    if maybe_handle_common_response(c, node, msg.error, msg.leader, msg.epoch):
        return
    if msg.error != ERR_NONE or not is_nominee(node):
        return  # a Leader (or any non-nominee) ignores the vote
    if msg.granted:
        node.granted.add(msg.src)
        maybe_transition_forward(c, node)
    else:
        node.rejected.add(msg.src)
        if node.role == PROSPECTIVE and vote_rejected(c, node):
            prospective_transition_after_election_loss(c, node)
        # a Candidate that lost waits out its election timer
