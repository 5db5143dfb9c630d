"""Pull replication, the high watermark and check-quorum (kernels/protocol/replication.py).

Rules: KafkaRaftClient.handleFetchRequest / handleFetchResponse, LeaderState
.maybeUpdateHighWatermark, RaftLog.truncateToEndOffset (Kafka's raft/ sources; see
/work/shared/reference/protocol-notes.md).
"""
import pytest

from conftest import (
    F, F_COMMIT_OLD_EPOCH, F_NO_CHECK_QUORUM, act, cluster_with_leader, craft, deliver, elect,
    fetch_round, flush, fresh, log_of, msg, send, settle, timeout,
)
from kraftwalk.kernels.properties.checkers import COMMIT_CURRENT_EPOCH
from kraftwalk.kernels.state.layout import (
    ACKED_MASK, EPOCH, ERR_FENCED_LEADER_EPOCH, ERR_NONE, ERR_NOT_LEADER_OR_FOLLOWER,
    ERR_UNKNOWN_LEADER_EPOCH, FETCHED_MASK, FETCH_REQUEST, FETCH_RESPONSE, FLUSHED_END, FOLLOWER,
    F_BASE_OFFSET, F_DIVERGING_END, F_DIVERGING_EPOCH, F_EPOCH, F_ERROR, F_FETCH_OFFSET, F_HW,
    F_LAST_FETCHED_EPOCH, F_LEADER, F_N_RECORDS, F_RECORDS, HAS_FETCHED, HW, INFLIGHT, LEADER,
    LEADER_ID, LOG_END, PREFERRED, REPLICA_END, RESIGNED, ROLE, S_CLIENT_APPENDS, S_RESIGNATIONS,
    S_TRUNCATIONS, UNATTACHED,
)
from kraftwalk.kernels.transition import FAM_CHECK_QUORUM, FAM_CLIENT_APPEND


def append(w, i, n=1, features=F):
    for _ in range(n):
        act(w, (FAM_CLIENT_APPEND, i, 0), features)


def records(m):
    return [(int(m[F_RECORDS + 2 * q]), int(m[F_RECORDS + 2 * q + 1]))
            for q in range(int(m[F_N_RECORDS]))]


# ---------------------------------------------------------------- client appends
def test_client_append_adds_an_unflushed_record_of_the_leaders_epoch():
    w = cluster_with_leader()
    append(w, 0, 2)
    lg = log_of(w, 0)
    assert [e for e, _ in lg] == [1, 1, 1]
    assert lg[0][1] < 0 < lg[1][1] < lg[2][1]
    # only the LeaderChange record is flushed (at the leader's first event after it)
    assert (w.node[FLUSHED_END, 0], w.node[HW, 0], w.scal[S_CLIENT_APPENDS]) == (1, -1, 2)
    act(w, (FAM_CLIENT_APPEND, 1, 0), expect=-1)   # only a leader takes client records


def test_client_append_is_disabled_on_a_full_log():
    w = cluster_with_leader(log_capacity=4)
    append(w, 0, 3)
    act(w, (FAM_CLIENT_APPEND, 0, 0), expect=-1)
    assert w.node[LOG_END, 0] == 4


# ---------------------------------------------------------------- fetch, HW
def test_valid_fetch_returns_records_from_the_fetch_offset():
    w = cluster_with_leader()
    append(w, 0, 2)
    send(w, 1, 0)
    m = msg(w, FETCH_REQUEST, 1, 0)
    assert (m[F_EPOCH], m[F_FETCH_OFFSET], m[F_LAST_FETCHED_EPOCH]) == (1, 0, 0)
    deliver(w, FETCH_REQUEST, 1, 0)
    r = msg(w, FETCH_RESPONSE, 0, 1)
    assert (r[F_ERROR], r[F_LEADER], r[F_EPOCH], r[F_HW], r[F_DIVERGING_EPOCH]) == \
        (ERR_NONE, 0, 1, -1, -1)
    assert (r[F_BASE_OFFSET], r[F_N_RECORDS]) == (0, 3)
    assert records(r) == log_of(w, 0)
    assert w.peer[REPLICA_END, 0, 1] == 0
    deliver(w, FETCH_RESPONSE, 0, 1)
    assert log_of(w, 1) == log_of(w, 0)
    assert (w.node[FLUSHED_END, 1], w.node[HAS_FETCHED, 1], w.node[HW, 1]) == (3, 1, -1)
    # the next fetch starts at the new log end
    send(w, 1, 0)
    m = msg(w, FETCH_REQUEST, 1, 0)
    assert (m[F_FETCH_OFFSET], m[F_LAST_FETCHED_EPOCH]) == (3, 1)
    deliver(w, FETCH_REQUEST, 1, 0)
    r = msg(w, FETCH_RESPONSE, 0, 1)
    assert (r[F_BASE_OFFSET], r[F_N_RECORDS]) == (3, 0)
    assert w.peer[REPLICA_END, 0, 1] == 3


