"""Elections (kernels/protocol/election.py, quorum_state.py) driven by explicit actions.

Rules from KafkaRaftClient / QuorumState / EpochState.canGrantVote (Kafka 4.0, KIP-996):
see /work/shared/reference/protocol-notes.md and Kafka's raft/ sources.
"""
import pytest

from conftest import (
    F, F_DOUBLE_VOTE, F_NOPV, act, cluster_with_leader, copy_walk, craft, deliver, duplicate,
    elect, fetch_round, fresh, log_of, msg, msgs, send, settle, timeout, violation, vote_round,
)
from kraftwalk.kernels.properties.checkers import VOTE_UNIQUENESS
from kraftwalk.kernels.state.layout import (
    CANDIDATE, EPOCH, EPOCH_START, ERR_FENCED_LEADER_EPOCH, ERR_NONE, FETCH_REQUEST, FETCH_RESPONSE,
    FLUSHED_END, FOLLOWER,
    F_CORR, F_EPOCH, F_ERROR, F_GRANTED, F_LAST_EPOCH, F_LAST_OFFSET, F_LEADER, F_PRE_VOTE,
    GRANTED, G_VOTE, HAS_FETCHED, HW, INFLIGHT, LEADER, LEADER_ID, LOG_END, N_MSGS, PROSPECTIVE,
    REJECTED, REPLICA_END, ROLE, S_DISRUPTIONS, S_ELECTIONS, S_LEADER_CHANGES,
    S_PRE_ELECTIONS, S_STEPS, UNATTACHED, VOTED_ID, VOTE_REQUEST, VOTE_RESPONSE, V_STEP,
)
from kraftwalk.kernels.transition import FAM_CHECK_QUORUM, FAM_CLIENT_APPEND, FAM_FLUSH


def node(w, i):
    """A few fields of node i, for compact asserts."""
    return dict(role=int(w.node[ROLE, i]), epoch=int(w.node[EPOCH, i]),
                voted=int(w.node[VOTED_ID, i]), leader=int(w.node[LEADER_ID, i]))


# ---------------------------------------------------------------- election timers
def test_timeout_with_pre_vote_makes_a_voter_prospective_in_the_same_epoch(w3):
    timeout(w3, 0)
    assert node(w3, 0) == dict(role=PROSPECTIVE, epoch=0, voted=-1, leader=-1)
    assert w3.node[GRANTED, 0] == 1 << 0 and w3.node[REJECTED, 0] == 0
    assert (w3.scal[S_PRE_ELECTIONS], w3.scal[S_ELECTIONS]) == (1, 0)
    assert w3.scal[N_MSGS] == 0  # requests are separate (send) actions


def test_timeout_without_pre_vote_makes_a_voter_candidate_at_epoch_plus_one(w3):
    timeout(w3, 0, F_NOPV)
    assert node(w3, 0) == dict(role=CANDIDATE, epoch=1, voted=0, leader=-1)
    assert w3.node[GRANTED, 0] == 1 << 0
    assert (w3.scal[S_PRE_ELECTIONS], w3.scal[S_ELECTIONS]) == (0, 1)


def test_timeout_is_disabled_for_leaders_crashed_nodes_and_unattached_observers():
    w = cluster_with_leader()
    timeout(w, 0, expect=-1)              # the leader has no election timer
    timeout(w, 3, expect=-1)              # an Unattached observer never elects
    craft(w, 2, UP=0)
    timeout(w, 2, expect=-1)
    assert w.node[ROLE, 0] == LEADER and w.node[ROLE, 3] == UNATTACHED


def test_follower_fetch_timeout_goes_prospective_keeping_leader_and_vote():
    w = cluster_with_leader()
    timeout(w, 1)  # node 1 voted for 0 in epoch 1 and follows it
    assert node(w, 1) == dict(role=PROSPECTIVE, epoch=1, voted=0, leader=0)


def test_an_observers_fetch_timeout_changes_no_role():
    """No release turns an observer Unattached when its fetch times out: 3.9-4.1 fetch
    from the bootstrap voters as Follower (pollFollowerAsObserver), 4.2 on from the
    best node; both are Fetch targets of a Follower observer, not a timeout."""
    w = cluster_with_leader()
    fetch_round(w, 3, 1)  # discovery: node 1 (a follower) names leader 0
    assert node(w, 3) == dict(role=FOLLOWER, epoch=1, voted=-1, leader=0)
    timeout(w, 3, expect=-1)
    assert node(w, 3) == dict(role=FOLLOWER, epoch=1, voted=-1, leader=0)


