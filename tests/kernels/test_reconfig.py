"""Voter changes (kernels/protocol/reconfig.py, kernels/state/voters.py): when a leader may add or remove
a voter, the voter set each node reads from its own log (rolled back by a truncation),
and a leader that removes itself.

Rules: AddVoterHandler / RemoveVoterHandler.handle*Request and highWatermarkUpdated,
LeaderState.isReplicaCaughtUp, KRaftControlRecordStateMachine (Kafka's raft/ sources).
"""
from conftest import (
    F, F_RECONFIG, act, cluster_with_leader, deliver, fetch_round, log_of, send, set_log,
    voters_record,
)
from kraftwalk.kernels.state.layout import (
    EPOCH, FETCH_REQUEST, FETCH_RESPONSE, FOLLOWER, HW, LEADER, REACHED, REPLICA_END, RESIGNED, ROLE,
    S_VOTER_CHANGES,
    T_REMOVED_LEADER_RESIGNED, T_VOTER_ADDED, T_VOTER_REMOVED, VOTER_COUNT, VOTERS, VOTERS_AT,
)
from kraftwalk.kernels.state.log import truncate_to
from kraftwalk.kernels.transition import FAM_ADD_VOTER, FAM_REMOVE_VOTER, FAM_TIMEOUT


def view(w, i):
    """Node i's voter set, as a sorted list of ids."""
    mask = int(w.node[VOTERS, i])
    return [j for j in range(w.node.shape[1]) if mask >> j & 1]


def led_and_committed():
    """3 voters + 1 observer; leader 0 of epoch 1 has committed its LeaderChange (HW 1)
    with voter 1, and observer 3 has found the leader and fetched from it."""
    w = cluster_with_leader(F_RECONFIG)
    fetch_round(w, 1, 0, F_RECONFIG)
    fetch_round(w, 1, 0, F_RECONFIG)
    assert w.node[HW, 0] == 1
    send(w, 3, 0, F_RECONFIG)                       # discovery: epoch 0 is fenced ...
    deliver(w, FETCH_REQUEST, 3, 0, F_RECONFIG)
    deliver(w, FETCH_RESPONSE, 0, 3, F_RECONFIG)
    fetch_round(w, 3, 0, F_RECONFIG)                # ... then it fetches in epoch 1
    assert w.peer[REPLICA_END, 0, 3] == 0
    return w


def test_no_voter_change_before_the_leader_has_committed_in_its_epoch():
    w = cluster_with_leader(F_RECONFIG)
    assert w.node[HW, 0] == -1
    act(w, (FAM_REMOVE_VOTER, 0, 2), F_RECONFIG, expect=-1)
    fetch_round(w, 1, 0, F_RECONFIG)
    fetch_round(w, 1, 0, F_RECONFIG)
    act(w, (FAM_REMOVE_VOTER, 0, 2), F_RECONFIG)
    # and without the feature there are no voter changes at all
    w = cluster_with_leader(F)
    fetch_round(w, 1, 0)
    fetch_round(w, 1, 0)
    act(w, (FAM_REMOVE_VOTER, 0, 2), F, expect=-1)


def test_add_a_caught_up_observer_one_change_at_a_time():
    w = led_and_committed()
    assert view(w, 0) == [0, 1, 2]
    act(w, (FAM_ADD_VOTER, 0, 3), F_RECONFIG)
    assert view(w, 0) == [0, 1, 2, 3] and w.node[VOTERS_AT, 0] == 1
    assert w.node[VOTER_COUNT, 0] == 4 and w.scal[S_VOTER_CHANGES] == 1
    assert w.scal[REACHED] >> T_VOTER_ADDED & 1
    assert view(w, 1) == [0, 1, 2]                   # the followers have not fetched it yet
    # the record is uncommitted: no second change, whatever it is
    act(w, (FAM_REMOVE_VOTER, 0, 2), F_RECONFIG, expect=-1)
    act(w, (FAM_ADD_VOTER, 0, 3), F_RECONFIG, expect=-1)   # already a voter
    # the new set counts from its append: 0 and 1 are no longer a majority of four
    fetch_round(w, 1, 0, F_RECONFIG)
    fetch_round(w, 1, 0, F_RECONFIG)
    assert view(w, 1) == [0, 1, 2, 3] and w.node[HW, 0] == 1
    fetch_round(w, 3, 0, F_RECONFIG)
    fetch_round(w, 3, 0, F_RECONFIG)
    assert w.node[HW, 0] == 2                          # 0, 1 and 3: committed
    act(w, (FAM_REMOVE_VOTER, 0, 2), F_RECONFIG)
    assert view(w, 0) == [0, 1, 3] and w.scal[REACHED] >> T_VOTER_REMOVED & 1


def test_an_observer_that_never_fetched_cannot_be_added():
    w = cluster_with_leader(F_RECONFIG)
    fetch_round(w, 1, 0, F_RECONFIG)
    fetch_round(w, 1, 0, F_RECONFIG)
    act(w, (FAM_ADD_VOTER, 0, 3), F_RECONFIG, expect=-1)


def test_the_voter_set_is_the_latest_record_in_the_log_and_a_truncation_rolls_it_back():
    w = cluster_with_leader(F_RECONFIG)
    set_log(w, 2, [(1, -101), (1, voters_record(0b1011, 1)), (1, 102),
                   (1, voters_record(0b0011, 2))])
    assert view(w, 2) == [0, 1] and w.node[VOTERS_AT, 2] == 3
    truncate_to(w, 2, 3)
    assert view(w, 2) == [0, 1, 3] and w.node[VOTERS_AT, 2] == 1
    truncate_to(w, 2, 1)
    assert view(w, 2) == [0, 1, 2] and w.node[VOTERS_AT, 2] == -1
    assert log_of(w, 2) == [(1, -101)]


def test_a_removed_voter_stops_timing_out_into_elections():
    w = led_and_committed()
    act(w, (FAM_REMOVE_VOTER, 0, 2), F_RECONFIG)
    fetch_round(w, 2, 0, F_RECONFIG)                  # 2 learns of its own removal
    assert view(w, 2) == [0, 1]
    act(w, (FAM_TIMEOUT, 2, 0), F_RECONFIG, expect=-1)  # an observer has no election
    assert w.node[ROLE, 2] == FOLLOWER and w.node[EPOCH, 2] == 1


def test_a_leader_that_removes_itself_leads_until_it_commits_then_resigns():
    w = led_and_committed()
    act(w, (FAM_REMOVE_VOTER, 0, 0), F_RECONFIG)
    assert view(w, 0) == [1, 2] and w.node[ROLE, 0] == LEADER
    fetch_round(w, 1, 0, F_RECONFIG)                  # 1 gets the record ...
    fetch_round(w, 1, 0, F_RECONFIG)                  # ... and says it holds it
    assert w.node[ROLE, 0] == LEADER                  # (a majority of {1, 2} is both)
    fetch_round(w, 2, 0, F_RECONFIG)                  # 2 catches up to it
    fetch_round(w, 2, 0, F_RECONFIG)                  # the record is committed
    assert w.node[ROLE, 0] == RESIGNED and w.node[HW, 0] == 2
    assert w.scal[REACHED] >> T_REMOVED_LEADER_RESIGNED & 1
    act(w, (FAM_TIMEOUT, 0, 0), F_RECONFIG)           # its election timer: a new epoch
    assert w.node[EPOCH, 0] == 2
