"""Crash, restart, partitions, lost / duplicated messages (kernels/transition/faults.py, network.py).

Restart follows Kafka's QuorumState.initialize: only the epoch, the
vote, the leader id and the flushed log survive a crash.
"""
import pytest

from conftest import (
    F, F_NOPV, F_RESTARTED_LEADER, act, cluster_with_leader, craft, deliver, duplicate, elect,
    fetch_round, flush, fresh, log_of, lose, msg, msgs, send, settle, timeout, violation, vote_round,
)
from kraftwalk.kernels.properties.checkers import ELECTION_SAFETY, LEADER_APPEND_ONLY
from kraftwalk.kernels.state.layout import (
    ACKED_MASK, CANDIDATE, EPOCH, FETCH_REQUEST, FETCH_RESPONSE, FLUSHED_END, FOLLOWER, GRANTED,
    HAS_FETCHED, HW, INFLIGHT, LEADER, LEADER_ID, LINKS, LOG_END, N_MSGS, PREFERRED, PROSPECTIVE,
    REJECTED, REPLICA_END, RESIGNED, ROLE, S_CRASHES, S_MSGS_DROPPED_FULL, S_MSGS_DUPLICATED,
    S_MSGS_LOST, UNATTACHED, UP, VOTED_ID, BEGIN_QUORUM_EPOCH_REQUEST, END_QUORUM_EPOCH_REQUEST,
    VOTE_REQUEST, F_SUCCESSORS,
)
from kraftwalk.kernels.transition import (
    FAM_CLIENT_APPEND, FAM_CRASH, FAM_PARTITION, FAM_RESIGN, FAM_RESTART
)


def crash(w, i, features=F, expect=0):
    return act(w, (FAM_CRASH, i, 0), features, expect)


def restart(w, i, features=F, expect=0):
    return act(w, (FAM_RESTART, i, 0), features, expect)


def partition(w, kind, r, features=F, expect=0):
    return act(w, (FAM_PARTITION, kind, r), features, expect)


def persisted(w, i):
    return (int(w.node[EPOCH, i]), int(w.node[VOTED_ID, i]), int(w.node[LEADER_ID, i]))


# ---------------------------------------------------------------- crash
def test_crash_loses_the_unflushed_tail_and_the_hw():
    w = cluster_with_leader()
    act(w, (FAM_CLIENT_APPEND, 0, 0))
    fetch_round(w, 1, 0)                            # the leader flushes before handling it
    fetch_round(w, 1, 0)
    flush(w, 0, expect=-1)                          # [0, 2) already flushed, HW 2
    act(w, (FAM_CLIENT_APPEND, 0, 0))
    act(w, (FAM_CLIENT_APPEND, 0, 0))
    assert (w.node[LOG_END, 0], w.node[FLUSHED_END, 0], w.node[HW, 0]) == (4, 2, 2)
    before = persisted(w, 0)
    crash(w, 0)
    assert (w.node[UP, 0], w.node[LOG_END, 0], w.node[HW, 0]) == (0, 2, -1)
    assert persisted(w, 0) == before and w.scal[S_CRASHES] == 1
    crash(w, 0, expect=-1)


def test_crash_of_a_follower_drops_its_volatile_hw_not_its_flushed_log():
    w = cluster_with_leader()
    fetch_round(w, 1, 0)
    fetch_round(w, 1, 0)
    assert (w.node[LOG_END, 1], w.node[FLUSHED_END, 1], w.node[HW, 1]) == (1, 1, 1)
    crash(w, 1)
    assert (w.node[LOG_END, 1], w.node[HW, 1]) == (1, -1)


def test_a_crashed_node_takes_no_actions_and_loses_messages_sent_to_it():
    w = cluster_with_leader()
    send(w, 1, 0)
    crash(w, 0)
    restart(w, 1, expect=-1)                          # it is up
    for fam in (FAM_CLIENT_APPEND, FAM_CRASH):
        act(w, (fam, 0, 0), expect=-1)
    send(w, 0, 1, expect=-1)
    lost = w.scal[S_MSGS_LOST]
    deliver(w, FETCH_REQUEST, 1, 0)
    assert w.scal[S_MSGS_LOST] == lost + 1 and w.scal[N_MSGS] == 0
    assert w.peer[REPLICA_END, 0, 1] == -1


