"""Voter changes (KIP-853) in the reference model (kraftwalk/reference/reconfig.py,
voters.py): when a leader may add or remove a voter, the voter set each node reads from
its own log (rolled back by a truncation), and a leader that removes itself.

Clusters are driven by the actions of the kernel's encoding (``apply_and_check``), so
every step also runs the invariant checks. Rules: AddVoterHandler / RemoveVoterHandler
(handle*Request, highWatermarkUpdated), LeaderState.isReplicaCaughtUp,
KRaftControlRecordStateMachine (Kafka's raft/ sources).
"""
from __future__ import annotations

from itertools import combinations

import pytest

from kraftwalk.kernels.properties.checkers import ALL_CHECKS, AT_MOST_ONE_UNCOMMITTED_VOTER_SET
from kraftwalk.kernels.features import (
    MUT_RECONFIG_BEFORE_COMMIT, MUT_TWO_PENDING_CHANGES, PRE_VOTE, RECONFIG,
)
from kraftwalk.kernels.state.layout import (
    BEGIN_QUORUM_EPOCH_REQUEST, BEGIN_QUORUM_EPOCH_RESPONSE, FETCH_REQUEST,
    FOLLOWER, LEADER, RESIGNED, SERIAL_MASK, UNATTACHED, VOTE_REQUEST, VOTE_RESPONSE,
    VOTERS_SHIFT, VOTERS_TAG,
)
from kraftwalk.kernels.transition import (
    FAM_ADD_VOTER, FAM_CLIENT_APPEND, FAM_CRASH, FAM_FLUSH, FAM_REMOVE_VOTER,
    FAM_SEND, FAM_TIMEOUT,
)
from kraftwalk.reference import Params, ReferenceCluster
from kraftwalk.reference.log import truncate
from kraftwalk.reference.voters import (
    is_voter, is_voters_record, latest_voters_record, majorities_intersect, majority,
    record_voters, voters, voters_record_value,
)

from driving import act, deliver, fetch_round, request

F = PRE_VOTE | ALL_CHECKS
F_RECONFIG = F | RECONFIG


# ---- driving a cluster ------------------------------------------------------------------
def cluster(voters_=3, observers=1, features=F_RECONFIG, log_capacity=16):
    return ReferenceCluster(Params(voters_, observers, log_capacity=log_capacity, msg_slots=16),
                            features)


def elect(c, leader, asked):
    """``leader``'s timer fires; it asks ``asked`` in turn (pre-votes, then votes)."""
    act(c, (FAM_TIMEOUT, leader, 0))
    for _ in range(2):
        for j in asked:
            if c.nodes[leader].role == LEADER:
                break
            request(c, leader, j, VOTE_REQUEST, VOTE_RESPONSE)
    assert c.nodes[leader].role == LEADER, c.describe()
    for j in range(c.params.voters):
        if j != leader:
            request(c, leader, j, BEGIN_QUORUM_EPOCH_REQUEST, BEGIN_QUORUM_EPOCH_RESPONSE)


def led(features=F_RECONFIG, **kw):
    """3 voters + 1 observer: node 0 leads epoch 1, voters 1 and 2 follow it; no HW yet."""
    c = cluster(features=features, **kw)
    elect(c, 0, [1, 2])
    assert c.nodes[0].hw is None
    return c


def led_and_committed(features=F_RECONFIG, **kw):
    """As ``led``, and 0 has committed its LeaderChange (HW 1) with voter 1."""
    c = led(features, **kw)
    fetch_round(c, 1, 0)
    fetch_round(c, 1, 0)
    assert c.nodes[0].hw == 1
    return c


def view(c, i):
    return sorted(voters(c, c.nodes[i]))


def add(c, a, b, expect=0):
    return act(c, (FAM_ADD_VOTER, a, b), expect)


def remove(c, a, b, expect=0):
    return act(c, (FAM_REMOVE_VOTER, a, b), expect)