def test_candidate_timeout_with_pre_vote_goes_prospective_keeping_its_vote():
    w = fresh()
    timeout(w, 0)
    vote_round(w, 0, 1)
    assert node(w, 0)["role"] == CANDIDATE
    timeout(w, 0)
    assert node(w, 0) == dict(role=PROSPECTIVE, epoch=1, voted=0, leader=-1)
    assert w.node[GRANTED, 0] == 1 << 0


def test_candidate_timeout_without_pre_vote_starts_a_new_election(w3):
    timeout(w3, 0, F_NOPV)
    timeout(w3, 0, F_NOPV)
    assert node(w3, 0) == dict(role=CANDIDATE, epoch=2, voted=0, leader=-1)
    assert w3.scal[S_ELECTIONS] == 2


def test_prospective_timeout_without_known_leader_goes_unattached(w3):
    timeout(w3, 0)
    timeout(w3, 0)
    assert node(w3, 0) == dict(role=UNATTACHED, epoch=0, voted=-1, leader=-1)


def test_prospective_timeout_with_known_leader_goes_back_to_follower():
    w = cluster_with_leader()
    timeout(w, 2)
    timeout(w, 2)
    assert node(w, 2) == dict(role=FOLLOWER, epoch=1, voted=-1, leader=0)
    assert w.node[HAS_FETCHED, 2] == 0


# ---------------------------------------------------------------- pre-vote
def test_pre_vote_request_carries_the_current_epoch_and_log_end():
    w = cluster_with_leader()
    fetch_round(w, 1, 0)            # node 1 now holds the LeaderChange record (1, <0>)
    timeout(w, 1)
    send(w, 1, 2)
    m = msg(w, VOTE_REQUEST, 1, 2)
    assert (m[F_EPOCH], m[F_PRE_VOTE], m[F_LAST_EPOCH], m[F_LAST_OFFSET]) == (1, 1, 1, 1)
    assert w.peer[INFLIGHT, 1, 2] == m[F_CORR] > 0
    assert w.node[EPOCH, 1] == 1    # asking does not bump the epoch


def test_pre_vote_granted_by_unfetched_follower_is_not_persisted():
    """Node 2 follows leader 0 but has not fetched (BeginQuorumEpoch only): it grants an
    up-to-date pre-vote without recording any vote or changing epoch; node 1 then has a
    majority and becomes Candidate in epoch 2, voting for itself."""
    w = cluster_with_leader()
    fetch_round(w, 1, 0)
    timeout(w, 1)
    send(w, 1, 2)
    deliver(w, VOTE_REQUEST, 1, 2)
    r = msg(w, VOTE_RESPONSE, 2, 1)
    assert (r[F_PRE_VOTE], r[F_GRANTED], r[F_EPOCH], r[F_ERROR], r[F_LEADER]) == (1, 1, 1, 0, 0)
    assert node(w, 2) == dict(role=FOLLOWER, epoch=1, voted=-1, leader=0)
    assert w.ghost[G_VOTE + 2, 1] == -1
    deliver(w, VOTE_RESPONSE, 2, 1)
    assert node(w, 1) == dict(role=CANDIDATE, epoch=2, voted=1, leader=-1)
    assert w.node[GRANTED, 1] == 1 << 1  # a fresh election: pre-votes do not carry over


def test_pre_vote_to_a_receiver_behind_moves_it_to_unattached_without_a_vote():
    w = fresh()
    settle(craft(w, 0, epoch=3))
    timeout(w, 0)
    send(w, 0, 1)
    assert msg(w, VOTE_REQUEST, 0, 1)[F_EPOCH] == 3
    deliver(w, VOTE_REQUEST, 0, 1)
    assert node(w, 1) == dict(role=UNATTACHED, epoch=3, voted=-1, leader=-1)
    r = msg(w, VOTE_RESPONSE, 1, 0)
    assert (r[F_GRANTED], r[F_EPOCH]) == (1, 3)
    assert node(w, 0)["epoch"] == 3
    deliver(w, VOTE_RESPONSE, 1, 0)
    assert node(w, 0) == dict(role=CANDIDATE, epoch=4, voted=0, leader=-1)