def test_fetch_response_carries_at_most_max_records():
    w = cluster_with_leader(max_records=2)
    append(w, 0, 4)
    send(w, 1, 0)
    deliver(w, FETCH_REQUEST, 1, 0)
    r = msg(w, FETCH_RESPONSE, 0, 1)
    assert (r[F_BASE_OFFSET], r[F_N_RECORDS]) == (0, 2)
    assert records(r) == log_of(w, 0)[:2]


def test_leader_flushes_before_it_handles_anything_after_appending():
    """Kafka's leader appends and flushes in one poll (maybeAppendBatches, then
    flushLeaderLog): by its next event its records are flushed and its own end offset
    counts towards the HW. Only a crash can fall between an append and its flush."""
    w = cluster_with_leader()
    append(w, 0, 2)
    assert (w.node[FLUSHED_END, 0], w.peer[REPLICA_END, 0, 0], w.node[HW, 0]) == (1, 1, -1)
    fetch_round(w, 1, 0)                  # flushes, then serves offset 0: no majority past 0
    assert (w.node[FLUSHED_END, 0], w.peer[REPLICA_END, 0, 0], w.node[HW, 0]) == (3, 3, -1)
    fetch_round(w, 1, 0)                  # follower 1 reports offset 3: leader + 1 = majority
    assert (w.peer[REPLICA_END, 0, 1], w.node[HW, 0]) == (3, 3)
    fetch_round(w, 1, 0)                  # the next response carries the HW to the follower
    assert w.node[HW, 1] == 3
    flush(w, 0, expect=-1)                # nothing left to flush


def test_observer_fetches_do_not_move_the_hw():
    w = cluster_with_leader()
    fetch_round(w, 3, 1)             # discovery: learns leader 0, epoch 1
    fetch_round(w, 3, 0)
    fetch_round(w, 3, 0)
    assert w.peer[REPLICA_END, 0, 3] == 1 and w.node[HW, 0] == -1
    assert w.node[ACKED_MASK, 0] & (1 << 3) == 0 and w.node[FETCHED_MASK, 0] & (1 << 3) == 0
    # observers do not flush what they fetch
    assert (w.node[LOG_END, 3], w.node[FLUSHED_END, 3]) == (1, 0)


def test_follower_hw_is_min_of_leader_hw_and_own_log_end():
    w = cluster_with_leader(max_records=2)
    append(w, 0, 4)                       # leader log: 5 entries
    flush(w, 0)
    fetch_round(w, 1, 0)                  # [0, 2)
    fetch_round(w, 1, 0)                  # offset 2 reported: HW 2; gets [2, 4)
    assert (w.node[HW, 0], w.node[LOG_END, 1], w.node[HW, 1]) == (2, 4, 2)
    fetch_round(w, 1, 0)                  # offset 4: HW 4; gets [4, 5)
    assert (w.node[HW, 0], w.node[LOG_END, 1], w.node[HW, 1]) == (4, 5, 4)
    fetch_round(w, 1, 0)
    assert (w.node[HW, 0], w.node[HW, 1]) == (5, 5)
    fetch_round(w, 2, 0)                  # node 2's first fetch: only 2 records
    assert (w.node[LOG_END, 2], w.node[HW, 2]) == (2, 2)


@pytest.mark.parametrize("leader_hw", [-1, 2])
def test_follower_hw_never_decreases(leader_hw):
    """A response with a lower HW, or none (-1: a new leader has none yet), leaves the
    follower's HW where it is."""
    w = fresh()
    lg = [(1, -101), (1, 102), (1, 103)]
    craft(w, 0, role=LEADER, epoch=1, leader=0, log=lg, hw=leader_hw, EPOCH_START=0)
    craft(w, 1, role=FOLLOWER, epoch=1, leader=0, log=lg, hw=3)
    craft(w, 2, role=FOLLOWER, epoch=1, leader=0, log=lg[:2])
    w.peer[REPLICA_END, 0, :] = -1
    settle(w)
    send(w, 1, 0)
    deliver(w, FETCH_REQUEST, 1, 0)
    assert msg(w, FETCH_RESPONSE, 0, 1)[F_HW] == leader_hw
    deliver(w, FETCH_RESPONSE, 0, 1)
    assert w.node[HW, 1] == 3 and w.node[HAS_FETCHED, 1] == 1