# ---- VotersRecord values and voter sets ---------------------------------------------------
def test_a_voters_record_value_is_the_kernels_encoding():
    v = voters_record_value({0, 1, 3}, 7)
    assert v == -(VOTERS_TAG | 0b1011 << VOTERS_SHIFT | 7)
    assert is_voters_record(v) and record_voters(v) == {0, 1, 3}
    assert voters_record_value({2}, SERIAL_MASK + 5) == voters_record_value({2}, 4)
    assert not is_voters_record(-5) and not is_voters_record(5)   # LeaderChange, client


def brute_force_intersect(a, b):
    """No majority of a is disjoint from a majority of b (from the definition)."""
    return not any(not set(x) & set(y)
                   for x in combinations(sorted(a), len(a) // 2 + 1)
                   for y in combinations(sorted(b), len(b) // 2 + 1))


def test_majorities_intersect_agrees_with_the_definition():
    sets = [frozenset(j for j in range(5) if m >> j & 1) for m in range(1, 32)]
    for a in sets:
        for b in sets:
            assert majorities_intersect(a, b) == brute_force_intersect(a, b), (a, b)
    # one voter apart always intersect (why changes go one at a time); two may not
    assert majorities_intersect({0, 1, 2}, {0, 1, 2, 3})
    assert not majorities_intersect({0, 1, 2}, {0, 1, 2, 3, 4})


def test_the_voter_set_is_the_latest_record_in_the_log_and_a_truncation_rolls_it_back():
    c = cluster()
    node = c.nodes[2]
    node.log = [(1, -1), (1, voters_record_value({0, 1, 3}, 2)), (1, 3),
                (1, voters_record_value({0, 1}, 4))]
    assert view(c, 2) == [0, 1] and latest_voters_record(node) == 3
    assert not is_voter(c, node) and majority(c, node) == 2
    truncate(node, 3)
    assert view(c, 2) == [0, 1, 3] and latest_voters_record(node) == 1
    assert not is_voter(c, node) and majority(c, node) == 2
    truncate(node, 1)
    assert view(c, 2) == [0, 1, 2] and latest_voters_record(node) == -1 and is_voter(c, node)


def test_a_record_below_the_log_start_still_counts():
    """Entries below a snapshot's end are its content: its VotersRecord is the set."""
    c = cluster()
    node = c.nodes[1]
    node.log = [(1, -1), (1, voters_record_value({0, 1, 3}, 2)), (1, 3)]
    node.latest, node.snapshots = (2, 1), {(2, 1): tuple(node.log[:2])}
    node.log_start, node.start_epoch = 2, 1
    assert view(c, 1) == [0, 1, 3]


def test_the_canonical_snapshot_shows_each_nodes_voter_set():
    c = led_and_committed()
    remove(c, 0, 2)
    nodes = c.snapshot()["nodes"]
    assert nodes[0]["voters"] == ((0, 1), 1, 2)
    assert nodes[1]["voters"] == ((0, 1, 2), -1, 3)


# ---- when a leader may change the voters ----------------------------------------------------
def test_no_voter_change_before_the_leader_has_committed_in_its_epoch():
    c = led()
    remove(c, 0, 2, expect=-1)
    fetch_round(c, 1, 0)
    fetch_round(c, 1, 0)
    remove(c, 0, 2)


def test_the_reconfig_before_commit_mutation_changes_voters_without_a_hw():
    c = led(F_RECONFIG | MUT_RECONFIG_BEFORE_COMMIT)
    assert c.nodes[0].hw is None
    remove(c, 0, 2)             # taken as fenced by its epoch start (offset 0)
    assert view(c, 0) == [0, 1]


def test_without_the_feature_there_are_no_voter_changes():
    c = led_and_committed(F)
    remove(c, 0, 2, expect=-1)
    fetch_round(c, 3, 0)
    fetch_round(c, 3, 0)
    add(c, 0, 3, expect=-1)


def test_one_change_at_a_time():
    c = led_and_committed()
    remove(c, 0, 2)
    assert view(c, 0) == [0, 1] and latest_voters_record(c.nodes[0]) == 1
    remove(c, 0, 1, expect=-1)   # the record at offset 1 is not below the HW (1) yet
    fetch_round(c, 1, 0)         # 1 fetches it ...
    fetch_round(c, 1, 0)         # ... and reports it: a majority of {0, 1} holds it
    assert c.nodes[0].hw == 2
    remove(c, 0, 1)


def test_the_two_pending_changes_mutation_breaks_at_most_one_uncommitted_voter_set():
    c = led_and_committed(F_RECONFIG | MUT_TWO_PENDING_CHANGES)
    remove(c, 0, 2)
    remove(c, 0, 1, expect=AT_MOST_ONE_UNCOMMITTED_VOTER_SET + 1)
    v = c.violation
    assert (v.node_a, v.node_b, v.epoch, v.offset) == (0, -1, 1, 2)


def test_only_a_caught_up_node_can_be_added():
    c = led_and_committed()
    fetch_round(c, 3, 0)        # discovery: epoch 0 is fenced, 3 learns of the leader
    assert c.nodes[3].role == FOLLOWER and 3 not in c.nodes[0].replica_end
    add(c, 0, 3, expect=-1)
    fetch_round(c, 3, 0)        # a fetch in the leader's epoch: 0 knows 3's offset
    add(c, 0, 3)
    assert view(c, 0) == [0, 1, 2, 3] and view(c, 3) == [0, 1, 2]


@pytest.mark.parametrize("family, b", [
    (FAM_ADD_VOTER, 1),      # already a voter
    (FAM_ADD_VOTER, 0),      # itself
    (FAM_ADD_VOTER, 4),      # no such node
    (FAM_ADD_VOTER, -1),
    (FAM_REMOVE_VOTER, 3),   # not a voter
    (FAM_REMOVE_VOTER, 4),
])
def test_targets_are_checked(family, b):
    c = led_and_committed()
    fetch_round(c, 3, 0)
    fetch_round(c, 3, 0)
    act(c, (family, 0, b), expect=-1)


def test_only_a_running_leader_changes_voters():
    c = led_and_committed()
    remove(c, 1, 2, expect=-1)          # a follower
    act(c, (FAM_CRASH, 0, 0))
    remove(c, 0, 2, expect=-1)          # a crashed leader


def test_the_last_voter_is_never_removed():
    c = cluster(1, 1)
    act(c, (FAM_TIMEOUT, 0, 0))         # a single voter elects itself at once
    assert c.nodes[0].role == LEADER
    act(c, (FAM_FLUSH, 0, 0))
    assert c.nodes[0].hw == 1
    remove(c, 0, 0, expect=-1)


def test_a_full_log_refuses_a_voter_change():
    c = led_and_committed(log_capacity=2)
    act(c, (FAM_CLIENT_APPEND, 0, 0))
    assert c.nodes[0].log_end == 2
    remove(c, 0, 2, expect=-1)


def test_a_change_appends_a_voters_record_in_the_leaders_epoch():
    c = led_and_committed()
    serial = c.next_value + 1
    remove(c, 0, 2)
    assert c.nodes[0].log[1] == (1, voters_record_value({0, 1}, serial))
    assert c.next_value == serial and c.stats["voter_changes"] == 1
    assert c.nodes[0].flushed_end == 1              # appended like a client record
    assert view(c, 1) == [0, 1, 2]                  # the followers have not fetched it


def test_the_new_set_counts_from_its_append():
    """After adding 3, leader 0 and voter 1 are no longer a majority: the HW waits for 3."""
    c = led_and_committed()
    fetch_round(c, 3, 0)
    fetch_round(c, 3, 0)
    add(c, 0, 3)
    fetch_round(c, 1, 0)
    fetch_round(c, 1, 0)
    assert c.nodes[0].hw == 1 and view(c, 1) == [0, 1, 2, 3]
    fetch_round(c, 3, 0)
    fetch_round(c, 3, 0)
    assert c.nodes[0].hw == 2
    assert c.history.hw_voters[0] == {0: 0, 1: 0, 2: 0, 3: 0}


# ---- nodes outside the voter set ---------------------------------------------------------------
def test_with_voter_changes_every_follower_flushes_on_fetch():
    """An observer being added is a voter in the leader's view before it is one in its own."""
    for features, flushed in ((F, 0), (F_RECONFIG, 1)):
        c = led_and_committed(features)
        fetch_round(c, 3, 0)
        fetch_round(c, 3, 0)
        assert c.nodes[3].log_end == 1 and c.nodes[3].flushed_end == flushed


def test_a_removed_voter_follows_on_as_an_observer():
    c = led_and_committed()
    remove(c, 0, 2)
    fetch_round(c, 2, 0)                    # 2 learns of its own removal
    assert view(c, 2) == [0, 1] and c.nodes[2].flushed_end == 2
    act(c, (FAM_TIMEOUT, 2, 0), expect=-1)  # its fetch timer runs no election
    assert c.request_targets(2) == {0, 1}   # the leader, or a bootstrap voter
    fetch_round(c, 2, 1)                    # NOT_LEADER_OR_FOLLOWER: it follows 0 still
    assert (c.nodes[2].role, c.nodes[2].epoch, c.nodes[2].leader_id) == (FOLLOWER, 1, 0)


def test_a_leader_that_removes_itself_leads_until_it_commits_then_resigns():
    c = led_and_committed()
    remove(c, 0, 0)
    leader = c.nodes[0]
    assert view(c, 0) == [1, 2] and leader.role == LEADER
    fetch_round(c, 1, 0)                    # 1 gets the record (0 flushed first) ...
    assert leader.flushed_end == 2
    fetch_round(c, 2, 0)                    # ... and 2 too, which reports it
    fetch_round(c, 2, 0)
    assert leader.role == LEADER and leader.hw == 1   # 2 alone is no majority of {1, 2}
    fetch_round(c, 1, 0)                    # 1 reports it: committed
    assert leader.role == RESIGNED and leader.hw == 2 and leader.successors == (1, 2)
    assert c.history.committed == leader.log[:2]   # it committed it (not an observer's HW)
    act(c, (FAM_TIMEOUT, 0, 0))             # its election timer ends its epoch
    assert leader.role == UNATTACHED and leader.epoch == 2


def test_a_removed_leader_flushes_before_it_handles_anything():
    c = led_and_committed()
    remove(c, 0, 0)
    act(c, (FAM_CLIENT_APPEND, 0, 0))
    assert c.nodes[0].flushed_end == 1
    act(c, (FAM_SEND, 1, 0))
    deliver(c, FETCH_REQUEST, 1, 0)         # the poll that appended has ended first
    assert c.nodes[0].flushed_end == 3 and c.nodes[0].replica_end[0] == 3


def test_a_truncation_rolls_back_an_uncommitted_removal():
    """5 voters: leader 0 removes 2 and only 2 fetches the record; 1 is elected by 3 and 4
    (who lack it), and its log makes 2 truncate the record: 2 is a voter again."""
    c = cluster(5, 0)
    elect(c, 0, [1, 2])
    for j in (1, 2):
        fetch_round(c, j, 0)
        fetch_round(c, j, 0)
    assert c.nodes[0].hw == 1
    remove(c, 0, 2)
    fetch_round(c, 2, 0)
    assert view(c, 2) == [0, 1, 3, 4] and not is_voter(c, c.nodes[2])
    elect(c, 1, [3, 4])
    assert c.nodes[1].epoch == 2 and c.nodes[2].role == FOLLOWER and c.nodes[2].leader_id == 1
    fetch_round(c, 2, 1)                    # diverging at epoch 1: truncate to offset 1
    assert c.nodes[2].log_end == 1 and c.stats["truncations"] == 1
    assert view(c, 2) == [0, 1, 2, 3, 4] and is_voter(c, c.nodes[2])
