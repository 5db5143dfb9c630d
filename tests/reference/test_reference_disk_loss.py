"""Disk loss with directory ids (KIP-853) in the reference model (kraftwalk/reference/faults.py,
voters.py, election.py, replication.py): a node that loses its disk starts empty under a
new directory id, and the replica key (id, directory id) that Vote, BeginQuorumEpoch and
Fetch carry keeps its new disk from acting as the voter its old one was.

Clusters are driven by the actions of the kernel's encoding (``apply_and_check``), so
every step also runs the invariant checks. Rules: KafkaRaftClient.handleVoteRequest /
handleBeginQuorumEpochRequest (isValidVoterKey), UnattachedState.canGrantVote, LeaderState
(getOrCreateReplicaState, ReplicaState.matchesKey), AddVoterHandler.
"""
from __future__ import annotations

import pytest

from kraftwalk.kernels.properties.checkers import ALL_CHECKS, MAJORITY_REACHED_HIGH_WATERMARK
from kraftwalk.kernels.features import DISK_LOSS, MUT_WIPED_SAME_ID, PRE_VOTE, RECONFIG
from kraftwalk.kernels.state.layout import (
    BEGIN_QUORUM_EPOCH_REQUEST, BEGIN_QUORUM_EPOCH_RESPONSE, ERR_INVALID_VOTER_KEY, ERR_NONE,
    FOLLOWER, LEADER, MAX_DIR, PROSPECTIVE, UNATTACHED,
    VOTE_REQUEST, VOTE_RESPONSE,
)
from kraftwalk.kernels.transition import (
    FAM_ADD_VOTER, FAM_CLIENT_APPEND, FAM_CRASH, FAM_DISK_LOSS, FAM_REMOVE_VOTER,
    FAM_SEND, FAM_TIMEOUT,
)
from kraftwalk.reference import Params, ReferenceCluster
from kraftwalk.reference.election import can_grant_vote
from kraftwalk.reference.voters import is_voter, record_added_dir, voter_keys

from driving import act, deliver, fetch_round, find, request

F = PRE_VOTE | ALL_CHECKS
F_DISK_LOSS = F | DISK_LOSS
F_RECONFIG_DISK_LOSS = F_DISK_LOSS | RECONFIG


# ---- driving a cluster ------------------------------------------------------------------
def cluster(features=F_RECONFIG_DISK_LOSS, voters=3, observers=1):
    return ReferenceCluster(Params(voters, observers, log_capacity=16, msg_slots=16), features)


def lose_disk(c, i, expect=0):
    return act(c, (FAM_DISK_LOSS, i, 0), expect)


def elected(features=F_RECONFIG_DISK_LOSS):
    """3 voters + 1 observer: node 0 leads epoch 1, voted in by 1, which follows it."""
    c = cluster(features)
    act(c, (FAM_TIMEOUT, 0, 0))
    for _ in range(2):
        request(c, 0, 1, VOTE_REQUEST, VOTE_RESPONSE)
    assert c.nodes[0].role == LEADER
    request(c, 0, 1, BEGIN_QUORUM_EPOCH_REQUEST, BEGIN_QUORUM_EPOCH_RESPONSE)
    return c


def led_and_committed(features=F_RECONFIG_DISK_LOSS):
    """As ``elected``, voter 2 follows too, and 0 has committed its LeaderChange with 1
    (HW 1)."""
    c = elected(features)
    request(c, 0, 2, BEGIN_QUORUM_EPOCH_REQUEST, BEGIN_QUORUM_EPOCH_RESPONSE)
    fetch_round(c, 1, 0)
    fetch_round(c, 1, 0)
    assert c.nodes[0].hw == 1
    return c


# ---- the disk loss itself ---------------------------------------------------------------------
def test_a_disk_loss_wipes_the_node_and_gives_it_a_new_directory_id():
    c = led_and_committed()
    node = c.nodes[1]
    assert node.log_end == 1 and node.epoch == 1 and node.voted_id == 0
    lose_disk(c, 1)
    assert node.up and node.role == UNATTACHED and node.dir == 1
    assert node.log == [] and node.flushed_end == 0 and node.hw is None
    assert node.epoch == 0 and node.voted_id is None and node.leader_id is None
    assert c.stats["disk_losses"] == 1 and c.stats["crashes"] == 0
    # the bootstrap voters name (1, 0): the new disk is an observer, with no election timer
    assert voter_keys(c, node) == {0: 0, 1: 0, 2: 0} and not is_voter(c, node)
    act(c, (FAM_TIMEOUT, 1, 0), expect=-1)
    # the leader still counts its old key as a voter
    assert voter_keys(c, c.nodes[0])[1] == 0