# ---------------------------------------------------------------- restart
def test_restarted_leader_comes_back_resigned():
    w = cluster_with_leader()
    crash(w, 0)
    restart(w, 0)
    assert (w.node[ROLE, 0], w.node[UP, 0], w.node[HW, 0]) == (RESIGNED, 1, -1)
    assert persisted(w, 0) == (1, 0, 0)
    # QuorumState.initialize: Resigned with an EMPTY successor list, so every follower
    # that gets its EndQuorumEpoch reads position 0 and times out at once
    assert (w.node[ACKED_MASK, 0], w.node[PREFERRED, 0]) == (1 << 0, 0)
    send(w, 0, 1)                                     # EndQuorumEpoch to the other voters
    assert msg(w, END_QUORUM_EPOCH_REQUEST, 0, 1)[F_SUCCESSORS] == 0
    timeout(w, 0)
    assert (w.node[ROLE, 0], w.node[EPOCH, 0]) == (UNATTACHED, 2)


@pytest.mark.parametrize("features", [F, F_NOPV], ids=["via-prospective", "candidate"])
def test_restarted_node_that_voted_for_itself_is_candidate(features):
    w = fresh()
    timeout(w, 0, features)
    if features == F:
        vote_round(w, 0, 1, features)                 # Candidate of epoch 1
        timeout(w, 0, features)                       # Prospective, vote for self kept
        assert w.node[ROLE, 0] == PROSPECTIVE
    crash(w, 0, features)
    restart(w, 0, features)
    assert w.node[ROLE, 0] == CANDIDATE and persisted(w, 0) == (1, 0, -1)
    assert (w.node[GRANTED, 0], w.node[REJECTED, 0]) == (1 << 0, 0)


def test_restarted_node_that_knew_the_leader_is_its_follower():
    w = cluster_with_leader()
    fetch_round(w, 1, 0)
    assert w.node[HAS_FETCHED, 1] == 1
    crash(w, 1)
    restart(w, 1)
    assert w.node[ROLE, 1] == FOLLOWER and persisted(w, 1) == (1, 0, 0)
    assert w.node[HAS_FETCHED, 1] == 0


def test_restarted_observer_that_knew_the_leader_is_its_follower():
    w = cluster_with_leader()
    fetch_round(w, 3, 1)
    crash(w, 3)
    restart(w, 3)
    assert w.node[ROLE, 3] == FOLLOWER and persisted(w, 3) == (1, -1, 0)


def test_restarted_node_that_voted_for_another_is_unattached_keeping_the_vote():
    w = fresh()
    elect(w, 0, [1])
    crash(w, 1)
    restart(w, 1)
    assert w.node[ROLE, 1] == UNATTACHED and persisted(w, 1) == (1, 0, -1)


def test_restarted_node_behind_its_log_epoch_is_unattached_in_that_epoch():
    w = fresh()
    settle(craft(w, 1, role=FOLLOWER, epoch=1, voted=0, leader=0, log=[(3, -101)]))
    crash(w, 1)
    restart(w, 1)
    assert w.node[ROLE, 1] == UNATTACHED and persisted(w, 1) == (3, -1, -1)


def test_restart_resets_volatile_state():
    w = fresh()
    timeout(w, 0)
    send(w, 0, 1)
    assert w.peer[INFLIGHT, 0, 1] != 0
    crash(w, 0)
    restart(w, 0)
    assert list(w.peer[INFLIGHT, 0]) == [0] * 4
    assert (w.node[ROLE, 0], w.node[GRANTED, 0], w.node[HW, 0]) == (UNATTACHED, 0, -1)