def test_pre_vote_from_a_lower_epoch_is_fenced(w3):
    settle(craft(w3, 1, epoch=2))
    timeout(w3, 0)
    send(w3, 0, 1)
    deliver(w3, VOTE_REQUEST, 0, 1)
    r = msg(w3, VOTE_RESPONSE, 1, 0)
    assert (r[F_ERROR], r[F_GRANTED], r[F_EPOCH]) == (ERR_FENCED_LEADER_EPOCH, 0, 2)
    deliver(w3, VOTE_RESPONSE, 1, 0)
    # the higher epoch in the response moves the prospective there, Unattached
    assert node(w3, 0) == dict(role=UNATTACHED, epoch=2, voted=-1, leader=-1)


def test_pre_vote_rejected_when_not_up_to_date(w3):
    settle(craft(w3, 1, log=[(1, -101)], epoch=1))
    settle(craft(w3, 0, epoch=1))
    timeout(w3, 0)
    send(w3, 0, 1)
    deliver(w3, VOTE_REQUEST, 0, 1)
    assert msg(w3, VOTE_RESPONSE, 1, 0)[F_GRANTED] == 0


def test_fetched_follower_and_leader_reject_pre_votes_and_the_nominee_gives_up():
    """Node 2 fetched (its log is as up to date as anyone's) and goes Prospective: the
    leader rejects, node 1 (a follower that has fetched) rejects; with 2 of 3 voters
    rejecting it goes back to following leader 0 in the same epoch."""
    w = cluster_with_leader()
    fetch_round(w, 1, 0)
    fetch_round(w, 2, 0)
    assert w.node[HAS_FETCHED, 1] == 1 and log_of(w, 1) == log_of(w, 2) == log_of(w, 0)
    timeout(w, 2)
    for j in (0, 1):
        send(w, 2, j)
        deliver(w, VOTE_REQUEST, 2, j)
        assert msg(w, VOTE_RESPONSE, j, 2)[F_GRANTED] == 0
    assert node(w, 0)["role"] == LEADER and node(w, 1)["role"] == FOLLOWER
    deliver(w, VOTE_RESPONSE, 0, 2)
    assert node(w, 2)["role"] == PROSPECTIVE and w.node[REJECTED, 2] == 1 << 0
    send(w, 2, 0, expect=-1)  # no second request to a voter that answered
    deliver(w, VOTE_RESPONSE, 1, 2)
    assert node(w, 2) == dict(role=FOLLOWER, epoch=1, voted=-1, leader=0)


def test_follower_that_lost_its_fetch_flag_grants_pre_votes_again():
    """hasFetchedFromLeader belongs to one FollowerState: node 1 fetched, timed out, lost
    its pre-vote and follows again; until it fetches again it grants up-to-date pre-votes."""
    w = cluster_with_leader()
    fetch_round(w, 1, 0)
    fetch_round(w, 2, 0)
    timeout(w, 1)                   # Prospective
    timeout(w, 1)                   # lost: Follower of 0 again, not fetched yet
    assert node(w, 1)["role"] == FOLLOWER and w.node[HAS_FETCHED, 1] == 0
    timeout(w, 2)
    vote_round(w, 2, 1)
    assert node(w, 2) == dict(role=CANDIDATE, epoch=2, voted=2, leader=-1)


# ---------------------------------------------------------------- votes and leaders
def test_majority_of_votes_makes_a_leader_with_a_leader_change_record(w3):
    elect(w3, 0, [1, 2])
    assert node(w3, 0) == dict(role=LEADER, epoch=1, voted=0, leader=0)
    assert node(w3, 1) == dict(role=UNATTACHED, epoch=1, voted=0, leader=-1)
    assert node(w3, 2) == dict(role=UNATTACHED, epoch=0, voted=-1, leader=-1)  # never asked
    (e, v), = log_of(w3, 0)
    assert e == 1 and v < 0
    assert (w3.node[EPOCH_START, 0], w3.node[HW, 0], w3.node[FLUSHED_END, 0]) == (0, -1, 0)
    assert list(w3.peer[REPLICA_END, 0]) == [-1] * 4
    assert (w3.scal[S_PRE_ELECTIONS], w3.scal[S_ELECTIONS], w3.scal[S_LEADER_CHANGES]) == (1, 1, 1)
    assert w3.ghost[G_VOTE + 1, 1] == 0