def test_a_crashed_node_can_lose_its_disk_and_each_node_has_max_dir_new_ones():
    c = cluster()
    act(c, (FAM_CRASH, 2, 0))
    for d in range(1, MAX_DIR + 1):
        lose_disk(c, 2)
        assert c.nodes[2].dir == d and c.nodes[2].up
    lose_disk(c, 2, expect=-1)
    lose_disk(c, 1)                           # per node


def test_without_the_feature_no_disk_is_lost():
    lose_disk(cluster(F_RECONFIG_DISK_LOSS & ~DISK_LOSS), 0, expect=-1)


def test_the_wiped_same_id_mutation_keeps_the_old_key():
    c = cluster(F_DISK_LOSS | MUT_WIPED_SAME_ID)
    for _ in range(MAX_DIR + 2):              # no new directory id, so no bound either
        lose_disk(c, 1)
    assert c.nodes[1].dir == 0 and is_voter(c, c.nodes[1])


# ---- votes are for and from keys -----------------------------------------------------------
def test_a_wiped_voter_refuses_a_vote_request_for_its_old_key():
    """Candidate 0 asks voter 2 under key (2, 0); 2's disk is now directory 1: the request
    was not meant for it. It answers INVALID_VOTER_KEY and grants nothing, and the
    candidate counts that as neither a grant nor a rejection."""
    c = cluster(F_DISK_LOSS)
    lose_disk(c, 2)
    act(c, (FAM_TIMEOUT, 0, 0))
    assert c.nodes[0].role == PROSPECTIVE
    act(c, (FAM_SEND, 0, 2))
    _, req = find(c, VOTE_REQUEST, 0, 2)
    assert (req.candidate_dir, req.voter_dir, req.pre_vote) == (0, 0, True)
    deliver(c, VOTE_REQUEST, 0, 2)
    resp = deliver(c, VOTE_RESPONSE, 2, 0)
    assert resp.error == ERR_INVALID_VOTER_KEY and not resp.granted
    assert c.nodes[0].granted == {0} and c.nodes[0].rejected == set()


def test_a_wiped_voter_takes_the_epoch_of_a_vote_request_but_casts_no_vote():
    c = cluster(ALL_CHECKS | DISK_LOSS)       # no pre-vote: a Candidate in epoch 1 asks
    lose_disk(c, 2)
    act(c, (FAM_TIMEOUT, 0, 0))
    act(c, (FAM_SEND, 0, 2))
    deliver(c, VOTE_REQUEST, 0, 2)
    assert c.nodes[2].epoch == 1 and c.nodes[2].voted_id is None
    resp = deliver(c, VOTE_RESPONSE, 2, 0)
    assert resp.error == ERR_INVALID_VOTER_KEY and not resp.granted
    assert c.history.votes == {(0, 0, 1): 0}  # only the candidate's own vote


def test_a_vote_is_for_a_key():
    c = cluster(F_DISK_LOSS)
    node = c.nodes[1]
    node.epoch, node.voted_id, node.voted_dir = 3, 0, 0
    assert can_grant_vote(c, node, 0, 0, True, False)
    assert not can_grant_vote(c, node, 0, 1, True, False)   # the same id on another disk
    c.features = F
    assert can_grant_vote(c, node, 0, 1, True, False)       # no directory ids: ids only


def test_a_candidate_votes_for_its_own_key():
    c = cluster(ALL_CHECKS | DISK_LOSS, voters=1)
    act(c, (FAM_CRASH, 0, 0))
    lose_disk(c, 0)                           # a lone voter on a new disk is no voter
    assert c.nodes[0].role == UNATTACHED and c.nodes[0].epoch == 0
    c = cluster(ALL_CHECKS | DISK_LOSS | MUT_WIPED_SAME_ID, voters=1)
    act(c, (FAM_TIMEOUT, 0, 0))
    lose_disk(c, 0)                           # the same key: it elects itself again
    assert c.nodes[0].role == LEADER and (c.nodes[0].voted_id, c.nodes[0].voted_dir) == (0, 0)