def test_restarted_leader_mutation_breaks_leader_append_only():
    """MUT_RESTARTED_LEADER: the leader lost its unflushed tail and leads epoch 1 again."""
    w = cluster_with_leader()
    act(w, (FAM_CLIENT_APPEND, 0, 0))
    act(w, (FAM_CLIENT_APPEND, 0, 0))               # log [0, 3); only the LeaderChange
    crash(w, 0, F_RESTARTED_LEADER)                 # record (flushed when it sent
    assert w.node[LOG_END, 0] == 1                  # BeginQuorumEpoch) survives
    restart(w, 0, F_RESTARTED_LEADER, expect=LEADER_APPEND_ONLY + 1)
    assert (w.node[ROLE, 0], w.node[EPOCH, 0]) == (LEADER, 1)
    assert violation(w) == (LEADER_APPEND_ONLY, 0, -1, 1, 1)


# ---------------------------------------------------------------- partitions
def test_isolating_a_node_cuts_both_directions():
    w = cluster_with_leader()
    partition(w, 0, 4 * 7 + 1)                        # r % 4 == 1
    assert w.node[LINKS, 1] == 1 << 1
    assert [int(w.node[LINKS, j]) for j in (0, 2, 3)] == [0b1101] * 3


def test_isolating_an_isolated_node_changes_nothing():
    w = cluster_with_leader()
    partition(w, 0, 1)
    partition(w, 0, 1, expect=-1)


def test_messages_over_a_cut_link_are_lost_when_sent_and_when_delivered():
    w = cluster_with_leader()
    send(w, 1, 0)                                     # in flight before the cut
    partition(w, 0, 1)
    lost = w.scal[S_MSGS_LOST]
    deliver(w, FETCH_REQUEST, 1, 0)
    assert w.scal[S_MSGS_LOST] == lost + 1 and w.peer[REPLICA_END, 0, 1] == -1
    assert msgs(w, FETCH_RESPONSE) == []
    send(w, 1, 0)                                     # sent over the cut link: lost at once
    assert w.scal[N_MSGS] == 0 and w.scal[S_MSGS_LOST] == lost + 2
    assert w.peer[INFLIGHT, 1, 0] != 0                # the sender still waits for it
    partition(w, 3, 0)                                # heal
    fetch_round(w, 1, 0)
    assert log_of(w, 1) == log_of(w, 0)


def test_one_way_cut():
    w = cluster_with_leader()
    r = 1 + 4 * 1                                     # a = 1, then b = 2 (skipping a)
    partition(w, 1, r)
    assert (int(w.node[LINKS, 1]) >> 2 & 1, int(w.node[LINKS, 2]) >> 1 & 1) == (0, 1)
    assert w.node[LINKS, 1] == 0b1011
    partition(w, 1, r, expect=-1)
    # 2 -> 1 still works, 1 -> 2 does not
    act(w, (FAM_CLIENT_APPEND, 0, 0))
    timeout(w, 2)
    send(w, 2, 1)
    assert len(msgs(w, VOTE_REQUEST, 2, 1)) == 1
    timeout(w, 1)
    send(w, 1, 2)
    assert msgs(w, VOTE_REQUEST, 1, 2) == []


def test_split_into_two_sides_and_heal():
    w = cluster_with_leader()
    partition(w, 2, 0b0011 << 8)                      # sides {0, 1} and {2, 3}
    assert [int(x) for x in w.node[LINKS]] == [0b0011, 0b0011, 0b1100, 0b1100]
    partition(w, 2, 0, expect=-1)                     # an empty side is no split
    partition(w, 2, 0b1111 << 8, expect=-1)
    fetch_round(w, 1, 0)                              # inside one side: fine
    assert log_of(w, 1) == log_of(w, 0)
    act(w, (FAM_RESIGN, 0, 0))
    send(w, 0, 2)                                     # across the split: lost
    assert msgs(w, END_QUORUM_EPOCH_REQUEST) == []
    partition(w, 3, 0)
    assert [int(x) for x in w.node[LINKS]] == [0b1111] * 4
    partition(w, 3, 0, expect=-1)


# ---------------------------------------------------------------- lose, duplicate, full
def test_lose_and_duplicate_messages():
    w = cluster_with_leader()
    send(w, 1, 0)
    duplicate(w, FETCH_REQUEST, 1, 0)
    assert len(msgs(w, FETCH_REQUEST, 1, 0)) == 2 and w.scal[S_MSGS_DUPLICATED] == 1
    lose(w, FETCH_REQUEST, 1, 0)
    assert len(msgs(w, FETCH_REQUEST, 1, 0)) == 1
    lose(w, FETCH_REQUEST, 1, 0)
    assert w.scal[N_MSGS] == 0