def test_hw_moves_only_past_the_epoch_start_offset():
    """Leader 0 of epoch 2 starts its epoch at offset 2. Reaching a majority at offset 2
    (entries of epoch 1 only) does not move the HW; offset 3 (its LeaderChange) does."""
    w, _ = epoch2_leader()
    fetch_round(w, 1, 0)
    assert w.peer[REPLICA_END, 0, 1] == 2 and w.node[HW, 0] == -1
    fetch_round(w, 1, 0)
    assert w.peer[REPLICA_END, 0, 1] == 3 and w.node[HW, 0] == 3


def epoch2_leader():
    w = fresh()
    old = [(1, -101), (1, 102)]
    craft(w, 0, role=LEADER, epoch=2, leader=0, voted=0, log=old + [(2, -103)], EPOCH_START=2,
          flushed=2)
    craft(w, 1, role=FOLLOWER, epoch=2, leader=0, log=old)
    craft(w, 2, role=FOLLOWER, epoch=2, leader=0, log=old[:1])
    w.peer[REPLICA_END, 0, :] = -1
    settle(w)
    flush(w, 0)
    assert w.peer[REPLICA_END, 0, 0] == 3 and w.node[HW, 0] == -1
    return w, old


def test_commit_old_epoch_mutation_moves_the_hw_over_an_old_entry():
    """MUT_COMMIT_OLD_EPOCH: the same fetch makes HW 2, covering only epoch-1 entries:
    CommitCurrentEpoch reports it at the step that handled the fetch."""
    w, _ = epoch2_leader()
    send(w, 1, 0, F_COMMIT_OLD_EPOCH)
    deliver(w, FETCH_REQUEST, 1, 0, F_COMMIT_OLD_EPOCH, expect=COMMIT_CURRENT_EPOCH + 1)
    assert w.node[HW, 0] == 2


# ---------------------------------------------------------------- diverging epochs
@pytest.mark.parametrize("leader_log,follower_log,fetch,diverging,truncated", [
    # follower has extra entries of a shared epoch: truncate to the leader's end of it
    ([(1, -101), (2, -102)], [(1, -101), (1, 103), (1, 104)], (3, 1), (1, 1), 1),
    # follower has an epoch the leader never had: the leader answers its floor epoch
    ([(1, -101), (1, 102), (3, -103)], [(1, -101), (2, 105), (2, 106)], (3, 2), (1, 2), 1),
    # follower's last epoch is below every epoch of the leader: (that epoch, log start)
    ([(2, -102)], [(1, -101)], (1, 1), (1, 0), 0),
    # the diverging epoch is not in the follower's log: truncate to the end of its floor
    ([(1, -101), (3, -103)], [(2, -105), (2, -106)], (2, 2), (1, 1), 0),
], ids=["shared-epoch", "unknown-epoch", "below-all", "floor-missing"])
def test_diverging_epoch_truncates_the_follower(leader_log, follower_log, fetch, diverging,
                                                  truncated):
    epoch = max(e for e, _ in leader_log)
    w = fresh()
    craft(w, 0, role=LEADER, epoch=epoch, leader=0, voted=0, log=leader_log,
          EPOCH_START=len(leader_log) - 1, FETCHED_MASK=1, ACKED_MASK=1)
    craft(w, 1, role=FOLLOWER, epoch=epoch, leader=0, log=follower_log)
    w.peer[REPLICA_END, 0, :] = -1
    settle(w)
    send(w, 1, 0)
    m = msg(w, FETCH_REQUEST, 1, 0)
    assert (m[F_FETCH_OFFSET], m[F_LAST_FETCHED_EPOCH]) == fetch
    deliver(w, FETCH_REQUEST, 1, 0)
    r = msg(w, FETCH_RESPONSE, 0, 1)
    assert (r[F_ERROR], r[F_DIVERGING_EPOCH], r[F_DIVERGING_END], r[F_N_RECORDS]) == \
        (ERR_NONE, *diverging, 0)
    # a diverging fetch updates neither the replica state nor check-quorum
    assert w.peer[REPLICA_END, 0, 1] == -1 and w.node[FETCHED_MASK, 0] == 1 << 0
    deliver(w, FETCH_RESPONSE, 0, 1)
    assert log_of(w, 1) == follower_log[:truncated]
    assert (w.scal[S_TRUNCATIONS], w.node[HAS_FETCHED, 1]) == (1, 1)
    # the next fetch is valid and brings the follower level with the leader
    fetch_round(w, 1, 0)
    assert log_of(w, 1) == leader_log
    assert w.peer[REPLICA_END, 0, 1] == truncated