# ---- BeginQuorumEpoch and Fetch ----------------------------------------------------------------
def test_a_wiped_voter_follows_the_leader_but_does_not_acknowledge_its_old_key():
    c = elected()
    lose_disk(c, 2)
    act(c, (FAM_SEND, 0, 2))
    _, req = find(c, BEGIN_QUORUM_EPOCH_REQUEST, 0, 2)
    assert req.voter_dir == 0
    deliver(c, BEGIN_QUORUM_EPOCH_REQUEST, 0, 2)
    resp = deliver(c, BEGIN_QUORUM_EPOCH_RESPONSE, 2, 0)
    assert resp.error == ERR_INVALID_VOTER_KEY
    assert c.nodes[2].role == FOLLOWER and c.nodes[2].leader_id == 0 and c.nodes[2].epoch == 1
    assert 2 not in c.nodes[0].acked


def test_the_leader_ignores_a_fetch_under_another_key_for_the_high_watermark():
    """Voter 1 loses its disk; its fetches (directory 1) still get records, but the leader
    keeps the state of key (1, 0) and neither the HW nor check-quorum counts them."""
    c = led_and_committed()
    leader = c.nodes[0]
    lose_disk(c, 1)
    act(c, (FAM_CLIENT_APPEND, 0, 0))
    fetch_round(c, 1, 0)                      # discovery: epoch 0 is fenced
    assert c.nodes[1].role == FOLLOWER and c.nodes[1].leader_id == 0
    for _ in range(3):
        resp = fetch_round(c, 1, 0)
        assert resp.error == ERR_NONE
    assert c.nodes[1].log == leader.log       # it replicates ...
    assert leader.replica_end[1] == 1 and leader.replica_dir[1] == 0   # ... uncounted
    assert leader.hw == 1 and 1 not in leader.fetched_voters
    fetch_round(c, 2, 0)
    fetch_round(c, 2, 0)
    assert leader.hw == 2                     # voter 2 makes the majority


def test_a_wiped_voter_is_removed_and_added_back_under_its_new_key():
    c = led_and_committed()
    leader = c.nodes[0]
    lose_disk(c, 1)
    act(c, (FAM_ADD_VOTER, 0, 1), expect=-1)  # id 1 is a voter (under its old key)
    act(c, (FAM_REMOVE_VOTER, 0, 1))
    fetch_round(c, 2, 0)
    fetch_round(c, 2, 0)
    assert leader.hw == 2                     # the removal is committed
    fetch_round(c, 1, 0)                      # discovery
    fetch_round(c, 1, 0)                      # an observer now: its key is recorded
    assert leader.replica_dir[1] == 1
    act(c, (FAM_ADD_VOTER, 0, 1))
    assert record_added_dir(leader.log[-1][1]) == 1
    assert voter_keys(c, leader) == {0: 0, 1: 1, 2: 0}
    assert not is_voter(c, c.nodes[1])
    fetch_round(c, 1, 0)                      # it fetches the record: a voter again
    assert voter_keys(c, c.nodes[1]) == {0: 0, 1: 1, 2: 0} and is_voter(c, c.nodes[1])
    fetch_round(c, 1, 0)
    assert leader.hw == 3                     # and its fetches count


# ---- the known bug -------------------------------------------------------------------------------
@pytest.mark.parametrize("features, expect", [
    (F_DISK_LOSS, 0),
    (F_DISK_LOSS | MUT_WIPED_SAME_ID, MAJORITY_REACHED_HIGH_WATERMARK + 1),
])
def test_a_wiped_voter_under_its_old_key_breaks_the_high_watermarks_majority(features, expect):
    """Leader 0's HW 1 is held by 0 and 1. Voter 1 loses its disk: with a new directory id
    its old key can never count again; under its old key, its empty log is one of the
    majority that is said to hold the HW."""
    c = led_and_committed(features)
    lose_disk(c, 1, expect=expect)