def test_a_full_network_drops_new_messages_and_refuses_duplicates():
    w = fresh(msg_slots=2)
    timeout(w, 0)
    send(w, 0, 1)
    send(w, 0, 2)
    assert w.scal[N_MSGS] == 2
    duplicate(w, VOTE_REQUEST, 0, 1, expect=-1)
    send(w, 0, 1)
    assert w.scal[N_MSGS] == 2 and w.scal[S_MSGS_DROPPED_FULL] == 1


# A voter that voted for itself in epoch 1 and then followed leader 0 of that epoch.
def _followed_after_voting_for_itself(f):
    w = fresh()
    timeout(w, 0, F_NOPV)
    timeout(w, 1, F_NOPV)                             # both Candidates of epoch 1
    vote_round(w, 0, 2, F_NOPV)                       # 0 leads epoch 1
    send(w, 0, 1, F_NOPV)
    deliver(w, BEGIN_QUORUM_EPOCH_REQUEST, 0, 1, F_NOPV)
    assert w.node[ROLE, 1] == FOLLOWER and persisted(w, 1) == (1, 1, 0)
    crash(w, 1, f)
    return w


def test_restarted_candidate_that_followed_the_winner_comes_back_a_follower_in_kafka_3_9():
    """Kafka 3.9: FollowerState persists (epoch, leader) and no vote: a Candidate that
    went on to follow the winner of its epoch restarts as that leader's Follower, not as
    a Candidate of an epoch that has a leader."""
    w = _followed_after_voting_for_itself(F_NOPV)
    restart(w, 1, F_NOPV)
    assert w.node[ROLE, 1] == FOLLOWER
    assert persisted(w, 1) == (1, 1, 0)


def test_from_kafka_4_0_a_follower_that_voted_for_itself_restarts_as_candidate():
    """KAFKA-17642 (4.0): FollowerState.election() keeps the voted key, and
    QuorumState.initialize asks isVotedCandidate before hasLeader, so the node comes
    back Candidate of epoch 1; CandidateState's election persists no leader."""
    w = _followed_after_voting_for_itself(F)
    restart(w, 1, F)
    assert w.node[ROLE, 1] == CANDIDATE and w.node[GRANTED, 1] == 1 << 1
    assert persisted(w, 1) == (1, 1, -1)


def test_from_kafka_4_0_the_only_voter_in_its_view_then_leads_an_epoch_that_has_a_leader():
    """KafkaRaftClient.initialize: a restarted Candidate whose own vote is a majority
    becomes Leader at once. Here node 1's view of the voters is {1} (its log's latest
    VotersRecord, crafted), so it leads epoch 1, which node 0 leads: ElectionSafety."""
    from kraftwalk.kernels.state.layout import VOTERS, VOTER_COUNT

    w = _followed_after_voting_for_itself(F)
    craft(w, 1, VOTERS=1 << 1, VOTER_COUNT=1)
    restart(w, 1, F, expect=ELECTION_SAFETY + 1)
    assert w.node[ROLE, 1] == LEADER and w.node[EPOCH, 1] == 1
    assert w.node[ROLE, 0] == LEADER and w.node[EPOCH, 0] == 1


def test_kafka_3_9_restarts_the_only_voter_in_its_view_as_a_follower_electing_a_new_epoch():
    """Before 4.0 the Follower's state held no vote: it comes back Follower of 0 and,
    the only voter in its view, elects itself in epoch 2, not in epoch 1."""
    from kraftwalk.kernels.state.layout import VOTERS, VOTER_COUNT

    w = _followed_after_voting_for_itself(F_NOPV)
    craft(w, 1, VOTERS=1 << 1, VOTER_COUNT=1)
    restart(w, 1, F_NOPV)
    assert w.node[ROLE, 1] == LEADER and w.node[EPOCH, 1] == 2