def test_leader_change_record_goes_at_the_old_log_end(w3):
    for j in range(3):
        craft(w3, j, epoch=1, log=[(1, -101), (1, 102)])
    settle(w3)
    elect(w3, 0, [1, 2])
    assert w3.node[EPOCH_START, 0] == 2 and w3.node[HW, 0] == -1
    assert log_of(w3, 0)[:2] == [(1, -101), (1, 102)]
    (e, v) = log_of(w3, 0)[2]
    assert e == 2 and v < 0


def test_vote_request_of_a_candidate_carries_the_bumped_epoch():
    w = fresh()
    timeout(w, 0)
    vote_round(w, 0, 1)
    send(w, 0, 2)
    m = msg(w, VOTE_REQUEST, 0, 2)
    assert (m[F_EPOCH], m[F_PRE_VOTE], m[F_LAST_EPOCH], m[F_LAST_OFFSET]) == (1, 0, 0, 0)


def test_a_standard_vote_is_granted_once_per_epoch(w3):
    """Without pre-vote: 0 and 1 are both Candidates of epoch 1. Voter 2 grants 0 (also
    twice, for a duplicated request) and rejects 1; Candidate 1 rejects 0."""
    f = F_NOPV
    timeout(w3, 0, f)
    timeout(w3, 1, f)
    send(w3, 0, 2, f)
    duplicate(w3, VOTE_REQUEST, 0, 2, f)
    deliver(w3, VOTE_REQUEST, 0, 2, f)
    assert node(w3, 2) == dict(role=UNATTACHED, epoch=1, voted=0, leader=-1)
    deliver(w3, VOTE_REQUEST, 0, 2, f)  # the duplicate: same candidate, granted again
    assert [w3.msgs[k, F_GRANTED] for k in msgs(w3, VOTE_RESPONSE, 2, 0)] == [1, 1]
    send(w3, 1, 2, f)
    deliver(w3, VOTE_REQUEST, 1, 2, f)
    assert msg(w3, VOTE_RESPONSE, 2, 1)[F_GRANTED] == 0
    assert node(w3, 2)["voted"] == 0
    send(w3, 0, 1, f)
    deliver(w3, VOTE_REQUEST, 0, 1, f)
    assert msg(w3, VOTE_RESPONSE, 1, 0)[F_GRANTED] == 0  # a Candidate rejects standard votes
    assert node(w3, 1) == dict(role=CANDIDATE, epoch=1, voted=1, leader=-1)
    deliver(w3, VOTE_RESPONSE, 2, 0, f)
    assert node(w3, 0)["role"] == LEADER
    deliver(w3, VOTE_RESPONSE, 2, 1, f)
    # a rejected Candidate just waits for its election timer
    assert node(w3, 1)["role"] == CANDIDATE and w3.node[REJECTED, 1] == 1 << 2


def test_unattached_voter_with_known_leader_rejects_a_standard_vote():
    w = fresh()
    settle(craft(w, 1, epoch=1, leader=0))
    settle(craft(w, 2, role=CANDIDATE, epoch=1, voted=2, GRANTED=1 << 2))
    send(w, 2, 1)
    deliver(w, VOTE_REQUEST, 2, 1)
    assert msg(w, VOTE_RESPONSE, 1, 2)[F_GRANTED] == 0


def test_voted_voter_regrants_without_rechecking_the_log():
    """Kafka: an Unattached voter that voted for this candidate grants again, log unchecked."""
    w = fresh()
    settle(craft(w, 1, epoch=1, voted=2, log=[(1, -101), (1, 102)]))
    settle(craft(w, 2, role=CANDIDATE, epoch=1, voted=2, GRANTED=1 << 2))
    send(w, 2, 1)
    deliver(w, VOTE_REQUEST, 2, 1)
    assert msg(w, VOTE_RESPONSE, 1, 2)[F_GRANTED] == 1