def test_no_truncation_when_the_follower_log_is_a_prefix():
    w = cluster_with_leader()
    append(w, 0, 1)
    fetch_round(w, 1, 0)
    fetch_round(w, 1, 0)
    assert w.scal[S_TRUNCATIONS] == 0 and log_of(w, 1) == log_of(w, 0)


# ---------------------------------------------------------------- fetch errors
def test_fetch_to_a_non_leader_names_the_leader_and_the_fetcher_follows_it():
    w = cluster_with_leader()
    send(w, 3, 1)                          # the observer (epoch 0) asks follower 1 (epoch 1)
    deliver(w, FETCH_REQUEST, 3, 1)
    r = msg(w, FETCH_RESPONSE, 1, 3)
    assert (r[F_ERROR], r[F_EPOCH], r[F_LEADER], r[F_HW]) == (ERR_FENCED_LEADER_EPOCH, 1, 0, -1)
    deliver(w, FETCH_RESPONSE, 1, 3)
    assert (w.node[ROLE, 3], w.node[EPOCH, 3], w.node[LEADER_ID, 3]) == (FOLLOWER, 1, 0)
    assert w.node[HAS_FETCHED, 3] == 0
    # same epoch, a non-leader: NOT_LEADER_OR_FOLLOWER (a bootstrap voter, after a
    # request to the leader timed out)
    send(w, 3, 2)
    deliver(w, FETCH_REQUEST, 3, 2)
    r = msg(w, FETCH_RESPONSE, 2, 3)
    assert (r[F_ERROR], r[F_EPOCH], r[F_LEADER]) == (ERR_NOT_LEADER_OR_FOLLOWER, 1, 0)
    deliver(w, FETCH_RESPONSE, 2, 3)
    assert (w.node[ROLE, 3], w.node[LEADER_ID, 3]) == (FOLLOWER, 0)


def test_fetch_from_a_higher_epoch_is_answered_unknown_and_ignored():
    w = cluster_with_leader()
    settle(craft(w, 3, epoch=5))
    send(w, 3, 0)
    deliver(w, FETCH_REQUEST, 3, 0)
    r = msg(w, FETCH_RESPONSE, 0, 3)
    assert (r[F_ERROR], r[F_EPOCH], r[F_LEADER]) == (ERR_UNKNOWN_LEADER_EPOCH, 1, 0)
    assert w.peer[REPLICA_END, 0, 3] == -1 and w.node[ROLE, 0] == LEADER
    deliver(w, FETCH_RESPONSE, 0, 3)
    assert (w.node[ROLE, 3], w.node[EPOCH, 3], w.node[LEADER_ID, 3]) == (UNATTACHED, 5, -1)
    assert w.peer[INFLIGHT, 3, 0] == 0


def test_unattached_voter_discovers_the_leader_by_fetching_from_it():
    """An Unattached node of the leader's epoch that fetches from the leader itself
    becomes its follower and takes the records of the same response."""
    w = fresh()
    elect(w, 0, [1])
    assert (w.node[ROLE, 1], w.node[EPOCH, 1], w.node[LEADER_ID, 1]) == (UNATTACHED, 1, -1)
    fetch_round(w, 1, 0)
    assert (w.node[ROLE, 1], w.node[LEADER_ID, 1], w.node[HAS_FETCHED, 1]) == (FOLLOWER, 0, 1)
    assert log_of(w, 1) == log_of(w, 0)


def test_superseded_fetch_response_is_dropped():
    """A second Fetch supersedes the first; the first one's response no longer matches the
    outstanding correlation id and is dropped."""
    w = cluster_with_leader()
    send(w, 1, 0)
    deliver(w, FETCH_REQUEST, 1, 0)          # response R1 (records [0, 1))
    send(w, 1, 0)                            # a new request to the same node
    deliver(w, FETCH_RESPONSE, 0, 1)         # R1: stale now
    assert (w.node[LOG_END, 1], w.node[HAS_FETCHED, 1]) == (0, 0)
    deliver(w, FETCH_REQUEST, 1, 0)
    deliver(w, FETCH_RESPONSE, 0, 1)
    assert log_of(w, 1) == log_of(w, 0) and w.node[HAS_FETCHED, 1] == 1


# ---------------------------------------------------------------- check quorum
def test_a_majority_of_fetches_restarts_the_check_quorum_timer():
    w = cluster_with_leader()
    assert w.node[FETCHED_MASK, 0] == 1 << 0
    fetch_round(w, 1, 0)         # leader + node 1 = a majority of 3: the set is cleared
    assert w.node[FETCHED_MASK, 0] == 1 << 0
    assert w.node[ACKED_MASK, 0] == 0b111


