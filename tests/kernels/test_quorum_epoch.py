"""BeginQuorumEpoch, EndQuorumEpoch and resignation (kernels/protocol/quorum_epoch.py).

Rules: KafkaRaftClient.handleBeginQuorumEpochRequest / handleEndQuorumEpochRequest,
QuorumState.maybeTransition, ResignedState (Kafka's raft/ sources).
"""

from conftest import (
    F_NOPV, act, begin_round, cluster_with_leader, copy_walk, craft, deliver, duplicate, elect,
    fresh, log_of, msg, send, settle, timeout, vote_round,
)
from kraftwalk.kernels.state.layout import (
    ACKED_MASK, BEGIN_QUORUM_EPOCH_REQUEST, BEGIN_QUORUM_EPOCH_RESPONSE, CANDIDATE,
    END_QUORUM_EPOCH_REQUEST, END_QUORUM_EPOCH_RESPONSE, EPOCH, ERR_FENCED_LEADER_EPOCH,
    ERR_NONE, FOLLOWER, F_EPOCH, F_ERROR, F_LEADER, F_REQ_LEADER, F_SUCCESSORS, HAS_FETCHED,
    INFLIGHT, LEADER, LEADER_ID, PREFERRED, PROSPECTIVE, RESIGNED, ROLE, S_RESIGNATIONS, UNATTACHED,
    VOTED_ID, VOTE_REQUEST, VOTE_RESPONSE, F_GRANTED,
)
from kraftwalk.kernels.transition import FAM_CLIENT_APPEND, FAM_RESIGN


def node(w, i):
    return (int(w.node[ROLE, i]), int(w.node[EPOCH, i]), int(w.node[VOTED_ID, i]),
            int(w.node[LEADER_ID, i]))


# ---------------------------------------------------------------- BeginQuorumEpoch
def test_begin_quorum_epoch_makes_an_unattached_voter_a_follower():
    w = fresh()
    elect(w, 0, [1])
    assert node(w, 2) == (UNATTACHED, 0, -1, -1)
    send(w, 0, 2)
    m = msg(w, BEGIN_QUORUM_EPOCH_REQUEST, 0, 2)
    assert (m[F_EPOCH], m[F_REQ_LEADER]) == (1, 0)
    deliver(w, BEGIN_QUORUM_EPOCH_REQUEST, 0, 2)
    assert node(w, 2) == (FOLLOWER, 1, -1, 0)
    assert w.node[HAS_FETCHED, 2] == 0      # BeginQuorumEpoch is no fetch
    r = msg(w, BEGIN_QUORUM_EPOCH_RESPONSE, 2, 0)
    assert (r[F_ERROR], r[F_EPOCH], r[F_LEADER]) == (ERR_NONE, 1, 0)
    deliver(w, BEGIN_QUORUM_EPOCH_RESPONSE, 2, 0)
    assert w.node[ACKED_MASK, 0] == 0b101
    send(w, 0, 2)                           # acknowledged, and sent again: the heartbeat
    assert msg(w, BEGIN_QUORUM_EPOCH_REQUEST, 0, 2)[F_EPOCH] == 1  # (KAFKA-16536, 3.9)
    send(w, 0, 3, expect=-1)                # observers are not told


def test_begin_quorum_epoch_keeps_the_vote_of_the_same_epoch():
    w = fresh()
    elect(w, 0, [1])
    assert node(w, 1) == (UNATTACHED, 1, 0, -1)
    begin_round(w, 0, 1)
    assert node(w, 1) == (FOLLOWER, 1, 0, 0)


def test_begin_quorum_epoch_turns_a_candidate_of_the_same_epoch_into_a_follower():
    f = F_NOPV
    w = fresh()
    timeout(w, 0, f)
    timeout(w, 1, f)                        # two Candidates of epoch 1
    vote_round(w, 0, 2, f)
    assert w.node[ROLE, 0] == LEADER
    begin_round(w, 0, 1, f)
    assert node(w, 1) == (FOLLOWER, 1, 1, 0)


def test_stale_begin_quorum_epoch_is_fenced_and_deposes_the_old_leader():
    """Leader 0 (epoch 1) announces itself to node 2, which has meanwhile moved to epoch 2:
    node 2 answers FENCED_LEADER_EPOCH with its epoch, which moves node 0 to epoch 2."""
    f = F_NOPV
    w = fresh()
    elect(w, 0, [1], f)
    send(w, 0, 2, f)
    timeout(w, 2, f)
    timeout(w, 2, f)                        # Candidate of epoch 2
    deliver(w, BEGIN_QUORUM_EPOCH_REQUEST, 0, 2, f)
    assert node(w, 2) == (CANDIDATE, 2, 2, -1)
    r = msg(w, BEGIN_QUORUM_EPOCH_RESPONSE, 2, 0)
    assert (r[F_ERROR], r[F_EPOCH], r[F_LEADER]) == (ERR_FENCED_LEADER_EPOCH, 2, -1)
    deliver(w, BEGIN_QUORUM_EPOCH_RESPONSE, 2, 0, f)
    assert node(w, 0) == (UNATTACHED, 2, -1, -1)