def test_prospective_granting_a_standard_vote_records_it_and_restarts_its_pre_vote():
    """prospectiveAddVotedState: the vote is persisted and earlier pre-vote grants are lost."""
    w = fresh(voters=5, observers=0)
    settle(craft(w, 0, role=PROSPECTIVE, epoch=1, GRANTED=0b00101, REJECTED=0b01000))
    settle(craft(w, 1, role=CANDIDATE, epoch=1, voted=1, GRANTED=1 << 1))
    send(w, 1, 0)
    deliver(w, VOTE_REQUEST, 1, 0)
    assert msg(w, VOTE_RESPONSE, 0, 1)[F_GRANTED] == 1
    assert node(w, 0) == dict(role=PROSPECTIVE, epoch=1, voted=1, leader=-1)
    assert (w.node[GRANTED, 0], w.node[REJECTED, 0]) == (1 << 0, 0)


def test_leader_refuses_votes_in_its_epoch():
    w = fresh()
    settle(craft(w, 0, role=LEADER, epoch=1, leader=0, voted=0, log=[(1, -101)]))
    settle(craft(w, 1, role=CANDIDATE, epoch=1, voted=1, GRANTED=1 << 1, log=[(1, -101)]))
    send(w, 1, 0)
    deliver(w, VOTE_REQUEST, 1, 0)
    r = msg(w, VOTE_RESPONSE, 0, 1)
    assert (r[F_GRANTED], r[F_ERROR], r[F_LEADER]) == (0, ERR_NONE, 0)
    assert node(w, 0)["role"] == LEADER
    deliver(w, VOTE_RESPONSE, 0, 1)
    # the response names leader 0 of the same epoch: the candidate follows it
    assert node(w, 1) == dict(role=FOLLOWER, epoch=1, voted=1, leader=0)


@pytest.mark.parametrize("candidate_fetched", [False, True])
def test_higher_epoch_vote_request_moves_the_leader_to_unattached(candidate_fetched):
    f = F_NOPV
    w = cluster_with_leader(f)
    if candidate_fetched:
        fetch_round(w, 2, 0, f)
    timeout(w, 2, f)
    assert node(w, 2) == dict(role=CANDIDATE, epoch=2, voted=2, leader=-1)
    send(w, 2, 0, f)
    deliver(w, VOTE_REQUEST, 2, 0, f)
    voted = 2 if candidate_fetched else -1  # granted only if the candidate's log is up to date
    assert node(w, 0) == dict(role=UNATTACHED, epoch=2, voted=voted, leader=-1)
    assert w.scal[S_DISRUPTIONS] == 1
    r = msg(w, VOTE_RESPONSE, 0, 2)
    assert (r[F_GRANTED], r[F_EPOCH], r[F_ERROR]) == (int(candidate_fetched), 2, ERR_NONE)
    deliver(w, VOTE_RESPONSE, 0, 2, f)
    assert node(w, 2)["role"] == (LEADER if candidate_fetched else CANDIDATE)


def test_stale_vote_responses_are_ignored(w3):
    """A response from an earlier election (connections were reset since), here also
    duplicated, is dropped: it would otherwise give node 0 a majority."""
    timeout(w3, 0)
    send(w3, 0, 1)
    deliver(w3, VOTE_REQUEST, 0, 1)
    duplicate(w3, VOTE_RESPONSE, 1, 0)
    timeout(w3, 0)                      # the pre-vote is lost: Unattached
    timeout(w3, 0)                      # a new pre-vote election
    assert node(w3, 0)["role"] == PROSPECTIVE and w3.peer[INFLIGHT, 0, 1] == 0
    deliver(w3, VOTE_RESPONSE, 1, 0)
    deliver(w3, VOTE_RESPONSE, 1, 0)
    assert node(w3, 0)["role"] == PROSPECTIVE and w3.node[GRANTED, 0] == 1 << 0
    # a new request supersedes; the old response still does not count
    vote_round(w3, 0, 1)
    assert node(w3, 0)["role"] == CANDIDATE