def test_check_quorum_timeout_resigns_the_leader():
    w = cluster_with_leader()
    act(w, (FAM_CHECK_QUORUM, 0, 0))
    assert (w.node[ROLE, 0], w.node[EPOCH, 0], w.node[LEADER_ID, 0]) == (RESIGNED, 1, 0)
    assert (w.node[ACKED_MASK, 0], w.node[PREFERRED, 0]) == (1 << 0, 0b110)
    assert w.scal[S_RESIGNATIONS] == 1
    act(w, (FAM_CHECK_QUORUM, 0, 0), expect=-1)


def test_check_quorum_only_applies_to_leaders_of_several_voters():
    w = cluster_with_leader()
    for i in (1, 2, 3):
        act(w, (FAM_CHECK_QUORUM, i, 0), expect=-1)
    w1 = fresh(voters=1, observers=0)
    timeout(w1, 0)
    act(w1, (FAM_CHECK_QUORUM, 0, 0), expect=-1)


def test_no_check_quorum_mutation_disables_the_resignation():
    w = cluster_with_leader(F_NO_CHECK_QUORUM)
    act(w, (FAM_CHECK_QUORUM, 0, 0), F_NO_CHECK_QUORUM, expect=-1)
    assert w.node[ROLE, 0] == LEADER


def test_fetch_to_a_resigned_leader_is_refused():
    w = cluster_with_leader()
    act(w, (FAM_CHECK_QUORUM, 0, 0))
    send(w, 1, 0)
    deliver(w, FETCH_REQUEST, 1, 0)
    r = msg(w, FETCH_RESPONSE, 0, 1)
    assert (r[F_ERROR], r[F_LEADER]) == (ERR_NOT_LEADER_OR_FOLLOWER, 0)
    deliver(w, FETCH_RESPONSE, 0, 1)
    assert (w.node[ROLE, 1], w.node[LEADER_ID, 1], w.node[LOG_END, 1]) == (FOLLOWER, 0, 0)


def test_an_observer_that_fetched_a_bootstrap_voter_goes_on_following_its_leader():
    w = cluster_with_leader()
    fetch_round(w, 3, 1)                   # discovery: Follower of 0
    fetch_round(w, 3, 2)                   # a bootstrap voter: NOT_LEADER_OR_FOLLOWER
    assert (w.node[ROLE, 3], w.node[LEADER_ID, 3]) == (FOLLOWER, 0)
    fetch_round(w, 3, 0)
    assert log_of(w, 3) == log_of(w, 0)


@pytest.mark.parametrize("log,div,expected", [
    ([(1, -101), (1, 102), (2, -103)], (0, 1), 1),   # epoch 0: min(end offset, log end)
    ([(1, -101)], (0, 5), 1),
    ([(1, -101), (1, 102), (2, -103)], (2, 5), 3),   # epoch present: min(its end, end offset)
    ([(1, -101), (1, 102), (2, -103)], (1, 1), 1),
    ([(1, -101), (3, -103)], (2, 9), 1),             # epoch absent: end of the floor epoch
])
def test_truncate_to_end_offset(log, div, expected):
    """RaftLog.truncateToEndOffset, called directly (the epoch-0 case is not reachable
    through the protocol: every entry has an epoch >= 1)."""
    from kraftwalk.kernels.protocol.replication import truncate_to_end_offset
    w = fresh()
    craft(w, 1, log=log)
    truncate_to_end_offset(w, 1, *div, 0)
    assert log_of(w, 1) == log[:expected]
    assert w.scal[S_TRUNCATIONS] == (1 if expected < len(log) else 0)


def test_check_quorum_never_expires_for_a_one_voter_set_the_leader_is_not_in():
    """LeaderState.timeUntilCheckQuorumExpires is Long.MAX_VALUE whenever the voter set
    has one member, even when the leader removed itself and that member is another node;
    with two voters it runs."""
    from kraftwalk.kernels.protocol.replication import check_quorum_enabled
    from kraftwalk.kernels.state.layout import VOTERS, VOTER_COUNT

    w = cluster_with_leader()
    leader = next(i for i in range(4) if w.node[ROLE, i] == LEADER)
    other = next(i for i in range(3) if i != leader)
    assert check_quorum_enabled(w, leader, F)
    craft(w, leader, VOTERS=1 << other, VOTER_COUNT=1)
    assert not check_quorum_enabled(w, leader, F)
    craft(w, leader, VOTERS=(1 << other) | (1 << leader), VOTER_COUNT=2)
    assert check_quorum_enabled(w, leader, F)