# ---------------------------------------------------------------- resignation
def test_graceful_resignation_sends_end_quorum_epoch_to_unacked_voters():
    w = cluster_with_leader()
    act(w, (FAM_RESIGN, 0, 0))
    assert node(w, 0) == (RESIGNED, 1, 0, 0)
    assert (w.node[ACKED_MASK, 0], w.node[PREFERRED, 0], w.scal[S_RESIGNATIONS]) == (1, 0b110, 1)
    assert list(w.peer[INFLIGHT, 0]) == [0, 0, 0, 0]
    act(w, (FAM_RESIGN, 0, 0), expect=-1)
    act(w, (FAM_CLIENT_APPEND, 0, 0), expect=-1)
    send(w, 0, 3, expect=-1)                # not to observers
    send(w, 0, 1)
    m = msg(w, END_QUORUM_EPOCH_REQUEST, 0, 1)
    assert (m[F_EPOCH], m[F_REQ_LEADER], m[F_SUCCESSORS]) == (1, 0, 0b110)
    deliver(w, END_QUORUM_EPOCH_REQUEST, 0, 1)
    assert node(w, 1) == (FOLLOWER, 1, 0, 0) and w.node[PREFERRED, 1] == 1
    r = msg(w, END_QUORUM_EPOCH_RESPONSE, 1, 0)
    assert (r[F_ERROR], r[F_EPOCH]) == (ERR_NONE, 1)
    deliver(w, END_QUORUM_EPOCH_RESPONSE, 1, 0)
    assert w.node[ACKED_MASK, 0] == 0b011
    send(w, 0, 1, expect=-1)                # acknowledged
    send(w, 0, 2)


def test_successors_are_ordered_by_descending_fetch_offset_then_id():
    """LeaderState.nonLeaderVotersByDescendingFetchOffset: voter 2 fetched further than
    voter 1, so it comes first; the request carries each receiver's place in the list."""
    from conftest import fetch_round
    from kraftwalk.kernels.state.layout import F_POSITION, REPLICA_END

    w = cluster_with_leader()
    fetch_round(w, 2, 0)                    # voter 2 fetches the LeaderChange record
    assert (w.peer[REPLICA_END, 0, 1], w.peer[REPLICA_END, 0, 2]) == (-1, 0)
    fetch_round(w, 2, 0)
    assert w.peer[REPLICA_END, 0, 2] == 1
    act(w, (FAM_RESIGN, 0, 0))
    send(w, 0, 1)
    send(w, 0, 2)
    assert msg(w, END_QUORUM_EPOCH_REQUEST, 0, 2)[F_POSITION] == 0
    assert msg(w, END_QUORUM_EPOCH_REQUEST, 0, 1)[F_POSITION] == 1
    w2 = cluster_with_leader()              # nobody fetched: by node id
    act(w2, (FAM_RESIGN, 0, 0))
    send(w2, 0, 2)
    assert msg(w2, END_QUORUM_EPOCH_REQUEST, 0, 2)[F_POSITION] == 1


def test_end_quorum_epoch_reaches_a_node_that_did_not_know_the_leader():
    w = fresh()
    elect(w, 0, [1])
    act(w, (FAM_RESIGN, 0, 0))
    send(w, 0, 2)
    deliver(w, END_QUORUM_EPOCH_REQUEST, 0, 2)
    assert node(w, 2) == (FOLLOWER, 1, -1, 0) and w.node[PREFERRED, 2] == 1


def test_resigned_times_out_to_unattached_at_the_next_epoch():
    w = cluster_with_leader()
    act(w, (FAM_RESIGN, 0, 0))
    timeout(w, 0)
    assert node(w, 0) == (UNATTACHED, 2, -1, -1)
    assert w.node[ACKED_MASK, 0] == 0 and w.node[PREFERRED, 0] == 0


def test_resigned_grants_up_to_date_pre_votes():
    w = cluster_with_leader()
    act(w, (FAM_RESIGN, 0, 0))
    w2 = copy_walk(w)
    # node 2 (empty log) is not up to date with the resigned leader's log
    timeout(w, 2)
    send(w, 2, 0)
    deliver(w, VOTE_REQUEST, 2, 0)
    assert msg(w, VOTE_RESPONSE, 0, 2)[F_GRANTED] == 0
    # give node 2 the leader's log: now its pre-vote is granted
    settle(craft(w2, 2, log=log_of(w2, 0)))
    timeout(w2, 2)
    send(w2, 2, 0)
    deliver(w2, VOTE_REQUEST, 2, 0)
    assert msg(w2, VOTE_RESPONSE, 0, 2)[F_GRANTED] == 1
    deliver(w2, VOTE_RESPONSE, 0, 2)
    assert node(w2, 2) == (CANDIDATE, 2, 2, -1)
    # a standard vote of epoch 2 moves the resigned node to Unattached(2) first: granted
    send(w2, 2, 0)
    deliver(w2, VOTE_REQUEST, 2, 0)
    assert node(w2, 0) == (UNATTACHED, 2, 2, -1)


def test_prospective_that_knows_the_leader_stays_prospective_on_begin_quorum_epoch():
    w = fresh()
    elect(w, 0, [1, 2])
    send(w, 0, 1)
    duplicate(w, BEGIN_QUORUM_EPOCH_REQUEST, 0, 1)
    deliver(w, BEGIN_QUORUM_EPOCH_REQUEST, 0, 1)
    assert node(w, 1) == (FOLLOWER, 1, 0, 0)
    timeout(w, 1)
    assert node(w, 1) == (PROSPECTIVE, 1, 0, 0)
    deliver(w, BEGIN_QUORUM_EPOCH_REQUEST, 0, 1)      # the duplicate
    assert node(w, 1) == (PROSPECTIVE, 1, 0, 0)