def test_duplicated_vote_response_counts_once():
    w = fresh(voters=5, observers=0)
    timeout(w, 0)
    send(w, 0, 1)
    deliver(w, VOTE_REQUEST, 0, 1)
    duplicate(w, VOTE_RESPONSE, 1, 0)
    deliver(w, VOTE_RESPONSE, 1, 0)
    assert w.node[GRANTED, 0] == 0b11 and w.peer[INFLIGHT, 0, 1] == 0
    deliver(w, VOTE_RESPONSE, 1, 0)
    assert w.node[GRANTED, 0] == 0b11 and node(w, 0)["role"] == PROSPECTIVE


def test_send_vote_request_only_to_unanswered_voters(w3):
    timeout(w3, 0)
    send(w3, 0, 0, expect=-1)           # not to itself
    send(w3, 0, 3, expect=-1)           # not to an observer
    send(w3, 0, 1)
    send(w3, 0, 1)                      # unanswered yet: may be re-sent
    assert len(msgs(w3, VOTE_REQUEST, 0, 1)) == 2


# ---------------------------------------------------------------- one voter
@pytest.mark.parametrize("features", [F, F_NOPV], ids=["pre-vote", "no-pre-vote"])
def test_one_voter_cluster_elects_itself_in_one_timeout(features):
    w = fresh(voters=1, observers=1)
    timeout(w, 0, features)
    assert node(w, 0) == dict(role=LEADER, epoch=1, voted=0, leader=0)
    assert log_of(w, 0)[0][0] == 1 and w.node[LOG_END, 0] == 1
    act(w, (FAM_CHECK_QUORUM, 0, 0), features, expect=-1)  # never expires with one voter
    act(w, (FAM_CLIENT_APPEND, 0, 0), features)
    act(w, (FAM_FLUSH, 0, 0), features)
    assert w.node[HW, 0] == 2  # its own flushed log is a majority


# ---------------------------------------------------------------- mutation
def test_double_vote_mutation_is_caught_at_the_second_grant(w3):
    """With MUT_DOUBLE_VOTE, voter 2 grants 0 and then 1 in epoch 1: the vote handler's
    ghost reports VoteUniqueness even though the persisted vote is not overwritten."""
    settle(craft(w3, 0, role=CANDIDATE, epoch=1, voted=0, GRANTED=1 << 0))
    settle(craft(w3, 1, role=CANDIDATE, epoch=1, voted=1, GRANTED=1 << 1))
    for f, expect_second in ((F, 0), (F_DOUBLE_VOTE, VOTE_UNIQUENESS + 1)):
        w = copy_walk(w3)
        send(w, 0, 2, f)
        deliver(w, VOTE_REQUEST, 0, 2, f)
        send(w, 1, 2, f)
        deliver(w, VOTE_REQUEST, 1, 2, f, expect=expect_second)
        assert msg(w, VOTE_RESPONSE, 2, 1)[F_GRANTED] == (1 if expect_second else 0)
        assert node(w, 2)["voted"] == 0
    assert violation(w) == (VOTE_UNIQUENESS, 2, 1, 1, -1)
    assert w.scal[V_STEP] == w.scal[S_STEPS]  # numbered like the after-step checks


# ---------------------------------------------------------------- Unattached's timer
def keeps(w, i):
    from kraftwalk.kernels.state.layout import INTENT, I_KEEP_TIMER

    return bool(w.node[INTENT, i] & I_KEEP_TIMER)


def clear_intents(w):
    from kraftwalk.kernels.state.layout import INTENT

    w.node[INTENT, :] = 0


def test_unattached_keeps_the_election_time_of_a_prospective_that_timed_out(w3):
    """QuorumState.transitionToUnattached: a Prospective whose pre-vote was not rejected
    (its timer expired) keeps what was left of it; a rejected one draws afresh."""
    timeout(w3, 0)
    clear_intents(w3)
    timeout(w3, 0)  # its pre-vote timed out: Unattached with the time left (none)
    assert node(w3, 0)["role"] == UNATTACHED and keeps(w3, 0)
    w = fresh(3, 0)
    for j in (1, 2):
        craft(w, j, log=[(0, 1)])  # their logs are ahead of node 0's: both reject it
    timeout(w, 0)
    clear_intents(w)
    for j in (1, 2):
        send(w, 0, j)
        deliver(w, VOTE_REQUEST, 0, j)
        deliver(w, VOTE_RESPONSE, j, 0)
    assert node(w, 0)["role"] == UNATTACHED and not keeps(w, 0)


@pytest.mark.parametrize("grants", [False, True])
def test_a_candidate_seeing_a_higher_epoch_keeps_its_time_unless_it_grants(grants):
    """A Candidate that sees a higher epoch keeps its election time as Unattached;
    granting the vote (unattachedAddVotedState) starts a fresh timer."""
    w = fresh(3, 0)
    timeout(w, 0, F_NOPV)
    timeout(w, 1, F_NOPV)
    timeout(w, 1, F_NOPV)  # node 1: Candidate of epoch 2
    if not grants:
        craft(w, 0, log=[(0, 1)])  # node 0's log is ahead: it rejects node 1
    clear_intents(w)
    send(w, 1, 0, F_NOPV)
    deliver(w, VOTE_REQUEST, 1, 0, F_NOPV)
    assert node(w, 0)["role"] == UNATTACHED and node(w, 0)["epoch"] == 2
    assert msg(w, VOTE_RESPONSE, 0, 1)[F_GRANTED] == grants
    assert keeps(w, 0) == (not grants)


def test_a_follower_seeing_a_higher_epoch_draws_a_fresh_timer():
    w = cluster_with_leader()
    timeout(w, 2, F_NOPV)  # node 2: Candidate of epoch 2
    clear_intents(w)
    send(w, 2, 1, F_NOPV)
    deliver(w, VOTE_REQUEST, 2, 1, F_NOPV)
    assert node(w, 1)["epoch"] == 2 and not keeps(w, 1)


# ---------------------------------------------------------------- KAFKA-17030
@pytest.mark.parametrize("features, voter_fetches", [(F, True), (F_NOPV, False)],
                         ids=["4.0-fetches", "3.9.0-waits"])
def test_an_unattached_voter_fetches_from_a_bootstrap_voter_from_kafka_17030(
        features, voter_fetches):
    """KAFKA-17030 (3.9.1, 4.0): an Unattached voter fetches from the bootstrap voters as
    an observer does (pollUnattachedCommon), so it can find a leader that does not know
    it; in 3.9.0 it only waits for its election timeout (pollUnattachedAsVoter)."""
    w = fresh()
    send(w, 1, 0, features, expect=0 if voter_fetches else -1)
    send(w, 3, 0, features)                 # the observer fetches in every release
    assert len(msgs(w, FETCH_REQUEST)) == (2 if voter_fetches else 1)


@pytest.mark.parametrize("features, voter_falls_back", [(F, True), (F_NOPV, False)],
                         ids=["4.0-best-node", "3.9.0-leader-only"])
def test_a_follower_fetches_from_a_bootstrap_voter_after_its_leader_from_kafka_17030(
        features, voter_falls_back):
    """KAFKA-17030 (3.9.1, 4.0) gave a Follower voter maybeSendFetchToBestNode: once its
    request to the leader timed out it fetches from any bootstrap voter; 3.9.0 fetches
    only from the leader. An observer Follower does in every release."""
    from kraftwalk.kernels.transition import request_targets
    w = cluster_with_leader(features)
    fetch_round(w, 3, 1, features)          # the observer follows leader 0
    assert request_targets(w, 1, features) == (0b111 & ~0b010 if voter_falls_back else 0b001)
    assert request_targets(w, 3, features) == 0b111
    send(w, 1, 0, features)
    send(w, 1, 2, features, expect=0 if voter_falls_back else -1)
    if voter_falls_back:
        # one Fetch pending at a time: the one to the leader timed out, its answer dropped
        assert w.peer[INFLIGHT, 1, 0] == 0 and w.peer[INFLIGHT, 1, 2] != 0
        before = log_of(w, 1)
        deliver(w, FETCH_REQUEST, 1, 0, features)
        deliver(w, FETCH_RESPONSE, 0, 1, features)
        assert log_of(w, 1) == before != log_of(w, 0)
        deliver(w, FETCH_REQUEST, 1, 2, features)
        deliver(w, FETCH_RESPONSE, 2, 1, features)   # NOT_LEADER_OR_FOLLOWER, leader 0
        assert node(w, 1)["role"] == FOLLOWER and w.peer[INFLIGHT, 1, 2] == 0
